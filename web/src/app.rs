//! The root component: the gallery, the experiment picker, the three
//! panels, Run and Cancel, progress, sharing, and the results. Runs go to a
//! pool of Web Workers; the main thread only edits, assembles and draws.

use crate::export::{copy_to_clipboard, download};
use crate::gallery::Gallery;
use crate::help::{self, HelpOverlay};
use crate::link;
use crate::panels::kernel::KernelPanel;
use crate::panels::machine::MachinePanel;
use crate::panels::workload::WorkloadPanel;
use crate::pool::Pool;
use crate::protocol::{Request, Response};
use crate::results::{chart_figure, ResultsView};
use crate::run::{RunAction, RunView};
use crate::state::{Edit, Editor, FieldId};
use gloo_events::{EventListener, EventListenerOptions};
use gloo_timers::callback::Timeout;
use schedlab::{codec, presets};
use std::rc::Rc;
use wasm_bindgen::JsCast;
use yew::prelude::*;

fn hardware_concurrency() -> usize {
    web_sys::window()
        .map_or(1.0, |w| w.navigator().hardware_concurrency())
        .max(1.0) as usize
}

/// Starts a run of the editor's experiment: one worker per point up to the
/// machine's cores, points dealt round-robin.
fn start_run(
    editor: &Editor,
    run: &UseReducerHandle<RunView>,
    pool: &Rc<std::cell::RefCell<Option<Pool>>>,
) {
    if !editor.is_valid() || run.running() {
        return;
    }
    let generation = run.generation + 1;
    let exp = Rc::new(editor.experiment.clone());
    let total = match exp.points() {
        Ok(p) => p.len(),
        Err(error) => {
            return run.dispatch(RunAction::Failed {
                generation,
                error: error.to_string(),
            })
        }
    };
    let workers = hardware_concurrency().min(total).max(1);
    run.dispatch(RunAction::Start {
        generation,
        experiment: exp.clone(),
        points: total,
        workers,
    });
    let on_response: Rc<dyn Fn(usize, Response)> = {
        let run = run.clone();
        Rc::new(move |_, resp| match resp {
            Response::Progress {
                index,
                now_ns,
                end_ns,
            } => {
                if let Some(end) = end_ns.filter(|e| *e > 0) {
                    run.dispatch(RunAction::Progress {
                        generation,
                        index,
                        fraction: now_ns as f64 / end as f64,
                    });
                }
            }
            Response::Point { index, outcome } => run.dispatch(RunAction::Point {
                generation,
                index,
                outcome,
            }),
            Response::Failed { error } => run.dispatch(RunAction::Failed { generation, error }),
            Response::Ready => {}
        })
    };
    // Dropping the previous pool terminates its workers.
    *pool.borrow_mut() = None;
    match Pool::start(workers, on_response) {
        Ok(p) => {
            let json = serde_json::to_string(&*exp).expect("an experiment serialises");
            for index in 0..total {
                p.send(
                    index % workers,
                    &Request::RunPoint {
                        experiment: json.clone(),
                        index,
                    },
                );
            }
            *pool.borrow_mut() = Some(p);
        }
        Err(error) => run.dispatch(RunAction::Failed { generation, error }),
    }
}

/// How long the fragment waits for typing to pause before it is rewritten.
const FRAGMENT_DEBOUNCE_MS: u32 = 300;

/// What a key press asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Shortcut {
    Run,
    Escape,
    Help,
    Theme,
}

fn shortcut(e: &web_sys::KeyboardEvent) -> Option<Shortcut> {
    let typing = e
        .target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .is_some_and(|el| matches!(el.tag_name().as_str(), "INPUT" | "TEXTAREA" | "SELECT"));
    let plain = !(e.ctrl_key() || e.meta_key() || e.alt_key());
    match e.key().as_str() {
        "Enter" if e.ctrl_key() || e.meta_key() => Some(Shortcut::Run),
        "Escape" => Some(Shortcut::Escape),
        "?" if plain && !typing => Some(Shortcut::Help),
        "t" | "T" if plain && !typing => Some(Shortcut::Theme),
        _ => None,
    }
}

#[function_component]
pub fn App() -> Html {
    let run_on_open = use_mut_ref(|| false);
    let editor = {
        let run_on_open = run_on_open.clone();
        use_reducer(move || {
            let opened = link::open(&link::hash());
            *run_on_open.borrow_mut() = opened.run;
            opened.editor
        })
    };
    let run = use_reducer(RunView::default);
    let pool = use_mut_ref(|| None::<Pool>);
    let ready = use_state(|| false);
    let help_open = use_state(|| false);
    let theme = use_state(help::saved_theme);
    let copied = use_state(|| None::<&'static str>);
    let gallery_open = use_state(|| link::hash().trim_start_matches('#').is_empty());
    // The history entry holds a run's experiment: the next edit gets a new one.
    let frozen = use_mut_ref(|| false);
    let fragment_timer = use_mut_ref(|| None::<Timeout>);

    let on_run = {
        let (editor, run, pool) = (editor.clone(), run.clone(), pool.clone());
        let (frozen, fragment_timer) = (frozen.clone(), fragment_timer.clone());
        Callback::from(move |_: ()| {
            if editor.is_valid() && !run.running() {
                fragment_timer.borrow_mut().take();
                let push = *frozen.borrow();
                link::set_fragment(&codec::fragment(&editor.experiment, false), push);
                *frozen.borrow_mut() = true;
            }
            start_run(&editor, &run, &pool)
        })
    };
    let on_cancel = {
        let (run, pool) = (run.clone(), pool.clone());
        Callback::from(move |_: ()| {
            *pool.borrow_mut() = None;
            run.dispatch(RunAction::Cancelled);
        })
    };
    let on_theme = {
        let theme = theme.clone();
        Callback::from(move |_: ()| theme.set(help::next_theme(&theme)))
    };
    {
        let theme = *theme;
        use_effect_with(theme, move |t| help::apply_theme(t));
    }
    {
        let (ready, on_run) = (ready.clone(), on_run.clone());
        use_effect_with((), move |_| {
            ready.set(true);
            if *run_on_open.borrow() {
                on_run.emit(());
            }
        });
    }
    // Edits rewrite the fragment (debounced) and keep the experiment locally.
    {
        let (frozen, fragment_timer) = (frozen.clone(), fragment_timer.clone());
        use_effect_with(editor.experiment.clone(), move |exp| {
            let exp = exp.clone();
            let timer = Timeout::new(FRAGMENT_DEBOUNCE_MS, move || {
                let push = *frozen.borrow();
                if link::set_fragment(&codec::fragment(&exp, false), push) {
                    *frozen.borrow_mut() = false;
                }
                // An embedded copy on a docs page must not replace the
                // user's own last experiment.
                if !link::is_embed() {
                    link::keep_last(&exp);
                }
            });
            *fragment_timer.borrow_mut() = Some(timer);
        });
    }
    // Back and Forward restore the experiment of that history entry.
    {
        let (editor, frozen) = (editor.clone(), frozen.clone());
        use_effect_with((), move |_| {
            let window = web_sys::window().expect("a window");
            let listener = EventListener::new(&window, "popstate", move |_| {
                if let Ok(l) = codec::parse_fragment(&link::hash()) {
                    *frozen.borrow_mut() = true;
                    editor.dispatch(Edit::Load(Box::new(l.experiment)));
                }
            });
            move || drop(listener)
        });
    }
    // Keyboard shortcuts, read through the latest callbacks.
    let on_key = {
        let (on_run, on_cancel, on_theme, help_open) = (
            on_run.clone(),
            on_cancel.clone(),
            on_theme.clone(),
            help_open.clone(),
        );
        Callback::from(move |s: Shortcut| match s {
            Shortcut::Run => on_run.emit(()),
            Shortcut::Escape if *help_open => help_open.set(false),
            Shortcut::Escape => on_cancel.emit(()),
            Shortcut::Help => help_open.set(!*help_open),
            Shortcut::Theme => on_theme.emit(()),
        })
    };
    let latest_key = use_mut_ref(Callback::<Shortcut>::noop);
    *latest_key.borrow_mut() = on_key;
    use_effect_with((), move |_| {
        let window = web_sys::window().expect("a window");
        let options = EventListenerOptions::enable_prevent_default();
        let listener = EventListener::new_with_options(&window, "keydown", options, move |e| {
            let Some(e) = e.dyn_ref::<web_sys::KeyboardEvent>() else {
                return;
            };
            if let Some(s) = shortcut(e) {
                e.prevent_default();
                latest_key.borrow().emit(s);
            }
        });
        move || drop(listener)
    });

    let on_pick = {
        let editor = editor.clone();
        Callback::from(move |edit: Edit| editor.dispatch(edit))
    };
    let on_preset = {
        let editor = editor.clone();
        Callback::from(move |e: Event| {
            let select: web_sys::HtmlSelectElement = e.target_unchecked_into();
            editor.dispatch(Edit::LoadPreset(select.value()));
        })
    };
    let download_experiment = {
        let editor = editor.clone();
        Callback::from(move |_| {
            let exp = &editor.experiment;
            let _ = download(
                &format!("{}.json", exp.name),
                "application/json",
                &exp.to_json(),
            );
        })
    };
    let copy_link = {
        let (editor, copied) = (editor.clone(), copied.clone());
        Callback::from(move |_| {
            copy_to_clipboard(&link::share_url(&editor.experiment));
            copied.set(Some("link"));
        })
    };
    let copy_iframe = {
        let (editor, copied) = (editor.clone(), copied.clone());
        Callback::from(move |_| {
            copy_to_clipboard(&link::iframe_snippet(&editor.experiment));
            copied.set(Some("iframe"));
        })
    };
    let exp = &editor.experiment;
    let current_preset = editor.unedited_preset();
    let status = status_line(&run);
    let run_button = html! {
        <button id="run" onclick={on_run.reform(|_| ())} disabled={run.running() || !editor.is_valid()}
            title={if editor.is_valid() { "Run (Ctrl+Enter)" } else { "Fix the marked fields first" }}>{ "Run" }</button>
    };
    // The last results stay (dimmed) while a new run goes, so nothing jumps.
    let shown = run.results.clone().or_else(|| run.previous.clone());
    let results_name = run
        .experiment
        .as_ref()
        .map(|e| e.name.clone())
        .unwrap_or_default();
    if link::is_embed() {
        return html! {
            <main id="app" class="embed" data-ready={ready.to_string()}>
                <header class="embed-head">
                    <strong class="embed-title">{ exp.name.clone() }</strong>
                    { run_button }
                    { status }
                    <a id="open-full" href={link::share_url(exp)} target="_blank" rel="noopener">{ "Open in schedlab ↗" }</a>
                </header>
                if let Some(n) = &editor.notice { <p class="notice" id="notice" role="status">{ n.clone() }</p> }
                if let Some(r) = &shown {
                    <div class={classes!("embed-results", run.running().then_some("stale"))}>
                        { for r.charts.iter().take(1).map(|c| chart_figure(c, &results_name)) }
                        <pre id="results-table">{ r.table.clone() }</pre>
                    </div>
                } else {
                    <p class="hint">{ exp.description.clone() }</p>
                }
            </main>
        };
    }
    let invalid_summary = editor.invalid.as_ref().map(|(field, msg)| {
        if *field == FieldId::Whole {
            msg.clone()
        } else {
            format!("{msg} (at {field})")
        }
    });
    html! {
        <main id="app" data-ready={ready.to_string()}>
            <header class="top">
                <div>
                    <h1>{ "schedlab" }</h1>
                    <p class="tagline">{ "What the Linux scheduler's wakeup and load-balancing policies do to real workloads." }</p>
                </div>
                <div class="top-actions">
                    <button class="secondary" id="theme" onclick={on_theme.reform(|_| ())}
                        title="Theme: system, light or dark (T)">{ format!("Theme: {}", *theme) }</button>
                    <button class="secondary" id="help-button" onclick={{ let h = help_open.clone(); move |_| h.set(true) }}
                        title="Keyboard shortcuts (?)">{ "?" }</button>
                </div>
            </header>
            <Gallery on_pick={on_pick} current={current_preset} open={*gallery_open} />
            <section class="controls" aria-label="experiment">
                <label for="preset">{ "Experiment" }</label>
                <select id="preset" onchange={on_preset}>
                    if current_preset.is_none() {
                        <option selected=true value="">{ format!("{} (edited)", exp.name) }</option>
                    }
                    { for presets::names().map(|n| html! { <option value={n} selected={current_preset == Some(n)}>{ n }</option> }) }
                </select>
                { run_button }
                <button id="cancel" class="secondary" onclick={on_cancel.reform(|_| ())} disabled={!run.running()}>{ "Cancel" }</button>
                { status }
                <span class="share">
                    <button class="secondary" id="copy-link" onclick={copy_link}>{ if *copied == Some("link") { "Link copied" } else { "Copy link" } }</button>
                    <button class="secondary" id="copy-iframe" onclick={copy_iframe}>{ if *copied == Some("iframe") { "Snippet copied" } else { "Copy iframe snippet" } }</button>
                </span>
            </section>
            <p class="description">{ exp.description.clone() }</p>
            if let Some(n) = &editor.notice { <p class="notice" id="notice" role="status">{ n.clone() }</p> }
            if let Some(msg) = invalid_summary { <p class="error" id="invalid" role="alert">{ msg }</p> }
            if let Some(r) = &shown {
                <div class={classes!(run.running().then_some("stale"))}>
                    <ResultsView results={r.clone()} name={results_name} />
                </div>
            }
            <div class="panels">
                <MachinePanel editor={editor.clone()} />
                <WorkloadPanel editor={editor.clone()} />
                <KernelPanel editor={editor.clone()} />
            </div>
            <details class="experiment-json">
                <summary>{ "Experiment JSON (run it natively: schedlab run FILE)" }</summary>
                <div class="actions">
                    <button class="secondary" id="download-experiment" onclick={download_experiment}>{ "Download experiment" }</button>
                </div>
                <pre id="experiment-json">{ exp.to_json() }</pre>
            </details>
            if *help_open {
                <HelpOverlay on_close={{ let h = help_open.clone(); Callback::from(move |_| h.set(false)) }} />
            }
        </main>
    }
}

fn status_line(run: &RunView) -> Html {
    let text = if let Some(e) = &run.error {
        return html! { <p id="run-error" class="status error" role="alert">{ format!("Run failed: {e}") }</p> };
    } else if run.running() {
        format!("{} of {} points", run.done(), run.outcomes.len())
    } else if run.cancelled {
        format!(
            "cancelled after {} of {} points",
            run.done(),
            run.outcomes.len()
        )
    } else if run.results.is_some() {
        format!("done: {} points", run.outcomes.len())
    } else {
        "Ctrl+Enter runs".to_string()
    };
    let workers = (run.running() || (run.results.is_some() && !run.cancelled)).then(
        || html! { <span id="run-workers">{ format!(" on {} workers", run.workers) }</span> },
    );
    // The bar is always there (hidden when idle), so the line never changes height.
    html! {
        <p id="run-status" class="status" role="status" data-run={run.generation.to_string()}>
            <progress max="1" value={format!("{:.4}", run.fraction())}
                class={classes!((!run.running()).then_some("idle"))} />
            { text }
            { for workers }
        </p>
    }
}

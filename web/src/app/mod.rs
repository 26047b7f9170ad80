//! The root component: the gallery, the experiment picker, the three
//! panels, Run and Cancel, progress, sharing, and the results. Runs go to a
//! pool of Web Workers; the main thread only edits, assembles and draws.
//!
//! Its behaviours are hooks of their own: [`link_sync`] (the link and the
//! history), [`runs`] (the run, in the runs module that the first Run
//! fetches), [`shortcuts`] (the keys). The results are drawn by the runs
//! module in `#results-host`, which sits between this app's two parts in
//! the page's [`frame`], outside both.

pub mod estimate;
pub mod frame;
pub mod import;
pub mod link_sync;
pub mod runs;
pub mod shortcuts;

use crate::bridge::RunStatus;
use crate::export::{copy_to_clipboard, download};
use crate::gallery::Gallery;
use crate::help::{self, HelpOverlay};
use crate::history::{self, HistoryList};
use crate::link;
use crate::panels::kernel::KernelPanel;
use crate::panels::machine::MachinePanel;
use crate::panels::workload::WorkloadPanel;
use crate::state::{Edit, Editor, FieldId};
use link_sync::{use_link_sync, use_linked_editor};
use runs::use_runs;
use schedlab::presets;
use shortcuts::{use_shortcuts, Shortcut};
use std::rc::Rc;
use yew::prelude::*;

#[function_component]
pub fn App() -> Html {
    let (editor, run_on_open) = use_linked_editor();
    let runner = use_runs();
    let run = (*runner.status).clone();
    let help_open = use_state(|| false);
    let theme = use_state(help::saved_theme);
    let copied = use_state(|| None::<&'static str>);
    let gallery_open = use_state(|| link::hash().trim_start_matches('#').is_empty());
    let runs = use_state(|| Rc::new(history::entries()));
    let pinned = use_state(history::load_pinned);
    // The runs module keeps each finished run: read the history again.
    {
        let runs = runs.clone();
        use_effect_with((*runner.kept).clone(), move |kept| {
            if kept.count > 0 {
                let mut again = history::entries();
                again.trouble = kept.trouble.clone().or(again.trouble);
                runs.set(Rc::new(again));
            }
        });
    }
    let on_pin = {
        let pinned = pinned.clone();
        Callback::from(move |id: Option<u64>| {
            history::save_pinned(id);
            pinned.set(id);
        })
    };
    let on_clear = {
        let (runs, pinned) = (runs.clone(), pinned.clone());
        Callback::from(move |()| {
            history::forget();
            history::save_pinned(None);
            runs.set(Rc::new(history::entries()));
            pinned.set(None);
        })
    };
    let on_open = {
        let editor = editor.clone();
        Callback::from(move |exp: schedlab::experiment::Experiment| {
            editor.dispatch(Edit::Load(Box::new(exp)))
        })
    };
    // The pinned run, unless it is the one shown, for the runs module.
    {
        let runner = runner.clone();
        let latest = runs.runs.last().map(|r| r.id);
        let baseline = (*pinned)
            .filter(|id| runs.runs.iter().any(|r| r.id == *id))
            .filter(|id| latest != Some(*id) || run.running);
        use_effect_with(baseline, move |b| runner.set_baseline(*b));
    }

    let on_cancel = {
        let runner = runner.clone();
        Callback::from(move |_: ()| runner.cancel())
    };
    let on_theme = {
        let theme = theme.clone();
        Callback::from(move |_: ()| theme.set(help::next_theme(&theme)))
    };
    {
        let theme = *theme;
        use_effect_with(theme, move |t| help::apply_theme(t));
    }
    let start = {
        let (editor, runner) = (editor.clone(), runner.clone());
        Callback::from(move |()| runner.start(&editor))
    };
    let on_run = use_link_sync(&editor, run_on_open, start);
    let estimate =
        estimate::use_estimate(&editor, run.running, crate::pool::hardware_concurrency());
    let dress = frame::Dress {
        embed: link::is_embed(),
        stale: stale(&run).is_some(),
        results_hidden: link::is_embed() && !run.shown,
    };
    use_effect_with(dress, frame::apply);
    use_shortcuts({
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
                &crate::json::experiment(exp),
            );
        })
    };
    // An experiment file (as `schedlab run FILE` reads it, or as Download
    // experiment wrote it) opens in the editor; a refusal shows under it.
    let open_experiment = {
        let editor = editor.clone();
        Callback::from(move |e: Event| {
            let input: web_sys::HtmlInputElement = e.target_unchecked_into();
            let Some(file) = input.files().and_then(|f| f.get(0)) else {
                return;
            };
            input.set_value("");
            let editor = editor.clone();
            let done = wasm_bindgen::closure::Closure::once(move |v: wasm_bindgen::JsValue| {
                editor.dispatch(Edit::OpenFile(v.as_string().unwrap_or_default()));
            });
            let _ = file.text().then(&done);
            done.forget();
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
    let run_button = html! {
        <button id="run" onclick={on_run.reform(|_| ())} disabled={!runner.can_start(&editor)}
            title={if editor.is_valid() { "Run (Ctrl+Enter)" } else { "Fix the marked fields first" }}>{ "Run" }</button>
    };
    if link::is_embed() {
        return embed_page(&editor, &run, run_button, estimate.as_deref());
    }
    let status = status_line(&run, estimate.as_deref());
    let invalid_summary = editor.invalid.as_ref().map(|(field, msg)| {
        if *field == FieldId::Whole {
            msg.clone()
        } else {
            format!("{msg} (at {field})")
        }
    });
    let file_error = editor
        .error_at(&FieldId::ExperimentFile)
        .map(str::to_string);
    let below = html! {
        <>
            <HistoryList kept={(*runs).clone()} pinned={*pinned} {on_open} {on_pin} {on_clear} />
            <div class="panels">
                <MachinePanel editor={editor.clone()} />
                <WorkloadPanel editor={editor.clone()} />
                <KernelPanel editor={editor.clone()} />
            </div>
            <details class="experiment-json" open={file_error.is_some()}>
                <summary>{ "Experiment JSON (run it natively: schedlab run FILE)" }</summary>
                <div class="actions">
                    <button class="secondary" id="download-experiment" onclick={download_experiment}>{ "Download experiment" }</button>
                    <label class="secondary">{ "Open an experiment file " }
                        <input type="file" id="experiment-file" data-field={FieldId::ExperimentFile.to_string()} accept=".json,application/json" onchange={open_experiment} />
                    </label>
                </div>
                if let Some(e) = file_error { <small class="field-error" id="experiment-file-error" role="alert">{ e }</small> }
                <pre id="experiment-json" tabindex="0">{ crate::json::experiment(exp) }</pre>
            </details>
            if *help_open {
                <HelpOverlay on_close={{ let h = help_open.clone(); Callback::from(move |_| h.set(false)) }} />
            }
        </>
    };
    html! {
        <>
            <header class="top">
                <div>
                    <h1>{ "schedlab" }</h1>
                    <p class="tagline">{ "What the Linux scheduler's wakeup and load-balancing policies do to real workloads." }</p>
                </div>
                <div class="top-actions">
                    <a class="book-link" id="book-link" href="book/index.html"
                        title="The book: the seed commits, the model and its sources, with live experiments">{ "Book" }</a>
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
                <button id="cancel" class="secondary" onclick={on_cancel.reform(|_| ())} disabled={!run.running}>{ "Cancel" }</button>
                { status }
                <span class="share">
                    <button class="secondary" id="copy-link" onclick={copy_link}>{ if *copied == Some("link") { "Link copied" } else { "Copy link" } }</button>
                    <button class="secondary" id="copy-iframe" onclick={copy_iframe}>{ if *copied == Some("iframe") { "Snippet copied" } else { "Copy iframe snippet" } }</button>
                </span>
            </section>
            <p class="description">{ exp.description.clone() }</p>
            if let Some(n) = &editor.notice { <p class="notice" id="notice" role="status">{ n.clone() }</p> }
            if let Some(msg) = invalid_summary { <p class="error" id="invalid" role="alert">{ msg }</p> }
            { below_results(below) }
        </>
    }
}

/// What goes below the results: a portal into the frame's bottom part.
fn below_results(html: Html) -> Html {
    match frame::element(frame::BOTTOM_ID) {
        Some(bottom) => create_portal(html, bottom),
        // No frame (never on the page): below the rest, never lost.
        None => html,
    }
}

/// `?embed`: only the chart, the table, Run and "Open in schedlab".
fn embed_page(editor: &Editor, run: &RunStatus, run_button: Html, estimate: Option<&str>) -> Html {
    let exp = &editor.experiment;
    html! {
        <>
            <header class="embed-head">
                <strong class="embed-title">{ exp.name.clone() }</strong>
                { run_button }
                { status_line(run, estimate) }
                <a id="open-full" href={link::share_url(exp)} target="_blank" rel="noopener">{ "Open in schedlab ↗" }</a>
            </header>
            if let Some(n) = &editor.notice { <p class="notice" id="notice" role="status">{ n.clone() }</p> }
            { below_results(html! {
                if !run.shown {
                    <p class="hint">{ exp.description.clone() }</p>
                }
            }) }
        </>
    }
}

/// The results shown are dimmed while the next run goes.
fn stale(run: &RunStatus) -> Option<&'static str> {
    (run.running && run.shown).then_some("stale")
}

/// The run's state in words; with the time left while it runs, and the
/// estimate of the next run when one is measured.
fn status_line(run: &RunStatus, estimate: Option<&str>) -> Html {
    let text = if let Some(e) = &run.error {
        return html! { <p id="run-error" class="status error" role="alert">{ format!("Run failed: {e}") }</p> };
    } else if run.running {
        format!("{} of {} points", run.done, run.points)
    } else if run.cancelled {
        format!("cancelled after {} of {} points", run.done, run.points)
    } else if run.finished {
        format!("done: {} points", run.points)
    } else {
        "Ctrl+Enter runs".to_string()
    };
    let workers = (run.running || (run.finished && !run.cancelled)).then(
        || html! { <span id="run-workers">{ format!(" on {} workers", run.workers) }</span> },
    );
    let left = run
        .running
        .then(|| run.time_left(js_sys::Date::now()))
        .flatten()
        .map(|l| html! { <span id="run-left">{ format!(", {l}") }</span> });
    let next = match (run.running, estimate) {
        (false, Some(e)) => {
            let idle = run.generation == 0;
            let words = if idle {
                format!(": {e}")
            } else {
                format!("; next run {e}")
            };
            Some(html! { <span id="run-estimate">{ words }</span> })
        }
        _ => None,
    };
    // The bar is always there (hidden when idle), so the line never changes height.
    html! {
        <p id="run-status" class="status" role="status" data-run={run.generation.to_string()}>
            <progress max="1" value={format!("{:.4}", run.fraction)}
                class={classes!((!run.running).then_some("idle"))} />
            <span class="status-text">{ text }{ for workers }{ for left }{ for next }</span>
        </p>
    }
}

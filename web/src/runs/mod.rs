//! The runs module (`bin/runs.rs`): the second wasm of the page, fetched by
//! the first Run (or a link that runs on open), never before. It owns
//! everything after Run: the pool of Web Workers ([`runner`]), the run's
//! progress and results ([`crate::run`]), and the results view (charts,
//! latency CDF, timeline, baselines, exports, trace export, explanations).
//! The results go in `#results-host`, the part of the page's frame between
//! the editor's (`bin/app.rs`) two parts and inside neither
//! ([`crate::app::frame`]); this module is a second Yew app mounted there,
//! and the two talk only through [`crate::bridge`]: the editor sends Start,
//! Cancel and the pinned baseline; this module sends its build (Ready) and
//! every change of the run's state (Status). It also keeps each finished run in
//! the history (localStorage, [`crate::history`]) and says so (Kept): the
//! editor only lists, pins and forgets runs.

pub mod runner;

use crate::bridge::{self, RunStatus, ToEditor, ToRuns};
use crate::history::{self, Record};
use crate::link;
use crate::results::{Charts, ResultsView};
use crate::run::{RunResults, RunView};
use crate::why::{use_why, WhyPanel};
use runner::use_runner;
use schedlab::experiment::Experiment;
use std::rc::Rc;
use yew::prelude::*;

/// Mounts the runs app in the frame's `#results-host`, then says Ready.
pub fn mount() {
    let Some(host) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id(bridge::HOST_ID))
    else {
        // The editor waits for Ready and says what went wrong.
        return;
    };
    yew::Renderer::<RunsApp>::with_root(host).render();
}

#[function_component]
pub fn RunsApp() -> Html {
    let runner = use_runner();
    let run = runner.view.clone();
    let baseline = use_state(|| None::<Rc<(String, schedlab::experiment::Results)>>);
    // The editor's requests; Ready once this listens.
    {
        let (runner, baseline) = (runner.clone(), baseline.clone());
        use_effect_with((), move |_| {
            let listener =
                bridge::listen(bridge::TO_RUNS, move |text| {
                    match serde_json::from_str::<ToRuns>(&text) {
                        Ok(ToRuns::Start {
                            generation,
                            experiment,
                        }) => match Experiment::from_json(&experiment) {
                            Ok(exp) => runner.start(exp, generation),
                            Err(e) => web_sys::console::error_1(&e.to_string().into()),
                        },
                        Ok(ToRuns::Cancel) => runner.cancel(),
                        Ok(ToRuns::Baseline(id)) => {
                            let rec = id.and_then(|id| {
                                history::load().runs.into_iter().find(|r| r.id == id)
                            });
                            baseline.set(rec.map(|r| Rc::new((r.name(), r.results()))));
                        }
                        Err(e) => web_sys::console::error_1(&e.to_string().into()),
                    }
                });
            bridge::to_editor(&ToEditor::Ready {
                build: crate::BUILD_ID.to_string(),
            });
            move || drop(listener)
        });
    }
    // Every change of the run, told to the editor once drawn; a finished
    // run is kept, with what changed since the run before.
    {
        let view = run.clone();
        use_effect_with(status_of(&run), move |status| {
            bridge::to_editor(&ToEditor::Status(status.clone()));
            if let (true, Some(r), Some(exp)) = (status.finished, &view.results, &view.experiment) {
                if !link::is_embed() {
                    keep(&view, exp, &r.results);
                }
            }
        });
    }
    let Some(r) = shown(&run) else {
        return html! {};
    };
    let name = run
        .experiment
        .as_ref()
        .map(|e| e.name.clone())
        .unwrap_or_default();
    if link::is_embed() {
        html! {
            <>
                <Charts results={r.clone()} {name} limit={2} />
                <pre id="results-table" tabindex="0">{ r.table.clone() }</pre>
                if r.experiment.variants.len() >= 2 {
                    <EmbedDiverge experiment={r.experiment.clone()} />
                }
            </>
        }
    } else {
        html! { <ResultsView results={r} {name} baseline={(*baseline).clone()} /> }
    }
}

#[derive(Properties, PartialEq)]
struct EmbedProps {
    experiment: Rc<Experiment>,
}

/// The embed's way to the first divergence: the button and its answer.
#[function_component]
fn EmbedDiverge(props: &EmbedProps) -> Html {
    let why = use_why();
    let diverge = {
        let (why, exp) = (why.clone(), props.experiment.clone());
        Callback::from(move |_| why.diverge(&exp))
    };
    let on_mark = {
        let (why, exp) = (why.clone(), props.experiment.clone());
        Callback::from(move |click| why.mark(&exp, click))
    };
    html! {
        <>
            <div class="actions">
                <button class="secondary" id="diverge" onclick={diverge}>{ "Where A and B part" }</button>
            </div>
            <WhyPanel answer={(*why.answer).clone()} {on_mark} />
        </>
    }
}

/// Keeps finished run `view` in the history and its speed for the next
/// estimate; an embedded copy on a docs page keeps neither.
fn keep(view: &RunView, exp: &Experiment, results: &schedlab::experiment::Results) {
    let wall = (js_sys::Date::now() - view.started_ms) / 1000.0;
    crate::app::estimate::save_rate(view.events(), wall, view.workers);
    let before = history::load().runs;
    let rec = Record::of(
        exp,
        results,
        link::share_url(exp),
        js_sys::Date::now(),
        &before,
    );
    let next = history::push(&before, rec);
    let trouble = history::save(&next);
    bridge::to_editor(&ToEditor::Kept(trouble));
}

/// The results to show: the last ones stay (dimmed) while a new run goes,
/// so nothing jumps.
fn shown(run: &RunView) -> Option<Rc<RunResults>> {
    run.results.clone().or_else(|| run.previous.clone())
}

/// What the editor shows of `run`.
pub fn status_of(run: &RunView) -> RunStatus {
    RunStatus {
        generation: run.generation,
        running: run.running(),
        done: run.done(),
        points: run.outcomes.len(),
        fraction: run.fraction(),
        workers: run.workers,
        started_ms: run.started_ms,
        error: run.error.clone(),
        cancelled: run.cancelled,
        finished: run.results.is_some(),
        shown: shown(run).is_some(),
    }
}

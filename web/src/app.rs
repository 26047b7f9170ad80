//! The root component: pick a preset, run its points in a pool of Web
//! Workers, show the commit-style table and the results JSON.

use crate::protocol::{Json, Request, Response};
use crate::worker::CoreWorker;
use gloo_worker::{Spawnable, WorkerBridge};
use schedlab::experiment::{self, Experiment, PointOutcome};
use schedlab::{presets, report};
use std::rc::Rc;
use yew::prelude::*;

/// Trunk emits the worker next to index.html; a relative path keeps the site
/// working when it is served from a sub-path.
const WORKER_PATH: &str = "worker.js";

/// A run of one experiment: its points' outcomes as they arrive.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunView {
    pub experiment: Option<Rc<Experiment>>,
    pub workers: usize,
    pub outcomes: Vec<Option<PointOutcome>>,
    /// (commit-style table, results JSON) once every point is in.
    pub results: Option<Rc<(String, String)>>,
    pub error: Option<String>,
}

pub enum RunAction {
    Start {
        experiment: Rc<Experiment>,
        points: usize,
        workers: usize,
    },
    Point {
        index: usize,
        outcome: PointOutcome,
    },
    Failed(String),
}

impl RunView {
    pub fn done(&self) -> usize {
        self.outcomes.iter().filter(|o| o.is_some()).count()
    }

    pub fn running(&self) -> bool {
        self.experiment.is_some() && self.results.is_none() && self.error.is_none()
    }
}

impl Reducible for RunView {
    type Action = RunAction;

    fn reduce(self: Rc<Self>, action: RunAction) -> Rc<Self> {
        match action {
            RunAction::Start {
                experiment,
                points,
                workers,
            } => Rc::new(RunView {
                experiment: Some(experiment),
                workers,
                outcomes: vec![None; points],
                results: None,
                error: None,
            }),
            RunAction::Point { index, outcome } => {
                let mut next = (*self).clone();
                if let Some(slot) = next.outcomes.get_mut(index) {
                    *slot = Some(outcome);
                }
                if next.done() == next.outcomes.len() {
                    if let Some(exp) = &next.experiment {
                        next.results = Some(Rc::new(assemble(exp, &next.outcomes)));
                    }
                }
                Rc::new(next)
            }
            RunAction::Failed(error) => Rc::new(RunView {
                error: Some(error),
                ..(*self).clone()
            }),
        }
    }
}

/// The table and JSON, exactly as `schedlab run --format table|json` print them.
fn assemble(exp: &Experiment, outcomes: &[Option<PointOutcome>]) -> (String, String) {
    let points = exp.points().expect("points were listed before the run");
    let outcomes: Vec<PointOutcome> = outcomes.iter().flatten().cloned().collect();
    let r = experiment::assemble(exp, &points, &outcomes);
    let param = exp.sweep.as_ref().map(|s| s.param.as_str());
    (report::table(&r, param, exp.sum_row), r.to_json() + "\n")
}

fn hardware_concurrency() -> usize {
    web_sys::window()
        .map_or(1.0, |w| w.navigator().hardware_concurrency())
        .max(1.0) as usize
}

#[function_component]
pub fn App() -> Html {
    let preset = use_state(|| presets::ALL[0].0.to_string());
    let run = use_reducer(RunView::default);
    let bridges = use_mut_ref(Vec::<WorkerBridge<CoreWorker>>::new);
    let ready = use_state(|| false);
    {
        let ready = ready.clone();
        use_effect_with((), move |_| ready.set(true));
    }

    let on_preset = {
        let preset = preset.clone();
        Callback::from(move |e: Event| {
            let select: web_sys::HtmlSelectElement = e.target_unchecked_into();
            preset.set(select.value());
        })
    };

    let on_run = {
        let preset = preset.clone();
        let run = run.clone();
        let bridges = bridges.clone();
        Callback::from(move |_| {
            let exp = match presets::get(&preset) {
                Ok(e) => Rc::new(e),
                Err(e) => return run.dispatch(RunAction::Failed(e.to_string())),
            };
            let total = match exp.points() {
                Ok(p) => p.len(),
                Err(e) => return run.dispatch(RunAction::Failed(e.to_string())),
            };
            let workers = hardware_concurrency().min(total).max(1);
            run.dispatch(RunAction::Start {
                experiment: exp.clone(),
                points: total,
                workers,
            });
            let json = serde_json::to_string(&*exp).expect("an experiment serialises");
            let mut pool = bridges.borrow_mut();
            pool.clear();
            for w in 0..workers {
                let run = run.clone();
                let bridge = CoreWorker::spawner()
                    .callback(move |resp| match resp {
                        Response::Point { index, outcome } => {
                            run.dispatch(RunAction::Point { index, outcome })
                        }
                        Response::Failed { error } => run.dispatch(RunAction::Failed(error)),
                        _ => {}
                    })
                    .encoding::<Json>()
                    .spawn(WORKER_PATH);
                // Points are dealt round-robin; each worker runs its share in order.
                for index in (w..total).step_by(workers) {
                    bridge.send(Request::RunPoint {
                        experiment: json.clone(),
                        index,
                    });
                }
                pool.push(bridge);
            }
        })
    };

    let status = if let Some(e) = &run.error {
        html! { <p id="run-error" class="error">{ format!("error: {e}") }</p> }
    } else if run.running() {
        html! {
            <p id="run-status">
                <progress max={run.outcomes.len().to_string()} value={run.done().to_string()} />
                { format!(" {} of {} points, {} workers", run.done(), run.outcomes.len(), run.workers) }
            </p>
        }
    } else if run.results.is_some() {
        html! { <p id="run-status">{ format!("done: {} points on {} workers", run.outcomes.len(), run.workers) }</p> }
    } else {
        html! {}
    };

    let description = presets::get(&preset)
        .map(|e| e.description)
        .unwrap_or_default();
    html! {
        <main id="app" data-ready={ready.to_string()}>
            <h1>{ "schedlab" }</h1>
            <p class="tagline">{ "What the Linux scheduler's wakeup and load-balancing policies do to real workloads." }</p>
            <section class="controls">
                <label for="preset">{ "Experiment " }</label>
                <select id="preset" onchange={on_preset}>
                    { for presets::names().map(|n| html! { <option value={n} selected={*preset == n}>{ n }</option> }) }
                </select>
                <button id="run" onclick={on_run} disabled={run.running()}>{ "Run" }</button>
            </section>
            <p class="description">{ description }</p>
            { status }
            if let Some(r) = &run.results {
                <pre id="results-table">{ r.0.clone() }</pre>
                <details>
                    <summary>{ "Results JSON" }</summary>
                    <pre id="results-json">{ r.1.clone() }</pre>
                </details>
            }
        </main>
    }
}

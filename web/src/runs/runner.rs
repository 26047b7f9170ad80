//! Runs on a pool of Web Workers, as a hook: the run's state ([`RunView`])
//! and the pool behind it. One worker per point up to the machine's cores,
//! points dealt round-robin; dropping the pool (Cancel, or the next run)
//! terminates its workers at once.

use crate::pool::{hardware_concurrency, Pool};
use crate::protocol::{Request, Response};
use crate::run::{RunAction, RunView};
use schedlab::experiment::Experiment;
use std::cell::RefCell;
use std::rc::Rc;
use yew::prelude::*;

/// The run and its workers.
#[derive(Clone)]
pub struct Runner {
    pub view: UseReducerHandle<RunView>,
    pool: Rc<RefCell<Option<Pool>>>,
}

#[hook]
pub fn use_runner() -> Runner {
    Runner {
        view: use_reducer(RunView::default),
        pool: use_mut_ref(|| None::<Pool>),
    }
}

impl Runner {
    /// Starts run `generation` of `exp` (the editor has checked it), in
    /// place of any run going.
    pub fn start(&self, exp: Experiment, generation: u64) {
        let run = &self.view;
        let exp = Rc::new(exp);
        // Dropping the previous pool terminates its workers.
        *self.pool.borrow_mut() = None;
        let total = match exp.points() {
            Ok(p) => p.len(),
            Err(error) => {
                run.dispatch(RunAction::Start {
                    generation,
                    experiment: exp.clone(),
                    points: 0,
                    workers: 0,
                    started_ms: js_sys::Date::now(),
                });
                run.dispatch(RunAction::Failed {
                    generation,
                    error: error.to_string(),
                });
                return;
            }
        };
        let workers = hardware_concurrency().min(total).max(1);
        run.dispatch(RunAction::Start {
            generation,
            experiment: exp.clone(),
            points: total,
            workers,
            started_ms: js_sys::Date::now(),
        });
        match Pool::start(workers, on_response(run.clone(), generation)) {
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
                *self.pool.borrow_mut() = Some(p);
            }
            Err(error) => run.dispatch(RunAction::Failed { generation, error }),
        }
    }

    /// Stops the run at once: its workers are terminated mid-point.
    pub fn cancel(&self) {
        *self.pool.borrow_mut() = None;
        self.view.dispatch(RunAction::Cancelled);
    }
}

/// What the workers' replies do to run `generation`.
fn on_response(run: UseReducerHandle<RunView>, generation: u64) -> Rc<dyn Fn(usize, Response)> {
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
            outcome: Box::new(outcome.exact()),
        }),
        Response::Failed { error } => run.dispatch(RunAction::Failed { generation, error }),
        Response::Ready { .. }
        | Response::Probed { .. }
        | Response::Imported { .. }
        | Response::Reading { .. }
        | Response::Why { .. }
        | Response::Diverged { .. } => {}
    })
}

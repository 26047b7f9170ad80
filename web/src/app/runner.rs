//! Runs on a pool of Web Workers, as a hook: the run's state ([`RunView`])
//! and the pool behind it. One worker per point up to the machine's cores,
//! points dealt round-robin; dropping the pool (Cancel, or the next run)
//! terminates its workers at once.

use crate::pool::Pool;
use crate::protocol::{Request, Response};
use crate::run::{RunAction, RunView};
use crate::state::Editor;
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
    pub fn running(&self) -> bool {
        self.view.running()
    }

    /// Whether `editor`'s experiment can be run now: valid, and no run going.
    pub fn can_start(&self, editor: &Editor) -> bool {
        editor.is_valid() && !self.running()
    }

    /// Starts a run of `editor`'s experiment if [`Runner::can_start`];
    /// returns whether it did.
    pub fn start(&self, editor: &Editor) -> bool {
        if !self.can_start(editor) {
            return false;
        }
        let run = &self.view;
        let generation = run.generation + 1;
        let exp = Rc::new(editor.experiment.clone());
        let total = match exp.points() {
            Ok(p) => p.len(),
            Err(error) => {
                run.dispatch(RunAction::Failed {
                    generation,
                    error: error.to_string(),
                });
                return true;
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
        // Dropping the previous pool terminates its workers.
        *self.pool.borrow_mut() = None;
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
        true
    }

    /// Stops the run at once: its workers are terminated mid-point.
    pub fn cancel(&self) {
        *self.pool.borrow_mut() = None;
        self.view.dispatch(RunAction::Cancelled);
    }
}

pub fn hardware_concurrency() -> usize {
    web_sys::window()
        .map_or(1.0, |w| w.navigator().hardware_concurrency())
        .max(1.0) as usize
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
            outcome,
        }),
        Response::Failed { error } => run.dispatch(RunAction::Failed { generation, error }),
        Response::Ready { .. } | Response::Probed { .. } => {}
    })
}

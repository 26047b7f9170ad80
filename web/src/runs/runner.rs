//! Runs on a pool of Web Workers, as a hook: the run's state ([`RunView`])
//! and the pool behind it. One worker per point up to the machine's cores,
//! points dealt round-robin; dropping the pool (Cancel, or the next run)
//! terminates its workers at once. The workers' words reach the run in
//! batches, at most every [`DRAW_EVERY_MS`] ([`Batch`]): each change
//! redraws the editor and the results on the page's thread, which shares
//! the machine's cores with the workers. Drawn on every word (about forty
//! a second in retune-sysbench-pgsql on two workers), that thread was busy
//! for a quarter of the run.

use crate::pool::{hardware_concurrency, Pool};
use crate::protocol::{Request, Response, DRAW_EVERY_MS};
use crate::run::{RunAction, RunView};
use gloo_timers::callback::Timeout;
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
        match Pool::start(workers, on_response(run.clone(), generation, total)) {
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

/// The workers' words on one run not yet applied to it.
#[derive(Default)]
struct Batch {
    actions: Vec<RunAction>,
    /// Points heard of so far, of `total`.
    points: usize,
    total: usize,
}

impl Batch {
    fn new(total: usize) -> Batch {
        Batch {
            total,
            ..Batch::default()
        }
    }

    /// Keeps `action`; whether the batch must be applied now rather than
    /// at the next draw: the run's last point, or a failure, is shown at
    /// once.
    fn push(&mut self, action: RunAction) -> bool {
        let now = match &action {
            RunAction::Point { .. } => {
                self.points += 1;
                self.points >= self.total
            }
            RunAction::Failed { .. } => true,
            _ => false,
        };
        self.actions.push(action);
        now
    }

    fn take(&mut self) -> Option<RunAction> {
        (!self.actions.is_empty()).then(|| RunAction::Batch(std::mem::take(&mut self.actions)))
    }
}

/// What the workers' replies do to run `generation` of `total` points.
fn on_response(
    run: UseReducerHandle<RunView>,
    generation: u64,
    total: usize,
) -> Rc<dyn Fn(usize, Response)> {
    let batch = Rc::new(RefCell::new(Batch::new(total)));
    let timer: Rc<RefCell<Option<Timeout>>> = Rc::new(RefCell::new(None));
    let apply = {
        let (run, batch, timer) = (run.clone(), batch.clone(), timer.clone());
        Rc::new(move || {
            // Dropping a pending timer cancels it.
            timer.borrow_mut().take();
            let action = batch.borrow_mut().take();
            if let Some(a) = action {
                run.dispatch(a);
            }
        })
    };
    Rc::new(move |_, resp| {
        let Some(action) = action_of(resp, generation) else {
            return;
        };
        if batch.borrow_mut().push(action) {
            apply();
        } else if timer.borrow().is_none() {
            let apply = apply.clone();
            *timer.borrow_mut() = Some(Timeout::new(DRAW_EVERY_MS, move || apply()));
        }
    })
}

/// A worker's reply as a change of run `generation`, if it is one.
fn action_of(resp: Response, generation: u64) -> Option<RunAction> {
    match resp {
        Response::Progress {
            index,
            now_ns,
            end_ns,
        } => end_ns.filter(|e| *e > 0).map(|end| RunAction::Progress {
            generation,
            index,
            fraction: now_ns as f64 / end as f64,
        }),
        Response::Point { index, outcome } => Some(RunAction::Point {
            generation,
            index,
            outcome: Box::new(outcome.exact()),
        }),
        Response::Failed { error } => Some(RunAction::Failed { generation, error }),
        Response::Ready { .. }
        | Response::Probed { .. }
        | Response::Imported { .. }
        | Response::Reading { .. }
        | Response::Why { .. }
        | Response::Diverged { .. } => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn progress() -> RunAction {
        RunAction::Progress {
            generation: 1,
            index: 0,
            fraction: 0.5,
        }
    }

    fn point(index: usize) -> RunAction {
        let exp = schedlab::presets::get("kvm-pipe-test-pinning").unwrap();
        let first = &exp.points().unwrap()[0];
        RunAction::Point {
            generation: 1,
            index,
            outcome: Box::new(schedlab::experiment::run_point(first, &mut |_| true).unwrap()),
        }
    }

    #[test]
    fn a_batch_waits_for_the_next_draw_except_for_the_last_point_or_a_failure() {
        let mut batch = Batch::new(2);
        assert!(!batch.push(progress()));
        assert!(!batch.push(point(0)));
        assert!(batch.push(point(1)), "the last point is shown at once");
        match batch.take() {
            Some(RunAction::Batch(words)) => assert_eq!(words.len(), 3),
            _ => panic!("a batch of three words"),
        }
        assert!(batch.take().is_none(), "taken once");
        let mut batch = Batch::new(5);
        assert!(batch.push(RunAction::Failed {
            generation: 1,
            error: "no".into()
        }));
    }
}

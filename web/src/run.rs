//! A run of one experiment: its points' progress and outcomes as workers
//! report them, and the results once every point is in.

use schedlab::experiment::{self, Experiment, PointOutcome, Results, Trace};
use schedlab::explain::{explain, explain_each};
use schedlab::report;
use std::rc::Rc;
use yew::Reducible;

/// The results, the texts the CLI prints for them, and what the page draws.
#[derive(Debug, Clone, PartialEq)]
pub struct RunResults {
    /// The experiment that ran.
    pub experiment: Rc<Experiment>,
    pub results: Results,
    /// The largest difference between the variants, in words.
    pub explanation: String,
    /// With three or more variants, each later one against the first.
    pub explanations: Vec<String>,
    /// Each variant's traced window at the first sweep value, first repeat.
    pub traces: Vec<(String, Trace)>,
    /// `schedlab run --format table`
    pub table: String,
    /// The tools' own output per point.
    pub text: String,
    /// `schedlab run --format csv`
    pub csv: String,
    /// `schedlab run --format json`
    pub json: String,
}

impl RunResults {
    pub fn of(exp: &Rc<Experiment>, outcomes: &[PointOutcome]) -> schedlab::Result<RunResults> {
        let points = exp.points()?;
        let results = experiment::assemble(exp, &points, outcomes);
        let param = exp.sweep.as_ref().map(|s| s.param.as_str());
        let traces = experiment::first_traces(exp, &points, outcomes);
        Ok(RunResults {
            experiment: exp.clone(),
            explanation: explain(&results),
            explanations: explain_each(&results),
            traces,
            table: report::table(&results, param, exp.sum_row),
            text: report::text(&results, param),
            csv: report::csv(&results),
            json: results.to_json() + "\n",
            results,
        })
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunView {
    /// Which run this is; messages of earlier (cancelled) runs are ignored.
    pub generation: u64,
    pub experiment: Option<Rc<Experiment>>,
    pub workers: usize,
    /// When the run started (ms since the epoch, the page's clock).
    pub started_ms: f64,
    pub outcomes: Vec<Option<PointOutcome>>,
    /// Fraction of each point's simulated time done.
    pub partial: Vec<f64>,
    pub results: Option<Rc<RunResults>>,
    /// The last finished run's results, shown while this one runs.
    pub previous: Option<Rc<RunResults>>,
    pub error: Option<String>,
    pub cancelled: bool,
}

pub enum RunAction {
    Start {
        generation: u64,
        experiment: Rc<Experiment>,
        points: usize,
        workers: usize,
        started_ms: f64,
    },
    Progress {
        generation: u64,
        index: usize,
        fraction: f64,
    },
    Point {
        generation: u64,
        index: usize,
        outcome: Box<PointOutcome>,
    },
    Failed {
        generation: u64,
        error: String,
    },
    Cancelled,
    /// Several of the above, applied in order and drawn once.
    Batch(Vec<RunAction>),
}

impl RunView {
    pub fn done(&self) -> usize {
        self.outcomes.iter().filter(|o| o.is_some()).count()
    }

    pub fn running(&self) -> bool {
        self.experiment.is_some()
            && self.results.is_none()
            && self.error.is_none()
            && !self.cancelled
    }

    /// Overall progress, 0..=1.
    pub fn fraction(&self) -> f64 {
        if self.outcomes.is_empty() {
            return 0.0;
        }
        let sum: f64 = self
            .outcomes
            .iter()
            .zip(&self.partial)
            .map(|(o, p)| if o.is_some() { 1.0 } else { *p })
            .sum();
        sum / self.outcomes.len() as f64
    }

    /// "about 12 s left" at the rate so far, `now_ms` on the page's clock.
    pub fn time_left(&self, now_ms: f64) -> Option<String> {
        let elapsed = (now_ms - self.started_ms) / 1000.0;
        schedlab::estimate::time_left(elapsed, self.fraction())
            .map(|s| format!("{} left", schedlab::estimate::about(s)))
    }

    /// Events simulated by the points done.
    pub fn events(&self) -> u64 {
        self.outcomes.iter().flatten().map(|o| o.events).sum()
    }
}

impl RunView {
    /// Applies one worker's word (not `Start`) to this view in place;
    /// whether it changed anything. Words of an earlier run, or after
    /// this one ended, change nothing.
    fn apply(&mut self, action: RunAction) -> bool {
        let current = |view: &RunView, g: u64| g == view.generation && view.running();
        match action {
            RunAction::Progress {
                generation,
                index,
                fraction,
            } if current(self, generation) => {
                if let Some(p) = self.partial.get_mut(index) {
                    *p = fraction.clamp(0.0, 1.0);
                }
                true
            }
            RunAction::Point {
                generation,
                index,
                outcome,
            } if current(self, generation) => {
                if let Some(slot) = self.outcomes.get_mut(index) {
                    *slot = Some(*outcome);
                }
                if self.done() == self.outcomes.len() {
                    let exp = self.experiment.clone().expect("running");
                    let outcomes: Vec<PointOutcome> =
                        self.outcomes.iter().flatten().cloned().collect();
                    match RunResults::of(&exp, &outcomes) {
                        Ok(r) => self.results = Some(Rc::new(r)),
                        Err(e) => self.error = Some(e.to_string()),
                    }
                }
                true
            }
            RunAction::Failed { generation, error } if current(self, generation) => {
                self.error = Some(error);
                true
            }
            RunAction::Cancelled if self.running() => {
                self.cancelled = true;
                true
            }
            RunAction::Batch(actions) => {
                // Every word applied, whichever changed something.
                let mut changed = false;
                for a in actions {
                    changed |= self.apply(a);
                }
                changed
            }
            _ => false,
        }
    }
}

impl Reducible for RunView {
    type Action = RunAction;

    fn reduce(self: Rc<Self>, action: RunAction) -> Rc<Self> {
        match action {
            RunAction::Start {
                generation,
                experiment,
                points,
                workers,
                started_ms,
            } => Rc::new(RunView {
                generation,
                experiment: Some(experiment),
                workers,
                started_ms,
                outcomes: vec![None; points],
                partial: vec![0.0; points],
                previous: self.results.clone().or_else(|| self.previous.clone()),
                ..RunView::default()
            }),
            action => {
                let mut next = (*self).clone();
                // Unchanged, the same Rc: nothing is drawn again.
                if next.apply(action) {
                    Rc::new(next)
                } else {
                    self
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small preset and each of its points' outcomes, as the workers
    /// would send them.
    fn preset_and_outcomes() -> (Rc<Experiment>, Vec<PointOutcome>) {
        let exp = Rc::new(schedlab::presets::get("kvm-pipe-test-pinning").unwrap());
        let outcomes = exp
            .points()
            .unwrap()
            .iter()
            .map(|p| experiment::run_point(p, &mut |_| true).unwrap())
            .collect();
        (exp, outcomes)
    }

    fn started(exp: &Rc<Experiment>, generation: u64, points: usize) -> Rc<RunView> {
        Rc::new(RunView::default()).reduce(RunAction::Start {
            generation,
            experiment: exp.clone(),
            points,
            workers: 2,
            started_ms: 0.0,
        })
    }

    #[test]
    fn outcomes_in_any_order_give_the_clis_results_and_stale_ones_are_ignored() {
        let (exp, outcomes) = preset_and_outcomes();
        let mut view = started(&exp, 2, outcomes.len());
        view = view.reduce(RunAction::Point {
            generation: 1,
            index: 0,
            outcome: Box::new(outcomes[0].clone()),
        });
        assert_eq!(view.done(), 0, "a cancelled run's point is ignored");
        for i in (0..outcomes.len()).rev() {
            view = view.reduce(RunAction::Point {
                generation: 2,
                index: i,
                outcome: Box::new(outcomes[i].clone()),
            });
        }
        let expected = experiment::run_all(&exp, &mut |_, _| true).unwrap();
        let got = view.results.as_ref().unwrap();
        assert_eq!(got.json, expected.to_json() + "\n");
        assert!(!view.running());
        assert_eq!(view.fraction(), 1.0);
    }

    #[test]
    fn a_batch_is_its_words_one_by_one_and_a_batch_of_stale_words_draws_nothing() {
        let (exp, outcomes) = preset_and_outcomes();
        let start = || started(&exp, 3, outcomes.len());
        let words = || {
            let mut w = vec![RunAction::Progress {
                generation: 3,
                index: 1,
                fraction: 0.5,
            }];
            for (i, o) in outcomes.iter().enumerate() {
                w.push(RunAction::Point {
                    generation: 3,
                    index: i,
                    outcome: Box::new(o.clone()),
                });
            }
            w
        };
        let one_by_one = words().into_iter().fold(start(), |v, a| v.reduce(a));
        let batched = start().reduce(RunAction::Batch(words()));
        assert!(batched.results.is_some());
        assert_eq!(*batched, *one_by_one);

        let view = start();
        let stale = view.clone().reduce(RunAction::Batch(vec![
            RunAction::Progress {
                generation: 2,
                index: 0,
                fraction: 0.5,
            },
            RunAction::Failed {
                generation: 2,
                error: "an earlier run's".into(),
            },
        ]));
        assert!(
            Rc::ptr_eq(&view, &stale),
            "nothing changed, nothing to draw"
        );
    }

    #[test]
    fn cancel_stops_a_run_and_later_points_do_not_revive_it() {
        let exp = Rc::new(schedlab::presets::get("kvm-pipe-test-pinning").unwrap());
        let view = Rc::new(RunView::default())
            .reduce(RunAction::Start {
                generation: 1,
                experiment: exp,
                points: 2,
                workers: 1,
                started_ms: 0.0,
            })
            .reduce(RunAction::Progress {
                generation: 1,
                index: 0,
                fraction: 0.5,
            });
        assert_eq!(view.fraction(), 0.25);
        // A quarter done in 5 s: 15 s to go at that rate, said to one figure.
        assert_eq!(view.time_left(5_000.0).as_deref(), Some("about 20 s left"));
        let view = view.reduce(RunAction::Cancelled);
        assert!(view.cancelled && !view.running());
        let view = view.reduce(RunAction::Failed {
            generation: 1,
            error: "late".into(),
        });
        assert_eq!(view.error, None);
    }
}

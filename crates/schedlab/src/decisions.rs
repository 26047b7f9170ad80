//! An experiment's decisions, recorded (`schedlab why`), and the first
//! decision at which two of its variants part (`schedlab diverge`).
//!
//! Variants of one experiment already share their random numbers (a
//! repeat's seed does not depend on the variant), so two variants run the
//! same until a policy difference changes a decision or the state one
//! reads. Both run side by side, chunk by chunk, their records compared in
//! order as they come; nothing is kept once matched.

use crate::engine::stats::TraceWindow;
use crate::error::{Concern, Error, Result};
use crate::experiment::{Experiment, Point, PointRun, Trace};
use crate::knobs::PolicyKnobs;
use crate::sched::why::{Decision, Fact, Outcome, Step, WhyFilter};
use serde::Serialize;
use std::collections::BTreeMap;

/// Which run of an experiment to look at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RunChoice {
    /// Index of the sweep value.
    pub x: usize,
    pub variant: usize,
    pub repeat: u32,
}

/// The decisions one run recorded.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Recorded {
    pub variant: String,
    pub era: &'static str,
    pub decisions: Vec<Decision>,
    /// Each task's name, by id.
    pub task_names: Vec<String>,
    /// Records the filter wanted beyond its limit (the run stops at the first).
    pub limit_reached: bool,
}

/// The point of `exp` that `choice` names.
fn point_of(exp: &Experiment, choice: RunChoice) -> Result<Point> {
    let points = exp.points()?;
    let found = points
        .into_iter()
        .find(|p| p.x == choice.x && p.variant == choice.variant && p.repeat == choice.repeat);
    found.ok_or_else(|| {
        Error::invalid(
            Concern::Experiment,
            format!(
                "the experiment has no run with sweep value {}, variant {} and repeat {} \
                 ({} sweep values, {} variants, {} repeats)",
                choice.x + 1,
                choice.variant + 1,
                choice.repeat + 1,
                exp.xs().len(),
                exp.variants.len(),
                exp.repeats
            ),
        )
    })
}

/// Runs `choice` of `exp` keeping the decisions `filter` wants (its window
/// counted from the workload's start), until the run ends, the window
/// closes or the limit is reached.
pub fn record(exp: &Experiment, choice: RunChoice, filter: WhyFilter) -> Result<Recorded> {
    let point = point_of(exp, choice)?;
    let to_ns = filter.to_ns;
    let mut run = PointRun::new(&point, Some(filter))?;
    let mut decisions = Vec::new();
    loop {
        let done = run.chunk()?;
        let (more, over) = run.sim.take_decisions();
        decisions.extend(relative(more, &run));
        if done || over > 0 || run.elapsed_ns() >= to_ns {
            return Ok(Recorded {
                variant: exp.variants[choice.variant].label.clone(),
                era: point.policy.era.name(),
                decisions,
                task_names: run.sim.task_names(),
                limit_reached: over > 0,
            });
        }
    }
}

/// Records with their times counted from the workload's start.
fn relative(decisions: Vec<Decision>, run: &PointRun) -> impl Iterator<Item = Decision> {
    let start = run.start_ns();
    decisions.into_iter().map(move |mut d| {
        d.t_ns -= start;
        d
    })
}

/// The decisions `choice` of `exp` made at `t_ns` (simulated time as a
/// trace has it, from the run's own zero) about `task`: its placement, or
/// the balance that moved it. The page's answer to a click on a wakeup or
/// a migration in the timeline.
pub fn at(exp: &Experiment, choice: RunChoice, task: usize, t_ns: u64) -> Result<Recorded> {
    let start = crate::experiment::start_ns_of(&point_of(exp, choice)?)?;
    let from_ns = t_ns.checked_sub(start).ok_or_else(|| {
        Error::invalid(
            Concern::Run,
            format!(
                "{} ns is before the workload started ({start} ns): no decision was made then",
                t_ns
            ),
        )
    })?;
    let filter = WhyFilter {
        from_ns,
        to_ns: from_ns + 1,
        limit: AT_MOST_AT_ONCE,
        ..WhyFilter::default()
    };
    let mut recorded = record(exp, choice, filter)?;
    recorded.decisions.retain(|d| {
        d.task == Some(task)
            || matches!(&d.outcome, Outcome::Balanced { moved, .. } if moved.contains(&task))
    });
    Ok(recorded)
}

/// Decisions one moment may hold (a wakeup, the balances of every CPU's
/// tick): more would be a bug, and the limit says so.
const AT_MOST_AT_ONCE: usize = 1_000;

/// Variants `a` and `b` of `exp` at sweep value `x`, each traced for
/// `len_ns` from `from_ns` (since the workload's start): the timelines of
/// where two variants part.
pub fn traces_around(
    exp: &Experiment,
    x: usize,
    variants: [usize; 2],
    from_ns: u64,
    len_ns: u64,
) -> Result<Vec<(String, Trace)>> {
    let mut out = Vec::new();
    for variant in variants {
        let point = point_of(
            exp,
            RunChoice {
                x,
                variant,
                repeat: 0,
            },
        )?;
        let window = TraceWindow {
            start_ns: from_ns,
            end_ns: from_ns + len_ns,
            max_events: crate::experiment::TRACE_MAX_EVENTS,
            from_first_wakeup: false,
        };
        let mut run = PointRun::with_trace(&point, None, Some(window))?;
        while !run.chunk()? && run.elapsed_ns() < window.end_ns {}
        let ncpus = point.topology.ncpus();
        let output = run.sim.finish();
        out.push((
            exp.variants[variant].label.clone(),
            Trace::of_output(&output, ncpus, len_ns),
        ));
    }
    Ok(out)
}

/// A knob set differently in the two variants.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PolicyDifference {
    /// The domain level of an SD flag or a level parameter.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<&'static str>,
    /// "era", an SD flag, a level parameter, a feature or a tunable.
    pub knob: &'static str,
    pub a: String,
    pub b: String,
}

/// Every knob the two policies set differently, on the experiment's machine.
fn policy_differences(a: &Point, b: &Point) -> Result<Vec<PolicyDifference>> {
    let (ka, kb) = (
        PolicyKnobs::of(&a.topology, &a.policy)?,
        PolicyKnobs::of(&b.topology, &b.policy)?,
    );
    let mut out = Vec::new();
    if ka.era != kb.era {
        out.push(PolicyDifference {
            level: None,
            knob: "era",
            a: ka.era.name().into(),
            b: kb.era.name().into(),
        });
    }
    for la in &ka.levels {
        let Some(lb) = kb.level(la.name) else {
            continue;
        };
        for (i, name) in ka.flag_names.iter().enumerate() {
            let (Some(fa), Some(fb)) = (la.flags.get(i), kb.flag(la.name, name)) else {
                continue;
            };
            if fa.value != fb {
                out.push(PolicyDifference {
                    level: Some(la.name),
                    knob: name,
                    a: on_off(fa.value),
                    b: on_off(fb),
                });
            }
        }
        for (i, param) in crate::policy::LevelParam::ALL.iter().enumerate() {
            let (va, vb) = (la.params[i].value, lb.params[i].value);
            if va != vb {
                out.push(PolicyDifference {
                    level: Some(la.name),
                    knob: param.name(),
                    a: va.to_string(),
                    b: vb.to_string(),
                });
            }
        }
    }
    let features_b: BTreeMap<_, _> = kb.features.iter().map(|(n, k)| (*n, k.value)).collect();
    for (name, knob) in &ka.features {
        if let Some(&vb) = features_b.get(name) {
            if vb != knob.value {
                out.push(PolicyDifference {
                    level: None,
                    knob: name,
                    a: on_off(knob.value),
                    b: on_off(vb),
                });
            }
        }
    }
    let tunables_b: BTreeMap<_, _> = kb.tunables.iter().map(|(n, k)| (*n, k.value)).collect();
    for (name, knob) in &ka.tunables {
        if let Some(&vb) = tunables_b.get(name) {
            if vb != knob.value {
                out.push(PolicyDifference {
                    level: None,
                    knob: name,
                    a: knob.value.to_string(),
                    b: vb.to_string(),
                });
            }
        }
    }
    Ok(out)
}

fn on_off(on: bool) -> String {
    if on { "on" } else { "off" }.into()
}

/// Where two records first differ: the step (by its position in A's
/// record) and the two facts there (None where one record has none).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FactDifference {
    pub step: usize,
    pub func_a: Option<&'static str>,
    pub func_b: Option<&'static str>,
    pub a: Option<Fact>,
    pub b: Option<Fact>,
}

/// What a parting traces back to.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "cause", rename_all = "snake_case")]
pub enum Cause {
    /// A knob the decision read directly (a flag at a level, a feature).
    Knob(PolicyDifference),
    /// The two eras' code took different paths.
    EraCode { a: &'static str, b: &'static str },
    /// The decisions read different values: the runs' states parted before,
    /// outside placement and balancing (a pick, a preemption, a cost).
    StateParted,
}

/// The first decision at which two variants part.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Parting {
    /// Decisions that matched before it.
    pub matched: u64,
    pub a: Decision,
    pub b: Decision,
    pub difference: FactDifference,
    pub cause: Cause,
}

/// When a counter first differed between the variants by more than
/// [`COUNTER_PARTING`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CounterParting {
    pub counter: String,
    /// Simulated time since the workload's start.
    pub at_ns: u64,
    pub a: u64,
    pub b: u64,
}

/// A counter "parts" when the variants' counts differ by more than this
/// share of the larger one...
pub const COUNTER_PARTING: f64 = 0.05;
/// ... and the larger is at least this many (small counts differ by chance).
pub const COUNTER_FLOOR: u64 = 100;

/// Two variants side by side.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Divergence {
    pub variants: [String; 2],
    pub eras: [&'static str; 2],
    pub task_names: Vec<String>,
    pub policy_differences: Vec<PolicyDifference>,
    /// The first decision whose record differs (a path, a value, a flag
    /// read), even if it ends the same; None: every record matched.
    pub first_difference: Option<Parting>,
    /// The first decision that ends differently (another CPU, other tasks
    /// moved) or that only one run makes: where the runs part. None: the
    /// variants decided alike to the end of the run.
    pub parting: Option<Parting>,
    /// Decisions compared, in each run.
    pub compared: u64,
    pub counters: Vec<CounterParting>,
    /// Simulated time run (the shorter of the two runs).
    pub run_ns: u64,
}

/// Two runs' records compared in order as they come.
struct Comparer<'a> {
    points: (&'a Point, &'a Point),
    differences: &'a [PolicyDifference],
    queues: (Vec<Decision>, Vec<Decision>),
    compared: u64,
    identical: u64,
    first: Option<Parting>,
    split: Option<Parting>,
}

impl Comparer<'_> {
    /// Compares the records that both runs have made so far.
    fn feed(&mut self, a: impl Iterator<Item = Decision>, b: impl Iterator<Item = Decision>) {
        self.queues.0.extend(a);
        self.queues.1.extend(b);
        let n = self.queues.0.len().min(self.queues.1.len());
        let a: Vec<Decision> = self.queues.0.drain(..n).collect();
        let b: Vec<Decision> = self.queues.1.drain(..n).collect();
        for (da, db) in a.into_iter().zip(b) {
            self.compared += 1;
            if da == db {
                self.identical += 1;
                continue;
            }
            let same_effect = same_point(&da, &db) && da.outcome == db.outcome;
            if self.first.is_none() {
                self.first = Some(self.parting(&da, &db, self.identical));
            }
            if !same_effect {
                self.split = Some(self.parting(&da, &db, self.compared - 1));
                break;
            }
        }
        if self.split.is_some() {
            self.queues.0.clear();
            self.queues.1.clear();
        }
    }

    fn parting(&self, da: &Decision, db: &Decision, matched: u64) -> Parting {
        let difference = first_difference(&da.steps, &db.steps);
        let cause = trace_cause(&difference, (da, db), self.points, self.differences);
        Parting {
            matched,
            a: da.clone(),
            b: db.clone(),
            difference,
            cause,
        }
    }
}

/// The same decision point: the same time, kind, task and deciding CPU.
pub fn same_point(a: &Decision, b: &Decision) -> bool {
    (a.t_ns, a.kind, a.task, a.cpu, a.level) == (b.t_ns, b.kind, b.task, b.cpu, b.level)
}

/// Runs variants `a` and `b` (indexes) of `exp` at sweep value `x`, first
/// repeat, side by side: the first decision whose record differs, the
/// first that ends differently, and when each counter first parts.
/// `kinds` keeps placements, balances or both (`WhyFilter`'s fields).
pub fn diverge(
    exp: &Experiment,
    x: usize,
    (a, b): (usize, usize),
    kinds: &WhyFilter,
) -> Result<Divergence> {
    let filter = WhyFilter {
        wakeups: kinds.wakeups,
        forks: kinds.forks,
        balances: kinds.balances,
        ..WhyFilter::default()
    };
    let pa = point_of(
        exp,
        RunChoice {
            x,
            variant: a,
            repeat: 0,
        },
    )?;
    let pb = point_of(
        exp,
        RunChoice {
            x,
            variant: b,
            repeat: 0,
        },
    )?;
    let differences = policy_differences(&pa, &pb)?;
    let mut ra = PointRun::new(&pa, Some(filter.clone()))?;
    let mut rb = PointRun::new(&pb, Some(filter))?;
    let mut cmp = Comparer {
        points: (&pa, &pb),
        differences: &differences,
        queues: (Vec::new(), Vec::new()),
        compared: 0,
        identical: 0,
        first: None,
        split: None,
    };
    let mut counters: BTreeMap<String, CounterParting> = BTreeMap::new();
    loop {
        let done_a = ra.chunk()?;
        let done_b = rb.chunk()?;
        if cmp.split.is_none() {
            cmp.feed(
                relative(ra.sim.take_decisions().0, &ra),
                relative(rb.sim.take_decisions().0, &rb),
            );
            if cmp.split.is_some() {
                ra.sim.stop_decisions();
                rb.sim.stop_decisions();
            }
        }
        note_counter_partings(&mut counters, &ra, &rb);
        if done_a || done_b {
            let run_ns = ra.elapsed_ns().min(rb.elapsed_ns());
            let mut counters: Vec<_> = counters.into_values().collect();
            counters.sort_by(|x, y| x.at_ns.cmp(&y.at_ns).then(x.counter.cmp(&y.counter)));
            let (na, nb) = (ra.sim.task_names(), rb.sim.task_names());
            return Ok(Divergence {
                variants: [exp.variants[a].label.clone(), exp.variants[b].label.clone()],
                eras: [pa.policy.era.name(), pb.policy.era.name()],
                task_names: if na.len() >= nb.len() { na } else { nb },
                policy_differences: differences.clone(),
                first_difference: cmp.first,
                parting: cmp.split,
                compared: cmp.compared,
                counters,
                run_ns,
            });
        }
    }
}

/// Records a counter's first parting (see [`COUNTER_PARTING`]).
fn note_counter_partings(
    partings: &mut BTreeMap<String, CounterParting>,
    ra: &PointRun,
    rb: &PointRun,
) {
    let (ca, cb) = (ra.sim.counters(), rb.sim.counters());
    for name in ca.keys().chain(cb.keys()) {
        if partings.contains_key(name) {
            continue;
        }
        let (a, b) = (
            ca.get(name).copied().unwrap_or(0),
            cb.get(name).copied().unwrap_or(0),
        );
        let max = a.max(b);
        if max >= COUNTER_FLOOR && a.abs_diff(b) as f64 > COUNTER_PARTING * max as f64 {
            partings.insert(
                name.clone(),
                CounterParting {
                    counter: name.clone(),
                    at_ns: ra.elapsed_ns(),
                    a,
                    b,
                },
            );
        }
    }
}

/// The first step, and the first fact in it, at which two records differ
/// (a step's function, then its facts in order).
fn first_difference(a: &[Step], b: &[Step]) -> FactDifference {
    let n = a.len().max(b.len());
    for i in 0..n {
        let (sa, sb) = (a.get(i), b.get(i));
        let func_a = sa.map(|s| s.func);
        let func_b = sb.map(|s| s.func);
        if func_a != func_b || sa.map(|s| s.depth) != sb.map(|s| s.depth) {
            return FactDifference {
                step: i,
                func_a,
                func_b,
                a: sa.and_then(|s| s.facts.first().cloned()),
                b: sb.and_then(|s| s.facts.first().cloned()),
            };
        }
        let (fa, fb) = (&sa.expect("i < n").facts, &sb.expect("same func").facts);
        for j in 0..fa.len().max(fb.len()) {
            if fa.get(j) != fb.get(j) {
                return FactDifference {
                    step: i,
                    func_a,
                    func_b,
                    a: fa.get(j).cloned(),
                    b: fb.get(j).cloned(),
                };
            }
        }
    }
    // Same steps and facts: the outcome alone differs (a fallback or the
    // engine's own step); its state differs.
    FactDifference {
        step: n,
        func_a: None,
        func_b: None,
        a: None,
        b: None,
    }
}

/// The policy difference a record difference comes from: a flag or
/// feature fact set differently, else a path only one era's code takes at
/// the same decision point, else the state.
fn trace_cause(
    d: &FactDifference,
    (da, db): (&Decision, &Decision),
    (pa, pb): (&Point, &Point),
    differences: &[PolicyDifference],
) -> Cause {
    for fact in [&d.a, &d.b].into_iter().flatten() {
        if let Fact::Flag { level, name, .. } = fact {
            if let Some(p) = differences
                .iter()
                .find(|p| p.level == *level && p.knob == *name)
            {
                return Cause::Knob(p.clone());
            }
        }
    }
    let (ea, eb) = (pa.policy.era, pb.policy.era);
    let same_point = (da.t_ns, da.kind, da.task, da.cpu, da.level)
        == (db.t_ns, db.kind, db.task, db.cpu, db.level);
    if same_point && d.func_a != d.func_b && ea != eb {
        return Cause::EraCode {
            a: ea.name(),
            b: eb.name(),
        };
    }
    Cause::StateParted
}

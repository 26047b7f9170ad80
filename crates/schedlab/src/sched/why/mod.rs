//! Decision records ("why"): for each placement and each load_balance, the
//! kernel functions the era went through, at each the values it compared
//! (both sides of every inequality), the CPUs it looked at and why each was
//! refused, and the outcome.
//!
//! Off unless asked for: the environment hands out a [`Trail`] only when a
//! run records decisions (`SchedEnv::why`), and every note is a closure run
//! only then, out of line. The engine's own environment never hands one
//! out (a run that records goes through a wrapper, `engine::sched_env`),
//! so in the code a normal run executes every note compiles away. A
//! decision's steps are flat, each with its depth in the era's call tree,
//! so an early return anywhere leaves a well-formed record.

pub(crate) mod record;

pub use record::{
    Decision, DecisionKind, Fact, Op, Outcome, Step, Term, Trail, TrailCell, WhyFilter, MOVED,
    PUSHED,
};

use crate::counters::IdleType;
use crate::sched::env::SchedEnv;

/// Runs `f` on the trail if the run keeps records, out of line.
#[inline(always)]
fn with_trail(env: &impl SchedEnv, f: impl FnOnce(&mut Trail)) {
    if let Some(cell) = env.why() {
        on_trail(cell, f);
    }
}

#[cold]
#[inline(never)]
fn on_trail(cell: &TrailCell, f: impl FnOnce(&mut Trail)) {
    f(&mut cell.borrow_mut());
}

/// Runs `f` on the trail while a decision is being recorded.
#[inline(always)]
pub(crate) fn note(env: &impl SchedEnv, f: impl FnOnce(&mut Trail)) {
    with_trail(env, |t| {
        if t.is_open() {
            f(t);
        }
    });
}

/// Opens a placement record for `task` decided on `cpu`.
#[inline(always)]
pub(crate) fn begin_placement(env: &impl SchedEnv, fork: bool, cpu: usize, task: usize) {
    with_trail(env, |t| {
        let kind = if fork {
            DecisionKind::Fork
        } else {
            DecisionKind::Wakeup
        };
        t.begin(env.now(), kind, None, cpu, None, Some(task));
    });
}

/// Opens a record of `cpu`'s new-idle walk over its levels (each
/// load_balance it runs nests inside).
#[inline(always)]
pub(crate) fn begin_newidle(env: &impl SchedEnv, cpu: usize) {
    with_trail(env, |t| {
        let idle = Some(IdleType::NewIdle);
        t.begin(env.now(), DecisionKind::Balance, idle, cpu, None, None);
    });
}

/// Opens a record of `cpu`'s load_balance at `level` (inside an open
/// new-idle walk, its steps join the walk's record).
#[inline(always)]
pub(crate) fn begin_balance(env: &impl SchedEnv, idle: IdleType, cpu: usize, level: &'static str) {
    with_trail(env, |t| {
        let (idle, level) = (Some(idle), Some(level));
        t.begin(env.now(), DecisionKind::Balance, idle, cpu, level, None);
    });
}

/// The NOHZ idle balancer `ilb` starts (Some) or ends (None) balancing
/// for the tickless CPUs: the balances between are marked as its.
#[inline(always)]
pub(crate) fn nohz_balancer(env: &impl SchedEnv, ilb: Option<usize>) {
    with_trail(env, |t| t.nohz_balancer(ilb));
}

/// Closes the open balance record: the busiest CPU, and the tasks its
/// steps moved (detach_tasks' "moved", the stopper's "pushed").
#[inline(always)]
pub(crate) fn finish_balance(env: &impl SchedEnv, busiest: Option<usize>) {
    with_trail(env, |t| t.finish_balance(busiest));
}

/// Closes the open record with `outcome`.
#[inline(always)]
pub(crate) fn finish(env: &impl SchedEnv, outcome: impl FnOnce() -> Outcome) {
    with_trail(env, |t| {
        let outcome = if t.is_open() {
            outcome()
        } else {
            Outcome::Unfinished
        };
        t.finish(outcome);
    });
}

#[cfg(test)]
mod tests;

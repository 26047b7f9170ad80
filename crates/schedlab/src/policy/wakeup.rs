//! select_task_rq: where a woken or forked task runs.
//!
//! This first version keeps a woken task on its previous CPU (and a forked
//! one on its parent's) when its affinity allows; the eras' wake_affine,
//! select_idle_sibling and slow paths replace it.

use crate::engine::Sim;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WakeKind {
    Wakeup,
    Fork,
}

/// Returns the CPU for `task` and the name of the branch that chose it.
/// `prev` is the task's previous CPU (a fork child's: the parent's), `this`
/// the CPU doing the wakeup.
pub(crate) fn select_task_rq(
    sim: &Sim,
    task: usize,
    prev: usize,
    this: usize,
    _sync: bool,
    _kind: WakeKind,
) -> (usize, &'static str) {
    let allowed = sim.allowed(task);
    if allowed.contains(prev) {
        (prev, "prev")
    } else if allowed.contains(this) {
        (this, "this")
    } else {
        (
            allowed.first().expect("affinity is never empty"),
            "affinity",
        )
    }
}

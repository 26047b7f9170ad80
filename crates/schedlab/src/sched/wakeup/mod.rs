//! select_task_rq: where a woken or forked task runs, each era by its own
//! functions: [`v2_6`] (2.6.27 / 2.6.28), [`v4_15`] (4.15, and 6.x with
//! the differences `EraRules` names), and the fork/exec slow path
//! [`slow`].
//!
//! Every decision records the branch that made it (for counters and the
//! trace) in its [`Placement`].

mod placement;
mod slow;
mod v2_6;
mod v4_15;

use crate::counters::Reason;
use crate::policy::SdFlag;
use crate::sched::env::SchedEnv;
use crate::sched::why;
pub use placement::{Placement, WakeKind};

/// Returns where `task` runs. `prev` is its previous CPU (a fork child's:
/// the parent's), `this` the CPU doing the wakeup or fork.
pub(crate) fn select_task_rq(
    env: &mut impl SchedEnv,
    task: usize,
    prev: usize,
    this: usize,
    sync: bool,
    kind: WakeKind,
) -> Placement {
    why::begin_placement(env, kind == WakeKind::Fork, this, task);
    let mut placed = match kind {
        WakeKind::Fork => {
            let mut p = if env.policy().era.is_legacy() {
                slow::sched_balance_self(env, task, this, SdFlag::BalanceFork)
            } else {
                v4_15::select(env, task, this, this, false, SdFlag::BalanceFork)
            };
            p.fork = true;
            p
        }
        WakeKind::Wakeup if env.policy().era.is_legacy() => {
            v2_6::select(env, task, prev, this, sync)
        }
        WakeKind::Wakeup => v4_15::select(env, task, prev, this, sync, SdFlag::BalanceWake),
    };
    if !env.allowed(task).contains(placed.cpu) {
        why::note(env, |t| {
            t.step(0, "select_fallback_rq");
            t.cpu(placed.cpu, "not in the task's affinity");
        });
        placed.decide(
            select_fallback_rq(env, task, prev),
            Reason::AffinityFallback,
        );
    }
    why::finish(env, || why::Outcome::Placed {
        cpu: placed.cpu,
        reason: placed.reason,
    });
    placed
}

/// select_fallback_rq: a CPU the task may not use is never the answer;
/// its previous CPU if allowed, else its first allowed one.
pub fn select_fallback_rq(env: &impl SchedEnv, task: usize, prev: usize) -> usize {
    let allowed = env.allowed(task);
    if allowed.contains(prev) {
        prev
    } else {
        allowed.first().expect("affinity is never empty")
    }
}

#[cfg(test)]
mod tests;

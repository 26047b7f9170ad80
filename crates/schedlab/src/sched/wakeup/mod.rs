//! select_task_rq: where a woken or forked task runs, each era by its own
//! functions: [`legacy`] (2.6.27 / 2.6.28), [`modern`] (4.15 and 6.5), and
//! the fork/exec slow path [`slow`].
//!
//! Every decision records the branch that made it (for counters and the
//! trace) in its [`Placement`].

mod legacy;
mod modern;
mod slow;

use crate::counters::{Counter, Reason};
use crate::policy::SdFlag;
use crate::sched::SchedEnv;
pub(crate) use legacy::loads as legacy_loads;
pub(crate) use modern::nr_idle_scan;
pub(crate) use slow::{adjust_numa_imbalance, imb_numa_nr};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WakeKind {
    Wakeup,
    Fork,
}

/// A placement decision and how it was reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    pub cpu: usize,
    /// The deciding branch, for the trace.
    pub reason: Reason,
    /// The counters of the branches taken on the way.
    pub path: [Option<Counter>; 3],
    /// CPUs examined while searching for an idle one (costs the waker time).
    pub scanned: u32,
    pub fork: bool,
}

impl Placement {
    pub fn new(cpu: usize, reason: Reason) -> Self {
        Placement {
            cpu,
            reason,
            path: [None; 3],
            scanned: 0,
            fork: false,
        }
    }

    /// Records a counter step.
    pub(crate) fn step(&mut self, counter: Counter) {
        if let Some(slot) = self.path.iter_mut().find(|s| s.is_none()) {
            *slot = Some(counter);
        }
    }

    pub(crate) fn decide(&mut self, cpu: usize, reason: Reason) {
        self.cpu = cpu;
        self.reason = reason;
    }
}

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
    let mut placed = match kind {
        WakeKind::Fork => {
            let mut p = if env.policy().era.is_legacy() {
                slow::sched_balance_self(env, task, this, SdFlag::BalanceFork)
            } else {
                modern::select(env, task, this, this, false, SdFlag::BalanceFork)
            };
            p.fork = true;
            p
        }
        WakeKind::Wakeup if env.policy().era.is_legacy() => {
            legacy::select(env, task, prev, this, sync)
        }
        WakeKind::Wakeup => modern::select(env, task, prev, this, sync, SdFlag::BalanceWake),
    };
    // select_fallback_rq: a CPU the task may not use is never the answer.
    if !env.allowed(task).contains(placed.cpu) {
        let allowed = env.allowed(task);
        let cpu = if allowed.contains(prev) {
            prev
        } else {
            allowed.first().expect("affinity is never empty")
        };
        placed.decide(cpu, Reason::AffinityFallback);
    }
    placed
}

#[cfg(test)]
mod tests;

//! A placement decision and the branches that reached it (for counters
//! and the trace).

use crate::counters::{Counter, Reason};

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

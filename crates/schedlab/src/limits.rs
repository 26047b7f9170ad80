//! The limits of what one experiment may ask for, in one table.
//!
//! Every input is checked against these before anything runs; exceeding one is
//! an [`ErrorKind::Limit`] naming it. Nothing is clamped.

use crate::error::{Concern, Error, ErrorKind, Result};

/// One limit: an inclusive range and the name errors quote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    pub name: &'static str,
    pub min: u64,
    pub max: u64,
}

impl Limit {
    /// Checks `value` (described as `what`, e.g. "machine.cpus", in the
    /// part of the input `concern` names) against the limit.
    pub fn check(&self, concern: Concern, what: &str, value: u64) -> Result<u64> {
        if (self.min..=self.max).contains(&value) {
            Ok(value)
        } else {
            Err(Error::new(
                concern,
                ErrorKind::Limit {
                    what: what.to_string(),
                    value,
                    min: self.min,
                    max: self.max,
                    limit: self.name,
                },
            ))
        }
    }
}

/// CPUs in one machine (a [`crate::cpuset::CpuSet`] holds this many).
pub const CPUS: Limit = Limit {
    name: "max CPUs",
    min: 1,
    max: 1024,
};
/// NUMA nodes in one machine.
pub const NODES: Limit = Limit {
    name: "max NUMA nodes",
    min: 1,
    max: 64,
};
/// Tasks alive at once in one run.
pub const TASKS: Limit = Limit {
    name: "max tasks",
    min: 1,
    max: 20_000,
};
/// Events processed in one run, so that no input can make a run endless.
pub const EVENTS: Limit = Limit {
    name: "max events per run",
    min: 1,
    max: 2_000_000_000,
};
/// Simulated time of one run, in nanoseconds (10 minutes).
pub const SIM_TIME_NS: Limit = Limit {
    name: "max simulated time (ns)",
    min: 1,
    max: 600_000_000_000,
};
/// Points in one sweep.
pub const SWEEP_POINTS: Limit = Limit {
    name: "max sweep points",
    min: 1,
    max: 64,
};
/// Repeats of one point.
pub const REPEATS: Limit = Limit {
    name: "max repeats",
    min: 1,
    max: 100,
};

/// Every limit, for documentation and the CLI's `limits` listing.
pub const ALL: [Limit; 7] = [
    CPUS,
    NODES,
    TASKS,
    EVENTS,
    SIM_TIME_NS,
    SWEEP_POINTS,
    REPEATS,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_accepts_the_range_and_names_the_limit_outside_it() {
        assert_eq!(CPUS.check(Concern::Machine, "machine.cpus", 1024), Ok(1024));
        let err = CPUS
            .check(Concern::Machine, "machine.cpus", 1025)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "machine.cpus is 1025, but the limit is 1..=1024 (max CPUs)"
        );
        assert!(CPUS.check(Concern::Machine, "machine.cpus", 0).is_err());
    }
}

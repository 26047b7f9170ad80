//! The engine's speed on standard cases, in simulated scheduling events per
//! second of the caller's clock: `schedlab bench` natively, schedlab-js's
//! `bench` in a browser. The events are the same everywhere (the runs are
//! deterministic); only the time differs.

use crate::error::Result;
use crate::experiment;
use crate::presets;
use serde::Serialize;

/// The standard cases: two ping-pongs and the crowded 40-CPU hackbench.
pub const CASES: [&str; 3] = [
    "retune-pipe-test",
    "kvm-pipe-test-pinning",
    "waweight-hackbench-20",
];

/// One case's measurement.
#[derive(Debug, Clone, Serialize)]
pub struct BenchLine {
    pub case: String,
    pub events: u64,
    pub wall_ms: f64,
}

impl BenchLine {
    pub fn mevents_per_s(&self) -> f64 {
        self.events as f64 / self.wall_ms.max(f64::MIN_POSITIVE) / 1000.0
    }
}

/// Runs every point of preset `case` (its first repeat) one after another,
/// timed by `clock_ms` (any monotonic clock in milliseconds).
pub fn run_case(case: &str, clock_ms: &mut dyn FnMut() -> f64) -> Result<BenchLine> {
    let exp = presets::get(case)?;
    let points = exp.points()?;
    let start = clock_ms();
    let mut events = 0;
    // One repeat of each point, so a preset's repeat count does not change
    // the case.
    for p in points.iter().filter(|p| p.repeat == 0) {
        events += experiment::run_point(p, &mut |_| true)?.events;
    }
    Ok(BenchLine {
        case: case.to_string(),
        events,
        wall_ms: clock_ms() - start,
    })
}

/// The lines as a table.
pub fn table(lines: &[BenchLine]) -> String {
    let mut out = String::from("case                              events   wall ms   Mevents/s\n");
    for l in lines {
        out.push_str(&format!(
            "{:<30} {:>10} {:>9.0} {:>11.2}\n",
            l.case,
            l.events,
            l.wall_ms,
            l.mevents_per_s()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_case_counts_its_events_on_the_given_clock() {
        let mut t = 0.0;
        let mut clock = || {
            t += 5.0;
            t
        };
        let line = run_case("kvm-pipe-test-pinning", &mut clock).unwrap();
        assert_eq!(line.wall_ms, 5.0, "one reading before, one after");
        assert!(line.events > 100_000, "{line:?}");
        assert!(table(&[line]).contains("kvm-pipe-test-pinning"));
        assert!(run_case("no-such-preset", &mut clock).is_err());
    }
}

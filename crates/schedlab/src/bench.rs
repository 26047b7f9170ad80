//! The engine's speed on fixed cases, timed by the caller's clock:
//! `schedlab bench` natively, schedlab-js's `bench` in a browser. The events
//! are the same everywhere (the runs are deterministic); only the time
//! differs.
//!
//! A case is an experiment file kept in `crates/schedlab/bench/` and never
//! changed once published (a new case gets a new name;
//! `tests::published_cases_never_change`), so that two versions of
//! schedlab time the same work: `schedlab bench --against OTHER_BINARY`
//! runs both on each file. Events per second alone cannot compare versions:
//! the engine may need fewer events for the same work.

use crate::error::Concern;
use crate::error::{Error, Result};
use crate::experiment::{self, Experiment};
use crate::presets;
use serde::Serialize;

/// A published case: its name and its experiment file.
#[derive(Debug, Clone, Copy)]
pub struct Case {
    pub name: &'static str,
    pub json: &'static str,
}

/// The standard cases: two ping-pongs and the crowded 40-CPU hackbench,
/// as the presets of the same names were at 2676a8f (round 1's end).
pub const CASES: [Case; 3] = [
    Case {
        name: "retune-pipe-test.v1",
        json: include_str!("../bench/retune-pipe-test.v1.json"),
    },
    Case {
        name: "kvm-pipe-test-pinning.v1",
        json: include_str!("../bench/kvm-pipe-test-pinning.v1.json"),
    },
    Case {
        name: "waweight-hackbench-20.v1",
        json: include_str!("../bench/waweight-hackbench-20.v1.json"),
    },
];

/// A published case's experiment, or else a preset's.
pub fn experiment(name: &str) -> Result<Experiment> {
    match CASES.iter().find(|c| c.name == name) {
        Some(c) => Experiment::from_json(c.json)
            .map_err(|e| Error::invalid(Concern::Experiment, format!("bench case {name}: {e}"))),
        None if presets::names().any(|p| p == name) => presets::get(name),
        None => Err(Error::unknown(
            Concern::Experiment,
            "bench case or preset",
            name,
            CASES.iter().map(|c| c.name).chain(presets::names()),
        )),
    }
}

/// One case's measurement.
#[derive(Debug, Clone, Serialize)]
pub struct BenchLine {
    pub case: String,
    pub events: u64,
    pub wall_ms: f64,
    /// Simulated time measured (each point's run after its warm-up), ms.
    pub sim_ms: f64,
}

impl BenchLine {
    pub fn mevents_per_s(&self) -> f64 {
        self.events as f64 / self.wall_ms.max(f64::MIN_POSITIVE) / 1000.0
    }

    /// Simulated seconds per wall-clock second.
    pub fn sim_per_wall(&self) -> f64 {
        self.sim_ms / self.wall_ms.max(f64::MIN_POSITIVE)
    }
}

/// Runs every point of `case` (a published case or a preset; its first
/// repeat) one after another, timed by `clock_ms` (any monotonic clock in
/// milliseconds).
pub fn run_case(case: &str, clock_ms: &mut dyn FnMut() -> f64) -> Result<BenchLine> {
    let exp = experiment(case)?;
    let points = exp.points()?;
    let start = clock_ms();
    let (mut events, mut sim_ns) = (0, 0);
    // One repeat of each point, so a preset's repeat count does not change
    // the case.
    for p in points.iter().filter(|p| p.repeat == 0) {
        let out = experiment::run_point(p, &mut |_| true)?;
        events += out.events;
        sim_ns += out.cpu_time.total() / p.topology.ncpus().max(1) as u64;
    }
    Ok(BenchLine {
        case: case.to_string(),
        events,
        wall_ms: clock_ms() - start,
        sim_ms: sim_ns as f64 / 1e6,
    })
}

/// The lines as a table.
pub fn table(lines: &[BenchLine]) -> String {
    let mut out = String::from(
        "case                              events   wall ms   Mevents/s   sim s/wall s\n",
    );
    for l in lines {
        out.push_str(&format!(
            "{:<30} {:>10} {:>9.0} {:>11.2} {:>14.3}\n",
            l.case,
            l.events,
            l.wall_ms,
            l.mevents_per_s(),
            l.sim_per_wall()
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
        let line = run_case("kvm-pipe-test-pinning.v1", &mut clock).unwrap();
        assert_eq!(line.wall_ms, 5.0, "one reading before, one after");
        assert!(line.events > 100_000, "{line:?}");
        // 10 loop batches of pipe round trips: milliseconds of simulated time.
        assert!(line.sim_ms > 1.0 && line.sim_per_wall() > 0.0, "{line:?}");
        assert!(table(&[line]).contains("kvm-pipe-test-pinning.v1"));
        let preset = run_case("retune-lat-ctx", &mut clock).unwrap();
        assert!(preset.events > 0);
        let err = run_case("no-such-case", &mut clock)
            .unwrap_err()
            .to_string();
        assert!(err.contains("retune-pipe-test.v1"), "{err}");
    }

    /// FNV-1a of each published case file: a case once published never
    /// changes (a new one gets a new name), or two versions' times would
    /// not compare.
    #[test]
    fn published_cases_never_change() {
        fn fnv1a(text: &str) -> u64 {
            text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
                (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
            })
        }
        let published: [(&str, u64); 3] = [
            ("retune-pipe-test.v1", 0x8851_4384_d90e_7fa2),
            ("kvm-pipe-test-pinning.v1", 0x824e_b5f5_6dff_fa27),
            ("waweight-hackbench-20.v1", 0x1994_5a0e_8da3_0d33),
        ];
        for (case, (name, hash)) in CASES.iter().zip(published) {
            assert_eq!(case.name, name);
            assert_eq!(
                fnv1a(case.json),
                hash,
                "{name} changed: publish a new case instead"
            );
            assert!(experiment(name).is_ok(), "{name} reads as an experiment");
        }
    }
}

//! Messages between the app and its workers, sent as JSON strings (the
//! core's types use serde attributes, tagged enums and defaults, that a
//! binary codec could not carry).

use schedlab::experiment::PointOutcome;
use serde::{Deserialize, Serialize};

/// How often the page draws a run's progress, and so how often a worker
/// says how far its point is: every word is parsed and drawn on the page's
/// thread, which shares the machine's cores with the workers.
pub const DRAW_EVERY_MS: u32 = 250;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Request {
    /// Run point `index` of the experiment (its JSON).
    RunPoint { experiment: String, index: usize },
    /// Run the start of some of the experiment's points for about
    /// `budget_ms` in all, for an estimate of the run ([`schedlab::estimate`]).
    Probe { experiment: String, budget_ms: f64 },
    /// The experiment's benchmark as the custom workload it builds
    /// ([`schedlab::workload::bench::Benchmark::to_custom`]).
    ToCustom { experiment: String },
    /// Import an rt-app file as a custom workload
    /// ([`schedlab::workload::rtapp::import`]).
    ImportRtapp { text: String },
    /// Import a scheduler trace ([`schedlab::recording::import`]), gzipped
    /// or not, from a URL the worker can read (the page's object URL of a
    /// dropped file), recorded on the machine of `experiment` (its JSON):
    /// that machine's switch and wakeup costs come off the recorded runs.
    ImportTrace { url: String, experiment: String },
    /// The decision behind a mark of variant `variant`'s timeline: the
    /// placement of `task`, or the balance that moved it, at `t_ns` (the
    /// trace's time), replayed with decision records
    /// ([`schedlab::decisions::at`]).
    Why {
        experiment: String,
        variant: usize,
        task: usize,
        t_ns: u64,
    },
    /// Where the first two variants part ([`schedlab::decisions::diverge`]).
    Diverge { experiment: String },
}

/// A point's outcome as a worker sends it: with the bits of its floats
/// beside them. serde_json's default parser may read a float back one ulp
/// off (its exact one costs the first-load wasm 9 KB gzipped), and the page
/// must show the CLI's numbers to the last digit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SentOutcome {
    pub outcome: PointOutcome,
    /// `value`, then each of `series`, as `f64::to_bits`.
    pub bits: Vec<u64>,
}

impl From<PointOutcome> for SentOutcome {
    fn from(outcome: PointOutcome) -> Self {
        let bits = std::iter::once(outcome.value)
            .chain(outcome.series.iter().copied())
            .map(f64::to_bits)
            .collect();
        SentOutcome { outcome, bits }
    }
}

impl SentOutcome {
    /// The outcome with its floats exactly as the worker had them.
    pub fn exact(self) -> PointOutcome {
        let mut o = self.outcome;
        if self.bits.len() == o.series.len() + 1 {
            o.value = f64::from_bits(self.bits[0]);
            for (v, &b) in o.series.iter_mut().zip(&self.bits[1..]) {
                *v = f64::from_bits(b);
            }
        }
        o
    }
}

/// A worker's reply. `O` is how the reader takes a point's outcome: the
/// runs module reads a [`SentOutcome`]; the page's editor, which only
/// probes, skips it ([`serde::de::IgnoredAny`]), so the outcome's
/// deserialiser stays out of the first-load wasm.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Response<O = SentOutcome> {
    /// The worker has loaded and listens; sent once, first, with its
    /// [`crate::BUILD_ID`].
    Ready {
        build: String,
    },
    /// Simulated time done in point `index`.
    Progress {
        index: usize,
        now_ns: u64,
        end_ns: Option<u64>,
    },
    Point {
        index: usize,
        outcome: O,
    },
    /// Each point's expected events (and whether it may take more), and
    /// the events per second the probes ran at.
    Probed {
        events: Vec<(f64, bool)>,
        events_per_sec: f64,
    },
    /// An imported workload: the custom workload's JSON, as the
    /// experiment holds it, and a line on what it holds.
    Imported {
        workload: String,
        #[serde(default, skip_serializing_if = "String::is_empty")]
        summary: String,
    },
    /// Bytes of a trace read so far.
    Reading {
        bytes: u64,
    },
    /// A decision tree, as `schedlab why` prints it.
    Why {
        text: String,
    },
    /// `schedlab diverge`'s report, where the runs part (in the traces'
    /// time; none if they never do), and both variants' timelines from a
    /// little before it.
    Diverged {
        text: String,
        at_ns: Option<u64>,
        /// When the workload started, in the traces' time (the report
        /// counts from there).
        origin_ns: u64,
        /// The `Vec<(label, Trace)>` as JSON, read only where it is drawn,
        /// so the first-load wasm carries no trace reader.
        traces: String,
    },
    Failed {
        error: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A float the default parser reads back one ulp off (the page showed
    /// 11.00638565 for the CLI's 11.006385649999999) comes back exact.
    #[test]
    fn a_point_outcome_crosses_the_worker_boundary_exactly() {
        let v = 11.006385649999999_f64;
        // The premise: as plain JSON it does not come back exact.
        let plain: f64 = serde_json::from_str(&serde_json::to_string(&v).unwrap()).unwrap();
        assert_ne!(
            plain.to_bits(),
            v.to_bits(),
            "serde_json now reads floats exactly"
        );
        let outcome = PointOutcome {
            value: v,
            series: vec![v, 0.1 + 0.2, 1.0 / 3.0],
            text: "x".into(),
            counters: Default::default(),
            events: 0,
            wakeup_latency: Default::default(),
            cpu_time: Default::default(),
            trace: Default::default(),
        };
        let sent = SentOutcome::from(outcome.clone());
        let text = serde_json::to_string(&Response::Point {
            index: 0,
            outcome: sent,
        })
        .unwrap();
        let Response::Point { outcome: back, .. } =
            serde_json::from_str::<Response>(&text).unwrap()
        else {
            panic!("not a point");
        };
        assert_eq!(back.exact(), outcome);
    }
}

//! Messages between the app and its workers, sent as JSON strings (the
//! core's types use serde attributes, tagged enums and defaults, that a
//! binary codec could not carry).

use schedlab::experiment::PointOutcome;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Request {
    /// Run point `index` of the experiment (its JSON).
    RunPoint { experiment: String, index: usize },
    /// Run the start of some of the experiment's points for about
    /// `budget_ms` in all, for an estimate of the run ([`schedlab::estimate`]).
    Probe { experiment: String, budget_ms: f64 },
}

/// A worker's reply. `O` is how the reader takes a point's outcome: the
/// runs module reads a [`PointOutcome`]; the page's editor, which only
/// probes, skips it ([`serde::de::IgnoredAny`]), so the outcome's
/// deserialiser stays out of the first-load wasm.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Response<O = PointOutcome> {
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
    Failed {
        error: String,
    },
}

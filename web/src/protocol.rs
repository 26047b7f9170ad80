//! Messages between the app and its workers, sent as JSON strings (the
//! core's types use serde attributes, tagged enums and defaults, that a
//! binary codec could not carry).

use schedlab::experiment::PointOutcome;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Request {
    /// Run point `index` of the experiment (its JSON).
    RunPoint { experiment: String, index: usize },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Response {
    /// The worker has loaded and listens; sent once, first.
    Ready,
    /// Simulated time done in point `index`.
    Progress {
        index: usize,
        now_ns: u64,
        end_ns: Option<u64>,
    },
    Point {
        index: usize,
        outcome: PointOutcome,
    },
    Failed {
        error: String,
    },
}

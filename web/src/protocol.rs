//! Messages between the app and its workers, and their JSON codec.
//!
//! JSON rather than gloo-worker's default bincode, because the core's types
//! use serde attributes (tagged enums, defaults) that bincode cannot carry.

use gloo_worker::Codec;
use schedlab::experiment::PointOutcome;
use serde::{Deserialize, Serialize};
use wasm_bindgen::JsValue;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Request {
    /// Describe a preset machine and the domains an era builds on it.
    Describe { machine: String, era: String },
    /// Run point `index` of the experiment (its JSON).
    RunPoint { experiment: String, index: usize },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Response {
    Described {
        summary: String,
        levels: Vec<String>,
    },
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

/// Encodes worker messages as JSON strings.
#[derive(Debug)]
pub struct Json;

impl Codec for Json {
    fn encode<I: Serialize>(input: I) -> JsValue {
        // Our own message types always serialise; a failure is a programming error.
        JsValue::from_str(&serde_json::to_string(&input).expect("worker message serialises"))
    }

    fn decode<O: for<'de> Deserialize<'de>>(input: JsValue) -> O {
        let text = input.as_string().unwrap_or_default();
        serde_json::from_str(&text).expect("worker message is JSON of the protocol")
    }
}

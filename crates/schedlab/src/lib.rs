//! schedlab's simulator core.
//!
//! Pure Rust with no web or OS dependency, so the same code runs natively (the
//! `schedlab` CLI) and in the browser (compiled to wasm32). Everything here is
//! deterministic: integer time, integer scheduler arithmetic, ordered maps.
//!
//! Module map, by layer (a module uses its own layer and those below;
//! `tests/layers.rs` enforces it; docs/ARCHITECTURE.md has the invariants):
//! - model: [`limits`], [`sorted_map`], [`cpuset`], [`topology`] (machines, presets,
//!   `lscpu -p` import), [`calibration`], [`policy`] (eras and their
//!   [`policy::EraRules`], SD flags, features, tunables), [`domains`],
//!   [`knobs`], [`counters`] (counters and trace reasons as types), [`seed`],
//!   [`workload::program`] (the task language).
//! - scheduler: [`sched`] (run queues, PELT, wakeup placement, balancing),
//!   acting on the machine only through [`sched::SchedEnv`].
//! - engine: [`engine`] (the discrete-event simulation), [`cost`].
//! - workloads: [`workload::bench`].
//! - experiments: [`experiment`], [`presets`], [`estimate`].
//! - outputs: [`codec`], [`report`], [`explain`], [`trace_export`], [`fidelity`].

pub mod arith;
pub mod bench;
pub mod calibration;
pub mod codec;
pub mod cost;
pub mod counters;
pub mod cpuset;
pub mod decisions;
pub mod domains;
pub mod engine;
pub mod error;
pub mod estimate;
pub mod experiment;
pub mod explain;
pub mod fidelity;
pub mod json_path;
pub mod knobs;
pub mod limits;
pub mod policy;
pub mod presets;
pub mod recording;
pub mod report;
pub mod sched;
pub mod seed;
pub mod sorted_map;
pub mod topology;
pub mod trace_export;
pub mod why_report;
pub mod workload;

pub use error::{Error, Result};

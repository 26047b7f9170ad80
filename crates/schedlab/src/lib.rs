//! schedlab's simulator core.
//!
//! Pure Rust with no web or OS dependency, so the same code runs natively (the
//! `schedlab` CLI) and in the browser (compiled to wasm32). Everything here is
//! deterministic: integer time, integer scheduler arithmetic, ordered maps.
//!
//! Module map (see docs/ARCHITECTURE.md for the invariants):
//! - [`limits`]: the one table of size limits every input is checked against.
//! - [`cpuset`]: a fixed-size CPU bitmask.
//! - [`topology`]: machines (nodes, packages, LLCs, cores, threads, costs),
//!   presets and `lscpu -p` import; [`calibration`]: how a measured
//!   machine's costs were obtained.
//! - [`policy`]: kernel policy as data: eras, SD flags, features, tunables.
//! - [`domains`]: the sched-domain hierarchy a policy builds on a machine.
//! - [`knobs`]: every knob of a policy on a machine, with its era default.
//! - [`cfs`]: per-CPU CFS run queues; [`load`]: PELT and cpu_load[].
//! - [`cost`]: the hardware cost model.
//! - [`workload`]: the task-behaviour language.
//! - [`engine`]: the discrete-event simulation that runs it all.
//! - [`explain`]: sentences on the largest difference between variants.
//! - [`trace_export`]: a run's traced window as Chrome trace-event JSON.

pub mod calibration;
pub mod codec;
pub mod cost;
pub mod counters;
pub mod cpuset;
pub mod domains;
pub mod engine;
pub mod error;
pub mod experiment;
pub mod explain;
pub mod fidelity;
pub mod knobs;
pub mod limits;
pub mod policy;
pub mod presets;
pub mod report;
pub mod sched;
pub mod seed;
pub mod topology;
pub mod trace_export;
pub mod workload;

pub use error::{Error, Result};

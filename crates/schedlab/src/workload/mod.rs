//! Workloads: the task-behaviour language ([`program`]) that the engine
//! runs, and generators shaped like the real benchmarks ([`bench`]).
//! Nothing below the workload layer knows which benchmark it runs.

pub mod bench;
pub mod program;
pub mod rtapp;

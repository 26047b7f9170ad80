//! Workloads: the task-behaviour language ([`program`]) that the engine runs.
//! Benchmark generators build programs in it; nothing below the workload
//! layer knows which benchmark it runs.

pub mod program;

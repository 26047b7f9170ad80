//! The editing panels: each reads the editor and dispatches edits.

pub mod kernel;
pub mod machine;
pub mod workload;

//! The schedlab playground: a Yew app (`bin/app.rs`) that never simulates on
//! the main thread, and a Web Worker (`bin/worker.rs`) that runs the core.

pub mod app;
pub mod protocol;
pub mod worker;

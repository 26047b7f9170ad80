//! The schedlab playground: a Yew app (`bin/app.rs`) that never simulates on
//! the main thread, and a Web Worker (`bin/worker.rs`) that runs the core.
//!
//! - [`state`]: the experiment being edited and every edit to it.
//! - [`run`]: a run's progress and results; [`pool`]: the Web Workers.
//! - [`panels`], [`results`], [`fields`]: what the page shows.
//! - [`link`]: the URL fragment, localStorage, embed links.
//! - [`worker`], [`protocol`]: the worker side and its messages.

pub mod app;
pub mod fields;
pub mod link;
pub mod panels;
pub mod pool;
pub mod protocol;
pub mod results;
pub mod run;
pub mod state;
pub mod worker;

//! The schedlab playground: a Yew app (`bin/app.rs`, the editor: all the
//! page needs before the first Run) that never simulates on the main
//! thread, the runs module (`bin/runs.rs`, a second wasm fetched by the
//! first Run: the run, its workers and the results view), and a Web Worker
//! (`bin/worker.rs`) that runs the core.
//!
//! - [`app`]: the root component, and its hooks for the link and history,
//!   the run and its workers, and the keyboard shortcuts.
//! - [`state`]: the experiment being edited, every edit to it, and the
//!   fields (typed) their errors are shown at.
//! - [`runs`]: the runs module's root; [`bridge`]: the messages between
//!   it and the editor.
//! - [`run`]: a run's progress and results; [`pool`]: the Web Workers.
//! - [`panels`], [`results`], [`charts`], [`timeline`], [`drawing`],
//!   [`fields`]: what the page shows; [`export`]: downloads and the
//!   clipboard.
//! - [`gallery`], [`help`]: the presets at a click; theme and the `?` help.
//! - [`link`]: the URL fragment, localStorage, embed links.
//! - [`worker`], [`protocol`]: the worker side and its messages.
//! - [`panic`]: what a panic leaves (a console line, a banner).

/// This build's id (a hash of its sources, `build.rs`): the app and its
/// workers compare theirs when a worker starts.
pub const BUILD_ID: &str = env!("SCHEDLAB_BUILD_ID");

pub mod app;
pub mod bridge;
pub mod charts;
pub mod drawing;
pub mod export;
pub mod fields;
pub mod gallery;
pub mod help;
pub mod history;
pub mod json;
pub mod latency_cdf;
pub mod link;
pub mod panels;
pub mod panic;
pub mod pool;
pub mod protocol;
pub mod results;
pub mod run;
pub mod runs;
pub mod state;
pub mod timeline;
pub mod why;
pub mod worker;

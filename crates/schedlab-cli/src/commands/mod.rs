//! One module per `schedlab` command: its arguments (clap's derive) and
//! what it does, which returns the text to print or a one-line error.

pub mod bench;
pub mod calibrate;
pub mod decode;
pub mod domains;
pub mod encode;
pub mod fidelity;
pub mod import;
pub mod limits;
pub mod machines;
pub mod merge;
pub mod presets;
pub mod run;
pub mod show;
pub mod trace;
pub mod validate;
pub mod why;

/// How `domains` and `validate` print.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum DumpFormat {
    Text,
    Json,
}

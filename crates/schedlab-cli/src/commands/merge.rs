//! `schedlab merge`: the part files of a sharded run, assembled into the
//! results an unsharded run prints.

use crate::failure::Failure;
use crate::run::{self, RunFormat};
use crate::shard;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The part files.
    #[arg(required = true)]
    parts: Vec<String>,
    #[arg(long, value_enum, default_value = "table")]
    format: RunFormat,
    /// Also print a sentence on the largest difference between the variants.
    #[arg(long)]
    explain: bool,
    /// Write each variant's traced window as Chrome trace-event JSON (Perfetto).
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
}

pub fn command(args: Args) -> Result<String, Failure> {
    let (exp, outcomes) = shard::merge(&args.parts)?;
    let points = exp.points()?;
    Ok(run::output(
        &exp,
        &run::ran(&exp, &points, &outcomes),
        args.format,
        args.explain,
        args.trace,
    )?)
}

//! `schedlab show`: a preset's experiment JSON.

use crate::failure::Failure;
use schedlab::presets;

#[derive(clap::Args)]
pub struct Args {
    name: String,
}

pub fn command(args: Args) -> Result<String, Failure> {
    Ok(presets::get(&args.name)?.to_json() + "\n")
}

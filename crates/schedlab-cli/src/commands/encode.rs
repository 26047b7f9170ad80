//! `schedlab encode`: an experiment as a link-safe string.

use crate::failure::Failure;
use crate::run;

#[derive(clap::Args)]
pub struct Args {
    experiment: String,
}

pub fn command(args: Args) -> Result<String, Failure> {
    Ok(schedlab::codec::encode(&run::load(&args.experiment)?) + "\n")
}

//! `schedlab encode`: an experiment as a link-safe string.

use crate::run;

#[derive(clap::Args)]
pub struct Args {
    experiment: String,
}

pub fn command(args: Args) -> Result<String, String> {
    Ok(schedlab::codec::encode(&run::load(&args.experiment)?) + "\n")
}

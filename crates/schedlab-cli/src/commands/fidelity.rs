//! `schedlab fidelity`: the core's table of published figures beside the
//! simulated ones, the presets run in parallel.

use crate::failure::Failure;
use crate::run;
use schedlab::fidelity;

#[derive(clap::Args)]
pub struct Args {
    /// Points run in parallel (default: all cores).
    #[arg(long)]
    jobs: Option<usize>,
}

pub fn command(args: Args) -> Result<String, Failure> {
    Ok(fidelity::table(&mut |exp| {
        Ok(run::run(exp, args.jobs)?.results)
    })?)
}

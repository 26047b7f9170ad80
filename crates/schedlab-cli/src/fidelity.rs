//! `schedlab fidelity`: the core's table of published figures beside the
//! simulated ones, the presets run in parallel.

use crate::run;
use schedlab::fidelity;

pub fn run(jobs: Option<usize>) -> Result<String, String> {
    fidelity::table(&mut |exp| Ok(run::run(exp, jobs)?.results))
}

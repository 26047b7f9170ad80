//! `schedlab fidelity`: the core's table of published figures beside the
//! simulated ones, the presets run in parallel.

use crate::run;
use schedlab::{fidelity, presets};

pub fn run(jobs: Option<usize>) -> Result<String, String> {
    fidelity::table(&mut |preset| {
        let exp = presets::get(preset).map_err(|e| e.to_string())?;
        Ok(run::run(&exp, jobs)?.results)
    })
}

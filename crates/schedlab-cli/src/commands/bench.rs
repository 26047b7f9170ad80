//! `schedlab bench`: the engine's speed on standard cases, in simulated
//! scheduling events per wall-clock second (`schedlab::bench`).

use schedlab::bench::{self, BenchLine, CASES};
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// Presets to time instead of the standard cases (one repeat of
    /// each point, one after another).
    cases: Vec<String>,
}

/// Times the cases named, or the standard ones if none are.
pub fn command(args: Args) -> Result<String, String> {
    let cases = &args.cases;
    let origin = Instant::now();
    let mut clock = || origin.elapsed().as_secs_f64() * 1000.0;
    let standard: Vec<String> = CASES.iter().map(|c| c.to_string()).collect();
    let cases = if cases.is_empty() { &standard } else { cases };
    let lines = cases
        .iter()
        .map(|case| bench::run_case(case, &mut clock).map_err(|e| e.to_string()))
        .collect::<Result<Vec<BenchLine>, String>>()?;
    Ok(bench::table(&lines))
}

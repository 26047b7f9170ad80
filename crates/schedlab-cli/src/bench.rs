//! `schedlab bench`: the engine's speed on standard cases, in simulated
//! scheduling events per wall-clock second (`schedlab::bench`).

use schedlab::bench::{self, BenchLine, CASES};
use std::time::Instant;

/// Times `cases`, or the standard ones if none are named.
pub fn run(cases: &[String]) -> Result<String, String> {
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

//! `schedlab bench`: the engine's speed on standard cases, in simulated
//! scheduling events per wall-clock second (`schedlab::bench`).

use schedlab::bench::{self, BenchLine, CASES};
use std::time::Instant;

pub fn run() -> Result<String, String> {
    let origin = Instant::now();
    let mut clock = || origin.elapsed().as_secs_f64() * 1000.0;
    let lines = CASES
        .iter()
        .map(|case| bench::run_case(case, &mut clock).map_err(|e| e.to_string()))
        .collect::<Result<Vec<BenchLine>, String>>()?;
    Ok(bench::table(&lines))
}

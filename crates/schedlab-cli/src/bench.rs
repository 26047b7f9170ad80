//! `schedlab bench`: the engine's speed on standard cases, in simulated
//! scheduling events per wall-clock second.

use schedlab::experiment::{self, Experiment};
use schedlab::presets;
use std::time::Instant;

pub fn run() -> Result<String, String> {
    let mut out = String::from("case                              events   wall ms   Mevents/s\n");
    for name in [
        "retune-pipe-test",
        "kvm-pipe-test-pinning",
        "waweight-hackbench-20",
    ] {
        let exp: Experiment = presets::get(name).map_err(|e| e.to_string())?;
        let points = exp.points().map_err(|e| e.to_string())?;
        let start = Instant::now();
        let mut events = 0;
        for p in &points {
            events += experiment::run_point(p, &mut |_| true)
                .map_err(|e| e.to_string())?
                .events;
        }
        let ms = start.elapsed().as_secs_f64() * 1000.0;
        out.push_str(&format!(
            "{name:<30} {events:>10} {ms:>9.0} {:>11.2}\n",
            events as f64 / ms / 1000.0
        ));
    }
    Ok(out)
}

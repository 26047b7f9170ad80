//! `schedlab validate`: the real scheduler benchmarks installed here beside
//! the same workloads simulated on a calibrated machine.

use super::DumpFormat;
use crate::failure::Failure;
use crate::validate;

#[derive(clap::Args)]
pub struct Args {
    /// A machine JSON from `schedlab calibrate` (default: calibrate now).
    machine: Option<String>,
    /// Runs of each real benchmark.
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Round trips of perf bench sched pipe (-l).
    #[arg(long, default_value_t = 50_000)]
    pipe_loops: u64,
    /// Messages per sender and receiver of hackbench and messaging (-l).
    #[arg(long, default_value_t = 100)]
    loops: u64,
    /// Group counts of hackbench (-g); the middle one also for the
    /// pipes, threads and messaging runs.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4")]
    groups: Vec<u64>,
    /// Simulate this era instead of the one nearest the running kernel.
    #[arg(long)]
    era: Option<String>,
    /// When calibrating now, use short probes.
    #[arg(long)]
    quick: bool,
    #[arg(long, value_enum, default_value = "text")]
    format: DumpFormat,
    /// Simulations run in parallel (default: all cores).
    #[arg(long)]
    jobs: Option<usize>,
}

pub fn command(args: Args) -> Result<String, Failure> {
    Ok(validate::run(&validate::Options {
        machine: args.machine,
        runs: args.runs,
        pipe_loops: args.pipe_loops,
        loops: args.loops,
        groups: args.groups,
        era: args.era,
        quick: args.quick,
        json: matches!(args.format, DumpFormat::Json),
        jobs: args.jobs,
    })?)
}

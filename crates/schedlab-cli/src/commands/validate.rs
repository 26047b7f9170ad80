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
    /// Seconds of each real tbench run (-t); the simulation runs 300 ms
    /// after 50 ms of warm-up.
    #[arg(long, default_value_t = 5)]
    tbench_secs: u64,
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
    /// Also keep what was found as a record (JSON: the kernel, the machine
    /// whole, every row), for docs/validate/ and the book.
    #[arg(long, value_name = "FILE")]
    record: Option<String>,
    /// Leave the tools' child exits out: neither measured (perf sched
    /// record of each tool at one group and one loop) nor simulated.
    #[arg(long)]
    no_exits: bool,
    /// Count every real run whatever the host's placement of the CPUs. By
    /// default, where the calibration surveyed one (a virtual machine whose
    /// host moves its vCPUs), a run that began or ended in another
    /// placement runs again (up to 3x --runs tries) and stays out of the
    /// median; the table lists both kinds.
    #[arg(long)]
    any_placement: bool,
    /// Run nothing: print the table of records kept with --record.
    #[arg(long, value_name = "RECORD", num_args = 1.., conflicts_with_all = ["machine", "record"])]
    show: Vec<String>,
}

pub fn command(args: Args) -> Result<String, Failure> {
    if !args.show.is_empty() {
        return show(&args.show);
    }
    Ok(validate::run(&validate::Options {
        machine: args.machine,
        runs: args.runs,
        pipe_loops: args.pipe_loops,
        loops: args.loops,
        tbench_secs: args.tbench_secs,
        groups: args.groups,
        era: args.era,
        quick: args.quick,
        json: matches!(args.format, DumpFormat::Json),
        jobs: args.jobs,
        record: args.record,
        exits: !args.no_exits,
        any_placement: args.any_placement,
    })?)
}

/// Each record's table, under its file's name.
fn show(paths: &[String]) -> Result<String, Failure> {
    let mut out = String::new();
    for path in paths {
        let text =
            std::fs::read_to_string(path).map_err(|e| Failure::from(format!("{path}: {e}")))?;
        let report = validate::Report::from_json(&text)
            .map_err(|e| Failure::from(format!("{path}: {e}")))?;
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&report.text());
    }
    Ok(out)
}

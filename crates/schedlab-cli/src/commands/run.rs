//! `schedlab run`: a preset, a playground link or an experiment file, with
//! its points in parallel (or one shard of them, or an estimate only).

use crate::failure::Failure;
use crate::run::{self, RunFormat};
use crate::shard;
use std::io::IsTerminal;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// A preset name, a playground link (or its `#x=...` fragment), or a
    /// path to an experiment JSON file.
    experiment: String,
    #[arg(long, value_enum, default_value = "table")]
    format: RunFormat,
    /// Override the experiment's seed.
    #[arg(long)]
    seed: Option<u64>,
    /// Override the experiment's repeat count.
    #[arg(long)]
    repeats: Option<u32>,
    /// Points run in parallel (default: all cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Also print a sentence on the largest difference between the variants.
    #[arg(long)]
    explain: bool,
    /// Write each variant's traced window as Chrome trace-event JSON (Perfetto).
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Run only shard I of N (every N-th point, from point I-1) and print
    /// a part file (JSON) for `schedlab merge` instead of results.
    #[arg(long, value_name = "I/N", conflicts_with_all = ["format", "explain", "trace"])]
    shard: Option<String>,
    /// Only say about how long the run would take (from running the
    /// start of a few of its points for about a second), and stop.
    #[arg(long, conflicts_with_all = ["format", "explain", "trace"])]
    estimate: bool,
}

pub fn command(args: Args) -> Result<String, Failure> {
    let mut exp = run::load(&args.experiment)?;
    if let Some(s) = args.seed {
        exp.seed = s;
    }
    if let Some(r) = args.repeats {
        exp.repeats = r;
        exp.validate()?;
    }
    let shard: Option<shard::Shard> = args.shard.map(|s| s.parse()).transpose()?;
    let points = exp.points()?;
    let mine: Vec<usize> = match shard {
        Some(s) => s.indices(points.len()),
        None => (0..points.len()).collect(),
    };
    let mut weights = None;
    if args.estimate || std::io::stderr().is_terminal() {
        // A terminal gets a quick one before the run; --estimate a longer look.
        let budget = if args.estimate { 1.0 } else { 0.25 };
        let (est, secs, rate) = run::estimate(&points, &mine, args.jobs, budget)?;
        let line = run::estimate_line(mine.len(), args.jobs, &est, rate);
        if args.estimate {
            return Ok(line + "\n");
        }
        eprintln!("schedlab: {line}");
        weights = Some(secs);
    }
    let outcomes = run::run_points(&points, &mine, args.jobs, weights.as_deref())?;
    if let Some(shard) = shard {
        let mine: Vec<_> = mine.into_iter().zip(outcomes).collect();
        return Ok(shard::write_part(&exp, shard, points.len(), &mine)?);
    }
    Ok(run::output(
        &exp,
        &run::ran(&exp, &points, &outcomes),
        args.format,
        args.explain,
        args.trace,
    )?)
}

//! `schedlab run`: load an experiment, run its points in parallel (rayon,
//! results in a fixed order whatever the scheduling), format the results.

use crate::RunFormat;
use rayon::prelude::*;
use schedlab::experiment::{self, Experiment, Point, PointOutcome, Results, Trace};
use schedlab::{codec, presets, report};
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A preset name, a playground link (or its fragment), or an experiment JSON file.
pub fn load(arg: &str) -> Result<Experiment, String> {
    if presets::names().any(|n| n == arg) {
        return presets::get(arg).map_err(|e| e.to_string());
    }
    let fragment = arg.rsplit_once('#').map(|(_, f)| f);
    if let Some(f) =
        fragment.or_else(|| (arg.starts_with("x=") || arg.starts_with("preset=")).then_some(arg))
    {
        return codec::parse_fragment(f)
            .map(|l| l.experiment)
            .map_err(|e| format!("the link: {e}"));
    }
    if !std::path::Path::new(arg).exists() {
        return Err(presets::get(arg)
            .map_err(|e| format!("{e} (or give a path to an experiment JSON file)"))
            .unwrap_err());
    }
    let text = std::fs::read_to_string(arg).map_err(|e| format!("{arg}: {e}"))?;
    Experiment::from_json(&text).map_err(|e| format!("{arg}: {e}"))
}

/// The results, and each variant's traced window at the first sweep value.
pub struct Ran {
    pub results: Results,
    pub traces: Vec<(String, Trace)>,
}

pub fn run(exp: &Experiment, jobs: Option<usize>) -> Result<Ran, String> {
    let points = exp.points().map_err(|e| e.to_string())?;
    let all: Vec<usize> = (0..points.len()).collect();
    let outcomes = run_points(&points, &all, jobs)?;
    Ok(ran(exp, &points, &outcomes))
}

/// Results and traces from every point's outcome (in point order).
pub fn ran(exp: &Experiment, points: &[Point], outcomes: &[PointOutcome]) -> Ran {
    Ran {
        results: experiment::assemble(exp, points, outcomes),
        traces: experiment::first_traces(exp, points, outcomes),
    }
}

/// Runs the points at `indices` in parallel; outcomes in the order of `indices`.
pub fn run_points(
    points: &[Point],
    indices: &[usize],
    jobs: Option<usize>,
) -> Result<Vec<PointOutcome>, String> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.unwrap_or(0))
        .build()
        .map_err(|e| format!("--jobs: {e}"))?;
    let done = AtomicUsize::new(0);
    let show = std::io::stderr().is_terminal();
    let total = indices.len();
    let outcomes: Result<Vec<_>, String> = pool.install(|| {
        indices
            .par_iter()
            .map(|&i| {
                let o = experiment::run_point(&points[i], &mut |_| true).map_err(|e| e.to_string());
                let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                if show {
                    let mut err = std::io::stderr();
                    let _ = write!(err, "\r[{n}/{total}] points run");
                    let _ = err.flush();
                }
                o
            })
            .collect()
    });
    if show {
        eprintln!();
    }
    outcomes
}

pub fn format(exp: &Experiment, r: &Results, format: RunFormat) -> String {
    let param = exp.sweep.as_ref().map(|s| s.param.as_str());
    match format {
        RunFormat::Text => report::text(r, param),
        RunFormat::Table => report::table(r, param, exp.sum_row),
        RunFormat::Csv => report::csv(r),
        RunFormat::Json => r.to_json() + "\n",
    }
}

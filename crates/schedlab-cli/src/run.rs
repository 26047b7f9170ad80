//! `schedlab run`: load an experiment, run its points in parallel (rayon,
//! results in a fixed order whatever the scheduling), format the results.

use crate::failure::Failure;
use rayon::prelude::*;
use schedlab::estimate;
use schedlab::experiment::{self, Experiment, Point, PointOutcome, Results, Trace};
use schedlab::{codec, presets, report};
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// How `run` and `merge` print.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum RunFormat {
    /// The tools' own output.
    Text,
    /// The commit-style A/B table.
    Table,
    Csv,
    Json,
}

/// A preset name, a playground link (or its fragment), or an experiment JSON file.
pub fn load(arg: &str) -> Result<Experiment, Failure> {
    if presets::names().any(|n| n == arg) {
        return Ok(presets::get(arg)?);
    }
    let fragment = arg.rsplit_once('#').map(|(_, f)| f);
    if let Some(f) =
        fragment.or_else(|| (arg.starts_with("x=") || arg.starts_with("preset=")).then_some(arg))
    {
        return codec::parse_fragment(f)
            .map(|l| l.experiment)
            .map_err(|e| Failure::from(e).context("the link"));
    }
    if !std::path::Path::new(arg).exists() {
        return Err(presets::get(arg)
            .map_err(|e| Failure::from(e).hint("(or give a path to an experiment JSON file)"))
            .unwrap_err());
    }
    let text = std::fs::read_to_string(arg).map_err(|e| format!("{arg}: {e}"))?;
    Experiment::from_json(&text).map_err(|e| Failure::from(e).context(arg))
}

/// The results, and each variant's traced window at the first sweep value.
pub struct Ran {
    pub results: Results,
    pub traces: Vec<(String, Trace)>,
}

pub fn run(exp: &Experiment, jobs: Option<usize>) -> Result<Ran, String> {
    let points = exp.points().map_err(|e| e.to_string())?;
    let all: Vec<usize> = (0..points.len()).collect();
    let outcomes = run_points(&points, &all, jobs, None)?;
    Ok(ran(exp, &points, &outcomes))
}

/// Results and traces from every point's outcome (in point order).
pub fn ran(exp: &Experiment, points: &[Point], outcomes: &[PointOutcome]) -> Ran {
    Ran {
        results: experiment::assemble(exp, points, outcomes),
        traces: experiment::first_traces(exp, points, outcomes),
    }
}

/// Runs the points at `indices` in parallel; outcomes in the order of
/// `indices`. On a terminal, a progress line with the time left, the points
/// weighted by their estimated seconds if given (else equally).
pub fn run_points(
    points: &[Point],
    indices: &[usize],
    jobs: Option<usize>,
    weights: Option<&[f64]>,
) -> Result<Vec<PointOutcome>, String> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.unwrap_or(0))
        .build()
        .map_err(|e| format!("--jobs: {e}"))?;
    let done = AtomicUsize::new(0);
    let show = std::io::stderr().is_terminal();
    let total = indices.len();
    // Each point's fraction done (f64 bits), for the time left.
    let partial: Vec<AtomicU64> = indices.iter().map(|_| AtomicU64::new(0)).collect();
    let start = Instant::now();
    let last_shown = Mutex::new(Instant::now());
    let report = |force: bool| {
        let mut last = last_shown.lock().unwrap_or_else(|e| e.into_inner());
        if !force && last.elapsed().as_millis() < 200 {
            return;
        }
        *last = Instant::now();
        let n = done.load(Ordering::Relaxed);
        let weight = |k: usize| weights.map_or(1.0, |w| w[k]);
        let whole: f64 = (0..total).map(weight).sum();
        let fraction = partial
            .iter()
            .enumerate()
            .map(|(k, p)| weight(k) * f64::from_bits(p.load(Ordering::Relaxed)))
            .sum::<f64>()
            / whole.max(f64::MIN_POSITIVE);
        let left = estimate::time_left(start.elapsed().as_secs_f64(), fraction)
            .filter(|_| n < total)
            .map(|s| format!(", {} left", estimate::about(s)))
            .unwrap_or_default();
        let mut err = std::io::stderr();
        let _ = write!(err, "\r[{n}/{total}] points run{left}\x1b[K");
        let _ = err.flush();
    };
    let outcomes: Result<Vec<_>, String> = pool.install(|| {
        indices
            .par_iter()
            .enumerate()
            .map(|(k, &i)| {
                let o = experiment::run_point(&points[i], &mut |p| {
                    if let (true, Some(end)) = (show, p.end_ns.filter(|e| *e > 0)) {
                        let f = (p.now_ns as f64 / end as f64).min(1.0);
                        partial[k].store(f.to_bits(), Ordering::Relaxed);
                        report(false);
                    }
                    true
                })
                .map_err(|e| e.to_string());
                partial[k].store(1f64.to_bits(), Ordering::Relaxed);
                done.fetch_add(1, Ordering::Relaxed);
                if show {
                    report(true);
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

/// A run's estimate from a quick measurement: the start of some of its
/// points (one per sweep value and variant, at most 12) run on this thread
/// for `budget_secs` in all; each point's events at its probe's own rate
/// (small machines and few tasks simulate faster). The estimate is for the
/// points at `indices`, with each one's seconds; the rate returned is over
/// all probes.
pub fn estimate(
    points: &[Point],
    indices: &[usize],
    jobs: Option<usize>,
    budget_secs: f64,
) -> Result<(estimate::Estimate, Vec<f64>, f64), String> {
    let probes = estimate::probe_indices(points, 12);
    let each = budget_secs / probes.len().max(1) as f64;
    let mut probed = Vec::with_capacity(probes.len());
    let mut rates = Vec::with_capacity(probes.len());
    let (mut events, mut wall) = (0u64, 0f64);
    for i in probes {
        let start = Instant::now();
        let p = estimate::probe(&points[i], &mut || start.elapsed().as_secs_f64() < each)
            .map_err(|e| e.to_string())?;
        let secs = start.elapsed().as_secs_f64().max(1e-6);
        wall += secs;
        events += p.events;
        rates.push(p.events as f64 / secs);
        probed.push((i, p));
    }
    // Each point as its nearest probe, at that probe's own rate.
    let nearest = estimate::nearest_probe(points, &probed.iter().map(|p| p.0).collect::<Vec<_>>());
    let secs: Vec<(f64, bool)> = indices
        .iter()
        .map(|&i| match nearest[i] {
            Some(k) => probed[k].1.point_events().at(rates[k]),
            None => (0.0, true),
        })
        .collect();
    let threads = jobs.unwrap_or_else(rayon::current_num_threads).max(1);
    Ok((
        estimate::estimate(&secs, threads),
        secs.iter().map(|s| s.0).collect(),
        events as f64 / wall,
    ))
}

/// The estimate in a sentence.
pub fn estimate_line(
    points: usize,
    jobs: Option<usize>,
    est: &estimate::Estimate,
    rate: f64,
) -> String {
    let threads = jobs
        .unwrap_or_else(rayon::current_num_threads)
        .clamp(1, points.max(1));
    format!(
        "{} for {points} point{} on {threads} thread{} (measured on the start of the run: {:.1} M events/s per thread)",
        est.words(),
        if points == 1 { "" } else { "s" },
        if threads == 1 { "" } else { "s" },
        rate / 1e6
    )
}

/// What `run` and `merge` print (and the trace they write).
pub fn output(
    exp: &schedlab::experiment::Experiment,
    ran: &Ran,
    format: RunFormat,
    explain: bool,
    trace: Option<std::path::PathBuf>,
) -> Result<String, String> {
    if let Some(file) = trace {
        let runs: Vec<(&str, &_)> = ran.traces.iter().map(|(l, t)| (l.as_str(), t)).collect();
        let doc = schedlab::trace_export::chrome_trace(&runs);
        std::fs::write(&file, doc.to_string()).map_err(|e| format!("{}: {e}", file.display()))?;
    }
    let mut out = self::format(exp, &ran.results, format);
    if explain {
        out.push_str(&schedlab::explain::explain(&ran.results));
        out.push('\n');
    }
    Ok(out)
}

//! `schedlab bench`: the engine's speed on the published cases
//! (`schedlab::bench`): wall time, simulated time per wall second and
//! scheduling events per second; or, with `--against`, this binary and
//! another timed on the same experiment files, alternately, with the
//! ratio pair by pair.

use crate::failure::Failure;
use schedlab::bench::{self, BenchLine, CASES};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// Cases to time instead of the published ones: case names
    /// (`retune-pipe-test.v1`) or presets (one repeat of each point, one
    /// after another).
    cases: Vec<String>,
    /// Another schedlab binary (an older build, say) to time against this
    /// one: both run each case's experiment file with `run --jobs 1
    /// --repeats 1`, alternately, in fresh processes.
    #[arg(long, value_name = "BINARY")]
    against: Option<PathBuf>,
    /// Pairs of runs per case with --against.
    #[arg(long, default_value_t = 5, requires = "against")]
    pairs: usize,
}

/// Times the cases named, or the published ones if none are.
pub fn command(args: Args) -> Result<String, Failure> {
    let cases: Vec<String> = if args.cases.is_empty() {
        CASES.iter().map(|c| c.name.to_string()).collect()
    } else {
        args.cases.clone()
    };
    match &args.against {
        Some(other) => against(&cases, other, args.pairs),
        None => {
            let origin = Instant::now();
            let mut clock = || origin.elapsed().as_secs_f64() * 1000.0;
            let lines = cases
                .iter()
                .map(|case| bench::run_case(case, &mut clock))
                .collect::<Result<Vec<BenchLine>, _>>()?;
            Ok(bench::table(&lines))
        }
    }
}

/// One run of `binary` on experiment file `file`: its wall time in seconds
/// and what it printed.
fn time_run(binary: &Path, file: &Path) -> Result<(f64, Vec<u8>), String> {
    let start = Instant::now();
    let out = Command::new(binary)
        .arg("run")
        .arg(file)
        .args(["--jobs", "1", "--repeats", "1", "--format", "json"])
        .output()
        .map_err(|e| format!("{}: {e}", binary.display()))?;
    let secs = start.elapsed().as_secs_f64();
    if !out.status.success() {
        return Err(format!(
            "{} run {}: {}",
            binary.display(),
            file.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok((secs, out.stdout))
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// This binary (A) and `other` (B), alternately (A B A B ...), on each
/// case's experiment file: medians and the A/B ratio taken pair by pair,
/// so a machine whose speed drifts still compares them fairly.
fn against(cases: &[String], other: &Path, pairs: usize) -> Result<String, Failure> {
    if pairs == 0 {
        return Err("--pairs must be at least 1".into());
    }
    let this = std::env::current_exe().map_err(|e| format!("this binary: {e}"))?;
    // Removed when it drops, on an error too.
    let scratch = tempfile::Builder::new()
        .prefix("schedlab-bench-")
        .tempdir()
        .map_err(|e| format!("a directory for the cases' files: {e}"))?;
    let dir = scratch.path();
    let mut out = format!(
        "A = {}\nB = {}\n{pairs} pairs per case, A B A B ...; wall seconds per run (medians), A/B pair by pair\n\n\
         case                            A s       B s    A/B median  (min..max)   same results\n",
        this.display(),
        other.display()
    );
    for case in cases {
        let exp = bench::experiment(case)?;
        let file = dir.join(format!("{case}.json"));
        std::fs::write(&file, exp.to_json()).map_err(|e| format!("{}: {e}", file.display()))?;
        let (mut a, mut b, mut ratio) = (vec![], vec![], vec![]);
        let mut same = true;
        for _ in 0..pairs {
            let (ta, oa) = time_run(&this, &file)?;
            let (tb, ob) = time_run(other, &file)?;
            same &= oa == ob;
            a.push(ta);
            b.push(tb);
            ratio.push(ta / tb);
        }
        let (lo, hi) = ratio
            .iter()
            .fold((f64::MAX, f64::MIN), |(lo, hi), &r| (lo.min(r), hi.max(r)));
        out.push_str(&format!(
            "{case:<28} {:>8.3}  {:>8.3}  {:>10.3}  ({lo:.3}..{hi:.3})   {}\n",
            median(&mut a),
            median(&mut b),
            median(&mut ratio),
            if same { "yes" } else { "no" }
        ));
    }
    Ok(out)
}

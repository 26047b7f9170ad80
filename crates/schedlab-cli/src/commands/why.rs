//! `schedlab why`: the decisions one run made, as trees of the kernel
//! functions each went through with the values they compared; `schedlab
//! diverge`: the first decision at which two variants part.

use crate::failure::Failure;
use crate::run;
use schedlab::decisions::{self, RunChoice};
use schedlab::experiment::Experiment;
use schedlab::sched::why::WhyFilter;
use schedlab::why_report;

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    Wakeup,
    Fork,
    /// load_balance at each level (periodic, for tickless CPUs, new-idle).
    Balance,
    All,
}

#[derive(clap::Args)]
pub struct Args {
    /// A preset name, a playground link, or a path to an experiment JSON file.
    experiment: String,
    /// The variant: its label, its letter (A, B, ...) or its number.
    #[arg(long, default_value = "A")]
    variant: String,
    /// Only decisions about this task (a name; `name*` for a prefix):
    /// its placements, balances that moved it.
    #[arg(long)]
    task: Option<String>,
    /// From this simulated time since the workload's start (10ms, 1.5s, 200us).
    #[arg(long, default_value = "0ns")]
    from: String,
    /// Up to this simulated time (default: 1 ms after --from).
    #[arg(long)]
    to: Option<String>,
    #[arg(long, value_enum, default_value = "all")]
    kind: Kind,
    /// At most this many records; the run stops when more would follow.
    #[arg(long, default_value_t = 50)]
    limit: usize,
    /// The sweep value's number (1 for the first), for a swept experiment.
    #[arg(long, default_value_t = 1)]
    x: usize,
    /// Print JSON for tools instead of trees.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
pub struct DivergeArgs {
    /// A preset name, a playground link, or a path to an experiment JSON file.
    experiment: String,
    /// The first variant (label, letter or number).
    #[arg(long, default_value = "A")]
    a: String,
    /// The second variant.
    #[arg(long, default_value = "B")]
    b: String,
    /// The sweep value's number (1 for the first), for a swept experiment.
    #[arg(long, default_value_t = 1)]
    x: usize,
    /// Compare only placements, only balances, or both.
    #[arg(long, value_enum, default_value = "all")]
    kind: Kind,
    /// Print JSON for tools instead of the report.
    #[arg(long)]
    json: bool,
}

/// Most records one `why` may ask for.
const MAX_LIMIT: usize = 100_000;

pub fn command(args: Args) -> Result<String, Failure> {
    let exp = run::load(&args.experiment)?;
    let variant = variant_index(&exp, &args.variant)?;
    let from_ns = parse_time(&args.from).map_err(|e| e.context("--from"))?;
    let to_ns = match &args.to {
        Some(t) => parse_time(t).map_err(|e| e.context("--to"))?,
        None => from_ns.saturating_add(1_000_000),
    };
    if to_ns <= from_ns {
        return Err(format!(
            "--to ({}) must be after --from ({})",
            args.to.as_deref().unwrap_or(""),
            args.from
        )
        .into());
    }
    if args.limit == 0 || args.limit > MAX_LIMIT {
        return Err(format!("--limit must be from 1 to {MAX_LIMIT}, not {}", args.limit).into());
    }
    let filter = WhyFilter {
        task_names: args.task.clone().map(|t| vec![t]),
        from_ns,
        to_ns,
        limit: args.limit,
        ..kinds(args.kind)
    };
    let choice = RunChoice {
        x: sweep_index(&exp, args.x)?,
        variant,
        repeat: 0,
    };
    let recorded = decisions::record(&exp, choice, filter)?;
    if let Some(task) = &args.task {
        let pattern = task.strip_suffix('*');
        let named = recorded.task_names.iter().any(|n| match pattern {
            Some(p) => n.starts_with(p),
            None => n == task,
        });
        if !named {
            return Err(format!(
                "--task {task}: no task of this run (to {}) is called that; its tasks: {}",
                ms_words(to_ns),
                names_sample(&recorded.task_names)
            )
            .into());
        }
    }
    if args.json {
        return Ok(serde_json::to_string_pretty(&recorded).map_err(|e| e.to_string())? + "\n");
    }
    Ok(why_report::recorded(&recorded))
}

pub fn diverge(args: DivergeArgs) -> Result<String, Failure> {
    let exp = run::load(&args.experiment)?;
    let a = variant_index(&exp, &args.a).map_err(|e| e.context("--a"))?;
    let b = variant_index(&exp, &args.b).map_err(|e| e.context("--b"))?;
    if a == b {
        return Err("--a and --b name the same variant: give two different ones".into());
    }
    let report = decisions::diverge(&exp, sweep_index(&exp, args.x)?, (a, b), &kinds(args.kind))?;
    if args.json {
        return Ok(serde_json::to_string_pretty(&report).map_err(|e| e.to_string())? + "\n");
    }
    Ok(why_report::divergence(&report))
}

/// The decisions `kind` keeps, any task, any time.
fn kinds(kind: Kind) -> WhyFilter {
    WhyFilter {
        wakeups: matches!(kind, Kind::Wakeup | Kind::All),
        forks: matches!(kind, Kind::Fork | Kind::All),
        balances: matches!(kind, Kind::Balance | Kind::All),
        ..WhyFilter::default()
    }
}

/// A variant by label, letter (A = the first) or number (1 = the first).
fn variant_index(exp: &Experiment, name: &str) -> Result<usize, Failure> {
    if let Some(i) = exp.variants.iter().position(|v| v.label == name) {
        return Ok(i);
    }
    let by_letter = match name.as_bytes() {
        [c] if c.is_ascii_uppercase() => Some((c - b'A') as usize),
        _ => None,
    };
    let by_number = name.parse::<usize>().ok().and_then(|n| n.checked_sub(1));
    match by_letter.or(by_number) {
        Some(i) if i < exp.variants.len() => Ok(i),
        _ => Err(format!(
            "no variant {name}: the experiment's variants are {}",
            exp.variants
                .iter()
                .enumerate()
                .map(|(i, v)| format!("{} ({})", (b'A' + i as u8) as char, v.label))
                .collect::<Vec<_>>()
                .join(", ")
        )
        .into()),
    }
}

fn sweep_index(exp: &Experiment, x: usize) -> Result<usize, Failure> {
    let n = exp.xs().len();
    match x.checked_sub(1) {
        Some(i) if i < n => Ok(i),
        _ => Err(format!("--x {x}: the experiment has {n} sweep value(s), numbered from 1").into()),
    }
}

/// A simulated time with its unit: ns, us, ms or s (`1.5ms`).
fn parse_time(text: &str) -> Result<u64, Failure> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| Failure::from(format!("{text:?} needs a unit: ns, us, ms or s")))?;
    let (number, unit) = t.split_at(split);
    let scale = match unit.trim() {
        "ns" => 1.0,
        "us" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        other => {
            return Err(format!("{text:?}: unknown unit {other:?} (ns, us, ms or s)").into());
        }
    };
    let value: f64 = number
        .parse()
        .map_err(|_| Failure::from(format!("{text:?} is not a number with a unit")))?;
    let ns = value * scale;
    if !(0.0..=1e18).contains(&ns) {
        return Err(format!("{text:?} is out of range").into());
    }
    Ok(ns.round() as u64)
}

fn ms_words(ns: u64) -> String {
    format!("{} ms", ns as f64 / 1e6)
}

fn names_sample(names: &[String]) -> String {
    let mut unique: Vec<&String> = Vec::new();
    for n in names {
        if !unique.contains(&n) {
            unique.push(n);
        }
    }
    let shown: Vec<&str> = unique.iter().take(12).map(|s| s.as_str()).collect();
    let more = unique.len().saturating_sub(shown.len());
    if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_need_a_unit() {
        assert_eq!(parse_time("1.5ms").unwrap(), 1_500_000);
        assert_eq!(parse_time("200us").unwrap(), 200_000);
        assert_eq!(parse_time("2s").unwrap(), 2_000_000_000);
        assert_eq!(parse_time("7ns").unwrap(), 7);
        assert!(parse_time("10")
            .unwrap_err()
            .to_string()
            .contains("needs a unit"));
        assert!(parse_time("10min")
            .unwrap_err()
            .to_string()
            .contains("unknown unit"));
        assert!(parse_time("1.2.3ms").is_err());
    }
}

//! Every published number the presets replay beside the simulated one, with
//! whether the direction of the change is right (or flat: the variants made
//! identical decisions) and the ratio of simulated to published. The figures
//! come from the commit messages of "sched: re-tune balancing" (Linux
//! 2.6.28-rc3) and of the WA_WEIGHT wake-affine change (v4.15), and from a
//! pipe ping-pong measured on a 2-vCPU KVM guest (docs/fidelity.md).
//!
//! A figure whose run is too short to be steady (hackbench at its default
//! 100 loops) is also checked at neighbouring run lengths, and the table says
//! at how many of them the direction holds: one run length can be luck.

use crate::experiment::{Experiment, Results, Sweep};
use crate::presets;

pub struct Published {
    pub what: &'static str,
    pub preset: &'static str,
    /// Which row of the results the number is.
    pub at: At,
    /// (variant, published value) pairs; the first is the baseline.
    pub values: &'static [(&'static str, f64)],
    /// A workload parameter and the values to check the direction at too.
    pub also_at: Option<(&'static str, &'static [u64])>,
}

/// Where in a preset's results a published number sits.
#[derive(Clone, Copy)]
pub enum At {
    /// The only (or first) row: a preset without a sweep.
    First,
    /// The row of this sweep value.
    X(u64),
    /// Every row summed, as an index with the baseline at 100: the commit
    /// published only the change of the sum.
    SumIndex,
}

pub const PUBLISHED: &[Published] = &[
    Published {
        what: "lat_ctx -s 0 2 (usecs)",
        preset: "retune-lat-ctx",
        at: At::First,
        values: &[("2.6.27", 5.70), ("2.6.28", 2.07)],
        also_at: None,
    },
    Published {
        what: "pipe-test (usecs/loop)",
        preset: "retune-pipe-test",
        at: At::First,
        values: &[("2.6.27", 18.26), ("2.6.28", 8.63)],
        also_at: None,
    },
    Published {
        what: "sysbench pgsql 1..512 summed (index)",
        preset: "retune-sysbench-pgsql",
        at: At::SumIndex,
        values: &[("pre-tune", 100.0), ("re-tuned", 106.62)],
        also_at: None,
    },
    Published {
        what: "hackbench-20 (s)",
        preset: "waweight-hackbench-20",
        at: At::First,
        values: &[("NO_WA_WEIGHT", 7.362717561), ("WA_WEIGHT", 6.450509391)],
        also_at: Some(("loops", &[80, 90, 100, 110, 120])),
    },
    Published {
        what: "tbench 2 (MB/sec)",
        preset: "waweight-tbench",
        at: At::X(2),
        values: &[("NO_WA_WEIGHT", 685.211), ("WA_WEIGHT", 697.292)],
        also_at: None,
    },
    Published {
        what: "tbench 5 (MB/sec)",
        preset: "waweight-tbench",
        at: At::X(5),
        values: &[("NO_WA_WEIGHT", 1596.64), ("WA_WEIGHT", 1596.48)],
        also_at: None,
    },
    Published {
        what: "tbench 10 (MB/sec)",
        preset: "waweight-tbench",
        at: At::X(10),
        values: &[("NO_WA_WEIGHT", 2985.47), ("WA_WEIGHT", 2975.22)],
        also_at: None,
    },
    Published {
        what: "tbench 20 (MB/sec)",
        preset: "waweight-tbench",
        at: At::X(20),
        values: &[("NO_WA_WEIGHT", 4521.15), ("WA_WEIGHT", 4575.14)],
        also_at: None,
    },
    Published {
        what: "tbench 40 (MB/sec)",
        preset: "waweight-tbench",
        at: At::X(40),
        values: &[("NO_WA_WEIGHT", 9438.1), ("WA_WEIGHT", 9468.65)],
        also_at: None,
    },
    Published {
        what: "tbench 80 (MB/sec)",
        preset: "waweight-tbench",
        at: At::X(80),
        values: &[("NO_WA_WEIGHT", 8210.5), ("WA_WEIGHT", 8631.73)],
        also_at: None,
    },
    Published {
        what: "2-vCPU guest pipe ping-pong (usecs/loop)",
        preset: "kvm-pipe-test-pinning",
        at: At::First,
        values: &[("pinned", 8.68), ("free", 16.08)],
        also_at: None,
    },
];

/// `variant`'s value in the row `at` names; a sum is the plain sum (indexed
/// by [`simulated`]).
fn value(r: &Results, at: At, variant: &str) -> Option<f64> {
    let row = match at {
        At::First => r.rows.first()?,
        At::X(x) => r
            .rows
            .iter()
            .find(|row| row.x.as_ref().and_then(|v| v.as_u64()) == Some(x))?,
        At::SumIndex => {
            return r
                .rows
                .iter()
                .map(|row| row.values.get(variant).copied())
                .sum()
        }
    };
    row.values.get(variant).copied()
}

/// Variant `i`'s change from the baseline (the first), in percent.
fn change_pct(values: &[f64], i: usize) -> f64 {
    (values[i] - values[0]) / values[0] * 100.0
}

/// The published values of `p`.
fn published(p: &Published) -> Vec<f64> {
    p.values.iter().map(|(_, v)| *v).collect()
}

/// The simulated values of `p`'s variants at `at` (a sum indexed to the
/// baseline's 100).
fn simulated(p: &Published, r: &Results, at: At) -> Vec<f64> {
    let values: Vec<f64> = p
        .values
        .iter()
        .map(|(v, _)| value(r, at, v).unwrap_or(f64::NAN))
        .collect();
    match at {
        At::SumIndex => values.iter().map(|v| v / values[0] * 100.0).collect(),
        _ => values,
    }
}

/// The table, given a way to run an experiment (asked once per preset named
/// in [`PUBLISHED`], and once more for each figure with `also_at`, with that
/// preset swept over those values).
pub fn table(
    run: &mut dyn FnMut(&Experiment) -> Result<Results, String>,
) -> Result<String, String> {
    table_of(PUBLISHED.iter(), run)
}

/// The table of the figures whose preset's name starts with `prefix` (one
/// commit's: `retune-`, `waweight-`), as the book shows each beside its
/// commit.
pub fn table_for(
    prefix: &str,
    run: &mut dyn FnMut(&Experiment) -> Result<Results, String>,
) -> Result<String, String> {
    table_of(
        PUBLISHED.iter().filter(|p| p.preset.starts_with(prefix)),
        run,
    )
}

fn table_of<'a>(
    figures: impl Iterator<Item = &'a Published>,
    run: &mut dyn FnMut(&Experiment) -> Result<Results, String>,
) -> Result<String, String> {
    let mut cache: Vec<(&str, Results)> = Vec::new();
    let mut out = format!(
        "{:<42} {:<13} {:>10} {:>10} {:>7}  {}\n",
        "published figure", "variant", "published", "simulated", "ratio", "direction"
    );
    for p in figures {
        if !cache.iter().any(|(n, _)| *n == p.preset) {
            let exp = presets::get(p.preset).map_err(|e| e.to_string())?;
            cache.push((p.preset, run(&exp)?));
        }
        let r = &cache
            .iter()
            .find(|(n, _)| *n == p.preset)
            .expect("cached")
            .1;
        let sim = simulated(p, r, p.at);
        let publ = published(p);
        for (i, (variant, published)) in p.values.iter().enumerate() {
            let direction = if i == 0 {
                String::new()
            } else {
                let (pub_pct, sim_pct) = (change_pct(&publ, i), change_pct(&sim, i));
                // Identical numbers: the variants made the same decisions.
                let verdict = if sim[i] == sim[0] {
                    "flat"
                } else if (pub_pct > 0.0) == (sim_pct > 0.0) {
                    "right"
                } else {
                    "WRONG"
                };
                format!("{verdict} (published {pub_pct:+.2}%, simulated {sim_pct:+.2}%)")
            };
            out.push_str(&format!(
                "{:<42} {:<13} {:>10.3} {:>10.3} {:>7.2}  {direction}\n",
                if i == 0 { p.what } else { "" },
                variant,
                published,
                sim[i],
                sim[i] / published
            ));
        }
        if let Some((param, values)) = p.also_at {
            out.push_str(&also_at(p, param, values, run)?);
        }
        if matches!(p.at, At::SumIndex) {
            out.push_str(&each_point(p, r));
        }
    }
    Ok(out)
}

/// For a figure published only as the change of a sum, the direction at
/// each point summed: at how many it agrees with the sum's published
/// direction, and the simulated change at each (the re-tune commit called
/// its sysbench change "a win both for the runup portion, the peak area
/// and the tail", so every point should agree).
fn each_point(p: &Published, r: &Results) -> String {
    let mut out = String::new();
    let xs: Vec<u64> = r
        .rows
        .iter()
        .filter_map(|row| row.x.as_ref().and_then(|v| v.as_u64()))
        .collect();
    for (i, (variant, _)) in p.values.iter().enumerate().skip(1) {
        let changes: Vec<f64> = xs
            .iter()
            .map(|&x| change_pct(&simulated(p, r, At::X(x)), i))
            .collect();
        let right = agreeing(&changes, change_pct(&published(p), i));
        let listed: Vec<String> = xs
            .iter()
            .zip(&changes)
            .map(|(x, c)| format!("{x}: {c:+.1}%"))
            .collect();
        out.push_str(&format!(
            "{:<42} {:<13} right at {right} of {} points ({})\n",
            "",
            variant,
            xs.len(),
            listed.join(", ")
        ));
    }
    out
}

/// The direction of each variant's change at every value of `param`: at how
/// many it is right, and the simulated changes.
fn also_at(
    p: &Published,
    param: &str,
    values: &[u64],
    run: &mut dyn FnMut(&Experiment) -> Result<Results, String>,
) -> Result<String, String> {
    let mut exp = presets::get(p.preset).map_err(|e| e.to_string())?;
    exp.sweep = Some(Sweep {
        param: param.to_string(),
        values: values.iter().map(|&v| v.into()).collect(),
    });
    let r = run(&exp)?;
    let mut out = String::new();
    for (i, (variant, _)) in p.values.iter().enumerate().skip(1) {
        let changes: Vec<f64> = values
            .iter()
            .map(|&x| change_pct(&simulated(p, &r, At::X(x)), i))
            .collect();
        let right = agreeing(&changes, change_pct(&published(p), i));
        let listed: Vec<String> = changes.iter().map(|c| format!("{c:+.1}%")).collect();
        let at: Vec<String> = values.iter().map(u64::to_string).collect();
        out.push_str(&format!(
            "{:<42} {:<13} right at {right} of {} ({param} {}: {})\n",
            "",
            variant,
            values.len(),
            at.join(", "),
            listed.join(", ")
        ));
    }
    Ok(out)
}

/// How many of the simulated `changes` go the published change's way.
fn agreeing(changes: &[f64], published_pct: f64) -> usize {
    changes
        .iter()
        .filter(|c| (**c > 0.0) == (published_pct > 0.0))
        .count()
}

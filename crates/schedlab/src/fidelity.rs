//! Every published number the presets replay beside the simulated one, with
//! whether the direction of the change is right (or flat: the variants made
//! identical decisions) and the ratio of simulated to published. The figures
//! come from the commit messages of "sched: re-tune balancing" (Linux
//! 2.6.28-rc3) and of the WA_WEIGHT wake-affine change (v4.15), and from a
//! pipe ping-pong measured on a 2-vCPU KVM guest (docs/fidelity.md).

use crate::experiment::Results;

pub struct Published {
    pub what: &'static str,
    pub preset: &'static str,
    /// Sweep value, if the number is for one point.
    pub x: Option<u64>,
    /// (variant, published value) pairs; the first is the baseline.
    pub values: &'static [(&'static str, f64)],
}

pub const PUBLISHED: &[Published] = &[
    Published {
        what: "lat_ctx -s 0 2 (usecs)",
        preset: "retune-lat-ctx",
        x: None,
        values: &[("2.6.27", 5.70), ("2.6.28", 2.07)],
    },
    Published {
        what: "pipe-test (usecs/loop)",
        preset: "retune-pipe-test",
        x: None,
        values: &[("2.6.27", 18.26), ("2.6.28", 8.63)],
    },
    Published {
        what: "hackbench-20 (s)",
        preset: "waweight-hackbench-20",
        x: None,
        values: &[("NO_WA_WEIGHT", 7.362717561), ("WA_WEIGHT", 6.450509391)],
    },
    Published {
        what: "tbench 2 (MB/sec)",
        preset: "waweight-tbench",
        x: Some(2),
        values: &[("NO_WA_WEIGHT", 685.211), ("WA_WEIGHT", 697.292)],
    },
    Published {
        what: "tbench 5 (MB/sec)",
        preset: "waweight-tbench",
        x: Some(5),
        values: &[("NO_WA_WEIGHT", 1596.64), ("WA_WEIGHT", 1596.48)],
    },
    Published {
        what: "tbench 10 (MB/sec)",
        preset: "waweight-tbench",
        x: Some(10),
        values: &[("NO_WA_WEIGHT", 2985.47), ("WA_WEIGHT", 2975.22)],
    },
    Published {
        what: "tbench 20 (MB/sec)",
        preset: "waweight-tbench",
        x: Some(20),
        values: &[("NO_WA_WEIGHT", 4521.15), ("WA_WEIGHT", 4575.14)],
    },
    Published {
        what: "tbench 40 (MB/sec)",
        preset: "waweight-tbench",
        x: Some(40),
        values: &[("NO_WA_WEIGHT", 9438.1), ("WA_WEIGHT", 9468.65)],
    },
    Published {
        what: "tbench 80 (MB/sec)",
        preset: "waweight-tbench",
        x: Some(80),
        values: &[("NO_WA_WEIGHT", 8210.5), ("WA_WEIGHT", 8631.73)],
    },
    Published {
        what: "2-vCPU guest pipe ping-pong (usecs/loop)",
        preset: "kvm-pipe-test-pinning",
        x: None,
        values: &[("pinned", 8.68), ("free", 16.08)],
    },
];

fn value(r: &Results, x: Option<u64>, variant: &str) -> Option<f64> {
    let row = match x {
        None => r.rows.first()?,
        Some(x) => r
            .rows
            .iter()
            .find(|row| row.x.as_ref().and_then(|v| v.as_u64()) == Some(x))?,
    };
    row.values.get(variant).copied()
}

/// The table, given each preset's results (`results_of` is asked once per
/// preset named in [`PUBLISHED`]).
pub fn table(
    results_of: &mut dyn FnMut(&str) -> Result<Results, String>,
) -> Result<String, String> {
    let mut cache: Vec<(&str, Results)> = Vec::new();
    let mut out = format!(
        "{:<42} {:<13} {:>10} {:>10} {:>7}  {}\n",
        "published figure", "variant", "published", "simulated", "ratio", "direction"
    );
    for p in PUBLISHED {
        if !cache.iter().any(|(n, _)| *n == p.preset) {
            cache.push((p.preset, results_of(p.preset)?));
        }
        let r = &cache
            .iter()
            .find(|(n, _)| *n == p.preset)
            .expect("cached")
            .1;
        let sim: Vec<f64> = p
            .values
            .iter()
            .map(|(v, _)| value(r, p.x, v).unwrap_or(f64::NAN))
            .collect();
        for (i, (variant, published)) in p.values.iter().enumerate() {
            let direction = if i == 0 {
                String::new()
            } else {
                let pub_up = *published > p.values[0].1;
                let sim_up = sim[i] > sim[0];
                let pub_pct = (published - p.values[0].1) / p.values[0].1 * 100.0;
                let sim_pct = (sim[i] - sim[0]) / sim[0] * 100.0;
                // Identical numbers: the variants made the same decisions.
                let verdict = if sim[i] == sim[0] {
                    "flat"
                } else if pub_up == sim_up {
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
    }
    Ok(out)
}

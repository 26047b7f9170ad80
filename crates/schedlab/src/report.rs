//! Results as text: the tool-shaped output, the commit-style A/B table
//! ("+17.08%", win or loss by the metric's direction), and CSV.

use crate::experiment::Results;
use crate::workload::bench::Better;

fn x_label(x: &Option<serde_json::Value>) -> String {
    match x {
        None => "-".to_string(),
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
    }
}

/// A number with precision for its size.
pub fn num(v: f64) -> String {
    if v.abs() < 10.0 {
        format!("{v:.3}")
    } else {
        format!("{v:.2}")
    }
}

/// "+17.08%" for b against a, and whether that is a win for the metric.
pub fn change(a: f64, b: f64, better: Better) -> (String, &'static str) {
    if a == 0.0 {
        return ("n/a".to_string(), "");
    }
    let pct = (b - a) / a * 100.0;
    let verdict = match (better, pct.partial_cmp(&0.0)) {
        (_, Some(std::cmp::Ordering::Equal)) | (_, None) => "same",
        (Better::Higher, Some(std::cmp::Ordering::Greater))
        | (Better::Lower, Some(std::cmp::Ordering::Less)) => "win",
        _ => "loss",
    };
    (format!("{pct:+.2}%"), verdict)
}

/// The commit-style table: a row per sweep point, a column per variant,
/// then each later variant's change against the first; a SUM row if asked.
/// With repeats, each value is the mean and its standard deviation over
/// the repeats ("8631.73 ± 12.40"; the SUM row's adds the variances).
pub fn table(r: &Results, sweep_param: Option<&str>, sum_row: bool) -> String {
    let repeated = r.repeats > 1;
    let mut header = vec![sweep_param.unwrap_or("").to_string()];
    header.extend(r.variants.iter().cloned());
    for v in &r.variants[1..] {
        header.push(if r.variants.len() > 2 {
            format!("change {v}")
        } else {
            "change".to_string()
        });
    }
    let mut lines: Vec<Vec<String>> = vec![header];
    let mut add_row = |label: String, values: Vec<(f64, f64)>| {
        let mut cells = vec![label];
        cells.extend(values.iter().map(|&(v, sd)| {
            if repeated {
                format!("{} ± {}", num(v), num(sd))
            } else {
                num(v)
            }
        }));
        for v in &values[1..] {
            let (pct, verdict) = change(values[0].0, v.0, r.metric.better);
            cells.push(format!("{pct} {verdict}").trim().to_string());
        }
        lines.push(cells);
    };
    for row in &r.rows {
        add_row(
            x_label(&row.x),
            r.variants
                .iter()
                .map(|v| (row.values[v], row.spread[v].stddev))
                .collect(),
        );
    }
    if sum_row {
        add_row(
            "SUM".to_string(),
            r.variants
                .iter()
                .map(|v| {
                    let sum = r.rows.iter().map(|row| row.values[v]).sum();
                    let var: f64 = r.rows.iter().map(|row| row.spread[v].stddev.powi(2)).sum();
                    (sum, var.sqrt())
                })
                .collect(),
        );
    }
    let mut out = format!(
        "{} ({}, {} is better)\n",
        r.metric.name,
        r.metric.unit,
        match r.metric.better {
            Better::Higher => "higher",
            Better::Lower => "lower",
        }
    );
    if repeated {
        out.push_str(&format!(
            "mean ± standard deviation of {} runs, each with its own seed\n",
            r.repeats
        ));
    }
    push_aligned(&mut out, &lines);
    out.push_str(&latency_table(r, sweep_param));
    out.push_str(&cpu_table(r, sweep_param));
    out
}

/// Where the CPUs' time went in the measured part, a row per sweep point
/// and variant; empty when no row has it.
pub fn cpu_table(r: &Results, sweep_param: Option<&str>) -> String {
    if r.rows.iter().all(|row| row.cpu.is_empty()) {
        return String::new();
    }
    let pct = |share: f64| format!("{:.1}", 100.0 * share);
    let mut lines = vec![[
        sweep_param.unwrap_or(""),
        "variant",
        "user",
        "kernel",
        "balancing",
        "net_rx",
        "idle",
    ]
    .map(String::from)
    .to_vec()];
    for row in &r.rows {
        for v in &r.variants {
            let Some(c) = row.cpu.get(v) else {
                continue;
            };
            lines.push(vec![
                x_label(&row.x),
                v.clone(),
                pct(c.user),
                pct(c.kernel),
                pct(c.balancing),
                pct(c.net_rx_softirq),
                pct(c.idle),
            ]);
        }
    }
    let mut out = String::from("\ncpu time (% of all CPUs' time after the warm-up)\n");
    push_aligned(&mut out, &lines);
    out
}

/// Wakeup-to-running latency percentiles, a row per sweep point and
/// variant; empty when no run had a wakeup.
pub fn latency_table(r: &Results, sweep_param: Option<&str>) -> String {
    let any = r
        .rows
        .iter()
        .any(|row| row.wakeup_latency.values().any(|l| l.wakeups > 0));
    if !any {
        return String::new();
    }
    let us = |ns: u64| format!("{:.1}", ns as f64 / 1000.0);
    let mut lines = vec![vec![
        sweep_param.unwrap_or("").to_string(),
        "variant".to_string(),
        "wakeups".to_string(),
        "p50".to_string(),
        "p90".to_string(),
        "p99".to_string(),
        "p99.9".to_string(),
        "max".to_string(),
    ]];
    for row in &r.rows {
        for v in &r.variants {
            let Some(l) = row.wakeup_latency.get(v) else {
                continue;
            };
            lines.push(vec![
                x_label(&row.x),
                v.clone(),
                l.wakeups.to_string(),
                us(l.p50_ns),
                us(l.p90_ns),
                us(l.p99_ns),
                us(l.p99_9_ns),
                us(l.max_ns),
            ]);
        }
    }
    let mut out = String::from("\nwakeup latency (us, wakeup to running)\n");
    push_aligned(&mut out, &lines);
    out
}

/// Lines of cells, the first column left-aligned, the others right-aligned.
fn push_aligned(out: &mut String, lines: &[Vec<String>]) {
    let widths: Vec<usize> = (0..lines[0].len())
        .map(|c| {
            lines
                .iter()
                .map(|l| l[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for l in lines {
        let cells: Vec<String> = l
            .iter()
            .enumerate()
            .map(|(c, s)| {
                if c == 0 {
                    format!("{s:<w$}", w = widths[c])
                } else {
                    format!("{s:>w$}", w = widths[c])
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
}

/// One line per (sweep point, variant): x,variant,mean,min,max,stddev.
pub fn csv(r: &Results) -> String {
    let mut out = String::from("x,variant,mean,min,max,stddev\n");
    for row in &r.rows {
        for v in &r.variants {
            let s = &row.spread[v];
            out.push_str(&format!(
                "{},{v},{},{},{},{}\n",
                x_label(&row.x),
                row.values[v],
                s.min,
                s.max,
                s.stddev
            ));
        }
    }
    out
}

/// The tools' own output, per sweep point and variant.
pub fn text(r: &Results, sweep_param: Option<&str>) -> String {
    let mut out = String::new();
    for row in &r.rows {
        for v in &r.variants {
            match (sweep_param, &row.x) {
                (Some(p), Some(x)) => {
                    out.push_str(&format!("== {v}, {p}={}\n", x_label(&Some(x.clone()))))
                }
                _ => out.push_str(&format!("== {v}\n")),
            }
            out.push_str(row.text.get(v).map_or("", String::as_str));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::{Row, Spread};
    use crate::workload::bench::Metric;
    use std::collections::BTreeMap;

    fn results() -> Results {
        let row = |x: u64, a: f64, b: f64| Row {
            x: Some(serde_json::json!(x)),
            values: BTreeMap::from([
                ("NO_WA_WEIGHT".to_string(), a),
                ("WA_WEIGHT".to_string(), b),
            ]),
            spread: BTreeMap::from([
                (
                    "NO_WA_WEIGHT".to_string(),
                    Spread {
                        min: a,
                        max: a,
                        stddev: 0.0,
                    },
                ),
                (
                    "WA_WEIGHT".to_string(),
                    Spread {
                        min: b,
                        max: b,
                        stddev: 0.0,
                    },
                ),
            ]),
            series: BTreeMap::new(),
            text: BTreeMap::new(),
            wakeup_latency: BTreeMap::new(),
            cpu: BTreeMap::new(),
        };
        Results {
            experiment: "tbench".into(),
            metric: Metric {
                name: "Throughput",
                unit: "MB/sec",
                better: Better::Higher,
            },
            variants: vec!["NO_WA_WEIGHT".into(), "WA_WEIGHT".into()],
            repeats: 1,
            rows: vec![
                row(2, 685.211, 697.292),
                row(80, 8210.5, 8631.73),
                row(5, 1596.64, 1596.48),
            ],
            counters: BTreeMap::new(),
        }
    }

    #[test]
    fn commit_style_table_golden() {
        let expected = "\
Throughput (MB/sec, higher is better)
clients  NO_WA_WEIGHT  WA_WEIGHT       change
2              685.21     697.29   +1.76% win
80            8210.50    8631.73   +5.13% win
5             1596.64    1596.48  -0.01% loss
SUM          10492.35   10925.50   +4.13% win
";
        assert_eq!(table(&results(), Some("clients"), true), expected);
    }

    #[test]
    fn repeated_values_show_their_standard_deviation() {
        let mut r = results();
        r.repeats = 5;
        for row in &mut r.rows {
            for s in row.spread.values_mut() {
                s.stddev = 3.0;
            }
        }
        let expected = "\
Throughput (MB/sec, higher is better)
mean ± standard deviation of 5 runs, each with its own seed
clients      NO_WA_WEIGHT         WA_WEIGHT       change
2          685.21 ± 3.000    697.29 ± 3.000   +1.76% win
80        8210.50 ± 3.000   8631.73 ± 3.000   +5.13% win
5         1596.64 ± 3.000   1596.48 ± 3.000  -0.01% loss
SUM      10492.35 ± 5.196  10925.50 ± 5.196   +4.13% win
";
        assert_eq!(table(&r, Some("clients"), true), expected);
    }

    #[test]
    fn latency_table_follows_the_main_table() {
        let mut r = results();
        assert_eq!(latency_table(&r, Some("clients")), "");
        let mut h = crate::engine::stats::LatencyHist::default();
        for ns in [2_000, 3_000, 40_000] {
            h.record(ns);
        }
        let summary = crate::experiment::LatencySummary::of(&h);
        for row in &mut r.rows {
            for v in &r.variants {
                row.wakeup_latency.insert(v.clone(), summary.clone());
            }
        }
        let t = table(&r, Some("clients"), false);
        assert!(
            t.contains("\nwakeup latency (us, wakeup to running)\nclients       variant  wakeups  p50   p90   p99  p99.9   max\n2        NO_WA_WEIGHT        3  3.1  40.0  40.0   40.0  40.0\n"),
            "{t}"
        );
    }

    #[test]
    fn cpu_table_gives_each_variants_shares_in_percent() {
        let mut r = results();
        assert_eq!(cpu_table(&r, Some("clients")), "");
        let time = crate::engine::stats::CpuTime {
            busy_ns: 500,
            idle_ns: 200,
            overhead_ns: 300,
            newidle_balance_ns: 20,
            tick_balance_ns: 30,
            net_rx_softirq_ns: 100,
        };
        let shares = crate::experiment::CpuShares::of(&time);
        assert_eq!(
            [
                shares.user,
                shares.kernel,
                shares.balancing,
                shares.net_rx_softirq,
                shares.idle
            ],
            [0.5, 0.15, 0.05, 0.1, 0.2]
        );
        for row in &mut r.rows {
            for v in &r.variants {
                row.cpu.insert(v.clone(), shares);
            }
        }
        let t = table(&r, Some("clients"), false);
        assert!(
            t.contains("\ncpu time (% of all CPUs' time after the warm-up)\nclients       variant  user  kernel  balancing  net_rx  idle\n2        NO_WA_WEIGHT  50.0    15.0        5.0    10.0  20.0\n"),
            "{t}"
        );
    }

    #[test]
    fn change_follows_the_metric_direction() {
        assert_eq!(
            change(18.26, 8.63, Better::Lower),
            ("-52.74%".to_string(), "win")
        );
        assert_eq!(
            change(100.0, 117.08, Better::Higher),
            ("+17.08%".to_string(), "win")
        );
        assert_eq!(
            change(100.0, 117.08, Better::Lower),
            ("+17.08%".to_string(), "loss")
        );
    }

    #[test]
    fn csv_has_a_line_per_point_and_variant() {
        let c = csv(&results());
        assert_eq!(c.lines().count(), 7);
        assert!(c.starts_with("x,variant,mean,min,max,stddev\n2,NO_WA_WEIGHT,685.211,"));
    }
}

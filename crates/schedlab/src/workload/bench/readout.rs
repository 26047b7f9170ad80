//! What generators read back from a run (marks, rates, the measured
//! window) and report (the tool's headline [`Metric`] and printed
//! [`Report`]), and the number format the tools print.

use crate::engine::RunOutput;
use serde::{Deserialize, Serialize};

/// Which way a metric is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    Lower,
    Higher,
}

/// The number a benchmark reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Metric {
    pub name: &'static str,
    pub unit: &'static str,
    pub better: Better,
}

/// What the tool would print, its headline number, and the per-batch series
/// where the tool prints one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub value: f64,
    pub series: Vec<f64>,
    /// Secondary figures the tool prints (e.g. tbench's max_latency).
    pub details: Vec<(&'static str, f64)>,
    pub text: String,
}

/// The marks of `label`, in time order.
pub(crate) fn marks<'a>(out: &'a RunOutput, label: &str) -> &'a [(u64, usize)] {
    out.marks
        .iter()
        .find(|m| m.label == label)
        .map_or(&[], |m| m.series.as_slice())
}

pub(crate) fn mark_stats<'a>(
    out: &'a RunOutput,
    label: &str,
) -> Option<&'a crate::engine::stats::MarkStats> {
    out.marks.iter().find(|m| m.label == label)
}

/// Seconds measured: from the end of the warm-up to the end of the run.
pub(crate) fn measured_secs(out: &RunOutput) -> f64 {
    (out.end_ns - out.measure_from_ns) as f64 / 1e9
}

/// Each marking task's completions of `label` per second in the measured
/// part, read from time rather than counted (whole counts in a short window
/// come in multiples of one over its length), by task id. A task's progress
/// is taken to grow linearly between its marks, so a completion that
/// straddles a boundary counts by the fraction of it inside the window: at
/// the start exactly (the interval from its last warm-up mark); at the end,
/// the completion in progress at the task's own mean pace, at most one. A
/// task with no mark before the window (one that started in it) starts its
/// progress at its first mark. For tasks that run to the end of the run.
pub(crate) fn mark_rates(out: &RunOutput, label: &str) -> Vec<(usize, f64)> {
    let secs = measured_secs(out);
    let Some(m) = mark_stats(out, label) else {
        return vec![];
    };
    if secs <= 0.0 {
        return vec![];
    }
    let (start, end) = (out.measure_from_ns, out.end_ns);
    m.by_task
        .iter()
        .enumerate()
        .filter(|(_, t)| t.count > 0)
        .map(|(task, t)| {
            let (head, from, intervals) = match t.first_interval_ns {
                Some(d) if d > 0 => (
                    ((t.first_ns - start) as f64 / d as f64).min(1.0),
                    t.first_ns - d,
                    t.count,
                ),
                _ => (0.0, t.first_ns, t.count - 1),
            };
            let tail = if intervals > 0 && t.last_ns > from {
                let pace = (t.last_ns - from) as f64 / intervals as f64;
                ((end - t.last_ns) as f64 / pace).min(1.0)
            } else {
                0.0
            };
            let progress = head + (t.count - 1) as f64 + tail;
            (task, progress / secs)
        })
        .collect()
}

/// [`mark_rates`] summed over the tasks.
pub(crate) fn mark_rate(out: &RunOutput, label: &str) -> f64 {
    mark_rates(out, label).iter().map(|(_, r)| r).sum()
}

/// A number as C's `%g` prints it: six significant digits, trailing zeros
/// dropped, an exponent below 1e-4 and from 1e6 (how tbench and the
/// commits' netperf tables print).
pub(crate) fn fmt_g(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return if v.is_finite() {
            "0".into()
        } else {
            v.to_string()
        };
    }
    let exp = v.abs().log10().floor() as i32;
    // Rounding to six digits may carry into the next power of ten.
    let rounded: f64 = format!("{:.5e}", v).parse().unwrap_or(v);
    let exp = if rounded.abs() >= 10f64.powi(exp + 1) {
        exp + 1
    } else {
        exp
    };
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if !(-4..6).contains(&exp) {
        let s = format!("{:.5e}", v);
        let (mant, e) = s.split_once('e').unwrap_or((&s, "0"));
        let e: i32 = e.parse().unwrap_or(0);
        let sign = if e < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mant.to_string()), e.abs())
    } else {
        let decimals = (5 - exp).max(0) as usize;
        trim(format!("{v:.decimals$}"))
    }
}

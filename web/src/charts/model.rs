//! What the page asks for and gets: a chart (its SVG and its words), the
//! options, the sweep's scale, a baseline, and what the results say of
//! themselves (their metric, whether two are comparable).

use schedlab::experiment::Results;
use schedlab::workload::bench::Better;

#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// The element id and file name stem ("series", "sweep", "change", "variants").
    pub id: &'static str,
    pub title: String,
    pub svg: String,
    /// The chart in words, for those who cannot see it.
    pub alt: String,
    /// Width and height in pixels.
    pub size: (u32, u32),
}

/// How the sweep value is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XScale {
    Linear,
    Log2,
}

/// Earlier results drawn under these (grey), if their metric and sweep match.
#[derive(Debug, Clone, PartialEq)]
pub struct Baseline<'a> {
    pub name: String,
    pub results: &'a Results,
}

/// What the page chose; `x_scale: None` picks one from the sweep values.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Options<'a> {
    pub x_scale: Option<XScale>,
    pub baseline: Option<Baseline<'a>>,
    /// Width and height in pixels; (0, 0) for [`WIDTH`] x [`HEIGHT`].
    pub size: (u32, u32),
}

/// The sweep values as numbers, if they all are.
pub fn numeric_xs(r: &Results) -> Option<Vec<f64>> {
    r.rows.iter().map(|row| row.x.as_ref()?.as_f64()).collect()
}

/// Whether a log axis can show these values (all positive, several).
pub fn log_possible(xs: &[f64]) -> bool {
    xs.len() >= 2 && xs.iter().all(|x| *x > 0.0)
}

/// Log-2 when the values grow geometrically: positive, spanning a factor of
/// four or more, and more evenly spaced as logarithms than as numbers.
pub fn auto_scale(xs: &[f64]) -> XScale {
    if !log_possible(xs) || xs.len() < 3 {
        return XScale::Linear;
    }
    let mut s = xs.to_vec();
    s.sort_by(f64::total_cmp);
    if s[s.len() - 1] / s[0] < 4.0 {
        return XScale::Linear;
    }
    // Unevenness: the largest gap over the smallest.
    let uneven = |v: &[f64]| {
        let gaps: Vec<f64> = v
            .windows(2)
            .map(|w| w[1] - w[0])
            .filter(|g| *g > 0.0)
            .collect();
        let max = gaps.iter().copied().fold(0.0, f64::max);
        let min = gaps.iter().copied().fold(f64::INFINITY, f64::min);
        max / min
    };
    let logs: Vec<f64> = s.iter().map(|x| x.log2()).collect();
    if uneven(&logs) < uneven(&s) {
        XScale::Log2
    } else {
        XScale::Linear
    }
}

/// Whether `b` can be drawn under `r`: the same metric at the same sweep values.
pub(super) fn comparable(r: &Results, b: &Results) -> bool {
    r.metric == b.metric
        && r.rows.len() == b.rows.len()
        && r.rows.iter().zip(&b.rows).all(|(x, y)| x.x == y.x)
}

pub(super) fn y_desc(r: &Results) -> String {
    format!("{} ({})", r.metric.name, r.metric.unit)
}

pub(super) fn better_words(b: Better) -> &'static str {
    match b {
        Better::Higher => "higher is better",
        Better::Lower => "lower is better",
    }
}

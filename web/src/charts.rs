//! Charts of a run's results, drawn as SVG on the main thread: the
//! per-batch series of ping-pong workloads with the timeline's flips
//! marked; the metric against the sweep value per variant (a log-2 axis
//! when the values grow geometrically) beside each variant's change against
//! the first in percent, with error bars when repeated; without a sweep, a
//! bar per variant and the change bars.
//!
//! plotters draws the frame (caption, axes, grid, error bars); the data are
//! drawn over it here, so that each variant has its own line style and
//! marker shape as well as its colour, and each marker is a focusable
//! `<g class="marker">` with the exact value as its name and `<title>`,
//! placed by `transform="translate(x y)"` with `data-x` / `data-value`, in
//! data order, so a test can hold the drawing against the results JSON.

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use schedlab::experiment::{Experiment, Results};
use schedlab::workload::bench::Better;
use std::fmt::Write;

pub const WIDTH: u32 = 720;
pub const HEIGHT: u32 = 360;
/// The size on narrow screens, so the text stays readable when the chart
/// fills a phone's width.
pub const NARROW: (u32, u32) = (440, 300);

/// One variant's colour (light theme; the page inverts for dark).
pub fn palette(i: usize) -> RGBColor {
    const COLORS: [RGBColor; 4] = [
        RGBColor(0x2f, 0x6f, 0xde),
        RGBColor(0xd9, 0x62, 0x2b),
        RGBColor(0x2a, 0x9d, 0x5c),
        RGBColor(0x8e, 0x44, 0xad),
    ];
    COLORS[i % COLORS.len()]
}

pub(crate) fn hex(c: RGBColor) -> String {
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

/// Each variant's line: solid, dashed, dotted, dash-dot.
pub(crate) fn dashes(i: usize) -> &'static str {
    ["", "8 4", "2 4", "10 3 2 3"][i % 4]
}

/// Each variant's marker, centred on 0,0: a filled circle, then hollow
/// (larger) square, triangle and diamond, so a marker on top of another
/// leaves the one below visible.
fn marker_shape(i: usize, color: &str) -> String {
    let hollow =
        format!("fill=\"#ffffff\" fill-opacity=\"0\" stroke=\"{color}\" stroke-width=\"2\"");
    match i % 4 {
        0 => format!("<circle r=\"4.5\" fill=\"{color}\" stroke=\"#ffffff\" stroke-width=\"1\"/>"),
        1 => format!("<rect x=\"-6\" y=\"-6\" width=\"12\" height=\"12\" {hollow}/>"),
        2 => format!("<polygon points=\"0,-8 7,5 -7,5\" {hollow}/>"),
        _ => format!("<polygon points=\"0,-8 8,0 0,8 -8,0\" {hollow}/>"),
    }
}

/// Percent tick labels with as many decimals as the span needs.
fn pct_axis(span: f64) -> impl Fn(&f64) -> String {
    let decimals = if span < 3.0 {
        2
    } else if span < 30.0 {
        1
    } else {
        0
    };
    move |y: &f64| {
        let y = if y.abs() < 0.5 * 10f64.powi(-decimals) {
            0.0
        } else {
            *y
        };
        format!("{y:+.decimals$}%", decimals = decimals as usize)
    }
}

/// Text for SVG attributes and elements.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

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

/// The charts that suit these results.
pub fn charts_for(exp: &Experiment, r: &Results, opts: &Options) -> Vec<Chart> {
    let size = if opts.size.0 == 0 {
        (WIDTH, HEIGHT)
    } else {
        opts.size
    };
    let mut out = Vec::new();
    if let Some(c) = series_chart(size, exp, r) {
        out.push(c);
    }
    let baseline = opts.baseline.as_ref().filter(|b| comparable(r, b.results));
    if r.rows.len() > 1 {
        let x = XAxis::of(exp, r, opts.x_scale);
        out.extend(sweep_chart(size, exp, r, &x, baseline));
        if r.variants.len() > 1 {
            out.extend(change_chart(size, r, &x, exp.repeats > 1));
        }
    } else {
        out.extend(variants_chart(size, r, baseline));
        if r.variants.len() > 1 {
            out.extend(change_bars(size, r));
        }
    }
    out
}

/// Whether `b` can be drawn under `r`: the same metric at the same sweep values.
fn comparable(r: &Results, b: &Results) -> bool {
    r.metric == b.metric
        && r.rows.len() == b.rows.len()
        && r.rows.iter().zip(&b.rows).all(|(x, y)| x.x == y.x)
}

fn y_desc(r: &Results) -> String {
    format!("{} ({})", r.metric.name, r.metric.unit)
}

fn better_words(b: Better) -> &'static str {
    match b {
        Better::Higher => "higher is better",
        Better::Lower => "lower is better",
    }
}

/// Draws a chart: plotters' frame, then `draw`'s own markup over it.
fn render(
    size: (u32, u32),
    id: &'static str,
    title: String,
    alt: String,
    draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> Result<String, String>,
) -> Option<Chart> {
    let mut svg = String::new();
    let over;
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE).ok()?;
        over = draw(&root).ok()?;
        root.present().ok()?;
    }
    let end = svg.rfind("</svg>")?;
    svg.insert_str(end, &over);
    let svg = svg.replacen(
        "<svg ",
        &format!("<svg role=\"group\" aria-label=\"{}\" ", esc(&alt)),
        1,
    );
    Some(Chart {
        id,
        title,
        svg,
        alt,
        size,
    })
}

/// Room above and below the data, so markers never sit on the frame.
fn padded(lo: f64, hi: f64) -> (f64, f64) {
    let span = (hi - lo).abs().max(hi.abs() * 0.05).max(1e-9);
    (
        (lo - span * 0.1).min(0.0f64.max(lo - span)),
        hi + span * 0.12,
    )
}

/// Room around a range that must show zero (changes in percent).
fn padded_around_zero(lo: f64, hi: f64) -> (f64, f64) {
    let (lo, hi) = (lo.min(0.0), hi.max(0.0));
    let span = (hi - lo).max(1.0);
    (lo - span * 0.12, hi + span * 0.12)
}

/// Axis numbers, short: 4.2M, 880k, 9.32.
pub fn short(v: f64) -> String {
    let a = v.abs();
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if a >= 1e6 {
        format!("{}M", trim(format!("{:.2}", v / 1e6)))
    } else if a >= 1e4 {
        format!("{}k", trim(format!("{:.1}", v / 1e3)))
    } else if a >= 100.0 || a == 0.0 {
        trim(format!("{v:.0}"))
    } else {
        // Three significant digits: 9.36, 0.0075.
        let decimals = (2 - a.log10().floor() as i32).clamp(0, 9) as usize;
        trim(format!("{v:.decimals$}"))
    }
}

fn pct(v: f64) -> String {
    format!("{v:+.2}%")
}

/// The corner of the plot with the fewest points, for the legend.
fn legend_corner(points: &[(f64, f64)], x: (f64, f64), y: (f64, f64)) -> (bool, bool) {
    let in_corner = |right: bool, top: bool| {
        points
            .iter()
            .filter(|(px, py)| {
                let fx = (px - x.0) / (x.1 - x.0).max(1e-12);
                let fy = (py - y.0) / (y.1 - y.0).max(1e-12);
                let near_x = if right { fx > 0.55 } else { fx < 0.45 };
                let near_y = if top { fy > 0.55 } else { fy < 0.45 };
                near_x && near_y
            })
            .count()
    };
    [(true, true), (false, true), (true, false), (false, false)]
        .into_iter()
        .min_by_key(|(r, t)| in_corner(*r, *t))
        .unwrap_or((true, true))
}

fn e<E: std::fmt::Debug>(err: E) -> String {
    format!("{err:?}")
}

type Coords = Cartesian2d<RangedCoordf64, RangedCoordf64>;
type Ctx<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Coords>;

/// What differs between the charts' frames.
struct Axes<'f> {
    x: std::ops::Range<f64>,
    y: std::ops::Range<f64>,
    x_desc: &'f str,
    y_desc: &'f str,
    /// How many x labels plotters places; 0 when they are drawn here.
    x_labels: usize,
    x_fmt: &'f dyn Fn(&f64) -> String,
    x_grid: bool,
    y_fmt: &'f dyn Fn(&f64) -> String,
}

/// A titled chart with labelled axes, in the one style every chart shares.
fn axes<'a, 'b>(
    root: &'a DrawingArea<SVGBackend<'b>, Shift>,
    title: &str,
    a: Axes,
) -> Result<Ctx<'a, 'b>, String> {
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 20))
        .margin(14)
        .x_label_area_size(42)
        .y_label_area_size(70)
        .build_cartesian_2d(a.x, a.y)
        .map_err(e)?;
    let mut mesh = chart.configure_mesh();
    if !a.x_grid {
        mesh.disable_x_mesh();
    }
    mesh.x_desc(a.x_desc)
        .y_desc(a.y_desc)
        .x_labels(a.x_labels)
        .x_label_formatter(a.x_fmt)
        .y_label_formatter(a.y_fmt)
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 16))
        .light_line_style(RGBColor(0xee, 0xee, 0xee))
        .draw()
        .map_err(e)?;
    Ok(chart)
}

/// A variant's line (its colour and dashes) through pixel points.
fn polyline(out: &mut String, i: usize, px: &[(i32, i32)], color: &str, width: f32) {
    if px.len() < 2 {
        return;
    }
    let points: Vec<String> = px.iter().map(|(x, y)| format!("{x},{y}")).collect();
    let dash = dashes(i);
    let dash = if dash.is_empty() {
        String::new()
    } else {
        format!(" stroke-dasharray=\"{dash}\"")
    };
    let _ = write!(
        out,
        "<polyline class=\"line\" fill=\"none\" stroke=\"{color}\" stroke-width=\"{width}\"{dash} points=\"{}\"/>",
        points.join(" ")
    );
}

/// A data marker: focusable, named by its exact value.
pub(crate) fn marker(
    out: &mut String,
    i: usize,
    variant: &str,
    x: &str,
    value: f64,
    at: (i32, i32),
    text: &str,
) {
    let _ = write!(
        out,
        "<g class=\"marker\" tabindex=\"0\" role=\"img\" aria-label=\"{t}\" data-variant=\"{v}\" data-x=\"{x}\" data-value=\"{value}\" transform=\"translate({} {})\"><title>{t}</title>{}</g>",
        at.0,
        at.1,
        marker_shape(i, &hex(palette(i))),
        t = esc(text),
        v = esc(variant),
        x = esc(x),
    );
}

/// A vertical error bar with caps, in pixels.
fn error_bar(out: &mut String, x: i32, y_lo: i32, y_hi: i32, color: &str) {
    let _ = write!(
        out,
        "<path class=\"error-bar\" fill=\"none\" stroke=\"{color}\" stroke-width=\"1.2\" d=\"M{x},{y_lo}V{y_hi}M{},{y_lo}H{}M{},{y_hi}H{}\"/>",
        x - 4,
        x + 4,
        x - 4,
        x + 4
    );
}

/// Legend entries from here on are the baseline's variants.
const BASELINE: usize = 1000;

/// The legend in a corner of the plot: each variant's line, marker and name.
fn legend(out: &mut String, chart: &Ctx, entries: &[(usize, String)], corner: (bool, bool)) {
    if entries.is_empty() {
        return;
    }
    let (xr, yr) = chart.plotting_area().get_pixel_range();
    let widest = entries
        .iter()
        .map(|(_, l)| l.chars().count())
        .max()
        .unwrap_or(1) as i32;
    let (w, h) = (52 + widest * 8, 8 + 20 * entries.len() as i32);
    let x0 = if corner.0 {
        xr.end - w - 8
    } else {
        xr.start + 8
    };
    let y0 = if corner.1 {
        yr.start + 8
    } else {
        yr.end - h - 8
    };
    let _ = write!(
        out,
        "<g class=\"legend\"><rect x=\"{x0}\" y=\"{y0}\" width=\"{w}\" height=\"{h}\" fill=\"#ffffff\" fill-opacity=\"0.88\" stroke=\"#cccccc\"/>"
    );
    for (row, (i, label)) in entries.iter().enumerate() {
        let y = y0 + 14 + 20 * row as i32;
        // Baseline entries are BASELINE + the variant's index: grey, its dashes.
        let baseline = *i >= BASELINE;
        let color = if baseline {
            "#9a9a9a".to_string()
        } else {
            hex(palette(*i))
        };
        let style = if baseline { i - BASELINE } else { *i };
        polyline(out, style, &[(x0 + 6, y), (x0 + 36, y)], &color, 2.0);
        if !baseline {
            let _ = write!(
                out,
                "<g transform=\"translate({} {y})\">{}</g>",
                x0 + 21,
                marker_shape(*i, &color)
            );
        }
        let _ = write!(
            out,
            "<text x=\"{}\" y=\"{}\" font-family=\"sans-serif\" font-size=\"14\" fill=\"#1d2430\">{}</text>",
            x0 + 44,
            y + 5,
            esc(label)
        );
    }
    out.push_str("</g>");
}

/// usecs/loop (or the tool's per-batch number) per printed batch.
fn series_chart(size: (u32, u32), exp: &Experiment, r: &Results) -> Option<Chart> {
    let row = r.rows.first()?;
    let series: Vec<(usize, &String, &Vec<f64>)> = r
        .variants
        .iter()
        .enumerate()
        .filter_map(|(i, v)| row.series.get(v).map(|s| (i, v, s)))
        .filter(|(_, _, s)| s.len() > 1)
        .collect();
    if series.is_empty() {
        return None;
    }
    let n = series.iter().map(|(_, _, s)| s.len()).max()?;
    let all = || series.iter().flat_map(|(_, _, s)| s.iter().copied());
    let lo = all().fold(f64::INFINITY, f64::min);
    let hi = all().fold(f64::NEG_INFINITY, f64::max);
    let (y0, y1) = padded(lo, hi);
    let title = format!("{} per batch", r.metric.name);
    let alt = format!(
        "Line chart of {} per batch, {n} batches. {}",
        y_desc(r),
        series
            .iter()
            .map(|(_, v, s)| range_words(
                v,
                s.iter()
                    .enumerate()
                    .map(|(b, y)| (format!("batch {}", b + 1), *y)),
                short
            ))
            .collect::<Vec<_>>()
            .join(" ")
    );
    render(size, "series", title.clone(), alt, |root| {
        let chart = axes(
            root,
            &title,
            Axes {
                x: 0.5..n as f64 + 0.5,
                y: y0..y1,
                x_desc: "batch",
                y_desc: &y_desc(r),
                x_labels: n.min(12),
                x_fmt: &|x| format!("{x:.0}"),
                x_grid: true,
                y_fmt: &|y| short(*y),
            },
        )?;
        let mut out = String::new();
        // The timeline's policy changes, between the batches they fall between.
        for (k, step) in exp
            .timeline
            .iter()
            .filter(|s| s.mark == "batch")
            .enumerate()
        {
            let x = step.count as f64 - 0.5;
            if x > 0.5 && x < n as f64 + 0.5 {
                let (px, top) = chart.backend_coord(&(x, y1));
                let (_, bottom) = chart.backend_coord(&(x, y0));
                let _ = write!(
                    out,
                    "<path class=\"flip\" stroke=\"#888888\" stroke-dasharray=\"4 4\" d=\"M{px},{top}V{bottom}\"/><text x=\"{}\" y=\"{}\" font-family=\"sans-serif\" font-size=\"12\" fill=\"#555555\">{}</text>",
                    px + 4,
                    top + 14 + 16 * (k as i32 % 3),
                    esc(&step.note)
                );
            }
        }
        let mut legend_entries = Vec::new();
        let mut all_points = Vec::new();
        for (i, label, ys) in &series {
            let points: Vec<(f64, f64)> = ys
                .iter()
                .enumerate()
                .map(|(b, y)| (b as f64 + 1.0, *y))
                .collect();
            let px: Vec<(i32, i32)> = points.iter().map(|p| chart.backend_coord(p)).collect();
            polyline(&mut out, *i, &px, &hex(palette(*i)), 2.0);
            for ((b, y), at) in ys.iter().enumerate().zip(&px) {
                let text = format!(
                    "{label}, batch {}: {} {}",
                    b + 1,
                    schedlab::report::num(*y),
                    r.metric.unit
                );
                marker(&mut out, *i, label, &(b + 1).to_string(), *y, *at, &text);
            }
            legend_entries.push((*i, label.to_string()));
            all_points.extend(points);
        }
        let corner = legend_corner(&all_points, (0.5, n as f64 + 0.5), (y0, y1));
        legend(&mut out, &chart, &legend_entries, corner);
        Ok(out)
    })
}

/// "B from 12.3 at 1 to 45.6 at 64." for a variant's values.
fn range_words(
    variant: &str,
    values: impl Iterator<Item = (String, f64)>,
    fmt: fn(f64) -> String,
) -> String {
    let v: Vec<(String, f64)> = values.collect();
    let lo = v.iter().min_by(|a, b| a.1.total_cmp(&b.1));
    let hi = v.iter().max_by(|a, b| a.1.total_cmp(&b.1));
    match (lo, hi) {
        (Some(lo), Some(hi)) if v.len() > 1 => format!(
            "{variant}: lowest {} at {}, highest {} at {}.",
            fmt(lo.1),
            lo.0,
            fmt(hi.1),
            hi.0
        ),
        (Some(one), _) => format!("{variant}: {} at {}.", fmt(one.1), one.0),
        _ => String::new(),
    }
}

/// The x axis of a sweep: numeric (linear or log-2) or by position.
struct XAxis {
    param: String,
    /// Where each row sits, in chart coordinates.
    pos: Vec<f64>,
    labels: Vec<String>,
    scale: Option<XScale>,
    range: (f64, f64),
}

impl XAxis {
    fn of(exp: &Experiment, r: &Results, chosen: Option<XScale>) -> XAxis {
        let param = exp
            .sweep
            .as_ref()
            .map(|s| s.param.clone())
            .unwrap_or_default();
        let labels: Vec<String> = r
            .rows
            .iter()
            .map(|row| row.x.as_ref().map(crate::fields::plain).unwrap_or_default())
            .collect();
        let (pos, scale) = match numeric_xs(r) {
            Some(xs) => {
                let scale = match chosen.unwrap_or_else(|| auto_scale(&xs)) {
                    XScale::Log2 if log_possible(&xs) => XScale::Log2,
                    _ => XScale::Linear,
                };
                let pos = match scale {
                    XScale::Log2 => xs.iter().map(|x| x.log2()).collect(),
                    XScale::Linear => xs,
                };
                (pos, Some(scale))
            }
            None => ((0..r.rows.len()).map(|i| i as f64).collect(), None),
        };
        let lo = pos.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = pos.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let pad = ((hi - lo) * 0.06).max(0.5);
        XAxis {
            param,
            pos,
            labels,
            scale,
            range: (lo - pad, hi + pad),
        }
    }

    /// Whether the labels are drawn here, at the data (log and categorical).
    fn own_labels(&self) -> bool {
        self.scale != Some(XScale::Linear)
    }

    fn desc(&self) -> String {
        match self.scale {
            Some(XScale::Log2) => format!("{} (log₂ scale)", self.param),
            _ => self.param.clone(),
        }
    }

    /// The frame for this axis and `y`.
    fn frame<'a, 'b>(
        &self,
        root: &'a DrawingArea<SVGBackend<'b>, Shift>,
        title: &str,
        y: (f64, f64),
        y_desc: &str,
        y_fmt: &dyn Fn(&f64) -> String,
    ) -> Result<(Ctx<'a, 'b>, String), String> {
        let own = self.own_labels();
        let chart = axes(
            root,
            title,
            Axes {
                x: self.range.0..self.range.1,
                y: y.0..y.1,
                x_desc: &self.desc(),
                y_desc,
                x_labels: if own { 0 } else { 10 },
                x_fmt: &|x| short(*x),
                x_grid: !own,
                y_fmt,
            },
        )?;
        let mut out = String::new();
        if own {
            // A tick, grid line and label at each value, skipping labels that
            // would overlap the previous one.
            let (_, yr) = chart.plotting_area().get_pixel_range();
            let mut last_right = i32::MIN;
            let mut order: Vec<usize> = (0..self.pos.len()).collect();
            order.sort_by(|a, b| self.pos[*a].total_cmp(&self.pos[*b]));
            for i in order {
                let (px, _) = chart.backend_coord(&(self.pos[i], y.0));
                let label = &self.labels[i];
                let half = (label.chars().count() as i32 * 8) / 2 + 3;
                let _ = write!(
                    out,
                    "<path stroke=\"#eeeeee\" d=\"M{px},{}V{}\"/><path stroke=\"#000000\" d=\"M{px},{}V{}\"/>",
                    yr.start,
                    yr.end,
                    yr.end,
                    yr.end + 5
                );
                if px - half > last_right {
                    let _ = write!(
                        out,
                        "<text class=\"x-label\" x=\"{px}\" y=\"{}\" text-anchor=\"middle\" font-family=\"sans-serif\" font-size=\"15\" fill=\"#000000\">{}</text>",
                        yr.end + 21,
                        esc(label)
                    );
                    last_right = px + half;
                }
            }
        }
        Ok((chart, out))
    }
}

/// The metric against the sweep value, a line per variant.
fn sweep_chart(
    size: (u32, u32),
    exp: &Experiment,
    r: &Results,
    x: &XAxis,
    baseline: Option<&Baseline>,
) -> Option<Chart> {
    let repeated = exp.repeats > 1;
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    let mut extend = |r: &Results| {
        for row in &r.rows {
            for v in &r.variants {
                let (a, b) = if repeated {
                    (row.spread[v].min, row.spread[v].max)
                } else {
                    (row.values[v], row.values[v])
                };
                lo = lo.min(a).min(row.values[v]);
                hi = hi.max(b).max(row.values[v]);
            }
        }
    };
    extend(r);
    if let Some(b) = baseline {
        extend(b.results);
    }
    let (y0, y1) = padded(lo, hi);
    let title = format!("{} by {}", r.metric.name, x.param);
    let alt = format!(
        "Line chart of {} ({}) by {}{}. {}",
        y_desc(r),
        better_words(r.metric.better),
        x.param,
        if x.scale == Some(XScale::Log2) {
            " on a log-2 axis"
        } else {
            ""
        },
        r.variants
            .iter()
            .map(|v| range_words(
                v,
                r.rows
                    .iter()
                    .zip(&x.labels)
                    .map(|(row, l)| (format!("{} {l}", x.param), row.values[v])),
                short
            ))
            .collect::<Vec<_>>()
            .join(" ")
    );
    render(size, "sweep", title.clone(), alt, |root| {
        let (chart, mut out) = x.frame(root, &title, (y0, y1), &y_desc(r), &|y| short(*y))?;
        let mut legend_entries = Vec::new();
        if let Some(b) = baseline {
            for (bi, v) in b.results.variants.iter().enumerate() {
                let px: Vec<(i32, i32)> = x
                    .pos
                    .iter()
                    .zip(&b.results.rows)
                    .map(|(px, row)| chart.backend_coord(&(*px, row.values[v])))
                    .collect();
                out.push_str("<g class=\"baseline\" opacity=\"0.8\">");
                polyline(&mut out, bi, &px, "#9a9a9a", 1.5);
                for (at, (row, l)) in px.iter().zip(b.results.rows.iter().zip(&x.labels)) {
                    let _ = write!(
                        out,
                        "<circle cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"#ffffff\" stroke=\"#9a9a9a\"><title>{}</title></circle>",
                        at.0,
                        at.1,
                        esc(&format!("{} {v} at {} {l}: {}", b.name, x.param, schedlab::report::num(row.values[v])))
                    );
                }
                out.push_str("</g>");
                legend_entries.push((BASELINE + bi, format!("{} {v}", b.name)));
            }
        }
        for (i, v) in r.variants.iter().enumerate() {
            let color = hex(palette(i));
            let px: Vec<(i32, i32)> = x
                .pos
                .iter()
                .zip(&r.rows)
                .map(|(px, row)| chart.backend_coord(&(*px, row.values[v])))
                .collect();
            if repeated {
                for ((p, row), at) in x.pos.iter().zip(&r.rows).zip(&px) {
                    let s = &row.spread[v];
                    let (_, lo) = chart.backend_coord(&(*p, s.min));
                    let (_, hi) = chart.backend_coord(&(*p, s.max));
                    error_bar(&mut out, at.0, lo, hi, &color);
                }
            }
            polyline(&mut out, i, &px, &color, 2.0);
            for ((row, l), at) in r.rows.iter().zip(&x.labels).zip(&px) {
                let value = row.values[v];
                let mut text = format!(
                    "{v} at {} {l}: {} {}",
                    x.param,
                    schedlab::report::num(value),
                    r.metric.unit
                );
                if repeated {
                    let s = &row.spread[v];
                    let _ = write!(
                        text,
                        " (mean of {}; {} to {})",
                        exp.repeats,
                        schedlab::report::num(s.min),
                        schedlab::report::num(s.max)
                    );
                }
                marker(&mut out, i, v, l, value, *at, &text);
            }
            legend_entries.push((i, v.clone()));
        }
        let all: Vec<(f64, f64)> = r
            .variants
            .iter()
            .flat_map(|v| {
                x.pos
                    .iter()
                    .zip(&r.rows)
                    .map(move |(p, row)| (*p, row.values[v]))
            })
            .collect();
        let corner = legend_corner(&all, x.range, (y0, y1));
        legend(&mut out, &chart, &legend_entries, corner);
        Ok(out)
    })
}

/// Variant `v` against `a` in percent at one row, and its range when
/// repeated (the lowest of `v` over the highest of `a`, and the reverse).
fn change_at(row: &schedlab::experiment::Row, a: &str, v: &str) -> Option<Change> {
    let (va, vv) = (row.values[a], row.values[v]);
    if va == 0.0 {
        return None;
    }
    let (sa, sv) = (&row.spread[a], &row.spread[v]);
    let c = |num: f64, den: f64| (num / den - 1.0) * 100.0;
    let lo = if sa.max > 0.0 {
        c(sv.min, sa.max)
    } else {
        c(vv, va)
    };
    let hi = if sa.min > 0.0 {
        c(sv.max, sa.min)
    } else {
        c(vv, va)
    };
    Some((c(vv, va), lo.min(hi), hi.max(lo)))
}

/// A change in percent, and its range when repeated.
type Change = (f64, f64, f64);

/// Each later variant against the first, in percent per sweep point.
fn change_chart(size: (u32, u32), r: &Results, x: &XAxis, repeated: bool) -> Option<Chart> {
    let a = r.variants.first()?;
    let changes: Vec<(usize, &String, Vec<Option<Change>>)> = r
        .variants
        .iter()
        .enumerate()
        .skip(1)
        .map(|(i, v)| {
            (
                i,
                v,
                r.rows.iter().map(|row| change_at(row, a, v)).collect(),
            )
        })
        .collect();
    let (mut lo, mut hi) = (0.0f64, 0.0f64);
    for (_, _, cs) in &changes {
        for (c, l, h) in cs.iter().flatten() {
            lo = lo.min(*c).min(if repeated { *l } else { *c });
            hi = hi.max(*c).max(if repeated { *h } else { *c });
        }
    }
    let (y0, y1) = padded_around_zero(lo, hi);
    let title = format!("change against {a} by {}", x.param);
    let alt = format!(
        "Line chart of each variant's change in {} against {a}, in percent, by {} ({}). {}",
        r.metric.name,
        x.param,
        better_words(r.metric.better),
        changes
            .iter()
            .map(|(_, v, cs)| range_words(
                v,
                cs.iter()
                    .zip(&x.labels)
                    .filter_map(|(c, l)| c.map(|c| (format!("{} {l}", x.param), c.0))),
                pct
            ))
            .collect::<Vec<_>>()
            .join(" ")
    );
    render(size, "change", title.clone(), alt, |root| {
        let y_desc = format!("% against {a} ({})", better_words(r.metric.better));
        let (chart, mut out) = x.frame(root, &title, (y0, y1), &y_desc, &pct_axis(y1 - y0))?;
        let (xr, _) = chart.plotting_area().get_pixel_range();
        let (_, zero) = chart.backend_coord(&(x.range.0, 0.0));
        let _ = write!(
            out,
            "<path class=\"zero\" stroke=\"#555555\" stroke-width=\"1.2\" d=\"M{},{zero}H{}\"/>",
            xr.start, xr.end
        );
        let mut legend_entries = Vec::new();
        for (i, v, cs) in &changes {
            let color = hex(palette(*i));
            let pts: Vec<(f64, Change, &String)> = x
                .pos
                .iter()
                .zip(cs)
                .zip(&x.labels)
                .filter_map(|((p, c), l)| c.map(|c| (*p, c, l)))
                .collect();
            let px: Vec<(i32, i32)> = pts
                .iter()
                .map(|(p, c, _)| chart.backend_coord(&(*p, c.0)))
                .collect();
            if repeated {
                for ((p, c, _), at) in pts.iter().zip(&px) {
                    let (_, l) = chart.backend_coord(&(*p, c.1));
                    let (_, h) = chart.backend_coord(&(*p, c.2));
                    error_bar(&mut out, at.0, l, h, &color);
                }
            }
            polyline(&mut out, *i, &px, &color, 2.0);
            for ((_, c, l), at) in pts.iter().zip(&px) {
                let mut text = format!("{v} against {a} at {} {l}: {}", x.param, pct(c.0));
                if repeated {
                    let _ = write!(text, " ({} to {})", pct(c.1), pct(c.2));
                }
                marker(
                    &mut out,
                    *i,
                    v,
                    l,
                    (c.0 * 100.0).round() / 100.0,
                    *at,
                    &text,
                );
            }
            legend_entries.push((*i, (*v).clone()));
        }
        let all: Vec<(f64, f64)> = changes
            .iter()
            .flat_map(|(_, _, cs)| {
                x.pos
                    .iter()
                    .zip(cs)
                    .filter_map(|(p, c)| c.map(|c| (*p, c.0)))
            })
            .chain(x.pos.iter().map(|p| (*p, 0.0)))
            .collect();
        let corner = legend_corner(&all, x.range, (y0, y1));
        legend(&mut out, &chart, &legend_entries, corner);
        Ok(out)
    })
}

/// Bars at `values` (variant index, label, value), labelled above with `fmt`.
fn bars(out: &mut String, chart: &Ctx, values: &[(usize, String, f64, String)], baseline: &[f64]) {
    for (slot, (i, label, v, text)) in values.iter().enumerate() {
        let x = slot as f64;
        let (l, top) = chart.backend_coord(&(x - 0.3, v.max(0.0)));
        let (r, bottom) = chart.backend_coord(&(x + 0.3, v.min(0.0)));
        let color = hex(palette(*i));
        let _ = write!(
            out,
            "<g class=\"marker bar\" tabindex=\"0\" role=\"img\" aria-label=\"{t}\" data-variant=\"{lab}\" data-value=\"{v}\"><title>{t}</title><rect x=\"{l}\" y=\"{top}\" width=\"{}\" height=\"{}\" fill=\"{color}\"/></g>",
            r - l,
            (bottom - top).max(1),
            t = esc(text),
            lab = esc(label),
        );
        if let Some(b) = baseline.get(slot) {
            let (_, by) = chart.backend_coord(&(x, *b));
            let _ = write!(
                out,
                "<path class=\"baseline\" stroke=\"#555555\" stroke-width=\"2\" stroke-dasharray=\"5 3\" d=\"M{},{by}H{}\"/>",
                l - 6,
                r + 6
            );
        }
        let label_y = if *v >= 0.0 { top - 6 } else { bottom + 16 };
        let _ = write!(
            out,
            "<text x=\"{}\" y=\"{label_y}\" text-anchor=\"middle\" font-family=\"sans-serif\" font-size=\"13\" fill=\"#1d2430\">{}</text>",
            (l + r) / 2,
            esc(text.rsplit(": ").next().unwrap_or(text))
        );
    }
}

/// Without a sweep: a bar per variant.
fn variants_chart(size: (u32, u32), r: &Results, baseline: Option<&Baseline>) -> Option<Chart> {
    let row = r.rows.first()?;
    let values: Vec<(usize, String, f64, String)> = r
        .variants
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let value = row.values[v];
            let text = format!("{v}: {}", schedlab::report::num(value));
            (i, v.clone(), value, text)
        })
        .collect();
    let base: Vec<f64> = baseline
        .map(|b| {
            b.results
                .variants
                .iter()
                .map(|v| b.results.rows[0].values[v])
                .collect()
        })
        .unwrap_or_default();
    let hi = values
        .iter()
        .map(|v| v.2)
        .chain(base.iter().copied())
        .fold(0.0f64, f64::max)
        .max(1e-9);
    let n = values.len();
    let title = format!("{} by variant", r.metric.name);
    let alt = format!(
        "Bar chart of {} ({}): {}.",
        y_desc(r),
        better_words(r.metric.better),
        values
            .iter()
            .map(|v| v.3.clone())
            .collect::<Vec<_>>()
            .join(", ")
    );
    render(size, "variants", title.clone(), alt, |root| {
        let formatter = |x: &f64| {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 0.0 {
                r.variants.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        };
        let chart = axes(
            root,
            &title,
            Axes {
                x: -0.5..n as f64 - 0.5,
                y: 0.0..hi * 1.15,
                x_desc: "",
                y_desc: &y_desc(r),
                x_labels: n,
                x_fmt: &formatter,
                x_grid: false,
                y_fmt: &|y| short(*y),
            },
        )?;
        let mut out = String::new();
        let base = if base.len() == n {
            base.clone()
        } else {
            Vec::new()
        };
        bars(&mut out, &chart, &values, &base);
        if !base.is_empty() {
            if let Some(b) = baseline {
                legend(
                    &mut out,
                    &chart,
                    &[(BASELINE + 1, format!("{} (dashed)", b.name))],
                    (true, true),
                );
            }
        }
        Ok(out)
    })
}

/// Without a sweep: each later variant's change against the first.
fn change_bars(size: (u32, u32), r: &Results) -> Option<Chart> {
    let row = r.rows.first()?;
    let a = r.variants.first()?;
    let values: Vec<(usize, String, f64, String)> = r
        .variants
        .iter()
        .enumerate()
        .skip(1)
        .filter_map(|(i, v)| {
            let (c, _, _) = change_at(row, a, v)?;
            Some((i, v.clone(), c, format!("{v} against {a}: {}", pct(c))))
        })
        .collect();
    if values.is_empty() {
        return None;
    }
    let lo = values.iter().map(|v| v.2).fold(0.0f64, f64::min);
    let hi = values.iter().map(|v| v.2).fold(0.0f64, f64::max);
    let (y0, y1) = padded_around_zero(lo, hi);
    let n = values.len();
    let title = format!("change against {a}");
    let alt = format!(
        "Bar chart of each variant's change in {} against {a}, in percent ({}): {}.",
        r.metric.name,
        better_words(r.metric.better),
        values
            .iter()
            .map(|v| v.3.clone())
            .collect::<Vec<_>>()
            .join(", ")
    );
    render(size, "change", title.clone(), alt, |root| {
        let formatter = |x: &f64| {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 0.0 {
                values
                    .get(i as usize)
                    .map(|v| v.1.clone())
                    .unwrap_or_default()
            } else {
                String::new()
            }
        };
        let y_desc = format!("% against {a} ({})", better_words(r.metric.better));
        let chart = axes(
            root,
            &title,
            Axes {
                x: -0.5..n as f64 - 0.5,
                y: y0..y1,
                x_desc: "",
                y_desc: &y_desc,
                x_labels: n,
                x_fmt: &formatter,
                x_grid: false,
                y_fmt: &pct_axis(y1 - y0),
            },
        )?;
        let mut out = String::new();
        bars(&mut out, &chart, &values, &[]);
        let (xr, _) = chart.plotting_area().get_pixel_range();
        let (_, zero) = chart.backend_coord(&(0.0, 0.0));
        let _ = write!(
            out,
            "<path class=\"zero\" stroke=\"#555555\" stroke-width=\"1.2\" d=\"M{},{zero}H{}\"/>",
            xr.start, xr.end
        );
        Ok(out)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab::experiment::run_all;
    use schedlab::presets;

    fn results(name: &str, edit: impl FnOnce(&mut Experiment)) -> (Experiment, Results) {
        let mut exp = presets::get(name).unwrap();
        edit(&mut exp);
        let r = run_all(&exp, &mut |_, _| true).unwrap();
        (exp, r)
    }

    /// Data markers, in drawing order: (variant, x, value, name).
    fn markers(svg: &str) -> Vec<(String, String, f64, String)> {
        let attr = |tag: &str, name: &str| -> String {
            let key = format!("{name}=\"");
            tag.find(&key)
                .map(|i| {
                    let rest = &tag[i + key.len()..];
                    rest[..rest.find('"').unwrap()].to_string()
                })
                .unwrap_or_default()
        };
        svg.split("<g class=\"marker")
            .skip(1)
            .map(|m| {
                let tag = &m[..m.find('>').unwrap()];
                (
                    attr(tag, "data-variant"),
                    attr(tag, "data-x"),
                    attr(tag, "data-value").parse().unwrap(),
                    attr(tag, "aria-label"),
                )
            })
            .collect()
    }

    fn sweep_exp(e: &mut Experiment, values: &[u64], repeats: u32) {
        e.sweep = Some(schedlab::experiment::Sweep {
            param: "loops".into(),
            values: values.iter().map(|v| (*v).into()).collect(),
        });
        e.repeats = repeats;
    }

    #[test]
    fn axis_numbers_are_short() {
        assert_eq!(short(4_000_000.0), "4M");
        assert_eq!(short(3_652_266.67), "3.65M");
        assert_eq!(short(886_666.67), "886.7k");
        assert_eq!(short(250.0), "250");
        assert_eq!(short(9.3567), "9.36");
        assert_eq!(short(0.0), "0");
        assert_eq!(short(0.008), "0.008");
        assert_eq!(short(0.0075), "0.0075");
        assert_eq!(short(12.345), "12.3");
    }

    #[test]
    fn geometric_sweeps_get_a_log_axis() {
        let pow2: Vec<f64> = (0..10).map(|i| f64::from(1u32 << i)).collect();
        assert_eq!(auto_scale(&pow2), XScale::Log2);
        assert_eq!(
            auto_scale(&[1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0]),
            XScale::Log2
        );
        assert_eq!(auto_scale(&[10.0, 20.0, 30.0, 40.0, 50.0]), XScale::Linear);
        assert_eq!(
            auto_scale(&[100.0, 110.0, 121.0]),
            XScale::Linear,
            "a factor under four"
        );
        assert_eq!(
            auto_scale(&[0.0, 1.0, 2.0, 4.0]),
            XScale::Linear,
            "zero has no logarithm"
        );
        assert_eq!(auto_scale(&[2.0, 20.0, 40.0, 80.0, 160.0]), XScale::Log2);
    }

    #[test]
    fn the_flip_timeline_draws_its_series_and_the_flips() {
        let (exp, r) = results("retune-pipe-test-flip", |_| {});
        let charts = charts_for(&exp, &r, &Options::default());
        let series = charts.iter().find(|c| c.id == "series").unwrap();
        let m = markers(&series.svg);
        assert_eq!(m.len(), r.rows[0].series["flip"].len());
        assert_eq!(m[0].2, r.rows[0].series["flip"][0]);
        assert!(series.svg.contains("+WAKE_AFFINE on domain0+domain1"));
        assert!(series.svg.contains("usecs/loop (us)"));
        assert!(series.alt.contains("per batch"));
        assert!(charts.iter().any(|c| c.id == "variants"));
    }

    #[test]
    fn a_repeated_sweep_has_a_marker_per_point_error_bars_and_a_change_chart() {
        let (exp, r) = results("kvm-pipe-test-pinning", |e| {
            sweep_exp(e, &[500, 1000, 2000], 2)
        });
        let charts = charts_for(&exp, &r, &Options::default());
        let sweep = charts.iter().find(|c| c.id == "sweep").unwrap();
        let m = markers(&sweep.svg);
        assert_eq!(m.len(), 3 * 2);
        let [a, b] = [&r.variants[0], &r.variants[1]];
        assert_eq!(
            (m[0].0.as_str(), m[0].1.as_str(), m[0].2),
            (a.as_str(), "500", r.rows[0].values[a])
        );
        assert_eq!(m[5].0, *b);
        assert!(
            m[5].3.starts_with(&format!("{b} at loops 2000: ")),
            "{}",
            m[5].3
        );
        assert_eq!(sweep.svg.matches("class=\"error-bar\"").count(), 6);
        assert!(
            sweep.svg.contains("loops (log₂ scale)"),
            "500, 1000, 2000 double"
        );
        assert!(
            sweep.svg.contains("stroke-dasharray=\"8 4\""),
            "B's line is dashed"
        );
        assert!(
            sweep.svg.contains("<rect x=\"-6\""),
            "B's markers are squares"
        );

        let change = charts.iter().find(|c| c.id == "change").unwrap();
        let m = markers(&change.svg);
        assert_eq!(m.len(), 3, "one line: B against A");
        let expected = (r.rows[1].values[b] / r.rows[1].values[a] - 1.0) * 100.0;
        assert!((m[1].2 - expected).abs() < 0.01, "{m:?} {expected}");
        assert!(
            m[1].3
                .contains(&format!("{b} against {a} at loops 1000: {expected:+.2}%")),
            "{}",
            m[1].3
        );
        assert_eq!(change.svg.matches("class=\"error-bar\"").count(), 3);
        assert!(change.svg.contains("class=\"zero\""));
        assert!(change
            .svg
            .starts_with("<svg role=\"group\" aria-label=\"Line chart of each"));

        let linear = charts_for(
            &exp,
            &r,
            &Options {
                x_scale: Some(XScale::Linear),
                ..Options::default()
            },
        );
        assert!(!linear[0].svg.contains("log₂"));
    }

    #[test]
    fn without_a_sweep_bars_and_change_bars_and_a_baseline_dash() {
        let (exp, r) = results("kvm-pipe-test-pinning", |_| {});
        let opts = Options {
            baseline: Some(Baseline {
                name: "run 1".into(),
                results: &r,
            }),
            ..Options::default()
        };
        let mut charts = charts_for(&exp, &r, &opts);
        charts.retain(|c| c.id != "series");
        let ids: Vec<&str> = charts.iter().map(|c| c.id).collect();
        assert_eq!(ids, ["variants", "change"]);
        assert_eq!(markers(&charts[0].svg).len(), 2);
        assert!(charts[0].svg.contains("class=\"baseline\""));
        assert!(charts[0].svg.contains("run 1 (dashed)"));
        assert_eq!(markers(&charts[1].svg).len(), 1);
    }

    #[test]
    fn labels_are_escaped() {
        let (exp, r) = results("kvm-pipe-test-pinning", |e| {
            e.variants[1].label = "<b>&\"x\"".into();
        });
        for c in charts_for(&exp, &r, &Options::default()) {
            assert!(!c.svg.contains("<b>"), "{}", c.id);
        }
    }
}

#[cfg(test)]
mod dump {
    /// `cargo test -p schedlab-web dump_charts -- --ignored` writes the
    /// charts of a few presets to $SCHEDLAB_DUMP (for looking at them).
    #[test]
    #[ignore]
    fn dump_charts() {
        let dir = std::env::var("SCHEDLAB_DUMP").unwrap_or_else(|_| "/tmp/charts".into());
        std::fs::create_dir_all(&dir).unwrap();
        let mut page = String::from("<html><body style='background:#fff'>");
        for name in [
            "retune-sysbench-pgsql",
            "waweight-tbench",
            "retune-pipe-test-flip",
        ] {
            let exp = schedlab::presets::get(name).unwrap();
            let r = schedlab::experiment::run_all(&exp, &mut |_, _| true).unwrap();
            for c in super::charts_for(&exp, &r, &super::Options::default()) {
                page.push_str(&format!(
                    "<div style='width:720px;display:inline-block'>{}</div>",
                    c.svg
                ));
            }
        }
        std::fs::write(format!("{dir}/charts.html"), page).unwrap();
    }
}

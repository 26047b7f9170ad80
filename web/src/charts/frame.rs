//! The frame plotters draws (caption, axes, grid) and what is drawn over
//! it here: lines, markers, error bars, bars and the legend.

use super::{model::*, style::*, svg::*};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

/// Draws a chart: an outer `<svg>` holding plotters' frame (its own
/// `<svg>`, at 0,0 of the same size) and then `draw`'s elements over it.
pub(super) fn render(
    size: (u32, u32),
    id: &'static str,
    title: String,
    alt: String,
    draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> Result<Vec<El>, String>,
) -> Option<Chart> {
    let mut frame = String::new();
    let over;
    {
        let root = SVGBackend::with_string(&mut frame, size).into_drawing_area();
        root.fill(&WHITE).ok()?;
        over = draw(&root).ok()?;
        root.present().ok()?;
    }
    let (w, h) = size;
    let mut svg = String::new();
    El::new("svg")
        .attr("xmlns", "http://www.w3.org/2000/svg")
        .attr("width", w)
        .attr("height", h)
        .attr("viewBox", format!("0 0 {w} {h}"))
        .attr("role", "group")
        .attr("aria-label", &alt)
        .child(Node::Frame(frame))
        .children(over)
        .write(&mut svg);
    Some(Chart {
        id,
        title,
        svg,
        alt,
        size,
    })
}

/// Room above and below the data, so markers never sit on the frame.
pub(super) fn padded(lo: f64, hi: f64) -> (f64, f64) {
    let span = (hi - lo).abs().max(hi.abs() * 0.05).max(1e-9);
    (
        (lo - span * 0.1).min(0.0f64.max(lo - span)),
        hi + span * 0.12,
    )
}

/// Room around a range that must show zero (changes in percent).
pub(super) fn padded_around_zero(lo: f64, hi: f64) -> (f64, f64) {
    let (lo, hi) = (lo.min(0.0), hi.max(0.0));
    let span = (hi - lo).max(1.0);
    (lo - span * 0.12, hi + span * 0.12)
}

/// The corner of the plot with the fewest points, for the legend.
pub(super) fn legend_corner(points: &[(f64, f64)], x: (f64, f64), y: (f64, f64)) -> (bool, bool) {
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

pub(super) type Coords = Cartesian2d<RangedCoordf64, RangedCoordf64>;

pub(super) type Ctx<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Coords>;

/// What differs between the charts' frames.
pub(super) struct Axes<'f> {
    pub(super) x: std::ops::Range<f64>,
    pub(super) y: std::ops::Range<f64>,
    pub(super) x_desc: &'f str,
    pub(super) y_desc: &'f str,
    /// How many x labels plotters places; 0 when they are drawn here.
    pub(super) x_labels: usize,
    pub(super) x_fmt: &'f dyn Fn(&f64) -> String,
    pub(super) x_grid: bool,
    pub(super) y_fmt: &'f dyn Fn(&f64) -> String,
}

/// A titled chart with labelled axes, in the one style every chart shares.
pub(super) fn axes<'a, 'b>(
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
pub(super) fn polyline(i: usize, px: &[(i32, i32)], color: &str, width: f32) -> Option<El> {
    if px.len() < 2 {
        return None;
    }
    let points: Vec<String> = px.iter().map(|(x, y)| format!("{x},{y}")).collect();
    let mut line = El::new("polyline")
        .attr("class", "line")
        .attr("fill", "none")
        .attr("stroke", color)
        .attr("stroke-width", width);
    if !dashes(i).is_empty() {
        line = line.attr("stroke-dasharray", dashes(i));
    }
    Some(line.attr("points", points.join(" ")))
}

/// A vertical error bar with caps, in pixels.
pub(super) fn error_bar(x: i32, y_lo: i32, y_hi: i32, color: &str) -> El {
    let (l, r) = (x - 4, x + 4);
    El::new("path")
        .attr("class", "error-bar")
        .attr("fill", "none")
        .attr("stroke", color)
        .attr("stroke-width", 1.2)
        .attr(
            "d",
            format!("M{x},{y_lo}V{y_hi}M{l},{y_lo}H{r}M{l},{y_hi}H{r}"),
        )
}

/// Legend entries from here on are the baseline's variants.
pub(super) const BASELINE: usize = 1000;

/// The legend in a corner of the plot: each variant's line, marker and name.
pub(super) fn legend(chart: &Ctx, entries: &[(usize, String)], corner: (bool, bool)) -> Option<El> {
    if entries.is_empty() {
        return None;
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
    let mut g = El::new("g").attr("class", "legend").child(
        El::new("rect")
            .attr("x", x0)
            .attr("y", y0)
            .attr("width", w)
            .attr("height", h)
            .attr("fill", "#ffffff")
            .attr("fill-opacity", 0.88)
            .attr("stroke", "#cccccc"),
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
        g = g.children(polyline(style, &[(x0 + 6, y), (x0 + 36, y)], &color, 2.0));
        if !baseline {
            g = g.child(
                El::new("g")
                    .attr("transform", format!("translate({} {y})", x0 + 21))
                    .child(marker_shape(*i, &color)),
            );
        }
        g = g.child(
            El::new("text")
                .attr("x", x0 + 44)
                .attr("y", y + 5)
                .attr("font-family", "sans-serif")
                .attr("font-size", 14)
                .attr("fill", "#1d2430")
                .text(label),
        );
    }
    Some(g)
}

/// Bars at `values` (variant index, label, value, text), labelled above
/// with the text after its last ": ".
pub(super) fn bars(
    chart: &Ctx,
    values: &[(usize, String, f64, String)],
    baseline: &[f64],
) -> Vec<El> {
    let mut out = Vec::new();
    for (slot, (i, label, v, text)) in values.iter().enumerate() {
        let x = slot as f64;
        let (l, top) = chart.backend_coord(&(x - 0.3, v.max(0.0)));
        let (r, bottom) = chart.backend_coord(&(x + 0.3, v.min(0.0)));
        out.push(
            El::new("g")
                .attr("class", "marker bar")
                .attr("tabindex", 0)
                .attr("role", "img")
                .attr("aria-label", text)
                .attr("data-variant", label)
                .attr("data-value", v)
                .child(El::new("title").text(text))
                .child(
                    El::new("rect")
                        .attr("x", l)
                        .attr("y", top)
                        .attr("width", r - l)
                        .attr("height", (bottom - top).max(1))
                        .attr("fill", hex(palette(*i))),
                ),
        );
        if let Some(b) = baseline.get(slot) {
            let (_, by) = chart.backend_coord(&(x, *b));
            out.push(
                El::new("path")
                    .attr("class", "baseline")
                    .attr("stroke", "#555555")
                    .attr("stroke-width", 2)
                    .attr("stroke-dasharray", "5 3")
                    .attr("d", format!("M{},{by}H{}", l - 6, r + 6)),
            );
        }
        let label_y = if *v >= 0.0 { top - 6 } else { bottom + 16 };
        out.push(
            El::new("text")
                .attr("x", (l + r) / 2)
                .attr("y", label_y)
                .attr("text-anchor", "middle")
                .attr("font-family", "sans-serif")
                .attr("font-size", 13)
                .attr("fill", "#1d2430")
                .text(text.rsplit(": ").next().unwrap_or(text)),
        );
    }
    out
}

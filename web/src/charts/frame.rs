//! The frame plotters draws (caption, axes, grid) and what is drawn over
//! it here: lines, markers, error bars, bars and the legend.

use super::{model::*, style::*};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::fmt::Write;

/// Draws a chart: plotters' frame, then `draw`'s own markup over it.
pub(super) fn render(
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
pub(super) fn polyline(out: &mut String, i: usize, px: &[(i32, i32)], color: &str, width: f32) {
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

/// A vertical error bar with caps, in pixels.
pub(super) fn error_bar(out: &mut String, x: i32, y_lo: i32, y_hi: i32, color: &str) {
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
pub(super) const BASELINE: usize = 1000;

/// The legend in a corner of the plot: each variant's line, marker and name.
pub(super) fn legend(
    out: &mut String,
    chart: &Ctx,
    entries: &[(usize, String)],
    corner: (bool, bool),
) {
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

/// Bars at `values` (variant index, label, value), labelled above with `fmt`.
pub(super) fn bars(
    out: &mut String,
    chart: &Ctx,
    values: &[(usize, String, f64, String)],
    baseline: &[f64],
) {
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

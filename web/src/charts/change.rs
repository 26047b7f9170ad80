//! Each variant's change against the first, in percent: along the sweep
//! (with error bars when repeated) or as bars.

use super::{frame::*, model::*, style::*, svg::*, sweep::*};
use schedlab::experiment::Results;
use std::fmt::Write;

/// Variant `v` against `a` in percent at one row, and its range when
/// repeated (the lowest of `v` over the highest of `a`, and the reverse).
pub(super) fn change_at(row: &schedlab::experiment::Row, a: &str, v: &str) -> Option<Change> {
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

/// The 0% line across the plot.
fn zero_line(x0: i32, x1: i32, y: i32) -> El {
    El::new("path")
        .attr("class", "zero")
        .attr("stroke", "#555555")
        .attr("stroke-width", 1.2)
        .attr("d", format!("M{x0},{y}H{x1}"))
}

/// A change in percent, and its range when repeated.
pub(super) type Change = (f64, f64, f64);

/// Each later variant against the first, in percent per sweep point.
pub(super) fn change_chart(
    size: (u32, u32),
    r: &Results,
    x: &XAxis,
    repeated: bool,
) -> Option<Chart> {
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
        out.push(zero_line(xr.start, xr.end, zero));
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
                    out.push(error_bar(at.0, l, h, &color));
                }
            }
            out.extend(polyline(*i, &px, &color, 2.0));
            for ((_, c, l), at) in pts.iter().zip(&px) {
                let mut text = format!("{v} against {a} at {} {l}: {}", x.param, pct(c.0));
                if repeated {
                    let _ = write!(text, " ({} to {})", pct(c.1), pct(c.2));
                }
                out.push(marker(*i, v, l, (c.0 * 100.0).round() / 100.0, *at, &text));
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
        out.extend(legend(&chart, &legend_entries, corner));
        Ok(out)
    })
}

/// Without a sweep: each later variant's change against the first.
pub(super) fn change_bars(size: (u32, u32), r: &Results) -> Option<Chart> {
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
        let mut out = bars(&chart, &values, &[]);
        let (xr, _) = chart.plotting_area().get_pixel_range();
        let (_, zero) = chart.backend_coord(&(0.0, 0.0));
        out.push(zero_line(xr.start, xr.end, zero));
        Ok(out)
    })
}

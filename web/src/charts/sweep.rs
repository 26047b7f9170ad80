//! The metric against the sweep value per variant, on a linear or log-2
//! axis.

use super::{frame::*, model::*, style::*, svg::*};
use plotters::coord::Shift;
use plotters::prelude::*;
use schedlab::experiment::{Experiment, Results};
use std::fmt::Write;

/// "B from 12.3 at 1 to 45.6 at 64." for a variant's values.
pub(super) fn range_words(
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
pub(super) struct XAxis {
    pub(super) param: String,
    /// Where each row sits, in chart coordinates.
    pub(super) pos: Vec<f64>,
    pub(super) labels: Vec<String>,
    pub(super) scale: Option<XScale>,
    pub(super) range: (f64, f64),
}

impl XAxis {
    pub(super) fn of(exp: &Experiment, r: &Results, chosen: Option<XScale>) -> XAxis {
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
    pub(super) fn own_labels(&self) -> bool {
        self.scale != Some(XScale::Linear)
    }

    pub(super) fn desc(&self) -> String {
        match self.scale {
            Some(XScale::Log2) => format!("{} (log₂ scale)", self.param),
            _ => self.param.clone(),
        }
    }

    /// The frame for this axis and `y`.
    pub(super) fn frame<'a, 'b>(
        &self,
        root: &'a DrawingArea<SVGBackend<'b>, Shift>,
        title: &str,
        y: (f64, f64),
        y_desc: &str,
        y_fmt: &dyn Fn(&f64) -> String,
    ) -> Result<(Ctx<'a, 'b>, Vec<El>), String> {
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
        let mut out = Vec::new();
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
                let line = |stroke: &str, from: i32, to: i32| {
                    El::new("path")
                        .attr("stroke", stroke)
                        .attr("d", format!("M{px},{from}V{to}"))
                };
                out.push(line("#eeeeee", yr.start, yr.end));
                out.push(line("#000000", yr.end, yr.end + 5));
                if px - half > last_right {
                    out.push(
                        El::new("text")
                            .attr("class", "x-label")
                            .attr("x", px)
                            .attr("y", yr.end + 21)
                            .attr("text-anchor", "middle")
                            .attr("font-family", "sans-serif")
                            .attr("font-size", 15)
                            .attr("fill", "#000000")
                            .text(label),
                    );
                    last_right = px + half;
                }
            }
        }
        Ok((chart, out))
    }
}

/// The metric against the sweep value, a line per variant.
pub(super) fn sweep_chart(
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
                let dots =
                    px.iter()
                        .zip(b.results.rows.iter().zip(&x.labels))
                        .map(|(at, (row, l))| {
                            El::new("circle")
                                .attr("cx", at.0)
                                .attr("cy", at.1)
                                .attr("r", 3)
                                .attr("fill", "#ffffff")
                                .attr("stroke", "#9a9a9a")
                                .child(El::new("title").text(format!(
                                    "{} {v} at {} {l}: {}",
                                    b.name,
                                    x.param,
                                    schedlab::report::num(row.values[v])
                                )))
                        });
                out.push(
                    El::new("g")
                        .attr("class", "baseline")
                        .attr("opacity", 0.8)
                        .children(polyline(bi, &px, "#9a9a9a", 1.5))
                        .children(dots),
                );
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
                    out.push(error_bar(at.0, lo, hi, &color));
                }
            }
            out.extend(polyline(i, &px, &color, 2.0));
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
                out.push(marker(i, v, l, value, *at, &text));
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
        out.extend(legend(&chart, &legend_entries, corner));
        Ok(out)
    })
}

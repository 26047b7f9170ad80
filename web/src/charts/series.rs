//! The per-batch series of a ping-pong workload, with the timeline's
//! flips marked.

use super::{frame::*, model::*, style::*, svg::*, sweep::*};
use schedlab::experiment::{Experiment, Results};

/// usecs/loop (or the tool's per-batch number) per printed batch.
pub(super) fn series_chart(size: (u32, u32), exp: &Experiment, r: &Results) -> Option<Chart> {
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
        let mut out = Vec::new();
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
                out.push(
                    El::new("path")
                        .attr("class", "flip")
                        .attr("stroke", "#888888")
                        .attr("stroke-dasharray", "4 4")
                        .attr("d", format!("M{px},{top}V{bottom}")),
                );
                out.push(
                    El::new("text")
                        .attr("x", px + 4)
                        .attr("y", top + 14 + 16 * (k as i32 % 3))
                        .attr("font-family", "sans-serif")
                        .attr("font-size", 12)
                        .attr("fill", "#555555")
                        .text(&step.note),
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
            out.extend(polyline(*i, &px, &hex(palette(*i)), 2.0));
            for ((b, y), at) in ys.iter().enumerate().zip(&px) {
                let text = format!(
                    "{label}, batch {}: {} {}",
                    b + 1,
                    schedlab::report::num(*y),
                    r.metric.unit
                );
                out.push(marker(*i, label, &(b + 1).to_string(), *y, *at, &text));
            }
            legend_entries.push((*i, label.to_string()));
            all_points.extend(points);
        }
        let corner = legend_corner(&all_points, (0.5, n as f64 + 0.5), (y0, y1));
        out.extend(legend(&chart, &legend_entries, corner));
        Ok(out)
    })
}

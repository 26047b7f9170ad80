//! The wakeup-latency CDF: for each variant, the fraction of wakeups that
//! ran within a latency (log scale), from the results' histograms at the
//! first sweep value. A plain SVG (the charts' typed builder), one
//! `<polyline>` per variant in variant
//! order with a `data-variant`, so tests can read it; each variant in the
//! other charts' colour and line style, with a focusable marker at its
//! p50, p90, p99 and p99.9 named by the exact value.

use crate::charts::{dashes, hex, marker, palette, Chart, El};
use schedlab::experiment::Results;

const W: f64 = 640.0;
const H: f64 = 280.0;
const LEFT: f64 = 48.0;
// Room for half of the last tick label ("100 ms"), centred on the axis end.
const RIGHT: f64 = 30.0;
const TOP: f64 = 30.0;
const BOTTOM: f64 = 40.0;

/// The chart, or None when no variant had a wakeup.
pub fn chart(r: &Results) -> Option<Chart> {
    let row = r.rows.first()?;
    let curves: Vec<(&String, Vec<(f64, f64)>)> = r
        .variants
        .iter()
        .filter_map(|v| {
            let l = row.wakeup_latency.get(v)?;
            if l.wakeups == 0 {
                return None;
            }
            let mut seen = 0;
            let pts = l
                .histogram
                .iter()
                .map(|&(floor, n)| {
                    seen += n;
                    // A bucket's samples are at most a sixteenth above its floor.
                    let us = (floor.max(1) as f64 / 1000.0).max(0.001);
                    (us, seen as f64 / l.wakeups as f64)
                })
                .collect();
            Some((v, pts))
        })
        .collect();
    if curves.is_empty() {
        return None;
    }
    let xs = curves.iter().flat_map(|(_, p)| p.iter().map(|q| q.0));
    let lo = xs.clone().fold(f64::INFINITY, f64::min).log10().floor();
    let hi = xs.fold(0.0, f64::max).log10().ceil().max(lo + 1.0);
    let x = |us: f64| LEFT + (us.log10() - lo) / (hi - lo) * (W - LEFT - RIGHT);
    let y = |f: f64| TOP + (1.0 - f) * (H - TOP - BOTTOM);
    // The text alternative states the numbers, as the other charts' do.
    let alt = r
        .variants
        .iter()
        .filter_map(|v| {
            let l = row.wakeup_latency.get(v).filter(|l| l.wakeups > 0)?;
            Some(format!(
                "{v}: p50 {:.1} us, p99 {:.1} us over {} wakeups",
                l.p50_ns as f64 / 1000.0,
                l.p99_ns as f64 / 1000.0,
                l.wakeups
            ))
        })
        .collect::<Vec<_>>()
        .join("; ");
    let alt = format!("Line chart of the wakeup latency CDF per variant. {alt}.");
    let title = "Wakeup latency CDF per variant (first sweep value)";
    let text = |x: f64, y: f64, size: u32, anchor: &str, words: &str| {
        El::new("text")
            .attr("x", format!("{x:.1}"))
            .attr("y", format!("{y:.1}"))
            .attr("font-size", size)
            .attr("text-anchor", anchor)
            .text(words)
    };
    let line = |(x1, y1): (f64, f64), (x2, y2): (f64, f64), stroke: &str| {
        El::new("line")
            .attr("x1", format!("{x1:.1}"))
            .attr("y1", format!("{y1:.1}"))
            .attr("x2", format!("{x2:.1}"))
            .attr("y2", format!("{y2:.1}"))
            .attr("stroke", stroke)
    };
    let mut svg = El::new("svg")
        .attr("xmlns", "http://www.w3.org/2000/svg")
        .attr("viewBox", format!("0 0 {W} {H}"))
        .attr("width", W)
        .attr("height", H)
        .attr("role", "group")
        .attr("aria-label", &alt)
        .child(
            El::new("rect")
                .attr("width", W)
                .attr("height", H)
                .attr("fill", "white"),
        )
        .child(text(W / 2.0, 18.0, 14, "middle", title));
    for d in (lo as i32)..=(hi as i32) {
        let px = x(10f64.powi(d));
        let label = match d {
            d if d < 0 => format!("{} ns", 10f64.powi(d + 3)),
            d if d < 3 => format!("{} us", 10f64.powi(d)),
            d => format!("{} ms", 10f64.powi(d - 3)),
        };
        svg = svg
            .child(line((px, TOP), (px, H - BOTTOM), "#ddd"))
            .child(text(px, H - BOTTOM + 14.0, 11, "middle", &label));
    }
    // 0.99 is a grid line only: on this linear axis its label would sit on 1's.
    for (f, label) in [
        (0.0, "0"),
        (0.5, "0.5"),
        (0.9, "0.9"),
        (0.99, ""),
        (1.0, "1"),
    ] {
        let py = y(f);
        svg = svg
            .child(line((LEFT, py), (W - RIGHT, py), "#eee"))
            .child(text(LEFT - 4.0, py + 4.0, 11, "end", label));
    }
    svg = svg.child(text(
        (LEFT + W - RIGHT) / 2.0,
        H - 6.0,
        12,
        "middle",
        "wakeup to running (log scale); fraction of wakeups within",
    ));
    for (i, (v, pts)) in curves.iter().enumerate() {
        let color = hex(palette(i));
        let mut d = Vec::new();
        let mut last = 0.0;
        for &(us, f) in pts {
            d.push(format!("{:.1},{:.1}", x(us), y(last)));
            d.push(format!("{:.1},{:.1}", x(us), y(f)));
            last = f;
        }
        svg = svg
            .child(
                El::new("polyline")
                    .attr("data-variant", v)
                    .attr("fill", "none")
                    .attr("stroke", &color)
                    .attr("stroke-width", 2)
                    .attr("stroke-dasharray", dashes(i))
                    .attr("points", d.join(" ")),
            )
            .child(
                El::new("text")
                    .attr("x", format!("{:.1}", LEFT + 8.0))
                    .attr("y", format!("{:.1}", TOP + 14.0 + 14.0 * i as f64))
                    .attr("font-size", 12)
                    .attr("fill", &color)
                    .text(v.as_str()),
            );
    }
    // The percentiles the table states, on the curves, in variant order.
    for (i, (v, _)) in curves.iter().enumerate() {
        let Some(l) = row.wakeup_latency.get(*v) else {
            continue;
        };
        for (name, fraction, ns) in [
            ("p50", 0.5, l.p50_ns),
            ("p90", 0.9, l.p90_ns),
            ("p99", 0.99, l.p99_ns),
            ("p99.9", 0.999, l.p99_9_ns),
        ] {
            let us = ns as f64 / 1000.0;
            let at = (x(us.max(0.001)).round() as i32, y(fraction).round() as i32);
            let text = format!("{v}: {name} {us:.1} us");
            svg = svg.child(marker(i, v, name, us, at, &text));
        }
    }
    let mut out = String::new();
    svg.write(&mut out);
    Some(Chart {
        id: "latency-cdf",
        title: title.into(),
        svg: out,
        alt,
        size: (W as u32, H as u32),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_curve_per_variant_rising_to_one() {
        let exp = schedlab::presets::get("retune-pipe-test").unwrap();
        let r = schedlab::experiment::run_all(&exp, &mut |_, _| true).unwrap();
        let svg = chart(&r).unwrap().svg;
        for v in &r.variants {
            let at = svg
                .find(&format!("data-variant=\"{v}\""))
                .unwrap_or_else(|| panic!("{v}"));
            let points = &svg[at..];
            let points = &points[points.find("points=\"").unwrap() + 8..];
            let points = &points[..points.find('"').unwrap()];
            let last_y: f64 = points
                .rsplit(' ')
                .next()
                .unwrap()
                .split(',')
                .nth(1)
                .unwrap()
                .parse()
                .unwrap();
            assert!((last_y - TOP).abs() < 0.01, "{v} ends at {last_y}");
        }
    }

    #[test]
    fn each_variant_marks_the_percentiles_the_table_states() {
        let exp = schedlab::presets::get("retune-pipe-test").unwrap();
        let r = schedlab::experiment::run_all(&exp, &mut |_, _| true).unwrap();
        let c = chart(&r).unwrap();
        assert_eq!(c.id, "latency-cdf");
        for v in &r.variants {
            let l = &r.rows[0].wakeup_latency[v];
            for (name, ns) in [("p50", l.p50_ns), ("p99.9", l.p99_9_ns)] {
                let us = ns as f64 / 1000.0;
                let tag = format!("data-variant=\"{v}\" data-x=\"{name}\" data-value=\"{us}\"");
                assert!(c.svg.contains(&tag), "{tag}");
                assert!(c.svg.contains(&format!("{v}: {name} {us:.1} us")));
            }
        }
    }
}

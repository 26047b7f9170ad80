//! Charts of a run's results, drawn with plotters as SVG (on the main
//! thread: the browser measures the text): the per-batch series of ping-pong
//! workloads with the timeline's flips marked, the metric against the sweep
//! value per variant with error bars when repeated, or one bar per variant.
//!
//! Markers are `<circle>`s and lines `<polyline>`s in data order, so a test
//! can hold the drawing against the results JSON.

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use schedlab::experiment::{Experiment, Results};

pub const WIDTH: u32 = 720;
pub const HEIGHT: u32 = 360;

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

#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// The element id and file name stem ("series", "sweep", "variants").
    pub id: &'static str,
    pub title: String,
    pub svg: String,
}

/// The charts that suit these results.
pub fn charts_for(exp: &Experiment, r: &Results) -> Vec<Chart> {
    let mut out = Vec::new();
    if let Some(c) = series_chart(exp, r) {
        out.push(c);
    }
    if r.rows.len() > 1 {
        out.extend(sweep_chart(exp, r));
    } else {
        out.extend(variants_chart(r));
    }
    out
}

fn y_desc(r: &Results) -> String {
    format!("{} ({})", r.metric.name, r.metric.unit)
}

fn render(
    id: &'static str,
    title: String,
    draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> Result<(), String>,
) -> Option<Chart> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).ok()?;
        draw(&root).ok()?;
        root.present().ok()?;
    }
    Some(Chart { id, title, svg })
}

/// Room above and below the data, so markers never sit on the frame.
fn padded(lo: f64, hi: f64) -> (f64, f64) {
    let span = (hi - lo).abs().max(hi.abs() * 0.05).max(1e-9);
    (
        (lo - span * 0.1).min(0.0f64.max(lo - span)),
        hi + span * 0.12,
    )
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
        trim(format!("{v:.2}"))
    }
}

/// The corner of the plot with the fewest points, for the legend.
fn legend_corner(points: &[(f64, f64)], x: (f64, f64), y: (f64, f64)) -> SeriesLabelPosition {
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
    [
        (true, true, SeriesLabelPosition::UpperRight),
        (false, true, SeriesLabelPosition::UpperLeft),
        (true, false, SeriesLabelPosition::LowerRight),
        (false, false, SeriesLabelPosition::LowerLeft),
    ]
    .into_iter()
    .min_by_key(|(r, t, _)| in_corner(*r, *t))
    .map(|(_, _, p)| p)
    .unwrap_or(SeriesLabelPosition::UpperRight)
}

fn e<E: std::fmt::Debug>(err: E) -> String {
    format!("{err:?}")
}

/// usecs/loop (or the tool's per-batch number) per printed batch.
fn series_chart(exp: &Experiment, r: &Results) -> Option<Chart> {
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
    let lo = series
        .iter()
        .flat_map(|(_, _, s)| s.iter().copied())
        .fold(f64::INFINITY, f64::min);
    let hi = series
        .iter()
        .flat_map(|(_, _, s)| s.iter().copied())
        .fold(f64::NEG_INFINITY, f64::max);
    let (y0, y1) = padded(lo, hi);
    let title = format!("{} per batch", r.metric.name);
    render("series", title.clone(), |root| {
        let mut chart = axes(
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
            },
        )?;
        // The timeline's policy changes, between the batches they fall between.
        for step in exp.timeline.iter().filter(|s| s.mark == "batch") {
            let x = step.count as f64 - 0.5;
            if x > 0.5 && x < n as f64 + 0.5 {
                let style = ShapeStyle::from(&RGBColor(0x88, 0x88, 0x88)).stroke_width(1);
                chart
                    .draw_series(DashedLineSeries::new(vec![(x, y0), (x, y1)], 4, 4, style))
                    .map_err(e)?;
                chart
                    .draw_series(std::iter::once(Text::new(
                        step.note.clone(),
                        (x + 0.08, y1 - (y1 - y0) * 0.04),
                        ("sans-serif", 12)
                            .into_font()
                            .color(&RGBColor(0x55, 0x55, 0x55)),
                    )))
                    .map_err(e)?;
            }
        }
        for (i, label, ys) in &series {
            let color = palette(*i);
            let points: Vec<(f64, f64)> = ys
                .iter()
                .enumerate()
                .map(|(b, y)| (b as f64 + 1.0, *y))
                .collect();
            chart
                .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))
                .map_err(e)?
                .label(label.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(3))
                });
            chart
                .draw_series(points.iter().map(|p| Circle::new(*p, 3, color.filled())))
                .map_err(e)?;
        }
        let all: Vec<(f64, f64)> = series
            .iter()
            .flat_map(|(_, _, ys)| ys.iter().enumerate().map(|(b, y)| (b as f64 + 1.0, *y)))
            .collect();
        legend(
            &mut chart,
            legend_corner(&all, (0.5, n as f64 + 0.5), (y0, y1)),
        )
    })
}

type Coords = Cartesian2d<RangedCoordf64, RangedCoordf64>;

/// What differs between the charts' frames.
struct Axes<'f> {
    x: std::ops::Range<f64>,
    y: std::ops::Range<f64>,
    x_desc: &'f str,
    y_desc: &'f str,
    x_labels: usize,
    x_fmt: &'f dyn Fn(&f64) -> String,
    x_grid: bool,
}

/// A titled chart with labelled axes, in the one style every chart shares.
fn axes<'a, 'b>(
    root: &'a DrawingArea<SVGBackend<'b>, Shift>,
    title: &str,
    a: Axes,
) -> Result<ChartContext<'a, SVGBackend<'b>, Coords>, String> {
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 21))
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
        .y_label_formatter(&|y| short(*y))
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 16))
        .light_line_style(RGBColor(0xee, 0xee, 0xee))
        .draw()
        .map_err(e)?;
    Ok(chart)
}

fn legend<'a, DB: DrawingBackend + 'a>(
    chart: &mut ChartContext<'a, DB, Coords>,
    corner: SeriesLabelPosition,
) -> Result<(), String> {
    chart
        .configure_series_labels()
        .position(corner)
        .label_font(("sans-serif", 15))
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(0xcc, 0xcc, 0xcc))
        .draw()
        .map_err(e)
}

/// The sweep values as numbers, if they all are.
fn numeric_xs(r: &Results) -> Option<Vec<f64>> {
    r.rows.iter().map(|row| row.x.as_ref()?.as_f64()).collect()
}

/// The metric against the sweep value, a line per variant.
fn sweep_chart(exp: &Experiment, r: &Results) -> Option<Chart> {
    let param = exp
        .sweep
        .as_ref()
        .map(|s| s.param.clone())
        .unwrap_or_default();
    // Numeric sweeps on a numeric axis; anything else by position.
    let (xs, categorical) = match numeric_xs(r) {
        Some(xs) => (xs, false),
        None => ((0..r.rows.len()).map(|i| i as f64).collect(), true),
    };
    let labels: Vec<String> = r
        .rows
        .iter()
        .map(|row| row.x.as_ref().map(crate::fields::plain).unwrap_or_default())
        .collect();
    let repeated = exp.repeats > 1;
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    for row in &r.rows {
        for v in &r.variants {
            let s = &row.spread[v];
            let (a, b) = if repeated {
                (s.min, s.max)
            } else {
                (row.values[v], row.values[v])
            };
            lo = lo.min(a);
            hi = hi.max(b);
        }
    }
    let (y0, y1) = padded(lo, hi);
    let (x_lo, x_hi) = (
        xs.iter().copied().fold(f64::INFINITY, f64::min),
        xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    );
    let pad = ((x_hi - x_lo) * 0.06).max(0.5);
    let title = format!("{} by {param}", r.metric.name);
    render("sweep", title.clone(), |root| {
        let formatter = |x: &f64| {
            if categorical {
                labels
                    .get(x.round() as usize)
                    .cloned()
                    .filter(|_| (x - x.round()).abs() < 1e-6)
                    .unwrap_or_default()
            } else {
                short(*x)
            }
        };
        let mut chart = axes(
            root,
            &title,
            Axes {
                x: x_lo - pad..x_hi + pad,
                y: y0..y1,
                x_desc: &param,
                y_desc: &y_desc(r),
                x_labels: if categorical { r.rows.len() } else { 10 },
                x_fmt: &formatter,
                x_grid: true,
            },
        )?;
        for (i, v) in r.variants.iter().enumerate() {
            let color = palette(i);
            let points: Vec<(f64, f64)> = xs
                .iter()
                .zip(&r.rows)
                .map(|(x, row)| (*x, row.values[v]))
                .collect();
            chart
                .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))
                .map_err(e)?
                .label(v.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(3))
                });
            if repeated {
                chart
                    .draw_series(xs.iter().zip(&r.rows).map(|(x, row)| {
                        let s = &row.spread[v];
                        ErrorBar::new_vertical(
                            *x,
                            s.min,
                            row.values[v],
                            s.max,
                            color.stroke_width(1),
                            8,
                        )
                    }))
                    .map_err(e)?;
            }
            chart
                .draw_series(points.iter().map(|p| Circle::new(*p, 4, color.filled())))
                .map_err(e)?;
        }
        let all: Vec<(f64, f64)> = r
            .variants
            .iter()
            .flat_map(|v| {
                xs.iter()
                    .zip(&r.rows)
                    .map(move |(x, row)| (*x, row.values[v]))
            })
            .collect();
        legend(
            &mut chart,
            legend_corner(&all, (x_lo - pad, x_hi + pad), (y0, y1)),
        )
    })
}

/// Without a sweep: a bar per variant.
fn variants_chart(r: &Results) -> Option<Chart> {
    let row = r.rows.first()?;
    let values: Vec<f64> = r.variants.iter().map(|v| row.values[v]).collect();
    let hi = values.iter().copied().fold(0.0f64, f64::max).max(1e-9);
    let n = values.len();
    let title = format!("{} by variant", r.metric.name);
    render("variants", title.clone(), |root| {
        let formatter = |x: &f64| {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 0.0 {
                r.variants.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        };
        let mut chart = axes(
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
            },
        )?;
        chart
            .draw_series(values.iter().enumerate().map(|(i, v)| {
                let x = i as f64;
                Rectangle::new([(x - 0.3, 0.0), (x + 0.3, *v)], palette(i).filled())
            }))
            .map_err(e)?;
        chart
            .draw_series(values.iter().enumerate().map(|(i, v)| {
                Text::new(
                    schedlab::report::num(*v),
                    (i as f64 - 0.12, *v + hi * 0.03),
                    ("sans-serif", 13),
                )
            }))
            .map_err(e)?;
        Ok(())
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

    /// Data markers: filled circles (error bars draw hollow ones).
    fn markers(svg: &str) -> usize {
        svg.split("<circle ")
            .skip(1)
            .filter(|c| !c[..c.find('>').unwrap()].contains("fill=\"none\""))
            .count()
    }

    #[test]
    fn axis_numbers_are_short() {
        assert_eq!(short(4_000_000.0), "4M");
        assert_eq!(short(3_652_266.67), "3.65M");
        assert_eq!(short(886_666.67), "886.7k");
        assert_eq!(short(250.0), "250");
        assert_eq!(short(9.3567), "9.36");
        assert_eq!(short(0.0), "0");
    }

    #[test]
    fn the_flip_timeline_draws_its_series_and_the_flips() {
        let (exp, r) = results("retune-pipe-test-flip", |_| {});
        let charts = charts_for(&exp, &r);
        let series = charts.iter().find(|c| c.id == "series").unwrap();
        assert_eq!(markers(&series.svg), r.rows[0].series["flip"].len());
        assert!(series.svg.contains("+WAKE_AFFINE on domain0+domain1"));
        assert!(series.svg.contains("usecs/loop (us)"));
        assert!(charts.iter().any(|c| c.id == "variants"));
    }

    #[test]
    fn a_repeated_sweep_has_a_marker_per_point_and_error_bars() {
        let (exp, r) = results("kvm-pipe-test-pinning", |e| {
            e.sweep = Some(schedlab::experiment::Sweep {
                param: "loops".into(),
                values: vec![500.into(), 1000.into(), 2000.into()],
            });
            e.repeats = 2;
        });
        let sweep = charts_for(&exp, &r)
            .into_iter()
            .find(|c| c.id == "sweep")
            .unwrap();
        assert_eq!(markers(&sweep.svg), 3 * 2);
        assert!(sweep.svg.contains("fill=\"none\""), "error bars drawn");
        assert!(sweep.svg.contains("pinned") && sweep.svg.contains("free"));
        assert!(sweep.svg.contains("\nloops\n"), "the x axis is named");
    }
}

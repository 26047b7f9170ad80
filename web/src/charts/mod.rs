//! Charts of a run's results, drawn as SVG on the main thread: the
//! per-batch series of ping-pong workloads with the timeline's flips
//! marked; the metric against the sweep value per variant (a log-2 axis
//! when the values grow geometrically) beside each variant's change against
//! the first in percent, with error bars when repeated; without a sweep, a
//! bar per variant and the change bars.
//!
//! plotters draws the frame (caption, axes, grid) as its own `<svg>`; the
//! data are drawn over it here, as elements (svg.rs) after it in an outer,
//! named `<svg>` of the same size, so that each variant has its own line
//! style and marker shape as well as its colour, and each marker is a focusable
//! `<g class="marker">` with the exact value as its name and `<title>`,
//! placed by `transform="translate(x y)"` with `data-x` / `data-value`, in
//! data order, so a test can hold the drawing against the results JSON.

mod change;
mod frame;
mod model;
mod series;
mod style;
mod svg;
mod sweep;
mod variants;

pub use model::{auto_scale, log_possible, numeric_xs, Baseline, Chart, Options, XScale};
pub(crate) use style::{dashes, hex, marker};
pub use style::{palette, short, HEIGHT, NARROW, WIDTH};
pub(crate) use svg::El;

use change::*;
use model::*;
use schedlab::experiment::{Experiment, Results};
use series::*;
use sweep::*;
use variants::*;

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
        svg.match_indices("<g class=\"marker")
            .map(|(i, _)| {
                let tag = &svg[i..i + svg[i..].find('>').unwrap()];
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
        // The outer <svg> is named; plotters' frame is the first thing in it.
        let end = change.svg.find('>').unwrap() + 1;
        let (open, rest) = (&change.svg[..end], &change.svg[end..]);
        assert!(open.starts_with("<svg "), "{open}");
        assert!(
            open.contains(" role=\"group\" aria-label=\"Line chart of each"),
            "{open}"
        );
        assert!(open.contains(" width=\"720\" height=\"360\""), "{open}");
        let frame = &rest[..rest.find('>').unwrap()];
        assert!(
            frame.starts_with("<svg ") && !frame.contains("role="),
            "{frame}"
        );

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

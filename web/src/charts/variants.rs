//! Without a sweep, a bar per variant (and the baseline's).

use super::{frame::*, model::*, style::*};
use schedlab::experiment::Results;

/// Without a sweep: a bar per variant.
pub(super) fn variants_chart(
    size: (u32, u32),
    r: &Results,
    baseline: Option<&Baseline>,
) -> Option<Chart> {
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
        let base = if base.len() == n {
            base.clone()
        } else {
            Vec::new()
        };
        let mut out = bars(&chart, &values, &base);
        if !base.is_empty() {
            if let Some(b) = baseline {
                out.extend(legend(
                    &chart,
                    &[(BASELINE + 1, format!("{} (dashed)", b.name))],
                    (true, true),
                ));
            }
        }
        Ok(out)
    })
}

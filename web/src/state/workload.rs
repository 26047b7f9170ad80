//! What each [`WorkloadEdit`] does: the benchmark and its parameters, each
//! variant's own changes, the sweep, seed and repeats.

use super::parse::{invalid, param_value, parse_u32, parse_u64};
use super::policy::variant_mut;
use super::{Applied, WorkloadEdit};
use schedlab::experiment::{Experiment, Sweep};
use schedlab::workload::bench::{Benchmark, Custom};
use schedlab::Error;
use std::collections::BTreeMap;

pub(super) fn apply(exp: &mut Experiment, edit: WorkloadEdit) -> Applied {
    match edit {
        WorkloadEdit::Kind(kind) => set_kind(exp, &kind),
        WorkloadEdit::Param { name, text } => set_param(exp, &name, &text).map(|()| None),
        WorkloadEdit::Variant { variant, text } => {
            set_variant_workload(exp, variant, &text).map(|()| None)
        }
        WorkloadEdit::Sweep { param, values } => set_sweep(exp, param, &values).map(|()| None),
        WorkloadEdit::Seed(text) => {
            exp.seed = parse_u64(&text)?;
            Ok(None)
        }
        WorkloadEdit::Repeats(text) => {
            exp.repeats = parse_u32(&text)?;
            Ok(None)
        }
        WorkloadEdit::Program(text) => {
            let custom = Custom::from_json(&text)?;
            replace_workload(exp, Benchmark::Custom(custom))
        }
        WorkloadEdit::ToCustom => {
            let custom = exp.workload.to_custom()?;
            replace_workload(exp, Benchmark::Custom(custom))
        }
        WorkloadEdit::RtApp(text) => {
            if text.trim().is_empty() {
                return Ok(None);
            }
            let import = schedlab::workload::rtapp::import(&text)?;
            replace_workload(exp, Benchmark::Custom(import.workload))
        }
    }
}

/// The custom workload as the Workload panel's text shows it: the whole
/// workload object, as it appears in the experiment JSON.
pub fn program_text(c: &Custom) -> String {
    c.to_json()
}

/// A new workload; the sweep and per-variant changes it cannot take are
/// dropped, and the notice says so.
fn replace_workload(exp: &mut Experiment, workload: Benchmark) -> Applied {
    let kind = workload.kind();
    exp.workload = workload;
    Ok(drop_unusable(exp).map(|d| format!("{kind} has no use for {d}; dropped.")))
}

/// A new benchmark at its defaults. The old one's sweep and per-variant
/// changes name its parameters: keep only what the new one has, and say so.
fn set_kind(exp: &mut Experiment, kind: &str) -> Applied {
    exp.workload = Benchmark::default_of(kind)?;
    Ok(drop_unusable(exp).map(|d| format!("{kind} has no use for {d}; dropped.")))
}

/// Drops the sweep and per-variant changes the workload cannot take;
/// what was dropped, if anything.
fn drop_unusable(exp: &mut Experiment) -> Option<String> {
    let mut dropped = Vec::new();
    if let Some(s) = exp.sweep.take() {
        if exp.workload.params().iter().any(|p| p.name == s.param) {
            exp.sweep = Some(s);
        } else {
            dropped.push(format!("the sweep over {}", s.param));
        }
    }
    for v in &mut exp.variants {
        let label = v.label.clone();
        let workload = &exp.workload;
        v.workload.retain(|k, val| {
            let keep = workload.with_param(k, val).is_ok();
            if !keep {
                dropped.push(format!("{label}'s {k}"));
            }
            keep
        });
    }
    (!dropped.is_empty()).then(|| dropped.join(", "))
}

/// Limits between parameters (warm-up below duration) are checked with the
/// whole experiment, so fixing either field clears them.
fn set_param(exp: &mut Experiment, name: &str, text: &str) -> Result<(), Error> {
    let value = param_value(&exp.workload, name, text)?;
    exp.workload = if value.is_null() {
        without_param(&exp.workload, name)?
    } else {
        exp.workload.with_param(name, &value)?
    };
    Ok(())
}

fn set_variant_workload(exp: &mut Experiment, i: usize, text: &str) -> Result<(), Error> {
    let changes: BTreeMap<String, serde_json::Value> = if text.trim().is_empty() {
        BTreeMap::new()
    } else {
        serde_json::from_str(text).map_err(|e| {
            invalid(format!(
                "expected a JSON object such as {{\"affinity\": \"0\"}}: {e}"
            ))
        })?
    };
    for (k, v) in &changes {
        exp.workload.with_param(k, v)?;
    }
    variant_mut(exp, i)?.workload = changes;
    Ok(())
}

/// The sweep over `param` (none if empty); a new sweep starts at the
/// parameter's current value.
fn set_sweep(exp: &mut Experiment, param: String, values: &str) -> Result<(), Error> {
    if param.is_empty() {
        exp.sweep = None;
        return Ok(());
    }
    let mut values = values
        .split(',')
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(|v| param_value(&exp.workload, &param, v))
        .collect::<Result<Vec<_>, Error>>()?;
    if values.is_empty() {
        let current = serde_json::to_value(&exp.workload).expect("serialises");
        values.push(current[&param].clone());
    }
    for v in &values {
        exp.workload.with_param(&param, v)?.build()?;
    }
    exp.sweep = Some(Sweep { param, values });
    Ok(())
}

fn without_param(bench: &Benchmark, name: &str) -> Result<Benchmark, Error> {
    let mut v = serde_json::to_value(bench).expect("a benchmark serialises");
    v.as_object_mut().expect("an object").remove(name);
    serde_json::from_value(v).map_err(|e| invalid(e.to_string()))
}

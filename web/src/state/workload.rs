//! What each [`WorkloadEdit`] does: the benchmark and its parameters, each
//! variant's own changes, the sweep, seed and repeats.

use super::parse::{invalid, param_value, parse_u32, parse_u64};
use super::policy::variant_mut;
use super::{Applied, WorkloadEdit};
use schedlab::error::Concern;
use schedlab::experiment::{Experiment, Sweep};
use schedlab::workload::bench::{Benchmark, Custom};
use schedlab::workload::program::parse_cpulist;
use schedlab::Error;
use std::collections::BTreeMap;

pub(super) fn apply(exp: &mut Experiment, edit: WorkloadEdit) -> Applied {
    match edit {
        WorkloadEdit::Kind(kind) => set_kind(exp, &kind),
        WorkloadEdit::Param { name, text } => set_param(exp, &name, &text).map(|()| None),
        WorkloadEdit::Variant { variant, text } => {
            set_variant_workload(exp, variant, &text).map(|()| None)
        }
        WorkloadEdit::VariantParam {
            variant,
            name,
            text,
        } => set_variant_param(exp, variant, &name, text.as_deref()).map(|()| None),
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
        WorkloadEdit::ToCustom(built) => replace_workload(exp, answered(built, Concern::Workload)?),
        WorkloadEdit::RtApp { text, imported } => {
            if text.trim().is_empty() {
                return Ok(None);
            }
            let (json, remarks) = imported.map_err(|e| Error::invalid(Concern::Import, e))?;
            let dropped = replace_workload(exp, answered(Ok(json), Concern::Import)?)?;
            // The import's remarks (ignored keys, notes), one per line.
            let said: Vec<&str> = remarks.lines().chain(dropped.as_deref()).collect();
            Ok((!said.is_empty()).then(|| said.join("; ")))
        }
        WorkloadEdit::Trace { imported } => {
            let (json, summary) = imported.map_err(|e| Error::invalid(Concern::Import, e))?;
            let dropped = replace_workload(exp, answered(Ok(json), Concern::Import)?)?;
            Ok(Some(match dropped {
                Some(d) => format!("{summary}. The {d}"),
                None => format!("{summary}."),
            }))
        }
    }
}

/// A worker's answer (a custom workload's JSON, or why there is none) as
/// the benchmark, its refusal an error of `concern`.
fn answered(answer: Result<String, String>, concern: Concern) -> Result<Benchmark, Error> {
    let json = answer.map_err(|e| Error::invalid(concern, e))?;
    Ok(Benchmark::Custom(Custom::from_json(&json)?))
}

/// The custom workload as the Workload panel's text shows it: the whole
/// workload object, as it appears in the experiment JSON.
pub fn program_text(c: &Custom) -> String {
    crate::json::custom(c)
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
    check_cpus(exp, name, &value)?;
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
        schedlab::error::from_json(
            Concern::Workload,
            "these changes (a JSON object such as {\"affinity\": \"0\"})",
            text,
        )?
    };
    for (k, v) in &changes {
        exp.workload.with_param(k, v)?;
    }
    variant_mut(exp, i)?.workload = changes;
    Ok(())
}

/// One of variant `i`'s own parameters, typed as the base's are (an
/// affinity as `taskset -c` takes it: "0-3,8"); `None`, or an optional one
/// left empty, drops the change. Its range and CPUs are checked with the
/// whole experiment, at this field.
fn set_variant_param(
    exp: &mut Experiment,
    i: usize,
    name: &str,
    text: Option<&str>,
) -> Result<(), Error> {
    let value = match text {
        Some(t) => param_value(&exp.workload, name, t)?,
        None => serde_json::Value::Null,
    };
    if !value.is_null() {
        exp.workload.with_param(name, &value)?;
        check_cpus(exp, name, &value)?;
    }
    let changes = &mut variant_mut(exp, i)?.workload;
    if value.is_null() {
        changes.remove(name);
    } else {
        changes.insert(name.to_string(), value);
    }
    Ok(())
}

/// An affinity names CPUs this machine has, in `taskset -c` syntax: checked
/// as it is typed, not when the run starts.
fn check_cpus(exp: &Experiment, name: &str, value: &serde_json::Value) -> Result<(), Error> {
    let (Some(list), true) = (value.as_str(), name.ends_with("affinity")) else {
        return Ok(());
    };
    match super::topology(exp) {
        Ok(t) => parse_cpulist(list, t.ncpus()).map(|_| ()).map_err(|e| {
            invalid(
                Concern::Workload,
                format!("{name} (as taskset -c takes it, e.g. 0-3,8): {e}"),
            )
        }),
        // A machine being fixed elsewhere: checked with the whole experiment.
        Err(_) => Ok(()),
    }
}

/// The value a new change to `name` starts from: the base's, or for an
/// unset affinity, CPU 0.
pub fn starting_value(bench: &Benchmark, name: &str) -> String {
    let current = schedlab::json_path::value_of(bench)[name].clone();
    match current {
        serde_json::Value::Null => "0".to_string(),
        serde_json::Value::String(s) => s,
        other => other.to_string(),
    }
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
        let current = schedlab::json_path::value_of(&exp.workload);
        values.push(current[&param].clone());
    }
    for v in &values {
        exp.workload.with_param(&param, v)?.check()?;
    }
    exp.sweep = Some(Sweep { param, values });
    Ok(())
}

fn without_param(bench: &Benchmark, name: &str) -> Result<Benchmark, Error> {
    let mut v = schedlab::json_path::value_of(bench);
    v.as_object_mut().expect("an object").remove(name);
    schedlab::json_path::from_value(&v).map_err(|e| {
        invalid(
            Concern::Workload,
            format!(
                "{name} cannot be cleared: {}",
                schedlab::error::serde_in_words(&e)
            ),
        )
    })
}

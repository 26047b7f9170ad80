//! What each [`Edit`] does to the experiment, and the policy bookkeeping
//! behind it (flattening the base policy into the variants, dropping what an
//! era or machine cannot name, recording era defaults as no change).

use super::{Edit, Editor};
use schedlab::experiment::{Experiment, MachineRef, Sweep};
use schedlab::knobs::PolicyKnobs;
use schedlab::policy::{Era, Feature, LevelParam, PolicyChanges, PolicySpec, SdFlag};
use schedlab::topology::{self, Layout, MachineSpec, Topology};
use schedlab::workload::bench::Benchmark;
use schedlab::{presets, Error};
use std::collections::BTreeMap;

fn invalid(msg: impl Into<String>) -> Error {
    Error::invalid(msg.into())
}

fn parse_u64(text: &str) -> Result<u64, Error> {
    let t = text.trim().replace('_', "");
    t.parse()
        .map_err(|_| invalid(format!("\"{}\" is not a whole number", text.trim())))
}

fn parse_u32(text: &str) -> Result<u32, Error> {
    let v = parse_u64(text)?;
    u32::try_from(v).map_err(|_| invalid(format!("{v} is too large (at most {})", u32::MAX)))
}

pub(super) fn apply(ed: &mut Editor, action: Edit) -> Result<(), Error> {
    let exp = &mut ed.experiment;
    match action {
        Edit::LoadPreset(name) => *exp = presets::get(&name)?,
        Edit::Load(e) => *exp = *e,
        Edit::MachinePreset(name) => {
            topology::preset(&name)?;
            exp.machine = MachineRef::Preset(name);
            ed.notice = drop_missing_levels(exp);
        }
        Edit::MachineCustom => apply_machine_custom(exp)?,
        Edit::ImportLscpu(text) => {
            let spec = topology::import_machine("lscpu-import", &text)?;
            exp.machine = MachineRef::Spec(Box::new(spec));
            ed.notice = drop_missing_levels(exp);
        }
        Edit::Shape { field, text } => {
            let spec = custom_spec(exp)?;
            let Layout::Shape(shape) = &mut spec.layout else {
                return Err(invalid(
                    "this machine is a CPU list (imported); its shape cannot be edited",
                ));
            };
            let v = parse_u32(&text)?;
            match field.as_str() {
                "nodes" => shape.nodes = v,
                "packages_per_node" => shape.packages_per_node = v,
                "llcs_per_package" => shape.llcs_per_package = v,
                "cores_per_llc" => shape.cores_per_llc = v,
                "threads_per_core" => shape.threads_per_core = v,
                _ => return Err(invalid(format!("unknown shape field {field}"))),
            }
            ed.notice = drop_missing_levels(exp);
        }
        Edit::Distances(text) => {
            let rows = parse_distances(&text)?;
            custom_spec(exp)?.distances = rows;
        }
        Edit::Cost { key, text } => {
            let spec = custom_spec(exp)?;
            let mut costs = serde_json::to_value(&spec.costs).expect("costs serialise");
            let value = match &costs[&key] {
                serde_json::Value::Number(_) => parse_u64(&text)?.into(),
                v if is_number_list(v) => {
                    serde_json::Value::from(text.split(',').map(parse_u64).collect::<Result<
                        Vec<u64>,
                        Error,
                    >>(
                    )?)
                }
                // Structured costs (the C-states) are edited as JSON.
                serde_json::Value::Array(_) => serde_json::from_str(&text)
                    .map_err(|e| invalid(format!("cost {key} is JSON: {e}")))?,
                _ => return Err(invalid(format!("unknown machine cost {key}"))),
            };
            costs[&key] = value;
            spec.costs =
                serde_json::from_value(costs).map_err(|e| invalid(format!("cost {key}: {e}")))?;
            // The core's range checks, at this field rather than later.
            Topology::from_spec(spec)?;
        }
        Edit::BaseEra(era) => {
            flatten(exp);
            exp.policy.era = era;
            let mut dropped = Vec::new();
            for v in &mut exp.variants {
                v.policy.era = None;
                dropped.extend(retain_valid(&mut v.policy, era));
            }
            ed.notice = dropped_notice(&dropped, era);
        }
        Edit::Era { variant, era } => {
            flatten(exp);
            let base = exp.policy.era;
            let v = variant_mut(exp, variant)?;
            v.policy.era = (era != base).then_some(era);
            let dropped = retain_valid(&mut v.policy, era);
            ed.notice = dropped_notice(&dropped, era);
        }
        Edit::Flag {
            variant,
            level,
            flag,
            on,
        } => {
            let default = era_default(ed, variant)?
                .flag(&level, &flag)
                .ok_or_else(|| invalid(format!("no flag {flag} at level {level}")))?;
            let exp = &mut ed.experiment;
            flatten(exp);
            let changes = &mut variant_mut(exp, variant)?.policy;
            set_or_clear(
                &mut changes.levels.entry(level.clone()).or_default().flags,
                flag,
                on,
                default,
            );
            prune_empty_levels(changes);
        }
        Edit::LevelParam {
            variant,
            level,
            param,
            text,
        } => {
            let value = parse_u32(&text)?;
            let p = LevelParam::parse(&param)?;
            let defaults = era_default(ed, variant)?;
            let i = LevelParam::ALL
                .iter()
                .position(|x| *x == p)
                .expect("listed");
            let default = defaults
                .level(&level)
                .ok_or_else(|| invalid(format!("no level {level} on this machine")))?
                .params[i]
                .default;
            let exp = &mut ed.experiment;
            flatten(exp);
            let changes = &mut variant_mut(exp, variant)?.policy;
            set_or_clear(
                &mut changes.levels.entry(level.clone()).or_default().params,
                param,
                value,
                default,
            );
            prune_empty_levels(changes);
            // The core's range check, at this field.
            ed.knobs_of(variant)?;
        }
        Edit::Feature { variant, name, on } => {
            let era = ed.policy_of(variant).era;
            let default = Feature::defaults_of(era)
                .into_iter()
                .find(|(n, _)| *n == name)
                .map(|(_, d)| d)
                .ok_or_else(|| invalid(format!("era {era} has no feature {name}")))?;
            let exp = &mut ed.experiment;
            flatten(exp);
            set_or_clear(
                &mut variant_mut(exp, variant)?.policy.features,
                name,
                on,
                default,
            );
        }
        Edit::Tunable {
            variant,
            name,
            text,
        } => {
            let value = parse_u64(&text)?;
            let (_, knob) = era_default(ed, variant)?
                .tunables
                .into_iter()
                .find(|(n, _)| *n == name)
                .ok_or_else(|| invalid(format!("unknown tunable {name}")))?;
            let exp = &mut ed.experiment;
            flatten(exp);
            let changes = &mut variant_mut(exp, variant)?.policy;
            set_or_clear(&mut changes.tunables, name, value, knob.default);
            let changes = changes.clone();
            // The core's range check, at this field.
            exp.policy.with(&changes).resolve(1)?;
        }
        Edit::CopyPolicy { from, to } => {
            flatten(exp);
            let policy = variant_mut(exp, from)?.policy.clone();
            variant_mut(exp, to)?.policy = policy;
        }
        Edit::AddVariant => {
            let label = ('A'..='Z')
                .map(String::from)
                .find(|l| exp.variants.iter().all(|v| &v.label != l))
                .ok_or_else(|| invalid("no free variant label"))?;
            let policy = exp.variants.last().map(|v| v.policy.clone());
            exp.variants.push(schedlab::experiment::Variant {
                label,
                policy: policy.unwrap_or_default(),
                workload: BTreeMap::new(),
            });
        }
        Edit::RemoveVariant(i) => {
            if exp.variants.len() <= 1 {
                return Err(invalid("an experiment needs at least one variant"));
            }
            variant_mut(exp, i)?;
            exp.variants.remove(i);
        }
        Edit::Label { variant, text } => {
            let t = text.trim();
            if t.is_empty() {
                return Err(invalid("a variant needs a label"));
            }
            variant_mut(exp, variant)?.label = t.to_string();
        }
        Edit::WorkloadKind(kind) => {
            exp.workload = Benchmark::default_of(&kind)?;
            // The old benchmark's sweep and per-variant changes name its
            // parameters; keep only what the new one has, and say so.
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
            if !dropped.is_empty() {
                ed.notice = Some(format!(
                    "{kind} has no use for {}; dropped.",
                    dropped.join(", ")
                ));
            }
        }
        Edit::Param { name, text } => {
            let value = param_value(&exp.workload, &name, &text)?;
            exp.workload = if value.is_null() {
                without_param(&exp.workload, &name)?
            } else {
                exp.workload.with_param(&name, &value)?
            };
            // Limits between parameters (warm-up below duration) are checked
            // with the whole experiment, so fixing either field clears them.
        }
        Edit::VariantWorkload { variant, text } => {
            let changes: BTreeMap<String, serde_json::Value> = if text.trim().is_empty() {
                BTreeMap::new()
            } else {
                serde_json::from_str(&text).map_err(|e| {
                    invalid(format!(
                        "expected a JSON object such as {{\"affinity\": \"0\"}}: {e}"
                    ))
                })?
            };
            for (k, v) in &changes {
                exp.workload.with_param(k, v)?;
            }
            variant_mut(exp, variant)?.workload = changes;
        }
        Edit::Sweep { param, values } => {
            exp.sweep = if param.is_empty() {
                None
            } else {
                let values = values
                    .split(',')
                    .map(str::trim)
                    .filter(|v| !v.is_empty())
                    .map(|v| param_value(&exp.workload, &param, v))
                    .collect::<Result<Vec<_>, Error>>()?;
                // A new sweep starts at the parameter's current value.
                let values = if values.is_empty() {
                    let current = serde_json::to_value(&exp.workload).expect("serialises");
                    vec![current[&param].clone()]
                } else {
                    values
                };
                for v in &values {
                    exp.workload.with_param(&param, v)?.build()?;
                }
                Some(Sweep { param, values })
            };
        }
        Edit::Seed(text) => exp.seed = parse_u64(&text)?,
        Edit::Repeats(text) => exp.repeats = parse_u32(&text)?,
    }
    Ok(())
}

/// A JSON array of numbers only, shown and typed as "5, 15, 85".
pub fn is_number_list(v: &serde_json::Value) -> bool {
    v.as_array()
        .is_some_and(|a| a.iter().all(serde_json::Value::is_number))
}

fn variant_mut(
    exp: &mut Experiment,
    i: usize,
) -> Result<&mut schedlab::experiment::Variant, Error> {
    exp.variants
        .get_mut(i)
        .ok_or_else(|| invalid(format!("there is no variant {i}")))
}

/// The machine as an editable spec (a preset is copied first).
fn custom_spec(exp: &mut Experiment) -> Result<&mut MachineSpec, Error> {
    if let MachineRef::Preset(_) = exp.machine {
        apply_machine_custom(exp)?;
    }
    match &mut exp.machine {
        MachineRef::Spec(spec) => Ok(spec),
        MachineRef::Preset(_) => unreachable!("made custom above"),
    }
}

fn apply_machine_custom(exp: &mut Experiment) -> Result<(), Error> {
    let mut spec = exp.machine.spec()?;
    if let MachineRef::Preset(name) = &exp.machine {
        spec.name = format!("{name}-custom");
    }
    exp.machine = MachineRef::Spec(Box::new(spec));
    Ok(())
}

fn parse_distances(text: &str) -> Result<Option<Vec<Vec<u32>>>, Error> {
    let rows: Vec<Vec<u32>> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, line)| {
            line.split(|c: char| c.is_whitespace() || c == ',')
                .filter(|s| !s.is_empty())
                .map(|s| {
                    parse_u32(s).map_err(|e| invalid(format!("distances line {}: {e}", i + 1)))
                })
                .collect()
        })
        .collect::<Result<_, Error>>()?;
    Ok((!rows.is_empty()).then_some(rows))
}

/// The variant's era with nothing changed: where "default" values come from.
fn era_default(ed: &Editor, variant: usize) -> Result<PolicyKnobs, Error> {
    PolicyKnobs::of(&ed.topology()?, &PolicySpec::era(ed.policy_of(variant).era))
}

/// Moves the base policy's changes into every variant, so that a variant's
/// edits (including its era) never touch another's. Results are unchanged:
/// each variant's whole policy stays the same.
fn flatten(exp: &mut Experiment) {
    let base = &exp.policy;
    if base.levels.is_empty() && base.features.is_empty() && base.tunables.is_empty() {
        return;
    }
    for v in &mut exp.variants {
        let whole = base.with(&v.policy);
        v.policy = PolicyChanges {
            era: (whole.era != base.era).then_some(whole.era),
            levels: whole.levels,
            features: whole.features,
            tunables: whole.tunables,
        };
    }
    exp.policy = PolicySpec::era(exp.policy.era);
}

/// Drops the changes `era` has no name for; returns what was dropped.
fn retain_valid(changes: &mut PolicyChanges, era: Era) -> Vec<String> {
    let mut dropped = Vec::new();
    changes.levels.retain(|level, change| {
        let keep = era.level_names().contains(&level.as_str());
        if keep {
            change.flags.retain(|f, _| {
                let ok = SdFlag::parse(era, f).is_ok();
                if !ok {
                    dropped.push(format!("{level} {f}"));
                }
                ok
            });
        } else {
            dropped.push(format!("level {level}"));
        }
        keep
    });
    changes.features.retain(|f, _| {
        let ok = Feature::parse(era, f).is_ok();
        if !ok {
            dropped.push(f.clone());
        }
        ok
    });
    prune_empty_levels(changes);
    dropped
}

fn dropped_notice(dropped: &[String], era: Era) -> Option<String> {
    (!dropped.is_empty()).then(|| {
        format!(
            "Era {era} has no {}; those changes were dropped.",
            dropped.join(", ")
        )
    })
}

/// After a machine change: drops changes to levels the machine does not
/// build, and says which.
fn drop_missing_levels(exp: &mut Experiment) -> Option<String> {
    let topo = Topology::from_spec(&exp.machine.spec().ok()?).ok()?;
    flatten(exp);
    let mut dropped = Vec::new();
    for i in 0..exp.variants.len() {
        let whole = exp.policy.with(&exp.variants[i].policy);
        let Ok(policy) = PolicySpec::era(whole.era).resolve(topo.ncpus()) else {
            continue;
        };
        let Ok(rows) = schedlab::domains::Domains::level_table(&topo, &policy) else {
            continue;
        };
        let v = &mut exp.variants[i];
        v.policy.levels.retain(|level, _| {
            let keep = rows.iter().any(|r| r.present && r.name == level);
            if !keep {
                dropped.push(format!("{} {level}", v.label));
            }
            keep
        });
    }
    (!dropped.is_empty()).then(|| {
        format!(
            "This machine has no {} domain; changes to it were dropped.",
            dropped.join(", ")
        )
    })
}

fn prune_empty_levels(changes: &mut PolicyChanges) {
    changes
        .levels
        .retain(|_, c| !c.flags.is_empty() || !c.params.is_empty());
}

/// Records `value` unless it is the era's default, which is recorded as no change.
fn set_or_clear<T: PartialEq>(map: &mut BTreeMap<String, T>, key: String, value: T, default: T) {
    if value == default {
        map.remove(&key);
    } else {
        map.insert(key, value);
    }
}

/// A typed parameter value as JSON of the parameter's type: numbers for
/// numbers, true/false for switches, strings otherwise; empty clears an
/// optional parameter (null).
fn param_value(bench: &Benchmark, name: &str, text: &str) -> Result<serde_json::Value, Error> {
    let info = bench
        .params()
        .iter()
        .find(|p| p.name == name)
        .ok_or_else(|| {
            Error::unknown(
                "parameter of this workload",
                name,
                bench.params().iter().map(|p| p.name),
            )
        })?;
    let current = serde_json::to_value(bench).expect("a benchmark serialises")[name].clone();
    let t = text.trim();
    Ok(match current {
        serde_json::Value::Number(_) => parse_u64(t)?.into(),
        serde_json::Value::Bool(_) => match t {
            "true" | "on" | "1" => true.into(),
            "false" | "off" | "0" => false.into(),
            _ => return Err(invalid(format!("{name} is on or off, not \"{t}\""))),
        },
        _ if info.optional && t.is_empty() => serde_json::Value::Null,
        _ => t.into(),
    })
}

fn without_param(bench: &Benchmark, name: &str) -> Result<Benchmark, Error> {
    let mut v = serde_json::to_value(bench).expect("a benchmark serialises");
    v.as_object_mut().expect("an object").remove(name);
    serde_json::from_value(v).map_err(|e| invalid(e.to_string()))
}

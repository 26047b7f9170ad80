//! The experiment being edited: one [`Editor`] state changed only through
//! [`Edit`] actions (yew's `Reducible`), so every panel edits the same
//! `schedlab::experiment::Experiment` the CLI runs and the codec encodes.
//!
//! An edit whose text does not parse leaves the experiment alone and keeps
//! the text and the error at its field; an edit that parses is applied and
//! the whole experiment is checked by the core, whose error is shown at the
//! field that caused it. Run is allowed only when neither kind is present.

use schedlab::experiment::{Experiment, MachineRef, Sweep};
use schedlab::knobs::PolicyKnobs;
use schedlab::policy::{Era, Feature, LevelParam, PolicyChanges, PolicySpec, SdFlag};
use schedlab::topology::{self, Layout, MachineSpec, Topology};
use schedlab::workload::bench::Benchmark;
use schedlab::{presets, Error};
use std::collections::BTreeMap;
use std::rc::Rc;
use yew::Reducible;

/// The field an error belongs to when no single field caused it.
pub const WHOLE: &str = "experiment";

#[derive(Debug, Clone, PartialEq)]
pub struct Editor {
    pub experiment: Experiment,
    /// Fields whose text does not parse: field -> (text, error).
    pub field_errors: BTreeMap<String, (String, String)>,
    /// The core's error for the whole experiment, and the field it is shown at.
    pub invalid: Option<(String, String)>,
    /// Something an edit did that the user should know (changes dropped).
    pub notice: Option<String>,
}

/// Every change a user can make.
#[derive(Debug, Clone, PartialEq)]
pub enum Edit {
    LoadPreset(String),
    Load(Box<Experiment>),
    MachinePreset(String),
    /// Turn the current machine into an editable spec.
    MachineCustom,
    ImportLscpu(String),
    /// A shape field ("nodes", "cores_per_llc", ...) as typed.
    Shape {
        field: String,
        text: String,
    },
    /// SLIT rows, one per line ("10 20"); empty for the default.
    Distances(String),
    /// One of the machine's costs (a number, or a list for array costs).
    Cost {
        key: String,
        text: String,
    },
    BaseEra(Era),
    Era {
        variant: usize,
        era: Era,
    },
    Flag {
        variant: usize,
        level: String,
        flag: String,
        on: bool,
    },
    LevelParam {
        variant: usize,
        level: String,
        param: String,
        text: String,
    },
    Feature {
        variant: usize,
        name: String,
        on: bool,
    },
    Tunable {
        variant: usize,
        name: String,
        text: String,
    },
    CopyPolicy {
        from: usize,
        to: usize,
    },
    AddVariant,
    RemoveVariant(usize),
    Label {
        variant: usize,
        text: String,
    },
    WorkloadKind(String),
    /// A workload parameter as typed (numbers, booleans and choices parse).
    Param {
        name: String,
        text: String,
    },
    /// A variant's own workload changes as JSON ({"affinity":"0"}).
    VariantWorkload {
        variant: usize,
        text: String,
    },
    /// The sweep: a parameter (empty for none) and its values, comma separated.
    Sweep {
        param: String,
        values: String,
    },
    Seed(String),
    Repeats(String),
}

impl Editor {
    pub fn new(experiment: Experiment) -> Editor {
        let mut e = Editor {
            experiment,
            field_errors: BTreeMap::new(),
            invalid: None,
            notice: None,
        };
        e.revalidate(WHOLE);
        e
    }

    pub fn preset(name: &str) -> Editor {
        Editor::new(presets::get(name).unwrap_or_else(|_| default_experiment()))
    }

    pub fn is_valid(&self) -> bool {
        self.field_errors.is_empty() && self.invalid.is_none()
    }

    /// The error to show at `field`, if any.
    pub fn error_at(&self, field: &str) -> Option<&str> {
        if let Some((_, e)) = self.field_errors.get(field) {
            return Some(e);
        }
        match &self.invalid {
            Some((f, e)) if f == field => Some(e),
            _ => None,
        }
    }

    /// What `field` shows: the unparsed text if it has one, else `value`.
    pub fn text_of(&self, field: &str, value: impl ToString) -> String {
        match self.field_errors.get(field) {
            Some((text, _)) => text.clone(),
            None => value.to_string(),
        }
    }

    /// The name of the preset this experiment equals, if it is unedited.
    pub fn unedited_preset(&self) -> Option<&'static str> {
        presets::unedited(&self.experiment)
    }

    pub fn topology(&self) -> Result<Topology, Error> {
        Topology::from_spec(&self.experiment.machine.spec()?)
    }

    /// Variant `i`'s whole policy.
    pub fn policy_of(&self, i: usize) -> PolicySpec {
        let exp = &self.experiment;
        exp.policy.with(&exp.variants[i].policy)
    }

    pub fn knobs_of(&self, i: usize) -> Result<PolicyKnobs, Error> {
        PolicyKnobs::of(&self.topology()?, &self.policy_of(i))
    }

    fn revalidate(&mut self, field: &str) {
        self.invalid = match self.experiment.validate() {
            Ok(()) => None,
            Err(e) => {
                let msg = e.to_string();
                // An error that was already there stays at its field.
                match self.invalid.take() {
                    Some((f, old)) if old == msg => Some((f, msg)),
                    _ => Some((field.to_string(), msg)),
                }
            }
        };
    }
}

impl Reducible for Editor {
    type Action = Edit;

    fn reduce(self: Rc<Self>, action: Edit) -> Rc<Self> {
        let mut next = (*self).clone();
        next.notice = None;
        let field = field_of(&action);
        let text = text_of(&action);
        match apply(&mut next, action) {
            Ok(()) => {
                if field == WHOLE {
                    // A new experiment: the old one's unparsed texts are moot.
                    next.field_errors.clear();
                }
                next.field_errors.remove(&field);
                next.revalidate(&field);
            }
            Err(e) => {
                // A refused edit changes nothing but its field's error.
                next = (*self).clone();
                next.notice = None;
                next.field_errors
                    .insert(field, (text.unwrap_or_default(), e.to_string()));
            }
        }
        Rc::new(next)
    }
}

/// The field an action edits (also the `data-field` of its input).
pub fn field_of(action: &Edit) -> String {
    match action {
        Edit::LoadPreset(_) | Edit::Load(_) => WHOLE.into(),
        Edit::MachinePreset(_) | Edit::MachineCustom => "machine".into(),
        Edit::ImportLscpu(_) => "machine.lscpu".into(),
        Edit::Shape { field, .. } => format!("machine.{field}"),
        Edit::Distances(_) => "machine.distances".into(),
        Edit::Cost { key, .. } => format!("cost.{key}"),
        Edit::BaseEra(_) => "era".into(),
        Edit::Era { variant, .. } => format!("v{variant}.era"),
        Edit::Flag {
            variant,
            level,
            flag,
            ..
        } => flag_field(*variant, level, flag),
        Edit::LevelParam {
            variant,
            level,
            param,
            ..
        } => format!("v{variant}.{level}.{param}"),
        Edit::Feature { variant, name, .. } => format!("v{variant}.feature.{name}"),
        Edit::Tunable { variant, name, .. } => format!("v{variant}.tunable.{name}"),
        Edit::CopyPolicy { to, .. } => format!("v{to}.era"),
        Edit::AddVariant | Edit::RemoveVariant(_) => "variants".into(),
        Edit::Label { variant, .. } => format!("v{variant}.label"),
        Edit::WorkloadKind(_) => "workload.kind".into(),
        Edit::Param { name, .. } => format!("workload.{name}"),
        Edit::VariantWorkload { variant, .. } => format!("v{variant}.workload"),
        Edit::Sweep { .. } => "sweep".into(),
        Edit::Seed(_) => "seed".into(),
        Edit::Repeats(_) => "repeats".into(),
    }
}

pub fn flag_field(variant: usize, level: &str, flag: &str) -> String {
    format!("v{variant}.{level}.{flag}")
}

fn text_of(action: &Edit) -> Option<String> {
    match action {
        Edit::ImportLscpu(t)
        | Edit::Distances(t)
        | Edit::Seed(t)
        | Edit::Repeats(t)
        | Edit::Shape { text: t, .. }
        | Edit::Cost { text: t, .. }
        | Edit::LevelParam { text: t, .. }
        | Edit::Tunable { text: t, .. }
        | Edit::Label { text: t, .. }
        | Edit::Param { text: t, .. }
        | Edit::VariantWorkload { text: t, .. } => Some(t.clone()),
        Edit::Sweep { values, .. } => Some(values.clone()),
        _ => None,
    }
}

/// The experiment a bad link or empty storage falls back to.
pub fn default_experiment() -> Experiment {
    presets::get(presets::ALL[0].0).expect("the first preset loads")
}

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

fn apply(ed: &mut Editor, action: Edit) -> Result<(), Error> {
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
            let spec = topology::parse_lscpu("lscpu-import", &text)?;
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
                serde_json::Value::Array(_) => {
                    serde_json::Value::from(text.split(',').map(parse_u64).collect::<Result<
                        Vec<u64>,
                        Error,
                    >>(
                    )?)
                }
                serde_json::Value::Number(_) => parse_u64(&text)?.into(),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(ed: Editor, action: Edit) -> Editor {
        (*Rc::new(ed).reduce(action)).clone()
    }

    #[test]
    fn presets_load_valid_and_unedited() {
        for name in presets::names() {
            let ed = Editor::preset(name);
            assert!(ed.is_valid(), "{name}: {:?}", ed.invalid);
            assert_eq!(ed.unedited_preset(), Some(name));
        }
    }

    #[test]
    fn a_flag_in_b_changes_b_only_and_back_to_default_is_no_change() {
        let ed = Editor::preset("waweight-tbench");
        let a_before = ed.policy_of(0);
        let b_knobs = ed.knobs_of(1).unwrap();
        let was = b_knobs.flag("NUMA", "WAKE_AFFINE").unwrap();
        let flip = |ed, on| {
            edit(
                ed,
                Edit::Flag {
                    variant: 1,
                    level: "NUMA".into(),
                    flag: "WAKE_AFFINE".into(),
                    on,
                },
            )
        };
        let ed2 = flip(ed.clone(), !was);
        assert!(ed2.is_valid(), "{:?}", ed2.invalid);
        assert_eq!(
            ed2.knobs_of(1).unwrap().flag("NUMA", "WAKE_AFFINE"),
            Some(!was)
        );
        assert_eq!(ed2.policy_of(0), a_before);
        assert_eq!(ed2.unedited_preset(), None);
        let ed3 = flip(ed2, was);
        assert_eq!(ed3.policy_of(1), ed.policy_of(1));
        assert!(ed3.experiment.variants[1].policy.levels.is_empty());
    }

    #[test]
    fn unparsable_text_stays_at_its_field_and_blocks_run() {
        let ed = Editor::preset("retune-pipe-test");
        let bad = edit(
            ed.clone(),
            Edit::Param {
                name: "loops".into(),
                text: "lots".into(),
            },
        );
        assert!(!bad.is_valid());
        assert_eq!(bad.experiment, ed.experiment);
        assert_eq!(bad.text_of("workload.loops", 1), "lots");
        assert!(bad
            .error_at("workload.loops")
            .unwrap()
            .contains("not a whole number"));
        let fixed = edit(
            bad,
            Edit::Param {
                name: "loops".into(),
                text: "1000".into(),
            },
        );
        assert!(fixed.is_valid());
        assert_eq!(fixed.text_of("workload.loops", 1000), "1000");
    }

    #[test]
    fn a_limit_between_two_fields_clears_when_either_is_fixed() {
        let ed = Editor::preset("waweight-netperf-tcp-rr");
        let param = |ed, name: &str, text: &str| {
            edit(
                ed,
                Edit::Param {
                    name: name.into(),
                    text: text.into(),
                },
            )
        };
        let short = param(ed, "duration_ms", "20");
        let err = short.error_at("workload.duration_ms").unwrap();
        assert!(err.contains("warmup_ms is 20; it must be 0..=19"), "{err}");
        let fixed = param(short, "warmup_ms", "5");
        assert!(fixed.is_valid(), "{:?}", fixed.invalid);
    }

    #[test]
    fn the_cores_range_errors_show_at_the_edited_field() {
        let ed = Editor::preset("retune-pipe-test");
        let bad = edit(
            ed.clone(),
            Edit::LevelParam {
                variant: 0,
                level: "NODE".into(),
                param: "imbalance_pct".into(),
                text: "50".into(),
            },
        );
        let err = bad.error_at("v0.NODE.imbalance_pct").unwrap();
        assert!(err.contains("must be 100..=1000"), "{err}");
        assert!(!bad.is_valid());
        assert_eq!(
            bad.experiment, ed.experiment,
            "a refused edit changes nothing"
        );
        assert_eq!(bad.text_of("v0.NODE.imbalance_pct", 125), "50");
    }

    #[test]
    fn a_hand_built_machine_and_an_lscpu_import_validate() {
        let mut ed = Editor::preset("retune-pipe-test");
        for (field, text) in [
            ("nodes", "2"),
            ("cores_per_llc", "3"),
            ("threads_per_core", "2"),
        ] {
            ed = edit(
                ed,
                Edit::Shape {
                    field: field.into(),
                    text: text.into(),
                },
            );
        }
        assert!(ed.is_valid(), "{:?} {:?}", ed.invalid, ed.field_errors);
        assert_eq!(ed.topology().unwrap().nnodes(), 2);
        let bad = edit(ed.clone(), Edit::Distances("10 20\n20".into()));
        assert!(bad
            .error_at("machine.distances")
            .unwrap()
            .contains("square"));

        let lscpu = "# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n0,0,0,0,,0,0,0,0\n1,1,0,0,,1,1,1,0\n2,0,0,0,,0,0,0,0\n3,1,0,0,,1,1,1,0\n";
        let imported = edit(ed, Edit::ImportLscpu(lscpu.into()));
        assert!(imported.is_valid(), "{:?}", imported.invalid);
        assert_eq!(imported.topology().unwrap().ncpus(), 4);
        let garbage = edit(imported.clone(), Edit::ImportLscpu("0,x\n".into()));
        assert!(garbage.error_at("machine.lscpu").unwrap().contains("line"));
        assert_eq!(garbage.experiment, imported.experiment);
    }

    #[test]
    fn era_changes_drop_what_the_era_cannot_name_and_say_so() {
        let ed = edit(
            Editor::preset("retune-pipe-test"),
            Edit::Flag {
                variant: 0,
                level: "NODE".into(),
                flag: "WAKE_IDLE".into(),
                on: true,
            },
        );
        assert!(ed.is_valid(), "{:?}", ed.invalid);
        let modern = edit(ed, Edit::BaseEra(Era::V4_15));
        assert!(modern.is_valid(), "{:?}", modern.invalid);
        assert!(modern
            .experiment
            .variants
            .iter()
            .all(|v| v.policy.era.is_none()));
        let notice = modern.notice.unwrap();
        assert!(notice.contains("NODE WAKE_IDLE"), "{notice}");
    }

    #[test]
    fn a_new_benchmark_keeps_what_it_can_and_says_what_it_dropped() {
        let ed = edit(
            Editor::preset("kvm-pipe-test-pinning"),
            Edit::WorkloadKind("lat_ctx".into()),
        );
        assert!(ed.is_valid(), "{:?}", ed.invalid);
        assert_eq!(ed.experiment.variants[0].workload["affinity"], "0");
        assert_eq!(ed.notice, None);
        let ed = edit(
            Editor::preset("waweight-tbench"),
            Edit::WorkloadKind("hackbench".into()),
        );
        assert_eq!(ed.experiment.sweep, None);
        assert_eq!(
            ed.notice.as_deref(),
            Some("hackbench has no use for the sweep over clients; dropped.")
        );
    }

    #[test]
    fn copy_a_to_b_makes_their_policies_equal() {
        let ed = Editor::preset("waweight-tbench");
        assert_ne!(ed.policy_of(0), ed.policy_of(1));
        let ed = edit(ed, Edit::CopyPolicy { from: 0, to: 1 });
        assert_eq!(ed.policy_of(0), ed.policy_of(1));
    }

    #[test]
    fn a_sweep_parses_values_of_the_parameters_type() {
        let ed = Editor::preset("retune-pipe-test");
        let ed = edit(
            ed,
            Edit::Sweep {
                param: "loops".into(),
                values: "1000, 2000,3000".into(),
            },
        );
        assert!(ed.is_valid(), "{:?}", ed.invalid);
        assert_eq!(
            ed.experiment.points().unwrap().len(),
            3 * ed.experiment.variants.len()
        );
        let bad = edit(
            ed,
            Edit::Sweep {
                param: "loops".into(),
                values: "1000, x".into(),
            },
        );
        assert!(bad.error_at("sweep").unwrap().contains("\"x\""));
    }
}

//! What each [`PolicyEdit`] does, and the bookkeeping behind it: a variant's
//! edit first *flattens* the base policy into every variant (each variant's
//! whole policy is unchanged) so it never touches another variant; a value
//! set back to the era default is recorded as no change; an era or machine
//! change drops what the new era or machine cannot name.

use super::parse::{invalid, parse_u32, parse_u64};
use super::{knobs_of, policy_of, topology, Applied, PolicyEdit, VariantEdit};
use schedlab::error::Concern;
use schedlab::experiment::{Experiment, Variant};
use schedlab::knobs::PolicyKnobs;
use schedlab::policy::{Era, Feature, LevelParam, PolicyChanges, PolicySpec, SdFlag, Tunable};
use schedlab::sorted_map::NameMap;
use schedlab::topology::Topology;
use schedlab::Error;
use std::collections::BTreeMap;

pub(super) fn apply(exp: &mut Experiment, edit: PolicyEdit) -> Applied {
    match edit {
        PolicyEdit::BaseEra(era) => set_base_era(exp, era),
        PolicyEdit::Copy { from, to } => copy_policy(exp, from, to).map(|()| None),
        PolicyEdit::AddVariant => add_variant(exp).map(|()| None),
        PolicyEdit::RemoveVariant(i) => remove_variant(exp, i).map(|()| None),
        PolicyEdit::Variant(i, edit) => apply_variant(exp, i, edit),
    }
}

fn apply_variant(exp: &mut Experiment, i: usize, edit: VariantEdit) -> Applied {
    match edit {
        VariantEdit::Label(text) => set_label(exp, i, &text).map(|()| None),
        VariantEdit::Era(era) => set_era(exp, i, era),
        VariantEdit::Flag { level, flag, on } => set_flag(exp, i, level, flag, on).map(|()| None),
        VariantEdit::LevelParam { level, param, text } => {
            set_level_param(exp, i, level, param, &text).map(|()| None)
        }
        VariantEdit::Feature { name, on } => set_feature(exp, i, name, on).map(|()| None),
        VariantEdit::Tunable { name, text } => set_tunable(exp, i, name, &text).map(|()| None),
    }
}

/// The base era for every variant: their own eras go, and so does what the
/// new era has no name for.
fn set_base_era(exp: &mut Experiment, era: Era) -> Applied {
    flatten(exp);
    exp.policy.era = era;
    let mut dropped = Vec::new();
    for v in &mut exp.variants {
        v.policy.era = None;
        dropped.extend(retain_valid(&mut v.policy, era));
    }
    Ok(dropped_notice(&dropped, era))
}

fn copy_policy(exp: &mut Experiment, from: usize, to: usize) -> Result<(), Error> {
    flatten(exp);
    let policy = variant_mut(exp, from)?.policy.clone();
    variant_mut(exp, to)?.policy = policy;
    Ok(())
}

/// A new variant with the next free label, starting from the last one's policy.
fn add_variant(exp: &mut Experiment) -> Result<(), Error> {
    let label = ('A'..='Z')
        .map(String::from)
        .find(|l| exp.variants.iter().all(|v| &v.label != l))
        .ok_or_else(|| invalid(Concern::Policy, "no free variant label"))?;
    let policy = exp.variants.last().map(|v| v.policy.clone());
    exp.variants.push(Variant {
        label,
        policy: policy.unwrap_or_default(),
        workload: BTreeMap::new(),
    });
    Ok(())
}

fn remove_variant(exp: &mut Experiment, i: usize) -> Result<(), Error> {
    if exp.variants.len() <= 1 {
        return Err(invalid(
            Concern::Policy,
            "an experiment needs at least one variant",
        ));
    }
    variant_mut(exp, i)?;
    exp.variants.remove(i);
    Ok(())
}

fn set_label(exp: &mut Experiment, i: usize, text: &str) -> Result<(), Error> {
    let t = text.trim();
    if t.is_empty() {
        return Err(invalid(Concern::Policy, "a variant needs a label"));
    }
    variant_mut(exp, i)?.label = t.to_string();
    Ok(())
}

fn set_era(exp: &mut Experiment, i: usize, era: Era) -> Applied {
    flatten(exp);
    let base = exp.policy.era;
    let v = variant_mut(exp, i)?;
    v.policy.era = (era != base).then_some(era);
    let dropped = retain_valid(&mut v.policy, era);
    Ok(dropped_notice(&dropped, era))
}

fn set_flag(
    exp: &mut Experiment,
    i: usize,
    level: String,
    flag: String,
    on: bool,
) -> Result<(), Error> {
    let default = era_default(exp, i)?
        .flag(&level, &flag)
        .ok_or_else(|| invalid(Concern::Policy, format!("no flag {flag} at level {level}")))?;
    flatten(exp);
    let changes = &mut variant_mut(exp, i)?.policy;
    set_or_clear(
        &mut changes.levels.entry_or_default(level).flags,
        flag,
        on,
        default,
    );
    prune_empty_levels(changes);
    Ok(())
}

/// A level parameter, with the core's range check at this field.
fn set_level_param(
    exp: &mut Experiment,
    i: usize,
    level: String,
    param: LevelParam,
    text: &str,
) -> Result<(), Error> {
    let value = parse_u32(text)?;
    let pi = LevelParam::ALL
        .iter()
        .position(|x| *x == param)
        .expect("listed");
    let default = era_default(exp, i)?
        .level(&level)
        .ok_or_else(|| invalid(Concern::Policy, format!("no level {level} on this machine")))?
        .params[pi]
        .default;
    flatten(exp);
    let changes = &mut variant_mut(exp, i)?.policy;
    set_or_clear(
        &mut changes.levels.entry_or_default(level).params,
        param.name().to_string(),
        value,
        default,
    );
    prune_empty_levels(changes);
    knobs_of(exp, i)?;
    Ok(())
}

fn set_feature(exp: &mut Experiment, i: usize, name: String, on: bool) -> Result<(), Error> {
    let era = policy_of(exp, i).era;
    let default = Feature::defaults_of(era)
        .into_iter()
        .find(|(n, _)| *n == name)
        .map(|(_, d)| d)
        .ok_or_else(|| invalid(Concern::Policy, format!("era {era} has no feature {name}")))?;
    flatten(exp);
    set_or_clear(&mut variant_mut(exp, i)?.policy.features, name, on, default);
    Ok(())
}

/// A tunable, with the core's range check at this field.
fn set_tunable(exp: &mut Experiment, i: usize, name: String, text: &str) -> Result<(), Error> {
    let value = parse_u64(text)?;
    let (_, knob) = era_default(exp, i)?
        .tunables
        .into_iter()
        .find(|(n, _)| *n == name)
        .ok_or_else(|| invalid(Concern::Policy, format!("unknown tunable {name}")))?;
    flatten(exp);
    let changes = &mut variant_mut(exp, i)?.policy;
    set_or_clear(&mut changes.tunables, name, value, knob.default);
    let changes = changes.clone();
    exp.policy.with(&changes).resolve(1)?;
    Ok(())
}

pub(super) fn variant_mut(exp: &mut Experiment, i: usize) -> Result<&mut Variant, Error> {
    exp.variants
        .get_mut(i)
        .ok_or_else(|| invalid(Concern::Policy, format!("there is no variant {i}")))
}

/// The variant's era with nothing changed: where "default" values come from.
fn era_default(exp: &Experiment, i: usize) -> Result<PolicyKnobs, Error> {
    PolicyKnobs::of(&topology(exp)?, &PolicySpec::era(policy_of(exp, i).era))
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
    // 6.12 has sched_base_slice_ns where CFS eras have the latency tunables.
    changes.tunables.retain(|t, _| {
        let ok = Tunable::parse_for(era, t).is_ok();
        if !ok {
            dropped.push(t.clone());
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
pub(super) fn drop_missing_levels(exp: &mut Experiment) -> Option<String> {
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
fn set_or_clear<T: PartialEq>(map: &mut NameMap<T>, key: String, value: T, default: T) {
    if value == default {
        map.remove(&key);
    } else {
        map.insert(key, value);
    }
}

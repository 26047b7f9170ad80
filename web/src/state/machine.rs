//! What each [`MachineEdit`] does: a preset, a hand-built spec (shape,
//! distances, costs) or an `lscpu -p` import. A machine change drops the
//! policy changes to levels the new machine does not build, and says so.

use super::parse::{invalid, is_number_list, parse_distances, parse_u32, parse_u64};
use super::policy::drop_missing_levels;
use super::{Applied, MachineEdit, ShapeField};
use schedlab::error::Concern;
use schedlab::experiment::{Experiment, MachineRef};
use schedlab::topology::{self, Layout, MachineSpec, Topology};
use schedlab::Error;

pub(super) fn apply(exp: &mut Experiment, edit: MachineEdit) -> Applied {
    match edit {
        MachineEdit::Preset(name) => use_preset(exp, name),
        MachineEdit::Custom => make_custom(exp).map(|()| None),
        MachineEdit::ImportLscpu(text) => import_lscpu(exp, &text),
        MachineEdit::Shape { field, text } => set_shape(exp, field, &text),
        MachineEdit::Distances(text) => set_distances(exp, &text),
        MachineEdit::Cost { key, text } => set_cost(exp, &key, &text),
    }
}

fn use_preset(exp: &mut Experiment, name: String) -> Applied {
    topology::preset(&name)?;
    exp.machine = MachineRef::Preset(name);
    Ok(drop_missing_levels(exp))
}

fn import_lscpu(exp: &mut Experiment, text: &str) -> Applied {
    let spec = topology::import_machine("lscpu-import", text)?;
    exp.machine = MachineRef::Spec(Box::new(spec));
    Ok(drop_missing_levels(exp))
}

fn set_shape(exp: &mut Experiment, field: ShapeField, text: &str) -> Applied {
    let spec = custom_spec(exp)?;
    let Layout::Shape(shape) = &mut spec.layout else {
        return Err(invalid(
            Concern::Machine,
            "this machine is a CPU list (imported); its shape cannot be edited",
        ));
    };
    *field.get_mut(shape) = parse_u32(text)?;
    Ok(drop_missing_levels(exp))
}

fn set_distances(exp: &mut Experiment, text: &str) -> Applied {
    let rows = parse_distances(text)?;
    custom_spec(exp)?.distances = rows;
    Ok(None)
}

/// A number, a list of numbers ("5, 20, 90") or, for structured costs (the
/// C-states), JSON; checked by the core's range checks at this field
/// rather than later.
fn set_cost(exp: &mut Experiment, key: &str, text: &str) -> Applied {
    let spec = custom_spec(exp)?;
    let mut costs = schedlab::json_path::value_of(&spec.costs);
    let value = match &costs[key] {
        serde_json::Value::Number(_) => parse_u64(text)?.into(),
        v if is_number_list(v) => serde_json::Value::from(
            text.split(',')
                .map(parse_u64)
                .collect::<Result<Vec<u64>, Error>>()?,
        ),
        serde_json::Value::Array(_) => schedlab::error::from_json::<serde_json::Value>(
            Concern::Machine,
            &format!("cost {key} (JSON)"),
            text,
        )?,
        _ => {
            return Err(invalid(
                Concern::Machine,
                format!("unknown machine cost {key}"),
            ))
        }
    };
    costs[key] = value;
    spec.costs = schedlab::json_path::from_value(&costs).map_err(|e| {
        invalid(
            Concern::Machine,
            format!("cost {key}: {}", schedlab::error::serde_in_words(&e)),
        )
    })?;
    Topology::from_spec(spec)?;
    Ok(None)
}

/// The machine as an editable spec (a preset is copied first).
fn custom_spec(exp: &mut Experiment) -> Result<&mut MachineSpec, Error> {
    if let MachineRef::Preset(_) = exp.machine {
        make_custom(exp)?;
    }
    match &mut exp.machine {
        MachineRef::Spec(spec) => Ok(spec),
        MachineRef::Preset(_) => unreachable!("made custom above"),
    }
}

/// Turns a preset into a spec named after it, to be edited.
fn make_custom(exp: &mut Experiment) -> Result<(), Error> {
    let mut spec = exp.machine.spec()?;
    if let MachineRef::Preset(name) = &exp.machine {
        spec.name = format!("{name}-custom");
    }
    exp.machine = MachineRef::Spec(Box::new(spec));
    Ok(())
}

//! The experiment being edited: one [`Editor`] state changed only through
//! [`Edit`] actions (yew's `Reducible`), so every panel edits the same
//! `schedlab::experiment::Experiment` the CLI runs and the codec encodes.
//!
//! An edit whose text does not parse leaves the experiment alone and keeps
//! the text and the error at its field; an edit that parses is applied and
//! the whole experiment is checked by the core, whose error is shown at the
//! field that caused it. Run is allowed only when neither kind is present.

mod apply;
#[cfg(test)]
mod tests;

use apply::apply;
pub use apply::is_number_list;
use schedlab::experiment::Experiment;
use schedlab::knobs::PolicyKnobs;
use schedlab::policy::{Era, PolicySpec};
use schedlab::topology::Topology;
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

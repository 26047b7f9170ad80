//! Every change a user can make, grouped as the page is: the machine, the
//! kernel policy (the base era, the variants, and each variant's own
//! changes) and the workload. Each edit names the field its error is shown
//! at ([`Edit::field`]) and the text the user typed, if any ([`Edit::text`]).

use super::field::{FieldId, ShapeField, VariantField};
use schedlab::experiment::Experiment;
use schedlab::policy::{Era, LevelParam};

#[derive(Debug, Clone, PartialEq)]
pub enum Edit {
    /// Open a shipped experiment.
    LoadPreset(String),
    /// Open an experiment (from the history).
    Load(Box<Experiment>),
    /// Open an experiment file's JSON (as `schedlab run FILE` reads it).
    OpenFile(String),
    Machine(MachineEdit),
    Policy(PolicyEdit),
    Workload(WorkloadEdit),
}

/// The Machine panel.
#[derive(Debug, Clone, PartialEq)]
pub enum MachineEdit {
    Preset(String),
    /// Turn the current machine into an editable spec.
    Custom,
    ImportLscpu(String),
    /// A shape field as typed.
    Shape {
        field: ShapeField,
        text: String,
    },
    /// SLIT rows, one per line ("10 20"); empty for the default.
    Distances(String),
    /// One of the machine's costs (a number, or a list for array costs).
    Cost {
        key: String,
        text: String,
    },
}

/// The Kernel panel: the base era, the set of variants, and each variant's
/// own policy.
#[derive(Debug, Clone, PartialEq)]
pub enum PolicyEdit {
    BaseEra(Era),
    /// Start variant `to`'s policy from variant `from`'s.
    Copy {
        from: usize,
        to: usize,
    },
    AddVariant,
    RemoveVariant(usize),
    Variant(usize, VariantEdit),
}

/// A change to one variant (its label and its policy).
#[derive(Debug, Clone, PartialEq)]
pub enum VariantEdit {
    Label(String),
    Era(Era),
    Flag {
        level: String,
        flag: String,
        on: bool,
    },
    LevelParam {
        level: String,
        param: LevelParam,
        text: String,
    },
    Feature {
        name: String,
        on: bool,
    },
    Tunable {
        name: String,
        text: String,
    },
}

/// The Workload panel.
#[derive(Debug, Clone, PartialEq)]
pub enum WorkloadEdit {
    Kind(String),
    /// A parameter as typed (numbers, booleans and choices parse).
    Param {
        name: String,
        text: String,
    },
    /// A variant's own workload changes as JSON ({"affinity":"0"}).
    Variant {
        variant: usize,
        text: String,
    },
    /// One parameter of a variant's own workload: set as typed (added if
    /// new), or dropped (None).
    VariantParam {
        variant: usize,
        name: String,
        text: Option<String>,
    },
    /// The sweep: a parameter (empty for none) and its values, comma separated.
    Sweep {
        param: String,
        values: String,
    },
    Seed(String),
    Repeats(String),
    /// The custom workload as JSON text.
    Program(String),
    /// Replace the benchmark by the custom workload its generator builds:
    /// the worker's answer, that workload's JSON or why not.
    ToCustom(Result<String, String>),
    /// A pasted rt-app file and what the worker's import made of it: the
    /// custom workload's JSON and the import's remarks (keys ignored,
    /// notes), or why it was refused. (The importer runs in the worker,
    /// which keeps it out of the page's first load.)
    RtApp {
        text: String,
        imported: Result<(String, String), String>,
    },
    /// A scheduler trace file, as the worker imported it: the replay's
    /// custom workload JSON and a line on what it holds, or why not.
    Trace {
        imported: Result<(String, String), String>,
    },
}

impl Edit {
    /// A change to variant `i`.
    pub fn variant(i: usize, edit: VariantEdit) -> Edit {
        Edit::Policy(PolicyEdit::Variant(i, edit))
    }

    /// The field this edit's error is shown at (the `data-field` of its input).
    pub fn field(&self) -> FieldId {
        match self {
            Edit::LoadPreset(_) | Edit::Load(_) => FieldId::Whole,
            Edit::OpenFile(_) => FieldId::ExperimentFile,
            Edit::Machine(e) => e.field(),
            Edit::Policy(e) => e.field(),
            Edit::Workload(e) => e.field(),
        }
    }

    /// The text the user typed, kept at the field when it is refused.
    pub fn text(&self) -> Option<&str> {
        match self {
            Edit::LoadPreset(_) | Edit::Load(_) => None,
            Edit::OpenFile(t) => Some(t),
            Edit::Machine(e) => e.text(),
            Edit::Policy(PolicyEdit::Variant(_, e)) => e.text(),
            Edit::Policy(_) => None,
            Edit::Workload(e) => e.text(),
        }
    }
}

impl MachineEdit {
    pub fn field(&self) -> FieldId {
        match self {
            MachineEdit::Preset(_) | MachineEdit::Custom => FieldId::Machine,
            MachineEdit::ImportLscpu(_) => FieldId::Lscpu,
            MachineEdit::Shape { field, .. } => FieldId::Shape(*field),
            MachineEdit::Distances(_) => FieldId::Distances,
            MachineEdit::Cost { key, .. } => FieldId::Cost(key.clone()),
        }
    }

    fn text(&self) -> Option<&str> {
        match self {
            MachineEdit::Preset(_) | MachineEdit::Custom => None,
            MachineEdit::ImportLscpu(t)
            | MachineEdit::Distances(t)
            | MachineEdit::Shape { text: t, .. }
            | MachineEdit::Cost { text: t, .. } => Some(t),
        }
    }
}

impl PolicyEdit {
    pub fn field(&self) -> FieldId {
        match self {
            PolicyEdit::BaseEra(_) => FieldId::BaseEra,
            // Shown at the era of the variant that was overwritten.
            PolicyEdit::Copy { to, .. } => FieldId::Variant(*to, VariantField::Era),
            PolicyEdit::AddVariant | PolicyEdit::RemoveVariant(_) => FieldId::Variants,
            PolicyEdit::Variant(i, e) => FieldId::Variant(*i, e.field()),
        }
    }
}

impl VariantEdit {
    pub fn field(&self) -> VariantField {
        match self {
            VariantEdit::Label(_) => VariantField::Label,
            VariantEdit::Era(_) => VariantField::Era,
            VariantEdit::Flag { level, flag, .. } => VariantField::Flag {
                level: level.clone(),
                flag: flag.clone(),
            },
            VariantEdit::LevelParam { level, param, .. } => VariantField::LevelParam {
                level: level.clone(),
                param: *param,
            },
            VariantEdit::Feature { name, .. } => VariantField::Feature(name.clone()),
            VariantEdit::Tunable { name, .. } => VariantField::Tunable(name.clone()),
        }
    }

    fn text(&self) -> Option<&str> {
        match self {
            VariantEdit::Label(t)
            | VariantEdit::LevelParam { text: t, .. }
            | VariantEdit::Tunable { text: t, .. } => Some(t),
            VariantEdit::Era(_) | VariantEdit::Flag { .. } | VariantEdit::Feature { .. } => None,
        }
    }
}

impl WorkloadEdit {
    pub fn field(&self) -> FieldId {
        match self {
            WorkloadEdit::Kind(_) => FieldId::WorkloadKind,
            WorkloadEdit::Param { name, .. } => FieldId::Param(name.clone()),
            WorkloadEdit::Variant { variant, .. } => {
                FieldId::Variant(*variant, VariantField::Workload)
            }
            WorkloadEdit::VariantParam { variant, name, .. } => {
                FieldId::Variant(*variant, VariantField::WorkloadParam(name.clone()))
            }
            WorkloadEdit::Sweep { .. } => FieldId::Sweep,
            WorkloadEdit::Seed(_) => FieldId::Seed,
            WorkloadEdit::Repeats(_) => FieldId::Repeats,
            WorkloadEdit::Program(_) => FieldId::Program,
            WorkloadEdit::ToCustom(_) => FieldId::WorkloadKind,
            WorkloadEdit::RtApp { .. } => FieldId::RtApp,
            WorkloadEdit::Trace { .. } => FieldId::Trace,
        }
    }

    fn text(&self) -> Option<&str> {
        match self {
            WorkloadEdit::Kind(_) | WorkloadEdit::ToCustom(_) | WorkloadEdit::Trace { .. } => None,
            WorkloadEdit::Param { text: t, .. }
            | WorkloadEdit::Variant { text: t, .. }
            | WorkloadEdit::Seed(t)
            | WorkloadEdit::Repeats(t)
            | WorkloadEdit::Program(t)
            | WorkloadEdit::RtApp { text: t, .. } => Some(t),
            WorkloadEdit::Sweep { values, .. } => Some(values),
            WorkloadEdit::VariantParam { text, .. } => text.as_deref(),
        }
    }
}

impl From<MachineEdit> for Edit {
    fn from(e: MachineEdit) -> Edit {
        Edit::Machine(e)
    }
}

impl From<PolicyEdit> for Edit {
    fn from(e: PolicyEdit) -> Edit {
        Edit::Policy(e)
    }
}

impl From<WorkloadEdit> for Edit {
    fn from(e: WorkloadEdit) -> Edit {
        Edit::Workload(e)
    }
}

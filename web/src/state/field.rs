//! Where an error is shown: the field an edit changes, typed. Its `Display`
//! is the `data-field` the panels render, so the one place that names a
//! field is here, used by [`Edit::field`](super::Edit::field) (the error
//! lookup) and by the panels' inputs alike.

use schedlab::policy::LevelParam;
use schedlab::topology::Shape;
use std::fmt;

/// A field of the editor.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FieldId {
    /// The experiment as a whole (a preset or link loaded): its errors are
    /// the page's, shown in the summary above the panels.
    Whole,
    /// The machine preset picker.
    Machine,
    /// The `lscpu -p` import.
    Lscpu,
    Shape(ShapeField),
    /// The SLIT rows.
    Distances,
    /// One of the machine's costs, by its JSON key.
    Cost(String),
    /// The base era (the variants' era unless they name their own).
    BaseEra,
    /// Adding or removing a variant: page-level, like [`FieldId::Whole`].
    Variants,
    Variant(usize, VariantField),
    /// The benchmark.
    WorkloadKind,
    /// A benchmark parameter, by the name `Benchmark::params` gives it.
    Param(String),
    /// The sweep's parameter picker. It edits the sweep, whose errors are
    /// shown at [`FieldId::Sweep`] (the values it is swept over).
    SweepParam,
    /// The sweep's values.
    Sweep,
    Seed,
    Repeats,
    /// A custom workload's program (JSON text).
    Program,
    /// The rt-app paste.
    RtApp,
    /// A scheduler trace file.
    Trace,
    /// An experiment file opened in the page.
    ExperimentFile,
}

impl FieldId {
    /// Whether an edit at this field replaces the whole experiment.
    pub fn is_whole(&self) -> bool {
        matches!(self, FieldId::Whole | FieldId::ExperimentFile)
    }
}

/// A field of one variant.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum VariantField {
    Label,
    Era,
    /// An SD flag (without `SD_`) at a domain level.
    Flag {
        level: String,
        flag: String,
    },
    /// A numeric parameter at a domain level.
    LevelParam {
        level: String,
        param: LevelParam,
    },
    Feature(String),
    Tunable(String),
    /// The variant's own workload changes (JSON).
    Workload,
    /// One of the variant's own workload changes: a benchmark parameter.
    WorkloadParam(String),
}

/// A field of the hand-built machine's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ShapeField {
    Nodes,
    PackagesPerNode,
    LlcsPerPackage,
    CoresPerLlc,
    ThreadsPerCore,
}

impl ShapeField {
    pub const ALL: [ShapeField; 5] = [
        ShapeField::Nodes,
        ShapeField::PackagesPerNode,
        ShapeField::LlcsPerPackage,
        ShapeField::CoresPerLlc,
        ShapeField::ThreadsPerCore,
    ];

    /// The name in the machine spec's JSON.
    pub fn name(self) -> &'static str {
        match self {
            ShapeField::Nodes => "nodes",
            ShapeField::PackagesPerNode => "packages_per_node",
            ShapeField::LlcsPerPackage => "llcs_per_package",
            ShapeField::CoresPerLlc => "cores_per_llc",
            ShapeField::ThreadsPerCore => "threads_per_core",
        }
    }

    /// The label the Machine panel shows.
    pub fn label(self) -> &'static str {
        match self {
            ShapeField::Nodes => "NUMA nodes",
            ShapeField::PackagesPerNode => "packages / node",
            ShapeField::LlcsPerPackage => "LLCs / package",
            ShapeField::CoresPerLlc => "cores / LLC",
            ShapeField::ThreadsPerCore => "threads / core",
        }
    }

    pub fn get(self, shape: &Shape) -> u32 {
        match self {
            ShapeField::Nodes => shape.nodes,
            ShapeField::PackagesPerNode => shape.packages_per_node,
            ShapeField::LlcsPerPackage => shape.llcs_per_package,
            ShapeField::CoresPerLlc => shape.cores_per_llc,
            ShapeField::ThreadsPerCore => shape.threads_per_core,
        }
    }

    pub fn get_mut(self, shape: &mut Shape) -> &mut u32 {
        match self {
            ShapeField::Nodes => &mut shape.nodes,
            ShapeField::PackagesPerNode => &mut shape.packages_per_node,
            ShapeField::LlcsPerPackage => &mut shape.llcs_per_package,
            ShapeField::CoresPerLlc => &mut shape.cores_per_llc,
            ShapeField::ThreadsPerCore => &mut shape.threads_per_core,
        }
    }
}

/// The `data-field` attribute: `machine.nodes`, `cost.ipi_ns`,
/// `v1.NODE.WAKE_AFFINE`, `v0.tunable.sched_migration_cost_ns`, ...
impl fmt::Display for FieldId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FieldId::Whole => f.write_str("experiment"),
            FieldId::Machine => f.write_str("machine"),
            FieldId::Lscpu => f.write_str("machine.lscpu"),
            FieldId::Shape(s) => write!(f, "machine.{}", s.name()),
            FieldId::Distances => f.write_str("machine.distances"),
            FieldId::Cost(key) => write!(f, "cost.{key}"),
            FieldId::BaseEra => f.write_str("era"),
            FieldId::Variants => f.write_str("variants"),
            FieldId::Variant(i, field) => write!(f, "v{i}.{field}"),
            FieldId::WorkloadKind => f.write_str("workload.kind"),
            FieldId::Param(name) => write!(f, "workload.{name}"),
            FieldId::Program => f.write_str("workload.program"),
            FieldId::RtApp => f.write_str("workload.rtapp"),
            FieldId::Trace => f.write_str("workload.trace"),
            FieldId::ExperimentFile => f.write_str("experiment.file"),
            FieldId::SweepParam => f.write_str("sweep.param"),
            FieldId::Sweep => f.write_str("sweep"),
            FieldId::Seed => f.write_str("seed"),
            FieldId::Repeats => f.write_str("repeats"),
        }
    }
}

impl fmt::Display for VariantField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VariantField::Label => f.write_str("label"),
            VariantField::Era => f.write_str("era"),
            VariantField::Flag { level, flag } => write!(f, "{level}.{flag}"),
            VariantField::LevelParam { level, param } => write!(f, "{level}.{}", param.name()),
            VariantField::Feature(name) => write!(f, "feature.{name}"),
            VariantField::Tunable(name) => write!(f, "tunable.{name}"),
            VariantField::Workload => f.write_str("workload"),
            VariantField::WorkloadParam(name) => write!(f, "workload.{name}"),
        }
    }
}

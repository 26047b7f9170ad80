//! How a machine's costs were obtained when `schedlab calibrate` measured
//! them: every probe's median and spread, and for every cost the value it
//! was given, from which probes and how. The simulator never reads this; it
//! travels with the machine so a reader can judge each number.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Calibration {
    /// The program that measured ("schedlab calibrate 0.1.0").
    pub tool: String,
    /// The running kernel (`uname -r`).
    #[serde(default)]
    pub kernel: String,
    /// The CPU model as the kernel names it.
    #[serde(default)]
    pub cpu_model: String,
    /// Where the topology came from (sysfs, `lscpu -p`).
    #[serde(default)]
    pub topology_source: String,
    #[serde(default)]
    pub probes: Vec<Probe>,
    #[serde(default)]
    pub costs: Vec<DerivedCost>,
    /// Probes that could not run, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<Skipped>,
    /// The host's placement of the CPUs the cross-CPU probes ran on, where
    /// there were two.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<Placement>,
    /// The pace of a bare system call on the CPU the one-CPU probes ran on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pace: Option<Placement>,
}

/// A reference surveyed before the probes on some CPUs, and sampled just
/// before and after each of them: one cache line's transfer between two
/// CPUs (on a virtual machine it tells where the host put the vCPUs) or a
/// bare system call on one (how fast the host runs it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Placement {
    /// The pair or CPU watched (OS CPU numbers).
    pub cpus: Vec<u32>,
    /// The transfer or system call, ns, sampled every 100 ms before the
    /// probes on those CPUs.
    pub survey_ns: Vec<f64>,
    /// What the probes were held to: the survey's median placement, or
    /// its quickest pace (sharing a core only slows a CPU).
    pub reference_ns: f64,
    /// Probes run again because the sample just before or after them was
    /// off the reference.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retried: Vec<String>,
    /// Probes kept from their last run though it never held.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unheld: Vec<String>,
}

/// In wasm: a machine's calibration skipped without parsing it
/// (`MachineSpec::calibration`).
#[cfg(target_arch = "wasm32")]
pub(crate) fn read_past<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Calibration>, D::Error> {
    serde::de::IgnoredAny::deserialize(d)?;
    Ok(None)
}

/// One probe's result: the median of its batches and their spread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Probe {
    pub name: String,
    /// What was timed.
    pub what: String,
    /// The CPUs it ran on (OS numbers), empty if not pinned.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpus: Vec<u32>,
    /// The unit of `median` and `spread` ("ns", "GB/s", ...).
    pub unit: String,
    pub median: f64,
    /// Half the interquartile range of the batches.
    pub spread: f64,
    /// Batches timed (each the mean of many operations).
    pub batches: u32,
}

/// A cost of the model and how its value came from the probes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DerivedCost {
    /// The cost's field in `costs` ("context_switch_ns", "miss_ns[1]", "cstates[2].exit_latency_ns").
    pub cost: String,
    pub value: f64,
    /// measured | read (from the kernel) | default (the model's, not measured).
    pub source: String,
    /// The formula over probe names, or why it is a default.
    pub how: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Skipped {
    pub probe: String,
    pub why: String,
}

//! Benchmark generators. Each follows the real tool's process structure and
//! wakeup pattern (shared/reference/kernel-sched.md, section 6), takes the
//! tool's parameter names and defaults, builds a [`WorkloadSpec`], and reads
//! what the tool would print from the run's timing points and traffic.

mod hackbench;
mod lat_ctx;
mod netperf;
mod pipe;
mod sysbench;
mod tbench;

pub use hackbench::Hackbench;
pub use lat_ctx::LatCtx;
pub use netperf::{Netperf, NetperfTest};
pub use pipe::{PerfBenchPipe, PipeTest};
pub use sysbench::{Database, Sysbench};
pub use tbench::Tbench;

use crate::engine::RunOutput;
use crate::error::{Error, Result};
use crate::workload::program::{ChannelKind, ChannelSpec, Op, TaskSpec, Time, WorkloadSpec};
use serde::{Deserialize, Serialize};

/// A benchmark and its parameters, tagged by `kind`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Benchmark {
    PipeTest(PipeTest),
    PerfBenchPipe(PerfBenchPipe),
    LatCtx(LatCtx),
    Hackbench(Hackbench),
    Tbench(Tbench),
    Netperf(Netperf),
    Sysbench(Sysbench),
}

/// Which way a metric is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    Lower,
    Higher,
}

/// The number a benchmark reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Metric {
    pub name: &'static str,
    pub unit: &'static str,
    pub better: Better,
}

/// A workload ready to run: tasks, how long, and when measuring starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Built {
    pub spec: WorkloadSpec,
    pub duration_ns: Option<u64>,
    pub measure_from_ns: u64,
}

/// What the tool would print, its headline number, and the per-batch series
/// where the tool prints one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub value: f64,
    pub series: Vec<f64>,
    /// Secondary figures the tool prints (e.g. tbench's max_latency).
    pub details: Vec<(&'static str, f64)>,
    pub text: String,
}

impl Benchmark {
    pub fn name(&self) -> &'static str {
        match self {
            Benchmark::PipeTest(_) => "pipe-test",
            Benchmark::PerfBenchPipe(_) => "perf bench sched pipe",
            Benchmark::LatCtx(_) => "lat_ctx",
            Benchmark::Hackbench(_) => "hackbench",
            Benchmark::Tbench(_) => "tbench",
            Benchmark::Netperf(_) => "netperf",
            Benchmark::Sysbench(_) => "sysbench",
        }
    }

    /// Checks the parameters and builds the tasks.
    pub fn build(&self) -> Result<Built> {
        match self {
            Benchmark::PipeTest(b) => b.build(),
            Benchmark::PerfBenchPipe(b) => b.build(),
            Benchmark::LatCtx(b) => b.build(),
            Benchmark::Hackbench(b) => b.build(),
            Benchmark::Tbench(b) => b.build(),
            Benchmark::Netperf(b) => b.build(),
            Benchmark::Sysbench(b) => b.build(),
        }
    }

    pub fn metric(&self) -> Metric {
        match self {
            Benchmark::PipeTest(_) => Metric {
                name: "usecs/loop",
                unit: "us",
                better: Better::Lower,
            },
            Benchmark::PerfBenchPipe(_) => Metric {
                name: "usecs/op",
                unit: "us",
                better: Better::Lower,
            },
            Benchmark::LatCtx(_) => Metric {
                name: "context switch",
                unit: "us",
                better: Better::Lower,
            },
            Benchmark::Hackbench(_) => Metric {
                name: "Time",
                unit: "s",
                better: Better::Lower,
            },
            Benchmark::Tbench(_) => Metric {
                name: "Throughput",
                unit: "MB/sec",
                better: Better::Higher,
            },
            Benchmark::Netperf(n) => n.metric(),
            Benchmark::Sysbench(_) => Metric {
                name: "transactions",
                unit: "per sec",
                better: Better::Higher,
            },
        }
    }

    /// Reads the tool's output from a run of [`Self::build`]'s workload.
    pub fn report(&self, out: &RunOutput) -> Report {
        match self {
            Benchmark::PipeTest(b) => b.report(out),
            Benchmark::PerfBenchPipe(b) => b.report(out),
            Benchmark::LatCtx(b) => b.report(out),
            Benchmark::Hackbench(b) => b.report(out),
            Benchmark::Tbench(b) => b.report(out),
            Benchmark::Netperf(b) => b.report(out),
            Benchmark::Sysbench(b) => b.report(out),
        }
    }

    /// This benchmark with one parameter changed (a sweep point). Unknown
    /// parameters and values of the wrong type are errors naming them.
    pub fn with_param(&self, name: &str, value: &serde_json::Value) -> Result<Benchmark> {
        let mut v = serde_json::to_value(self).map_err(|e| Error::invalid(e.to_string()))?;
        let obj = v
            .as_object_mut()
            .expect("a benchmark serialises to an object");
        let known: Vec<String> = obj.keys().filter(|k| *k != "kind").cloned().collect();
        let optional = self.optional_params();
        if !known.iter().any(|k| k == name) && !optional.contains(&name) {
            let mut valid = known;
            valid.extend(optional.iter().map(|s| s.to_string()));
            return Err(Error::unknown("parameter of this workload", name, valid));
        }
        obj.insert(name.to_string(), value.clone());
        serde_json::from_value(v)
            .map_err(|e| Error::invalid(format!("{} parameter {name}: {e}", self.name())))
    }

    /// Parameters that are omitted from the JSON when unset.
    fn optional_params(&self) -> &'static [&'static str] {
        match self {
            Benchmark::PipeTest(_) | Benchmark::PerfBenchPipe(_) => &["affinity", "child_affinity"],
            _ => &["affinity"],
        }
    }
}

/// A parameter outside its allowed range.
pub(crate) fn check(tool: &str, name: &str, value: u64, lo: u64, hi: u64) -> Result<()> {
    if (lo..=hi).contains(&value) {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "{tool} parameter {name} is {value}; it must be {lo}..={hi}"
        )))
    }
}

pub(crate) fn ms_to_ns(ms: u64) -> u64 {
    ms * 1_000_000
}

pub(crate) fn task(name: String, affinity: &Option<String>, program: Vec<Op>) -> TaskSpec {
    TaskSpec {
        name,
        nice: 0,
        affinity: affinity.clone(),
        process: None,
        working_set_kib: 0,
        start_cpu: None,
        program,
    }
}

pub(crate) fn channel(kind: ChannelKind, capacity: u64) -> ChannelSpec {
    ChannelSpec {
        kind,
        capacity,
        sendfile: false,
    }
}

pub(crate) fn compute(ns: u64, jitter_pct: u32) -> Op {
    Op::Compute(Time { ns, jitter_pct })
}

pub(crate) fn write(chan: usize, bytes: u64) -> Op {
    Op::Write { chan, bytes }
}

pub(crate) fn read(chan: usize, bytes: u64) -> Op {
    Op::Read { chan, bytes }
}

pub(crate) fn mark(label: &str) -> Op {
    Op::Mark(label.to_string())
}

/// The marks of `label`, in time order.
pub(crate) fn marks<'a>(out: &'a RunOutput, label: &str) -> &'a [(u64, usize)] {
    out.marks
        .iter()
        .find(|m| m.label == label)
        .map_or(&[], |m| m.series.as_slice())
}

pub(crate) fn mark_stats<'a>(
    out: &'a RunOutput,
    label: &str,
) -> Option<&'a crate::engine::stats::MarkStats> {
    out.marks.iter().find(|m| m.label == label)
}

/// Seconds measured: from the end of the warm-up to the end of the run.
pub(crate) fn measured_secs(out: &RunOutput) -> f64 {
    (out.end_ns - out.measure_from_ns) as f64 / 1e9
}

#[cfg(test)]
mod tests;

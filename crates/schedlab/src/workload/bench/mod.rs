//! Benchmark generators. Each follows the real tool's process structure and
//! wakeup pattern (lmbench's lat_ctx.c, perf's bench/sched-pipe.c and
//! sched-messaging.c, dbench's tbench_srv.c, netperf, sysbench), takes the
//! tool's parameter names and defaults, builds a [`WorkloadSpec`], and reads
//! what the tool would print from the run's timing points and traffic.

mod custom;
mod hackbench;
mod lat_ctx;
mod netperf;
mod pipe;
mod schbench;
mod sysbench;
mod tbench;

pub use custom::{Custom, CustomMetric};
pub use hackbench::Hackbench;
pub use lat_ctx::LatCtx;
pub use netperf::{Netperf, NetperfTest};
pub use pipe::{PerfBenchPipe, PipeTest};
pub use schbench::Schbench;
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
    Schbench(Schbench),
    Custom(Custom),
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
            Benchmark::Schbench(_) => "schbench",
            Benchmark::Custom(_) => "custom",
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
            Benchmark::Schbench(b) => b.build(),
            Benchmark::Custom(b) => b.build(),
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
            Benchmark::Schbench(_) => Metric {
                name: "wakeup latency p99",
                unit: "us",
                better: Better::Lower,
            },
            Benchmark::Custom(c) => c.metric(),
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
            Benchmark::Schbench(b) => b.report(out),
            Benchmark::Custom(b) => b.report(out),
        }
    }

    /// This benchmark with one parameter changed (a sweep point). Unknown
    /// parameters and values of the wrong type are errors naming them.
    pub fn with_param(&self, name: &str, value: &serde_json::Value) -> Result<Benchmark> {
        let mut v = crate::json_path::value_of(self);
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
        crate::json_path::from_value(&v)
            .map_err(|e| Error::invalid(format!("{} parameter {name}: {e}", self.name())))
    }

    /// Parameters that are omitted from the JSON when unset.
    fn optional_params(&self) -> Vec<&'static str> {
        self.params()
            .iter()
            .filter(|p| p.optional)
            .map(|p| p.name)
            .collect()
    }

    /// The `kind` tag this benchmark serialises with.
    pub fn kind(&self) -> &'static str {
        match self {
            Benchmark::PipeTest(_) => "pipe_test",
            Benchmark::PerfBenchPipe(_) => "perf_bench_pipe",
            Benchmark::LatCtx(_) => "lat_ctx",
            Benchmark::Hackbench(_) => "hackbench",
            Benchmark::Tbench(_) => "tbench",
            Benchmark::Netperf(_) => "netperf",
            Benchmark::Sysbench(_) => "sysbench",
            Benchmark::Schbench(_) => "schbench",
            Benchmark::Custom(_) => "custom",
        }
    }

    /// The benchmark `kind` with every parameter at the tool's default (a
    /// small producer and consumer for `custom`).
    pub fn default_of(kind: &str) -> Result<Benchmark> {
        if !KINDS.contains(&kind) {
            return Err(Error::unknown("workload kind", kind, KINDS));
        }
        if kind == "custom" {
            return Ok(Benchmark::Custom(Custom::example()));
        }
        crate::json_path::from_value(&serde_json::json!({ "kind": kind }))
            .map_err(|e| Error::invalid(format!("workload {kind}: {e}")))
    }

    /// The parameters, in the order the tool documents them.
    pub fn params(&self) -> &'static [ParamInfo] {
        match self {
            Benchmark::PipeTest(_) => PIPE_TEST,
            Benchmark::PerfBenchPipe(_) => PERF_BENCH_PIPE,
            Benchmark::LatCtx(_) => LAT_CTX,
            Benchmark::Hackbench(_) => HACKBENCH,
            Benchmark::Tbench(_) => TBENCH,
            Benchmark::Netperf(_) => NETPERF,
            Benchmark::Sysbench(_) => SYSBENCH,
            Benchmark::Schbench(_) => SCHBENCH,
            Benchmark::Custom(_) => CUSTOM,
        }
    }

    /// This workload as a custom one: the program its generator builds,
    /// its run length and warm-up; reporting wakeup latency (the tool's
    /// own output needs the generator). Runs identically.
    pub fn to_custom(&self) -> Result<Custom> {
        if let Benchmark::Custom(c) = self {
            return Ok(c.clone());
        }
        let built = self.build()?;
        Ok(Custom {
            duration_ms: built.duration_ns.map(|ns| ns.div_ceil(1_000_000)),
            warmup_ms: built.measure_from_ns / 1_000_000,
            metric: CustomMetric::WakeupP99,
            mark: None,
            channels: built.spec.channels,
            tasks: built.spec.tasks,
        })
    }
}

const fn p(name: &'static str, flag: &'static str, help: &'static str) -> ParamInfo {
    ParamInfo {
        name,
        flag,
        help,
        choices: &[],
        optional: false,
    }
}
const AFFINITY: ParamInfo = ParamInfo {
    name: "affinity",
    flag: "taskset -c",
    help: "CPUs every task may run on, e.g. 0-3,8",
    choices: &[],
    optional: true,
};
const CHILD_AFFINITY: ParamInfo = ParamInfo {
    name: "child_affinity",
    flag: "taskset -c",
    help: "CPUs for the child only",
    choices: &[],
    optional: true,
};
const WARMUP: ParamInfo = p("warmup_ms", "", "start of the run not measured, ms");
const PIPE_TEST: &[ParamInfo] = &[
    p("loops", "LOOPS", "round trips per printed line"),
    p("batches", "", "printed lines"),
    AFFINITY,
    CHILD_AFFINITY,
];
const PERF_BENCH_PIPE: &[ParamInfo] = &[
    p("loops", "-l", "round trips"),
    p("threaded", "-T", "threads of one process"),
    AFFINITY,
    CHILD_AFFINITY,
];
const LAT_CTX: &[ParamInfo] = &[
    p("size_kb", "-s", "array each process sums per pass, KB"),
    p("procs", "N", "processes in the ring"),
    p("rounds", "", "trips of the token round the ring"),
    AFFINITY,
];
const HACKBENCH: &[ParamInfo] = &[
    p("groups", "-g", "groups of senders and receivers"),
    p("loops", "-l", "messages per sender and receiver"),
    p("fds", "-f", "senders and receivers per group"),
    p("datasize", "-s", "message size, bytes"),
    p("pipe", "-p", "pipes instead of unix sockets"),
    p("threads", "-T", "threads instead of processes"),
    AFFINITY,
];
const TBENCH: &[ParamInfo] = &[
    p("clients", "NPROCS", "client and server processes"),
    p("duration_ms", "-t", "run time, ms"),
    WARMUP,
    AFFINITY,
];
const NETPERF: &[ParamInfo] = &[
    ParamInfo {
        choices: &NETPERF_TESTS,
        ..p("test", "-t", "the test")
    },
    p("instances", "", "concurrent netperf/netserver pairs"),
    p("duration_ms", "-l", "test length, ms"),
    WARMUP,
    p("send_size", "-m", "send size for stream tests, bytes"),
    p("rr_size", "-r", "request and response size, bytes"),
    AFFINITY,
];
const SYSBENCH: &[ParamInfo] = &[
    p(
        "threads",
        "--threads",
        "client threads, one connection each",
    ),
    ParamInfo {
        choices: &["mysql", "pgsql"],
        ..p(
            "db",
            "--db-driver",
            "server: threads (mysql) or processes (pgsql)",
        )
    },
    p("read_only", "oltp_read_only", "read-only transactions"),
    p("duration_ms", "--time", "run time, ms"),
    WARMUP,
    AFFINITY,
];

const SCHBENCH: &[ParamInfo] = &[
    p("message_threads", "-m", "message threads"),
    p("workers", "-t", "worker threads per message thread"),
    p("runtime_ms", "-r", "run time, ms"),
    p("sleep_us", "-s", "sleep in each request, us"),
    p("cputime_us", "-c", "CPU work in each request, us"),
    p(
        "rps",
        "-R",
        "requests per second overall (0: as fast as the workers go)",
    ),
    p("warmup_ms", "-w", "start of the run not measured, ms"),
    AFFINITY,
];
const CUSTOM: &[ParamInfo] = &[
    ParamInfo {
        optional: true,
        ..p(
            "duration_ms",
            "",
            "run time, ms (omitted: until every task exits)",
        )
    },
    WARMUP,
    ParamInfo {
        choices: &custom::METRICS,
        ..p("metric", "", "the number reported")
    },
    ParamInfo {
        optional: true,
        ..p(
            "mark",
            "",
            "the mark label mark_interval and mark_rate read",
        )
    },
];

/// Every benchmark kind, as the `kind` tag spells it.
pub const KINDS: [&str; 9] = [
    "pipe_test",
    "perf_bench_pipe",
    "lat_ctx",
    "hackbench",
    "tbench",
    "netperf",
    "sysbench",
    "schbench",
    "custom",
];

const NETPERF_TESTS: [&str; 5] = [
    "TCP_RR",
    "UDP_RR",
    "TCP_STREAM",
    "TCP_SENDFILE",
    "UDP_STREAM",
];

/// One benchmark parameter: its JSON name, the real tool's option for it,
/// what it means, and its values when it is a choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ParamInfo {
    pub name: &'static str,
    /// The tool's own option or argument ("-g", "--threads"); empty if none.
    pub flag: &'static str,
    pub help: &'static str,
    pub choices: &'static [&'static str],
    /// Omitted from the JSON when unset.
    pub optional: bool,
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
    Op::Write {
        chan,
        bytes,
        echo: false,
    }
}

/// A write of as many bytes as the task's last read returned (at most `bytes`).
pub(crate) fn echo(chan: usize, bytes: u64) -> Op {
    Op::Write {
        chan,
        bytes,
        echo: true,
    }
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

/// Each marking task's completions of `label` per second in the measured
/// part, read from time rather than counted (whole counts in a short window
/// come in multiples of one over its length), by task id. A task's progress
/// is taken to grow linearly between its marks, so a completion that
/// straddles a boundary counts by the fraction of it inside the window: at
/// the start exactly (the interval from its last warm-up mark); at the end,
/// the completion in progress at the task's own mean pace, at most one. A
/// task with no mark before the window (one that started in it) starts its
/// progress at its first mark. For tasks that run to the end of the run.
pub(crate) fn mark_rates(out: &RunOutput, label: &str) -> Vec<(usize, f64)> {
    let secs = measured_secs(out);
    let Some(m) = mark_stats(out, label) else {
        return vec![];
    };
    if secs <= 0.0 {
        return vec![];
    }
    let (start, end) = (out.measure_from_ns, out.end_ns);
    m.by_task
        .iter()
        .enumerate()
        .filter(|(_, t)| t.count > 0)
        .map(|(task, t)| {
            let (head, from, intervals) = match t.first_interval_ns {
                Some(d) if d > 0 => (
                    ((t.first_ns - start) as f64 / d as f64).min(1.0),
                    t.first_ns - d,
                    t.count,
                ),
                _ => (0.0, t.first_ns, t.count - 1),
            };
            let tail = if intervals > 0 && t.last_ns > from {
                let pace = (t.last_ns - from) as f64 / intervals as f64;
                ((end - t.last_ns) as f64 / pace).min(1.0)
            } else {
                0.0
            };
            let progress = head + (t.count - 1) as f64 + tail;
            (task, progress / secs)
        })
        .collect()
}

/// The payload bytes an AF_UNIX stream socket holds unread when every
/// message is `msg` bytes: the sender's `sndbuf` is charged each queued
/// message's skb truesize, not its payload. On x86-64 that is the payload
/// rounded up to the 64-byte cache line, plus the skb_shared_info (320
/// bytes), rounded up to the kmalloc size class (powers of two, and 96 and
/// 192; whole pages past 32 KiB), plus the sk_buff itself (232 bytes,
/// 256 aligned). A 100-byte message costs 768 bytes, so 277 of them fit in
/// 212992, not 2129. At least one message always fits.
pub(crate) fn unix_stream_capacity(sndbuf: u64, msg: u64) -> u64 {
    let linear = msg.div_ceil(64) * 64 + 320;
    let slab = match linear {
        0..=96 => 96,
        97..=128 => 128,
        129..=192 => 192,
        193..=32_768 => linear.next_power_of_two(),
        _ => linear.div_ceil(4096) * 4096,
    };
    let truesize = slab + 256;
    (sndbuf / truesize).max(1) * msg
}

/// [`mark_rates`] summed over the tasks.
pub(crate) fn mark_rate(out: &RunOutput, label: &str) -> f64 {
    mark_rates(out, label).iter().map(|(_, r)| r).sum()
}

/// A number as C's `%g` prints it: six significant digits, trailing zeros
/// dropped, an exponent below 1e-4 and from 1e6 (how tbench and the
/// commits' netperf tables print).
pub(crate) fn fmt_g(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return if v.is_finite() {
            "0".into()
        } else {
            v.to_string()
        };
    }
    let exp = v.abs().log10().floor() as i32;
    // Rounding to six digits may carry into the next power of ten.
    let rounded: f64 = format!("{:.5e}", v).parse().unwrap_or(v);
    let exp = if rounded.abs() >= 10f64.powi(exp + 1) {
        exp + 1
    } else {
        exp
    };
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if !(-4..6).contains(&exp) {
        let s = format!("{:.5e}", v);
        let (mant, e) = s.split_once('e').unwrap_or((&s, "0"));
        let e: i32 = e.parse().unwrap_or(0);
        let sign = if e < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mant.to_string()), e.abs())
    } else {
        let decimals = (5 - exp).max(0) as usize;
        trim(format!("{v:.decimals$}"))
    }
}

#[cfg(test)]
mod tests;

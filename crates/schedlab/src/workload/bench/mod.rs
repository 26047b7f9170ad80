//! Benchmark generators. Each follows the real tool's process structure and
//! wakeup pattern (lmbench's lat_ctx.c, perf's bench/sched-pipe.c and
//! sched-messaging.c, dbench's tbench_srv.c, netperf, sysbench), takes the
//! tool's parameter names and defaults, builds a [`WorkloadSpec`], and reads
//! what the tool would print from the run's timing points and traffic.

mod custom;
mod hackbench;
mod lat_ctx;
mod netperf;
mod ops;
mod pipe;
mod readout;
mod schbench;
mod sysbench;
mod tbench;

pub use custom::{Custom, CustomMetric};
pub use hackbench::Hackbench;
pub use lat_ctx::LatCtx;
pub use netperf::{Netperf, NetperfTest};
pub use ops::Built;
pub use pipe::{PerfBenchPipe, PipeTest};
pub use readout::{Better, Metric, Report};
pub use schbench::Schbench;
pub use sysbench::{Database, Sysbench};
pub use tbench::Tbench;

use crate::engine::RunOutput;
use crate::error::Concern;
use crate::error::{Error, Result};
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

impl Custom {
    /// Pretty JSON with `"kind": "custom"`, as it appears in an experiment.
    pub fn to_json(&self) -> String {
        let b = Benchmark::Custom(self.clone());
        serde_json::to_string_pretty(&b).expect("a workload serialises")
    }
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
    /// The generator's parameters against their limits, without building
    /// the workload (a custom workload is built: its spec is the check).
    pub fn check(&self) -> Result<()> {
        match self {
            Benchmark::PipeTest(b) => b.check(),
            Benchmark::PerfBenchPipe(b) => b.check(),
            Benchmark::LatCtx(b) => b.check(),
            Benchmark::Hackbench(b) => b.check(),
            Benchmark::Tbench(b) => b.check(),
            Benchmark::Netperf(b) => b.check(),
            Benchmark::Sysbench(b) => b.check(),
            Benchmark::Schbench(b) => b.check(),
            Benchmark::Custom(b) => b.build().map(|_| ()),
        }
    }

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
            return Err(Error::unknown(
                Concern::Workload,
                "parameter of this workload",
                name,
                valid,
            ));
        }
        obj.insert(name.to_string(), value.clone());
        crate::json_path::from_value(&v).map_err(|e| {
            Error::invalid(
                Concern::Workload,
                format!("{} parameter {name}: {e}", self.name()),
            )
        })
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
            return Err(Error::unknown(
                Concern::Workload,
                "workload kind",
                kind,
                KINDS,
            ));
        }
        if kind == "custom" {
            return Ok(Benchmark::Custom(Custom::example()));
        }
        crate::json_path::from_value(&serde_json::json!({ "kind": kind }))
            .map_err(|e| Error::invalid(Concern::Workload, format!("workload {kind}: {e}")))
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
    ParamInfo {
        optional: true,
        ..p(
            "exit_us",
            "",
            "each child's exit before the parent reaps it, us (0: not timed)",
        )
    },
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
    ParamInfo {
        choices: &["0.4", "1.0"],
        ..p(
            "version",
            "",
            "sysbench's OLTP test: 0.4's (one more UPDATE) or 1.0's",
        )
    },
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

#[cfg(test)]
mod tests;

//! pipe-test (Ingo Molnar) and `perf bench sched pipe`: a parent and a
//! forked child pass one token through two pipes, strictly 1:1 and
//! synchronous. One loop is a full round trip (two writes, two reads, two
//! wakeups). Left out: the tools' own setup and their page-cache effects.

use super::ops::{channel, check, mark, read, task, write, Built};
use super::readout::{marks, Report};
use crate::engine::RunOutput;
use crate::error::Result;
use crate::workload::program::{ChannelKind, Op, TaskSpec, WorkloadSpec};
use serde::{Deserialize, Serialize};

/// pipe-test: prints "N.NN usecs/loop." after every `loops` round trips.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PipeTest {
    /// Round trips per printed line (LOOPS; the "-1m" variant uses 1,000,000).
    #[serde(default = "pipe_test_loops")]
    pub loops: u64,
    /// Printed lines (the tool prints until stopped).
    #[serde(default = "pipe_test_batches")]
    pub batches: u64,
    /// taskset-style CPUs for both processes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity: Option<String>,
    /// CPUs for the child only (overrides `affinity` for it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub child_affinity: Option<String>,
}

fn pipe_test_loops() -> u64 {
    500_000
}
fn pipe_test_batches() -> u64 {
    10
}

/// The token is an int.
const TOKEN: u64 = 4;

/// Parent and child programs around `rounds` round trips, the parent's
/// wrapped by `wrap`.
fn ping_pong(
    affinity: &Option<String>,
    child_affinity: &Option<String>,
    rounds: u64,
    parent_loop: impl FnOnce(Vec<Op>) -> Vec<Op>,
    process: Option<u32>,
) -> WorkloadSpec {
    let child_aff = child_affinity.clone().or_else(|| affinity.clone());
    let mut child = task(
        "child".into(),
        &child_aff,
        vec![Op::Loop {
            count: rounds,
            body: vec![read(0, TOKEN), write(1, TOKEN)],
        }],
    );
    child.process = process;
    let round = vec![write(0, TOKEN), read(1, TOKEN)];
    let mut program = vec![Op::Fork(Box::new(child))];
    program.extend(parent_loop(round));
    let mut parent: TaskSpec = task("parent".into(), affinity, program);
    parent.process = process;
    WorkloadSpec {
        channels: vec![
            channel(ChannelKind::Pipe, 65536),
            channel(ChannelKind::Pipe, 65536),
        ],
        tasks: vec![parent],
    }
}

impl PipeTest {
    /// The parameters' limits, without building the workload.
    pub fn check(&self) -> Result<()> {
        check("pipe-test", "loops", self.loops, 1, 100_000_000)?;
        check("pipe-test", "batches", self.batches, 1, 1000)?;
        check(
            "pipe-test",
            "loops x batches",
            self.loops * self.batches,
            1,
            100_000_000,
        )?;
        Ok(())
    }

    pub fn build(&self) -> Result<Built> {
        self.check()?;
        let (loops, batches) = (self.loops, self.batches);
        let spec = ping_pong(
            &self.affinity,
            &self.child_affinity,
            loops * batches,
            |round| {
                vec![
                    mark("batch"),
                    Op::Loop {
                        count: batches,
                        body: vec![
                            Op::Loop {
                                count: loops,
                                body: round,
                            },
                            mark("batch"),
                        ],
                    },
                ]
            },
            None,
        );
        Ok(Built {
            spec,
            duration_ns: None,
            measure_from_ns: 0,
        })
    }

    pub fn report(&self, out: &RunOutput) -> Report {
        let series: Vec<f64> = marks(out, "batch")
            .windows(2)
            .map(|w| (w[1].0 - w[0].0) as f64 / self.loops as f64 / 1000.0)
            .collect();
        let text = series
            .iter()
            .map(|v| format!("{v:.2} usecs/loop.\n"))
            .collect();
        Report {
            value: mean(&series),
            series,
            details: vec![],
            text,
        }
    }
}

pub(crate) fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// `perf bench sched pipe`: one run of `loops` round trips; prints the
/// total time, usecs/op and ops/sec.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PerfBenchPipe {
    /// -l: round trips.
    #[serde(default = "perf_loops")]
    pub loops: u64,
    /// -T: threads of one process instead of two processes.
    #[serde(default)]
    pub threaded: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub child_affinity: Option<String>,
}

fn perf_loops() -> u64 {
    1_000_000
}

impl PerfBenchPipe {
    /// The parameters' limits, without building the workload.
    pub fn check(&self) -> Result<()> {
        check("perf bench sched pipe", "loops", self.loops, 1, 100_000_000)?;
        Ok(())
    }

    pub fn build(&self) -> Result<Built> {
        self.check()?;
        let loops = self.loops;
        let process = self.threaded.then_some(1);
        let spec = ping_pong(
            &self.affinity,
            &self.child_affinity,
            loops,
            |round| {
                vec![
                    mark("run"),
                    Op::Loop {
                        count: loops,
                        body: round,
                    },
                    mark("run"),
                ]
            },
            process,
        );
        Ok(Built {
            spec,
            duration_ns: None,
            measure_from_ns: 0,
        })
    }

    pub fn report(&self, out: &RunOutput) -> Report {
        let m = marks(out, "run");
        let total_ns = if m.len() >= 2 { m[1].0 - m[0].0 } else { 0 };
        let secs = total_ns as f64 / 1e9;
        let usecs_op = total_ns as f64 / self.loops as f64 / 1000.0;
        let ops = if secs > 0.0 {
            (self.loops as f64 / secs) as u64
        } else {
            0
        };
        let who = if self.threaded {
            "threads"
        } else {
            "processes"
        };
        let text = format!(
            "# Running 'sched/pipe' benchmark:\n# Executed {} pipe operations between two {who}\n\n     Total time: {secs:.3} [sec]\n\n{usecs_op:>15.6} usecs/op\n{ops:>15} ops/sec\n",
            self.loops
        );
        Report {
            value: usecs_op,
            series: vec![],
            details: vec![],
            text,
        }
    }
}

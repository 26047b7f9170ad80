//! hackbench: G groups of 20 senders and 20 receivers over AF_UNIX
//! socketpairs (or pipes with -p), processes (or threads with -T). Each
//! sender writes `loops` messages of `datasize` bytes to each receiver of
//! its group in turn; each receiver reads fds x loops messages. Many-to-many
//! sync wakeups with the senders running on: wake_wide territory. Start-up
//! as the tool does it: one parent forks every receiver and sender (each
//! placed by the fork path); each child says it is ready on a pipe and
//! waits for the start pipe; once all are ready the parent takes the time
//! and writes the start byte, waking them all. Prints the time from then
//! until the last receiver is done, or, with `exit_us`, until the parent
//! has reaped every child: each child's exit (its exit handlers and the
//! teardown of its address space) takes that long, and the parent, waiting
//! in wait(2), is woken by each one, as the tools time it.

use super::ops::{channel, check, read, task, write, Built};
use super::readout::{marks, Report};
use crate::engine::RunOutput;
use crate::error::Result;
use crate::workload::program::{ChannelKind, Op, WorkloadSpec};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hackbench {
    /// -g: groups.
    #[serde(default = "default_groups")]
    pub groups: u64,
    /// -l: messages each sender sends to each receiver.
    #[serde(default = "default_loops")]
    pub loops: u64,
    /// -f: senders and receivers per group.
    #[serde(default = "default_fds")]
    pub fds: u64,
    /// -s: message size in bytes.
    #[serde(default = "default_datasize")]
    pub datasize: u64,
    /// -p: pipes instead of unix sockets.
    #[serde(default)]
    pub pipe: bool,
    /// -T: threads instead of processes.
    #[serde(default)]
    pub threads: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity: Option<String>,
    /// Each child's exit, in microseconds of its own CPU time, after which
    /// the parent reaps it; 0 leaves exits and reaping out (the time ends
    /// with the last receiver's last read). A property of the tool's
    /// process on the machine: `schedlab validate` measures it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub exit_us: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A unix socket's send buffer: net.core.wmem_default.
const UNIX_SNDBUF: u64 = 212_992;

/// The children's "ready" pipe and the start pipe; with exits, the
/// pipe that stands for wait(2) (a dying child's notice wakes the parent).
const READY: usize = 0;
const START: usize = 1;
const EXITED: usize = 2;

fn default_groups() -> u64 {
    10
}
fn default_loops() -> u64 {
    100
}
fn default_fds() -> u64 {
    20
}
fn default_datasize() -> u64 {
    100
}

impl Hackbench {
    /// The parameters' limits, without building the workload.
    pub fn check(&self) -> Result<()> {
        check("hackbench", "groups", self.groups, 1, 200)?;
        check("hackbench", "loops", self.loops, 1, 1_000_000)?;
        check("hackbench", "fds", self.fds, 1, 100)?;
        check("hackbench", "datasize", self.datasize, 1, 65536)?;
        check("hackbench", "exit_us", self.exit_us, 0, 1_000_000)?;
        Ok(())
    }

    pub fn build(&self) -> Result<Built> {
        self.check()?;
        let (kind, capacity) = if self.pipe {
            (ChannelKind::Pipe, 65536)
        } else {
            (
                ChannelKind::Unix,
                super::ops::unix_stream_capacity(UNIX_SNDBUF, self.datasize),
            )
        };
        let fds = self.fds as usize;
        // Channels 0 and 1: the children's "ready" pipe and the start pipe.
        let ntasks = 2 * self.fds * self.groups;
        let exits = self.exit_us > 0;
        let mut channels = vec![
            channel(ChannelKind::Pipe, 65536),
            channel(ChannelKind::Pipe, 65536),
        ];
        if exits {
            channels.push(channel(ChannelKind::Pipe, 65536));
        }
        let mut tasks = Vec::new();
        // Every child: ready, wait for the start, its work, then (with
        // exits) its exit and the notice that wakes the waiting parent.
        let barrier = |mut program: Vec<Op>| {
            let mut p = vec![write(READY, 1), read(START, 1)];
            p.append(&mut program);
            if exits {
                p.push(super::ops::compute(self.exit_us * 1000, 0));
                p.push(write(EXITED, 1));
            }
            p
        };
        for g in 0..self.groups as usize {
            let base = channels.len();
            for _ in 0..fds {
                channels.push(channel(kind, capacity));
            }
            for r in 0..fds {
                let body = vec![read(base + r, self.datasize)];
                let mut t = task(
                    format!("receiver{g}.{r}"),
                    &self.affinity,
                    barrier(vec![
                        Op::Loop {
                            count: self.fds * self.loops,
                            body,
                        },
                        super::ops::mark("done"),
                    ]),
                );
                t.process = self.threads.then_some(1);
                tasks.push(t);
            }
            for s in 0..fds {
                let body: Vec<Op> = (0..fds).map(|r| write(base + r, self.datasize)).collect();
                let mut t = task(
                    format!("sender{g}.{s}"),
                    &self.affinity,
                    barrier(vec![Op::Loop {
                        count: self.loops,
                        body,
                    }]),
                );
                t.process = self.threads.then_some(1);
                tasks.push(t);
            }
        }
        // The parent: fork every child, wait until each is ready, take the
        // start time and wake them all (the children poll the start pipe).
        let mut program: Vec<Op> = tasks.into_iter().map(|t| Op::Fork(Box::new(t))).collect();
        program.extend([
            Op::Loop {
                count: ntasks,
                body: vec![read(READY, 1)],
            },
            super::ops::mark("start"),
            write(START, ntasks),
        ]);
        if exits {
            program.extend([
                Op::Loop {
                    count: ntasks,
                    body: vec![read(EXITED, 1)],
                },
                super::ops::mark("reaped"),
            ]);
        }
        let mut parent = task("hackbench".into(), &self.affinity, program);
        parent.process = self.threads.then_some(1);
        Ok(Built {
            spec: WorkloadSpec {
                channels,
                tasks: vec![parent],
            },
            duration_ns: None,
            measure_from_ns: 0,
        })
    }

    pub fn report(&self, out: &RunOutput) -> Report {
        let start = marks(out, "start").first().map_or(0, |m| m.0);
        let end_label = if self.exit_us > 0 { "reaped" } else { "done" };
        let end = marks(out, end_label)
            .iter()
            .map(|m| m.0)
            .max()
            .unwrap_or(start);
        let secs = end.saturating_sub(start) as f64 / 1e9;
        let mode = if self.threads { "threaded" } else { "process" };
        let text = format!(
            "Running in {mode} mode with {} groups using {} file descriptors each (== {} tasks)\nEach sender will pass {} messages of {} bytes\nTime: {secs:.3}\n",
            self.groups,
            2 * self.fds,
            2 * self.fds * self.groups,
            self.loops,
            self.datasize
        );
        Report {
            value: secs,
            series: vec![],
            details: vec![],
            text,
        }
    }
}

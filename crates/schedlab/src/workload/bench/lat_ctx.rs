//! lmbench's `lat_ctx -s SIZE N`: N processes in a ring of pipes pass one
//! token; each reads it, sums a SIZE KB array, writes it on. The overhead
//! (a pipe write and read plus the array sum in one process, with no
//! switch) is measured first and subtracted, as lmbench does. Left out:
//! lmbench's repetition and minimum-of-runs logic (one timed run here).

use super::ops::{channel, check, compute, mark, read, task, write, Built};
use super::readout::{marks, Report};
use crate::engine::RunOutput;
use crate::error::Result;
use crate::workload::program::{ChannelKind, Op, WorkloadSpec};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LatCtx {
    /// -s: the array each process sums per pass, KB.
    #[serde(default)]
    pub size_kb: u64,
    /// N: processes in the ring.
    #[serde(default = "default_procs")]
    pub procs: u64,
    /// Trips of the token round the ring.
    #[serde(default = "default_rounds")]
    pub rounds: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity: Option<String>,
}

fn default_procs() -> u64 {
    2
}
fn default_rounds() -> u64 {
    10_000
}

/// Summing the array: 8 bytes per ns (a cached sequential read).
const SUM_BYTES_PER_NS: u64 = 8;
/// Overhead passes measured before the ring starts.
const OVERHEAD_PASSES: u64 = 1_000;
const TOKEN: u64 = 4;

impl LatCtx {
    fn sum(&self) -> Vec<Op> {
        let ns = self.size_kb * 1024 / SUM_BYTES_PER_NS;
        if ns == 0 {
            vec![]
        } else {
            vec![compute(ns, 0)]
        }
    }

    /// The parameters' limits, without building the workload.
    pub fn check(&self) -> Result<()> {
        check("lat_ctx", "size_kb", self.size_kb, 0, 64 * 1024)?;
        check("lat_ctx", "procs", self.procs, 2, 1024)?;
        check("lat_ctx", "rounds", self.rounds, 1, 10_000_000)?;
        Ok(())
    }

    pub fn build(&self) -> Result<Built> {
        self.check()?;
        let n = self.procs as usize;
        // Channel i feeds process i; channel n is the overhead pipe.
        let channels: Vec<_> = (0..=n).map(|_| channel(ChannelKind::Pipe, 65536)).collect();
        let hop = |i: usize| {
            let mut body = vec![read(i, TOKEN)];
            body.extend(self.sum());
            body.push(write((i + 1) % n, TOKEN));
            body
        };
        let mut tasks = Vec::new();
        for i in 1..n {
            let mut t = task(
                format!("ctx{i}"),
                &self.affinity,
                vec![Op::Loop {
                    count: self.rounds,
                    body: hop(i),
                }],
            );
            t.working_set_kib = self.size_kb;
            tasks.push(t);
        }
        // Process 0: measure the overhead, start the ring, time it.
        let mut ovr = vec![write(n, TOKEN), read(n, TOKEN)];
        ovr.extend(self.sum());
        let mut first = self.sum();
        first.push(write(1, TOKEN));
        let mut program = vec![
            mark("ovr"),
            Op::Loop {
                count: OVERHEAD_PASSES,
                body: ovr,
            },
            mark("ovr"),
        ];
        program.extend(tasks.into_iter().map(|t| Op::Fork(Box::new(t))));
        program.push(mark("ring"));
        program.extend(first);
        program.push(Op::Loop {
            count: self.rounds,
            body: hop(0),
        });
        program.push(mark("ring"));
        let mut p0 = task("ctx0".into(), &self.affinity, program);
        p0.working_set_kib = self.size_kb;
        Ok(Built {
            spec: WorkloadSpec {
                channels,
                tasks: vec![p0],
            },
            duration_ns: None,
            measure_from_ns: 0,
        })
    }

    pub fn report(&self, out: &RunOutput) -> Report {
        let span = |label: &str| {
            let m = marks(out, label);
            if m.len() >= 2 {
                (m[m.len() - 1].0 - m[0].0) as f64
            } else {
                0.0
            }
        };
        let ovr = span("ovr") / OVERHEAD_PASSES as f64 / 1000.0;
        let per_hop = span("ring") / (self.rounds * self.procs) as f64 / 1000.0;
        let value = (per_hop - ovr).max(0.0);
        let text = format!(
            "\"size={}k ovr={ovr:.2}\n{} {value:.2}\n",
            self.size_kb, self.procs
        );
        Report {
            value,
            series: vec![],
            details: vec![],
            text,
        }
    }
}

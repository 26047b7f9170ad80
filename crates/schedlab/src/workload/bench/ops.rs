//! What generators build workloads from: the tasks, channels and
//! operations of the task language as each tool uses them, parameter
//! checks, and what a generator hands the engine ([`Built`]).

use crate::error::Concern;
use crate::error::{Error, Result};
use crate::workload::program::{ChannelKind, ChannelSpec, Op, TaskSpec, Time, WorkloadSpec};

/// A workload ready to run: tasks, how long, and when measuring starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Built {
    pub spec: WorkloadSpec,
    pub duration_ns: Option<u64>,
    pub measure_from_ns: u64,
}

/// A parameter outside its allowed range.
pub(crate) fn check(tool: &str, name: &str, value: u64, lo: u64, hi: u64) -> Result<()> {
    if (lo..=hi).contains(&value) {
        Ok(())
    } else {
        Err(Error::invalid(
            Concern::Workload,
            format!("{tool} parameter {name} is {value}; it must be {lo}..={hi}"),
        ))
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
        rt: None,
        slice_ns: None,
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
    Op::Read {
        chan,
        bytes,
        poll: false,
    }
}

/// A read that waits in poll(2) first, as libpq's clients do.
pub(crate) fn poll_read(chan: usize, bytes: u64) -> Op {
    Op::Read {
        chan,
        bytes,
        poll: true,
    }
}

pub(crate) fn mark(label: &str) -> Op {
    Op::Mark(label.to_string())
}

/// The payload bytes an AF_UNIX stream socket holds unread when every
/// message is `msg` bytes: the sender's `sndbuf` is charged each queued
/// message's skb truesize ([`crate::cost::unix_skb_truesize`]), not its
/// payload. A 100-byte message costs 768 bytes, so 277 of them fit in
/// 212992, not 2129. At least one message always fits.
pub(crate) fn unix_stream_capacity(sndbuf: u64, msg: u64) -> u64 {
    (sndbuf / crate::cost::unix_skb_truesize(msg)).max(1) * msg
}

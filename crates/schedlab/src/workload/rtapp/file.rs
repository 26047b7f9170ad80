//! What every part of the rt-app import reads the file with: where a key
//! is (`At`), its values as rt-app reads them, and the `global` settings
//! the events need.

use super::dialect::{Field, J};
use crate::error::{Concern, Error, Result};
use crate::workload::program::RtPolicy;

/// Where a key is: its path in the file and its line.
#[derive(Debug, Clone)]
pub(super) struct At {
    pub path: String,
    pub line: u32,
}

impl At {
    pub fn child(&self, f: &Field) -> At {
        At {
            path: format!("{}.{}", self.path, crate::error::excerpt(&f.key)),
            line: f.line,
        }
    }

    /// A key this one should have had, named at this one's line.
    pub fn missing(&self, key: &str) -> At {
        At {
            path: format!("{}.{key}", self.path),
            line: self.line,
        }
    }

    pub fn error(&self, msg: impl std::fmt::Display) -> Error {
        Error::invalid(Concern::Import, self.say(msg))
    }

    pub fn say(&self, msg: impl std::fmt::Display) -> String {
        format!("{} (line {}): {msg}", self.path, self.line)
    }
}

pub(super) fn obj<'a>(j: &'a J, at: &At) -> Result<&'a [Field]> {
    match j {
        J::Obj(o) => Ok(o),
        _ => Err(at.error("expected an object")),
    }
}

/// A whole number (rt-app reads its numbers with json_object_get_int).
pub(super) fn int(j: &J, at: &At) -> Result<i64> {
    match j {
        J::Num(n) if n.fract() == 0.0 && n.abs() < 9e15 => Ok(*n as i64),
        J::Omitted => Err(at.error("needs a value")),
        _ => Err(at.error("expected a whole number")),
    }
}

/// A count of microseconds, in ns.
pub(super) fn us(j: &J, at: &At) -> Result<u64> {
    let v = int(j, at)?;
    if v < 0 {
        return Err(at.error(format!("{v} us is negative")));
    }
    Ok(v as u64 * 1000)
}

pub(super) fn string<'a>(j: &'a J, at: &At, what: &str) -> Result<&'a str> {
    match j {
        J::Str(s) if !s.is_empty() => Ok(s),
        _ => Err(at.error(format!("expected {what}"))),
    }
}

/// What the tasks see of the file's `global` section.
pub(super) struct Global {
    pub duration_s: i64,
    pub mem_buffer: u64,
    pub default_policy: Policy,
    pub pi_enabled: bool,
}

/// A scheduling class rt-app sets (its "policy").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Policy {
    Other,
    Rt(RtPolicy),
}

/// A scheduling policy rt-app knows; the ones not modelled are refused.
pub(super) fn policy(j: &J, at: &At) -> Result<Policy> {
    let p = string(j, at, "a policy name")?;
    match p {
        "SCHED_OTHER" => Ok(Policy::Other),
        "SCHED_FIFO" => Ok(Policy::Rt(RtPolicy::Fifo)),
        "SCHED_RR" => Ok(Policy::Rt(RtPolicy::Rr)),
        "SCHED_DEADLINE" => Err(at.error(
            "SCHED_DEADLINE is not modelled (the deadline class: runtime, deadline and period)",
        )),
        "SCHED_BATCH" | "SCHED_IDLE" => Err(at.error(format!(
            "{p} is not modelled: SCHED_OTHER (CFS, EEVDF), SCHED_FIFO and SCHED_RR are"
        ))),
        _ => Err(at.error(format!(
            "{p:?} is not a policy (SCHED_OTHER, SCHED_BATCH, SCHED_IDLE, SCHED_FIFO, SCHED_RR, SCHED_DEADLINE)"
        ))),
    }
}

//! rt-app import: an rt-app file (tasks, phases, events, resources,
//! global), read in rt-app's own dialect (`dialect`), as a custom workload.
//! rt-app runs a task's events in the order its file lists them.
//!
//! Tasks (`tasks.NAME`): `instance` (0: none at the start, only forks),
//! `loop` (-1: until the run ends), `phases` (each with `loop` and its own
//! `cpus`, `taskgroup`), `cpus` (an affinity; a phase's own set is applied
//! with sched_setaffinity at the phase's start, as rt-app does, and a phase
//! without one goes back to the task's), `delay` (slept to, from the start;
//! periods count from its end), `policy` SCHED_OTHER with `priority` (its
//! nice) and `dl-runtime` (its custom slice), or SCHED_FIFO / SCHED_RR
//! with `priority` (the RT class). The events are in `events.rs`. rt-app's
//! threads are threads of one process: switching between them changes no
//! address space.
//!
//! `global`: `duration` (s, -1: until every task ends), `default_policy`,
//! `mem_buffer_size`, `io_device` (only /dev/null is modelled), and the
//! keys that shape rt-app's logs or its own calibration, accepted and
//! ignored: a simulation needs no calibration and logs nothing. `resources`
//! (kept by rt-app for old files, which create what their events name) are
//! accepted and ignored.
//!
//! A phase's own `policy` and `priority` become a `scheduler` instruction
//! at its start. Refused with an error naming the key, its line and why:
//! SCHED_DEADLINE, SCHED_BATCH, SCHED_IDLE, a phase's own deadline
//! parameters, `memrun`, forks that fork each other in a cycle. What is accepted but changes nothing is
//! listed (`Remarks::ignored`); what runs differently from rt-app on the
//! real machine, or looks like a mistake, is a note (`Remarks::notes`):
//! task groups run flat, a `resume` that no task's `suspend` waits for.

mod dialect;
mod events;
mod file;
mod tasks;

use crate::error::Result;
use crate::workload::bench::{Custom, CustomMetric};
use dialect::{Field, J};
use events::Events;
use file::{int, obj, policy, At, Global, Policy};
use tasks::{relabel, TaskDef};

/// What an import gives: the workload and what it says about the file.
#[derive(Debug, Clone, PartialEq)]
pub struct Import {
    pub workload: Custom,
    pub remarks: Remarks,
}

/// Keys accepted without effect, and what runs unlike rt-app on a real
/// machine or looks like a mistake.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Remarks {
    /// Keys accepted and ignored (calibration, logging), by path.
    pub ignored: Vec<String>,
    /// Each a sentence, starting with the key's path and line.
    pub notes: Vec<String>,
}

impl std::fmt::Display for Remarks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if !self.ignored.is_empty() {
            writeln!(
                f,
                "accepted and ignored (no effect in a simulation): {}",
                self.ignored.join(", ")
            )?;
        }
        for n in &self.notes {
            writeln!(f, "note: {n}")?;
        }
        Ok(())
    }
}

/// Global keys that shape rt-app's logs or calibration: accepted, ignored.
const IGNORED_GLOBAL: [&str; 9] = [
    "calibration",
    "logdir",
    "log_basename",
    "log_size",
    "ftrace",
    "gnuplot",
    "lock_pages",
    "cumulative_slack",
    // Read by rt-app's early versions only (fragmenting run loops).
    "frag",
];

/// The resource types rt-app's string_to_resource knows, and the ones
/// its events create.
const RESOURCE_TYPES: [&str; 12] = [
    "mutex",
    "wait",
    "signal",
    "broadcast",
    "sync",
    "sleep",
    "run",
    "timer",
    "barrier",
    "membuf",
    "iodev",
    "sem",
];

/// How long a run lasts, s, when a task loops forever and the file gives
/// no duration (as long as rt-app's examples run, 2 to 6 s).
const DEFAULT_DURATION_S: u64 = 5;

/// Reads an rt-app file.
pub fn import(text: &str) -> Result<Import> {
    let root = dialect::parse(text)?;
    let top = At {
        path: "the file".into(),
        line: 1,
    };
    let mut remarks = Remarks::default();
    let mut global = Global {
        duration_s: -1,
        mem_buffer: crate::workload::program::default_mem_buffer(),
        default_policy: Policy::Other,
        pi_enabled: false,
    };
    let mut tasks_j = None;
    for f in obj(&root, &top)? {
        let at = At {
            path: f.key.clone(),
            line: f.line,
        };
        match f.key.as_str() {
            "tasks" => tasks_j = Some((&f.value, at)),
            "global" => read_global(&f.value, &at, &mut global, &mut remarks)?,
            "resources" => read_resources(&f.value, &at, &mut remarks)?,
            _ => return Err(at.error("not an rt-app top-level key (tasks, resources, global)")),
        }
    }
    let Some((tasks_j, tasks_at)) = tasks_j else {
        return Err(top.missing("tasks").error("the file has no tasks"));
    };
    let defs = obj(tasks_j, &tasks_at)?
        .iter()
        .map(|f| TaskDef::read(f, &tasks_at.child(f), global.default_policy))
        .collect::<Result<Vec<_>>>()?;
    for d in &defs {
        remarks.notes.extend(d.no_effect.iter().cloned());
    }
    if global.pi_enabled && defs.iter().any(|d| d.rt.is_some()) {
        remarks.notes.push(
            "global.pi_enabled: priority inheritance is not modelled: a task holding a mutex an RT task waits for keeps its own priority"
                .into(),
        );
    }
    let mut events = Events::new(&defs, &global);
    let mut tasks = Vec::new();
    let mut forever = false;
    for (i, def) in defs.iter().enumerate() {
        let program = events.program(i)?;
        forever |= def.forever();
        for n in 0..def.instances {
            let name = if def.instances > 1 {
                format!("{}-{n}", def.name)
            } else {
                def.name.clone()
            };
            let mut program = program.clone();
            relabel(&mut program, &format!("{}.", def.name), &format!("{name}."));
            tasks.push(def.spec(name, program));
        }
    }
    remarks.notes.extend(events.notes());
    if tasks.is_empty() {
        return Err(tasks_at.error(
            "no task starts (every task has \"instance\": 0, and only a fork would start one)",
        ));
    }
    let duration_ms = match global.duration_s {
        -1 if forever => {
            remarks.notes.push(format!(
                "global.duration: a task loops forever and the file gives no duration (rt-app runs until it is stopped): the run lasts {DEFAULT_DURATION_S} s"
            ));
            Some(DEFAULT_DURATION_S * 1000)
        }
        -1 => None,
        d => Some(d as u64 * 1000),
    };
    Ok(Import {
        workload: Custom {
            duration_ms,
            warmup_ms: 0,
            metric: CustomMetric::WakeupP99,
            mark: None,
            channels: Vec::new(),
            tasks,
        },
        remarks,
    })
}

fn read_global(j: &J, at: &At, global: &mut Global, remarks: &mut Remarks) -> Result<()> {
    for f in obj(j, at)? {
        let at = at.child(f);
        let v = &f.value;
        match f.key.as_str() {
            "duration" => {
                global.duration_s = match int(v, &at)? {
                    d if d == -1 || d >= 1 => d,
                    d => {
                        return Err(
                            at.error(format!("{d} is not -1 or a positive number of seconds"))
                        )
                    }
                }
            }
            "default_policy" => global.default_policy = policy(v, &at)?,
            "pi_enabled" => {
                global.pi_enabled = *v == J::Bool(true);
                remarks.ignored.push(at.path);
            }
            "mem_buffer_size" => {
                let n = int(v, &at)?;
                if n < 1 {
                    return Err(at.error(format!("{n} is not a size in bytes")));
                }
                global.mem_buffer = n as u64;
            }
            "io_device" => match v {
                J::Str(d) if d == "/dev/null" => remarks.ignored.push(at.path),
                J::Str(d) => remarks.notes.push(at.say(format!(
                    "iorun writes to {d:?} are modelled as writes to /dev/null (system calls that return at once)"
                ))),
                _ => return Err(at.error("expected a device's path")),
            },
            g if IGNORED_GLOBAL.contains(&g) => remarks.ignored.push(at.path),
            _ => return Err(at.error("not an rt-app global key")),
        }
    }
    Ok(())
}

fn read_resources(j: &J, at: &At, remarks: &mut Remarks) -> Result<()> {
    for f in obj(j, at)? {
        let at = at.child(f);
        let ty = obj(&f.value, &at)?.iter().find(|t| t.key == "type");
        match ty {
            Some(Field {
                value: J::Str(t), ..
            }) if RESOURCE_TYPES.contains(&t.as_str()) => {}
            Some(t) => {
                return Err(at.child(t).error(format!(
                    "not an rt-app resource type ({})",
                    RESOURCE_TYPES.join(", ")
                )))
            }
            None => return Err(at.error("a resource needs a \"type\"")),
        }
        remarks.ignored.push(at.path);
    }
    Ok(())
}

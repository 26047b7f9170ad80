//! rt-app's events as task-language operations, each as rt-app runs it
//! (run_event in rt-app.c; parse_task_event_data in
//! rt-app_parse_config.c matches a key by its start, so `run0`, `sleep1`
//! and `resume_audio` are events):
//!
//! - `run` (us of CPU work: longer when preempted), `runtime` (runs until
//!   that much wall time has passed), `sleep` (us; 0 is a nanosleep that
//!   returns at once), `timer` (`period` us, `mode` relative, rt-app's
//!   default, or absolute; `ref` a timer every task naming it shares, one
//!   per thread when it starts with "unique"; its periods count from the
//!   end of the task's delay).
//! - `lock` / `unlock` (a pthread mutex), `wait` (`ref` a condition
//!   variable, `mutex` held), `signal`, `broad`, `sync` (signal then wait,
//!   the mutex held), `barrier` (its users are the threads whose events
//!   name it), `sem_post` / `sem_wait` (a POSIX semaphore from 0).
//! - `suspend` (any value, or none: the calling task waits on the condition
//!   variable named after itself, under the mutex of that name) and
//!   `resume` (broadcasts the named task's condition variable under its
//!   mutex): rt-app's own pair, a wakeup lost when no one waits, since
//!   32fcddf (2025) whatever `suspend`'s value.
//! - `yield` (sched_yield), `fork` (a new thread of the named task),
//!   `mem` (bytes written into the thread's `global.mem_buffer_size`
//!   buffer), `iorun` (bytes written to /dev/null in buffer-sized writes:
//!   one system call each).

use super::dialect::{Field, J};
use super::file::{int, obj, string, us, At, Global};
use super::tasks::{assemble, TaskDef};
use crate::error::Result;
use crate::workload::program::{CondWaitSpec, Op, SemSpec, Time, TimerSpec};

/// Builds the tasks' programs, each once (forks reuse them), and gathers
/// what to tell the user about them.
pub(super) struct Events<'a> {
    defs: &'a [TaskDef<'a>],
    global: &'a Global,
    programs: Vec<Option<Vec<Op>>>,
    /// Tasks whose programs are being built (a fork cycle would loop).
    building: Vec<usize>,
    forked: Vec<bool>,
    resumes: Vec<(At, String)>,
    notes: Vec<String>,
}

impl<'a> Events<'a> {
    pub fn new(defs: &'a [TaskDef<'a>], global: &'a Global) -> Self {
        Events {
            defs,
            global,
            programs: vec![None; defs.len()],
            building: Vec::new(),
            forked: vec![false; defs.len()],
            resumes: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// Task `i`'s program.
    pub fn program(&mut self, i: usize) -> Result<Vec<Op>> {
        if let Some(p) = &self.programs[i] {
            return Ok(p.clone());
        }
        let defs = self.defs;
        let def = &defs[i];
        if let Some(at) = self.building.iter().position(|&b| b == i) {
            let cycle: Vec<&str> = self.building[at..]
                .iter()
                .chain([&i])
                .map(|&b| self.defs[b].name.as_str())
                .collect();
            return Err(def.at.error(format!(
                "forks itself through {} (each fork would hold a copy of the next)",
                cycle.join(" -> ")
            )));
        }
        self.building.push(i);
        let mut phases = Vec::new();
        for (n, p) in def.phases.iter().enumerate() {
            if n > 0 && def.phases[n - 1].repeat == -1 {
                self.notes.push(p.at.say(
                    "comes after a phase that loops forever, so it never runs (as in rt-app)",
                ));
            }
            if let Some((at, g)) = p.taskgroup.as_ref().or(def.taskgroup.as_ref()) {
                self.note_taskgroup(at, g);
            }
            let mut ops = Vec::new();
            for f in &p.events {
                ops.extend(self.event(def, f, &p.at.child(f))?);
            }
            if ops.is_empty() {
                return Err(p.at.error(
                    "its events take no time (run 0, mem 0, ...): the phase would repeat at one instant",
                ));
            }
            phases.push(ops);
        }
        self.building.pop();
        let program = assemble(def, phases);
        self.programs[i] = Some(program.clone());
        Ok(program)
    }

    fn note_taskgroup(&mut self, at: &At, group: &str) {
        let note = at.say(format!(
            "task group {group:?} is run flat: CFS group scheduling is not modelled, so the task shares CPU time as one of all the file's tasks, not as one of its group"
        ));
        if !self.notes.contains(&note) {
            self.notes.push(note);
        }
    }

    /// The notes: the ones gathered, a `resume` no task's `suspend` waits
    /// for, a task never started.
    pub fn notes(&mut self) -> Vec<String> {
        let suspends = |d: &TaskDef| {
            d.phases
                .iter()
                .flat_map(|p| &p.events)
                .any(|f| f.key.starts_with("suspend"))
        };
        for (at, name) in std::mem::take(&mut self.resumes) {
            if !self.defs.iter().any(|d| d.name == name && suspends(d)) {
                self.notes.push(at.say(format!(
                    "no task named {name:?} suspends, so this resume wakes no one (a suspend waits under its own task's name, whatever its value, since rt-app 32fcddf)"
                )));
            }
        }
        for (d, forked) in self.defs.iter().zip(&self.forked) {
            if d.instances == 0 && !forked {
                self.notes
                    .push(d.at.say("has \"instance\": 0 and no task forks it, so it never runs"));
            }
        }
        std::mem::take(&mut self.notes)
    }

    /// One event of `task`.
    fn event(&mut self, task: &TaskDef, f: &Field, at: &At) -> Result<Vec<Op>> {
        let key = f.key.as_str();
        let v = &f.value;
        if key.starts_with("run") || key.starts_with("sleep") {
            let ns = us(v, at)?;
            return Ok(match ns {
                // loadwait(0) does nothing; nanosleep(0) returns at once.
                0 if key.starts_with("sleep") => vec![Op::Syscalls(1)],
                0 => Vec::new(),
                _ if key.starts_with("sleep") => vec![Op::Sleep(Time::fixed(ns))],
                _ if key.starts_with("runtime") => vec![Op::Runtime(Time::fixed(ns))],
                _ => vec![Op::Compute(Time::fixed(ns))],
            });
        }
        if key.starts_with("memrun") {
            return Err(at.error(
                "the memrun event is not modelled (use mem: bytes written into the thread's buffer)",
            ));
        }
        if key.starts_with("mem") || key.starts_with("iorun") {
            let bytes = int(v, at)?;
            if bytes < 0 {
                return Err(at.error(format!("{bytes} is not a size in bytes")));
            }
            let (bytes, buffer) = (bytes as u64, self.global.mem_buffer);
            return Ok(match bytes {
                0 => Vec::new(),
                _ if key.starts_with("mem") => vec![Op::Mem { bytes, buffer }],
                // ioload: one write(2) per buffer-full to the device.
                _ => vec![Op::Syscalls(bytes.div_ceil(buffer))],
            });
        }
        if key.starts_with("lock") {
            return Ok(vec![Op::Lock(name(v, at, "a mutex")?)]);
        }
        if key.starts_with("unlock") {
            return Ok(vec![Op::Unlock(name(v, at, "a mutex")?)]);
        }
        if key.starts_with("signal") {
            return Ok(vec![Op::Signal(name(v, at, "a condition variable")?)]);
        }
        if key.starts_with("broad") {
            return Ok(vec![Op::Broadcast(name(v, at, "a condition variable")?)]);
        }
        if key.starts_with("wait") || key.starts_with("sync") {
            let wait = cond_wait(v, at)?;
            if key.starts_with("wait") {
                return Ok(vec![wait]);
            }
            // sync: signal, then wait, the mutex held throughout.
            let Op::CondWait(w) = &wait else {
                unreachable!()
            };
            return Ok(vec![Op::Signal(w.cond.clone()), wait]);
        }
        if key.starts_with("barrier") {
            return Ok(vec![Op::Barrier(name(v, at, "a barrier")?)]);
        }
        if key.starts_with("timer") {
            return timer(task, v, at);
        }
        if key.starts_with("resume") {
            let who = name(v, at, "the task to resume")?;
            self.resumes.push((at.clone(), who.clone()));
            return Ok(vec![
                Op::Lock(who.clone()),
                Op::Broadcast(who.clone()),
                Op::Unlock(who),
            ]);
        }
        if key.starts_with("suspend") {
            let me = task.name.clone();
            // Told once per task: the media examples name other tasks.
            let said = format!("{}: ", task.at.path);
            if let J::Str(s) = v {
                if *s != me && !s.is_empty() && !self.notes.iter().any(|n| n.starts_with(&said)) {
                    self.notes.push(format!(
                        "{said}its suspend events suspend the task itself (rt-app ignores their values, such as {s:?} at line {}, since 32fcddf)",
                        at.line
                    ));
                }
            }
            return Ok(vec![
                Op::Lock(me.clone()),
                Op::CondWait(Box::new(CondWaitSpec {
                    cond: me.clone(),
                    mutex: me.clone(),
                })),
                Op::Unlock(me),
            ]);
        }
        if key.starts_with("yield") {
            return Ok(vec![Op::Yield]);
        }
        if key.starts_with("fork") {
            let child = name(v, at, "the task to fork")?;
            let Some(i) = self.defs.iter().position(|d| d.name == child) else {
                return Err(at.error(format!("no task is named {child:?}")));
            };
            self.forked[i] = true;
            let program = self.program(i)?;
            let spec = self.defs[i].spec(child, program);
            return Ok(vec![Op::Fork(Box::new(spec))]);
        }
        if key.starts_with("sem_post") || key.starts_with("sem_wait") {
            let sem = SemSpec {
                sem: name(v, at, "a semaphore")?,
                sync: false,
                free: false,
            };
            return Ok(vec![if key.starts_with("sem_post") {
                Op::SemPost(sem)
            } else {
                Op::SemWait(sem)
            }]);
        }
        unreachable!("{key} is an event (is_event)")
    }
}

fn name(v: &J, at: &At, what: &str) -> Result<String> {
    Ok(string(v, at, &format!("the name of {what}"))?.to_string())
}

/// `wait` / `sync`: `{ "ref": condition variable, "mutex": its mutex }`.
fn cond_wait(v: &J, at: &At) -> Result<Op> {
    let mut cond = None;
    let mut mutex = None;
    for f in obj(v, at)? {
        let kat = at.child(f);
        match f.key.as_str() {
            "ref" => cond = Some(name(&f.value, &kat, "a condition variable")?),
            "mutex" => mutex = Some(name(&f.value, &kat, "a mutex")?),
            _ => return Err(kat.error("not a key of this event (ref, mutex)")),
        }
    }
    let Some(cond) = cond else {
        return Err(at
            .missing("ref")
            .error("names the condition variable (\"ref\")"));
    };
    let Some(mutex) = mutex else {
        return Err(at
            .missing("mutex")
            .error("names the mutex (\"mutex\") held while waiting"));
    };
    Ok(Op::CondWait(Box::new(CondWaitSpec { cond, mutex })))
}

/// `timer`: `{ "ref", "period", "mode" }`; its use records the task's
/// period, slack and run under "TASK.period", "TASK.slack", "TASK.run".
fn timer(task: &TaskDef, v: &J, at: &At) -> Result<Vec<Op>> {
    let mut period = None;
    // rt-app's defaults: the timer "unknown", relative.
    let mut name = String::from("unknown");
    let mut relative = true;
    for f in obj(v, at)? {
        let kat = at.child(f);
        match f.key.as_str() {
            "period" => period = Some(us(&f.value, &kat)?),
            "ref" => name = string(&f.value, &kat, "a timer name")?.to_string(),
            "mode" => match &f.value {
                J::Str(m) if m == "absolute" => relative = false,
                J::Str(m) if m == "relative" => relative = true,
                _ => return Err(kat.error("expected \"absolute\" or \"relative\"")),
            },
            _ => return Err(kat.error("not a timer key (ref, period, mode)")),
        }
    }
    let Some(period_ns) = period.filter(|&p| p > 0) else {
        return Err(at
            .missing("period")
            .error("a timer needs a period of at least 1 us"));
    };
    let t = &task.name;
    Ok(vec![
        Op::Timer(Box::new(TimerSpec {
            period_ns,
            // "unique..." timers are each thread's own; others are shared.
            shared: !name.starts_with("unique"),
            name,
            relative,
            origin_ns: task.delay_ns,
            slack: Some(format!("{t}.slack")),
            run: Some(format!("{t}.run")),
        })),
        Op::Mark(format!("{t}.period")),
    ])
}

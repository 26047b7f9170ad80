//! The file's tasks and phases as rt-app's parse_task_data and
//! parse_task_phase_data read them (which keys are events, which are the
//! task's or the phase's own), and a task's program assembled from its
//! phases' operations as rt-app's thread_body runs them.

use super::dialect::{Field, J};
use super::file::{int, obj, policy, us, At, Policy};
use crate::error::Result;
use crate::workload::program::{Op, RtSpec, SchedSpec, TaskSpec, Time};

/// rt-app's event keys (its `events` list); a key is an event when it
/// starts with one.
const EVENTS: [&str; 20] = [
    "lock", "unlock", "wait", "signal", "broad", "sync", "sleep", "runtime", "run", "timer",
    "suspend", "resume", "memrun", "mem", "iorun", "yield", "barrier", "fork", "sem_post",
    "sem_wait",
];

pub(super) fn is_event(key: &str) -> bool {
    EVENTS.iter().any(|e| key.starts_with(e))
}

/// A task as the file defines it.
pub(super) struct TaskDef<'a> {
    pub name: String,
    pub at: At,
    /// Threads made at the start (0: only forks make them).
    pub instances: u64,
    pub delay_ns: u64,
    pub cpus: Option<String>,
    pub nice: i8,
    pub rt: Option<RtSpec>,
    /// A SCHED_OTHER custom slice (dl-runtime), ns.
    pub slice_ns: Option<u64>,
    pub taskgroup: Option<(At, String)>,
    pub phases: Vec<PhaseDef<'a>>,
    /// rt-app's thread loop: -1 forever, else how many times the phases run.
    pub thread_loop: i64,
    /// Keys read without effect here, each a sentence.
    pub no_effect: Vec<String>,
}

pub(super) struct PhaseDef<'a> {
    pub at: At,
    /// -1: forever.
    pub repeat: i64,
    pub cpus: Option<String>,
    /// Its own policy and priority, as written, and as they apply.
    pub policy: Option<Policy>,
    pub priority: Option<(i64, At)>,
    pub sched: Option<SchedSpec>,
    pub taskgroup: Option<(At, String)>,
    pub events: Vec<&'a Field>,
}

/// Keys of a task, or of a phase, that are not events (rt-app's
/// parse_task_data and parse_task_phase_data).
enum Key {
    Loop,
    Cpus,
    Policy,
    Priority,
    Taskgroup,
    /// Read, no effect here (memory binding, utilisation clamps).
    NoEffect(&'static str),
    /// dl-runtime: SCHED_DEADLINE's runtime, a SCHED_OTHER task's custom
    /// slice (sched_setattr's sched_runtime, 6.12).
    Runtime,
    /// SCHED_DEADLINE's other parameters.
    Deadline,
}

fn key(k: &str) -> Option<Key> {
    Some(match k {
        "loop" => Key::Loop,
        "cpus" => Key::Cpus,
        "policy" => Key::Policy,
        "priority" | "nice" => Key::Priority,
        "taskgroup" => Key::Taskgroup,
        "nodes_membind" => Key::NoEffect("memory binding (every node's memory is as near)"),
        "util_min" | "util_max" => {
            Key::NoEffect("utilisation clamps (they steer frequency and energy-aware placement, neither modelled)")
        }
        "dl-runtime" => Key::Runtime,
        "dl-period" | "dl-deadline" | "period" | "deadline" => Key::Deadline,
        _ => return None,
    })
}

impl<'a> TaskDef<'a> {
    /// The task `f`, whose policy is `default` unless it says.
    pub fn read(f: &'a Field, at: &At, default: Policy) -> Result<TaskDef<'a>> {
        let mut def = TaskDef {
            name: f.key.clone(),
            at: at.clone(),
            instances: 1,
            delay_ns: 0,
            cpus: None,
            nice: 0,
            rt: None,
            slice_ns: None,
            taskgroup: None,
            phases: Vec::new(),
            thread_loop: -1,
            no_effect: Vec::new(),
        };
        let mut loop_key = None;
        let mut priority = None;
        let mut class = default;
        let mut slice = None;
        let mut events = Vec::new();
        for k in obj(&f.value, at)? {
            let kat = at.child(k);
            let v = &k.value;
            match k.key.as_str() {
                "instance" => {
                    let n = int(v, &kat)?;
                    if !(0..=1000).contains(&n) {
                        return Err(kat.error(format!("{n} is not 0..=1000")));
                    }
                    def.instances = n as u64;
                }
                "delay" => def.delay_ns = us(v, &kat)?,
                "phases" => {
                    for p in obj(v, &kat)? {
                        def.phases
                            .push(PhaseDef::read(p, &kat.child(p), &mut def.no_effect)?);
                    }
                }
                other => match key(other) {
                    Some(Key::Loop) => loop_key = Some(int(v, &kat)?),
                    Some(Key::Cpus) => def.cpus = Some(cpus(v, &kat)?),
                    Some(Key::Policy) => class = policy(v, &kat)?,
                    // Checked once the policy is known.
                    Some(Key::Priority) => priority = Some((int(v, &kat)?, kat)),
                    Some(Key::Taskgroup) => def.taskgroup = taskgroup(v, &kat)?,
                    Some(Key::NoEffect(why)) => def.no_effect.push(no_effect(&kat, why)),
                    Some(Key::Runtime) => slice = Some((us(v, &kat)?, kat)),
                    Some(Key::Deadline) => def.no_effect.push(no_effect(
                        &kat,
                        "a SCHED_DEADLINE task's parameter (the task is not one)",
                    )),
                    None if is_event(other) => events.push(k),
                    None => return Err(kat.error(
                        "not a task key or event this import knows (instance, loop, priority, policy, cpus, phases, delay, taskgroup; run, runtime, sleep, timer, lock, unlock, wait, signal, broad, sync, barrier, suspend, resume, yield, mem, iorun, fork, sem_post, sem_wait)",
                    )),
                },
            }
        }
        match (class, slice) {
            (Policy::Other, Some((ns, _))) => def.slice_ns = Some(ns),
            (Policy::Rt(_), Some((_, kat))) => def.no_effect.push(no_effect(
                &kat,
                "a SCHED_OTHER or SCHED_DEADLINE task's runtime",
            )),
            _ => {}
        }
        let spec = sched_spec(class, priority)?;
        (def.nice, def.rt) = (spec.nice, spec.rt);
        // A phase's own policy or priority applies from its start; a
        // priority alone keeps the policy then in force (set_thread_param).
        let mut current = class;
        for p in &mut def.phases {
            if p.policy.is_none() && p.priority.is_none() {
                continue;
            }
            current = p.policy.unwrap_or(current);
            p.sched = Some(sched_spec(current, p.priority.take())?);
        }
        if def.phases.is_empty() {
            // No phases: the task is one phase, which "loop" repeats (and
            // then the task runs it once); without "loop", forever.
            if events.is_empty() {
                return Err(at.error("a task needs an event (run, sleep, timer, ...)"));
            }
            let repeat = loop_key.unwrap_or(1);
            def.thread_loop = if loop_key.is_some() { 1 } else { -1 };
            def.phases.push(PhaseDef {
                at: at.clone(),
                repeat,
                cpus: None,
                policy: None,
                priority: None,
                sched: None,
                taskgroup: None,
                events,
            });
            def.phases[0].check_repeat(&at.missing("loop"))?;
        } else {
            if let Some(e) = events.first() {
                return Err(at.child(e).error(
                    "a task with phases runs only its phases' events (rt-app ignores this one): move it into a phase",
                ));
            }
            def.thread_loop = loop_key.unwrap_or(-1);
        }
        if def.thread_loop < 1 && def.thread_loop != -1 {
            return Err(at
                .missing("loop")
                .error(format!("{} is not -1 or a positive count", def.thread_loop)));
        }
        Ok(def)
    }

    /// Whether some thread of it runs until the run ends.
    pub fn forever(&self) -> bool {
        self.instances > 0 && (self.thread_loop == -1 || self.phases.iter().any(|p| p.repeat == -1))
    }

    /// One of its threads, running `program`.
    pub fn spec(&self, name: String, program: Vec<Op>) -> TaskSpec {
        TaskSpec {
            name,
            nice: self.nice,
            affinity: self.cpus.clone(),
            // rt-app's threads are threads of its one process.
            process: Some(1),
            working_set_kib: 0,
            start_cpu: None,
            rt: self.rt,
            slice_ns: self.slice_ns,
            program,
        }
    }
}

impl<'a> PhaseDef<'a> {
    fn read(f: &'a Field, at: &At, no_effects: &mut Vec<String>) -> Result<PhaseDef<'a>> {
        let mut phase = PhaseDef {
            at: at.clone(),
            repeat: 1,
            cpus: None,
            policy: None,
            priority: None,
            sched: None,
            taskgroup: None,
            events: Vec::new(),
        };
        for k in obj(&f.value, at)? {
            let kat = at.child(k);
            let v = &k.value;
            match key(&k.key) {
                Some(Key::Loop) => phase.repeat = int(v, &kat)?,
                Some(Key::Cpus) => phase.cpus = Some(cpus(v, &kat)?),
                Some(Key::Policy) => phase.policy = Some(policy(v, &kat)?),
                Some(Key::Priority) => phase.priority = Some((int(v, &kat)?, kat)),
                Some(Key::Taskgroup) => phase.taskgroup = taskgroup(v, &kat)?,
                Some(Key::NoEffect(why)) => no_effects.push(no_effect(&kat, why)),
                Some(Key::Runtime | Key::Deadline) => {
                    return Err(kat.error(
                        "a phase's own scheduling parameters are not modelled: give the task's",
                    ))
                }
                None if is_event(&k.key) => phase.events.push(k),
                None => {
                    return Err(kat.error(
                        "not a phase key or event this import knows (loop, cpus, policy, taskgroup; the events as a task's)",
                    ))
                }
            }
        }
        if phase.events.is_empty() {
            return Err(at.error("a phase needs an event (rt-app: \"No events found\")"));
        }
        phase.check_repeat(&at.missing("loop"))?;
        Ok(phase)
    }

    fn check_repeat(&self, at: &At) -> Result<()> {
        if self.repeat < 1 && self.repeat != -1 {
            return Err(at.error(format!("{} is not -1 or a positive count", self.repeat)));
        }
        Ok(())
    }
}

/// A policy and priority as rt-app sets them: SCHED_OTHER's priority is
/// its nice (default 0), the RT classes' 1..=99 (rt-app's
/// DEFAULT_THREAD_PRIORITY, 10, when none is given).
fn sched_spec(class: Policy, priority: Option<(i64, At)>) -> Result<SchedSpec> {
    Ok(match (class, priority) {
        (Policy::Other, Some((n, at))) => SchedSpec {
            nice: nice(n, &at)?,
            rt: None,
        },
        (Policy::Other, None) => SchedSpec::default(),
        (Policy::Rt(policy), p) => {
            let priority = match p {
                Some((n, _)) if (1..=99).contains(&n) => n as u8,
                Some((n, at)) => {
                    return Err(at.error(format!(
                        "{n} is not an RT priority (1..=99 for SCHED_FIFO and SCHED_RR)"
                    )))
                }
                None => 10,
            };
            SchedSpec {
                nice: 0,
                rt: Some(RtSpec { policy, priority }),
            }
        }
    })
}

fn nice(n: i64, at: &At) -> Result<i8> {
    if !(-20..=19).contains(&n) {
        return Err(at.error(format!(
            "{n} is not a nice value (-20..=19; SCHED_OTHER's priority is its nice)"
        )));
    }
    Ok(n as i8)
}

fn no_effect(at: &At, what: &str) -> String {
    at.say(format!("no effect in the model: {what}"))
}

/// rt-app's "taskgroup": a cgroup path, "" for none.
fn taskgroup(v: &J, at: &At) -> Result<Option<(At, String)>> {
    match v {
        J::Str(s) if s.is_empty() => Ok(None),
        J::Str(s) if s.starts_with('/') => Ok(Some((at.clone(), s.clone()))),
        J::Str(s) => Err(at.error(format!("taskgroup {s:?} has to start with '/'"))),
        _ => Err(at.error("expected a task group's path")),
    }
}

fn cpus(v: &J, at: &At) -> Result<String> {
    let list = match v {
        J::Arr(a) => a.iter().map(|c| int(c, at)).collect::<Result<Vec<_>>>()?,
        J::Num(_) => vec![int(v, at)?],
        _ => return Err(at.error("expected a CPU number or a list of them")),
    };
    if list.is_empty() || list.iter().any(|&c| c < 0) {
        return Err(at.error("expected CPU numbers"));
    }
    Ok(list
        .iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(","))
}

/// Renames an instance's period, run and slack labels after it.
pub(super) fn relabel(ops: &mut [Op], from: &str, to: &str) {
    if from == to {
        return;
    }
    let fix = |l: &mut String| {
        if let Some(rest) = l.strip_prefix(from) {
            *l = format!("{to}{rest}");
        }
    };
    for op in ops {
        match op {
            Op::Mark(l) | Op::Lap(l) => fix(l),
            Op::Timer(t) => {
                for l in [&mut t.slack, &mut t.run].into_iter().flatten() {
                    fix(l)
                }
            }
            Op::Loop { body, .. } | Op::Forever(body) => relabel(body, from, to),
            Op::Fork(t) => relabel(&mut t.program, from, to),
            _ => {}
        }
    }
}

/// The task's whole program: its delay, then its phases as its loop says.
pub(super) fn assemble(def: &TaskDef, phases: Vec<Vec<Op>>) -> Vec<Op> {
    // A phase's own CPU set is applied at its start, and a phase without
    // one goes back to the task's (set_thread_affinity).
    let per_phase_cpus = def.phases.iter().any(|p| p.cpus.is_some());
    let mut body = Vec::new();
    for (p, ops) in def.phases.iter().zip(phases) {
        if per_phase_cpus {
            body.push(Op::Affinity(p.cpus.clone().or_else(|| def.cpus.clone())));
        }
        if let Some(s) = p.sched {
            body.push(Op::Scheduler(s));
        }
        match p.repeat {
            -1 => body.push(Op::Forever(ops)),
            1 => body.extend(ops),
            n => body.push(Op::Loop {
                count: n as u64,
                body: ops,
            }),
        }
    }
    let mut program = Vec::new();
    if def.delay_ns > 0 {
        program.push(Op::Until(Time::fixed(def.delay_ns)));
    }
    match def.thread_loop {
        -1 => program.push(Op::Forever(body)),
        1 => program.extend(body),
        n => program.push(Op::Loop {
            count: n as u64,
            body,
        }),
    }
    program
}

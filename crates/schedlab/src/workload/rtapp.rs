//! rt-app import: an rt-app JSON file (tasks, phases, events, resources,
//! global) as a custom workload. rt-app runs a task's events in the order
//! its JSON object lists them, so the file is read with its key order.
//!
//! Modelled: `tasks.NAME` with `instance`, `loop` (-1: until the run
//! ends), `phases` (each with `loop`), `cpus`, `priority` / `nice` (the
//! nice value of SCHED_OTHER), `policy` SCHED_OTHER, `delay`; events `run`
//! (an amount of CPU work, us: longer when preempted), `runtime` (runs
//! until that much wall time has passed since the event began: preemption
//! eats into it), `sleep` (us), `timer` (`period` in us, `mode` relative,
//! rt-app's default, or absolute; per-task reference), `lock` / `unlock` (a pthread mutex),
//! `wait` (`ref` a condition variable, `mutex` held), `signal`, `broad`,
//! `sync` (signal then wait, the mutex held), `barrier` (its users are the
//! threads whose events name it), `mem` (bytes written into the thread's
//! `global.mem_buffer_size` buffer); `resources` of type mutex, wait,
//! barrier, timer and membuf (optional: rt-app creates what the events
//! name; a declared type must match its use); `global.duration` (s, -1:
//! until every task ends), `default_policy` SCHED_OTHER, and `calibration`
//! and the logging keys, accepted and ignored (a simulation needs no
//! calibration and logs nothing). Each timer records the task's period
//! ("NAME.period", between releases) and slack ("NAME.slack", with the
//! overruns rt-app logs as negative slack); the run reports each task's
//! CPU time and wakeup latency.
//!
//! Not modelled, an error naming the key and its path: I/O, suspend and
//! resume, yield, fork events, other scheduling classes, per-phase CPU
//! sets, timers shared between tasks.

use crate::error::Concern;
use crate::error::{Error, Result};
use crate::workload::bench::{Custom, CustomMetric};
use crate::workload::program::{CondWaitSpec, Op, TaskSpec, Time, TimerSpec};
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// JSON with object keys in file order.
#[derive(Debug, Clone, PartialEq)]
enum J {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Arr(Vec<J>),
    Obj(Vec<(String, J)>),
}

impl<'de> Deserialize<'de> for J {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<J, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = J;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("JSON")
            }
            fn visit_unit<E>(self) -> std::result::Result<J, E> {
                Ok(J::Null)
            }
            fn visit_bool<E>(self, b: bool) -> std::result::Result<J, E> {
                Ok(J::Bool(b))
            }
            fn visit_i64<E>(self, n: i64) -> std::result::Result<J, E> {
                Ok(J::Num(n as f64))
            }
            fn visit_u64<E>(self, n: u64) -> std::result::Result<J, E> {
                Ok(J::Num(n as f64))
            }
            fn visit_f64<E>(self, n: f64) -> std::result::Result<J, E> {
                Ok(J::Num(n))
            }
            fn visit_str<E>(self, s: &str) -> std::result::Result<J, E> {
                Ok(J::Str(s.to_string()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> std::result::Result<J, A::Error> {
                let mut v = Vec::new();
                while let Some(x) = a.next_element()? {
                    v.push(x);
                }
                Ok(J::Arr(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> std::result::Result<J, A::Error> {
                let mut v = Vec::new();
                while let Some((k, x)) = a.next_entry()? {
                    v.push((k, x));
                }
                Ok(J::Obj(v))
            }
        }
        d.deserialize_any(V)
    }
}

fn err(path: &str, msg: impl std::fmt::Display) -> Error {
    Error::invalid(Concern::Import, format!("{path}: {msg}"))
}

fn obj<'a>(j: &'a J, path: &str) -> Result<&'a [(String, J)]> {
    match j {
        J::Obj(o) => Ok(o),
        _ => Err(err(path, "expected an object")),
    }
}

/// A whole number (rt-app writes integers).
fn int(j: &J, path: &str) -> Result<i64> {
    match j {
        J::Num(n) if n.fract() == 0.0 && n.abs() < 9e15 => Ok(*n as i64),
        _ => Err(err(path, "expected a whole number")),
    }
}

fn us(j: &J, path: &str) -> Result<u64> {
    let v = int(j, path)?;
    if v < 0 {
        return Err(err(path, format!("{v} us is negative")));
    }
    Ok(v as u64 * 1000)
}

/// What an import gives: the workload and what it accepted without effect.
#[derive(Debug, Clone, PartialEq)]
pub struct Import {
    pub workload: Custom,
    /// Keys accepted and ignored (calibration, logging), by path.
    pub ignored: Vec<String>,
}

const IGNORED_GLOBAL: [&str; 11] = [
    "calibration",
    "logdir",
    "log_basename",
    "log_size",
    "ftrace",
    "gnuplot",
    "lock_pages",
    "pi_enabled",
    "io_device",
    "cumulative_slack",
    "default_policy",
];

const UNMODELLED_EVENTS: [&str; 5] = ["iorun", "yield", "suspend", "resume", "fork"];

/// The resource types rt-app defines that this import models.
const RESOURCE_TYPES: [&str; 5] = ["mutex", "wait", "barrier", "timer", "membuf"];

/// What the events see of the file: its declared resources (name, type)
/// and the threads' memory buffer size.
struct Ctx {
    declared: Vec<(String, String)>,
    mem_buffer: u64,
}

impl Ctx {
    /// A resource an event names: rt-app creates it if undeclared; a
    /// declared one must be of the type the event uses.
    fn resource(&self, j: &J, path: &str, ty: &str) -> Result<String> {
        let J::Str(name) = j else {
            return Err(err(path, format!("expected the name of a {ty} resource")));
        };
        if name.is_empty() {
            return Err(err(path, format!("expected the name of a {ty} resource")));
        }
        if let Some((_, t)) = self.declared.iter().find(|(n, _)| n == name) {
            if t != ty {
                return Err(err(
                    path,
                    format!("resource {name:?} is declared as a {t}, used here as a {ty}"),
                ));
            }
        }
        Ok(name.clone())
    }
}

/// Reads an rt-app JSON file.
pub fn import(text: &str) -> Result<Import> {
    let root: J = serde_json::from_str(text).map_err(|e| {
        Error::invalid(
            Concern::Import,
            format!("line {}, column {}: {e}", e.line(), e.column()),
        )
    })?;
    let mut ignored = Vec::new();
    let mut duration_s: i64 = -1;
    let mut ctx = Ctx {
        declared: Vec::new(),
        mem_buffer: crate::workload::program::default_mem_buffer(),
    };
    let mut tasks_j = None;
    for (k, v) in obj(&root, "the file")? {
        match k.as_str() {
            "tasks" => tasks_j = Some(v),
            "global" => {
                for (g, gv) in obj(v, "global")? {
                    let path = format!("global.{g}");
                    match g.as_str() {
                        "duration" => duration_s = int(gv, &path)?,
                        "default_policy" => match gv {
                            J::Str(p) if p == "SCHED_OTHER" => ignored.push(path),
                            _ => {
                                return Err(err(
                                    &path,
                                    "only SCHED_OTHER is modelled (CFS); other classes are not",
                                ))
                            }
                        },
                        "mem_buffer_size" => {
                            let n = int(gv, &path)?;
                            if n < 1 {
                                return Err(err(&path, format!("{n} is not a size in bytes")));
                            }
                            ctx.mem_buffer = n as u64;
                        }
                        // Priority inheritance raises a lock owner's
                        // priority, not its CFS weight (set from its nice):
                        // no effect among SCHED_OTHER threads.
                        "pi_enabled" if *gv == J::Bool(true) => ignored.push(path),
                        g if IGNORED_GLOBAL.contains(&g) => ignored.push(path),
                        _ => return Err(err(&path, "not a global key this import knows")),
                    }
                }
            }
            "resources" => {
                for (r, rv) in obj(v, "resources")? {
                    let path = format!("resources.{r}");
                    let ty = obj(rv, &path)?.iter().find(|(k, _)| k == "type");
                    match ty {
                        Some((_, J::Str(t))) if RESOURCE_TYPES.contains(&t.as_str()) => {
                            ctx.declared.push((r.clone(), t.clone()))
                        }
                        Some((_, J::Str(t))) => {
                            return Err(err(
                                &format!("{path}.type"),
                                format!(
                                    "{t} resources are not modelled (modelled: mutex, wait, barrier, timer, membuf)"
                                ),
                            ))
                        }
                        _ => return Err(err(&path, "a resource needs a \"type\"")),
                    }
                }
            }
            _ => {
                return Err(err(
                    k,
                    "not an rt-app top-level key (tasks, resources, global)",
                ))
            }
        }
    }
    let Some(tasks_j) = tasks_j else {
        return Err(err("tasks", "the file has no tasks"));
    };
    let mut tasks = Vec::new();
    let mut timer_users: Vec<(String, String)> = Vec::new();
    let mut forever = false;
    for (name, tj) in obj(tasks_j, "tasks")? {
        let at = format!("tasks.{name}");
        let t = read_task(name, tj, &at, &mut timer_users, &ctx)?;
        forever |= t.forever;
        let key: &str = name;
        for i in 0..t.instances {
            let name = if t.instances > 1 {
                format!("{name}-{i}")
            } else {
                name.clone()
            };
            let mut program = t.program.clone();
            relabel(&mut program, &format!("{key}."), &format!("{name}."));
            tasks.push(TaskSpec {
                name,
                nice: t.nice,
                affinity: t.affinity.clone(),
                process: None,
                working_set_kib: 0,
                start_cpu: None,
                program,
            });
        }
        if t.instances > 1 && t.has_named_timer {
            return Err(err(
                &at,
                "instances of a task share its named timer in rt-app; shared timers are not modelled (use \"unique\")",
            ));
        }
    }
    // A named timer used by two tasks is shared in rt-app.
    for (i, (task, r)) in timer_users.iter().enumerate() {
        if let Some((other, _)) = timer_users[..i].iter().find(|(t, q)| q == r && t != task) {
            return Err(err(
                &format!("tasks.{task}"),
                format!("timer {r:?} is also used by {other}; timers shared between tasks are not modelled (use \"unique\")"),
            ));
        }
    }
    if tasks.is_empty() {
        return Err(err("tasks", "the file has no tasks"));
    }
    let duration_ms = match duration_s {
        -1 if forever => {
            return Err(err(
                "global.duration",
                "a task loops forever (loop -1), so the run needs a duration in seconds",
            ))
        }
        -1 => None,
        d if d >= 1 => Some(d as u64 * 1000),
        d => {
            return Err(err(
                "global.duration",
                format!("{d} is not -1 or a positive number of seconds"),
            ))
        }
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
        ignored,
    })
}

/// Renames an instance's period, run and slack labels after it.
fn relabel(ops: &mut [Op], from: &str, to: &str) {
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

struct TaskOut {
    instances: u64,
    nice: i8,
    affinity: Option<String>,
    program: Vec<Op>,
    forever: bool,
    has_named_timer: bool,
}

fn read_task(
    name: &str,
    tj: &J,
    at: &str,
    timer_users: &mut Vec<(String, String)>,
    ctx: &Ctx,
) -> Result<TaskOut> {
    let mut out = TaskOut {
        instances: 1,
        nice: 0,
        affinity: None,
        program: Vec::new(),
        forever: true,
        has_named_timer: false,
    };
    let mut task_loop: i64 = -1;
    let mut delay = 0;
    let mut phases: Vec<(String, i64, Vec<Op>)> = Vec::new();
    let mut events = Vec::new();
    for (k, v) in obj(tj, at)? {
        let path = format!("{at}.{k}");
        match k.as_str() {
            "instance" => {
                let n = int(v, &path)?;
                if !(1..=1000).contains(&n) {
                    return Err(err(&path, format!("{n} is not 1..=1000")));
                }
                out.instances = n as u64;
            }
            "loop" => task_loop = int(v, &path)?,
            "priority" | "nice" => {
                let n = int(v, &path)?;
                if !(-20..=19).contains(&n) {
                    return Err(err(
                        &path,
                        format!("{n} is not a nice value (-20..=19; SCHED_OTHER's priority is its nice)"),
                    ));
                }
                out.nice = n as i8;
            }
            "policy" => match v {
                J::Str(p) if p == "SCHED_OTHER" => {}
                _ => {
                    return Err(err(
                        &path,
                        "only SCHED_OTHER is modelled (CFS); other classes are not",
                    ))
                }
            },
            "cpus" => out.affinity = Some(cpus(v, &path)?),
            "delay" => delay = us(v, &path)?,
            "phases" => {
                for (p, pj) in obj(v, &path)? {
                    let ppath = format!("{path}.{p}");
                    let mut ploop = 1;
                    let mut pev = Vec::new();
                    for (pk, pv) in obj(pj, &ppath)? {
                        let epath = format!("{ppath}.{pk}");
                        match pk.as_str() {
                            "loop" => ploop = int(pv, &epath)?,
                            "cpus" => {
                                if out.affinity.as_deref() != Some(&cpus(pv, &epath)?) {
                                    return Err(err(
                                        &epath,
                                        "per-phase CPU sets are not modelled (give the task's cpus)",
                                    ));
                                }
                            }
                            _ => {
                                pev.extend(event(name, pk, pv, &epath, timer_users, &mut out, ctx)?)
                            }
                        }
                    }
                    if ploop < 1 && ploop != -1 {
                        return Err(err(
                            &format!("{ppath}.loop"),
                            format!("{ploop} is not -1 or a positive count"),
                        ));
                    }
                    phases.push((p.clone(), ploop, pev));
                }
            }
            _ => events.extend(event(name, k, v, &path, timer_users, &mut out, ctx)?),
        }
    }
    if !events.is_empty() && !phases.is_empty() {
        return Err(err(at, "a task has either phases or events, not both"));
    }
    if !events.is_empty() {
        phases.push((String::new(), 1, events));
    }
    let mut body = Vec::new();
    let mut phase_forever = false;
    for (p, ploop, ev) in phases {
        if ev.is_empty() {
            return Err(err(&format!("{at}.phases.{p}"), "a phase needs an event"));
        }
        if phase_forever {
            return Err(err(
                &format!("{at}.phases.{p}"),
                "comes after a phase that loops forever, so it would never run",
            ));
        }
        if ploop == -1 {
            phase_forever = true;
            body.push(Op::Forever(ev));
        } else if ploop == 1 {
            body.extend(ev);
        } else {
            body.push(Op::Loop {
                count: ploop as u64,
                body: ev,
            });
        }
    }
    if body.is_empty() {
        return Err(err(at, "a task needs an event (run, sleep, timer, ...)"));
    }
    let loop_path = format!("{at}.loop");
    out.forever = task_loop == -1 || phase_forever;
    if delay > 0 {
        out.program.push(Op::Sleep(Time::fixed(delay)));
    }
    match task_loop {
        -1 => out.program.push(Op::Forever(body)),
        1 => out.program.extend(body),
        n if n > 1 => out.program.push(Op::Loop {
            count: n as u64,
            body,
        }),
        n => {
            return Err(err(
                &loop_path,
                format!("{n} is not -1 or a positive count"),
            ))
        }
    }
    Ok(out)
}

fn cpus(v: &J, path: &str) -> Result<String> {
    let list = match v {
        J::Arr(a) => a.iter().map(|c| int(c, path)).collect::<Result<Vec<_>>>()?,
        J::Num(_) => vec![int(v, path)?],
        _ => return Err(err(path, "expected a CPU number or a list of them")),
    };
    if list.is_empty() || list.iter().any(|&c| c < 0) {
        return Err(err(path, "expected CPU numbers"));
    }
    Ok(list
        .iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(","))
}

/// One event: rt-app matches an event by the start of its key (run0, run1).
fn event(
    task: &str,
    key: &str,
    v: &J,
    path: &str,
    timer_users: &mut Vec<(String, String)>,
    out: &mut TaskOut,
    ctx: &Ctx,
) -> Result<Vec<Op>> {
    if key.starts_with("runtime") {
        return Ok(vec![Op::Runtime(Time::fixed(us(v, path)?))]);
    }
    if key.starts_with("run") {
        return Ok(vec![Op::Compute(Time::fixed(us(v, path)?))]);
    }
    if key.starts_with("lock") {
        return Ok(vec![Op::Lock(ctx.resource(v, path, "mutex")?)]);
    }
    if key.starts_with("unlock") {
        return Ok(vec![Op::Unlock(ctx.resource(v, path, "mutex")?)]);
    }
    if key.starts_with("signal") {
        return Ok(vec![Op::Signal(ctx.resource(v, path, "wait")?)]);
    }
    if key.starts_with("broad") {
        return Ok(vec![Op::Broadcast(ctx.resource(v, path, "wait")?)]);
    }
    if key.starts_with("barrier") {
        return Ok(vec![Op::Barrier(ctx.resource(v, path, "barrier")?)]);
    }
    if key.starts_with("wait") || key.starts_with("sync") {
        let mut cond = None;
        let mut mutex = None;
        for (k, wv) in obj(v, path)? {
            let p = format!("{path}.{k}");
            match k.as_str() {
                "ref" => cond = Some(ctx.resource(wv, &p, "wait")?),
                "mutex" => mutex = Some(ctx.resource(wv, &p, "mutex")?),
                _ => return Err(err(&p, "not a key of this event (ref, mutex)")),
            }
        }
        let Some(cond) = cond else {
            return Err(err(
                &format!("{path}.ref"),
                "names the condition variable (\"ref\")",
            ));
        };
        let Some(mutex) = mutex else {
            return Err(err(
                &format!("{path}.mutex"),
                "names the mutex (\"mutex\") held while waiting",
            ));
        };
        let wait = Op::CondWait(Box::new(CondWaitSpec {
            cond: cond.clone(),
            mutex: mutex.clone(),
        }));
        if key.starts_with("wait") {
            return Ok(vec![wait]);
        }
        // sync: signal, then wait, the mutex held throughout (rt-app's
        // tutorial writes it between a lock and an unlock).
        return Ok(vec![Op::Signal(cond), wait]);
    }
    if key.starts_with("mem") {
        let bytes = int(v, path)?;
        if bytes < 1 {
            return Err(err(path, format!("{bytes} is not a size in bytes")));
        }
        return Ok(vec![Op::Mem {
            bytes: bytes as u64,
            buffer: ctx.mem_buffer,
        }]);
    }
    if key.starts_with("sleep") {
        return Ok(vec![Op::Sleep(Time::fixed(us(v, path)?))]);
    }
    if key.starts_with("timer") {
        let mut period = None;
        let mut name = String::from("unique");
        // rt-app's timers are relative unless told otherwise (doc/tutorial.txt).
        let mut relative = true;
        for (k, tv) in obj(v, path)? {
            let p = format!("{path}.{k}");
            match k.as_str() {
                "period" => period = Some(us(tv, &p)?),
                "ref" => match tv {
                    J::Str(r) => name = r.clone(),
                    _ => return Err(err(&p, "expected a timer name")),
                },
                "mode" => match tv {
                    J::Str(m) if m == "absolute" => relative = false,
                    J::Str(m) if m == "relative" => relative = true,
                    _ => return Err(err(&p, "expected \"absolute\" or \"relative\"")),
                },
                _ => return Err(err(&p, "not a timer key (ref, period, mode)")),
            }
        }
        let Some(period_ns) = period.filter(|&p| p > 0) else {
            return Err(err(
                &format!("{path}.period"),
                "a timer needs a period of at least 1 us",
            ));
        };
        if name != "unique" {
            out.has_named_timer = true;
            timer_users.push((task.to_string(), name.clone()));
        }
        return Ok(vec![
            Op::Timer(Box::new(TimerSpec {
                period_ns,
                name,
                relative,
                slack: Some(format!("{task}.slack")),
                run: Some(format!("{task}.run")),
            })),
            Op::Mark(format!("{task}.period")),
        ]);
    }
    if let Some(e) = UNMODELLED_EVENTS.iter().find(|e| key.starts_with(*e)) {
        return Err(err(
            path,
            format!(
                "the rt-app event {e:?} is not modelled (modelled: run, runtime, sleep, timer, lock, unlock, wait, signal, broad, sync, barrier, mem)"
            ),
        ));
    }
    Err(err(
        path,
        "not a task key or event this import knows (instance, loop, priority, cpus, phases, delay; run, runtime, sleep, timer, lock, unlock, wait, signal, broad, sync, barrier, mem)",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_keep_file_order() {
        let j: J = serde_json::from_str(r#"{"sleep":1,"run":2,"a":{"z":1,"b":2}}"#).unwrap();
        let J::Obj(o) = j else { panic!() };
        let keys: Vec<&str> = o.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["sleep", "run", "a"]);
    }
}

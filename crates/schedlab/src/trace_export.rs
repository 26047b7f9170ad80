//! A run's traced window as Chrome trace-event JSON, which Perfetto and
//! chrome://tracing open: a process per variant, a thread (track) per CPU,
//! a complete ("X") slice per stretch a task ran, and wakeups and
//! migrations as instant events on the CPU they land on.

use crate::engine::stats::TraceEvent;
use crate::experiment::Trace;
use serde_json::{json, Value};

fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

fn task_name(trace: &Trace, task: usize) -> String {
    match trace.tasks.get(task) {
        Some(name) => format!("{name} ({task})"),
        None => format!("task {task}"),
    }
}

/// The traces of `runs` (label, trace) as one trace-event document.
pub fn chrome_trace(runs: &[(&str, &Trace)]) -> Value {
    let mut events = Vec::new();
    for (p, (label, trace)) in runs.iter().enumerate() {
        let pid = p + 1;
        events.push(json!({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": label}}));
        for cpu in 0..trace.ncpus {
            events.push(json!({"ph": "M", "name": "thread_name", "pid": pid, "tid": cpu, "args": {"name": format!("CPU {cpu}")}}));
            events.push(json!({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": cpu, "args": {"sort_index": cpu}}));
        }
        // Per CPU: who runs, since when. Before a CPU's first switch in the
        // window, the task it switches away from ran since the window began.
        let mut running: Vec<Option<(usize, u64)>> = vec![None; trace.ncpus];
        let mut seen = vec![false; trace.ncpus];
        let slice = |task: usize, cpu: usize, from: u64, to: u64| {
            json!({"ph": "X", "name": task_name(trace, task), "cat": "sched", "pid": pid, "tid": cpu,
                   "ts": us(from), "dur": us(to.saturating_sub(from)), "args": {"task": task}})
        };
        for ev in &trace.events {
            match ev {
                TraceEvent::Switch { t, cpu, from, to } => {
                    let (cpu, t) = (*cpu, *t);
                    if cpu >= trace.ncpus {
                        continue;
                    }
                    let current = match running[cpu] {
                        Some(r) => Some(r),
                        None if !seen[cpu] => from.map(|task| (task, trace.start_ns)),
                        None => None,
                    };
                    seen[cpu] = true;
                    if let Some((task, since)) = current {
                        events.push(slice(task, cpu, since, t));
                    }
                    running[cpu] = to.map(|task| (task, t));
                }
                TraceEvent::Wakeup {
                    t,
                    task,
                    waker_cpu,
                    target,
                    reason,
                } => {
                    events.push(json!({"ph": "i", "s": "t", "name": format!("wakeup {}", task_name(trace, *task)),
                        "cat": "wakeup", "pid": pid, "tid": target, "ts": us(*t),
                        "args": {"reason": reason, "waker_cpu": waker_cpu}}));
                }
                TraceEvent::Migrate {
                    t,
                    task,
                    from,
                    to,
                    reason,
                } => {
                    events.push(json!({"ph": "i", "s": "t", "name": format!("migrate {}", task_name(trace, *task)),
                        "cat": "migration", "pid": pid, "tid": to, "ts": us(*t),
                        "args": {"reason": reason, "from_cpu": from}}));
                }
            }
        }
        for (cpu, r) in running.iter().enumerate() {
            if let Some((task, since)) = *r {
                events.push(slice(task, cpu, since, trace.end_ns.max(since)));
            }
        }
    }
    // Ordered by track, then time: what viewers expect and the test checks.
    events.sort_by(|a, b| {
        let key = |e: &Value| {
            (
                e["pid"].as_u64(),
                e["tid"].as_u64(),
                e["ph"] != "M",
                e["ts"].as_f64().unwrap_or(0.0),
            )
        };
        let (ka, kb) = (key(a), key(b));
        (ka.0, ka.1, ka.2)
            .cmp(&(kb.0, kb.1, kb.2))
            .then(ka.3.total_cmp(&kb.3))
    });
    json!({"traceEvents": events, "displayTimeUnit": "ns"})
}

//! Each task's timeline, built as the lines stream past: a task is a
//! thread id and an incarnation (a reused id after an exit is a new task;
//! id 0 is each CPU's idle, never a task). Its timeline is cut into
//! activations, from a wakeup through run slices and preempted gaps to a
//! voluntary sleep: its [`Step`]s are the CPU demand it ran (the sum of its
//! slices, never the waiting the recorded scheduler imposed), the wakeups
//! and forks it did at the point of its work where it did them, and how
//! each of its sleeps ended: woken by a task of the trace (a wait for that
//! task's post) or from outside (an interrupt, idle, a task not followed:
//! a timed sleep of the recorded length).
//!
//! The recording's own figures (CPU time, wakeup latency, switches,
//! migrations, idle) are kept beside, to check a replay against.

use super::lines::{Context, Event, Left, Line, Named};
use crate::engine::stats::LatencyHist;
use crate::sorted_map::SortedMap;
use rustc_hash::FxHashMap;

/// One piece of a task's behaviour, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Run for `ns` on a CPU, in `slices` runs from a switch-in (each
    /// holds the recording machine's switch cost).
    Run { ns: u64, slices: u32 },
    /// Wake task `n` (post its semaphore).
    Wake(usize),
    /// Start task `n`.
    Fork(usize),
    /// Sleep until a task of the trace wakes this one.
    Block,
    /// Sleep `ns` (woken from outside the trace's tasks), the wakeup
    /// coming `until` after the task's start.
    Sleep { ns: u64, until: u64 },
}

impl Step {
    /// A sleep whose end is filled in at its wakeup.
    const ASLEEP: Step = Step::Sleep { ns: 0, until: 0 };

    /// A sleep from `since` woken at `at` (trace times), of a task that
    /// started `start` after the trace's start `t0`.
    fn woken(t0: Option<u64>, start: u64, since: u64, at: u64) -> Step {
        let from_start = at - t0.unwrap_or(at);
        Step::Sleep {
            ns: at - since,
            until: from_start.saturating_sub(start),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Not seen switching yet.
    Unknown,
    Running {
        since: u64,
    },
    /// Waiting for a CPU since `since`; `woken` is the wakeup's time.
    Runnable {
        since: u64,
        woken: Option<u64>,
    },
    /// Asleep since `since`; its end is step `step`, filled in at the wakeup.
    Sleeping {
        since: u64,
        step: usize,
    },
    Exited,
}

impl Task {
    /// The demand run since the last step becomes a step.
    fn flush_run(&mut self) {
        if self.pending_run > 0 {
            self.steps.push(Step::Run {
                ns: std::mem::take(&mut self.pending_run),
                slices: std::mem::take(&mut self.pending_slices),
            });
        }
    }
}

/// What the recording says of one task.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskFigures {
    pub cpu_ns: u64,
    pub wakeups: u64,
    pub voluntary_switches: u64,
    pub preemptions: u64,
    pub migrations: u64,
    /// Wakeup to switch-in (perf sched timehist's "sch delay").
    pub wakeup_latency: LatencyHist,
    /// Time preempted and waiting to run again.
    pub preempted_wait_ns: u64,
}

#[derive(Debug, Clone)]
pub struct Task {
    pub comm: String,
    pub tid: u32,
    /// The process, when the trace prints it.
    pub pid: Option<u32>,
    /// 0 for the first task with this id, 1 for the next after an exit, ...
    pub incarnation: u32,
    /// The last priority the trace gave (kernel scale: 100..139 is CFS).
    pub prio: Option<i32>,
    /// The task whose fork started this one, if the trace saw it.
    pub forked_by: Option<usize>,
    /// When it started, from the trace's start: its fork, else 0 (the
    /// replay starts it with the run).
    pub start_ns: u64,
    pub steps: Vec<Step>,
    pub figures: TaskFigures,
    state: State,
    /// Demand run since the last step, and the switch-ins it began with.
    pending_run: u64,
    pending_slices: u32,
    /// The task of the trace that last woke it.
    woken_by: Option<usize>,
    /// Preempted by the task it had just woken (and not run since).
    preempted_by: Option<usize>,
}

/// What was read but not used, and what did not add up.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Skipped {
    /// Events of other kinds, by name.
    pub other_events: SortedMap<String, u64>,
    /// Events the tracer said it lost.
    pub lost_events: u64,
    /// Wakeups of a task already awake (running or runnable).
    pub wakeups_of_awake_tasks: u64,
    /// Switches whose outgoing task was not the one running there, or
    /// whose incoming task was asleep with no wakeup seen (lost events).
    pub inconsistent_switches: u64,
    /// Priorities below 100: the RT class, replayed as SCHED_FIFO (the
    /// trace gives the priority, not the policy).
    pub rt_tasks: u64,
    /// Tasks seen running on a CPU where the trace had another task, or
    /// idle: switches the trace did not show, inferred.
    pub inferred_switches: u64,
    /// Preempted wakers resumed by their wakee's sleep, replayed as woken
    /// by it (`Timeline::handoff`).
    pub handoffs: u64,
}

#[derive(Debug, Clone, Copy, Default)]
struct Cpu {
    /// The task running (None: idle or not yet known).
    current: Option<usize>,
    since: u64,
    idle_ns: u64,
    idle: bool,
    seen: bool,
    /// The last event in the running task's context.
    last_event_ns: u64,
}

/// The timelines so far.
#[derive(Debug, Default)]
pub struct Timeline {
    pub tasks: Vec<Task>,
    live: FxHashMap<u32, usize>,
    /// Tasks made so far with each id.
    incarnations: FxHashMap<u32, u32>,
    cpus: Vec<Cpu>,
    pub start_ns: Option<u64>,
    pub last_ns: u64,
    pub skipped: Skipped,
    pub events: u64,
}

/// The finished timelines and the recording's figures.
#[derive(Debug, Clone)]
pub struct Recording {
    pub tasks: Vec<Task>,
    /// Idle time of each CPU seen.
    pub cpu_idle_ns: Vec<u64>,
    pub length_ns: u64,
    pub skipped: Skipped,
    pub events: u64,
}

impl Timeline {
    /// Takes the next line; lines must come in time order.
    pub fn feed(&mut self, line: &Line) -> Result<(), String> {
        let t = line.time_ns;
        if t < self.last_ns {
            return Err(format!(
                "its time ({}) is before the previous line's ({}): the trace must be in time order",
                secs(t),
                secs(self.last_ns)
            ));
        }
        if line.cpu >= crate::limits::CPUS.max as usize {
            return Err(format!(
                "CPU {} is beyond the {} CPUs a machine may have",
                line.cpu,
                crate::limits::CPUS.max
            ));
        }
        let t0 = *self.start_ns.get_or_insert(t);
        self.last_ns = t;
        self.events += 1;
        if self.cpus.len() <= line.cpu {
            self.cpus.resize(line.cpu + 1, Cpu::default());
        }
        let cpu = line.cpu;
        if !self.cpus[cpu].seen {
            self.cpus[cpu] = Cpu {
                since: t0,
                seen: true,
                ..Cpu::default()
            };
        }
        if line.context.tid != 0 {
            self.reconcile(&line.context, cpu);
        }
        match &line.event {
            Event::Switch { prev, left, next } => self.switch(cpu, t, prev, *left, next),
            Event::Wake { task, waking } => self.wake(&line.context, cpu, t, task, *waking),
            Event::WakeNew { task } => {
                let c = self.task(task);
                self.tasks[c].state = State::Runnable {
                    since: t,
                    woken: Some(t),
                };
            }
            Event::Fork { parent, child } => {
                let p = self.task(parent);
                self.cut(p, cpu, t);
                let c = self.new_task(child.tid, &child.comm, child.prio);
                self.tasks[c].forked_by = Some(p);
                self.tasks[c].start_ns = t - self.start_ns.unwrap_or(t);
                self.tasks[c].state = State::Runnable {
                    since: t,
                    woken: None,
                };
                self.tasks[p].steps.push(Step::Fork(c));
            }
            Event::Migrate { task, .. } => {
                let m = self.task(task);
                self.tasks[m].figures.migrations += 1;
            }
            // The last switch-out (X or Z) ends the task.
            Event::Exit { .. } => {}
            Event::Other(name) => *self.skipped.other_events.entry_or_default(name.clone()) += 1,
        }
        self.cpus[cpu].last_event_ns = t;
        Ok(())
    }

    /// The tracer lost events on a CPU.
    pub fn lost(&mut self, events: u64) {
        self.skipped.lost_events += events;
    }

    /// The live task with this id, made on first sight.
    fn task(&mut self, n: &Named) -> usize {
        self.task_by(n.tid, &n.comm, n.prio)
    }

    /// The task running where an event fired (its header).
    fn task_of(&mut self, ctx: &Context) -> usize {
        self.task_by(ctx.tid, &ctx.comm, None)
    }

    /// The live task with id `tid`, made on first sight; a name or
    /// priority the trace gives updates it (exec renames a task: it goes
    /// by its latest name). Allocates only for a new task or a new name.
    fn task_by(&mut self, tid: u32, comm: &str, prio: Option<i32>) -> usize {
        if let Some(&i) = self.live.get(&tid) {
            let task = &mut self.tasks[i];
            if prio.is_some() {
                task.prio = prio;
            }
            if task.comm != comm {
                comm.clone_into(&mut task.comm);
            }
            return i;
        }
        self.new_task(tid, comm, prio)
    }

    fn new_task(&mut self, tid: u32, comm: &str, prio: Option<i32>) -> usize {
        let seen = self.incarnations.entry(tid).or_insert(0);
        let incarnation = *seen;
        *seen += 1;
        self.tasks.push(Task {
            comm: comm.to_string(),
            tid,
            pid: None,
            incarnation,
            prio,
            forked_by: None,
            start_ns: 0,
            steps: Vec::new(),
            figures: TaskFigures::default(),
            state: State::Unknown,
            pending_run: 0,
            pending_slices: 0,
            woken_by: None,
            preempted_by: None,
        });
        let i = self.tasks.len() - 1;
        self.live.insert(tid, i);
        i
    }

    /// Banks what `i` ran up to `t` (it runs on `cpu`): its demand so far
    /// becomes a step, so that what it does next comes at this point.
    fn cut(&mut self, i: usize, cpu: usize, t: u64) {
        let task = &mut self.tasks[i];
        let since = match task.state {
            State::Running { since } => since,
            // Running, unseen, since the CPU's last switch (or the start).
            State::Unknown => {
                self.cpus[cpu].current.get_or_insert(i);
                self.cpus[cpu].since
            }
            _ => t,
        };
        task.pending_run += t - since;
        task.figures.cpu_ns += t - since;
        if matches!(task.state, State::Running { .. } | State::Unknown) {
            task.state = State::Running { since: t };
        }
        task.flush_run();
    }

    fn switch(&mut self, cpu: usize, t: u64, prev: &Named, left: Left, next: &Named) {
        let c = self.cpus[cpu];
        let n = (next.tid != 0).then(|| self.task(next));
        if prev.tid == 0 {
            if c.idle || c.current.is_none() {
                self.cpus[cpu].idle_ns += t - c.since;
            }
        } else {
            let p = self.task(prev);
            let since = match self.tasks[p].state {
                State::Running { since } => Some(since),
                // Running, unseen, since the CPU's last switch (or the start).
                State::Unknown => Some(c.since),
                _ => None,
            };
            if since.is_none() || c.current.is_some_and(|cur| cur != p) {
                self.skipped.inconsistent_switches += 1;
            }
            let ran = since.map_or(0, |s| t - s);
            let task = &mut self.tasks[p];
            task.pending_run += ran;
            task.figures.cpu_ns += ran;
            match left {
                Left::Preempted => {
                    task.figures.preemptions += 1;
                    task.state = State::Runnable {
                        since: t,
                        woken: None,
                    };
                    // Preempted by the task it just woke: see `handoff`.
                    let by_wakee = n.filter(|&n| self.tasks[n].woken_by == Some(p));
                    self.tasks[p].preempted_by = by_wakee;
                }
                Left::Slept | Left::Exited => {
                    task.figures.voluntary_switches += 1;
                    task.flush_run();
                    if let Some(n) = n.filter(|&n| self.tasks[n].preempted_by == Some(p)) {
                        self.handoff(p, n);
                    }
                    let task = &mut self.tasks[p];
                    if left == Left::Exited {
                        task.state = State::Exited;
                        self.live.remove(&prev.tid);
                    } else {
                        // Its end is known at the wakeup.
                        task.steps.push(Step::ASLEEP);
                        task.state = State::Sleeping {
                            since: t,
                            step: task.steps.len() - 1,
                        };
                    }
                }
            }
        }
        let cpu_state = &mut self.cpus[cpu];
        cpu_state.since = t;
        if next.tid == 0 {
            cpu_state.current = None;
            cpu_state.idle = true;
            return;
        }
        cpu_state.idle = false;
        let n = n.expect("next is a task");
        self.cpus[cpu].current = Some(n);
        let task = &mut self.tasks[n];
        match task.state {
            State::Runnable { woken: Some(w), .. } => task.figures.wakeup_latency.record(t - w),
            State::Runnable { since, woken: None } => task.figures.preempted_wait_ns += t - since,
            State::Sleeping { since, step } => {
                // Its wakeup was lost: woken from outside, now.
                self.skipped.inconsistent_switches += 1;
                task.steps[step] = Step::woken(self.start_ns, task.start_ns, since, t);
            }
            State::Running { .. } => self.skipped.inconsistent_switches += 1,
            State::Unknown | State::Exited => {}
        }
        task.state = State::Running { since: t };
        task.pending_slices += 1;
    }

    /// `waker` woke `x`, which preempted it on the spot (a sync wakeup on
    /// one CPU); now `x` sleeps and hands the CPU back. The waker runs on
    /// without sleeping because what it waits for (the pipe's next
    /// message, say) came while it was preempted: a dependency the trace
    /// shows no wakeup for. Replayed as one: `x` posts the waker before
    /// it sleeps, and the waker waits for that post where it resumes, so
    /// a replay that does not preempt cannot run the waker ahead.
    fn handoff(&mut self, x: usize, waker: usize) {
        self.tasks[x].steps.push(Step::Wake(waker));
        let w = &mut self.tasks[waker];
        w.preempted_by = None;
        w.flush_run();
        w.steps.push(Step::Block);
        self.skipped.handoffs += 1;
    }

    /// An event in a task's context on a CPU where the trace has another
    /// task running, or none: switches the trace did not show (some
    /// kernels do not trace every switch; events get lost). The task that
    /// was running there left, asleep, after its last event; this one ran
    /// from when it became runnable there, or from then. No wakeup latency
    /// is taken from an inferred switch.
    fn reconcile(&mut self, ctx: &Context, cpu: usize) {
        let k = self.task_of(ctx);
        let c = self.cpus[cpu];
        match c.current {
            Some(cur) if cur == k => return,
            Some(cur) => {
                let end = c.last_event_ns.max(c.since);
                let task = &mut self.tasks[cur];
                if let State::Running { since } = task.state {
                    let ran = end.saturating_sub(since);
                    task.pending_run += ran;
                    task.figures.cpu_ns += ran;
                }
                task.flush_run();
                task.steps.push(Step::ASLEEP);
                task.state = State::Sleeping {
                    since: end,
                    step: task.steps.len() - 1,
                };
                self.cpus[cpu].since = end;
            }
            // Not known yet: the task runs there since the start.
            None if !c.idle => return,
            None => {}
        }
        let from = self.cpus[cpu].since;
        let task = &mut self.tasks[k];
        let at = match task.state {
            State::Runnable { since, woken } => {
                let at = since.max(from);
                if woken.is_none() {
                    task.figures.preempted_wait_ns += at - since;
                }
                at
            }
            State::Sleeping { since, step } => {
                let at = since.max(from);
                task.steps[step] = Step::woken(self.start_ns, task.start_ns, since, at);
                at
            }
            _ => from,
        };
        task.state = State::Running { since: at };
        task.pending_slices += 1;
        let c = &mut self.cpus[cpu];
        if c.idle {
            c.idle_ns += at - c.since;
        }
        c.since = at;
        c.current = Some(k);
        c.idle = false;
        self.skipped.inferred_switches += 1;
    }

    fn wake(&mut self, ctx: &Context, cpu: usize, t: u64, wakee: &Named, waking: bool) {
        let w = self.task(wakee);
        let t0 = self.start_ns.unwrap_or(t);
        let (since, step) = match self.tasks[w].state {
            State::Sleeping { since, step } => (since, step),
            // First seen being woken: asleep since the trace began.
            State::Unknown => {
                self.tasks[w].steps.push(Step::ASLEEP);
                (t0, self.tasks[w].steps.len() - 1)
            }
            // sched_wakeup after its sched_waking, or a task already awake.
            State::Runnable { woken: Some(_), .. } if !waking => return,
            _ => {
                self.skipped.wakeups_of_awake_tasks += 1;
                return;
            }
        };
        let waker =
            (ctx.tid != 0 && !ctx.in_irq && ctx.tid != wakee.tid).then(|| self.task_of(ctx));
        self.tasks[w].woken_by = None;
        match waker {
            Some(k) if !matches!(self.tasks[k].state, State::Sleeping { .. } | State::Exited) => {
                self.tasks[w].woken_by = Some(k);
                if ctx.pid.is_some() {
                    self.tasks[k].pid = ctx.pid;
                }
                self.cut(k, cpu, t);
                self.tasks[k].steps.push(Step::Wake(w));
                self.tasks[w].steps[step] = Step::Block;
            }
            _ => {
                let start = self.tasks[w].start_ns;
                self.tasks[w].steps[step] = Step::woken(self.start_ns, start, since, t);
            }
        }
        let task = &mut self.tasks[w];
        task.figures.wakeups += 1;
        task.state = State::Runnable {
            since: t,
            woken: Some(t),
        };
    }

    /// Closes every timeline at the last line's time.
    pub fn finish(mut self) -> Recording {
        let end = self.last_ns;
        let t0 = self.start_ns.unwrap_or(end);
        for task in &mut self.tasks {
            if let State::Running { since } = task.state {
                task.pending_run += end - since;
                task.figures.cpu_ns += end - since;
            }
            task.flush_run();
            // Asleep at the end: nothing more to replay.
            if let State::Sleeping { step, .. } = task.state {
                task.steps.truncate(step);
            }
            if task.prio.is_some_and(|p| p < 100) {
                self.skipped.rt_tasks += 1;
            }
        }
        let cpu_idle_ns = self
            .cpus
            .iter()
            .map(|c| {
                if c.seen && (c.idle || c.current.is_none()) {
                    c.idle_ns + (end - c.since)
                } else {
                    c.idle_ns
                }
            })
            .collect();
        Recording {
            tasks: self.tasks,
            cpu_idle_ns,
            length_ns: end - t0,
            skipped: self.skipped,
            events: self.events,
        }
    }
}

/// Seconds as a trace prints them.
pub fn secs(ns: u64) -> String {
    format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000)
}

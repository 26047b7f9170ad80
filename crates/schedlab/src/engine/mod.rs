//! The event loop: integer-nanosecond time, CPUs with a current task, a CFS
//! run queue, an idle state and load signals; tasks running their programs;
//! wakeups delivered locally, by direct remote enqueue or by IPI; the tick.
//!
//! Submodules split the work: [`cpu`] runs CPUs (segments, scheduling, idle,
//! preemption, the tick), [`task`] runs programs (channels, blocking,
//! wakeups, fork), [`invariants`] checks the model's invariants. Placement
//! decisions are asked of [`crate::policy::wakeup`].

mod cpu;
mod invariants;
pub mod queue;
pub mod stats;
mod task;

use crate::cfs::Entity;
use crate::cost::CostModel;
use crate::cpuset::CpuSet;
use crate::domains::Domains;
use crate::error::{Error, Result};
use crate::limits;
use crate::policy::{KernelPolicy, PolicySpec};
use crate::topology::Topology;
use crate::workload::program::{Workload, WorkloadSpec};
use queue::{Event, EventQueue};
use stats::{Counters, CpuTime, MarkStats, TraceEvent, TraceWindow};
use std::collections::BTreeMap;

pub use cpu::{Acct, CpuState};
pub use task::{ChannelStats, TaskState, Wait};

/// Everything one run needs.
#[derive(Debug, Clone)]
pub struct SimConfig {
    pub topology: Topology,
    pub policy: KernelPolicy,
    pub workload: Workload,
    pub seed: u64,
    /// Stop here even if tasks are still running (None: when all have exited).
    pub duration_ns: Option<u64>,
    pub trace: Option<TraceWindow>,
    /// Marks and channel traffic before this time are warm-up, not counted.
    pub measure_from_ns: u64,
    /// Check the model's invariants after every event (slow; for tests).
    pub check_invariants: bool,
}

impl SimConfig {
    /// `workload` under `policy` on `topology`, checked and compiled; seed 1,
    /// no duration, trace or warm-up, no invariant checks. Override fields
    /// with struct update syntax.
    pub fn new(
        topology: Topology,
        policy: &PolicySpec,
        workload: &WorkloadSpec,
    ) -> Result<SimConfig> {
        let n = topology.ncpus();
        Ok(SimConfig {
            policy: policy.resolve(n)?,
            workload: Workload::compile(workload, n)?,
            topology,
            seed: 1,
            duration_ns: None,
            trace: None,
            measure_from_ns: 0,
            check_invariants: false,
        })
    }
}

/// What a run reports.
#[derive(Debug, Clone)]
pub struct RunOutput {
    pub end_ns: u64,
    pub events: u64,
    pub counters: BTreeMap<String, u64>,
    pub cpu_time: Vec<CpuTime>,
    pub marks: Vec<MarkStats>,
    pub tasks: Vec<TaskSummary>,
    pub channels: Vec<ChannelStats>,
    /// When measuring started (the end of the warm-up).
    pub measure_from_ns: u64,
    pub trace: Vec<TraceEvent>,
    /// When the trace window opened, if it did.
    pub trace_start_ns: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TaskSummary {
    pub name: String,
    pub sum_exec_ns: u64,
    pub exited_ns: Option<u64>,
    pub last_cpu: usize,
}

/// Counter indexes the engine bumps on its hot path.
#[derive(Debug, Clone)]
struct CounterIds {
    ttwu_local: usize,
    ttwu_remote: usize,
    /// `ttwu.remote.<distance>`, by `CpuDistance::cost_index`.
    ttwu_remote_at: [usize; 4],
    ipi_sent: usize,
    ttwu_sync: usize,
    switches: usize,
    forks: usize,
    /// `idle.enter.<C-state>`, by C-state index.
    idle_enter: Vec<usize>,
}

impl CounterIds {
    fn new(c: &mut Counters, topo: &Topology) -> Self {
        CounterIds {
            idle_enter: topo
                .costs
                .cstates
                .iter()
                .map(|s| c.id(&format!("idle.enter.{}", s.name)))
                .collect(),
            ttwu_local: c.id("ttwu.local"),
            ttwu_remote: c.id("ttwu.remote"),
            ttwu_remote_at: ["smt", "llc", "other_llc", "other_node"]
                .map(|d| c.id(&format!("ttwu.remote.{d}"))),
            ipi_sent: c.id("ipi.sent"),
            ttwu_sync: c.id("ttwu.sync"),
            switches: c.id("sched.switches"),
            forks: c.id("sched.forks"),
        }
    }
}

/// The simulation. Fields are crate-visible so that policy code can read
/// the state it decides on.
pub struct Sim {
    pub(crate) now: u64,
    queue: EventQueue,
    pub(crate) topo: Topology,
    pub(crate) policy: KernelPolicy,
    pub(crate) domains: Domains,
    pub(crate) cost: CostModel,
    pub(crate) cpus: Vec<cpu::Cpu>,
    pub(crate) tasks: Vec<task::Task>,
    pub(crate) ents: Vec<Entity>,
    chans: Vec<task::Channel>,
    workload: Workload,
    /// SMT siblings of each CPU (itself included).
    siblings: Vec<Vec<usize>>,
    counters: Counters,
    ids: CounterIds,
    marks: Vec<MarkStats>,
    trace_window: Option<TraceWindow>,
    /// When the trace window opened (it may wait for a wakeup).
    trace_opened_ns: Option<u64>,
    trace: Vec<TraceEvent>,
    events: u64,
    seed: u64,
    end_ns: u64,
    pub(crate) measure_from_ns: u64,
    duration_set: bool,
    check_invariants: bool,
    /// CPUs whose busy state may have changed during the current event.
    seg_touched: Vec<usize>,
    /// Per LLC: some core has all its threads idle (set on idle, cleared by scans).
    pub(crate) llc_has_idle_cores: Vec<bool>,
    /// Per LLC: the moving average of select_idle_cpu's scan time (SIS_PROP).
    pub(crate) llc_avg_scan_cost_ns: Vec<u64>,
    /// Scan time of the wakeups of the current waker, charged to it.
    wakeup_scan_ns: u64,
    /// Load-balancing state per CPU and domain level.
    pub(crate) lb: Vec<Vec<crate::policy::balance::LbState>>,
    /// Counters named by (prefix, level, branch), interned on first use and
    /// cached by the strings' addresses (a lookup on every wakeup, so no
    /// string comparisons; the counters themselves are keyed by name).
    named: std::collections::HashMap<[usize; 4], usize>,
}

impl Sim {
    pub fn new(cfg: &SimConfig) -> Result<Sim> {
        let topo = cfg.topology.clone();
        let domains = Domains::build(&topo, &cfg.policy)?;
        let end_ns = match cfg.duration_ns {
            Some(d) => limits::SIM_TIME_NS.check("duration_ns", d)?,
            None => limits::SIM_TIME_NS.max,
        };
        let n = topo.ncpus();
        let mut counters = Counters::default();
        let ids = CounterIds::new(&mut counters, &topo);
        let siblings = (0..n).map(|c| topo.core_span(c).iter().collect()).collect();
        let nllc = topo.cpus.iter().map(|c| c.llc + 1).max().unwrap_or(1);
        let mut sim = Sim {
            now: 0,
            queue: EventQueue::default(),
            cost: CostModel::new(&topo.costs),
            cpus: (0..n)
                .map(|_| cpu::Cpu::new(cfg.policy.tunables.migration_cost_ns * 2))
                .collect(),
            topo,
            policy: cfg.policy.clone(),
            domains,
            tasks: Vec::new(),
            ents: Vec::new(),
            chans: cfg
                .workload
                .channels
                .iter()
                .map(task::Channel::new)
                .collect(),
            workload: cfg.workload.clone(),
            siblings,
            counters,
            ids,
            marks: cfg
                .workload
                .labels
                .iter()
                .map(|l| MarkStats::new(l))
                .collect(),
            trace_window: cfg.trace,
            trace_opened_ns: None,
            trace: Vec::new(),
            events: 0,
            seed: cfg.seed,
            end_ns,
            measure_from_ns: cfg.measure_from_ns,
            duration_set: cfg.duration_ns.is_some(),
            check_invariants: cfg.check_invariants,
            seg_touched: Vec::new(),
            llc_has_idle_cores: vec![false; nllc],
            llc_avg_scan_cost_ns: vec![0; nllc],
            wakeup_scan_ns: 0,
            named: std::collections::HashMap::new(),
            lb: Vec::new(),
        };
        sim.reset_balance_state();
        let tick = sim.policy.tunables.tick_ns();
        for c in 0..n {
            sim.queue.push(tick, Event::Tick { cpu: c });
        }
        for tpl in 0..sim.workload.initial {
            sim.start_task(tpl, None)?;
        }
        for c in 0..n {
            sim.flush_touched_cpu(c);
        }
        Ok(sim)
    }

    pub fn now(&self) -> u64 {
        self.now
    }

    pub fn topology(&self) -> &Topology {
        &self.topo
    }

    pub fn domains(&self) -> &Domains {
        &self.domains
    }

    /// Runnable tasks on `cpu`'s queue, the running one included.
    pub fn nr_running(&self, cpu: usize) -> usize {
        self.cpus[cpu].rq.nr_running
    }

    /// Whether `cpu` is idle: nothing running, queued or on its way.
    pub fn is_idle(&self, cpu: usize) -> bool {
        self.cpu_idle(cpu)
    }

    /// How many times marks of `label` have been recorded so far.
    pub fn mark_count(&self, label: &str) -> u64 {
        self.marks
            .iter()
            .find(|m| m.label == label)
            .map_or(0, |m| m.count)
    }

    /// Counters so far.
    pub fn counters(&self) -> BTreeMap<String, u64> {
        self.counters.to_map()
    }

    /// Replaces the kernel policy from now on (a flag flipped on a running box).
    pub fn set_policy(&mut self, policy: KernelPolicy) -> Result<()> {
        self.domains = Domains::build(&self.topo, &policy)?;
        self.policy = policy;
        self.reset_balance_state();
        Ok(())
    }

    /// Balance intervals start at each level's initial value.
    fn reset_balance_state(&mut self) {
        let now = self.now;
        self.lb = (0..self.topo.ncpus())
            .map(|c| {
                self.domains
                    .of(c)
                    .map(|d| crate::policy::balance::LbState {
                        last_balance_ns: now,
                        interval_ms: d.params.initial_interval_ms.max(1) as u64,
                        nr_balance_failed: 0,
                    })
                    .collect()
            })
            .collect();
    }

    /// True once every task has exited or the end time is reached.
    pub fn is_done(&self) -> bool {
        self.now >= self.end_ns || self.tasks.iter().all(|t| t.state == TaskState::Exited)
    }

    /// Runs events up to simulated time `until` (or the end); returns whether the run is over.
    pub fn run_until(&mut self, until: u64) -> Result<bool> {
        let until = until.min(self.end_ns);
        while !self.is_done() {
            let Some(t) = self.queue.peek_time() else {
                break;
            };
            if t > until {
                self.now = self.now.max(until);
                return Ok(self.is_done());
            }
            let (t, ev) = self.queue.pop().expect("peeked");
            self.now = t;
            self.events += 1;
            limits::EVENTS.check("events processed", self.events)?;
            self.dispatch(ev);
            let touched = std::mem::take(&mut self.seg_touched);
            for c in &touched {
                self.flush_touched_cpu(*c);
            }
            self.seg_touched = touched;
            self.seg_touched.clear();
            if self.check_invariants {
                self.check_all().map_err(|e| {
                    Error::invalid(format!("invariant broken at {} ns: {e}", self.now))
                })?;
            }
        }
        if self.now >= self.end_ns && !self.duration_set {
            return Err(Error::invalid(format!(
                "the run reached the simulated-time limit ({} s) with tasks still running; give it a duration",
                limits::SIM_TIME_NS.max / 1_000_000_000
            )));
        }
        Ok(self.is_done())
    }

    /// Runs to the end.
    pub fn run(mut self) -> Result<RunOutput> {
        self.run_until(u64::MAX)?;
        Ok(self.finish())
    }

    /// Closes the books and reports.
    pub fn finish(mut self) -> RunOutput {
        let end = self.now;
        for c in 0..self.cpus.len() {
            self.touch_rq(c);
            self.cpus[c].account(end, None);
        }
        RunOutput {
            end_ns: end,
            events: self.events,
            counters: self.counters.to_map(),
            cpu_time: self.cpus.iter().map(|c| c.time).collect(),
            marks: self.marks,
            tasks: self
                .tasks
                .iter()
                .enumerate()
                .map(|(i, t)| TaskSummary {
                    name: t.name.clone(),
                    sum_exec_ns: self.ents[i].sum_exec_ns,
                    exited_ns: t.exited_ns,
                    last_cpu: t.cpu,
                })
                .collect(),
            channels: self.chans.iter().map(|c| c.stats).collect(),
            measure_from_ns: self.measure_from_ns,
            trace: self.trace,
            trace_start_ns: self.trace_opened_ns,
        }
    }

    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::SegmentDone { cpu, gen } => {
                if self.cpus[cpu].gen == gen {
                    self.segment_done(cpu);
                }
            }
            Event::IdleKick { cpu } => self.idle_kick(cpu),
            Event::IdleExitDone { cpu, gen } => {
                if self.cpus[cpu].gen == gen {
                    self.idle_exit_done(cpu);
                }
            }
            Event::Tick { cpu } => self.tick(cpu),
            Event::WakeArrive { cpu, task } => self.wake_arrive(cpu, task),
            Event::Resched { cpu } => self.resched_local(cpu),
            Event::Timer { task, gen } => self.timer_fired(task, gen),
        }
    }

    /// Bumps the counter "prefix.level.branch" (or "prefix.branch" when
    /// `level` is empty).
    pub(crate) fn bump_named(
        &mut self,
        prefix: &'static str,
        level: &'static str,
        branch: &'static str,
    ) {
        let key = [
            prefix.as_ptr() as usize,
            level.as_ptr() as usize,
            level.len(),
            branch.as_ptr() as usize,
        ];
        let id = match self.named.get(&key) {
            Some(&id) => id,
            None => {
                let name = if level.is_empty() {
                    format!("{prefix}.{branch}")
                } else {
                    format!("{prefix}.{level}.{branch}")
                };
                let id = self.counters.id(&name);
                self.named.insert(key, id);
                id
            }
        };
        self.counters.bump(id);
    }

    /// Counts what a placement decided: the wake_affine / select_idle_sibling
    /// branch and the domain level a migration crossed.
    fn count_placement(&mut self, placed: &crate::policy::wakeup::Placement, prev: usize) {
        for &(prefix, level, branch) in placed.path.iter().flatten() {
            self.bump_named(prefix, level, branch);
        }
        if placed.cpu != prev {
            let level = self
                .domains
                .lowest_spanning(prev, placed.cpu)
                .map_or("none", |d| d.level);
            let kind = if placed.fork {
                "migrations.fork"
            } else {
                "migrations.wakeup"
            };
            self.bump_named(kind, "", level);
        }
    }

    fn trace_event(&mut self, ev: TraceEvent) {
        let Some(w) = self.trace_window else {
            return;
        };
        if self.now < w.start_ns || self.trace.len() >= w.max_events {
            return;
        }
        let opened = match self.trace_opened_ns {
            Some(t) => t,
            None if !w.from_first_wakeup => w.start_ns,
            None if matches!(ev, TraceEvent::Wakeup { .. }) => self.now,
            None => return,
        };
        self.trace_opened_ns = Some(opened);
        if self.now - opened < w.end_ns - w.start_ns {
            self.trace.push(ev);
        }
    }

    pub(crate) fn allowed(&self, task: usize) -> &CpuSet {
        &self.tasks[task].affinity
    }
}

//! The event loop: integer-nanosecond time, CPUs with a current task, a CFS
//! run queue, an idle state and load signals; tasks running their programs;
//! wakeups delivered locally, by direct remote enqueue or by IPI; the tick.
//!
//! Submodules split the work: [`cpu`] runs CPUs (segments, scheduling, idle,
//! the tick), [`task`] runs programs (channels, blocking, wakeups, fork),
//! `sync` runs the pthread objects (mutexes, condition variables,
//! barriers: futex waits and wakes) and memory writes, [`invariants`] checks the model's invariants, `sched_env` gives the
//! scheduler its view of the machine. Placement, balancing and preemption
//! are decided by [`crate::sched`], never here.

mod channel;
mod cpu;
mod futex;
mod idle;
mod interp;
mod invariants;
mod lwlock;
mod mm;
mod occupancy;
mod pipe;
pub mod queue;
mod rt;
mod sched_calls;
mod sched_env;
mod schedule;
mod segment;
mod slab;
pub mod stats;
mod sync;
mod task;
mod transfer;
mod wake;

use crate::cost::CostModel;
use crate::counters::{Cause, Counter};
use crate::cpuset::CpuSet;
use crate::domains::Domains;
use crate::error::Concern;
use crate::error::{Error, Result};
use crate::limits;
use crate::policy::{KernelPolicy, PolicySpec};
use crate::sched::cfs::Entity;
use crate::sched::why::{Decision, Trail, TrailCell, WhyFilter};
use crate::sched::SchedState;
use crate::topology::Topology;
use crate::workload::program::{Workload, WorkloadSpec};
use queue::{Event, EventQueue};
use stats::{Counters, CpuTime, MarkStats, TraceEvent, TraceWindow};
use std::collections::BTreeMap;

pub use channel::ChannelStats;
pub use cpu::{Acct, CpuState};
pub use task::{TaskState, Wait};

/// Everything one run needs.
#[derive(Debug, Clone)]
pub struct SimConfig {
    pub topology: Topology,
    pub policy: KernelPolicy,
    pub workload: Workload,
    pub seed: u64,
    /// When the workload starts. The CPUs' ticks and PELT periods run from
    /// 0, so this is its phase within them (experiments draw it from the
    /// seed, `seed::start_phase`); the duration, the warm-up and the trace
    /// window count from it.
    pub start_ns: u64,
    /// Stop here even if tasks are still running (None: when all have exited).
    pub duration_ns: Option<u64>,
    pub trace: Option<TraceWindow>,
    /// Keep decision records (`sched::why`); its window counts from the
    /// workload's start, as the trace's does.
    pub why: Option<WhyFilter>,
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
            start_ns: 0,
            duration_ns: None,
            trace: None,
            why: None,
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
    /// Each CPU's time in the measured part (after the warm-up).
    pub measured_cpu_time: Vec<CpuTime>,
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
    /// From each measured wakeup by another task to the task's running.
    pub wakeup_latency: stats::LatencyHist,
    /// The same for wakeups by the task's own timer (the end of a sleep).
    pub timer_latency: stats::LatencyHist,
    /// Times switched in, and moved to another CPU's queue.
    pub switches: u64,
    pub migrations: u64,
}

/// The simulation. The scheduler reads and changes it through
/// [`SchedEnv`] (implemented in `sched_env.rs`).
pub struct Sim {
    pub(crate) now: u64,
    queue: EventQueue,
    pub(crate) topo: Topology,
    pub(crate) policy: KernelPolicy,
    pub(crate) domains: Domains,
    pub(crate) cost: CostModel,
    pub(crate) cpus: Vec<cpu::Cpu>,
    pub(crate) tasks: Vec<task::Task>,
    /// Each task's allowed CPUs, apart from the task: 128 bytes each that
    /// only placement and balancing read, kept out of the interpreter's
    /// cache lines.
    pub(crate) affinity: Vec<CpuSet>,
    /// Tasks not yet exited (the run is over at zero); kept so the event
    /// loop need not scan every task after each event.
    pub(crate) tasks_alive: usize,
    pub(crate) ents: Vec<Entity>,
    chans: Vec<channel::Channel>,
    /// The tasks' address spaces and where each one's refcount line is.
    mms: mm::AddressSpaces,
    /// The pthread objects: mutexes, condition variables, barriers.
    sync: sync::SyncObjects,
    workload: Workload,
    /// What the speed of a CPU's work depends on besides the CPU: busy SMT
    /// siblings, copies sharing a node's bandwidth, what each LLC holds.
    occupancy: occupancy::Occupancy,
    /// SLUB's skb caches, on machines with `skb_slabs` (boxed: most have none).
    skb_slabs: Option<Box<slab::SkbAllocator>>,
    /// The skbs a read consumed, freed one by one (kept for its allocation).
    freed_skbs: Vec<slab::SkbObjects>,
    counters: Counters,
    marks: Vec<MarkStats>,
    trace: stats::TraceRecorder,
    /// Decision records, when asked for (boxed: most runs keep none).
    pub(crate) why: Option<Box<TrailCell>>,
    events: u64,
    seed: u64,
    end_ns: u64,
    pub(crate) measure_from_ns: u64,
    /// Each CPU's time when the warm-up ended (taken at the first event
    /// at or after it; empty before then).
    cpu_time_at_measure: Vec<CpuTime>,
    duration_set: bool,
    /// The event queue ran dry: the tasks left are blocked for good.
    stalled: bool,
    check_invariants: bool,
    /// The RT bandwidth period timer is queued (it runs while RT tasks
    /// run or have time to pay back).
    rt_period_armed: bool,
    /// CPUs whose busy state may have changed during the current event.
    seg_touched: Vec<usize>,
    /// A TCP deposit's wakees and their sync hints, kept between deposits
    /// so a message allocates nothing (taken while in use: a deposit that
    /// runs inside another's wakeups starts its own).
    tcp_wakees: Vec<(usize, bool)>,
    /// The current waker's work beyond each wakeup's `wakeup_ns`: the CPUs
    /// its placements scanned and the IPIs it sent; charged to it.
    waker_extra_ns: u64,
    /// The scheduler's own state (balancing timers, idle-core hints).
    pub(crate) sched: SchedState,
    /// The CPUs `cpu_idle` holds for, kept up to date as they change so a
    /// wakeup's idle scan reads one mask instead of every CPU.
    pub(crate) idle_cpus: CpuSet,
}

impl Sim {
    pub fn new(cfg: &SimConfig) -> Result<Sim> {
        let topo = cfg.topology.clone();
        let domains = Domains::build(&topo, &cfg.policy)?;
        let end_ns = match cfg.duration_ns {
            Some(d) => cfg.start_ns + limits::SIM_TIME_NS.check(Concern::Run, "duration_ns", d)?,
            None => limits::SIM_TIME_NS.max,
        };
        let n = topo.ncpus();
        let counters = Counters::new(topo.costs.cstates.iter().map(|s| s.name.clone()));
        let occupancy = occupancy::Occupancy::new(&topo);
        let skb_slabs = topo
            .costs
            .skb_slabs
            .as_ref()
            .map(|s| Box::new(slab::SkbAllocator::new(s, n, topo.nnodes())));
        let sched = SchedState::new(&topo, &domains, &cfg.policy, 0);
        let mut sim = Sim {
            now: 0,
            queue: EventQueue::default(),
            cost: CostModel::new(&topo.costs),
            cpus: (0..n)
                .map(|_| {
                    cpu::Cpu::new(
                        cfg.policy.tunables.migration_cost_ns * 2,
                        cfg.policy.era.rules().picker,
                    )
                })
                .collect(),
            topo,
            policy: cfg.policy.clone(),
            domains,
            tasks: Vec::new(),
            affinity: Vec::new(),
            tasks_alive: 0,
            ents: Vec::new(),
            mms: mm::AddressSpaces::default(),
            chans: cfg
                .workload
                .channels
                .iter()
                .map(channel::Channel::new)
                .collect(),
            sync: sync::SyncObjects::new(&cfg.workload),
            workload: cfg.workload.clone(),
            occupancy,
            skb_slabs,
            freed_skbs: Vec::new(),
            counters,
            marks: cfg
                .workload
                .labels
                .iter()
                .map(|l| MarkStats::new(l))
                .collect(),
            trace: stats::TraceRecorder::new(cfg.trace.map(|w| TraceWindow {
                start_ns: cfg.start_ns + w.start_ns,
                end_ns: cfg.start_ns + w.end_ns,
                ..w
            })),
            why: cfg.why.clone().map(|f| {
                Box::new(TrailCell::new(Trail::new(WhyFilter {
                    from_ns: cfg.start_ns.saturating_add(f.from_ns),
                    to_ns: cfg.start_ns.saturating_add(f.to_ns),
                    ..f
                })))
            }),
            events: 0,
            seed: cfg.seed,
            end_ns,
            measure_from_ns: cfg.start_ns + cfg.measure_from_ns,
            cpu_time_at_measure: Vec::new(),
            duration_set: cfg.duration_ns.is_some(),
            stalled: false,
            check_invariants: cfg.check_invariants,
            rt_period_armed: false,
            seg_touched: Vec::new(),
            tcp_wakees: Vec::new(),
            waker_extra_ns: 0,
            sched,
            idle_cpus: CpuSet::first_n(n),
        };
        let tick = sim.policy.tunables.tick_ns();
        for c in 0..n {
            sim.queue.push(tick, Event::Tick { cpu: c });
        }
        sim.now = cfg.start_ns;
        for tpl in 0..sim.workload.initial {
            sim.start_task(tpl, None)?;
        }
        for c in 0..n {
            sim.flush_touched_cpu(c);
        }
        // CPUs given nothing to run have been idle since boot: tickless.
        for c in 0..n {
            if sim.cpu_idle(c) && !sim.cpus[c].kick_pending {
                let stops = crate::sched::nohz::idle_enter(&mut sim, c, u64::MAX);
                sim.cpus[c].tick_stopped = stops;
            }
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

    /// The decision records kept since the last call (none unless the
    /// configuration asked for them), and how many the limit turned away.
    pub fn take_decisions(&mut self) -> (Vec<Decision>, u64) {
        self.why.as_ref().map_or((Vec::new(), 0), |w| {
            let mut trail = w.borrow_mut();
            (trail.take(), trail.over_limit)
        })
    }

    /// Keeps no more decision records.
    pub fn stop_decisions(&mut self) {
        self.why = None;
    }

    /// Each task's name, by id.
    pub fn task_names(&self) -> Vec<String> {
        self.tasks.iter().map(|t| t.name.clone()).collect()
    }

    /// Replaces the kernel policy from now on (a flag flipped on a running box).
    pub fn set_policy(&mut self, policy: KernelPolicy) -> Result<()> {
        self.domains = Domains::build(&self.topo, &policy)?;
        self.policy = policy;
        self.sched
            .reset_balance(&self.topo, &self.domains, self.now);
        Ok(())
    }

    /// True once every task has exited or the end time is reached.
    pub fn is_done(&self) -> bool {
        self.now >= self.end_ns || self.tasks_alive == 0 || self.stalled
    }

    /// Runs events up to simulated time `until` (or the end); returns whether the run is over.
    pub fn run_until(&mut self, until: u64) -> Result<bool> {
        let until = until.min(self.end_ns);
        while !self.is_done() {
            let Some(t) = self.queue.peek_time() else {
                // Nothing is queued, so nothing can happen again: the tasks
                // left wait for what never comes (idle CPUs whose ticks
                // stopped). A run with a duration idles to its end; one
                // without ends here.
                if self.duration_set {
                    self.now = self.end_ns;
                }
                self.stalled = true;
                break;
            };
            if t > until {
                self.now = self.now.max(until);
                return Ok(self.is_done());
            }
            let (t, ev) = self.queue.pop().expect("peeked");
            if t >= self.measure_from_ns && self.cpu_time_at_measure.is_empty() {
                self.snapshot_cpu_time();
            }
            self.now = t;
            self.events += 1;
            limits::EVENTS.check(Concern::Run, "events processed", self.events)?;
            self.dispatch(ev);
            let touched = std::mem::take(&mut self.seg_touched);
            for c in &touched {
                self.flush_touched_cpu(*c);
            }
            self.seg_touched = touched;
            self.seg_touched.clear();
            if self.check_invariants {
                self.check_all().map_err(|e| {
                    Error::invalid(
                        Concern::Run,
                        format!("invariant broken at {} ns: {e}", self.now),
                    )
                })?;
            }
        }
        if self.now >= self.end_ns && !self.duration_set {
            return Err(Error::invalid(Concern::Run, format!(
                "the run reached the simulated-time limit ({} s) with tasks still running; give it a duration",
                limits::SIM_TIME_NS.max / 1_000_000_000
            )));
        }
        Ok(self.is_done())
    }

    /// Closes every CPU's accounting at the end of the warm-up and keeps
    /// the totals (the measured part's time is what follows).
    fn snapshot_cpu_time(&mut self) {
        let at = self.measure_from_ns;
        self.cpu_time_at_measure = self
            .cpus
            .iter_mut()
            .map(|c| {
                c.account(at, None);
                c.time
            })
            .collect();
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
            self.account_rt(c);
            self.cpus[c].account(end, None);
        }
        if self.cpu_time_at_measure.is_empty() {
            // The run ended in its warm-up: nothing was measured.
            self.cpu_time_at_measure = self.cpus.iter().map(|c| c.time).collect();
        }
        RunOutput {
            end_ns: end,
            events: self.events,
            counters: self.counters.to_map(),
            cpu_time: self.cpus.iter().map(|c| c.time).collect(),
            measured_cpu_time: self
                .cpus
                .iter()
                .zip(&self.cpu_time_at_measure)
                .map(|(c, at)| c.time.since(at))
                .collect(),
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
                    wakeup_latency: t.wakeup_latency.clone(),
                    timer_latency: t.timer_latency.clone(),
                    switches: t.switches,
                    migrations: t.migrations,
                })
                .collect(),
            channels: self.chans.iter().map(|c| c.stats()).collect(),
            measure_from_ns: self.measure_from_ns,
            trace_start_ns: self.trace.opened_ns(),
            trace: self.trace.into_events(),
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
            Event::BalanceDone { cpu, gen } => {
                if self.cpus[cpu].gen == gen {
                    self.balance_done(cpu);
                }
            }
            Event::Tick { cpu } => self.tick(cpu),
            Event::WakeArrive { cpu, task } => self.wake_arrive(cpu, task),
            Event::Resched { cpu } => self.resched_local(cpu),
            Event::Timer { task, gen } => self.timer_fired(task, gen),
            Event::NohzKick { cpu } => self.nohz_kick(cpu),
            Event::RtPeriod => self.rt_period(),
        }
    }

    /// Counts what a placement decided: the wake_affine / select_idle_sibling
    /// branch and the domain level a migration crossed.
    fn count_placement(&mut self, placed: &crate::sched::wakeup::Placement, prev: usize) {
        for &c in placed.path.iter().flatten() {
            self.counters.count(c);
        }
        if placed.cpu != prev {
            let level = self
                .domains
                .lowest_spanning(prev, placed.cpu)
                .map_or("none", |d| d.level);
            let cause = if placed.fork {
                Cause::Fork
            } else {
                Cause::Wakeup
            };
            self.counters.count(Counter::Migration { cause, level });
        }
    }

    fn trace_event(&mut self, ev: TraceEvent) {
        self.trace.record(self.now, ev);
    }

    /// Traces `task` moving from CPU `from` to `to`, and why.
    fn trace_migrate(
        &mut self,
        task: usize,
        from: usize,
        to: usize,
        reason: crate::counters::Reason,
    ) {
        self.trace_event(TraceEvent::Migrate {
            t: self.now,
            task,
            from,
            to,
            reason,
        });
    }

    pub(crate) fn allowed(&self, task: usize) -> &CpuSet {
        &self.affinity[task]
    }
}

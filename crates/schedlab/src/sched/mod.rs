//! The scheduler: CFS run queues ([`cfs`]), load tracking ([`load`]),
//! wakeup placement ([`wakeup`]) and load balancing ([`balance`], with the
//! group statistics of [`groups`]), each era by its own functions.
//!
//! API boundary: the scheduler sees the machine's state only through
//! [`SchedEnv`], which the engine implements (and tests implement on
//! hand-built states, `sched::testenv`). It never sees the event queue,
//! where time comes from, or the cost model; it asks the environment to
//! move a queued task or to push a running one, and the engine carries
//! that out. The engine, in turn, never decides placement or balancing.
//! Static dispatch only: every function is generic over the environment.

pub mod balance;
mod balance_legacy;
mod balance_typed;
pub mod cfs;
pub(crate) mod groups;
pub mod load;
pub mod nohz;
pub(crate) mod util;
pub mod wakeup;

#[cfg(test)]
pub(crate) mod testenv;

use crate::counters::{Counter, Reason};
use crate::cpuset::CpuSet;
use crate::domains::Domains;
use crate::policy::{BalanceLoad, KernelPolicy};
use crate::topology::Topology;
use cfs::{CfsRq, Entity};
use load::CpuLoad;

/// What the scheduler keeps per task beyond its run-queue entity: the
/// wakee statistics of wake_wide, 2.6.2x's avg_overlap, 6.5's recent_used_cpu.
#[derive(Debug, Clone, Default)]
pub struct TaskSched {
    /// The task this one last woke, and how often that changed (wake_wide).
    pub last_wakee: Option<usize>,
    pub wakee_flips: u64,
    pub wakee_flip_decay_ns: u64,
    /// 2.6.2x: how long the task runs on after waking another before it
    /// sleeps (a 1/8-weight average), and its runtime when it last woke one.
    pub avg_overlap_ns: u64,
    pub last_wakeup_exec: Option<u64>,
    /// 6.5: the CPU the task ran on before its previous one.
    pub recent_used_cpu: usize,
}

/// Per CPU and domain level: when it last balanced, its current interval,
/// how many balances in a row failed to move anything, and what a new-idle
/// balance here costs at most (sd->max_newidle_lb_cost, decayed).
#[derive(Debug, Clone, Copy)]
pub struct LbState {
    pub last_balance_ns: u64,
    pub interval_ms: u64,
    pub nr_balance_failed: u32,
    pub max_newidle_lb_cost_ns: u64,
    /// When max_newidle_lb_cost last decayed (or was raised, in 6.5).
    pub last_decay_ns: u64,
}

/// The scheduler's own machine-wide state.
#[derive(Debug, Clone)]
pub struct SchedState {
    /// Load-balancing state per CPU and domain level.
    pub lb: Vec<Vec<LbState>>,
    /// Per LLC: some core has all its threads idle (set on idle, cleared by scans).
    pub llc_has_idle_cores: Vec<bool>,
    /// Per LLC: the moving average of select_idle_cpu's scan time (SIS_PROP).
    pub llc_avg_scan_cost_ns: Vec<u64>,
    /// Per LLC: SIS_UTIL's scan budget (sd_llc_shared->nr_idle_scan),
    /// written by periodic balancing at the LLC level. It starts at the
    /// LLC's size, an idle LLC's value: the kernel's zeroed field would
    /// skip every scan until that first balance, which a running system
    /// did long ago.
    pub llc_nr_idle_scan: Vec<u64>,
    /// The root domain's overload flag (rd->overload): set when a queue
    /// reaches two tasks, rewritten by balancing at the top level.
    pub overload: bool,
    /// Per CPU: rq->max_idle_balance_cost, which caps avg_idle at twice it.
    pub max_idle_balance_cost_ns: Vec<u64>,
    /// Who balances for the tickless idle CPUs, and which they are.
    pub nohz: nohz::NohzState,
    /// The groups whose sgc->imbalance is set (affinity left a lower
    /// level's balance short), by level name and first CPU.
    pub group_imbalance: std::collections::BTreeSet<(&'static str, usize)>,
    /// Per CPU: rq->wake_avg_idle (v6.5 SIS_PROP) and the jiffy it was
    /// last aged to (wake_stamp).
    pub wake_avg_idle_ns: Vec<u64>,
    pub wake_stamp_jiffies: Vec<u64>,
}

impl SchedState {
    /// Balance intervals at each level's initial value, no idle cores
    /// known, not overloaded; max_idle_balance_cost starts at migration_cost.
    pub fn new(topo: &Topology, domains: &Domains, policy: &KernelPolicy, now: u64) -> SchedState {
        let nllc = topo.cpus.iter().map(|c| c.llc + 1).max().unwrap_or(1);
        let mut s = SchedState {
            lb: Vec::new(),
            llc_has_idle_cores: vec![false; nllc],
            llc_avg_scan_cost_ns: vec![0; nllc],
            llc_nr_idle_scan: (0..nllc)
                .map(|l| topo.cpus.iter().filter(|c| c.llc == l).count() as u64)
                .collect(),
            overload: false,
            max_idle_balance_cost_ns: vec![policy.tunables.migration_cost_ns; topo.ncpus()],
            nohz: nohz::NohzState::new(topo),
            group_imbalance: Default::default(),
            // sched_init: wake_avg_idle = avg_idle = 2 x migration_cost.
            wake_avg_idle_ns: vec![2 * policy.tunables.migration_cost_ns; topo.ncpus()],
            wake_stamp_jiffies: vec![now / policy.tunables.tick_ns(); topo.ncpus()],
        };
        s.reset_balance(topo, domains, now);
        s
    }

    /// Balance intervals start again at each level's initial value (the
    /// domains were rebuilt).
    pub fn reset_balance(&mut self, topo: &Topology, domains: &Domains, now: u64) {
        self.lb = (0..topo.ncpus())
            .map(|c| {
                domains
                    .of(c)
                    .map(|d| LbState {
                        last_balance_ns: now,
                        interval_ms: d.params.initial_interval_ms.max(1) as u64,
                        nr_balance_failed: 0,
                        max_newidle_lb_cost_ns: 0,
                        last_decay_ns: now,
                    })
                    .collect()
            })
            .collect();
    }
}

/// An idle CPU's C-state as the scheduler sees it (idle_get_state()).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdleState {
    pub exit_latency_ns: u64,
    /// When the CPU last went idle.
    pub since_ns: u64,
}

/// ttwu_do_activate (v6.5 kernel/sched/core.c): a CPU woken from idle
/// restarts its wakeup idle estimate at half its avg_idle, stamped now.
pub fn note_idle_wakeup(
    state: &mut SchedState,
    policy: &KernelPolicy,
    cpu: usize,
    avg_idle: u64,
    now: u64,
) {
    state.wake_avg_idle_ns[cpu] = avg_idle / 2;
    state.wake_stamp_jiffies[cpu] = now / policy.tunables.tick_ns();
}

/// WAKEUP_OVERLAP (v2.6.27, v2.6.28 check_preempt_wakeup): whether a
/// wakeup preempts the running task at once because the two hand work
/// back and forth: both avg_overlaps below migration_cost and the wakeup
/// sync (2.6.27), or either (2.6.28). `sync` as try_to_wake_up left it
/// (SYNC_WAKEUPS off clears it).
pub fn wakeup_overlap_preempts(
    policy: &KernelPolicy,
    sync: bool,
    curr: &TaskSched,
    woken: &TaskSched,
) -> bool {
    let f = &policy.features;
    if !f.has(crate::policy::Feature::WakeupOverlap) {
        return false;
    }
    let sync = sync && f.has(crate::policy::Feature::SyncWakeups);
    let limit = policy.tunables.migration_cost_ns;
    let short = curr.avg_overlap_ns < limit && woken.avg_overlap_ns < limit;
    if policy.era.rules().overlap_preempt_needs_sync {
        sync && short
    } else {
        sync || short
    }
}

/// sg_imbalanced (v4.15, v6.5): group `g` of a domain at level `level`
/// has its sgc->imbalance flag set.
pub(crate) fn sg_imbalanced(env: &impl SchedEnv, level: &'static str, g: &CpuSet) -> bool {
    env.policy().era.rules().affinity_group_imbalance
        && g.first()
            .is_some_and(|f| env.state().group_imbalance.contains(&(level, f)))
}

/// add_nr_running(): a queue that now runs two or more tasks marks the
/// root domain overloaded.
pub fn note_nr_running(state: &mut SchedState, nr_running: usize) {
    if nr_running >= 2 {
        state.overload = true;
    }
}

/// ttwu_do_wakeup()'s avg_idle update for a CPU that was idle `period` ns:
/// the 1/8 average, capped at twice max_idle_balance_cost where the era
/// keeps that cost (4.15+).
pub fn update_avg_idle(
    policy: &KernelPolicy,
    state: &SchedState,
    cpu: usize,
    avg_idle: &mut u64,
    period: u64,
) {
    load::update_avg(avg_idle, period);
    if policy.era.rules().newidle_gate.gated() {
        *avg_idle = (*avg_idle).min(2 * state.max_idle_balance_cost_ns[cpu]);
    }
}

/// The narrow interface through which the scheduler reads and changes the
/// machine. Reads are of the scheduler's own data (run queues, entities,
/// load history, its state) and of the model (policy, domains, topology);
/// the only actions are counting and the two migrations only the engine
/// can carry out.
pub trait SchedEnv {
    /// Simulated time, ns.
    fn now(&self) -> u64;
    fn policy(&self) -> &KernelPolicy;
    fn domains(&self) -> &Domains;
    fn topology(&self) -> &Topology;
    fn rq(&self, cpu: usize) -> &CfsRq;
    /// The cpu_load[] history of `cpu`.
    fn cpu_load(&self, cpu: usize) -> &CpuLoad;
    /// The kernel's avg_idle of `cpu`: a moving average of its idle periods.
    fn avg_idle_ns(&self, cpu: usize) -> u64;
    /// idle_cpu() of 4.15+: nothing running, queued or on its way.
    fn cpu_idle(&self, cpu: usize) -> bool;
    /// The CPUs for which `cpu_idle` holds.
    fn idle_cpus(&self) -> CpuSet {
        (0..self.topology().ncpus())
            .filter(|&c| self.cpu_idle(c))
            .collect()
    }
    /// idle_cpu() of 2.6.2x: the idle task is current (tasks may be queued).
    fn cpu_curr_idle(&self, cpu: usize) -> bool;
    /// The C-state `cpu` is in (or was last in) and since when.
    fn idle_state(&self, cpu: usize) -> IdleState;
    fn entity(&self, task: usize) -> &Entity;
    /// The CPU whose queue `task` is on, or that it last ran on.
    fn task_cpu(&self, task: usize) -> usize;
    fn allowed(&self, task: usize) -> &CpuSet;
    fn task(&self, task: usize) -> &TaskSched;
    fn task_mut(&mut self, task: usize) -> &mut TaskSched;
    fn state(&self) -> &SchedState;
    fn state_mut(&mut self) -> &mut SchedState;
    /// How long checking `cpus` CPUs' idle state takes the waker, ns.
    fn scan_ns(&self, cpus: u64) -> u64;
    /// How long a load_balance that did `work` takes the balancing CPU, ns.
    fn balance_ns(&self, work: &balance::LbWork) -> u64;
    fn count(&mut self, counter: Counter);
    /// cpu_load_update_idle (4.15): a tickless idle CPU's cpu_load[] takes
    /// the ticks it missed, with no load, before it is balanced.
    fn decay_idle_load(&mut self, cpu: usize);
    /// Moves queued (not running) `task` from `from`'s queue to `to`'s.
    fn migrate_queued(&mut self, task: usize, from: usize, to: usize, why: Reason);
    /// Moves `task`, on `cpu`'s queue, to the head of its task list
    /// (detach_tasks' list_move of a task it skips, v4.15+).
    fn list_move_head(&mut self, cpu: usize, task: usize);
    /// The stopper on `from` pushes its running task to `to`; whether one moved.
    fn active_balance(&mut self, from: usize, to: usize) -> bool;
}

/// The load the cpu_load[] history samples and the balancer weighs: the
/// queue's weight in 2.6.2x, its tasks' runnable PELT load later.
#[inline]
pub fn instant_load(env: &impl SchedEnv, cpu: usize) -> u64 {
    let rq = env.rq(cpu);
    if env.policy().era.rules().balance_load == BalanceLoad::Weight {
        rq.load_weight
    } else {
        rq.curr
            .into_iter()
            .chain(rq.queued())
            .map(|t| env.entity(t).pelt.load_avg)
            .sum()
    }
}

/// task_hot()'s clock test: the task ran within migration_cost, so its
/// cache is likely still warm where it ran.
pub fn ran_recently(env: &impl SchedEnv, task: usize) -> bool {
    env.now().saturating_sub(env.entity(task).exec_start_ns)
        < env.policy().tunables.migration_cost_ns
}

/// Whether two CPUs share a last-level cache.
pub fn shares_cache(env: &impl SchedEnv, a: usize, b: usize) -> bool {
    let cpus = &env.topology().cpus;
    cpus[a].llc == cpus[b].llc
}

//! The scheduler's own data beside the run queues: per task (wake_wide's
//! wakee statistics, avg_overlap), per CPU and domain level (balance
//! intervals and failures), per LLC (idle cores, scan budgets), NOHZ; and
//! the updates the engine makes to it at wakeup and enqueue.

use crate::cpuset::CpuSet;
use crate::domains::Domains;
use crate::policy::KernelPolicy;
use crate::sched::load;
use crate::topology::Topology;

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
    /// SCHED_FIFO or SCHED_RR: its RT priority; None for SCHED_OTHER.
    pub rt: Option<crate::sched::rt_rq::RtParams>,
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
    pub nohz: NohzState,
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
            nohz: NohzState::new(topo),
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

/// The machine-wide NOHZ state (struct nohz and the per-CPU bits it reads).
#[derive(Debug, Clone)]
pub struct NohzState {
    /// nohz.cpu_mask (2.6.28) / nohz.idle_cpus_mask (4.15+).
    pub idle_cpus: CpuSet,
    /// 2.6.28 nohz.load_balancer.
    pub owner: Option<usize>,
    /// 2.6.28 rq->in_nohz_recently.
    pub in_nohz_recently: CpuSet,
    /// 4.15+: CPUs whose LLC domain is marked nohz_idle (set_cpu_sd_state_idle).
    pub sd_nohz_idle: CpuSet,
    /// 4.15+: sd_llc_shared->nr_busy_cpus per LLC (starts at the LLC's size).
    pub llc_nr_busy: Vec<u32>,
    /// 4.15+: nohz.next_balance.
    pub next_balance_ns: u64,
    /// 4.15+: CPUs with NOHZ_BALANCE_KICK set and the kick on its way.
    pub kicked: CpuSet,
}

impl NohzState {
    pub fn new(topo: &Topology) -> NohzState {
        let nllc = topo.cpus.iter().map(|c| c.llc + 1).max().unwrap_or(1);
        let mut llc_nr_busy = vec![0; nllc];
        for c in &topo.cpus {
            llc_nr_busy[c.llc] += 1;
        }
        NohzState {
            idle_cpus: CpuSet::new(),
            owner: None,
            in_nohz_recently: CpuSet::new(),
            sd_nohz_idle: CpuSet::new(),
            llc_nr_busy,
            next_balance_ns: 0,
            kicked: CpuSet::new(),
        }
    }
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

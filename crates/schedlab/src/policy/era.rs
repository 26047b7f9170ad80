//! Kernel eras: which kernel's code paths, domain templates and defaults.

use crate::error::Concern;
use crate::error::Error;
use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Era {
    /// Linux 2.6.27: before the re-tune commit.
    V2_6_27,
    /// Linux 2.6.28: after "sched: re-tune balancing".
    V2_6_28,
    /// Linux 4.15: wake_affine_idle / wake_affine_weight (the WA_WEIGHT commit).
    V4_15,
    /// Linux 6.5: the last CFS before EEVDF.
    V6_5,
    /// Linux 6.12: EEVDF with lag placement and delayed dequeue (a
    /// long-term kernel, the default for new experiments).
    V6_12,
}

impl Era {
    pub const ALL: [Era; 5] = [
        Era::V2_6_27,
        Era::V2_6_28,
        Era::V4_15,
        Era::V6_5,
        Era::V6_12,
    ];

    /// The era new experiments start from: the kernel people run today.
    pub const CURRENT: Era = Era::V6_12;

    pub fn name(self) -> &'static str {
        match self {
            Era::V2_6_27 => "2.6.27",
            Era::V2_6_28 => "2.6.28",
            Era::V4_15 => "4.15",
            Era::V6_5 => "6.5",
            Era::V6_12 => "6.12",
        }
    }

    /// What this era's kernel does differently: the one table every
    /// era-dependent branch reads.
    pub fn rules(self) -> &'static EraRules {
        match self {
            Era::V2_6_27 => &V2_6_27,
            Era::V2_6_28 => &V2_6_28,
            Era::V4_15 => &V4_15,
            Era::V6_5 => &V6_5,
            Era::V6_12 => &V6_12,
        }
    }

    /// The 2.6.2x code paths (cpu_load[] indexes, SD_WAKE_IDLE / SD_WAKE_BALANCE,
    /// the SIBLING/MC/CPU/NODE/ALLNODES levels and their templates).
    pub fn is_legacy(self) -> bool {
        self.rules().generation == Generation::Legacy
    }

    /// The names of the domain levels this era can build, bottom-up. Several
    /// NUMA levels are numbered: NUMA, NUMA2, NUMA3 (the kernel calls them all NUMA).
    pub fn level_names(self) -> &'static [&'static str] {
        self.rules().level_names
    }
}

/// The code base an era belongs to: 2.6.2x's kernel/sched.c and
/// sched_fair.c, or the kernel/sched/fair.c and topology.c of 4.x and later.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generation {
    Legacy,
    Modern,
}

/// What wake_affine_idle() decides (4.15+).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WakeAffineIdle {
    /// v4.15: this CPU if it is idle, or for a sync wakeup from a CPU
    /// running only the waker (no cache or prev test).
    ThisIdleOrSync,
    /// v6.5 (since 4.16): this CPU if idle and cache-affine with prev (prev
    /// if it is idle too); this CPU for a sync wakeup from a CPU running
    /// only the waker; then prev if it is idle.
    AlsoIdlePrev,
}

/// The loads wake_affine_weight() compares (4.15+).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WeightLoads {
    /// v4.15: target_load / source_load on the domain's wake_idx history.
    CpuLoadHistory,
    /// v6.5: the queues' PELT load.
    QueuePelt,
}

/// How wake_affine_weight() breaks a tie.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WeightTie {
    /// v4.15: `this_eff_load <= prev_eff_load` picks this CPU.
    ThisCpu,
    /// v6.5: strictly less, but a sync wakeup adds one to prev's side.
    PrevUnlessSync,
}

/// Which select_idle_sibling() an era runs (4.15+).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdleSibling {
    /// v4.15: target, prev, idle core, SIS_PROP scan, SMT sibling of target.
    V4_15,
    /// v6.5: also recent_used_cpu and prev's SMT sibling; SIS_UTIL.
    V6_5,
}

/// How sched groups are compared by find_idlest_group() and
/// find_busiest_group().
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupCompare {
    /// By average load on a cpu_load[] index (2.6.2x).
    ByLoad,
    /// By group type (other < overloaded, by capacity against
    /// utilisation), then average load on a cpu_load[] index (4.15);
    /// find_idlest_group compares by load as 2.6.2x does.
    TypedByLoad,
    /// By group type (has_spare < fully_busy < overloaded), then load (5.5+).
    Classified,
}

/// Which tasks detach_tasks passes over as too big for what is left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DetachSkip {
    /// balance_tasks (v2.6.28) and detach_tasks (v4.15): a task whose half
    /// load exceeds what is left to move.
    HalfLoad,
    /// detach_tasks (v6.5): a task whose load, shifted right by the
    /// domain's nr_balance_failed (shr_bound), exceeds what is left; a
    /// task whose utilisation does, for a util imbalance.
    RelaxedLoad,
    /// detach_tasks (v6.12; util relaxed the same way since v6.8).
    RelaxedLoadAndUtil,
}

/// What the balancer weighs a run queue and a task by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BalanceLoad {
    /// 2.6.2x: the queue's weight (weighted_cpuload) and the task's weight.
    Weight,
    /// 4.15: the runnable tasks' PELT load for the queue (weighted_cpuload)
    /// and the task's PELT load (task_h_load). 2.6.2x and 4.15 skip a task
    /// whose half load exceeds what is left to move.
    RunnablePelt,
    /// 6.5: the queue's and the task's PELT load.
    Pelt,
}

/// When a CPU about to idle skips new-idle balancing, and when it stops
/// walking up the domains.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NewidleGate {
    /// 2.6.2x idle_balance(): every level with SD_BALANCE_NEWIDLE, always.
    Ungated,
    /// v4.15 idle_balance(): skip while avg_idle < migration_cost or the
    /// root domain is not overloaded; stop at the level where avg_idle <
    /// the cost so far + that level's max_newidle_lb_cost (which only grows
    /// there, and decays by 253/256 a second in rebalance_domains).
    MigrationCostOrOverload,
    /// v6.5 newidle_balance(): skip while the root domain is not overloaded
    /// or avg_idle < the lowest level's max_newidle_lb_cost; the same
    /// per-level stop; update_newidle_cost() also decays it there.
    NewidleCostOrOverload,
}

impl NewidleGate {
    /// Whether new-idle balancing is gated by cost and overload at all.
    pub fn gated(self) -> bool {
        self != NewidleGate::Ungated
    }
}

/// When CACHE_HOT_BUDDY makes a buddy cache-hot in task_hot().
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheHotBuddy {
    /// v2.6.27: the next buddy.
    Next,
    /// v2.6.28: the next or the last buddy.
    NextOrLast,
    /// v4.15, v6.5: the next or last buddy, when the destination queue has
    /// a task of its own.
    NextOrLastToBusy,
    /// v6.12: the next buddy, when the destination queue has a task of its
    /// own (LAST_BUDDY went with EEVDF).
    NextToBusy,
}

/// Who balances for idle CPUs whose tick is stopped (CONFIG_NO_HZ).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NohzBalancer {
    /// v2.6.28 select_nohz_load_balancer / trigger_load_balance /
    /// run_rebalance_domains: the first CPU to stop its tick while no CPU
    /// owns idle balancing keeps its tick and balances, on each of its idle
    /// ticks, for every tickless CPU; it gives the job up when it gets busy
    /// (its next busy tick nominates the first tickless CPU) or when every
    /// CPU is tickless. A tickless CPU's cpu_load[] is not updated (only
    /// scheduler_tick updates it).
    Owner,
    /// v4.15 nohz_kick_needed / nohz_balancer_kick / nohz_idle_balance (and
    /// v6.5's kick_ilb / _nohz_idle_balance): every idle CPU may stop its
    /// tick; a busy CPU's tick, once nohz.next_balance is due, kicks the
    /// first idle tickless CPU when it runs two tasks or two CPUs of its LLC
    /// are busy, and the kicked CPU balances every due tickless idle CPU,
    /// then itself. A tickless CPU's cpu_load[] decays the ticks it missed
    /// (cpu_load_update_idle / _nohz_stop). A kick sets nohz.next_balance
    /// one jiffy after its old value (nohz.next_balance++).
    Kick,
    /// v6.5 kick_ilb / _nohz_idle_balance: as `Kick`, but a kick sets
    /// nohz.next_balance a jiffy from now, and the kicked CPU walks the mask
    /// from the CPU after itself round to itself (for_each_cpu_wrap).
    KickFromNext,
}

/// Which reads of a pipe wake the writers blocked on it (fs/pipe.c).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PipeWriterWake {
    /// Before v5.5: pipe_read wakes every waiter (one shared, non-exclusive
    /// wait queue) when the read emptied and released a page.
    PageFreed,
    /// v5.5+: pipe_read wakes one writer (they wait exclusively on
    /// wr_wait) when the read began with every slot in use; a writer that
    /// slept and leaves a slot free wakes the next (wake_next_writer).
    ReadOfFullPipe,
}

/// UTIL_EST: how a task's utilisation at sleep is kept (`sched::load::UtilEst`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UtilEstRule {
    /// Before v4.17: utilisation is util_avg alone.
    Absent,
    /// v4.17 to v6.6: the last sample (util_est.enqueued) beside the
    /// average; UTIL_EST_FASTUP (v5.5+) takes increases at once.
    LastAndEwma,
    /// v6.7+: the average alone; increases are always taken at once, and a
    /// task that waited for the CPU (runnable above util) gives no sample.
    Ewma,
}

/// When an idle CPU stops its tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TickStop {
    /// v2.6.28 and v4.15 tick_nohz_idle_enter: on every idle entry (nothing
    /// else is pending in the next jiffy in these workloads).
    EveryIdle,
    /// v4.17+ (v6.5 menu_select's stop_tick): only when the governor
    /// predicts an idle period of at least a tick.
    PredictedTick,
}

/// When a failing load_balance kicks the busiest CPU's stopper to push its
/// running task (once nr_balance_failed > cache_nice_tries + 2), and what
/// the failure count becomes after a push.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActiveBalance {
    /// v2.6.28 load_balance: periodic balancing only; then
    /// cache_nice_tries + 1.
    PeriodicOnly,
    /// v4.15 need_active_balance: new-idle balancing too (its failures are
    /// not counted, the periodic ones are); then cache_nice_tries + 1.
    AnyIdleType,
    /// v6.5 imbalanced_active_balance: only when tasks are being migrated
    /// by count (migrate_task), new-idle too; a push resets the count to 0
    /// (active_load_balance_cpu_stop).
    TaskMigrationOnly,
}

/// How the fork / exec / BALANCE_WAKE slow path picks the idlest group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdlestGroup {
    /// v2.6.28 find_idlest_group: the lowest average load (source_load
    /// locally, target_load elsewhere, forkexec_idx); stay local unless
    /// 100 x local >= (100 + (pct - 100) / 2) x idlest.
    ByLoad,
    /// v4.15 find_idlest_group: runnable load compared with an absolute
    /// margin 1024 x (pct - 100) / 100, blocked-inclusive load
    /// (cfs_rq_load_avg) breaking near-ties by imbalance_scale, and for
    /// exec and wake a spare-capacity path first.
    RunnableThenBlocked,
    /// v6.5 find_idlest_group: group types first, then idle CPUs and
    /// utilisation or average load.
    Classified,
}

/// Which end of the run queue's task list load balancing detaches from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DetachOrder {
    /// v2.6.27 / v2.6.28 balance_tasks with load_balance_start_fair: from
    /// the head of cfs_rq->tasks, where account_entity_enqueue adds each
    /// enqueued task; nothing else reorders the list, so the most recently
    /// enqueued task (the running one included) is examined first.
    NewestEnqueuedFirst,
    /// v4.15 / v6.5 / v6.12 detach_tasks: from the tail of rq->cfs_tasks.
    /// An enqueue adds a task at the head and pick_next_task_fair moves
    /// each pick there (most recently used first), so the least recently
    /// picked task is examined first; a task detach_tasks skips is moved
    /// to the head too.
    LeastRecentlyUsedFirst,
}

/// The buddies set when a woken task is checked against the running one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WakeupBuddies {
    /// 2.6.28: the woken task is always the next buddy, the running one the
    /// last buddy (LAST_BUDDY).
    Always,
    /// 4.15+: next buddy only under NEXT_BUDDY; last buddy under LAST_BUDDY
    /// when the wakeup preempts and the queue has nr_latency tasks.
    ByFeature,
}

/// How a run queue picks its next task and decides preemption.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Picker {
    /// CFS (to 6.5): the leftmost vruntime, buddies within the wakeup
    /// granularity (pick_next_entity, wakeup_preempt_entity), slices from
    /// the latency period (check_preempt_tick), sleeper credit on wakeup.
    Cfs,
    /// EEVDF (v6.12): the eligible entity with the earliest virtual
    /// deadline (pick_eevdf), lag-preserving placement (place_entity),
    /// RUN_TO_PARITY, PREEMPT_SHORT and DELAY_DEQUEUE; slices from
    /// sysctl_sched_base_slice.
    Eevdf,
}

/// Every behaviour that differs between eras, with the kernel function it
/// follows. Defaults of features, tunables and flag names live in their own
/// per-era tables (`features.rs`, `tunables.rs`, `flags.rs`), the domain
/// templates in `domains.rs`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EraRules {
    pub generation: Generation,
    pub level_names: &'static [&'static str],
    /// 2.6.28 (the re-tune commit): WAKE_AFFINE on NODE, NEWIDLE off MC/CPU,
    /// WAKE_BALANCE on the SMP levels. Read by the legacy domain templates.
    pub retuned_templates: bool,
    /// Balancing runs only at levels with SD_LOAD_BALANCE (removed in 5.x).
    pub needs_load_balance_flag: bool,
    /// select_task_rq_fair's domain walk stops at a level without
    /// SD_LOAD_BALANCE (v4.15).
    pub wake_walk_needs_load_balance: bool,
    pub wake_affine_idle: WakeAffineIdle,
    pub weight_loads: WeightLoads,
    pub weight_tie: WeightTie,
    pub idle_sibling: IdleSibling,
    pub group_compare: GroupCompare,
    pub balance_load: BalanceLoad,
    /// Which tasks detach_tasks passes over as too big for the imbalance.
    pub detach_skip: DetachSkip,
    /// The cpu_load[] history and the domains' *_idx parameters exist
    /// (removed in 5.0).
    pub load_indexes: bool,
    /// sd_init()'s busy_factor and imbalance_pct (4.15+; 2.6.2x's templates
    /// give each level its own).
    pub sd_busy_factor: u32,
    pub sd_imbalance_pct: u32,
    pub newidle_gate: NewidleGate,
    /// What the era calls its balancing functions (decision records name
    /// them so).
    pub fn_names: &'static FnNames,
    /// detach_tasks() stops after one task in a new-idle balance: under
    /// CONFIG_PREEMPT in 4.15, CONFIG_PREEMPTION in 6.5. The eras model the
    /// distributions' kernels: 2.6.2x has no such stop, Ubuntu 18.04's 4.15
    /// is PREEMPT_VOLUNTARY (pulls up to the imbalance), and 6.5 with
    /// PREEMPT_DYNAMIC has CONFIG_PREEMPTION (pulls one).
    pub newidle_pulls_one: bool,
    /// task_hot(): a task is never cache-hot for a move between SMT
    /// siblings (SD_SHARE_CPUCAPACITY; v6.5, not 4.15 or 2.6.2x).
    pub smt_never_hot: bool,
    pub cache_hot_buddy: CacheHotBuddy,
    pub detach_order: DetachOrder,
    /// load_balance (v3.13+; v4.15, v6.5, v6.12): a balance that leaves
    /// imbalance because some tasks were pinned by affinity marks the
    /// parent domain's local group imbalanced (sgc->imbalance); a group so
    /// marked is group_imbalanced and forces a balance, until a balance
    /// at the lower level finds nothing to do. 2.6.2x has no such flag.
    pub affinity_group_imbalance: bool,
    /// select_idle_cpu's SIS_PROP estimate of the waker's idle time:
    /// rq->wake_avg_idle (v5.13+, v6.5), half of avg_idle when the CPU
    /// was last woken from idle, halved for each jiffy since and reduced
    /// by each scan's time, against the scan cost as it is; v4.15 uses
    /// avg_idle / 512.
    pub sis_prop_wake_avg_idle: bool,
    /// check_preempt_wakeup under WAKEUP_OVERLAP: v2.6.27 (on by default)
    /// preempts for a sync wakeup when both tasks' avg_overlap are below
    /// migration_cost; v2.6.28 (off by default) for a sync wakeup or when
    /// both are below it.
    pub overlap_preempt_needs_sync: bool,
    pub idlest_group: IdlestGroup,
    /// place_entity(): a waking sleeper is credited latency (2.6.2x) or half
    /// of it (GENTLE_FAIR_SLEEPERS, later).
    pub full_sleeper_credit: bool,
    /// check_preempt_tick(): a task past min_granularity is also preempted
    /// when the leftmost is more than a slice behind (2.6.3x+).
    pub tick_preempts_by_vruntime: bool,
    /// sched_slice floors a task's slice at sched_min_granularity
    /// (BASE_SLICE, on by default) and check_preempt_tick caps it at
    /// sched_latency ("when many tasks blow up the sched_period"): both in
    /// v6.5's fair.c, neither in v4.15's.
    pub slice_bounds: bool,
    /// Where a forked task's vruntime starts (CFS eras; EEVDF places it by
    /// lag 0 on its own queue).
    pub fork_vruntime: ForkVruntime,
    /// sysctl_sched_child_runs_first's default: 1 before 2.6.32 ("sched:
    /// Turn off child_runs_first"), 0 after.
    pub child_runs_first: bool,
    /// A migrated task's exec_start is cleared, so task_hot() sees it cold
    /// until it runs (v4.15 migrate_task_rq_fair; v6.3+ enqueue_entity on
    /// ENQUEUE_MIGRATED). v2.6.2x's set_task_cpu leaves it.
    pub migration_makes_cold: bool,
    /// A task that migrates at wakeup leaves its load on the old queue
    /// until that queue's next update_cfs_rq_load_avg
    /// (remove_entity_load_avg in v4.15's and v6.x's migrate_task_rq_fair;
    /// both detach a task the balancer moves at once). v2.6.2x has no
    /// per-task load: its queues weigh what is queued now.
    pub wakeup_migration_removes_late: bool,
    pub wakeup_buddies: WakeupBuddies,
    /// ttwu_queue_cond(): a wakeup is also queued to an idle CPU in the
    /// waker's LLC (v6.5), not only across LLCs.
    pub ttwu_queue_to_idle: bool,
    /// tcp_recvmsg() installs a blocked reader as the prequeue's task, and
    /// tcp_prequeue() wakes it with a plain (not sync) wake_up_interruptible
    /// from the sender's softirq (2.6.2x, net/ipv4/tcp.c, include/net/tcp.h).
    /// The prequeue is gone in 4.14: later TCP readers are woken through
    /// sock_def_readable, sync, like pipes, unix sockets and UDP.
    pub tcp_prequeue: bool,
    /// The sysctl scaling of latency tunables: 1 + ilog2(ncpus) (2.6.2x, no
    /// cap) or 1 + ilog2(min(ncpus, 8)) (SCHED_TUNABLESCALING_LOG, later).
    pub tunables_scale_capped: bool,
    /// v2.6.27 wake_affine(): a sync wakeup subtracts the waker's weight
    /// whatever the two tasks' avg_overlap (the overlap test only gates an
    /// early return that `balanced` takes anyway); 2.6.28 drops the sync
    /// hint when either overlap exceeds migration_cost.
    pub affine_sync_ignores_overlap: bool,
    /// v2.6.27 select_task_rq_fair(): no early exit when prev is the
    /// waker's CPU, so wake_affine may return this CPU without wake_idle.
    pub affine_when_prev_is_this: bool,
    /// v2.6.27 pick_next(): the next buddy runs while the pair it forms has
    /// run less than its sched_slice since the pair started; no last buddy.
    /// Later eras pick a buddy within the wakeup granularity of the leftmost.
    pub pair_slice_pick: bool,
    pub picker: Picker,
    /// should_we_balance() (v6.6+): above the SMT level the group balances
    /// from its first idle CPU on an idle core, else from its first idle
    /// thread of a busy core, else from its first CPU.
    pub balance_from_idle_core: bool,
    pub active_balance: ActiveBalance,
    /// find_busiest_group (v6.6+): a core running several tasks is a
    /// group_smt_balance group for an idle CPU (one task moves), and
    /// prefer-sibling evens running tasks per core (sibling_imbalance, 0
    /// for a busy CPU) instead of counting them.
    pub smt_balance: bool,
    pub nohz_balancer: NohzBalancer,
    pub tick_stop: TickStop,
    pub util_est: UtilEstRule,
    pub pipe_writer_wake: PipeWriterWake,
    pub yield_task: YieldTask,
    /// 2.6.2x: an RT queue out of runtime always borrows from the other
    /// CPUs' (balance_runtime, before RT_RUNTIME_SHARE made it a feature).
    pub rt_runtime_share_always: bool,
    /// set_cpus_allowed_ptr sends a task off a CPU its new set excludes to
    /// the next CPU of the set after the last one sent to from this CPU
    /// (cpumask_any_and_distribute, v5.7+), not the set's first.
    pub affinity_distribute: bool,
}

/// A forked task's first vruntime, no earlier than its queue's
/// min_vruntime plus a START_DEBIT slice (place_entity, initial).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForkVruntime {
    /// v2.6.2x task_new_fair: the parent's vruntime as fork copied it,
    /// placed on the child's own queue.
    Inherited,
    /// v4.15, v6.5 task_fork_fair: the parent's vruntime placed on the
    /// parent's queue, then carried relative to min_vruntime to the child's.
    FromParentQueue,
}

/// What yield_task_fair does to the yielding task before schedule() picks
/// again (nothing at all when it is alone on its queue).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum YieldTask {
    /// v2.6.27 (sched_compat_yield off): update_curr only.
    UpdateCurr,
    /// v2.6.28: also clears the buddies that point at it.
    ClearBuddies,
    /// v4.15, v6.5: and makes it the skip buddy, which pick_next_entity
    /// passes over for the next task when that is within the wakeup
    /// granularity of it.
    SkipBuddy,
    /// v6.12 (EEVDF): and moves its deadline one slice on.
    PushDeadline,
}

const LEGACY_LEVELS: &[&str] = &["SIBLING", "MC", "CPU", "NODE", "ALLNODES"];
const MODERN_LEVELS: &[&str] = &["SMT", "MC", "DIE", "NODE", "NUMA", "NUMA2", "NUMA3"];
/// 6.9 renamed the package level DIE to PKG (kernel/sched/topology.c,
/// arch/x86/kernel/smpboot.c).
const PKG_LEVELS: &[&str] = &["SMT", "MC", "PKG", "NODE", "NUMA", "NUMA2", "NUMA3"];

const V2_6_27: EraRules = EraRules {
    generation: Generation::Legacy,
    level_names: LEGACY_LEVELS,
    retuned_templates: false,
    needs_load_balance_flag: true,
    wake_walk_needs_load_balance: false,
    wake_affine_idle: WakeAffineIdle::ThisIdleOrSync,
    weight_loads: WeightLoads::CpuLoadHistory,
    weight_tie: WeightTie::ThisCpu,
    idle_sibling: IdleSibling::V4_15,
    group_compare: GroupCompare::ByLoad,
    balance_load: BalanceLoad::Weight,
    detach_skip: DetachSkip::HalfLoad,
    load_indexes: true,
    sd_busy_factor: 0,
    sd_imbalance_pct: 0,
    newidle_gate: NewidleGate::Ungated,
    fn_names: &CLASSIC_NAMES,
    newidle_pulls_one: false,
    smt_never_hot: false,
    cache_hot_buddy: CacheHotBuddy::Next,
    detach_order: DetachOrder::NewestEnqueuedFirst,
    affinity_group_imbalance: false,
    sis_prop_wake_avg_idle: false,
    overlap_preempt_needs_sync: true,
    idlest_group: IdlestGroup::ByLoad,
    full_sleeper_credit: true,
    tick_preempts_by_vruntime: false,
    slice_bounds: false,
    fork_vruntime: ForkVruntime::Inherited,
    child_runs_first: true,
    migration_makes_cold: false,
    wakeup_migration_removes_late: false,
    wakeup_buddies: WakeupBuddies::Always,
    ttwu_queue_to_idle: false,
    tcp_prequeue: true,
    tunables_scale_capped: false,
    affine_sync_ignores_overlap: true,
    affine_when_prev_is_this: true,
    pair_slice_pick: true,
    picker: Picker::Cfs,
    balance_from_idle_core: false,
    smt_balance: false,
    active_balance: ActiveBalance::PeriodicOnly,
    nohz_balancer: NohzBalancer::Owner,
    tick_stop: TickStop::EveryIdle,
    util_est: UtilEstRule::Absent,
    pipe_writer_wake: PipeWriterWake::PageFreed,
    yield_task: YieldTask::UpdateCurr,
    affinity_distribute: false,
    rt_runtime_share_always: true,
};

const V2_6_28: EraRules = EraRules {
    retuned_templates: true,
    yield_task: YieldTask::ClearBuddies,
    cache_hot_buddy: CacheHotBuddy::NextOrLast,
    affine_sync_ignores_overlap: false,
    affine_when_prev_is_this: false,
    pair_slice_pick: false,
    overlap_preempt_needs_sync: false,
    ..V2_6_27
};

const V4_15: EraRules = EraRules {
    generation: Generation::Modern,
    level_names: MODERN_LEVELS,
    retuned_templates: false,
    needs_load_balance_flag: true,
    wake_walk_needs_load_balance: true,
    wake_affine_idle: WakeAffineIdle::ThisIdleOrSync,
    weight_loads: WeightLoads::CpuLoadHistory,
    weight_tie: WeightTie::ThisCpu,
    idle_sibling: IdleSibling::V4_15,
    group_compare: GroupCompare::TypedByLoad,
    balance_load: BalanceLoad::RunnablePelt,
    detach_skip: DetachSkip::HalfLoad,
    load_indexes: true,
    sd_busy_factor: 32,
    sd_imbalance_pct: 125,
    newidle_gate: NewidleGate::MigrationCostOrOverload,
    fn_names: &CLASSIC_NAMES,
    newidle_pulls_one: false,
    smt_never_hot: false,
    cache_hot_buddy: CacheHotBuddy::NextOrLastToBusy,
    detach_order: DetachOrder::LeastRecentlyUsedFirst,
    affinity_group_imbalance: true,
    sis_prop_wake_avg_idle: false,
    overlap_preempt_needs_sync: false,
    idlest_group: IdlestGroup::RunnableThenBlocked,
    full_sleeper_credit: false,
    tick_preempts_by_vruntime: true,
    slice_bounds: false,
    fork_vruntime: ForkVruntime::FromParentQueue,
    child_runs_first: false,
    migration_makes_cold: true,
    wakeup_migration_removes_late: true,
    wakeup_buddies: WakeupBuddies::ByFeature,
    ttwu_queue_to_idle: false,
    tcp_prequeue: false,
    tunables_scale_capped: true,
    affine_sync_ignores_overlap: false,
    affine_when_prev_is_this: false,
    pair_slice_pick: false,
    picker: Picker::Cfs,
    balance_from_idle_core: false,
    smt_balance: false,
    active_balance: ActiveBalance::AnyIdleType,
    nohz_balancer: NohzBalancer::Kick,
    tick_stop: TickStop::EveryIdle,
    util_est: UtilEstRule::Absent,
    pipe_writer_wake: PipeWriterWake::PageFreed,
    yield_task: YieldTask::SkipBuddy,
    affinity_distribute: false,
    rt_runtime_share_always: false,
};

const V6_5: EraRules = EraRules {
    affinity_distribute: true,
    needs_load_balance_flag: false,
    wake_walk_needs_load_balance: false,
    wake_affine_idle: WakeAffineIdle::AlsoIdlePrev,
    weight_loads: WeightLoads::QueuePelt,
    weight_tie: WeightTie::PrevUnlessSync,
    idle_sibling: IdleSibling::V6_5,
    group_compare: GroupCompare::Classified,
    balance_load: BalanceLoad::Pelt,
    slice_bounds: true,
    detach_skip: DetachSkip::RelaxedLoad,
    active_balance: ActiveBalance::TaskMigrationOnly,
    load_indexes: false,
    sd_busy_factor: 16,
    sd_imbalance_pct: 117,
    newidle_gate: NewidleGate::NewidleCostOrOverload,
    fn_names: &V6_5_NAMES,
    newidle_pulls_one: true,
    smt_never_hot: true,
    idlest_group: IdlestGroup::Classified,
    sis_prop_wake_avg_idle: true,
    ttwu_queue_to_idle: true,
    tick_stop: TickStop::PredictedTick,
    util_est: UtilEstRule::LastAndEwma,
    nohz_balancer: NohzBalancer::KickFromNext,
    pipe_writer_wake: PipeWriterWake::ReadOfFullPipe,
    ..V4_15
};

/// The names an era's kernel gives its balancing functions.
#[derive(Debug, PartialEq, Eq)]
pub struct FnNames {
    pub newidle: &'static str,
    pub load_balance: &'static str,
    pub find_busiest_group: &'static str,
    pub find_busiest_queue: &'static str,
    pub find_idlest_group: &'static str,
    pub find_idlest_cpu: &'static str,
}

/// 2.6.2x and 4.15.
const CLASSIC_NAMES: FnNames = FnNames {
    newidle: "idle_balance",
    load_balance: "load_balance",
    find_busiest_group: "find_busiest_group",
    find_busiest_queue: "find_busiest_queue",
    find_idlest_group: "find_idlest_group",
    find_idlest_cpu: "find_idlest_cpu",
};

/// 5.x to 6.9: idle_balance became newidle_balance (5.7).
const V6_5_NAMES: FnNames = FnNames {
    newidle: "newidle_balance",
    ..CLASSIC_NAMES
};

/// 6.10 renamed the balancer's functions sched_balance_*.
const V6_10_NAMES: FnNames = FnNames {
    newidle: "sched_balance_newidle",
    load_balance: "sched_balance_rq",
    find_busiest_group: "sched_balance_find_src_group",
    find_busiest_queue: "sched_balance_find_src_rq",
    find_idlest_group: "sched_balance_find_dst_group",
    find_idlest_cpu: "sched_balance_find_dst_cpu",
};

/// v6.12 against v6.5, as read in both trees (docs/kernel-review.md, "6.12"):
/// EEVDF replaces CFS's pick, placement and preemption; task_hot's buddy is
/// the next one only; select_task_rq_fair, wake_affine, select_idle_sibling
/// (without clusters), the new-idle gate and sd_init are the same.
const V6_12: EraRules = EraRules {
    level_names: PKG_LEVELS,
    cache_hot_buddy: CacheHotBuddy::NextToBusy,
    picker: Picker::Eevdf,
    balance_from_idle_core: true,
    smt_balance: true,
    util_est: UtilEstRule::Ewma,
    detach_skip: DetachSkip::RelaxedLoadAndUtil,
    yield_task: YieldTask::PushDeadline,
    fn_names: &V6_10_NAMES,
    ..V6_5
};

impl fmt::Display for Era {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl TryFrom<String> for Era {
    type Error = Error;
    fn try_from(s: String) -> Result<Self, Error> {
        s.parse()
    }
}

impl std::str::FromStr for Era {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        Era::ALL
            .into_iter()
            .find(|e| e.name() == s)
            .ok_or_else(|| Error::unknown(Concern::Policy, "era", s, Era::ALL.map(|e| e.name())))
    }
}

impl From<Era> for String {
    fn from(e: Era) -> String {
        e.name().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_2_6_28_rules_differ_in_the_templates_buddies_and_wake_affine() {
        // The re-tune commit changed SD flags in the x86 templates; 2.6.28
        // also brought the last buddy, which task_hot counts as cache-hot,
        // dropped the pair-slice pick, made wake_affine honour avg_overlap
        // and select_task_rq_fair exit early for prev == this, and changed
        // WAKEUP_OVERLAP's condition (and turned it off).
        let v28 = Era::V2_6_28.rules().clone();
        assert_ne!(&v28, Era::V2_6_27.rules());
        assert_eq!(
            &EraRules {
                retuned_templates: false,
                cache_hot_buddy: CacheHotBuddy::Next,
                affine_sync_ignores_overlap: true,
                affine_when_prev_is_this: true,
                pair_slice_pick: true,
                overlap_preempt_needs_sync: true,
                yield_task: YieldTask::UpdateCurr,
                ..v28
            },
            Era::V2_6_27.rules()
        );
    }

    #[test]
    fn the_6_12_rules_differ_from_6_5_in_the_pick_names_hot_buddy_and_balancing_cpu() {
        // Read in v6.12 against v6.5: sd_init, select_task_rq_fair,
        // select_idle_sibling (no clusters) and the new-idle gate are the
        // same; EEVDF replaced the pick, DIE became PKG, task_hot's buddy
        // is the next one only, should_we_balance prefers an idle core, and
        // find_busiest_group has group_smt_balance and sibling_imbalance;
        // util_est keeps its average alone (6.7); detach_tasks relaxes the
        // util check by balance failures as it does load's (6.8); the
        // balancer's functions are renamed sched_balance_* (6.10).
        let v612 = Era::V6_12.rules().clone();
        assert_eq!(
            &EraRules {
                level_names: MODERN_LEVELS,
                cache_hot_buddy: CacheHotBuddy::NextOrLastToBusy,
                picker: Picker::Cfs,
                balance_from_idle_core: false,
                smt_balance: false,
                util_est: UtilEstRule::LastAndEwma,
                detach_skip: DetachSkip::RelaxedLoad,
                yield_task: YieldTask::SkipBuddy,
                fn_names: &V6_5_NAMES,
                ..v612
            },
            Era::V6_5.rules()
        );
        assert_eq!("6.12".parse::<Era>().unwrap(), Era::V6_12);
        assert_eq!(Era::CURRENT, Era::V6_12);
    }

    #[test]
    fn generations_and_level_names_agree() {
        for era in Era::ALL {
            let r = era.rules();
            assert_eq!(era.is_legacy(), r.level_names.contains(&"SIBLING"), "{era}");
            // Only the legacy templates give each level its own busy_factor.
            assert_eq!(era.is_legacy(), r.sd_busy_factor == 0, "{era}");
        }
    }
}

//! Load balancing: periodic (from the tick, per domain level at its
//! interval), new-idle (a CPU about to idle pulls work), and active (a
//! running task pushed after repeated failures).
//!
//! find_busiest_group differs by era: 2.6.2x compares group loads from the
//! cpu_load[] history (`balance_legacy`); 4.15 types groups by capacity
//! first (`balance_typed`); 6.5 classifies groups and migrates load,
//! utilisation or tasks (here).

pub use crate::counters::IdleType;
use crate::counters::{Cause, Counter, LbOutcome, Level, Reason};
use crate::cpuset::CpuSet;
use crate::domains::Domain;
use crate::policy::{
    ActiveBalance, BalanceLoad, CacheHotBuddy, DetachOrder, Era, GroupCompare, NewidleGate, SdFlag,
};
use crate::sched::groups::{group_stats, GroupStats, GroupType};
use crate::sched::load::SCHED_CAPACITY_SCALE;
use crate::sched::util::{cpu_util, task_util_est};
use crate::sched::wakeup::{adjust_numa_imbalance, imb_numa_nr};
use crate::sched::{instant_load, ran_recently, SchedEnv};
use crate::topology::{CpuDistance, Topology};

/// What to move (6.5's migration types; load for the older eras).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Migrate {
    Load,
    Util,
    Task,
}

/// What one load_balance did, for pricing its time (`SchedEnv::balance_ns`):
/// the domain whose CPUs' run-queue statistics it read and the busiest
/// group it read again (kept as sets, so a balance nobody prices pays no
/// distance lookups), the run-queue lock pair it took and how far away,
/// and the tasks it examined and moved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LbWork {
    /// The balancing CPU.
    pub this: usize,
    pub domain: CpuSet,
    pub group: CpuSet,
    /// The busiest CPU's distance, when its queue was locked.
    pub locked: Option<CpuDistance>,
    pub examined: u32,
    pub moved: u32,
}

impl LbWork {
    /// The CPUs read, by distance from the balancing CPU (`CpuDistance as usize`).
    pub fn visited(&self, topo: &Topology) -> [u32; 5] {
        let mut visited = [0; 5];
        for c in self.domain.iter().chain(self.group.iter()) {
            visited[topo.distance(self.this, c) as usize] += 1;
        }
        visited
    }
}

/// The outcome of find_busiest_group: which group, how much to move.
pub(crate) struct Imbalance {
    pub group: usize,
    pub amount: u64,
    pub kind: Migrate,
}

/// The periodic balance of `cpu` at a tick: each level whose interval has
/// passed, if this CPU is the one of its group that balances. Returns the
/// time the balancing took on `cpu` (the SCHED_SOFTIRQ's work, priced by
/// `SchedEnv::balance_ns`).
pub(crate) fn rebalance_domains(env: &mut impl SchedEnv, cpu: usize) -> u64 {
    let mut idle = if env.cpu_idle(cpu) {
        IdleType::Idle
    } else {
        IdleType::Busy
    };
    let levels = env.domains().of(cpu).len();
    decay_newidle_costs(env, cpu);
    let mut cost = 0;
    for level in 0..levels {
        let Some(due) = next_balance_at(env, cpu, level, idle) else {
            continue;
        };
        if env.now() < due {
            continue;
        }
        let now = env.now();
        env.state_mut().lb[cpu][level].last_balance_ns = now;
        // Another CPU balances this level for the group, and the levels
        // above for it too (continue_balancing, rebalance_domains).
        if !should_we_balance(env, cpu, level) {
            break;
        }
        let mut work = LbWork::default();
        let pulled = load_balance(env, cpu, level, idle, &mut work) > 0;
        cost += env.balance_ns(&work);
        if pulled {
            // Having pulled, this CPU is busy for the levels above.
            idle = IdleType::Busy;
        }
    }
    cost
}

/// When `cpu` balances `level` next (sd->last_balance + get_sd_balance_interval,
/// the interval stretched by busy_factor on a busy CPU, within one tick and
/// max_load_balance_interval); `None` for a level that does not balance.
fn next_balance_at(env: &impl SchedEnv, cpu: usize, level: usize, idle: IdleType) -> Option<u64> {
    let d = env.domains().of(cpu).nth(level).expect("level exists");
    if needs_load_balance_flag(env.policy().era) && !d.has(SdFlag::LoadBalance) {
        return None;
    }
    let tick_ms = (env.policy().tunables.tick_ns() / 1_000_000).max(1);
    let max_ms = (env.policy().tunables.hz * env.topology().ncpus() as u64 / 10).max(1) * tick_ms;
    let busy_factor = if idle == IdleType::Busy {
        d.params.busy_factor as u64
    } else {
        1
    };
    let st = env.state().lb[cpu][level];
    let interval_ms = (st.interval_ms * busy_factor).clamp(tick_ms, max_ms);
    Some(st.last_balance_ns + interval_ms * 1_000_000)
}

/// rq->next_balance of an idle CPU: the earliest of its levels' next balances.
pub(crate) fn idle_next_balance(env: &impl SchedEnv, cpu: usize) -> u64 {
    (0..env.domains().of(cpu).len())
        .filter_map(|level| next_balance_at(env, cpu, level, IdleType::Idle))
        .min()
        .unwrap_or(u64::MAX)
}

/// What a new-idle balance did: whether it pulled a task, and the time it
/// took on the CPU about to idle (every load_balance it ran, priced by
/// `SchedEnv::balance_ns`; the CPU spends it before running the pulled
/// task or idling).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NewidleBalance {
    pub pulled: bool,
    pub cost_ns: u64,
}

/// A second without a costlier new-idle balance decays max_newidle_lb_cost.
const NEWIDLE_COST_DECAY_NS: u64 = 1_000_000_000;

/// rebalance_domains()'s decay of each level's max_newidle_lb_cost (by
/// 253/256 once a second; v4.15, and update_newidle_cost(sd, 0) in v6.5),
/// and then max_idle_balance_cost = max(migration_cost, their sum).
fn decay_newidle_costs(env: &mut impl SchedEnv, cpu: usize) {
    if !env.policy().era.rules().newidle_gate.gated() {
        return;
    }
    let now = env.now();
    let migration_cost = env.policy().tunables.migration_cost_ns;
    let state = env.state_mut();
    let mut decayed = false;
    for st in &mut state.lb[cpu] {
        if now > st.last_decay_ns + NEWIDLE_COST_DECAY_NS {
            st.max_newidle_lb_cost_ns = st.max_newidle_lb_cost_ns * 253 / 256;
            st.last_decay_ns = now;
            decayed = true;
        }
    }
    if decayed {
        let sum: u64 = state.lb[cpu].iter().map(|s| s.max_newidle_lb_cost_ns).sum();
        state.max_idle_balance_cost_ns[cpu] = sum.max(migration_cost);
    }
}

fn needs_load_balance_flag(era: Era) -> bool {
    era.rules().needs_load_balance_flag
}

/// Only one CPU per group balances a level: its first idle CPU, else its
/// first. From 6.6 (`balance_from_idle_core`), above the SMT level an idle
/// CPU on an idle core goes before an idle thread of a busy core
/// (should_we_balance, is_core_idle).
fn should_we_balance(env: &impl SchedEnv, cpu: usize, level: usize) -> bool {
    let d = env.domains().of(cpu).nth(level).expect("level exists");
    let Some(g) = d.group_of(cpu) else {
        return false;
    };
    let group = &d.groups[g];
    let mut idle = group.iter().filter(|&c| env.cpu_idle(c));
    let core_idle = |c: usize| {
        env.topology()
            .core_span(c)
            .iter()
            .all(|s| s == c || env.cpu_idle(s))
    };
    let chosen =
        if env.policy().era.rules().balance_from_idle_core && !d.has(SdFlag::ShareCpuCapacity) {
            let first_idle = group.iter().find(|&c| env.cpu_idle(c));
            idle.find(|&c| core_idle(c)).or(first_idle)
        } else {
            idle.next()
        };
    chosen.or_else(|| group.first()) == Some(cpu)
}

/// New-idle balance: `cpu` is about to go idle. Walks levels with
/// SD_BALANCE_NEWIDLE bottom-up and stops at the first pull. 2.6.2x has no
/// gate but stops at a level without NEWIDLE before any with it, and at an
/// SMT level with a busy thread (idle_balance and load_balance_newidle,
/// v2.6.28); 4.15 and 6.5 skip it as `NewidleGate`
/// says, stop where the cost so far plus a level's max_newidle_lb_cost
/// exceeds avg_idle, and keep each level's costliest balance (idle_balance,
/// v4.15; newidle_balance and update_newidle_cost, v6.5). Returns whether a
/// task was pulled and what the walk cost.
pub(crate) fn newidle_balance(env: &mut impl SchedEnv, cpu: usize) -> NewidleBalance {
    let gate = env.policy().era.rules().newidle_gate;
    let avg_idle = env.avg_idle_ns(cpu);
    let overload = env.state().overload;
    let skip = match gate {
        NewidleGate::Ungated => false,
        NewidleGate::MigrationCostOrOverload => {
            avg_idle < env.policy().tunables.migration_cost_ns || !overload
        }
        NewidleGate::NewidleCostOrOverload => {
            let lowest = env.state().lb[cpu]
                .first()
                .map_or(0, |s| s.max_newidle_lb_cost_ns);
            !overload || avg_idle < lowest
        }
    };
    if skip {
        env.count(Counter::NewIdleSkipped);
        return NewidleBalance::default();
    }
    let levels = env.domains().of(cpu).len();
    let mut curr_cost = 0;
    let mut pulled = false;
    // 2.6.2x's idle_balance starts with pulled_task = -1: a level without
    // SD_BALANCE_NEWIDLE before any with it ends the walk.
    let mut ran_newidle = false;
    for level in 0..levels {
        let d = env.domains().of(cpu).nth(level).expect("level exists");
        let (newidle, load_balance_flag) =
            (d.has(SdFlag::BalanceNewidle), d.has(SdFlag::LoadBalance));
        let smt_with_busy_sibling =
            d.has(SdFlag::ShareCpuCapacity) && d.span.iter().any(|c| env.rq(c).nr_running > 0);
        if needs_load_balance_flag(env.policy().era) && !load_balance_flag {
            continue;
        }
        if gate.gated() && avg_idle < curr_cost + env.state().lb[cpu][level].max_newidle_lb_cost_ns
        {
            break;
        }
        if !newidle {
            if gate == NewidleGate::Ungated && !ran_newidle {
                break;
            }
            continue;
        }
        ran_newidle = true;
        let mut work = LbWork::default();
        pulled = load_balance(env, cpu, level, IdleType::NewIdle, &mut work) > 0;
        let cost = env.balance_ns(&work);
        if gate.gated() {
            update_newidle_cost(env, cpu, level, cost, gate);
        }
        curr_cost += cost;
        if pulled {
            env.count(Counter::NewIdlePulled);
            break;
        }
        // 2.6.2x's load_balance_newidle returns -1 at an SMT level whose
        // threads are not all idle: the walk stops there.
        if gate == NewidleGate::Ungated && smt_with_busy_sibling {
            break;
        }
    }
    if gate.gated() {
        let max = &mut env.state_mut().max_idle_balance_cost_ns[cpu];
        *max = (*max).max(curr_cost);
    }
    NewidleBalance {
        pulled,
        cost_ns: curr_cost,
    }
}

/// A new-idle balance at `level` cost `cost`: it becomes the level's
/// max_newidle_lb_cost if larger; v6.5 (update_newidle_cost) also decays a
/// larger maximum here once a second.
fn update_newidle_cost(
    env: &mut impl SchedEnv,
    cpu: usize,
    level: usize,
    cost: u64,
    gate: NewidleGate,
) {
    let now = env.now();
    let st = &mut env.state_mut().lb[cpu][level];
    if cost > st.max_newidle_lb_cost_ns {
        st.max_newidle_lb_cost_ns = cost;
        if gate == NewidleGate::NewidleCostOrOverload {
            st.last_decay_ns = now;
        }
    } else if gate == NewidleGate::NewidleCostOrOverload
        && now > st.last_decay_ns + NEWIDLE_COST_DECAY_NS
    {
        st.max_newidle_lb_cost_ns = st.max_newidle_lb_cost_ns * 253 / 256;
        st.last_decay_ns = now;
    }
}

/// One load_balance at `level` of `this`: find the busiest group and queue,
/// move tasks, fall back to active balance. Returns the tasks moved; adds
/// what it read, locked and moved to `work`.
fn load_balance(
    env: &mut impl SchedEnv,
    this: usize,
    level: usize,
    idle: IdleType,
    work: &mut LbWork,
) -> usize {
    let levels = env.domains().of(this).len();
    let d = env.domains().of(this).nth(level).expect("level exists");
    let name = d.level;
    // update_sd_lb_stats reads every CPU of the domain; at the top level it
    // rewrites the root domain's overload flag.
    let span = d.span;
    (work.this, work.domain) = (this, span);
    if level + 1 == levels {
        let overload = span.iter().any(|c| env.rq(c).nr_running > 1);
        env.state_mut().overload = overload;
    }
    let d = env.domains().of(this).nth(level).expect("level exists");
    let (max_interval, min_interval, cache_nice_tries) = (
        d.params.max_interval_ms as u64,
        d.params.min_interval_ms as u64,
        d.params.cache_nice_tries,
    );
    let smt = d.has(SdFlag::ShareCpuCapacity);
    update_idle_cpu_scan(env, this, level, idle);
    let Some(imb) = find_busiest_group(env, this, level, idle) else {
        clear_group_imbalance(env, this, level);
        env.count(lb(name, idle, LbOutcome::Balanced));
        let st = &mut env.state_mut().lb[this][level];
        st.nr_balance_failed = 0;
        st.interval_ms = (st.interval_ms * 2).min(max_interval.max(1));
        return 0;
    };
    env.count(lb(name, idle, LbOutcome::Imbalanced));
    env.state_mut().lb[this][level].interval_ms = min_interval.max(1);
    let group = env
        .domains()
        .of(this)
        .nth(level)
        .expect("level exists")
        .groups[imb.group];
    work.group = group;
    let Some(busiest) = find_busiest_queue(env, &group, this, &imb) else {
        clear_group_imbalance(env, this, level);
        return 0;
    };
    work.locked = Some(env.topology().distance(this, busiest));
    let failed = env.state().lb[this][level].nr_balance_failed;
    let hot_ok = (smt && env.policy().era.rules().smt_never_hot) || failed > cache_nice_tries;
    let kind = imb.kind;
    let (moved, pinned_short) =
        detach_and_attach(env, busiest, this, imb, idle, hot_ok, name, work);
    // Affinity kept the balance short: the parent's local group (this
    // domain's span) is marked imbalanced.
    if pinned_short && env.policy().era.rules().affinity_group_imbalance && level + 1 < levels {
        let parent = env
            .domains()
            .of(this)
            .nth(level + 1)
            .expect("level exists")
            .level;
        let first = span.first().expect("a domain has CPUs");
        env.state_mut().group_imbalance.insert((parent, first));
    }
    if moved > 0 {
        env.state_mut().lb[this][level].nr_balance_failed = 0;
        env.count(lb(name, idle, LbOutcome::Pulled));
        return moved;
    }
    // Only periodic failures count: new-idle balancing is too frequent.
    if idle != IdleType::NewIdle {
        env.state_mut().lb[this][level].nr_balance_failed += 1;
    }
    let rule = env.policy().era.rules().active_balance;
    if may_push(rule, idle, kind)
        && env.state().lb[this][level].nr_balance_failed > cache_nice_tries + 2
        && env.active_balance(busiest, this)
    {
        env.count(Counter::ActiveBalance { level: name });
        env.state_mut().lb[this][level].nr_balance_failed = match rule {
            ActiveBalance::TaskMigrationOnly => 0,
            _ => cache_nice_tries + 1,
        };
        return 1;
    }
    0
}

/// load_balance's out_balanced (v4.15, v6.5): a balance that found nothing
/// to pull clears the parent's local group's imbalance flag.
fn clear_group_imbalance(env: &mut impl SchedEnv, this: usize, level: usize) {
    if !env.policy().era.rules().affinity_group_imbalance {
        return;
    }
    let key = {
        let mut doms = env.domains().of(this).skip(level);
        let (Some(d), Some(parent)) = (doms.next(), doms.next()) else {
            return;
        };
        (parent.level, d.span.first().expect("a domain has CPUs"))
    };
    env.state_mut().group_imbalance.remove(&key);
}

/// Whether a failed balance may kick the busiest CPU's stopper (once the
/// failures exceed cache_nice_tries + 2), by era: load_balance (v2.6.28),
/// need_active_balance (v4.15), imbalanced_active_balance (v6.5).
fn may_push(rule: ActiveBalance, idle: IdleType, kind: Migrate) -> bool {
    match rule {
        ActiveBalance::PeriodicOnly => idle != IdleType::NewIdle,
        ActiveBalance::AnyIdleType => true,
        ActiveBalance::TaskMigrationOnly => kind == Migrate::Task,
    }
}

/// update_idle_cpu_scan (v6.5): a periodic balance of the LLC-sized
/// domain rewrites its LLC's SIS_UTIL scan budget from the domain's
/// utilisation (cpu_util_cfs of each CPU).
fn update_idle_cpu_scan(env: &mut impl SchedEnv, this: usize, level: usize, idle: IdleType) {
    if idle == IdleType::NewIdle || !env.policy().features.has(crate::policy::Feature::SisUtil) {
        return;
    }
    // sd_llc_size: the span of this CPU's highest cache-sharing domain.
    let Some(llc_weight) = env
        .domains()
        .of(this)
        .rev()
        .find(|d| d.has(SdFlag::SharePkgResources))
        .map(|d| d.span.len())
    else {
        return;
    };
    let d = env.domains().of(this).nth(level).expect("level exists");
    if d.span.len() != llc_weight {
        return;
    }
    let llc = env.topology().cpus[this].llc;
    let pct = d.params.imbalance_pct as u64;
    let sum_util: u64 = d.span.iter().map(|c| cpu_util(env, c, None, false)).sum();
    env.state_mut().llc_nr_idle_scan[llc] =
        crate::sched::wakeup::nr_idle_scan(sum_util, llc_weight as u64, pct);
}

fn lb(level: Level, idle: IdleType, outcome: LbOutcome) -> Counter {
    Counter::Lb {
        level,
        idle,
        outcome,
    }
}

fn find_busiest_group(
    env: &impl SchedEnv,
    this: usize,
    level: usize,
    idle: IdleType,
) -> Option<Imbalance> {
    match env.policy().era.rules().group_compare {
        GroupCompare::Classified => find_busiest_group_classified(env, this, level, idle),
        GroupCompare::TypedByLoad => {
            super::balance_typed::find_busiest_group(env, this, level, idle)
        }
        GroupCompare::ByLoad => super::balance_legacy::find_busiest_group(env, this, level, idle),
    }
}

/// 6.5: classify groups, pick the busiest by type then load, bail out when
/// balanced, and choose what to migrate.
fn find_busiest_group_classified(
    env: &impl SchedEnv,
    this: usize,
    level: usize,
    idle: IdleType,
) -> Option<Imbalance> {
    let d = env.domains().of(this).nth(level).expect("level exists");
    let pct = d.params.imbalance_pct as u64;
    // A group's flags are its child domain's: SMT below makes each group a core.
    let child = level
        .checked_sub(1)
        .and_then(|c| env.domains().of(this).nth(c));
    let groups_are_cores = child.is_some_and(|c| c.has(SdFlag::ShareCpuCapacity));
    let smt_balance = env.policy().era.rules().smt_balance && idle != IdleType::Busy;
    let (mut local, mut local_gi) = (None, 0);
    let mut busiest: Option<(usize, GroupStats)> = None;
    let (mut total_load, mut total_cap) = (0u64, 0u64);
    for (gi, g) in d.groups.iter().enumerate() {
        let mut s = group_stats(env, d, g, None);
        total_load += s.load;
        total_cap += s.capacity;
        if g.contains(this) {
            (local, local_gi) = (Some(s), gi);
            continue;
        }
        // smt_balance (v6.12): a core sharing its capacity among tasks.
        if smt_balance && groups_are_cores && s.nr_running > 1 && s.kind < GroupType::SmtBalance {
            s.kind = GroupType::SmtBalance;
        }
        let has_spare_order = |s: &GroupStats| (std::cmp::Reverse(s.idle_cpus), s.nr_running);
        let better = match &busiest {
            None => s.nr_running > 0,
            Some((_, b)) if s.kind != b.kind => s.kind > b.kind,
            Some((_, b)) => match s.kind {
                GroupType::HasSpare => has_spare_order(&s) > has_spare_order(b),
                // The first imbalanced group stays: nothing ranks them.
                GroupType::Imbalanced => false,
                // update_sd_pick_busiest (v6.12): with idle CPUs on either
                // side, compared as groups with spare capacity.
                GroupType::SmtBalance if s.idle_cpus != 0 || b.idle_cpus != 0 => {
                    has_spare_order(&s) > has_spare_order(b)
                }
                _ => s.avg_load > b.avg_load,
            },
        };
        if better {
            busiest = Some((gi, s));
        }
    }
    let local = local?;
    let (group, b) = busiest?;
    if b.nr_running == 0 {
        return None;
    }
    if b.kind == GroupType::Imbalanced {
        // force_balance; calculate_imbalance (v6.5): move any one task.
        return Some(Imbalance {
            group,
            amount: 1,
            kind: Migrate::Task,
        });
    }
    if local.kind > b.kind {
        return None;
    }
    let domain_avg = total_load * SCHED_CAPACITY_SCALE / total_cap.max(1);
    if local.kind == GroupType::Overloaded
        && (local.avg_load >= b.avg_load
            || local.avg_load >= domain_avg
            || 100 * b.avg_load <= pct * local.avg_load)
    {
        return None;
    }
    // The busiest group's own flags are its child domain's: with
    // SD_PREFER_SIBLING, excess tasks go to a sibling group with room.
    let prefer_sibling = child.is_some_and(|c| c.has(SdFlag::PreferSibling));
    let spread = |local: &GroupStats, b: &GroupStats| {
        if env.policy().era.rules().smt_balance {
            sibling_imbalance(env, idle, &d.groups[local_gi], local, &d.groups[group], b)
        } else {
            b.nr_running.saturating_sub(local.nr_running)
        }
    };
    let forced = prefer_sibling && local.kind == GroupType::HasSpare && spread(&local, &b) > 1;
    if !forced
        && b.kind != GroupType::Overloaded
        && (idle == IdleType::Busy
            || (b.weight > 1 && local.idle_cpus <= b.idle_cpus + 1)
            || b.nr_running == 1)
    {
        return None;
    }
    if b.kind == GroupType::SmtBalance {
        // calculate_imbalance (v6.12): fewer tasks sharing a core's capacity.
        return Some(Imbalance {
            group,
            amount: 1,
            kind: Migrate::Task,
        });
    }
    let spread = (prefer_sibling || b.weight == 1).then(|| spread(&local, &b));
    let (kind, amount) =
        calculate_imbalance_classified(env, this, d, &local, &b, domain_avg, spread, idle)?;
    (amount > 0).then_some(Imbalance {
        group,
        amount,
        kind,
    })
}

/// sibling_imbalance (v6.12): the running tasks to move so both groups run
/// as many per core, rounded; 2 to fill an empty group from one running
/// several; 0 for a busy CPU.
fn sibling_imbalance(
    env: &impl SchedEnv,
    idle: IdleType,
    local_cpus: &CpuSet,
    local: &GroupStats,
    busiest_cpus: &CpuSet,
    b: &GroupStats,
) -> usize {
    if idle == IdleType::Busy || b.nr_running == 0 {
        return 0;
    }
    let cores = |g: &CpuSet| {
        let mut seen: Vec<usize> = g.iter().map(|c| env.topology().cpus[c].core).collect();
        seen.sort_unstable();
        seen.dedup();
        seen.len()
    };
    let (nb, nl) = (cores(busiest_cpus), cores(local_cpus));
    if nb == nl {
        return b.nr_running.saturating_sub(local.nr_running);
    }
    let diff = (nl * b.nr_running).saturating_sub(nb * local.nr_running);
    let imbalance = (2 * diff + nl + nb) / (nl + nb);
    if imbalance <= 1 && local.nr_running == 0 && b.nr_running > 1 {
        2
    } else {
        imbalance
    }
}

/// calculate_imbalance (v6.5) for a local group of spare capacity or fully
/// busy: what to migrate and how much (0 means balanced). `spread` is the
/// running-task difference to even when the busiest group is one CPU or
/// prefers siblings.
#[allow(clippy::too_many_arguments)]
fn calculate_imbalance_classified(
    env: &impl SchedEnv,
    this: usize,
    d: &Domain,
    local: &GroupStats,
    b: &GroupStats,
    domain_avg: u64,
    spread: Option<usize>,
    idle: IdleType,
) -> Option<(Migrate, u64)> {
    if local.kind == GroupType::HasSpare {
        if b.kind == GroupType::Overloaded && !d.has(SdFlag::SharePkgResources) {
            // Fill the local group's spare capacity; an idle CPU still
            // pulls one task when the utilisation leaves none.
            let amount = local.capacity.max(local.util) - local.util;
            if amount == 0 && idle != IdleType::Busy {
                return Some((Migrate::Task, 1));
            }
            return Some((Migrate::Util, amount));
        }
        let mut amount = spread.unwrap_or(local.idle_cpus.saturating_sub(b.idle_cpus));
        if d.has(SdFlag::Numa) {
            let imb_numa_nr = imb_numa_nr(env, this, d);
            amount = adjust_numa_imbalance(amount, local.nr_running + 1, imb_numa_nr);
        }
        return Some((Migrate::Task, (amount >> 1) as u64));
    }
    if local.kind != GroupType::Overloaded
        && (local.avg_load >= b.avg_load || local.avg_load >= domain_avg)
    {
        return None;
    }
    // Both groups are (or will be) overloaded: bring both to the average;
    // a busiest group below it leaves only the local side's term.
    let busiest_side = b
        .avg_load
        .checked_sub(domain_avg)
        .map_or(u64::MAX, |above| above * b.capacity);
    let amount =
        busiest_side.min((domain_avg - local.avg_load) * local.capacity) / SCHED_CAPACITY_SCALE;
    Some((Migrate::Load, amount))
}

/// The CPU of the busiest group to pull from, by what is migrated. A CPU
/// running a single task heavier than the imbalance is skipped; one running
/// a single task may still be chosen (moving it then fails, and repeated
/// failures lead to active balance).
fn find_busiest_queue(
    env: &impl SchedEnv,
    group: &crate::cpuset::CpuSet,
    this: usize,
    imb: &Imbalance,
) -> Option<usize> {
    let pelt = env.policy().era.rules().balance_load == BalanceLoad::Pelt;
    group
        .iter()
        .filter(|&c| c != this && env.rq(c).nr_running > 0)
        .filter(|&c| {
            let rq = &env.rq(c);
            let load = if pelt {
                rq.pelt.load_avg
            } else {
                instant_load(env, c)
            };
            !(imb.kind == Migrate::Load && rq.nr_running == 1 && load > imb.amount)
        })
        .max_by_key(|&c| {
            let rq = &env.rq(c);
            let key = match imb.kind {
                Migrate::Load if pelt => rq.pelt.load_avg,
                Migrate::Load => instant_load(env, c),
                Migrate::Util => cpu_util(env, c, None, true),
                Migrate::Task => rq.nr_running as u64,
            };
            (key, std::cmp::Reverse(c))
        })
}

/// detach_tasks + attach_tasks: queued tasks of `busiest` that may move
/// (affinity, not running, not cache-hot unless allowed), in the era's
/// list order, until the imbalance is met; at most nr_migrate looked at;
/// one for new-idle where the era says so. Returns the tasks moved and
/// whether affinity refused a task while imbalance is left
/// (LBF_SOME_PINNED with env->imbalance > 0).
#[allow(clippy::too_many_arguments)]
fn detach_and_attach(
    env: &mut impl SchedEnv,
    busiest: usize,
    this: usize,
    imb: Imbalance,
    idle: IdleType,
    hot_ok: bool,
    level: &'static str,
    work: &mut LbWork,
) -> (usize, bool) {
    let order = env.policy().era.rules().detach_order;
    let candidates = detach_candidates(env, busiest);
    let mut left = imb.amount as i64;
    let mut moved = 0;
    let mut some_pinned = false;
    // load_balance detaches only from a queue running more than one task.
    let several = env.rq(busiest).nr_running > 1;
    for t in candidates {
        if left <= 0 {
            break;
        }
        work.examined += 1;
        // A task detach_tasks (4.15+) passes over goes to the list's head.
        let skip = |env: &mut _, t| {
            if order == DetachOrder::LeastRecentlyUsedFirst {
                SchedEnv::list_move_head(env, busiest, t);
            }
        };
        // can_migrate_task: affinity, then the running task, then task_hot.
        if !env.allowed(t).contains(this) {
            some_pinned = several;
            skip(env, t);
            continue;
        }
        if env.rq(busiest).curr == Some(t) {
            skip(env, t);
            continue;
        }
        if !hot_ok && task_hot(env, t, busiest, this) {
            env.count(lb(level, idle, LbOutcome::HotRefused));
            skip(env, t);
            continue;
        }
        let balance_load = env.policy().era.rules().balance_load;
        let load = match imb.kind {
            Migrate::Load if balance_load == BalanceLoad::Weight => env.entity(t).weight,
            // task_h_load, at least 1 so the imbalance shrinks (v4.15).
            Migrate::Load => env.entity(t).pelt.load_avg.max(1),
            Migrate::Util => task_util_est(env, t),
            Migrate::Task => 1,
        };
        // Skip a task whose half load exceeds what is left to move
        // (balance_tasks v2.6.28, detach_tasks v4.15).
        if balance_load != BalanceLoad::Pelt && (load / 2) as i64 > left {
            skip(env, t);
            continue;
        }
        env.migrate_queued(t, busiest, this, Reason::LoadBalance);
        env.count(Counter::Migration {
            cause: Cause::Balance,
            level,
        });
        moved += 1;
        work.moved += 1;
        left -= load as i64;
        if idle == IdleType::NewIdle && env.policy().era.rules().newidle_pulls_one {
            break;
        }
    }
    (moved, some_pinned && left > 0)
}

/// The tasks of `busiest`'s list (the running one included) in the order
/// the era's balancer walks them, as many as it looks at:
/// balance_tasks (v2.6.28) from the head of cfs_rq->tasks, newest enqueue
/// first, until `loops++ > sysctl_sched_nr_migrate`; detach_tasks (v4.15,
/// v6.5) from the tail of cfs_tasks, least recently picked first, at most
/// loop_max = min(nr_migrate, nr_running). Sorting by the stamps costs
/// O(n log n) per balance and nothing per pick.
fn detach_candidates(env: &impl SchedEnv, busiest: usize) -> Vec<usize> {
    let rq = env.rq(busiest);
    let nr_migrate = env.policy().tunables.nr_migrate as usize;
    let mut tasks: Vec<usize> = rq.curr.into_iter().chain(rq.queued()).collect();
    let limit = match env.policy().era.rules().detach_order {
        DetachOrder::NewestEnqueuedFirst => {
            tasks.sort_by_key(|&t| std::cmp::Reverse(env.entity(t).enqueued_seq));
            nr_migrate + 1
        }
        DetachOrder::LeastRecentlyUsedFirst => {
            tasks.sort_by_key(|&t| env.entity(t).mru_seq);
            nr_migrate.min(rq.nr_running)
        }
    };
    tasks.truncate(limit);
    tasks
}

/// A task ran within migration_cost, or is its queue's buddy (CACHE_HOT_BUDDY).
/// task_hot() for a move of `t` from `cpu` to `dst`: it ran within
/// migration_cost, or CACHE_HOT_BUDDY holds it as a buddy (which ones, and
/// whether `dst` must be busy, by era).
fn task_hot(env: &impl SchedEnv, t: usize, cpu: usize, dst: usize) -> bool {
    let rq = env.rq(cpu);
    let buddy = match env.policy().era.rules().cache_hot_buddy {
        CacheHotBuddy::Next => rq.next == Some(t),
        CacheHotBuddy::NextOrLast => rq.next == Some(t) || rq.last == Some(t),
        CacheHotBuddy::NextToBusy => env.rq(dst).nr_running > 0 && rq.next == Some(t),
        CacheHotBuddy::NextOrLastToBusy => {
            env.rq(dst).nr_running > 0 && (rq.next == Some(t) || rq.last == Some(t))
        }
    };
    if buddy
        && env
            .policy()
            .features
            .has(crate::policy::Feature::CacheHotBuddy)
    {
        return true;
    }
    ran_recently(env, t)
}

#[cfg(test)]
mod tests {
    //! find_busiest_group, calculate_imbalance and load_balance on hand-built
    //! states, each era by the kernel function it follows.
    use super::*;
    use crate::cpuset::CpuSet;
    use crate::sched::testenv::{level_index, TestEnv};

    /// update_sg_lb_stats / group_classify (v6.5 kernel/sched/fair.c): three
    /// hogs on CPU 0 of the desktop's core {0, 8}.
    #[test]
    fn group_stats_6_5_classify_an_overloaded_core() {
        let mut env = TestEnv::era("desktop-8c", Era::V6_5);
        env.hogs(&[0], 3);
        let mc = level_index(&env, 1, "MC");
        let d = env.domains.of(1).nth(mc).unwrap();
        assert_eq!(d.params.imbalance_pct, 117);
        let core0 = *d.groups.iter().find(|g| g.contains(0)).unwrap();
        assert_eq!(core0.iter().collect::<Vec<_>>(), vec![0, 8]);
        let s = group_stats(&env, d, &core0, None);
        // load = runnable = 3 x 1024; util = 1024, as cpu_util caps CPU 0's
        // 3072 at its capacity; capacity = 2 x 1024 = 2048; nr 3 > weight 2
        // and 2048 x 117 = 239,616 < 3072 x 100 = 307,200: overloaded.
        assert_eq!((s.load, s.util, s.capacity), (3072, 1024, 2048));
        assert_eq!((s.nr_running, s.idle_cpus, s.weight), (3, 1, 2));
        assert_eq!(s.kind, GroupType::Overloaded);
        // avg_load = 3072 x 1024 / 2048 = 1536.
        assert_eq!(s.avg_load, 1536);
        let idle_core = *d.groups.iter().find(|g| g.contains(1)).unwrap();
        let s = group_stats(&env, d, &idle_core, None);
        assert_eq!(
            (s.kind, s.nr_running, s.idle_cpus),
            (GroupType::HasSpare, 0, 2)
        );
    }

    /// find_busiest_group (v6.5): SD_PREFER_SIBLING forces a balance the
    /// idle-CPU rule would call balanced. Two hogs on CPU 0 make core
    /// {0, 8} fully busy (2 tasks on 2 threads, util 2048 x 117 > 2048 x
    /// 100); idle CPU 1's core has spare room with 2 idle CPUs against 1,
    /// which alone is "balanced" (2 <= 1 + 1). But the busiest group's
    /// child (SMT) prefers siblings and 2 > 0 + 1 tasks: forced, and
    /// calculate_imbalance moves (2 - 0) >> 1 = 1 task.
    #[test]
    fn find_busiest_group_6_5_prefer_sibling_forces_a_pull() {
        let mut env = TestEnv::era("desktop-8c", Era::V6_5);
        env.hogs(&[0], 2);
        let mc = level_index(&env, 1, "MC");
        let imb = find_busiest_group_classified(&env, 1, mc, IdleType::Idle).expect("forced");
        assert_eq!((imb.kind, imb.amount), (Migrate::Task, 1));
    }

    /// find_busiest_group (v6.12 against v6.5) for a busy CPU 1 (one task)
    /// beside core {0, 8} running three light tasks (util 200 each: spare
    /// capacity, 204,800 > 600 x 117). 6.5's prefer-sibling force counts
    /// 3 > 1 + 1 and moves (3 - 1) >> 1 = 1 task; 6.12's sibling_imbalance
    /// is 0 for a busy CPU, and a group that is not overloaded is left to
    /// idle CPUs.
    #[test]
    fn find_busiest_group_6_12_leaves_spreading_to_idle_cpus() {
        let run = |era: Era| {
            let mut env = TestEnv::era("desktop-8c", era);
            for cpu in [0, 0, 8] {
                TestEnv::task(&mut env, cpu, 200, 200);
            }
            TestEnv::task(&mut env, 1, 200, 200);
            let mc = level_index(&env, 1, "MC");
            find_busiest_group_classified(&env, 1, mc, IdleType::Busy)
                .map(|imb| (imb.kind, imb.amount))
        };
        assert_eq!(run(Era::V6_5), Some((Migrate::Task, 1)));
        assert_eq!(run(Era::V6_12), None);
    }

    /// sibling_imbalance (v6.12) between groups of different core counts:
    /// busiest on 2 cores (CPUs 0 and 2), local on 1 (CPU 1). Running 2
    /// against 0: (1 x 2 - 2 x 0) = 2, normalised (2 x 2 + 1 + 2) / 3 = 2.
    /// Running 1 against 0: (2 + 3) / 3 = 1. A busy CPU gets 0.
    #[test]
    fn sibling_imbalance_6_12_evens_tasks_per_core() {
        let mut env = TestEnv::era("desktop-8c", Era::V6_12);
        env.hogs(&[0, 2], 1);
        let mc = level_index(&env, 1, "MC");
        let d = env.domains.of(1).nth(mc).unwrap();
        let (busiest_cpus, local_cpus) = (CpuSet::from_iter([0, 2]), CpuSet::single(1));
        let stats = |cpus: &CpuSet| group_stats(&env, d, cpus, None);
        let (b, l) = (stats(&busiest_cpus), stats(&local_cpus));
        let imb =
            |idle, b: &GroupStats| sibling_imbalance(&env, idle, &local_cpus, &l, &busiest_cpus, b);
        assert_eq!(imb(IdleType::Idle, &b), 2);
        assert_eq!(imb(IdleType::Busy, &b), 0);
        let one = GroupStats { nr_running: 1, ..b };
        assert_eq!(imb(IdleType::Idle, &one), 1);
    }

    /// Active balance after failures: CPU 1 new-idle balances MC beside
    /// CPU 0's two hogs, the queued one pinned to CPU 0, with MC's periodic
    /// failures already past cache_nice_tries + 2. 2.6.28's new-idle
    /// balance never kicks the stopper; 4.15's need_active_balance does;
    /// 6.5 does for its task-count imbalance (prefer-sibling on the idle
    /// core) and resets the failures; it would not for a load imbalance.
    #[test]
    fn newidle_active_balance_by_era() {
        let run = |era: Era| {
            let mut env = TestEnv::era("desktop-8c", era);
            env.hogs(&[0], 2);
            let queued = env.rqs[0].queued().next().unwrap();
            env.affinity[queued] = CpuSet::single(0);
            let mc = env.domains.of(1).position(|d| d.level == "MC").unwrap();
            let tries = env.domains.of(1).nth(mc).unwrap().params.cache_nice_tries;
            env.state.lb[1][mc].nr_balance_failed = tries + 3;
            let pulled = load_balance(&mut env, 1, mc, IdleType::NewIdle, &mut LbWork::default());
            let failed = env.state.lb[1][mc].nr_balance_failed;
            (pulled, env.pushed.clone(), failed, tries)
        };
        // MC's cache_nice_tries is 1 in each era: failures start at 4.
        assert_eq!(run(Era::V2_6_28), (0, vec![], 4, 1));
        assert_eq!(run(Era::V4_15), (1, vec![(0, 1)], 2, 1));
        assert_eq!(run(Era::V6_5), (1, vec![(0, 1)], 0, 1));
        assert!(!may_push(
            ActiveBalance::TaskMigrationOnly,
            IdleType::Idle,
            Migrate::Load
        ));
        assert!(may_push(
            ActiveBalance::AnyIdleType,
            IdleType::NewIdle,
            Migrate::Load
        ));
    }

    /// update_idle_cpu_scan (v6.5): only a periodic balance of the
    /// LLC-sized domain (MC on the desktop) rewrites SIS_UTIL's budget.
    /// Eight CPUs busy of 16: x = 8 x 1024 / 16 = 512, 512^2 x 117^2 /
    /// (10000 x 1024) = 350, y = 1024 - 350 = 674, nr = 674 x 16 / 1024 = 10.
    #[test]
    fn sis_util_budget_is_written_by_periodic_llc_balancing() {
        let mut env = TestEnv::era("desktop-8c", Era::V6_5);
        env.hogs(&(0..8).collect::<Vec<_>>(), 1);
        let (smt, mc) = (level_index(&env, 9, "SMT"), level_index(&env, 9, "MC"));
        for (level, idle) in [(mc, IdleType::NewIdle), (smt, IdleType::Idle)] {
            load_balance(&mut env, 9, level, idle, &mut LbWork::default());
            assert_eq!(env.state.llc_nr_idle_scan[0], 16);
        }
        load_balance(&mut env, 9, mc, IdleType::Idle, &mut LbWork::default());
        assert_eq!(env.state.llc_nr_idle_scan[0], 10);
    }

    /// calculate_imbalance (v6.5) across the two nodes of the 40-CPU box:
    /// imb_numa_nr = 2 (two LLCs under the NUMA level). With 2 hogs on
    /// node 0 and idle CPU 10 on node 1, prefer-sibling's task difference
    /// is 2, and adjust_numa_imbalance(2, 0 + 1, 2) allows it (0): no
    /// balance. With 4 hogs the difference 4 exceeds the allowance: 4 >> 1
    /// = 2 tasks move.
    #[test]
    fn numa_imbalance_6_5_allows_a_small_imbalance() {
        let run = |hogs: usize| {
            let mut env = TestEnv::era("ivb-ep-2s", Era::V6_5);
            env.hogs(&(0..hogs).collect::<Vec<_>>(), 1);
            let numa = level_index(&env, 10, "NUMA");
            let d = env.domains.of(10).nth(numa).unwrap();
            assert_eq!(crate::sched::wakeup::imb_numa_nr(&env, 10, d), 2);
            find_busiest_group_classified(&env, 10, numa, IdleType::Idle)
                .map(|imb| (imb.kind, imb.amount))
        };
        assert_eq!(run(2), None);
        assert_eq!(run(4), Some((Migrate::Task, 2)));
    }

    /// find_busiest_group + calculate_imbalance (v6.5): an idle core pulls
    /// from an overloaded one inside the LLC by task count.
    #[test]
    fn find_busiest_group_6_5_has_spare_pulls_tasks_within_the_llc() {
        let mut env = TestEnv::era("desktop-8c", Era::V6_5);
        env.hogs(&[0], 3);
        let mc = level_index(&env, 1, "MC");
        let imb = find_busiest_group(&env, 1, mc, IdleType::Idle).expect("imbalanced");
        let d = env.domains.of(1).nth(mc).unwrap();
        assert_eq!(d.groups[imb.group], CpuSet::from_iter([0, 8]));
        // Local has spare and MC is the LLC: move tasks, (2 idle - 1 idle) / 2
        // = 0, at least 1.
        assert_eq!((imb.kind, imb.amount), (Migrate::Task, 1));
        // A busy CPU's periodic balance leaves has-spare groups alone... but
        // the busiest is overloaded, so a busy balance still sees it.
        assert!(find_busiest_group(&env, 1, mc, IdleType::Busy).is_some());
    }

    /// load_balance (v6.5): the pull itself, its counters and the reset of
    /// nr_balance_failed.
    #[test]
    fn load_balance_6_5_moves_one_task_and_counts_it() {
        let mut env = TestEnv::era("desktop-8c", Era::V6_5);
        env.hogs(&[0], 3);
        let mc = level_index(&env, 1, "MC");
        let mut work = LbWork::default();
        assert_eq!(load_balance(&mut env, 1, mc, IdleType::Idle, &mut work), 1);
        // It read all 16 CPUs (CPU 1 itself, its sibling 9, 14 in the LLC),
        // then the busiest core {0, 8} again, locked CPU 0's queue and
        // examined two tasks from the tail of cfs_tasks: the running hog 0
        // (picked before 1 and 2 were enqueued), skipped, then hog 1, moved.
        assert_eq!(work.visited(&env.topo), [1, 1, 16, 0, 0]);
        assert_eq!(work.locked, Some(CpuDistance::SameLlc));
        assert_eq!((work.examined, work.moved), (2, 1));
        assert_eq!(env.migrated.len(), 1);
        let (task, from, to, why) = env.migrated[0];
        assert_eq!((task, from, to, why), (1, 0, 1, Reason::LoadBalance));
        for c in [
            lb("MC", IdleType::Idle, LbOutcome::Imbalanced),
            lb("MC", IdleType::Idle, LbOutcome::Pulled),
            Counter::Migration {
                cause: Cause::Balance,
                level: "MC",
            },
        ] {
            assert!(
                env.counted.contains(&c),
                "{c} missing from {:?}",
                env.counted
            );
        }
        assert_eq!(env.state.lb[1][mc].nr_balance_failed, 0);
    }

    /// balance_tasks with load_balance_start_fair (v2.6.28 kernel/sched.c,
    /// sched_fair.c): the walk starts at the head of cfs_rq->tasks, where
    /// account_entity_enqueue puts each enqueued task; picks do not move
    /// it. CPU 0 runs hog 0 with hogs 1, 2, 3 queued, then hog 1 sleeps
    /// and wakes: the list from its head is 1, 3, 2, 0. A one-task
    /// imbalance (1024) moves hog 1; two tasks move 1 then 3. (Highest
    /// vruntime first, the old order, would have taken 3 first.)
    #[test]
    fn balance_tasks_2_6_28_detaches_the_newest_enqueued_first() {
        for (amount, want) in [(1024, vec![1]), (2048, vec![1, 3])] {
            let mut env = TestEnv::era("phoenix-2008", Era::V2_6_28);
            env.hogs(&[0], 4);
            env.rqs[0].dequeue(1, &mut env.ents, &env.policy);
            env.rqs[0].enqueue(1, &mut env.ents);
            let imb = Imbalance {
                group: 0,
                amount,
                kind: Migrate::Load,
            };
            let mut work = LbWork::default();
            let moved =
                detach_and_attach(&mut env, 0, 1, imb, IdleType::Idle, true, "MC", &mut work).0;
            let tasks: Vec<usize> = env.migrated.iter().map(|m| m.0).collect();
            assert_eq!(
                (moved, tasks, work.examined),
                (want.len(), want.clone(), want.len() as u32)
            );
        }
    }

    /// detach_tasks (v4.15 kernel/sched/fair.c; v6.5 and v6.12 alike): the
    /// walk takes the tail of rq->cfs_tasks, an enqueue adds at the head,
    /// pick_next_task_fair moves each pick to the head, and a task the walk
    /// skips goes to the head too. CPU 0: hogs 0..3 enqueued in order with
    /// 0 picked first; then 3 is picked, then 0 again. From the tail the
    /// list is 1, 2, 3, 0 (running). Hog 1 may run only on CPU 0.
    /// A one-task imbalance examines 1 (pinned: to the head), then moves 2
    /// (highest vruntime first, the old order, took 3). The next balance,
    /// for two tasks, sees 3, 0, 1: moves 3, skips the running 0 and the
    /// pinned 1, having examined all three.
    #[test]
    fn detach_tasks_4_15_takes_the_least_recently_picked_first() {
        let mut env = TestEnv::era("desktop-8c", Era::V4_15);
        env.hogs(&[0], 4);
        env.rqs[0].put_prev(0, &env.ents);
        env.rqs[0].set_curr(3, &mut env.ents, env.now);
        env.rqs[0].put_prev(3, &env.ents);
        env.rqs[0].set_curr(0, &mut env.ents, env.now);
        env.affinity[1] = CpuSet::single(0);
        for t in 1..4 {
            env.ents[t].exec_start_ns = env.now - 10_000_000;
        }
        let imb = |amount| Imbalance {
            group: 0,
            amount,
            kind: Migrate::Load,
        };
        let mut work = LbWork::default();
        let moved = detach_and_attach(
            &mut env,
            0,
            1,
            imb(1024),
            IdleType::Idle,
            true,
            "MC",
            &mut work,
        );
        // Imbalance met: LBF_SOME_PINNED with nothing left does not count.
        assert_eq!((moved, work.examined), ((1, false), 2));
        assert_eq!(env.migrated[0].0, 2);
        assert!(
            env.ents[1].mru_seq > env.ents[0].mru_seq,
            "the skipped task went to the head"
        );
        let mut work = LbWork::default();
        let moved = detach_and_attach(
            &mut env,
            0,
            2,
            imb(2048),
            IdleType::Idle,
            true,
            "MC",
            &mut work,
        );
        // 1024 left behind with a pinned task seen: the balance is short
        // because of affinity (LBF_SOME_PINNED, imbalance > 0).
        assert_eq!((moved, work.examined), ((1, true), 3));
        assert_eq!(env.migrated[1].0, 3);
    }

    /// load_balance and group_classify (v6.5 kernel/sched/fair.c; v4.15's
    /// sgc->imbalance is the same flag) on the desktop: CPU 1 runs hog 0
    /// with hogs 1 and 2 queued, both pinned to CPU 1. Idle CPU 9 balances
    /// the SMT domain {1, 9}: CPU 1 is overloaded, but detach_tasks skips
    /// the running hog and the two pinned ones (LBF_SOME_PINNED) with
    /// imbalance left, so the parent (MC) group {1, 9} is marked
    /// imbalanced.
    /// Then, with one task each on CPUs 0 and 1, busy CPU 0's MC balance
    /// finds core {1, 9} (1 task, has_spare) and stops (a busy CPU leaves
    /// a group that is not overloaded alone); marked imbalanced, the
    /// group is group_imbalanced, which forces a balance of one task
    /// (calculate_imbalance: migrate_task, 1). 4.15 forces it too
    /// (find_busiest_group's goto force_balance). An idle CPU 9 that
    /// finds {1, 9} balanced (one task on CPU 1) clears the mark
    /// (out_balanced).
    #[test]
    fn group_imbalanced_6_5_set_by_pinned_tasks_forces_a_balance() {
        let mut env = TestEnv::era("desktop-8c", Era::V6_5);
        env.hogs(&[1], 3);
        for t in [1, 2] {
            env.affinity[t] = CpuSet::single(1);
        }
        let smt = level_index(&env, 9, "SMT");
        let mut work = LbWork::default();
        assert_eq!(load_balance(&mut env, 9, smt, IdleType::Idle, &mut work), 0);
        assert!(env.state.group_imbalance.contains(&("MC", 1)));

        for era in [Era::V6_5, Era::V4_15] {
            let mut env = TestEnv::era("desktop-8c", era);
            env.hogs(&[0, 1], 1);
            let mc = level_index(&env, 0, "MC");
            assert!(
                find_busiest_group(&env, 0, mc, IdleType::Busy).is_none(),
                "{era}"
            );
            env.state.group_imbalance.insert(("MC", 1));
            let imb = find_busiest_group(&env, 0, mc, IdleType::Busy).expect("forced");
            let d = env.domains.of(0).nth(mc).unwrap();
            assert_eq!(d.groups[imb.group].first(), Some(1), "{era}");
            if era == Era::V6_5 {
                assert_eq!((imb.kind, imb.amount), (Migrate::Task, 1));
            }
            let smt = level_index(&env, 9, "SMT");
            let mut work = LbWork::default();
            assert_eq!(load_balance(&mut env, 9, smt, IdleType::Idle, &mut work), 0);
            assert!(env.state.group_imbalance.is_empty(), "{era}");
        }
    }

    /// idle_balance / load_balance_newidle (v2.6.27): CPU 1 is about to
    /// idle beside core {0, 8}'s six hogs (three per thread). With its SMT
    /// sibling CPU 9 running a task, the SIBLING pass finds nothing to pull
    /// and returns -1 (sd_idle cleared): the walk stops before MC. With
    /// CPU 9 idle the SIBLING pass returns 0 and MC pulls a task: the core
    /// (power 1024) averages 6144 against the domain's 768, the imbalance
    /// min(5120, 768) = 768 is below a task, and the small-imbalance test
    /// 6144 + 1024 >= 2 x 1024 moves one task's 1024.
    #[test]
    fn newidle_2_6_27_stops_at_a_busy_smt_sibling() {
        let run = |sibling_busy: bool| {
            let mut env = TestEnv::era("desktop-8c", Era::V2_6_27);
            env.hogs(&[0, 8], 3);
            if sibling_busy {
                env.hogs(&[9], 1);
            }
            let pulled = newidle_balance(&mut env, 1).pulled;
            let mc_ran = env
                .counted
                .iter()
                .any(|c| matches!(c, Counter::Lb { level: "MC", .. }));
            (pulled, mc_ran)
        };
        assert_eq!(run(true), (false, false));
        assert_eq!(run(false), (true, true));
    }

    /// newidle_balance (v6.5 kernel/sched/fair.c) on the desktop: CPU 1 is
    /// about to idle while CPU 0 runs three hogs (the root domain is
    /// overloaded). SMT's max_newidle_lb_cost is 2 us, MC's 20 us; the test
    /// environment prices the SMT pass (CPUs 1 and 9 read) at 200 ns.
    fn newidle_6_5(avg_idle: u64) -> TestEnv {
        let mut env = TestEnv::era("desktop-8c", Era::V6_5);
        env.hogs(&[0], 3);
        assert!(env.state.overload, "a queue of three sets rd->overload");
        env.avg_idle_ns[1] = avg_idle;
        env.state.lb[1][0].max_newidle_lb_cost_ns = 2_000;
        env.state.lb[1][1].max_newidle_lb_cost_ns = 20_000;
        newidle_balance(&mut env, 1);
        env
    }

    #[test]
    fn newidle_6_5_gates_on_overload_and_each_levels_cost() {
        // 300 us: 300 >= 2 passes the gate; SMT (0 + 2 <= 300) finds its
        // sibling idle; MC (0.2 + 20 <= 300) pulls a hog.
        let env = newidle_6_5(300_000);
        assert_eq!(env.migrated.len(), 1);
        assert!(env.counted.contains(&Counter::NewIdlePulled));
        // The costlier MC pass did not exceed 20 us: the maximum stays.
        assert_eq!(env.state.lb[1][1].max_newidle_lb_cost_ns, 20_000);
        // 15 us: SMT runs (2 <= 15), MC stops the walk (0.2 + 20 > 15).
        let env = newidle_6_5(15_000);
        assert!(env.migrated.is_empty());
        assert!(!env.counted.contains(&Counter::NewIdleSkipped));
        assert!(env
            .counted
            .contains(&lb("SMT", IdleType::NewIdle, LbOutcome::Balanced)));
        assert!(!env
            .counted
            .iter()
            .any(|c| matches!(c, Counter::Lb { level: "MC", .. })));
        // 1.5 us is below the lowest level's 2 us: skipped at once.
        let env = newidle_6_5(1_500);
        assert!(env.counted.contains(&Counter::NewIdleSkipped));
        // Not overloaded: skipped, whatever avg_idle says.
        let mut env = TestEnv::era("desktop-8c", Era::V6_5);
        env.hogs(&[0], 1);
        assert!(!env.state.overload);
        assert!(!newidle_balance(&mut env, 1).pulled);
        assert!(env.counted.contains(&Counter::NewIdleSkipped));
    }

    /// idle_balance (v4.15): the gate is avg_idle against migration_cost
    /// (500 us), and the root domain's overload.
    #[test]
    fn newidle_4_15_gates_on_migration_cost_and_overload() {
        let mut env = TestEnv::era("desktop-8c", Era::V4_15);
        env.hogs(&[0], 3);
        env.avg_idle_ns[1] = 300_000;
        assert!(!newidle_balance(&mut env, 1).pulled);
        assert!(env.counted.contains(&Counter::NewIdleSkipped));
        env.avg_idle_ns[1] = 1_000_000;
        env.counted.clear();
        newidle_balance(&mut env, 1);
        assert!(!env.counted.contains(&Counter::NewIdleSkipped));
        // The cost of each level it balanced became that level's maximum:
        // SMT read 2 CPUs (200 ns in the test environment).
        assert_eq!(env.state.lb[1][0].max_newidle_lb_cost_ns, 200);
        // ... and max_idle_balance_cost keeps the larger of it and migration_cost.
        assert_eq!(env.state.max_idle_balance_cost_ns[1], 500_000);
    }

    /// rebalance_domains' decay: a second later 25,600 ns becomes
    /// 25,600 x 253 / 256 = 25,300; max_idle_balance_cost is then the larger
    /// of migration_cost and the levels' sum.
    #[test]
    fn newidle_costs_decay_once_a_second() {
        let mut env = TestEnv::era("desktop-8c", Era::V6_5);
        env.state.lb[1][1].max_newidle_lb_cost_ns = 25_600;
        env.now += 500_000_000;
        decay_newidle_costs(&mut env, 1);
        assert_eq!(env.state.lb[1][1].max_newidle_lb_cost_ns, 25_600);
        env.now += 600_000_000;
        decay_newidle_costs(&mut env, 1);
        assert_eq!(env.state.lb[1][1].max_newidle_lb_cost_ns, 25_300);
        assert_eq!(env.state.max_idle_balance_cost_ns[1], 500_000);
    }

    /// The top-level balance rewrites rd->overload from what it sees
    /// (update_sd_lb_stats, v4.15 and v6.5).
    #[test]
    fn the_top_level_balance_clears_a_stale_overload() {
        let mut env = TestEnv::era("desktop-8c", Era::V6_5);
        env.hogs(&[0], 1);
        env.state.overload = true;
        let mc = level_index(&env, 1, "MC");
        load_balance(&mut env, 1, mc, IdleType::Idle, &mut LbWork::default());
        assert!(!env.state.overload);
    }

    /// task_hot (v4.15 and v6.5 kernel/sched/fair.c): CPU 0 runs a hog and
    /// queues two that ran just now (cache-hot); CPU 8, its SMT sibling, is
    /// idle. 6.5 never calls a task hot between siblings and pulls; 4.15
    /// refuses both (nr_balance_failed 0 is not above cache_nice_tries 0).
    #[test]
    fn smt_siblings_never_hot_only_in_6_5() {
        for (era, moved) in [(Era::V6_5, 1), (Era::V4_15, 0)] {
            let mut env = TestEnv::era("desktop-8c", era);
            env.hogs(&[0], 3);
            for t in 1..3 {
                env.ents[t].exec_start_ns = env.now;
            }
            let smt = level_index(&env, 8, "SMT");
            let pulled = load_balance(&mut env, 8, smt, IdleType::Idle, &mut LbWork::default());
            assert_eq!(pulled, moved, "{era}");
            if moved == 0 {
                assert!(env
                    .counted
                    .contains(&lb("SMT", IdleType::Idle, LbOutcome::HotRefused)));
            }
        }
    }

    /// CACHE_HOT_BUDDY's buddies by era (task_hot, v2.6.27, v2.6.28, v4.15):
    /// task 2 on CPU 0 is the last buddy and has not run for 10 ms.
    #[test]
    fn from_6_12_an_idle_core_balances_before_an_idle_thread_of_a_busy_core() {
        // ivb-ep-2s, NUMA level (2): CPU 0's group is socket 0, CPUs 0-9 and
        // 20-29 in that order, CPU i's SMT sibling i + 20. Busy: 0 and 21, so
        // CPU 1 is idle on a busy core and CPU 2 the first idle CPU on an
        // idle core. 6.5 lets CPU 1 balance; 6.12 (should_we_balance with
        // is_core_idle, v6.6+) lets CPU 2.
        for (era, balancer) in [(Era::V6_5, 1), (Era::V6_12, 2)] {
            let mut env = TestEnv::era("ivb-ep-2s", era);
            env.hogs(&[0, 21], 1);
            let numa = 2;
            for cpu in [1, 2] {
                assert_eq!(
                    should_we_balance(&env, cpu, numa),
                    cpu == balancer,
                    "{era} cpu{cpu}"
                );
            }
            // At the SMT level each CPU is its own group: both balance.
            assert!(should_we_balance(&env, 1, 0) && should_we_balance(&env, 2, 0));
        }
    }

    #[test]
    fn cache_hot_buddy_by_era() {
        for (era, dst_busy, hot) in [
            (Era::V2_6_27, false, false),
            (Era::V2_6_28, false, true),
            (Era::V4_15, false, false),
            (Era::V4_15, true, true),
        ] {
            let mut env = TestEnv::era("desktop-8c", era);
            env.hogs(&[0], 3);
            env.rqs[0].last = Some(2);
            if dst_busy {
                env.hogs(&[1], 1);
            }
            assert_eq!(
                task_hot(&env, 2, 0, 1),
                hot,
                "{era}, destination busy: {dst_busy}"
            );
        }
    }
}

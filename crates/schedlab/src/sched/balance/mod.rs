//! Load balancing: periodic (from the tick, per domain level at its
//! interval), new-idle (a CPU about to idle pulls work), and active (a
//! running task pushed after repeated failures).
//!
//! This file holds the steps every era shares (the periodic and new-idle
//! drivers, load_balance, find_busiest_queue, detach and attach, task_hot,
//! active balance). find_busiest_group differs by era, one file each:
//! [`v2_6`] compares group loads from the cpu_load[] history, [`v4_15`]
//! types groups by capacity first, [`v6`] classifies groups and migrates
//! load, utilisation or tasks. They answer with an [`Imbalance`].

mod imbalance;
mod v2_6;
mod v4_15;
mod v6;

pub use crate::counters::IdleType;
use crate::counters::{Cause, Counter, LbOutcome, Level, Reason};
use crate::policy::{
    ActiveBalance, BalanceLoad, CacheHotBuddy, DetachOrder, DetachSkip, Era, GroupCompare,
    NewidleGate, SdFlag,
};
use crate::sched::env::{ran_recently, LbWork, SchedEnv};
use crate::sched::load::SCHED_CAPACITY_SCALE;
use crate::sched::load_index::instant_load;
use crate::sched::util::{cpu_util, task_util_est};
use crate::sched::why::{self, Op};
use imbalance::{Imbalance, Migrate};

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
    let era = env.policy().era;
    let gate = era.rules().newidle_gate;
    let avg_idle = env.avg_idle_ns(cpu);
    let overload = env.state().overload;
    why::begin_newidle(env, cpu);
    why::note(env, |t| {
        t.step(0, era.rules().fn_names.newidle);
        if gate != NewidleGate::Ungated {
            t.value("avg_idle (ns)", avg_idle as i64);
            t.value("root domain overloaded", overload as i64);
        }
    });
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
        why::note(env, |t| {
            t.note("skipped: not overloaded, or idle too short to pay")
        });
        why::finish_balance(env, None);
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
        why::note(env, |t| {
            t.sd(era, d.level, SdFlag::BalanceNewidle, newidle);
        });
        if needs_load_balance_flag(env.policy().era) && !load_balance_flag {
            continue;
        }
        let level_cost = env.state().lb[cpu][level].max_newidle_lb_cost_ns;
        if gate.gated() {
            why::note(env, |t| {
                t.cmp(
                    ("avg_idle", avg_idle as i64),
                    Op::Lt,
                    (
                        "curr_cost + sd->max_newidle_lb_cost",
                        (curr_cost + level_cost) as i64,
                    ),
                );
            });
        }
        if gate.gated() && avg_idle < curr_cost + level_cost {
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
    why::finish_balance(env, None);
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
    why::begin_balance(env, idle, this, name);
    let names = env.policy().era.rules().fn_names;
    why::note(env, |t| {
        t.step(0, names.load_balance);
        t.domain(name);
        t.step(1, names.find_busiest_group);
    });
    let found = find_busiest_group(env, this, level, idle);
    why::note(env, |t| match &found {
        None => t.note("balanced: nothing to pull"),
        Some(imb) => {
            t.value("imbalance", imb.amount.min(i64::MAX as u64) as i64);
            t.note(imb.kind.name());
        }
    });
    let Some(imb) = found else {
        why::finish_balance(env, None);
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
    let busiest = find_busiest_queue(env, &group, this, &imb);
    why::note(env, |t| {
        t.step(1, names.find_busiest_queue);
        match busiest {
            Some(c) => t.cpu(c, "busiest"),
            None => t.note("no queue to pull from"),
        }
    });
    let Some(busiest) = busiest else {
        why::finish_balance(env, None);
        clear_group_imbalance(env, this, level);
        return 0;
    };
    work.locked = Some(env.topology().distance(this, busiest));
    let failed = env.state().lb[this][level].nr_balance_failed;
    let hot_ok = (smt && env.policy().era.rules().smt_never_hot) || failed > cache_nice_tries;
    let kind = imb.kind;
    let (moved, pinned_short) =
        detach_and_attach(env, busiest, this, imb, idle, (hot_ok, failed), name, work);
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
        why::finish_balance(env, Some(busiest));
        env.state_mut().lb[this][level].nr_balance_failed = 0;
        env.count(lb(name, idle, LbOutcome::Pulled));
        return moved;
    }
    // Only periodic failures count: new-idle balancing is too frequent.
    if idle != IdleType::NewIdle {
        env.state_mut().lb[this][level].nr_balance_failed += 1;
    }
    let rule = env.policy().era.rules().active_balance;
    let failed = env.state().lb[this][level].nr_balance_failed;
    let pushable = may_push(rule, idle, kind);
    why::note(env, |t| {
        t.step(1, "need_active_balance");
        t.value("may push (this era, this idle type)", pushable as i64);
        t.cmp(
            ("nr_balance_failed", failed as i64),
            Op::Gt,
            ("cache_nice_tries + 2", cache_nice_tries as i64 + 2),
        );
    });
    let running = env.rq(busiest).curr;
    let pushed = pushable && failed > cache_nice_tries + 2 && env.active_balance(busiest, this);
    why::note(env, |t| {
        if let (true, Some(task)) = (pushed, running) {
            t.task(task, why::PUSHED);
        }
    });
    why::finish_balance(env, Some(busiest));
    if pushed {
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
    env.state_mut().llc_nr_idle_scan[llc] = nr_idle_scan(sum_util, llc_weight as u64, pct);
}

/// SIS_UTIL's scan budget for an LLC of `llc_weight` CPUs whose
/// utilisation (each CPU's capped at its capacity) sums to `sum_util`:
/// y = 1024 - x^2 pct^2 / (10000 x 1024) with x = sum_util / llc_weight,
/// nr = llc_weight x y / 1024; 0 from about 85% utilisation at
/// imbalance_pct 117 (update_idle_cpu_scan, v6.5).
pub(crate) fn nr_idle_scan(sum_util: u64, llc_weight: u64, pct: u64) -> u64 {
    let x = sum_util / llc_weight.max(1);
    let tmp = (x * x * pct * pct / (10_000 * SCHED_CAPACITY_SCALE)).min(SCHED_CAPACITY_SCALE);
    (SCHED_CAPACITY_SCALE - tmp) * llc_weight / SCHED_CAPACITY_SCALE
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
        GroupCompare::Classified => v6::find_busiest_group(env, this, level, idle),
        GroupCompare::TypedByLoad => v4_15::find_busiest_group(env, this, level, idle),
        GroupCompare::ByLoad => v2_6::find_busiest_group(env, this, level, idle),
    }
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
/// (affinity, not running, not cache-hot unless `hot_ok`, not too big for
/// what is left as the era judges it, after `failed` balance failures),
/// in the era's list order, until the imbalance is met; at most
/// nr_migrate looked at; one for new-idle where the era says so. Returns
/// the tasks moved and whether affinity refused a task while imbalance is
/// left (LBF_SOME_PINNED with env->imbalance > 0).
#[allow(clippy::too_many_arguments)]
fn detach_and_attach(
    env: &mut impl SchedEnv,
    busiest: usize,
    this: usize,
    imb: Imbalance,
    idle: IdleType,
    (hot_ok, failed): (bool, u32),
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
    why::note(env, |w| {
        w.step(1, "detach_tasks");
        w.value("hot tasks allowed", hot_ok as i64);
    });
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
            why::note(env, |w| w.task(t, "not allowed on this CPU"));
            some_pinned = several;
            skip(env, t);
            continue;
        }
        if env.rq(busiest).curr == Some(t) {
            why::note(env, |w| w.task(t, "running"));
            skip(env, t);
            continue;
        }
        if !hot_ok && task_hot(env, t, busiest, this) {
            why::note(env, |w| w.task(t, "cache hot"));
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
        if too_big(
            env.policy().era.rules().detach_skip,
            imb.kind,
            load,
            failed,
            left,
        ) {
            why::note(env, |w| {
                w.cmp(("load", load as i64), Op::Gt, ("imbalance left", left));
                w.task(t, "too big for what is left");
            });
            skip(env, t);
            continue;
        }
        why::note(env, |w| w.task(t, why::MOVED));
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

/// Whether detach_tasks passes over a task of `load` (its weight, PELT
/// load or utilisation, by the imbalance's kind) with `left` to move:
/// half its load too much (balance_tasks v2.6.28, detach_tasks v4.15), or
/// its load shifted right by the balance failures so far (shr_bound in
/// detach_tasks v6.5; util too in v6.12, where v6.5 compares it whole).
fn too_big(rule: DetachSkip, kind: Migrate, load: u64, failed: u32, left: i64) -> bool {
    let relaxed = (load >> failed.min(63)) as i64 > left;
    match (rule, kind) {
        (_, Migrate::Task) => false,
        (DetachSkip::HalfLoad, _) => (load / 2) as i64 > left,
        (_, Migrate::Load) | (DetachSkip::RelaxedLoadAndUtil, Migrate::Util) => relaxed,
        (DetachSkip::RelaxedLoad, Migrate::Util) => load as i64 > left,
    }
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
mod tests;

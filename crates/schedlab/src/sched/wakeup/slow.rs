//! The slow path for fork (SD_BALANCE_FORK), exec and SD_BALANCE_WAKE:
//! from the highest domain with the flag downwards, pick the idlest group,
//! then the idlest CPU in it, and continue in that CPU's child domain.
//!
//! 2.6.2x (sched_balance_self) compares groups by load on the forkexec_idx
//! history; 4.15 by runnable load with an absolute margin, blocked load
//! breaking near-ties, and spare capacity first for exec and wake; 6.5
//! classifies groups (has_spare < fully_busy < overloaded) first.

use super::placement::Placement;
use crate::counters::{Counter, Reason};
use crate::cpuset::CpuSet;
use crate::domains::Domain;
use crate::policy::{IdlestGroup, SdFlag};
use crate::sched::env::SchedEnv;
use crate::sched::groups::{
    adjust_numa_imbalance, cpu_capacity, group_stats, imb_numa_nr, GroupStats, GroupType,
};
use crate::sched::load::SCHED_CAPACITY_SCALE;
use crate::sched::load_index;
use crate::sched::why;

/// 2.6.2x sched_balance_self.
pub(super) fn sched_balance_self(
    env: &impl SchedEnv,
    p: usize,
    this: usize,
    flag: SdFlag,
) -> Placement {
    let start = env
        .domains()
        .of(this)
        .enumerate()
        .rev()
        .find(|(_, d)| d.has(flag))
        .map(|(i, _)| i);
    let mut placed = Placement::new(this, Reason::ForkLocal);
    why::note(env, |t| t.step(0, "sched_balance_self"));
    if let Some(level) = start {
        let cpu = walk(env, p, this, level, flag, 1);
        placed.step(Counter::SelectSlow);
        placed.decide(cpu, Reason::FindIdlestCpu);
    }
    placed
}

/// find_idlest_cpu (4.15 / 6.5) from `this`'s domain at index `level`.
pub(super) fn find_idlest_cpu(
    env: &impl SchedEnv,
    p: usize,
    this: usize,
    prev: usize,
    level: usize,
    flag: SdFlag,
) -> usize {
    let span = env
        .domains()
        .of(this)
        .nth(level)
        .map(|d| d.span)
        .unwrap_or_default();
    if span.intersection(env.allowed(p)).is_empty() {
        return prev;
    }
    walk(env, p, this, level, flag, 2)
}

/// The common descent: at each domain with `flag`, move to the idlest
/// group's idlest CPU and continue below it. `depth`: its steps' depth in
/// a decision record.
fn walk(
    env: &impl SchedEnv,
    p: usize,
    this: usize,
    level: usize,
    flag: SdFlag,
    depth: u8,
) -> usize {
    let mut cpu = this;
    let mut level = Some(level);
    while let Some(li) = level {
        let Some(sd) = env.domains().of(cpu).nth(li) else {
            break;
        };
        let child = li.checked_sub(1);
        if !sd.has(flag) {
            level = child;
            continue;
        }
        let Some(group) = find_idlest_group(env, sd, p, cpu, flag) else {
            why::note(env, |t| {
                t.step(depth, env.policy().era.rules().fn_names.find_idlest_group);
                t.sd(env.policy().era, sd.level, flag, true);
                t.note("the local group is the idlest");
            });
            level = child;
            continue;
        };
        let new_cpu = find_idlest_group_cpu(env, &group, p, cpu);
        why::note(env, |t| {
            t.step(depth, env.policy().era.rules().fn_names.find_idlest_group);
            t.sd(env.policy().era, sd.level, flag, true);
            t.cpu(new_cpu, "idlest CPU of the idlest group");
        });
        if new_cpu == cpu {
            level = child;
            continue;
        }
        // Continue in the highest domain of new_cpu below this one's size.
        let weight = sd.span.len();
        cpu = new_cpu;
        level = env
            .domains()
            .of(cpu)
            .enumerate()
            .take_while(|(_, d)| d.span.len() < weight)
            .filter(|(_, d)| d.has(flag))
            .map(|(i, _)| i)
            .last();
    }
    cpu
}

fn find_idlest_group(
    env: &impl SchedEnv,
    sd: &Domain,
    p: usize,
    this: usize,
    flag: SdFlag,
) -> Option<CpuSet> {
    match env.policy().era.rules().idlest_group {
        IdlestGroup::Classified => find_idlest_group_classified(env, sd, p, this),
        IdlestGroup::RunnableThenBlocked => find_idlest_group_4_15(env, sd, p, this, flag),
        IdlestGroup::ByLoad => find_idlest_group_by_load(env, sd, p, this),
    }
}

/// One group's figures for 4.15's find_idlest_group.
struct Idlest415 {
    /// Runnable load (source_load locally, target_load elsewhere, on the
    /// load index), per capacity.
    runnable: u64,
    /// cfs_rq_load_avg summed: PELT load including blocked tasks', per
    /// capacity.
    avg: u64,
    /// The most spare capacity of one CPU (capacity_spare_wake).
    spare: u64,
}

/// find_idlest_group (v4.15 kernel/sched/fair.c). A group is idler when
/// its runnable load is lower by more than `imbalance` = 1024 x (pct -
/// 100) / 100 (an absolute margin); within that margin, when its blocked-
/// inclusive load is lower by imbalance_scale = 100 + (pct - 100) / 2.
/// Exec and wake (not fork, whose task has no utilisation yet) first look
/// at spare capacity: stay local when the local group's most spare CPU
/// has more than half the task's util and is within imbalance_scale of
/// the best elsewhere, else take the group with the most spare capacity
/// if that exceeds half the task's util. Otherwise stay local unless the
/// idlest is clearly less loaded by the same two tests.
fn find_idlest_group_4_15(
    env: &impl SchedEnv,
    sd: &Domain,
    p: usize,
    this: usize,
    flag: SdFlag,
) -> Option<CpuSet> {
    let pct = sd.params.imbalance_pct as u64;
    let scale = 100 + (pct - 100) / 2;
    let imbalance = SCHED_CAPACITY_SCALE * (pct - 100) / 100;
    let idx = if flag == SdFlag::BalanceWake {
        sd.params.wake_idx
    } else {
        sd.params.forkexec_idx
    };
    let task_util = env.entity(p).pelt.util_avg;
    let mut local: Option<Idlest415> = None;
    let (mut min_runnable, mut min_avg) = (u64::MAX, u64::MAX);
    let mut idlest: Option<CpuSet> = None;
    let mut most_spare: Option<(u64, CpuSet)> = None;
    for g in &sd.groups {
        if g.intersection(env.allowed(p)).is_empty() {
            continue;
        }
        let is_local = g.contains(this);
        let (mut runnable, mut avg, mut spare, mut capacity) = (0u64, 0u64, 0u64, 0u64);
        for i in g.iter() {
            runnable += if is_local {
                load_index::source_load(env, i, idx)
            } else {
                load_index::target_load(env, i, idx)
            };
            avg += env.rq(i).pelt.load_avg;
            // capacity_spare_wake: capacity_orig minus cpu_util_wake, which
            // leaves out the task's own util on its previous CPU.
            let orig = cpu_capacity(env, i);
            let mut util = env.rq(i).pelt.util_avg;
            if i == env.task_cpu(p) && flag != SdFlag::BalanceFork {
                util = util.saturating_sub(task_util);
            }
            spare = spare.max(orig.saturating_sub(util.min(orig)));
            capacity += orig;
        }
        let s = Idlest415 {
            runnable: runnable * SCHED_CAPACITY_SCALE / capacity.max(1),
            avg: avg * SCHED_CAPACITY_SCALE / capacity.max(1),
            spare,
        };
        if is_local {
            local = Some(s);
            continue;
        }
        if min_runnable > s.runnable.saturating_add(imbalance) {
            (min_runnable, min_avg, idlest) = (s.runnable, s.avg, Some(*g));
        } else if s.runnable < min_runnable.saturating_add(imbalance)
            && 100 * min_avg as u128 > (scale * s.avg) as u128
        {
            (min_avg, idlest) = (s.avg, Some(*g));
        }
        if most_spare.as_ref().is_none_or(|(m, _)| *m < s.spare) && s.spare > 0 {
            most_spare = Some((s.spare, *g));
        }
    }
    let (this_runnable, this_avg, this_spare) =
        local.map_or((u64::MAX, u64::MAX, 0), |l| (l.runnable, l.avg, l.spare));
    if flag != SdFlag::BalanceFork {
        let best_spare = most_spare.as_ref().map_or(0, |(m, _)| *m);
        if this_spare > task_util / 2 && scale * this_spare > 100 * best_spare {
            return None;
        }
        if best_spare > task_util / 2 {
            return most_spare.map(|(_, g)| g);
        }
    }
    let idlest = idlest?;
    if min_runnable > this_runnable.saturating_add(imbalance) {
        return None;
    }
    if this_runnable < min_runnable.saturating_add(imbalance)
        && (100 * this_avg as u128) < (scale * min_avg) as u128
    {
        return None;
    }
    Some(idlest)
}

/// find_idlest_group (v2.6.28): the non-local group with the lowest
/// average load (source_load in the local group, target_load elsewhere, on
/// forkexec_idx, per the group's __cpu_power), unless the local group is
/// within half the imbalance_pct.
fn find_idlest_group_by_load(
    env: &impl SchedEnv,
    sd: &Domain,
    p: usize,
    this: usize,
) -> Option<CpuSet> {
    let idx = sd.params.forkexec_idx;
    let imbalance = 100 + (sd.params.imbalance_pct as u64 - 100) / 2;
    let mut this_load = None;
    let mut idlest: Option<(u64, CpuSet)> = None;
    for (g, &power) in sd.groups.iter().zip(&sd.power) {
        if g.intersection(env.allowed(p)).is_empty() {
            continue;
        }
        let local = g.contains(this);
        let sum: u64 = g
            .iter()
            .map(|i| {
                if local {
                    load_index::source_load(env, i, idx)
                } else {
                    load_index::target_load(env, i, idx)
                }
            })
            .sum();
        let avg = sum * SCHED_CAPACITY_SCALE / power;
        if local {
            this_load = Some(avg);
        } else if idlest.as_ref().is_none_or(|(min, _)| avg < *min) {
            idlest = Some((avg, *g));
        }
    }
    let (min_load, group) = idlest?;
    if 100 * this_load.unwrap_or(0) < imbalance * min_load {
        return None;
    }
    Some(group)
}

/// 6.5 find_idlest_group: lowest group type; ties by average load (busy
/// groups) or most idle CPUs then least utilisation (groups with spare
/// capacity); stay local unless the idlest is clearly better.
fn find_idlest_group_classified(
    env: &impl SchedEnv,
    sd: &Domain,
    p: usize,
    this: usize,
) -> Option<CpuSet> {
    let mut local = None;
    let mut idlest: Option<(GroupStats, CpuSet)> = None;
    for g in &sd.groups {
        if g.intersection(env.allowed(p)).is_empty() {
            continue;
        }
        let s = group_stats(env, sd, g, Some(p));
        if g.contains(this) {
            local = Some(s);
            continue;
        }
        let better = match &idlest {
            None => true,
            Some((best, _)) if s.kind != best.kind => s.kind < best.kind,
            Some((best, _)) => match s.kind {
                // Not used in the slow path: the first stays.
                GroupType::Imbalanced => false,
                GroupType::HasSpare => {
                    (s.idle_cpus, std::cmp::Reverse(s.util))
                        > (best.idle_cpus, std::cmp::Reverse(best.util))
                }
                _ => s.avg_load < best.avg_load,
            },
        };
        if better {
            idlest = Some((s, *g));
        }
    }
    let (idl, group) = idlest?;
    let Some(loc) = local else { return Some(group) };
    if loc.kind < idl.kind {
        return None;
    }
    if loc.kind > idl.kind {
        return Some(group);
    }
    let pct = sd.params.imbalance_pct as u64;
    match loc.kind {
        GroupType::Imbalanced => None,
        GroupType::HasSpare => {
            if sd.has(SdFlag::Numa) {
                // Keep the child near its parent while the local node would
                // stay below imb_numa_nr tasks (limited to the CPUs it may
                // use there), unless the idle CPUs differ by more than 2.
                let local_cpus = sd
                    .groups
                    .iter()
                    .find(|g| g.contains(this))
                    .map_or(0, |g| g.intersection(env.allowed(p)).len());
                let imb_numa_nr = imb_numa_nr(env, this, sd).min(local_cpus);
                let imbalance = loc.idle_cpus.abs_diff(idl.idle_cpus);
                if adjust_numa_imbalance(imbalance, loc.nr_running + 1, imb_numa_nr) == 0 {
                    return None;
                }
            }
            (loc.idle_cpus < idl.idle_cpus).then_some(group)
        }
        _ => {
            let imb = SCHED_CAPACITY_SCALE * (pct - 100) / 100;
            if idl.avg_load >= loc.avg_load + imb || 100 * loc.avg_load <= pct * idl.avg_load {
                return None;
            }
            if sd.has(SdFlag::Numa) && idl.avg_load + imb >= loc.avg_load {
                return None;
            }
            Some(group)
        }
    }
}

/// The idle CPU with the shallowest C-state (ties: the most recently
/// idled), else the least loaded (ties: `this`).
fn find_idlest_group_cpu(env: &impl SchedEnv, group: &CpuSet, p: usize, this: usize) -> usize {
    let allowed = group.intersection(env.allowed(p));
    let legacy = env.policy().era.is_legacy();
    if !legacy {
        let shallowest = allowed
            .iter()
            .filter(|&c| env.cpu_idle(c))
            .min_by_key(|&c| {
                let idle = env.idle_state(c);
                (idle.exit_latency_ns, std::cmp::Reverse(idle.since_ns))
            });
        if let Some(c) = shallowest {
            return c;
        }
    }
    let load = |c: usize| {
        if legacy {
            env.rq(c).load_weight
        } else {
            env.rq(c).pelt.load_avg
        }
    };
    let mut best = None;
    for c in allowed.iter() {
        let l = load(c);
        match best {
            None => best = Some((l, c)),
            Some((min, _)) if l < min || (l == min && c == this) => best = Some((l, c)),
            _ => {}
        }
    }
    best.map_or(this, |(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Era;
    use crate::sched::testenv::{level_index, TestEnv};
    use crate::sched::wakeup::{select_task_rq, WakeKind};

    /// find_idlest_group (v4.15 kernel/sched/fair.c) at MC on the 8-core
    /// desktop (cores {c, c + 8}, each thread 1178 / 2 = 589 of capacity,
    /// 1178 a core; MC imbalance_pct 117: imbalance 1024 x 17 / 100 = 174,
    /// imbalance_scale 108). Local core 0 runs two tasks of load 1024;
    /// core 1 one of 900 with 1000 of blocked load; core 2 one of 1000;
    /// cores 3-7 one of 1024 each. Per 1024 of capacity (x 1024 / 1178):
    /// runnable local 1780, core 1 782, core 2 869, others 890; blocked-
    /// inclusive core 1 1651, core 2 869, others 890.
    /// Core 1 sets min_runnable 782. Core 2 is within the margin (869 <
    /// 782 + 174) and 100 x 1651 > 108 x 869: it becomes the idlest (its
    /// avg 869). Cores 3-7: 100 x 869 > 108 x 890 fails. The local 1780 is
    /// not within the margin of 782: core 2 is returned, and a fork lands
    /// on its idle thread, CPU 10. (The old rule, lowest runnable per
    /// 1024 x CPUs, took core 1.)
    /// A wakeup through the slow path (SD_BALANCE_WAKE) of a task of util
    /// 400 that last ran on CPU 0 takes the spare-capacity path instead:
    /// core 0's most spare CPU has 589 - 500 = 89 (CPU 0's 900 less the
    /// task's own 400), below half the task's util; core 1 is the first
    /// with 589 spare (its idle thread 9), more than 200: core 1.
    #[test]
    fn find_idlest_group_4_15_margin_blocked_load_and_spare_capacity() {
        let mut env = TestEnv::era("desktop-8c", Era::V4_15);
        TestEnv::task(&mut env, 0, 1024, 500);
        TestEnv::task(&mut env, 8, 1024, 500);
        TestEnv::task(&mut env, 1, 900, 500);
        env.rqs[1].pelt.load_avg += 1000;
        TestEnv::task(&mut env, 2, 1000, 500);
        for c in 3..8 {
            TestEnv::task(&mut env, c, 1024, 500);
        }
        let p = env.sleeper(0);
        env.ents[p].pelt.util_avg = 400;
        env.rqs[0].pelt.util_avg += 400;
        let mc = level_index(&env, 0, "MC");
        let sd = env.domains.of(0).nth(mc).unwrap().clone();
        let core = |c: usize| CpuSet::from_iter([c, c + 8]);
        assert_eq!(
            find_idlest_group(&env, &sd, p, 0, SdFlag::BalanceFork),
            Some(core(2))
        );
        assert_eq!(
            find_idlest_group(&env, &sd, p, 0, SdFlag::BalanceWake),
            Some(core(1))
        );
        let child = env.sleeper(0);
        let placed = select_task_rq(&mut env, child, 0, 0, false, WakeKind::Fork);
        assert_eq!(placed.cpu, 10);
    }
}

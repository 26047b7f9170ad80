//! The slow path for fork (SD_BALANCE_FORK), exec and SD_BALANCE_WAKE:
//! from the highest domain with the flag downwards, pick the idlest group,
//! then the idlest CPU in it, and continue in that CPU's child domain.
//!
//! 2.6.2x (sched_balance_self) and 4.15 compare groups by load on the
//! forkexec_idx history; 6.5 classifies groups (has_spare < fully_busy <
//! overloaded) first.

use super::{legacy, Placement};
use crate::counters::{Counter, Reason};
use crate::cpuset::CpuSet;
use crate::domains::Domain;
use crate::policy::{GroupCompare, SdFlag};
use crate::sched::groups::{group_stats, GroupStats, GroupType};
use crate::sched::load::SCHED_CAPACITY_SCALE;
use crate::sched::SchedEnv;

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
    if let Some(level) = start {
        let cpu = walk(env, p, this, level, flag);
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
    walk(env, p, this, level, flag)
}

/// The common descent: at each domain with `flag`, move to the idlest
/// group's idlest CPU and continue below it.
fn walk(env: &impl SchedEnv, p: usize, this: usize, level: usize, flag: SdFlag) -> usize {
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
        let Some(group) = find_idlest_group(env, sd, p, cpu) else {
            level = child;
            continue;
        };
        let new_cpu = find_idlest_group_cpu(env, &group, p, cpu);
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

fn find_idlest_group(env: &impl SchedEnv, sd: &Domain, p: usize, this: usize) -> Option<CpuSet> {
    match env.policy().era.rules().group_compare {
        GroupCompare::Classified => find_idlest_group_classified(env, sd, p, this),
        GroupCompare::ByLoad | GroupCompare::TypedByLoad => {
            find_idlest_group_by_load(env, sd, p, this)
        }
    }
}

/// 2.6.2x / 4.15: the non-local group with the lowest average load
/// (source_load in the local group, target_load elsewhere, on
/// forkexec_idx), unless the local group is within half the imbalance_pct.
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
    for g in &sd.groups {
        if g.intersection(env.allowed(p)).is_empty() {
            continue;
        }
        let local = g.contains(this);
        let sum: u64 = g
            .iter()
            .map(|i| {
                if local {
                    legacy::source_load(env, i, idx)
                } else {
                    legacy::target_load(env, i, idx)
                }
            })
            .sum();
        let avg = sum * SCHED_CAPACITY_SCALE / (SCHED_CAPACITY_SCALE * g.len() as u64);
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

/// sd->imb_numa_nr as build_sched_domains() sets it (v6.5
/// kernel/sched/topology.c): on the first domain above the LLC, the number
/// of LLCs it spans (or an eighth of its CPUs when it spans one), at least
/// 1; above that, the same times how many first-NUMA-domain spans fit in
/// the domain; 0 at or below the LLC.
pub(crate) fn imb_numa_nr(env: &impl SchedEnv, cpu: usize, sd: &Domain) -> usize {
    let chain: Vec<&Domain> = env.domains().of(cpu).collect();
    let Some(first) = chain.iter().position(|d| !d.has(SdFlag::SharePkgResources)) else {
        return 0;
    };
    let Some(below) = first.checked_sub(1).map(|i| chain[i]) else {
        return 0;
    };
    if !below.has(SdFlag::SharePkgResources) {
        return 0;
    }
    let base = chain[first];
    let nr_llcs = base.span.len() / below.span.len();
    let imb = if nr_llcs == 1 {
        base.span.len() >> 3
    } else {
        nr_llcs
    }
    .max(1);
    let Some(at) = chain.iter().position(|d| d.span == sd.span) else {
        return 0;
    };
    if at < first {
        return 0;
    }
    if at == first {
        return imb;
    }
    let imb_span = chain[first + 1..]
        .iter()
        .find(|d| d.has(SdFlag::Numa))
        .map_or(base.span.len(), |d| d.span.len());
    imb * (sd.span.len() / imb_span).max(1)
}

/// adjust_numa_imbalance() (v6.5): an imbalance of at most two tasks is
/// allowed while the destination runs at most `imb_numa_nr` tasks.
pub(crate) fn adjust_numa_imbalance(
    imbalance: usize,
    dst_running: usize,
    imb_numa_nr: usize,
) -> usize {
    const NUMA_IMBALANCE_MIN: usize = 2;
    if dst_running > imb_numa_nr || imbalance > NUMA_IMBALANCE_MIN {
        imbalance
    } else {
        0
    }
}

//! What the fork/exec slow path and the load balancer share about sched
//! groups: their statistics (load, utilisation, runnable tasks, idle CPUs)
//! and type (has_spare < fully_busy < overloaded) as 5.5+ kernels
//! classify; their capacity as 4.15 computes it (2.6.2x power is the
//! domain's, `Domain::power`); sgc->imbalance; and 6.5's NUMA imbalance
//! allowance.

use crate::cpuset::CpuSet;
use crate::domains::Domain;
use crate::policy::SdFlag;
use crate::sched::env::SchedEnv;
use crate::sched::load::SCHED_CAPACITY_SCALE;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum GroupType {
    HasSpare,
    FullyBusy,
    /// v6.6+, balancer only: a core running more than one task, seen from
    /// an idle CPU (group_smt_balance).
    SmtBalance,
    /// sgc->imbalance set: affinity left a balance below short
    /// ([`sg_imbalanced`]).
    Imbalanced,
    Overloaded,
}

impl GroupType {
    /// The kernel's name (enum group_type, v6.5).
    pub(crate) fn name(self) -> &'static str {
        match self {
            GroupType::HasSpare => "group_has_spare",
            GroupType::FullyBusy => "group_fully_busy",
            GroupType::SmtBalance => "group_smt_balance",
            GroupType::Imbalanced => "group_imbalanced",
            GroupType::Overloaded => "group_overloaded",
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct GroupStats {
    pub kind: GroupType,
    pub load: u64,
    /// load x SCHED_CAPACITY_SCALE / capacity.
    pub avg_load: u64,
    pub util: u64,
    pub nr_running: usize,
    pub idle_cpus: usize,
    pub capacity: u64,
    pub weight: usize,
}

/// A group's statistics, leaving out task `exclude`'s own contribution (the
/// slow path places a task that may still be counted on its old CPU).
pub(crate) fn group_stats(
    env: &impl SchedEnv,
    sd: &Domain,
    g: &CpuSet,
    exclude: Option<usize>,
) -> GroupStats {
    let (mut load, mut util, mut runnable, mut nr, mut idle) = (0u64, 0u64, 0u64, 0usize, 0usize);
    for i in g.iter() {
        let rq = &env.rq(i);
        let mine = match exclude {
            Some(p) if env.task_cpu(p) == i => env.entity(p).pelt,
            _ => Default::default(),
        };
        load += rq.pelt.load_avg.saturating_sub(mine.load_avg);
        util += super::util::cpu_util(env, i, exclude, false);
        runnable += rq.pelt.runnable_avg.saturating_sub(mine.runnable_avg);
        nr += rq.nr_running;
        if env.cpu_idle(i) {
            idle += 1;
        }
    }
    let weight = g.len();
    let capacity = SCHED_CAPACITY_SCALE * weight as u64;
    let pct = sd.params.imbalance_pct as u64;
    let kind = if nr > weight && (capacity * 100 < util * pct || capacity * pct < runnable * 100) {
        GroupType::Overloaded
    } else if sg_imbalanced(env, sd.level, g) {
        GroupType::Imbalanced
    } else if nr < weight || (capacity * 100 > util * pct && capacity * pct >= runnable * 100) {
        GroupType::HasSpare
    } else {
        GroupType::FullyBusy
    };
    GroupStats {
        kind,
        load,
        avg_load: load * SCHED_CAPACITY_SCALE / capacity,
        util,
        nr_running: nr,
        idle_cpus: idle,
        capacity,
        weight,
    }
}

/// sd_init's smt_gain (v4.15 kernel/sched/topology.c): what a core's SMT
/// threads are worth together.
const SMT_GAIN: u64 = 1178;

/// x86 4.15 has no arch_scale_cpu_capacity of its own, so an SMT thread's
/// capacity is the SMT domain's smt_gain (1178) shared by its threads (589
/// each on 2-way SMT); other CPUs have 1024.
///
/// A CPU's capacity in 4.15 on x86: smt_gain split among SMT siblings.
pub(crate) fn cpu_capacity(env: &impl SchedEnv, cpu: usize) -> u64 {
    env.domains()
        .of(cpu)
        .find(|d| d.has(SdFlag::ShareCpuCapacity) && d.span.len() > 1)
        .map_or(SCHED_CAPACITY_SCALE, |d| SMT_GAIN / d.span.len() as u64)
}

/// sg_imbalanced (v4.15, v6.5): group `g` of a domain at level `level`
/// has its sgc->imbalance flag set.
pub(crate) fn sg_imbalanced(env: &impl SchedEnv, level: &'static str, g: &CpuSet) -> bool {
    env.policy().era.rules().affinity_group_imbalance
        && g.first()
            .is_some_and(|f| env.state().group_imbalance.contains(&(level, f)))
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

//! Group statistics shared by the fork slow path and the load balancer:
//! a sched group's load, utilisation, runnable tasks and idle CPUs, and its
//! type (has_spare < fully_busy < overloaded), as 5.5+ kernels classify.

use crate::cpuset::CpuSet;
use crate::domains::Domain;
use crate::sched::load::SCHED_CAPACITY_SCALE;
use crate::sched::SchedEnv;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum GroupType {
    HasSpare,
    FullyBusy,
    /// v6.6+, balancer only: a core running more than one task, seen from
    /// an idle CPU (group_smt_balance).
    SmtBalance,
    /// sgc->imbalance set: affinity left a balance below short
    /// (`sched::sg_imbalanced`).
    Imbalanced,
    Overloaded,
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
    } else if crate::sched::sg_imbalanced(env, sd.level, g) {
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

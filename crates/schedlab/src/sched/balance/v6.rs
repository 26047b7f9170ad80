//! find_busiest_group as 6.5 and 6.12 write it (v6.5 / v6.12
//! kernel/sched/fair.c: update_sg_lb_stats, group_classify,
//! update_sd_pick_busiest, find_busiest_group, calculate_imbalance,
//! sibling_imbalance): groups classified has_spare < fully_busy <
//! (smt_balance) < imbalanced < overloaded, the busiest picked by class
//! then load, and the imbalance as load, utilisation or tasks.

use super::imbalance::{Imbalance, Migrate};
use crate::counters::IdleType;
use crate::cpuset::CpuSet;
use crate::domains::Domain;
use crate::policy::SdFlag;
use crate::sched::env::SchedEnv;
use crate::sched::groups::{
    adjust_numa_imbalance, group_stats, imb_numa_nr, GroupStats, GroupType,
};
use crate::sched::load::SCHED_CAPACITY_SCALE;
use crate::sched::why;

/// 6.5: classify groups, pick the busiest by type then load, bail out when
/// balanced, and choose what to migrate.
pub(super) fn find_busiest_group(
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
    let newer_fully_busy_wins = env.policy().era.rules().smt_balance;
    let smt_balance = newer_fully_busy_wins && idle != IdleType::Busy;
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
                GroupType::Overloaded => s.avg_load > b.avg_load,
                // A fully busy group (or a busy core with no idle CPU):
                // update_sg_lb_stats computes avg_load only for overloaded
                // groups, so both are 0 here. v6.5 keeps the first group
                // (`<=`); v6.6+ keeps it only when the groups are SMT
                // cores ("SMT sched groups need more help"), else the
                // later group replaces it.
                _ => newer_fully_busy_wins && !groups_are_cores,
            },
        };
        if better {
            busiest = Some((gi, s));
        }
    }
    let local = local?;
    let (group, b) = busiest?;
    why::note(env, |t| {
        t.value("local.avg_load", local.avg_load as i64);
        t.value("local.idle_cpus", local.idle_cpus as i64);
        t.note(local.kind.name());
        t.cpu(d.groups[group].first().unwrap_or(this), "busiest group");
        t.note(b.kind.name());
        t.value("busiest.avg_load", b.avg_load as i64);
        t.value("busiest.sum_nr_running", b.nr_running as i64);
        t.value("busiest.idle_cpus", b.idle_cpus as i64);
    });
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
pub(super) fn sibling_imbalance(
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

//! find_busiest_group as 4.15 writes it (v4.15 kernel/sched/fair.c:
//! update_sg_lb_stats, update_sd_pick_busiest, find_busiest_group,
//! calculate_imbalance, fix_small_imbalance): groups typed overloaded or
//! other by capacity against utilisation, the busiest picked by type then
//! average load, a forced balance when the local group has room and the
//! busiest has none, and the imbalance in weighted load.
//! CPUs' capacity is `groups::cpu_capacity` (smt_gain shared by SMT threads).

use super::imbalance::{Imbalance, Migrate};
use crate::counters::IdleType;
use crate::policy::SdFlag;
use crate::sched::env::SchedEnv;
use crate::sched::groups::{cpu_capacity, sg_imbalanced};
use crate::sched::load::SCHED_CAPACITY_SCALE;
use crate::sched::load_index::instant_load;
use crate::sched::load_index::loads as legacy_loads;
use crate::sched::why::{self, Op};

/// group_type (v4.15): group_imbalanced is a group whose sgc->imbalance
/// an affinity-constrained balance below set (`groups::sg_imbalanced`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum GroupType {
    Other,
    Imbalanced,
    Overloaded,
}

/// sg_lb_stats (v4.15).
#[derive(Debug, Clone, Copy, Default)]
struct Stats {
    /// Sum of source_load (target_load for the local group) on the index.
    load: u64,
    util: u64,
    nr: u64,
    weighted: u64,
    idle_cpus: u64,
    capacity: u64,
    weight: u64,
    avg_load: u64,
    load_per_task: u64,
    no_capacity: bool,
    /// sg_imbalanced(group).
    imbalanced: bool,
}

impl GroupType {
    /// The kernel's name (enum group_type, v4.15).
    fn name(self) -> &'static str {
        match self {
            GroupType::Other => "busiest group: group_other",
            GroupType::Imbalanced => "busiest group: group_imbalanced",
            GroupType::Overloaded => "busiest group: group_overloaded",
        }
    }
}

impl Stats {
    fn kind(&self) -> GroupType {
        if self.no_capacity {
            GroupType::Overloaded
        } else if self.imbalanced {
            GroupType::Imbalanced
        } else {
            GroupType::Other
        }
    }

    /// group_has_capacity (v4.15).
    fn has_capacity(&self, pct: u64) -> bool {
        self.nr < self.weight || self.capacity * 100 > self.util * pct
    }
}

fn group_stats(
    env: &impl SchedEnv,
    g: &crate::cpuset::CpuSet,
    local: bool,
    idx: u32,
    pct: u64,
) -> Stats {
    let mut s = Stats {
        weight: g.len() as u64,
        ..Stats::default()
    };
    for i in g.iter() {
        let (source, target) = legacy_loads(env, i, idx);
        let capacity = cpu_capacity(env, i);
        let rq = env.rq(i);
        s.load += if local { target } else { source };
        // cpu_util: util_avg capped at the CPU's original capacity.
        s.util += rq.pelt.util_avg.min(capacity);
        s.nr += rq.nr_running as u64;
        s.weighted += instant_load(env, i);
        if rq.nr_running == 0 && env.cpu_idle(i) {
            s.idle_cpus += 1;
        }
        s.capacity += capacity;
    }
    s.avg_load = s.load * SCHED_CAPACITY_SCALE / s.capacity;
    s.load_per_task = s.weighted.checked_div(s.nr).unwrap_or(0);
    // group_is_overloaded
    s.no_capacity = s.nr > s.weight && s.capacity * 100 < s.util * pct;
    s
}

/// find_busiest_group (v4.15): the busiest group and how much weighted load
/// to move (possibly 0, which load_balance counts as a failure).
pub(super) fn find_busiest_group(
    env: &impl SchedEnv,
    this: usize,
    level: usize,
    idle: IdleType,
) -> Option<Imbalance> {
    let d = env.domains().of(this).nth(level).expect("level exists");
    let child = level
        .checked_sub(1)
        .and_then(|c| env.domains().of(this).nth(c));
    let prefer_sibling = child.is_some_and(|c| c.has(SdFlag::PreferSibling));
    let pct = d.params.imbalance_pct as u64;
    let idx = match idle {
        IdleType::Busy => d.params.busy_idx,
        IdleType::Idle => d.params.idle_idx,
        IdleType::NewIdle => d.params.newidle_idx,
    };
    let local_gi = d.group_of(this)?;
    let mut local = group_stats(env, &d.groups[local_gi], true, idx, pct);
    local.imbalanced = sg_imbalanced(env, d.level, &d.groups[local_gi]);
    let (mut total_load, mut total_capacity) = (local.load, local.capacity);
    // update_sd_pick_busiest starts from a zeroed "other" group.
    let mut busiest: Option<(usize, Stats)> = None;
    for (gi, g) in d.groups.iter().enumerate() {
        if gi == local_gi {
            continue;
        }
        let mut s = group_stats(env, g, false, idx, pct);
        s.imbalanced = sg_imbalanced(env, d.level, g);
        total_load += s.load;
        total_capacity += s.capacity;
        // A child preferring siblings: a group running two more tasks than
        // a local group with room is treated as having no capacity.
        if prefer_sibling && local.has_capacity(pct) && s.nr > local.nr + 1 {
            s.no_capacity = true;
        }
        let (kind, avg) = busiest.map_or((GroupType::Other, 0), |(_, b)| (b.kind(), b.avg_load));
        if s.kind() > kind || (s.kind() == kind && s.avg_load > avg) {
            busiest = Some((gi, s));
        }
    }
    let (group, b) = busiest?;
    why::note(env, |t| {
        t.cpu(d.groups[local_gi].first().unwrap_or(this), "local group");
        t.value("local.avg_load", local.avg_load as i64);
        t.value("local.sum_nr_running", local.nr as i64);
        t.cpu(d.groups[group].first().unwrap_or(this), b.kind().name());
        t.value("busiest.avg_load", b.avg_load as i64);
        t.value("busiest.sum_nr_running", b.nr as i64);
    });
    if b.nr == 0 {
        return None;
    }
    let domain_avg = SCHED_CAPACITY_SCALE * total_load / total_capacity;
    // A group_imbalanced busiest skips the checks below, which assume
    // every task could go anywhere.
    let forced = b.kind() == GroupType::Imbalanced
        || (idle != IdleType::Busy && local.has_capacity(pct) && b.no_capacity);
    why::note(env, |t| {
        t.value("sds.avg_load (the domain's)", domain_avg as i64);
        t.value(
            "force_balance (imbalanced, or local has room and busiest none)",
            forced as i64,
        );
        if !forced {
            t.cmp(
                ("local.avg_load", local.avg_load as i64),
                Op::Ge,
                ("busiest.avg_load", b.avg_load as i64),
            );
            t.cmp(
                ("local.avg_load", local.avg_load as i64),
                Op::Ge,
                ("sds.avg_load", domain_avg as i64),
            );
            if idle == IdleType::Idle {
                t.cmp(
                    ("local.idle_cpus", local.idle_cpus as i64),
                    Op::Le,
                    ("busiest.idle_cpus + 1", b.idle_cpus as i64 + 1),
                );
            } else {
                t.cmp(
                    ("100 * busiest.avg_load", 100 * b.avg_load as i64),
                    Op::Le,
                    (
                        "imbalance_pct * local.avg_load",
                        (pct * local.avg_load) as i64,
                    ),
                );
            }
        }
    });
    if !forced {
        if local.avg_load >= b.avg_load || local.avg_load >= domain_avg {
            return None;
        }
        let balanced = if idle == IdleType::Idle {
            b.kind() != GroupType::Overloaded && local.idle_cpus <= b.idle_cpus + 1
        } else {
            100 * b.avg_load <= pct * local.avg_load
        };
        if balanced {
            return None;
        }
    }
    Some(Imbalance {
        group,
        amount: calculate_imbalance(env, this, &local, &b, domain_avg),
        kind: Migrate::Load,
    })
}

/// calculate_imbalance (v4.15).
fn calculate_imbalance(
    env: &impl SchedEnv,
    this: usize,
    local: &Stats,
    b: &Stats,
    domain_avg: u64,
) -> u64 {
    // group_imbalanced: group-wide averages mislead, so a task counts at
    // most the domain's average load.
    let mut b = *b;
    if b.kind() == GroupType::Imbalanced {
        b.load_per_task = b.load_per_task.min(domain_avg);
    }
    let b = &b;
    if b.avg_load <= domain_avg || local.avg_load >= domain_avg {
        return fix_small_imbalance(env, this, local, b, 0);
    }
    // Both over capacity: do not pull the busiest below its capacity.
    let mut above_capacity = u64::MAX;
    if b.kind() == GroupType::Overloaded && local.kind() == GroupType::Overloaded {
        let load = b.nr * SCHED_CAPACITY_SCALE;
        if load > b.capacity {
            above_capacity = (load - b.capacity) * SCHED_CAPACITY_SCALE / b.capacity;
        }
    }
    let max_pull = (b.avg_load - domain_avg).min(above_capacity);
    let imbalance = (max_pull * b.capacity).min((domain_avg - local.avg_load) * local.capacity)
        / SCHED_CAPACITY_SCALE;
    if imbalance < b.load_per_task {
        return fix_small_imbalance(env, this, local, b, imbalance);
    }
    imbalance
}

/// fix_small_imbalance (v4.15): one task's load if moving it narrows the
/// gap, or if it raises the capacity used; else `imbalance` unchanged.
fn fix_small_imbalance(
    env: &impl SchedEnv,
    this: usize,
    local: &Stats,
    b: &Stats,
    imbalance: u64,
) -> u64 {
    let scale = SCHED_CAPACITY_SCALE;
    let mut imbn = 2;
    let mut local_per_task = local.load_per_task;
    if local.nr == 0 {
        // cpu_avg_load_per_task of the balancing CPU.
        let nr = env.rq(this).nr_running as u64;
        local_per_task = instant_load(env, this).checked_div(nr).unwrap_or(0);
    } else if b.load_per_task > local.load_per_task {
        imbn = 1;
    }
    let scaled = b.load_per_task * scale / b.capacity;
    if b.avg_load + scaled >= local.avg_load + scaled * imbn {
        return b.load_per_task;
    }
    let capa_now = (b.capacity * b.load_per_task.min(b.avg_load)
        + local.capacity * local_per_task.min(local.avg_load))
        / scale;
    let mut capa_move = 0;
    if b.avg_load > scaled {
        capa_move += b.capacity * b.load_per_task.min(b.avg_load - scaled);
    }
    let added = if b.avg_load * b.capacity < b.load_per_task * scale {
        b.avg_load * b.capacity / local.capacity
    } else {
        b.load_per_task * scale / local.capacity
    };
    capa_move += local.capacity * local_per_task.min(local.avg_load + added);
    capa_move /= scale;
    if capa_move > capa_now {
        b.load_per_task
    } else {
        imbalance
    }
}

#[cfg(test)]
mod tests {
    //! find_busiest_group (v4.15 kernel/sched/fair.c) on hand-built states.
    use super::*;
    use crate::policy::Era;
    use crate::sched::testenv::{level_index, TestEnv};

    /// Three hogs (load 1024, util 1024 each) on CPU 0 of the desktop's core
    /// {0, 8}; CPU 8 balances its SMT level as an idle CPU. Thread capacity
    /// is 1178 / 2 = 589, and cpu_util caps CPU 0's 3072 at 589.
    #[test]
    fn smt_level_forces_a_balance_from_an_overloaded_thread() {
        let mut env = TestEnv::era("desktop-8c", Era::V4_15);
        env.hogs(&[0], 3);
        assert_eq!(cpu_capacity(&env, 0), 589);
        let smt = level_index(&env, 8, "SMT");
        let imb = find_busiest_group(&env, 8, smt, IdleType::Idle).expect("imbalanced");
        // Group {0}: 589 x 100 = 58,900 < 589 x 110 = 64,790 with 3 tasks on
        // one CPU: overloaded; the local group {8} has room: forced.
        // avg_load 3072 x 1024 / 589 = 5340; domain 3072 x 1024 / 1178 = 2670;
        // imbalance min(2670 x 589, 2670 x 589) / 1024 = 1535 (not below the
        // 1024 per task, so no fix-up).
        assert_eq!(imb.amount, 1535);
        assert_eq!(
            env.domains.of(8).nth(smt).unwrap().groups[imb.group].first(),
            Some(0)
        );
    }

    /// CPU 1 balances MC (idle): core {0, 8} is not overloaded by
    /// utilisation (1178 x 100 = 117,800 > 589 x 117 = 68,913), but SMT's
    /// SD_PREFER_SIBLING makes it over capacity: it runs 3 tasks, more than
    /// the empty local core's 0 + 1, and the local core has room. Forced:
    /// avg_load 3072 x 1024 / 1178 = 2670, domain 3072 x 1024 / 9424 = 333,
    /// imbalance min(2337 x 1178, 333 x 1178) / 1024 = 383 < 1024 per task,
    /// so fix_small_imbalance: scaled 1024 x 1024 / 1178 = 890, and
    /// 2670 + 890 >= 0 + 2 x 890 moves one task's load, 1024.
    #[test]
    fn prefer_sibling_forces_one_task_onto_an_idle_core() {
        let mut env = TestEnv::era("desktop-8c", Era::V4_15);
        env.hogs(&[0], 3);
        let mc = level_index(&env, 1, "MC");
        let imb = find_busiest_group(&env, 1, mc, IdleType::Idle).expect("imbalanced");
        assert_eq!(imb.amount, 1024);
        let group = env.domains.of(1).nth(mc).unwrap().groups[imb.group];
        assert!(group.contains(0) && group.contains(8));
    }

    /// Two hogs on CPU 0 and one on every other CPU of the desktop, with
    /// steady cpu_load[] histories; busy CPU 2 balances MC on busy_idx 2.
    /// Core {0, 8}: load 3072, 3 tasks on 2 threads, util 589 + 589 = 1178,
    /// and 1178 x 100 = 117,800 < 1178 x 117 = 137,826: overloaded. Its
    /// avg_load 3072 x 1024 / 1178 = 2670 against the local core's 2048 x
    /// 1024 / 1178 = 1780 clears imbalance_pct (267,000 > 117 x 1780 =
    /// 208,260); the domain average is 1024 x 17,408 / 9424 = 1891. The
    /// imbalance min(779 x 1178, 111 x 1178) / 1024 = 127 is below a task's
    /// 1024, so fix_small_imbalance: equal loads per task keep imbn at 2,
    /// scaled = 1024 x 1024 / 1178 = 890, and 2670 + 890 >= 1780 + 2 x 890
    /// (3560 >= 3560) moves one task's load.
    #[test]
    fn a_busy_cpu_uses_imbalance_pct_and_the_small_imbalance_fix() {
        let mut env = TestEnv::era("desktop-8c", Era::V4_15);
        env.hogs(&[0], 2);
        env.hogs(&(1..16).collect::<Vec<_>>(), 1);
        env.cpu_loads[0].cpu_load = [2048; 5];
        for c in 1..16 {
            env.cpu_loads[c].cpu_load = [1024; 5];
        }
        let mc = level_index(&env, 2, "MC");
        let d = env.domains.of(2).nth(mc).unwrap();
        assert_eq!((d.params.imbalance_pct, d.params.busy_idx), (117, 2));
        let imb = find_busiest_group(&env, 2, mc, IdleType::Busy).expect("imbalanced");
        assert_eq!(imb.amount, 1024);
    }
}

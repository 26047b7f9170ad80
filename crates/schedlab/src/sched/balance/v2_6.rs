//! find_busiest_group as 2.6.2x writes it (v2.6.28 kernel/sched.c; 2.6.27's
//! is the same): groups' loads on the idle type's cpu_load[] index, a
//! group over its capacity or internally imbalanced as the busiest, and
//! the imbalance in weighted load with the small-imbalance fix-up.
//! Groups' power is the domain's (`Domain::power`, set when the domains
//! are built), which find_idlest_group divides by too.

use super::imbalance::{Imbalance, Migrate};
use crate::counters::IdleType;
use crate::sched::env::SchedEnv;
use crate::sched::load::SCHED_CAPACITY_SCALE;
use crate::sched::load_index::loads as legacy_loads;
use crate::sched::why::{self, Op};

const SCALE: u64 = SCHED_CAPACITY_SCALE;

/// One group's tally in find_busiest_group (v2.6.28).
#[derive(Debug, Clone, Copy, Default)]
struct Group {
    /// Sum of source_load (target_load for the local group), then scaled
    /// by power: the group's avg_load.
    avg_load: u64,
    power: u64,
    nr: u64,
    /// Sum of the queues' weights (weighted_cpuload).
    weighted: u64,
    /// Spread of the CPUs' loads beyond two tasks' average weight.
    imbalanced: bool,
}

/// cpu_avg_load_per_task (v2.6.28): the queue's weight per task.
fn cpu_avg_load_per_task(env: &impl SchedEnv, cpu: usize) -> u64 {
    let rq = env.rq(cpu);
    rq.load_weight
        .checked_div(rq.nr_running as u64)
        .unwrap_or(0)
}

fn tally(
    env: &impl SchedEnv,
    g: &crate::cpuset::CpuSet,
    local: bool,
    idx: u32,
    power: u64,
) -> Group {
    let (mut load, mut nr, mut weighted, mut per_task) = (0, 0, 0, 0);
    let (mut max_cpu, mut min_cpu) = (0, u64::MAX);
    for i in g.iter() {
        let (source, target) = legacy_loads(env, i, idx);
        let l = if local { target } else { source };
        if !local {
            max_cpu = max_cpu.max(l);
            min_cpu = min_cpu.min(l);
        }
        load += l;
        nr += env.rq(i).nr_running as u64;
        weighted += env.rq(i).load_weight;
        per_task += cpu_avg_load_per_task(env, i);
    }
    let avg_per_task = per_task * SCALE / power;
    Group {
        avg_load: load * SCALE / power,
        power,
        nr,
        weighted,
        // The local group's min stays at u64::MAX: never imbalanced.
        imbalanced: max_cpu.saturating_sub(min_cpu) > 2 * avg_per_task,
    }
}

/// find_busiest_group (v2.6.28): the busiest group and the weighted load
/// to move, or None when balanced.
pub(super) fn find_busiest_group(
    env: &impl SchedEnv,
    this: usize,
    level: usize,
    idle: IdleType,
) -> Option<Imbalance> {
    let d = env.domains().of(this).nth(level).expect("level exists");
    let p = &d.params;
    let idx = match idle {
        IdleType::Busy => p.busy_idx,
        IdleType::Idle => p.idle_idx,
        IdleType::NewIdle => p.newidle_idx,
    };
    let local_gi = d.group_of(this)?;
    let (mut total_load, mut total_pwr) = (0, 0);
    let mut local = Group::default();
    let mut busiest: Option<(usize, Group)> = None;
    for (gi, g) in d.groups.iter().enumerate() {
        let power = d.power[gi];
        let s = tally(env, g, gi == local_gi, idx, power);
        total_load += s.avg_load * power / SCALE;
        total_pwr += power;
        let capacity = power / SCALE;
        if gi == local_gi {
            local = s;
        } else if s.avg_load > busiest.map_or(0, |(_, b)| b.avg_load)
            && (s.nr > capacity || s.imbalanced)
        {
            busiest = Some((gi, s));
        }
    }
    let (group, b) = busiest?;
    let avg = SCALE * total_load / total_pwr;
    why::note(env, |t| {
        t.value("this_load (local avg_load)", local.avg_load as i64);
        t.cpu(d.groups[group].first().unwrap_or(this), "busiest group");
        t.value("max_load (busiest avg_load)", b.avg_load as i64);
        t.value("busiest nr_running", b.nr as i64);
        t.value("avg_load (the domain's)", avg as i64);
        t.cmp(
            ("this_load", local.avg_load as i64),
            Op::Ge,
            ("max_load", b.avg_load as i64),
        );
        t.cmp(
            ("this_load", local.avg_load as i64),
            Op::Ge,
            ("avg_load", avg as i64),
        );
        t.cmp(
            ("100 * max_load", 100 * b.avg_load as i64),
            Op::Le,
            (
                "imbalance_pct * this_load",
                (p.imbalance_pct as u64 * local.avg_load) as i64,
            ),
        );
    });
    if local.avg_load >= b.avg_load || b.nr == 0 {
        return None;
    }
    if local.avg_load >= avg || 100 * b.avg_load <= p.imbalance_pct as u64 * local.avg_load {
        return None;
    }
    let mut per_task = b.weighted / b.nr;
    if b.imbalanced {
        per_task = per_task.min(avg);
    }
    if b.avg_load <= per_task {
        return None;
    }
    let amount = if b.avg_load < avg {
        fix_small_imbalance(env, this, &local, &b, per_task, 0)
    } else {
        // Pull no group below the average, nor the busiest below one task.
        let max_pull = (b.avg_load - avg).min(b.avg_load - per_task);
        let amount = (max_pull * b.power).min((avg - local.avg_load) * local.power) / SCALE;
        if amount < per_task {
            fix_small_imbalance(env, this, &local, &b, per_task, amount)
        } else {
            amount
        }
    };
    Some(Imbalance {
        group,
        amount,
        kind: Migrate::Load,
    })
}

/// The small_imbalance block of find_busiest_group (v2.6.28): one task's
/// load if the gap is at least a task (two when this group's tasks are at
/// least as heavy), or if moving one raises the CPU power used; else
/// `imbalance` unchanged.
fn fix_small_imbalance(
    env: &impl SchedEnv,
    this: usize,
    local: &Group,
    b: &Group,
    per_task: u64,
    imbalance: u64,
) -> u64 {
    let (this_per_task, imbn) = match local.weighted.checked_div(local.nr) {
        // Lighter tasks here than there: a one-task gap is enough.
        Some(t) => (t, if per_task > t { 1 } else { 2 }),
        None => (cpu_avg_load_per_task(env, this), 2),
    };
    if b.avg_load - local.avg_load + per_task >= per_task * imbn {
        return per_task;
    }
    let pwr_now = (b.power * per_task.min(b.avg_load)
        + local.power * this_per_task.min(local.avg_load))
        / SCALE;
    let mut pwr_move = 0;
    let removed = per_task * SCALE / b.power;
    if b.avg_load > removed {
        pwr_move += b.power * per_task.min(b.avg_load - removed);
    }
    let added = if b.avg_load * b.power < per_task * SCALE {
        b.avg_load * b.power / local.power
    } else {
        per_task * SCALE / local.power
    };
    pwr_move += local.power * this_per_task.min(local.avg_load + added);
    pwr_move /= SCALE;
    if pwr_move > pwr_now {
        per_task
    } else {
        imbalance
    }
}

#[cfg(test)]
mod tests {
    //! find_busiest_group (v2.6.28 kernel/sched.c) on hand-built states.
    use super::*;
    use crate::policy::Era;
    use crate::sched::testenv::{level_index, TestEnv};

    /// The 2008 box's MC level (one CPU per group, power 1024 each), with
    /// histories equal to the current loads. CPU 0 runs 3 tasks, CPU 1 one.
    /// Groups {0}: avg 3072, 3 tasks > capacity 1, 1024 per task; {1}:
    /// 1024; {2} (local) and {3}: 0. Domain average 4096 x 1024 / 4096 =
    /// 1024; max_pull = min(3072 - 1024, 3072 - 1024) = 2048; imbalance =
    /// min(2048 x 1024, (1024 - 0) x 1024) / 1024 = 1024, a whole task.
    #[test]
    fn moves_the_load_above_the_average() {
        let mut env = TestEnv::era("phoenix-2008", Era::V2_6_28);
        env.hogs(&[0], 3);
        env.hogs(&[1], 1);
        env.cpu_loads[0].cpu_load = [3072; 5];
        env.cpu_loads[1].cpu_load = [1024; 5];
        let mc = level_index(&env, 2, "MC");
        let imb = find_busiest_group(&env, 2, mc, IdleType::Idle).expect("imbalanced");
        assert_eq!(
            env.domains.of(2).nth(mc).unwrap().groups[imb.group].first(),
            Some(0)
        );
        assert_eq!((imb.kind, imb.amount), (Migrate::Load, 1024));
        // The busiest must exceed the local group by imbalance_pct.
        env.hogs(&[2], 3);
        env.cpu_loads[2].cpu_load = [3072; 5];
        assert!(find_busiest_group(&env, 2, mc, IdleType::Idle).is_none());
    }

    /// The small imbalance: CPU 0 runs 2 tasks, CPUs 1 and 2 (local) one
    /// each, CPU 3 none. {0}: avg 2048, 2 tasks > 1; average 4096 x 1024 /
    /// 4096 = 1024 = local's 1024: balanced (this_load >= avg) before any
    /// fix-up. With CPU 3 running one too, the average is 5120 / 4 = 1280:
    /// max_pull = min(768, 1024) = 768, imbalance = min(768, 256) = 256 <
    /// 1024 per task; imbn = 2 (equal tasks), and 2048 - 1024 + 1024 >= 2 x
    /// 1024: one task's load, 1024.
    #[test]
    fn small_imbalance_moves_one_task_when_the_gap_is_a_task() {
        let mut env = TestEnv::era("phoenix-2008", Era::V2_6_28);
        env.hogs(&[0], 2);
        env.hogs(&[1, 2], 1);
        env.cpu_loads[0].cpu_load = [2048; 5];
        for c in [1, 2] {
            env.cpu_loads[c].cpu_load = [1024; 5];
        }
        let mc = level_index(&env, 2, "MC");
        assert!(find_busiest_group(&env, 2, mc, IdleType::Busy).is_none());
        env.hogs(&[3], 1);
        env.cpu_loads[3].cpu_load = [1024; 5];
        let imb = find_busiest_group(&env, 2, mc, IdleType::Busy).expect("imbalanced");
        assert_eq!(imb.amount, 1024);
    }

    /// __group_imb on the NODE level: node 1 (CPUs 4-7) runs 4 tasks, all
    /// on CPU 4. Its CPUs' source loads run from 4096 to 0, more than twice
    /// its average load per task (CPU 4's 1024 per task, the others' 0,
    /// summed and scaled by the node's power 1024: 1024; twice is 2048).
    #[test]
    fn a_group_with_spread_loads_counts_as_imbalanced() {
        let mut env = TestEnv::era("phoenix-2008", Era::V2_6_28);
        env.hogs(&[4], 4);
        env.cpu_loads[4].cpu_load = [4096; 5];
        let node = level_index(&env, 0, "NODE");
        let d = env.domains.of(0).nth(node).unwrap();
        let g = d.groups.iter().position(|g| g.contains(4)).unwrap();
        let s = tally(&env, &d.groups[g], false, 0, SCALE);
        assert!(s.imbalanced);
        assert_eq!((s.avg_load, s.nr), (4096, 4));
    }

    /// init_numa_sched_groups_power (v2.6.28 kernel/sched.c) on a machine
    /// of 2 nodes x 2 packages x 2 cores: MC groups are CPUs (1024), CPU
    /// groups are packages (1024: their MC child shares the cache), and a
    /// NODE group adds each of its packages' power once: 2048, where
    /// schedlab counted 1024 per CPU (4096).
    /// CPU 0 balances node 1, whose CPUs 4, 5 and 6 run one task each
    /// (cpu_load 1024), at NODE while idle. Node 1's capacity is 2048 / 1024
    /// = 2 tasks, so its 3 make it the busiest (at 4096 it had room for
    /// 4 and the domain was balanced): avg_load 3072 x 1024 / 2048 = 1536,
    /// the domain's 1536 x 2 x 1024 / 4096 = 768, per task 1024; max_pull
    /// = min(1536 - 768, 1536 - 1024) = 512, imbalance = min(512 x 2048,
    /// 768 x 2048) / 1024 = 1024: one task.
    #[test]
    fn node_group_power_2_6_28_adds_each_package_once() {
        use crate::topology::{HwCosts, Layout, MachineSpec, Numbering, Shape};
        let spec = MachineSpec {
            name: "two-packages-per-node".into(),
            description: String::new(),
            layout: Layout::Shape(Shape {
                nodes: 2,
                packages_per_node: 2,
                llcs_per_package: 1,
                cores_per_llc: 2,
                threads_per_core: 1,
                numbering: Numbering::default(),
            }),
            distances: None,
            costs: HwCosts::default(),
            calibration: None,
        };
        let mut env = TestEnv::with_machine(spec, crate::policy::PolicySpec::era(Era::V2_6_28));
        let power = |env: &TestEnv, level: &str| {
            let li = level_index(env, 0, level);
            let d = env.domains.of(0).nth(li).unwrap();
            d.power.clone()
        };
        assert_eq!(power(&env, "MC"), vec![1024, 1024]);
        assert_eq!(power(&env, "CPU"), vec![1024, 1024]);
        assert_eq!(power(&env, "NODE"), vec![2048, 2048]);
        env.hogs(&[4, 5, 6], 1);
        for c in [4, 5, 6] {
            env.cpu_loads[c].cpu_load = [1024; 5];
        }
        let node = level_index(&env, 0, "NODE");
        let imb = find_busiest_group(&env, 0, node, IdleType::Idle).expect("imbalanced");
        assert_eq!(
            env.domains.of(0).nth(node).unwrap().groups[imb.group].first(),
            Some(4)
        );
        assert_eq!((imb.kind, imb.amount), (Migrate::Load, 1024));
    }
}

//! find_busiest_group, calculate_imbalance and load_balance on hand-built
//! states, each era by the kernel function it follows.
use super::v6::{find_busiest_group as find_busiest_group_classified, sibling_imbalance};
use super::*;
use crate::cpuset::CpuSet;
use crate::sched::groups::{group_stats, imb_numa_nr, GroupStats, GroupType};
use crate::sched::testenv::{level_index, TestEnv};
use crate::topology::CpuDistance;

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
        find_busiest_group_classified(&env, 1, mc, IdleType::Busy).map(|imb| (imb.kind, imb.amount))
    };
    assert_eq!(run(Era::V6_5), Some((Migrate::Task, 1)));
    assert_eq!(run(Era::V6_12), None);
}

/// update_sd_pick_busiest between two fully busy groups (v6.5, v6.12):
/// avg_load is computed only for overloaded groups, so it is 0 for both.
/// Idle CPU 4's PKG level on a machine of 3 LLCs x 2 cores, no SMT, sees
/// its own LLC, then {0, 1} (two tasks of load 900, util 1000: fully
/// busy), then {2, 3} (load 500). 6.5 keeps the first (`<=`); 6.12 lets
/// the later one replace it, the groups not being SMT cores. The
/// heavier group's load never decides.
#[test]
fn update_sd_pick_busiest_fully_busy_groups_by_order_not_load() {
    let run = |era: Era| {
        let mut spec = crate::topology::preset("desktop-8c").unwrap();
        spec.layout = crate::topology::Layout::Shape(crate::topology::Shape {
            nodes: 1,
            packages_per_node: 1,
            llcs_per_package: 3,
            cores_per_llc: 2,
            threads_per_core: 1,
            numbering: Default::default(),
        });
        let mut env = TestEnv::with_machine(spec, crate::policy::PolicySpec::era(era));
        for (cpu, load) in [(0, 900), (1, 900), (2, 500), (3, 500)] {
            TestEnv::task(&mut env, cpu, load, 1000);
        }
        let pkg = env.domains.of(4).count() - 1;
        let d = env.domains.of(4).nth(pkg).unwrap();
        let imb = find_busiest_group_classified(&env, 4, pkg, IdleType::Idle).expect("a pull");
        d.groups[imb.group].iter().collect::<Vec<_>>()
    };
    assert_eq!(run(Era::V6_5), vec![0, 1]);
    assert_eq!(run(Era::V6_12), vec![2, 3]);
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
        assert_eq!(imb_numa_nr(&env, 10, d), 2);
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
        let moved = detach_and_attach(
            &mut env,
            0,
            1,
            imb,
            IdleType::Idle,
            (true, 0),
            "MC",
            &mut work,
        )
        .0;
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
        env.ents[t].exec_start_ns = Some(env.now - 10_000_000);
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
        (true, 0),
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
        (true, 0),
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
            env.ents[t].exec_start_ns = Some(env.now);
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

/// detach_tasks' size check by era: balance_tasks (v2.6.28) and
/// detach_tasks (v4.15) pass over a task whose half load exceeds what is
/// left; detach_tasks v6.5 a task whose load >> nr_balance_failed does
/// (shr_bound, capped at 63), and whose util does, whole, for a util
/// imbalance; v6.12 shifts util too (since v6.8).
#[test]
fn detach_tasks_too_big_by_era() {
    use DetachSkip::*;
    // Half the load against what is left.
    assert!(too_big(HalfLoad, Migrate::Load, 1024, 5, 511));
    assert!(!too_big(HalfLoad, Migrate::Load, 1024, 0, 512));
    // Load relaxed by failures: 1024 is too big for 600 until one failure.
    assert!(too_big(RelaxedLoad, Migrate::Load, 1024, 0, 600));
    assert!(!too_big(RelaxedLoad, Migrate::Load, 1024, 1, 600));
    assert!(!too_big(RelaxedLoad, Migrate::Load, u64::MAX / 2, 200, 1));
    // Util: whole in v6.5, relaxed in v6.12.
    assert!(too_big(RelaxedLoad, Migrate::Util, 700, 3, 600));
    assert!(!too_big(RelaxedLoadAndUtil, Migrate::Util, 700, 1, 600));
    assert!(too_big(RelaxedLoadAndUtil, Migrate::Util, 700, 0, 600));
    // A task count never is.
    assert!(!too_big(RelaxedLoad, Migrate::Task, 1, 0, 0));
}

/// detach_tasks (v6.12): with 600 of load left to move and hogs of load
/// 1024 queued, the first balance moves none (1024 > 600); after one
/// failure (1024 >> 1 = 512) it moves one.
#[test]
fn detach_tasks_6_12_moves_a_big_task_only_after_a_failure() {
    for (failed, want) in [(0, 0), (1, 1)] {
        let mut env = TestEnv::era("desktop-8c", Era::V6_12);
        env.hogs(&[0], 3);
        let imb = Imbalance {
            group: 0,
            amount: 600,
            kind: Migrate::Load,
        };
        let mut work = LbWork::default();
        let moved = detach_and_attach(
            &mut env,
            0,
            2,
            imb,
            IdleType::Idle,
            (true, failed),
            "MC",
            &mut work,
        )
        .0;
        assert_eq!(moved, want, "after {failed} failures");
    }
}

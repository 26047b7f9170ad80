//! Placement decisions on hand-built states (`sched::testenv`): CPUs made
//! busy by queued hogs, a sleeping task `p` whose prev and recent CPUs the
//! test sets, load histories written directly.

use super::{v2_6, v4_15, Placement, WakeKind};
use crate::counters::{Affine, Counter, Reason, Sis};
use crate::policy::{Era, PolicySpec, SdFlag};
use crate::sched::balance::nr_idle_scan;
use crate::sched::groups::{adjust_numa_imbalance, imb_numa_nr};
use crate::sched::testenv::TestEnv;

/// select_idle_sibling (6.5: select_idle_sibling_6_5, v6.5 kernel/sched/fair.c)
/// on the 8-core desktop (CPU c and c + 8 are siblings).
fn sis_6_5(
    busy_cpus: &[usize],
    prev: usize,
    recent: usize,
    target: usize,
    idle_core_hint: bool,
) -> Option<(usize, Sis)> {
    let mut env = TestEnv::era("desktop-8c", Era::V6_5);
    // Busy CPUs that only just became busy (util_avg 100), so SIS_UTIL
    // allows a scan: with 15 of them x = 93, 93^2 x 117^2 / (10000 x 1024) = 11,
    // nr = (1024 - 11) x 16 / 1024 = 15.
    for &c in busy_cpus {
        env.task(c, 1024, 100);
    }
    let p = env.sleeper(prev);
    env.tasks[p].recent_used_cpu = recent;
    env.state.llc_has_idle_cores[0] = idle_core_hint;
    let mut placed = Placement::new(prev, Reason::Prev);
    v4_15::select_idle_sibling_6_5(&mut env, &mut placed, p, prev, target, target)
}

#[test]
fn select_idle_sibling_6_5_order() {
    assert_eq!(sis_6_5(&[], 5, 5, 3, false), Some((3, Sis::TargetIdle)));
    assert_eq!(sis_6_5(&[3], 5, 5, 3, false), Some((5, Sis::PrevIdle)));
    assert_eq!(sis_6_5(&[3, 5], 5, 6, 3, false), Some((6, Sis::Recent)));
    // No idle core flagged: an idle SMT sibling of prev (5's is 13).
    assert_eq!(sis_6_5(&[3, 5, 6], 5, 6, 3, false), Some((13, Sis::Smt)));
    // Idle cores flagged: scan cores from target + 1; core 4 = {4, 12} is idle.
    assert_eq!(
        sis_6_5(&[3, 5, 6], 5, 6, 3, true),
        Some((4, Sis::ScanFound))
    );
    // Single-CPU scan from target + 1 (4 is busy, 12's sibling too): 7.
    let all_but: Vec<usize> = (0..16).filter(|&c| c != 7).collect();
    assert_eq!(sis_6_5(&all_but, 5, 6, 3, false), Some((7, Sis::ScanFound)));
    let all: Vec<usize> = (0..16).collect();
    assert_eq!(sis_6_5(&all, 5, 6, 3, false), None);
}

#[test]
fn sis_util_stops_scanning_a_busy_llc() {
    // 15 of 16 CPUs busy for 300 ms: utilisation near 94% is past SIS_UTIL's
    // ~85% cut-off, so the idle CPU 7 is not searched for.
    // Each busy CPU's util_avg is 1024: x = 15 x 1024 / 16 = 960;
    // 960^2 x 117^2 / (10000 x 1024) = 1232, capped at 1024, so
    // nr = (1024 - 1024) x 16 / 1024 = 0 and the budget is 0 + 1 = 1.
    let all_but: Vec<usize> = (0..16).filter(|&c| c != 7).collect();
    let mut env = TestEnv::era("desktop-8c", Era::V6_5);
    env.hogs(&all_but, 1);
    // The budget is what the LLC's last periodic balance wrote: the whole
    // LLC at first, then none at this utilisation.
    assert_eq!(env.state.llc_nr_idle_scan[0], 16);
    assert_eq!(nr_idle_scan(15 * 1024, 16, 117), 0);
    env.state.llc_nr_idle_scan[0] = 0;
    let p = env.sleeper(5);
    let mut placed = Placement::new(5, Reason::Prev);
    assert_eq!(
        v4_15::select_idle_sibling_6_5(&mut env, &mut placed, p, 5, 3, 3),
        None
    );
    assert!(
        placed.path.contains(&Some(Counter::Sis(Sis::UtilSkip))),
        "{:?}",
        placed.path
    );
}

/// select_idle_sibling (4.15: v4.15 kernel/sched/fair.c) on the desktop.
fn sis_4_15(
    busy_cpus: &[usize],
    prev: usize,
    target: usize,
    idle_core_hint: bool,
) -> Option<(usize, Sis)> {
    let mut env = TestEnv::era("desktop-8c", Era::V4_15);
    env.hogs(busy_cpus, 1);
    let p = env.sleeper(prev);
    env.state.llc_has_idle_cores[0] = idle_core_hint;
    let mut placed = Placement::new(prev, Reason::Prev);
    v4_15::select_idle_sibling_4_15(&mut env, &mut placed, p, prev, target, target)
}

#[test]
fn select_idle_sibling_4_15_order() {
    assert_eq!(sis_4_15(&[], 5, 3, false), Some((3, Sis::TargetIdle)));
    assert_eq!(sis_4_15(&[3], 5, 3, false), Some((5, Sis::PrevIdle)));
    // 4.15 has no recent_used_cpu: with target and prev busy it scans from
    // target itself (idle core first when flagged).
    assert_eq!(sis_4_15(&[3, 5], 5, 3, true), Some((4, Sis::ScanFound)));
    assert_eq!(sis_4_15(&[3, 5, 4], 5, 3, false), Some((6, Sis::ScanFound)));
}

/// wake_affine_idle: this CPU runs the waker (and `extra` more tasks); prev idle.
fn affine_idle(era: Era, extra: usize, sync: bool) -> Placement {
    let mut env = TestEnv::era("desktop-8c", era);
    env.hogs(&[1], 1 + extra);
    let p = env.sleeper(2);
    super::select_task_rq(&mut env, p, 2, 1, sync, WakeKind::Wakeup)
}

#[test]
fn wake_affine_idle_cases_by_era() {
    // Sync wakeup from a CPU running only the waker: this CPU wins WA_IDLE,
    // then select_idle_sibling prefers the idle prev that shares the LLC.
    for era in [Era::V4_15, Era::V6_5] {
        let pl = affine_idle(era, 0, true);
        assert!(
            pl.path.contains(&Some(Counter::WakeAffine {
                level: "MC",
                outcome: Affine::Idle
            })),
            "{era}: {:?}",
            pl.path
        );
        assert_eq!(
            (pl.cpu, pl.reason),
            (2, Reason::Sis(Sis::PrevIdle)),
            "{era}"
        );
    }
    // Two tasks on this CPU: 4.15's wake_affine_idle has no answer (WA_WEIGHT
    // decides); 6.5's third step picks the idle prev.
    let pl = affine_idle(Era::V4_15, 1, true);
    assert!(
        !pl.path.contains(&Some(Counter::WakeAffine {
            level: "MC",
            outcome: Affine::Idle
        })),
        "{:?}",
        pl.path
    );
    let pl = affine_idle(Era::V6_5, 1, true);
    assert!(
        pl.path.contains(&Some(Counter::WakeAffine {
            level: "MC",
            outcome: Affine::IdlePrev
        })),
        "{:?}",
        pl.path
    );
    assert_eq!(pl.cpu, 2);
}

/// wake_affine_idle (v4.15 against v6.5) when the waker's CPU is idle (an
/// interrupt-context wakeup from idle CPU 1) and prev, CPU 10 of another
/// core, is idle too. 4.15 asks nothing of prev or caches: this CPU. 6.5
/// sees both idle and sharing the LLC: prev.
#[test]
fn wake_affine_idle_of_an_idle_waker_cpu_by_era() {
    let run = |era: Era| {
        let mut env = TestEnv::era("desktop-8c", era);
        let p = env.sleeper(10);
        let pl = super::select_task_rq(&mut env, p, 10, 1, false, WakeKind::Wakeup);
        pl.path
            .iter()
            .flatten()
            .find(|c| matches!(c, Counter::WakeAffine { .. }))
            .copied()
    };
    let outcome = |outcome| {
        Some(Counter::WakeAffine {
            level: "MC",
            outcome,
        })
    };
    assert_eq!(run(Era::V4_15), outcome(Affine::Idle));
    assert_eq!(run(Era::V6_5), outcome(Affine::IdlePrev));
}

/// The 2.6.28 path on the 16-CPU box: the waker runs on CPU 0 with `extra`
/// more tasks; p last ran on CPU 5 (same node, other... same LLC) or 9.
fn legacy(policy: PolicySpec, extra: usize, prev: usize, sync: bool) -> Placement {
    let mut env = TestEnv::new("phoenix-2008", policy);
    env.hogs(&[0], 1 + extra);
    let p = env.sleeper(prev);
    v2_6::select(&mut env, p, prev, 0, sync)
}

#[test]
fn legacy_wake_affine_by_hand() {
    // No tick yet: every cpu_load[] history is 0, so source_load = 0 and
    // target_load = the current load. CPU 0 runs the waker (1024).
    // Sync: tl = 1024 - 1024 = 0; balanced = 100 x (0 + 1024) <= 112 x 0: no;
    // but tl <= load (0 <= 0) and tl + target_load(prev) = 0 <= 1024 per task: affine.
    let pl = legacy(PolicySpec::era(Era::V2_6_28), 0, 9, true);
    assert_eq!((pl.cpu, pl.reason), (0, Reason::WakeAffine));
    assert!(pl.path.contains(&Some(Counter::WakeAffine {
        level: "NODE",
        outcome: Affine::Affine
    })));
    // 2.6.27's NODE has no SD_WAKE_AFFINE: the wakee stays on its idle prev.
    let pl = legacy(PolicySpec::era(Era::V2_6_27), 0, 9, true);
    assert_eq!(pl.cpu, 9);
    // Three tasks on CPU 0: tl = 3072 - 1024 = 2048 > load 0: not affine; the
    // passive check 112 x 3072 <= 100 x 0 fails too; wake_idle keeps idle prev 5.
    let pl = legacy(PolicySpec::era(Era::V2_6_28), 2, 2, true);
    assert_eq!((pl.cpu, pl.reason), (2, Reason::Prev));
    assert!(
        pl.path.contains(&Some(Counter::WakeAffine {
            level: "MC",
            outcome: Affine::Prev
        })),
        "{:?}",
        pl.path
    );
}

#[test]
fn legacy_passive_wake_balance() {
    // MC without SD_WAKE_AFFINE but with SD_WAKE_BALANCE (2.6.28): a wakee whose
    // prev (CPU 1, three tasks) is loaded moves to the waker's CPU 0 when
    // 112 x this_load <= 100 x load: 112 x 1024 <= 100 x 2048 (history after ticks).
    let mut spec = PolicySpec::era(Era::V2_6_28);
    spec.levels
        .entry_or_default("MC".into())
        .flags
        .insert("WAKE_AFFINE".into(), false);
    let mut env = TestEnv::new("phoenix-2008", spec);
    env.hogs(&[0], 1);
    env.hogs(&[1], 3);
    // The wake_idx history after some ticks: CPU 0 at 1024, CPU 1 at 2048
    // (it climbs towards its 3072); source_load(1) = min(2048, 3072) = 2048,
    // target_load(0) = max(1024, 1024) = 1024.
    env.cpu_loads[0].cpu_load = [1024; 5];
    env.cpu_loads[1].cpu_load = [2048; 5];
    let p = env.sleeper(1);
    let pl = v2_6::select(&mut env, p, 1, 0, false);
    assert_eq!(
        (pl.cpu, pl.reason),
        (0, Reason::WakeBalance),
        "{:?}",
        pl.path
    );
    assert!(env.domains.of(0).next().unwrap().has(SdFlag::WakeBalance));
}

/// select_task_rq_fair (v2.6.28 kernel/sched_fair.c) on the re-tuned MC
/// level, which has SD_WAKE_AFFINE and SD_WAKE_BALANCE: passive balancing
/// is tried only when wake_affine said no, so it moves a wakee only in a
/// narrow band of prev's load. Non-sync, the waker alone on CPU 0
/// (this_load 1024, imbalance 112); prev, CPU 1, runs two tasks (2048
/// now) and its wake_idx history decides source_load = min(history, 2048):
/// - 2048: 100 x (1024 + 1024) <= 112 x 2048, wake_affine takes it;
/// - 1536: not balanced (204800 > 172032), and 1024 + target_load 2048 is
///   over the 1024 per task, so wake_affine refuses; 112 x 1024 <= 100 x
///   1536: passive balancing moves it;
/// - 1024: both refuse (114688 > 102400), prev keeps it.
///
/// Passive needs 1.12 x this_load <= load < (this_load + 1024) / 1.12: in
/// sysbench a wakee's prev runs at most its partner, so it never fires
/// there (counter wake_affine.MC.passive is 0 and the flag moves nothing).
#[test]
fn legacy_2_6_28_passive_balance_only_in_a_narrow_band() {
    let run = |history: u64| {
        let mut env = TestEnv::era("phoenix-2008", Era::V2_6_28);
        env.hogs(&[0], 1);
        env.hogs(&[1], 2);
        env.cpu_loads[0].cpu_load = [1024; 5];
        env.cpu_loads[1].cpu_load = [history; 5];
        let p = env.sleeper(1);
        let pl = v2_6::select(&mut env, p, 1, 0, false);
        (pl.cpu, pl.reason)
    };
    assert_eq!(run(2048), (0, Reason::WakeAffine));
    assert_eq!(run(1536), (0, Reason::WakeBalance));
    assert_eq!(run(1024), (1, Reason::Prev));
}

/// wake_affine (v2.6.28 kernel/sched_fair.c) for a writer on CPU 0 waking a
/// reader whose prev, CPU 1, is idle, at the MC level (imbalance 112): the
/// wakeup kind decides. Sync: tl = 1024 - 1024 = 0, 100 x (0 + 1024) > 112 x 0
/// is not balanced, but tl <= load (0 <= 0) and 0 + 0 <= 1024 per task:
/// affine. Not sync (2.6.2x's TCP prequeue): tl = 1024 > load 0, and the
/// passive test 112 x 1024 <= 100 x 0 fails: wake_idle keeps the idle prev.
#[test]
fn legacy_sync_and_non_sync_wakeups_of_a_reader() {
    let pl = legacy(PolicySpec::era(Era::V2_6_28), 0, 1, true);
    assert_eq!(
        (pl.cpu, pl.reason),
        (0, Reason::WakeAffine),
        "{:?}",
        pl.path
    );
    let pl = legacy(PolicySpec::era(Era::V2_6_28), 0, 1, false);
    assert_eq!((pl.cpu, pl.reason), (1, Reason::Prev), "{:?}", pl.path);
    assert!(Era::V2_6_28.rules().tcp_prequeue && !Era::V6_5.rules().tcp_prequeue);
    use crate::workload::program::ChannelKind;
    assert!(!ChannelKind::Tcp.sync_reader_wakeup(true));
    assert!(ChannelKind::Tcp.sync_reader_wakeup(false));
    assert!(
        ChannelKind::Unix.sync_reader_wakeup(true) && ChannelKind::Udp.sync_reader_wakeup(true)
    );
}

/// select_idle_cpu (v6.5): looking for an idle core, it keeps the first idle
/// thread it sees and returns it when no core is idle. CPUs 0-7 run hogs,
/// 8-15 are idle, the idle-cores hint is stale; from CPU 1 on, core {1, 9}
/// has idle thread 9. SIS_UTIL allows the scan: x = 8 x 1024 / 16 = 512,
/// 512^2 x 117^2 / (10000 x 1024) = 350, nr = (1024 - 350) x 16 / 1024 = 10.
#[test]
fn select_idle_cpu_6_5_falls_back_to_the_first_idle_thread() {
    let mut env = TestEnv::era("desktop-8c", Era::V6_5);
    env.hogs(&(0..8).collect::<Vec<_>>(), 1);
    env.state.llc_has_idle_cores[0] = true;
    let p = env.sleeper(0);
    let mut placed = Placement::new(0, Reason::Prev);
    assert_eq!(
        v4_15::select_idle_sibling_6_5(&mut env, &mut placed, p, 0, 0, 0),
        Some((9, Sis::ScanFound))
    );
    assert!(
        !env.state.llc_has_idle_cores[0],
        "the stale hint is cleared"
    );
}

/// select_idle_cpu (v4.15): SIS_PROP's budget comes from the waker's CPU
/// (its avg_idle, its LLC's scan cost); NO_SIS_PROP scans without a limit;
/// a scan that runs out of budget leaves the scan cost alone. 14 of 16
/// CPUs busy, only 14 and 15 idle; target 3.
#[test]
fn select_idle_cpu_4_15_sis_prop_budget_is_the_wakers() {
    let run = |waker_avg_idle: u64, sis_prop: bool| {
        let mut spec = PolicySpec::era(Era::V4_15);
        if !sis_prop {
            spec.features.insert("SIS_PROP".into(), false);
        }
        let mut env = TestEnv::new("desktop-8c", spec);
        env.hogs(&(0..14).collect::<Vec<_>>(), 1);
        env.avg_idle_ns[0] = waker_avg_idle;
        env.avg_idle_ns[3] = 10_000_000;
        env.state.llc_avg_scan_cost_ns[0] = 1_000;
        let p = env.sleeper(3);
        let mut placed = Placement::new(3, Reason::Prev);
        let found = v4_15::select_idle_sibling_4_15(&mut env, &mut placed, p, 3, 3, 0);
        (found, env.state.llc_avg_scan_cost_ns[0])
    };
    // The waker's avg_idle 10 us: 16 x (10000 / 512 = 19) = 304 <= 4 x 1001,
    // so the budget is 4: three CPUs (3, 4, 5) are checked, all busy, and
    // the scan runs out; then select_idle_smt finds nothing on target's core.
    assert_eq!(run(10_000, true), (None, 1_000));
    // NO_SIS_PROP: the scan goes on to CPU 14 and updates the cost.
    let (found, cost) = run(10_000, false);
    assert_eq!(found, Some((14, Sis::ScanFound)));
    assert_ne!(cost, 1_000);
    // A waker that idles long (10 ms): 16 x 19531 / 1001 = 312 CPUs of budget.
    assert_eq!(run(10_000_000, true).0, Some((14, Sis::ScanFound)));
}

/// find_idlest_group (v6.5) on the 2-socket Ivy Bridge (two nodes, each one
/// 20-CPU LLC): the first domain above the LLC is NUMA (40 CPUs) spanning
/// two LLCs, so imb_numa_nr = 2 (build_sched_domains). A fork on node 0
/// running `busy` tasks stays there while adjust_numa_imbalance allows it.
#[test]
fn fork_numa_imbalance_follows_imb_numa_nr() {
    let fork_node = |busy: usize| {
        let mut env = TestEnv::era("ivb-ep-2s", Era::V6_5);
        let node0: Vec<usize> = (0..40).filter(|&c| env.topo.cpus[c].node == 0).collect();
        env.hogs(&node0[..busy], 1);
        let numa = env.domains.of(0).find(|d| d.has(SdFlag::Numa)).unwrap();
        assert_eq!(imb_numa_nr(&env, 0, numa), 2);
        let child = env.sleeper(0);
        let placed = super::select_task_rq(&mut env, child, 0, 0, false, WakeKind::Fork);
        env.topo.cpus[placed.cpu].node
    };
    // One task: 1 + 1 = 2 <= 2 and 19 vs 20 idle CPUs differ by 1 <= 2: local.
    assert_eq!(fork_node(1), 0);
    // Three: 3 + 1 = 4 > 2, so the imbalance (17 vs 20 idle) stands: node 1.
    assert_eq!(fork_node(3), 1);
    assert_eq!(adjust_numa_imbalance(2, 2, 2), 0);
    assert_eq!(adjust_numa_imbalance(3, 2, 2), 3);
    assert_eq!(adjust_numa_imbalance(1, 3, 2), 1);
}

/// wake_affine (v2.6.27 against v2.6.28 kernel/sched_fair.c): a sync wakeup
/// from CPU 0's waker of a task whose prev, CPU 1, is idle, both tasks
/// running on long after waking others (avg_overlap 1 ms > migration_cost
/// 0.5 ms). 2.6.28 drops the sync hint: tl = 1024 > load 0 and 100 x 2048 >
/// 112 x 0, not affine; the passive test 112 x 1024 <= 0 fails; wake_idle
/// keeps idle CPU 1. 2.6.27 keeps it: tl = 0 <= load 0 and 0 + 0 <= 1024
/// per task: affine.
#[test]
fn legacy_2_6_27_sync_ignores_avg_overlap() {
    let run = |era: Era| {
        let mut env = TestEnv::era("phoenix-2008", era);
        env.hogs(&[0], 1);
        let p = env.sleeper(1);
        let waker = env.rqs[0].curr.unwrap();
        env.tasks[waker].avg_overlap_ns = 1_000_000;
        env.tasks[p].avg_overlap_ns = 1_000_000;
        let pl = v2_6::select(&mut env, p, 1, 0, true);
        (pl.cpu, pl.reason)
    };
    assert_eq!(run(Era::V2_6_28), (1, Reason::Prev));
    assert_eq!(run(Era::V2_6_27), (0, Reason::WakeAffine));
}

/// select_task_rq_fair (v2.6.27): no early exit when the wakee last ran on
/// the waker's CPU 0. this_sd is MC; no history yet, so load =
/// source_load(0) = 0 and this_load = target_load(0) = 1024; sync: tl = 0
/// <= 0 and 0 + target_load(0) = 1024 <= 1024 per task: wake_affine says
/// this CPU, returned without wake_idle. 2.6.28 goes straight to wake_idle,
/// which keeps prev (no SD_WAKE_IDLE level on this box).
#[test]
fn legacy_2_6_27_runs_wake_affine_when_prev_is_this() {
    let run = |era: Era| {
        let mut env = TestEnv::era("phoenix-2008", era);
        env.hogs(&[0], 1);
        let p = env.sleeper(0);
        let pl = v2_6::select(&mut env, p, 0, 0, true);
        (pl.cpu, pl.reason)
    };
    assert_eq!(run(Era::V2_6_27), (0, Reason::WakeAffine));
    assert_eq!(run(Era::V2_6_28), (0, Reason::Prev));
}

/// select_idle_cpu (v6.5, SIS_PROP on, SIS_UTIL off): the budget is
/// span x wake_avg_idle / (avg_scan_cost + 1), no longer avg_idle / 512,
/// where the waker's wake_avg_idle is first halved for each jiffy since
/// its stamp (wake_stamp), and a scan's time comes off it. CPUs 0-13
/// busy, 14 and 15 idle; the waker is CPU 0, target 3 (core {3, 11}
/// busy). A fresh 40 us: 16 x 40000 / 1001 = 639 CPUs, so the scan
/// reaches CPU 14 after checking 4..14 (11 CPUs), whose time is taken off
/// 40 us. Stamped 8 jiffies ago: 40000 >> 8 = 156, 16 x 156 = 2496 <= 4 x
/// 1001, a budget of 4: CPUs 4, 5, 6 are busy and the scan gives up (the
/// scan cost stays 1000), the estimate aged to 156 and stamped now.
#[test]
fn select_idle_cpu_6_5_sis_prop_ages_wake_avg_idle() {
    let run = |age_jiffies: u64| {
        let mut spec = PolicySpec::era(Era::V6_5);
        spec.features.insert("SIS_PROP".into(), true);
        spec.features.insert("SIS_UTIL".into(), false);
        let mut env = TestEnv::new("desktop-8c", spec);
        env.hogs(&(0..14).collect::<Vec<_>>(), 1);
        let now_j = env.now / env.policy.tunables.tick_ns();
        env.state.wake_avg_idle_ns[0] = 40_000;
        env.state.wake_stamp_jiffies[0] = now_j - age_jiffies;
        env.state.llc_avg_scan_cost_ns[0] = 1_000;
        let p = env.sleeper(3);
        let mut placed = Placement::new(3, Reason::Prev);
        let found = v4_15::select_idle_sibling_6_5(&mut env, &mut placed, p, 3, 3, 0);
        let scan_11 = crate::sched::SchedEnv::scan_ns(&env, 11);
        (
            found,
            env.state.wake_avg_idle_ns[0],
            env.state.wake_stamp_jiffies[0] == now_j,
            env.state.llc_avg_scan_cost_ns[0],
            scan_11,
        )
    };
    let (found, w, stamped, _, scan_11) = run(0);
    assert_eq!(found, Some((14, Sis::ScanFound)));
    assert_eq!((w, stamped), (40_000 - scan_11, true));
    let (found, w, stamped, cost, _) = run(8);
    assert_eq!((found, w, stamped, cost), (None, 156, true, 1_000));
}

/// select_idle_sibling (v6.5 and v6.12 kernel/sched/fair.c, since 5.15):
/// p->recent_used_cpu becomes prev where the recent CPU is checked, after
/// the target-idle and prev-idle returns; a wakeup placed by those leaves
/// it as it was.
#[test]
fn select_idle_sibling_6_5_keeps_recent_used_cpu_on_an_early_return() {
    for (busy, placed, recent_after) in [
        (vec![], (3, Sis::TargetIdle), 6),
        (vec![3], (5, Sis::PrevIdle), 6),
        (vec![3, 5], (6, Sis::Recent), 5),
    ] {
        let mut env = TestEnv::era("desktop-8c", Era::V6_5);
        for &c in &busy {
            env.task(c, 1024, 100);
        }
        let p = env.sleeper(5);
        env.tasks[p].recent_used_cpu = 6;
        let mut pl = Placement::new(5, Reason::Prev);
        let got = v4_15::select_idle_sibling_6_5(&mut env, &mut pl, p, 5, 3, 3);
        assert_eq!(got, Some(placed));
        assert_eq!(env.tasks[p].recent_used_cpu, recent_after, "{placed:?}");
    }
}

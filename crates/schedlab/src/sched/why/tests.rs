//! Decision records on hand-built states (`sched::testenv`): each era's
//! decision with the numbers it compared, worked out by hand here.

use super::{Decision, DecisionKind, Fact, Op, Outcome, Term};
use crate::counters::Reason;
use crate::policy::Era;
use crate::sched::testenv::TestEnv;
use crate::sched::wakeup::{select_task_rq, WakeKind};

/// The comparison in step `func` whose left side is named `lhs`:
/// (left value, operator, right value, whether it held).
fn compared(d: &Decision, func: &str, lhs: &str) -> (i64, Op, i64, bool) {
    d.steps
        .iter()
        .filter(|s| s.func == func)
        .flat_map(|s| &s.facts)
        .find_map(|f| match f {
            Fact::Compare {
                lhs: Term { name, value },
                op,
                rhs,
                holds,
            } if *name == lhs => Some((*value, *op, rhs.value, *holds)),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no {lhs} compared in {func}: {d:#?}"))
}

/// The value named `name` in step `func`.
fn value(d: &Decision, func: &str, name: &str) -> i64 {
    d.steps
        .iter()
        .filter(|s| s.func == func)
        .flat_map(|s| &s.facts)
        .find_map(|f| match f {
            Fact::Value(t) if t.name == name => Some(t.value),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no {name} in {func}: {d:#?}"))
}

fn funcs(d: &Decision) -> Vec<(u8, &'static str)> {
    d.steps.iter().map(|s| (s.depth, s.func)).collect()
}

/// The CPU verdicts of step `func`, in order.
fn cpus(d: &Decision, func: &str) -> Vec<(usize, &'static str)> {
    d.steps
        .iter()
        .filter(|s| s.func == func)
        .flat_map(|s| &s.facts)
        .filter_map(|f| match f {
            Fact::Cpu { cpu, verdict } => Some((*cpu, *verdict)),
            _ => None,
        })
        .collect()
}

fn only(mut ds: Vec<Decision>) -> Decision {
    assert_eq!(ds.len(), 1, "{ds:#?}");
    ds.remove(0)
}

/// wake_affine_weight (v4.15 kernel/sched/fair.c) on the 16-CPU desktop:
/// the waker on CPU 1 with one more task queued (WA_IDLE: CPU 1 is busy
/// and runs two tasks, so no answer), p (PELT load 512) last ran on CPU 2,
/// which runs three hogs. MC's wake_idx is 0: this_load = 2 x 1024 = 2048,
/// prev_load = 3 x 1024 = 3072. Sync: this_eff = 2048 less the waker's
/// 1024, plus 512, = 1536, x 100 (WA_BIAS) x 1024 = 157,286,400; prev_eff =
/// (3072 - 512) x (100 + 17 / 2 = 108) x 1024 = 283,115,520. 4.15 breaks ties
/// towards this CPU (<=): true, target CPU 1, and select_idle_sibling then
/// finds target and prev busy and scans from CPU 1: CPU 3 is the first idle.
#[test]
fn wake_affine_weight_4_15_records_both_sides() {
    let mut env = TestEnv::era("desktop-8c", Era::V4_15);
    env.hogs(&[1], 2);
    env.hogs(&[2], 3);
    let p = env.sleeper(2);
    env.ents[p].pelt.load_avg = 512;
    env.record_decisions();
    let placed = select_task_rq(&mut env, p, 2, 1, true, WakeKind::Wakeup);
    let d = only(env.decisions());
    assert_eq!((d.kind, d.cpu, d.task), (DecisionKind::Wakeup, 1, Some(p)));
    assert_eq!(
        value(&d, "wake_affine_weight", "this_eff_load (load of this_cpu)"),
        2048
    );
    assert_eq!(
        value(&d, "wake_affine_weight", "prev_eff_load (load of prev_cpu)"),
        3072
    );
    assert_eq!(
        compared(&d, "wake_affine_weight", "this_eff_load"),
        (157_286_400, Op::Le, 283_115_520, true)
    );
    assert_eq!(
        funcs(&d),
        [
            (0, "select_task_rq_fair"),
            (1, "wake_wide"),
            (1, "for_each_domain"),
            (1, "wake_affine"),
            (2, "wake_affine_idle"),
            (2, "wake_affine_weight"),
            (1, "select_idle_sibling"),
            (2, "select_idle_cpu"),
        ]
    );
    assert_eq!(
        cpus(&d, "select_idle_cpu"),
        [(1, "busy"), (2, "busy"), (3, "idle")]
    );
    assert_eq!(
        d.outcome,
        Outcome::Placed {
            cpu: placed.cpu,
            reason: placed.reason
        }
    );
    assert_eq!(placed.cpu, 3);
}

/// wake_affine (v2.6.28 kernel/sched_fair.c) with sync and avg_overlap on
/// the 2008 box: the waker on CPU 0 and p (prev CPU 1, idle) both ran on
/// for 1 ms after waking others, past migration_cost's 0.5 ms, so the sync
/// hint is dropped. With no cpu_load[] history yet load = source_load(1) =
/// 0 and this_load = target_load(0) = 1024, the waker's. tl stays 1024:
/// 100 x (1024 + 1024) = 204,800 <= 112 x 0 fails, and tl = 1024 <= load 0
/// fails; the passive test 112 x 1024 = 114,688 <= 100 x 0 fails too, and
/// wake_idle keeps idle CPU 1.
#[test]
fn wake_affine_2_6_28_drops_sync_on_avg_overlap() {
    let mut env = TestEnv::era("phoenix-2008", Era::V2_6_28);
    env.hogs(&[0], 1);
    let p = env.sleeper(1);
    let waker = env.rqs[0].curr.unwrap();
    env.tasks[waker].avg_overlap_ns = 1_000_000;
    env.tasks[p].avg_overlap_ns = 1_000_000;
    env.record_decisions();
    let placed = select_task_rq(&mut env, p, 1, 0, true, WakeKind::Wakeup);
    assert_eq!((placed.cpu, placed.reason), (1, Reason::Prev));
    let d = only(env.decisions());
    assert_eq!(
        compared(&d, "wake_affine", "current->se.avg_overlap"),
        (1_000_000, Op::Le, 500_000, false)
    );
    assert_eq!(value(&d, "wake_affine", "sync (after the checks)"), 0);
    assert_eq!(
        compared(&d, "wake_affine", "100 * (tl + weight)"),
        (204_800, Op::Le, 0, false)
    );
    assert_eq!(compared(&d, "wake_affine", "tl"), (1024, Op::Le, 0, false));
    assert_eq!(
        compared(&d, "wake_balance (passive)", "imbalance * this_load"),
        (114_688, Op::Le, 0, false)
    );
    assert_eq!(cpus(&d, "wake_idle"), [(1, "idle: kept")]);
    // 2.6.27 trusts the hint: tl = 0, and 0 <= 0 with 0 + 0 <= 1024 per task.
    let mut env = TestEnv::era("phoenix-2008", Era::V2_6_27);
    env.hogs(&[0], 1);
    let p = env.sleeper(1);
    env.record_decisions();
    let placed = select_task_rq(&mut env, p, 1, 0, true, WakeKind::Wakeup);
    assert_eq!((placed.cpu, placed.reason), (0, Reason::WakeAffine));
    let d = only(env.decisions());
    assert_eq!(compared(&d, "wake_affine", "tl"), (0, Op::Le, 0, true));
}

/// select_idle_cpu under SIS_UTIL (v6.12 kernel/sched/fair.c) on the
/// desktop: CPUs 1 to 6 busy and 11 (3's SMT sibling, so select_idle_smt
/// finds nothing), no idle core flagged, target and prev CPU 3. The LLC's last
/// periodic balance left a budget of 3 (nr = 3 + 1 = 4, so 3 CPUs are
/// looked at from target + 1): 4, 5 and 6, all busy; the scan gives up
/// before idle CPU 7. With a budget of 0 the scan is skipped outright.
#[test]
fn select_idle_cpu_6_12_under_sis_util() {
    let run = |budget: u64| {
        let mut env = TestEnv::era("desktop-8c", Era::V6_12);
        for c in [1, 2, 3, 4, 5, 6, 11] {
            env.task(c, 1024, 100);
        }
        env.state.llc_has_idle_cores[0] = false;
        env.state.llc_nr_idle_scan[0] = budget;
        let p = env.sleeper(3);
        env.record_decisions();
        let placed = select_task_rq(&mut env, p, 3, 3, false, WakeKind::Wakeup);
        (placed, only(env.decisions()))
    };
    let (placed, d) = run(3);
    assert_eq!(placed.cpu, 3);
    assert_eq!(
        compared(&d, "select_idle_cpu", "sd_share->nr_idle_scan"),
        (3, Op::Gt, 0, true)
    );
    assert_eq!(
        cpus(&d, "select_idle_cpu"),
        [(4, "busy"), (5, "busy"), (6, "busy")]
    );
    let (_, d) = run(0);
    assert_eq!(
        compared(&d, "select_idle_cpu", "sd_share->nr_idle_scan"),
        (0, Op::Gt, 0, false)
    );
    assert!(cpus(&d, "select_idle_cpu").is_empty());
}

/// find_busiest_group (v4.15) inside 4.15's idle_balance on the desktop:
/// three hogs on CPU 0, CPU 1 about to idle. SMT first: CPU 1's sibling 9
/// is idle too, so the SMT domain is balanced. MC next: core {0, 8} runs 3 tasks, more than the empty
/// local core's 0 + 1 with SD_PREFER_SIBLING below, so it has no capacity
/// and the balance is forced: avg_load 3072 x 1024 / 1178 = 2670 against
/// the local 0, one task's load (1024) to move; the newest-first walk of
/// CPU 0's list skips the running task and moves the next.
#[test]
fn idle_balance_4_15_records_the_busiest_group_and_the_move() {
    let mut env = TestEnv::era("desktop-8c", Era::V4_15);
    env.hogs(&[0], 3);
    env.record_decisions();
    let pulled = crate::sched::balance::newidle_balance(&mut env, 1);
    assert!(pulled.pulled);
    let d = only(env.decisions());
    assert_eq!(d.kind, DecisionKind::Balance);
    assert_eq!(d.steps[0].func, "idle_balance");
    assert_eq!(value(&d, "find_busiest_group", "busiest.avg_load"), 2670);
    assert_eq!(value(&d, "find_busiest_group", "local.avg_load"), 0);
    assert_eq!(value(&d, "find_busiest_group", "imbalance"), 1024);
    let Outcome::Balanced { busiest, moved, .. } = &d.outcome else {
        panic!("{d:#?}")
    };
    assert_eq!((*busiest, moved.len()), (Some(0), 1));
    assert_eq!(env.migrated.len(), 1);
}

/// 6.10 renamed the balancer's functions: 6.12's records say
/// sched_balance_newidle, sched_balance_rq, sched_balance_find_src_group
/// and sched_balance_find_src_rq where 6.5's say newidle_balance,
/// load_balance, find_busiest_group and find_busiest_queue.
#[test]
fn records_name_the_balancer_as_each_era_does() {
    let names = |era: Era| {
        let mut env = TestEnv::era("desktop-8c", era);
        env.hogs(&[0], 3);
        env.record_decisions();
        crate::sched::balance::newidle_balance(&mut env, 1);
        let d = only(env.decisions());
        let mut seen: Vec<&'static str> = Vec::new();
        for (_, f) in funcs(&d) {
            if !seen.contains(&f) {
                seen.push(f);
            }
        }
        seen
    };
    assert_eq!(
        names(Era::V6_12)[..4],
        [
            "sched_balance_newidle",
            "sched_balance_rq",
            "sched_balance_find_src_group",
            "sched_balance_find_src_rq"
        ]
    );
    assert_eq!(
        names(Era::V6_5)[..4],
        [
            "newidle_balance",
            "load_balance",
            "find_busiest_group",
            "find_busiest_queue"
        ]
    );
}

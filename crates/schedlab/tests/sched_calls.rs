//! The scheduling calls a task makes on itself (sched_setaffinity,
//! sched_yield), system calls that return at once, and timers shared by
//! several tasks, as rt-app's events use them.

mod common;

use common::{machine, marks};
use schedlab::counters::Reason;
use schedlab::engine::stats::TraceEvent;
use schedlab::engine::RunOutput;
use schedlab::policy::{Era, PolicySpec};
use schedlab::topology::{HwCosts, Topology};

fn run(era: Era, topo: &Topology, workload_json: &str, duration_ns: Option<u64>) -> RunOutput {
    common::run_traced(topo, PolicySpec::era(era), workload_json, 1, duration_ns)
}

fn four_cpus() -> Topology {
    machine(1, 1, 4, 1, HwCosts::default())
}

/// Where sched_setaffinity sent each task that had to move, in order.
fn affinity_moves(out: &RunOutput) -> Vec<(usize, usize)> {
    out.trace
        .iter()
        .filter_map(|e| match *e {
            TraceEvent::Migrate {
                from,
                to,
                reason: Reason::SetAffinity,
                ..
            } => Some((from, to)),
            _ => None,
        })
        .collect()
}

/// Two tasks on CPU 0 each give themselves CPUs 1-3 (after 1 ms and 2 ms
/// of work): __set_cpus_allowed_ptr moves each off CPU 0 at once.
const TWO_LEAVE_CPU_0: &str = r#"{"tasks":[
  {"name":"A","affinity":"0","program":[{"compute":{"ns":1000000}},{"affinity":"1-3"},{"compute":{"ns":5000000}}]},
  {"name":"B","affinity":"0","program":[{"compute":{"ns":2000000}},{"affinity":"1-3"},{"compute":{"ns":5000000}}]}]}"#;

#[test]
fn set_affinity_moves_a_task_to_the_first_allowed_cpu_before_5_7_and_distributes_after() {
    // v4.15 __set_cpus_allowed_ptr: cpumask_any_and, the set's first CPU
    // for both; v6.12: cpumask_any_and_distribute, the next CPU after the
    // one this CPU chose last (starting after CPU 0).
    let old = run(Era::V4_15, &four_cpus(), TWO_LEAVE_CPU_0, None);
    assert_eq!(affinity_moves(&old), [(0, 1), (0, 1)]);
    let new = run(Era::V6_12, &four_cpus(), TWO_LEAVE_CPU_0, None);
    assert_eq!(affinity_moves(&new), [(0, 1), (0, 2)]);
    assert_eq!(new.counters.get("migrations.affinity.MC"), Some(&2));
}

#[test]
fn set_affinity_to_a_set_holding_the_cpu_moves_nothing_and_the_same_set_costs_no_call() {
    let w = |sets: &str| {
        format!(
            r#"{{"tasks":[{{"name":"A","affinity":"0","program":[{sets}{{"compute":{{"ns":1000000}}}}]}}]}}"#
        )
    };
    let plain = run(Era::V6_12, &four_cpus(), &w(""), None);
    let same = run(Era::V6_12, &four_cpus(), &w(r#"{"affinity":"0"},"#), None);
    let wider = run(Era::V6_12, &four_cpus(), &w(r#"{"affinity":"0-1"},"#), None);
    let all = run(Era::V6_12, &four_cpus(), &w(r#"{"affinity":null},"#), None);
    // The same set: rt-app makes no call, and neither does the model.
    assert_eq!(same.tasks[0].exited_ns, plain.tasks[0].exited_ns);
    // A set that still holds CPU 0: one system call, no move.
    let call = HwCosts::default().syscall_ns;
    for out in [&wider, &all] {
        assert_eq!(
            out.tasks[0].exited_ns.unwrap(),
            plain.tasks[0].exited_ns.unwrap() + call
        );
        assert!(affinity_moves(out).is_empty());
    }
}

#[test]
fn syscalls_cost_their_entry_and_exit_each() {
    let w = |n: u64| {
        format!(
            r#"{{"tasks":[{{"name":"A","program":[{{"compute":{{"ns":1000}}}},{{"syscalls":{n}}}]}}]}}"#
        )
    };
    let one = run(Era::V6_12, &four_cpus(), &w(1), None);
    let many = run(Era::V6_12, &four_cpus(), &w(1001), None);
    let call = HwCosts::default().syscall_ns;
    assert_eq!(
        many.tasks[0].exited_ns.unwrap() - one.tasks[0].exited_ns.unwrap(),
        1000 * call
    );
}

fn timer_task(name: &str, shared: bool, origin_ns: u64) -> String {
    format!(
        r#"{{"name":"{name}","program":[{{"loop":{{"count":5,"body":[{{"compute":{{"ns":100000}}}},{{"timer":{{"period_ns":10000000,"name":"tick","shared":{shared},"origin_ns":{origin_ns}}}}},{{"mark":"{name}"}}]}}}}]}}"#
    )
}

#[test]
fn a_shared_timer_moves_one_period_on_at_each_use_by_any_task() {
    // rt-app's named timer: both tasks add the period to one t_next, so
    // each sleeps to every other period end.
    let own = format!(
        r#"{{"tasks":[{},{}]}}"#,
        timer_task("a", false, 0),
        timer_task("b", false, 0)
    );
    let shared = format!(
        r#"{{"tasks":[{},{}]}}"#,
        timer_task("a", true, 0),
        timer_task("b", true, 0)
    );
    let gaps = |out: &RunOutput, l: &str| -> Vec<u64> {
        marks(out, l)
            .windows(2)
            .map(|w| (w[1] - w[0]) / 1_000_000)
            .collect()
    };
    let own = run(Era::V6_12, &four_cpus(), &own, None);
    assert_eq!(gaps(&own, "a"), [10, 10, 10, 10]);
    let shared = run(Era::V6_12, &four_cpus(), &shared, None);
    assert_eq!(gaps(&shared, "a"), [20, 20, 20, 20]);
    assert_eq!(gaps(&shared, "b"), [20, 20, 20, 20]);
    // Together they take each period end once: 10 ms apart.
    let mut all = [marks(&shared, "a"), marks(&shared, "b")].concat();
    all.sort_unstable();
    let ends: Vec<u64> = all.iter().map(|t| t / 1_000_000).collect();
    assert_eq!(ends, [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]);
}

#[test]
fn a_timers_first_period_starts_at_its_origin() {
    let w = format!(r#"{{"tasks":[{}]}}"#, timer_task("a", false, 5_000_000));
    let out = run(Era::V6_12, &four_cpus(), &w, None);
    let ends: Vec<u64> = marks(&out, "a").iter().map(|t| t / 1_000_000).collect();
    assert_eq!(ends, [15, 25, 35, 45, 55]);
}

#[test]
fn sched_yield_is_counted_and_alone_on_its_cpu_the_task_keeps_running() {
    let w = r#"{"tasks":[{"name":"A","affinity":"0","program":[{"loop":{"count":10,"body":[{"compute":{"ns":100000}},"yield"]}}]}]}"#;
    for era in Era::ALL {
        let out = run(era, &four_cpus(), w, None);
        assert_eq!(out.counters.get("sched.yield"), Some(&10), "{era}");
        assert_eq!(out.tasks[0].switches, 1, "{era}: alone, it is picked again");
    }
}

#[test]
fn a_custom_slice_sets_how_long_a_task_runs_before_its_turn_ends_under_eevdf_only() {
    // Two hogs on CPU 0 for 100 ms: under 6.12 each runs its request's
    // slice (update_deadline), so 30 ms slices switch far less often than
    // the default (base_slice_ns); 4.15 has no custom slice.
    let w = |slice: &str| {
        format!(
            r#"{{"tasks":[
          {{"name":"a","affinity":"0"{slice},"program":[{{"forever":[{{"compute":{{"ns":1000000}}}}]}}]}},
          {{"name":"b","affinity":"0"{slice},"program":[{{"forever":[{{"compute":{{"ns":1000000}}}}]}}]}}]}}"#
        )
    };
    let switches = |era: Era, slice: &str| {
        run(era, &four_cpus(), &w(slice), Some(100_000_000)).counters["sched.switches"]
    };
    let long = r#","slice_ns":30000000"#;
    assert!(
        switches(Era::V6_12, long) * 3 < switches(Era::V6_12, ""),
        "{} against {}",
        switches(Era::V6_12, long),
        switches(Era::V6_12, "")
    );
    assert_eq!(switches(Era::V4_15, long), switches(Era::V4_15, ""));
}

#[test]
fn sched_setattr_reweights_a_running_task_or_moves_it_between_classes() {
    // A and B, both fair hogs, share CPU 0. A calls sched_setattr after
    // 10 ms of its own work.
    let w = |attr: &str, then_ns: u64| {
        format!(
            r#"{{"tasks":[
          {{"name":"A","affinity":"0","program":[{{"compute":{{"ns":10000000}}}},{{"scheduler":{attr}}},{{"compute":{{"ns":{then_ns}}}}}]}},
          {{"name":"B","affinity":"0","program":[{{"compute":{{"ns":400000000}}}}]}}]}}"#
        )
    };
    let exec = |out: &RunOutput, t: usize| out.tasks[t].sum_exec_ns / 1_000_000;
    for era in [Era::V4_15, Era::V6_12] {
        // Nice 5 (weight 335 against 1024): A gets about a quarter of the
        // CPU from then on: 10 ms, then ~25% of the next 380 ms.
        let out = run(
            era,
            &four_cpus(),
            &w(r#"{"nice":5}"#, 400_000_000),
            Some(400_000_000),
        );
        let a = exec(&out, 0);
        assert!((95..=110).contains(&a), "{era}: A ran {a} ms");
        // SCHED_FIFO: A runs its remaining 90 ms at once, B waits.
        let fifo = r#"{"rt":{"policy":"fifo","priority":10}}"#;
        let out = run(era, &four_cpus(), &w(fifo, 90_000_000), Some(120_000_000));
        let done = out.tasks[0].exited_ns.unwrap() / 1_000_000;
        assert!((100..=112).contains(&done), "{era}: A exited at {done} ms");
        // B ran before the switch (A's first 10 ms took about 20) and after
        // A's exit, never in between.
        let b = exec(&out, 1);
        assert!(b <= 12 + (120 - done), "{era}: B ran {b} ms");
    }
}

#[test]
fn an_rt_task_that_becomes_fair_shares_the_cpu_again() {
    // A runs SCHED_FIFO for 50 ms, then sets itself back to SCHED_OTHER:
    // from then on it and B share CPU 0. It joins the fair queue placed as
    // a waking task (with the era's sleeper credit), so it runs a little
    // ahead at first.
    let w = r#"{"tasks":[
      {"name":"A","affinity":"0","rt":{"policy":"fifo","priority":20},"program":[
        {"compute":{"ns":50000000}},{"scheduler":{}},{"compute":{"ns":400000000}}]},
      {"name":"B","affinity":"0","program":[{"compute":{"ns":400000000}}]}]}"#;
    for era in [Era::V2_6_28, Era::V6_12] {
        let out = run(era, &four_cpus(), w, Some(250_000_000));
        let (a, b) = (
            out.tasks[0].sum_exec_ns / 1_000_000,
            out.tasks[1].sum_exec_ns / 1_000_000,
        );
        // 50 ms alone, then the last 200 ms shared: B gets a good part.
        assert!(
            a >= 140 && b >= 60 && a + b >= 240,
            "{era}: A {a} ms, B {b} ms"
        );
    }
}

/// wake_up_new_task on one CPU: a parent that has run 5 ms forks a child.
/// v2.6.28's task_new_fair gives the child its parent's vruntime, no
/// earlier than min_vruntime plus a START_DEBIT slice, and under
/// sysctl_sched_child_runs_first (1 until 2.6.32) swaps the two when the
/// parent is ahead: the child runs first. v4.15 and v6.5's task_fork_fair
/// start it from the parent's vruntime too, with no swap, so the parent
/// (behind it) runs on. Before, the child started at min_vruntime plus
/// the slice whatever its parent had run.
#[test]
fn a_forked_child_starts_from_its_parents_vruntime_and_runs_first_before_2_6_32() {
    let w = r#"{"tasks":[{"name":"parent","affinity":"0","program":[
        {"compute":{"ns":5000000}},
        {"fork":{"name":"child","affinity":"0","program":[{"mark":"child"},{"compute":{"ns":1000000}}]}},
        {"mark":"parent"},{"compute":{"ns":1000000}}]}]}"#;
    let one_cpu = machine(1, 1, 1, 1, HwCosts::default());
    for (era, child_first) in [
        (Era::V2_6_28, true),
        (Era::V4_15, false),
        (Era::V6_5, false),
    ] {
        let out = run(era, &one_cpu, w, None);
        let (child, parent) = (marks(&out, "child")[0], marks(&out, "parent")[0]);
        assert_eq!(
            child < parent,
            child_first,
            "{era}: child at {child}, parent on at {parent}"
        );
    }
}

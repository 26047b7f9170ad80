//! The RT class (SCHED_FIFO, SCHED_RR) in a run, hand-worked: a FIFO task
//! preempts a fair one at once, RR tasks of one priority take turns by
//! their 100 ms slice, a woken RT task goes to a CPU running the lowest
//! class, and RT throttling leaves fair tasks 50 ms a second unless the
//! era lends runtime between CPUs.

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

fn cpus(n: u32) -> Topology {
    machine(1, 1, n, 1, HwCosts::default())
}

fn task<'a>(out: &'a RunOutput, name: &str) -> &'a schedlab::engine::TaskSummary {
    out.tasks.iter().find(|t| t.name == name).unwrap()
}

#[test]
fn a_fifo_task_preempts_a_fair_one_at_once() {
    // A fair hog and an RT task share CPU 0; the RT task sleeps 1 ms, then
    // runs 2 ms. Its wakeup preempts the hog at once (check_preempt_curr:
    // a higher class), so its work ends 2 ms after its timer, plus the
    // switch; the hog gets nothing meanwhile.
    let w = r#"{"tasks":[
      {"name":"hog","affinity":"0","program":[{"compute":{"ns":20000000}}]},
      {"name":"rt","affinity":"0","rt":{"policy":"fifo","priority":50},"program":[
        {"sleep":{"ns":1000000}},{"compute":{"ns":2000000}},{"mark":"done"}]}]}"#;
    for era in Era::ALL {
        let out = run(era, &cpus(2), w, None);
        let done = marks(&out, "done")[0];
        assert!(
            (3_000_000..3_050_000).contains(&done),
            "{era}: the RT task finished at {done} ns"
        );
        let rt = task(&out, "rt");
        assert!(
            rt.timer_latency.max_ns < 30_000,
            "{era}: woken to running in {} ns",
            rt.timer_latency.max_ns
        );
    }
}

/// Two CPU-bound tasks of one RT priority on CPU 0, 290 ms of work each.
fn equals(policy: &str) -> String {
    format!(
        r#"{{"tasks":[
      {{"name":"a","affinity":"0","rt":{{"policy":"{policy}","priority":10}},"program":[{{"compute":{{"ns":290000000}}}}]}},
      {{"name":"b","affinity":"0","rt":{{"policy":"{policy}","priority":10}},"program":[{{"compute":{{"ns":290000000}}}}]}}]}}"#
    )
}

#[test]
fn rr_tasks_of_one_priority_take_turns_by_their_slice_and_fifo_ones_do_not() {
    // SCHED_RR: a 0-100, b 100-200, a 200-300, b 300-400, a 400-490 (done),
    // b to 580 (task_tick_rt: RR_TIMESLICE, 100 ms, counted in ticks).
    // SCHED_FIFO: a runs to the end at 290, then b to 580.
    let ms = |out: &RunOutput, t: &str| task(out, t).exited_ns.unwrap() / 1_000_000;
    for era in [Era::V4_15, Era::V6_12] {
        let rr = run(era, &cpus(2), &equals("rr"), None);
        assert_eq!((ms(&rr, "a"), ms(&rr, "b")), (490, 580), "{era} RR");
        let fifo = run(era, &cpus(2), &equals("fifo"), None);
        assert_eq!((ms(&fifo, "a"), ms(&fifo, "b")), (290, 580), "{era} FIFO");
    }
}

#[test]
fn a_woken_rt_task_goes_to_a_cpu_running_the_lowest_class() {
    // Four CPUs: CPU 1 runs an RT task of priority 90 pinned there, CPUs 2
    // and 3 fair hogs. B (priority 50) runs briefly on CPU 0 and sleeps;
    // meanwhile A (priority 40, pinned to CPU 0) wakes there and runs.
    // When B wakes, the RT task on its CPU cannot move, so
    // select_task_rq_rt looks for the lowest CPU (find_lowest_rq): one
    // running fair tasks, never CPU 1 (nor CPU 0, whose A B would preempt).
    let w = r#"{"tasks":[
      {"name":"B","start_cpu":0,"rt":{"policy":"fifo","priority":50},"program":[
        {"compute":{"ns":100000}},{"sleep":{"ns":5000000}},{"compute":{"ns":1000000}},{"mark":"b"}]},
      {"name":"A","affinity":"0","rt":{"policy":"fifo","priority":40},"program":[
        {"until":{"ns":2000000}},{"compute":{"ns":50000000}}]},
      {"name":"C","affinity":"1","rt":{"policy":"fifo","priority":90},"program":[{"compute":{"ns":50000000}}]},
      {"name":"h2","affinity":"2","program":[{"compute":{"ns":50000000}}]},
      {"name":"h3","affinity":"3","program":[{"compute":{"ns":50000000}}]}]}"#;
    for era in [Era::V2_6_28, Era::V4_15, Era::V6_12] {
        let out = run(era, &cpus(4), w, None);
        let b = 0;
        let placed: Vec<(usize, Reason)> = out
            .trace
            .iter()
            .filter_map(|e| match *e {
                TraceEvent::Wakeup {
                    task,
                    target,
                    reason,
                    ..
                } if task == b => Some((target, reason)),
                _ => None,
            })
            .collect();
        assert_eq!(placed.len(), 1, "{era}: {placed:?}");
        let (cpu, reason) = placed[0];
        assert!(
            (cpu == 2 || cpu == 3) && reason == Reason::RtLowest,
            "{era}: B woke on CPU {cpu} ({reason})"
        );
        // It preempts the fair hog there at once.
        let done = marks(&out, "b")[0];
        assert!((6_100_000..6_150_000).contains(&done), "{era}: {done}");
    }
}

#[test]
fn rt_throttling_leaves_fair_tasks_50_ms_a_second_unless_runtime_is_shared() {
    // An RT hog and a fair hog on CPU 0 of 2 for 2 s. 6.12 (RT_RUNTIME_SHARE
    // off): the RT queue is throttled after 950 ms of each period, so the
    // fair hog runs 50 ms a second. 4.15 (on): CPU 0 borrows CPU 1's
    // unused runtime up to the whole period, and the fair hog starves.
    let w = r#"{"tasks":[
      {"name":"rt","affinity":"0","rt":{"policy":"fifo","priority":50},"program":[{"forever":[{"compute":{"ns":1000000}}]}]},
      {"name":"fair","affinity":"0","program":[{"forever":[{"compute":{"ns":1000000}}]}]}]}"#;
    let fair_ms = |era: Era| {
        let out = run(era, &cpus(2), w, Some(2_000_000_000));
        let throttled = out.counters.get("rt.throttled").copied().unwrap_or(0);
        (task(&out, "fair").sum_exec_ns / 1_000_000, throttled)
    };
    let (shared_off, throttled) = fair_ms(Era::V6_12);
    assert!(
        (95..=105).contains(&shared_off),
        "6.12: fair ran {shared_off} ms"
    );
    assert_eq!(throttled, 2);
    let (shared_on, throttled) = fair_ms(Era::V4_15);
    assert!(shared_on < 5, "4.15: fair ran {shared_on} ms");
    assert_eq!(throttled, 0);
}

#[test]
fn a_second_rt_task_on_a_busy_cpu_is_pushed_to_the_cpu_running_the_lowest_class() {
    // A (priority 60) and B (priority 50) both start on CPU 0; CPU 1 runs
    // an RT task of priority 90 pinned there, CPUs 2 and 3 fair hogs. When
    // CPU 0 switches to A, B waits behind it: the balance callback pushes
    // B (push_rt_tasks) to a CPU running fair tasks, never to CPU 1.
    let w = r#"{"tasks":[
      {"name":"A","start_cpu":0,"rt":{"policy":"fifo","priority":60},"program":[{"compute":{"ns":20000000}}]},
      {"name":"B","start_cpu":0,"rt":{"policy":"fifo","priority":50},"program":[{"compute":{"ns":1000000}},{"mark":"b"}]},
      {"name":"C","affinity":"1","rt":{"policy":"fifo","priority":90},"program":[{"compute":{"ns":20000000}}]},
      {"name":"h2","affinity":"2","program":[{"compute":{"ns":20000000}}]},
      {"name":"h3","affinity":"3","program":[{"compute":{"ns":20000000}}]}]}"#;
    for era in [Era::V2_6_28, Era::V4_15, Era::V6_12] {
        let out = run(era, &cpus(4), w, None);
        let pushes: Vec<(usize, usize)> = out
            .trace
            .iter()
            .filter_map(|e| match *e {
                TraceEvent::Migrate {
                    task: 1,
                    from,
                    to,
                    reason: Reason::RtPush,
                    ..
                } => Some((from, to)),
                _ => None,
            })
            .collect();
        assert!(
            matches!(pushes.as_slice(), [(0, 2)] | [(0, 3)]),
            "{era}: B pushed {pushes:?}"
        );
        // B runs there at once, preempting the fair hog: done in about 1 ms.
        let done = marks(&out, "b")[0];
        assert!(done < 1_200_000, "{era}: B done at {done} ns");
    }
}

//! The task language's pthread objects and rt-app's timing events, each
//! against the semantics rt-app gives them (doc/tutorial.txt): a mutex
//! serialises, a condition variable's signal wakes one waiter and is lost
//! without one, a broadcast wakes all, a barrier opens at the last arrival,
//! `mem` costs its bytes at the machine's copying speed and bandwidth,
//! `runtime` ends at a wall time where `run` ends after its work.

mod common;

use common::{machine, marks};
use schedlab::engine::RunOutput;
use schedlab::policy::{Era, PolicySpec};
use schedlab::topology::{HwCosts, Topology};
use schedlab::workload::program::Workload;

fn run(topo: &Topology, workload_json: &str, duration_ns: Option<u64>) -> RunOutput {
    common::run_traced(
        topo,
        PolicySpec::era(Era::V6_12),
        workload_json,
        1,
        duration_ns,
    )
}

fn counter(out: &RunOutput, name: &str) -> u64 {
    out.counters.get(name).copied().unwrap_or(0)
}

/// A holds the mutex for 100 us from time 0; B, on another CPU, asks for
/// it at 10 us.
fn two_lockers(lock: bool) -> String {
    let (l, u) = if lock {
        (r#"{"lock":"m"},"#, r#",{"unlock":"m"}"#)
    } else {
        ("", "")
    };
    format!(
        r#"{{"tasks":[
          {{"name":"A","affinity":"0","program":[{l}{{"mark":"a.in"}},{{"compute":{{"ns":100000}}}},{{"mark":"a.out"}}{u}]}},
          {{"name":"B","affinity":"1","program":[{{"sleep":{{"ns":10000}}}},{l}{{"mark":"b.in"}},{{"compute":{{"ns":100000}}}}{u}]}}]}}"#
    )
}

#[test]
fn a_contended_mutex_serialises_the_critical_sections_with_a_futex_wakeup() {
    let topo = machine(1, 1, 2, 1, HwCosts::default());
    let out = run(&topo, &two_lockers(true), None);
    let (a_out, b_in) = (marks(&out, "a.out")[0], marks(&out, "b.in")[0]);
    // B's critical section starts when A unlocks: after the unlock's futex
    // wake and B's wakeup (a remote wakeup to an idle CPU), well within 10 us.
    assert!(
        b_in > a_out && b_in - a_out < 10_000,
        "a.out {a_out} b.in {b_in}"
    );
    assert_eq!(counter(&out, "futex.wait"), 1);
    assert_eq!(counter(&out, "futex.wake"), 1);
    assert_eq!(counter(&out, "futex.woken"), 1);
    // Without the mutex B starts at 10 us, inside A's section.
    let free = run(&topo, &two_lockers(false), None);
    assert!(marks(&free, "b.in")[0] < marks(&free, "a.out")[0]);
}

#[test]
fn an_uncontended_mutex_costs_an_atomic_and_no_system_call_or_wakeup() {
    let topo = machine(1, 1, 1, 1, HwCosts::default());
    let prog = |lock: bool| {
        let body = if lock {
            r#"{"lock":"m"},{"compute":{"ns":1000}},{"unlock":"m"}"#
        } else {
            r#"{"compute":{"ns":1000}}"#
        };
        format!(
            r#"{{"tasks":[{{"name":"A","program":[{{"loop":{{"count":100,"body":[{body}]}}}}]}}]}}"#
        )
    };
    let locked = run(&topo, &prog(true), None);
    let plain = run(&topo, &prog(false), None);
    assert!(
        !locked
            .counters
            .keys()
            .any(|k| k.starts_with("futex") || k.starts_with("ttwu")),
        "{:?}",
        locked.counters
    );
    // 200 atomics on the mutex's line: the first from beyond the LLC
    // (miss_ns[2], 85 ns), the rest in this CPU's cache (miss_ns[0], 5 ns).
    let c = HwCosts::default();
    assert_eq!(
        locked.end_ns - plain.end_ns,
        c.miss_ns[2] + 199 * c.miss_ns[0]
    );
}

/// Consumers wait on a condition variable under `m` after `consumer_delay_ns`;
/// the producer takes `m` after `producer_delay_ns` and signals or broadcasts.
fn cond(consumers: usize, wake: &str, consumer_delay_ns: u64, producer_delay_ns: u64) -> String {
    let mut tasks: Vec<String> = (0..consumers)
        .map(|i| {
            format!(
                r#"{{"name":"C{i}","program":[{{"sleep":{{"ns":{consumer_delay_ns}}}}},{{"lock":"m"}},{{"cond_wait":{{"cond":"c","mutex":"m"}}}},{{"mark":"woke"}},{{"unlock":"m"}}]}}"#
            )
        })
        .collect();
    tasks.push(format!(
        r#"{{"name":"P","program":[{{"sleep":{{"ns":{producer_delay_ns}}}}},{{"lock":"m"}},{{"mark":"signal"}},{{"{wake}":"c"}},{{"unlock":"m"}}]}}"#
    ));
    format!(r#"{{"tasks":[{}]}}"#, tasks.join(","))
}

#[test]
fn a_signal_wakes_the_waiting_consumer_after_the_producer_unlocks() {
    let topo = machine(1, 1, 4, 1, HwCosts::default());
    let out = run(&topo, &cond(1, "signal", 1, 100_000), Some(10_000_000));
    let (signal, woke) = (marks(&out, "signal"), marks(&out, "woke"));
    assert_eq!(woke.len(), 1);
    assert!(woke[0] > signal[0] && woke[0] - signal[0] < 10_000);
    // The signal's futex wake, then the producer's unlock wakes the
    // consumer again (it found the mutex held when it woke).
    assert!(counter(&out, "futex.wake") >= 1);
    // Signalled before anyone waits (the producer goes first): lost, and
    // the consumer sleeps on.
    let lost = run(&topo, &cond(1, "signal", 100_000, 1), Some(10_000_000));
    assert!(marks(&lost, "woke").is_empty());
}

#[test]
fn broadcast_wakes_every_waiter_and_signal_only_one() {
    let topo = machine(1, 1, 4, 1, HwCosts::default());
    let out = run(&topo, &cond(3, "broadcast", 1, 100_000), Some(10_000_000));
    assert_eq!(marks(&out, "woke").len(), 3);
    assert!(counter(&out, "futex.woken") >= 3);
    let one = run(&topo, &cond(3, "signal", 1, 100_000), Some(10_000_000));
    assert_eq!(marks(&one, "woke").len(), 1);
}

#[test]
fn a_barrier_of_three_releases_all_at_the_last_arrival() {
    let topo = machine(1, 1, 4, 1, HwCosts::default());
    let task = |i: usize, delay: u64| {
        format!(
            r#"{{"name":"T{i}","program":[{{"sleep":{{"ns":{delay}}}}},{{"mark":"arrive"}},{{"barrier":"b"}},{{"mark":"through"}}]}}"#
        )
    };
    let json = format!(
        r#"{{"tasks":[{},{},{}]}}"#,
        task(0, 10_000),
        task(1, 50_000),
        task(2, 200_000)
    );
    let w = Workload::compile(&serde_json::from_str(&json).unwrap(), 4).unwrap();
    assert_eq!(w.barrier_users, vec![3]);
    let out = run(&topo, &json, None);
    let last = *marks(&out, "arrive").iter().max().unwrap();
    assert!(last >= 200_000);
    let through = marks(&out, "through");
    assert_eq!(through.len(), 3);
    for t in through {
        // The last arrival's futex wake, and the sleepers' CPUs leaving
        // their idle states (C1E's 10 us exit after 150 us asleep).
        assert!(
            t > last && t - last < 50_000,
            "through at {t}, last arrival {last}"
        );
    }
}

#[test]
fn mem_costs_its_bytes_at_the_copying_speed_and_beyond_the_llc_at_the_bandwidth() {
    let mem_time = |costs: HwCosts, bytes: u64, buffer: u64| {
        let topo = machine(1, 1, 1, 1, costs);
        let json = format!(
            r#"{{"tasks":[{{"name":"M","program":[{{"mark":"t"}},{{"mem":{{"bytes":{bytes},"buffer":{buffer}}}}},{{"mark":"t"}}]}}]}}"#
        );
        let out = run(&topo, &json, None);
        let m = out.marks.iter().find(|m| m.label == "t").unwrap();
        m.interval_sum_ns
    };
    let c = HwCosts::default();
    // In cache (a 64 KiB buffer): copy_ns_per_kib per KiB, twice the bytes twice the time.
    let one = mem_time(c.clone(), 1 << 20, 64 << 10);
    assert_eq!(one, 1024 * c.copy_ns_per_kib);
    assert_eq!(mem_time(c.clone(), 2 << 20, 64 << 10), 2 * one);
    // A 4 MiB buffer against a 1 MiB LLC on a 1 GB/s node: 3/4 of the
    // writing is memory traffic (a line read for ownership and written
    // back, 2 bytes per byte), capped by the bandwidth; halving the
    // bandwidth roughly doubles the time.
    let slow = HwCosts {
        llc_kib: 1024,
        mem_bw_mb_s: 1000,
        ..c.clone()
    };
    let t1 = mem_time(slow.clone(), 1 << 20, 4 << 20);
    let t2 = mem_time(
        HwCosts {
            mem_bw_mb_s: 500,
            ..slow
        },
        1 << 20,
        4 << 20,
    );
    // 3/4 of 1 MiB at 0.5 bytes/ns (1 GB/s, 2 bytes moved per byte) is 1.57 ms.
    assert!((1_500_000..1_700_000).contains(&t1), "{t1}");
    let r = t2 as f64 / t1 as f64;
    assert!((1.9..2.1).contains(&r), "{t1} {t2}");
}

#[test]
fn runtime_ends_at_its_wall_time_when_preempted_where_run_ends_later() {
    // X runs 10 ms on CPU 0; Y wakes at 2 ms on the same CPU and computes
    // 3 ms, sharing the CPU with X until it is done.
    let topo = machine(1, 1, 1, 1, HwCosts::default());
    let json = |op: &str| {
        format!(
            r#"{{"tasks":[
              {{"name":"X","program":[{{"mark":"x"}},{{"{op}":{{"ns":10000000}}}},{{"mark":"x"}}]}},
              {{"name":"Y","program":[{{"sleep":{{"ns":2000000}}}},{{"compute":{{"ns":3000000}}}}]}}]}}"#
        )
    };
    let interval = |out: &RunOutput| {
        let m = out.marks.iter().find(|m| m.label == "x").unwrap();
        m.interval_sum_ns
    };
    let rt = run(&topo, &json("runtime"), None);
    let x_exec = rt.tasks[0].sum_exec_ns;
    assert_eq!(interval(&rt), 10_000_000);
    // Preempted: X ran less than its 10 ms.
    assert!(x_exec < 9_000_000, "{x_exec}");
    let work = run(&topo, &json("compute"), None);
    assert!(interval(&work) > 12_900_000, "{}", interval(&work));
}

/// A holds the mutex for `hold_ns` from time 0; B, on another CPU, asks
/// for it at 1 us with InnoDB's spin (MySQL's defaults: 30 rounds of a
/// random 0-5 units of 50 PAUSEs).
fn spin_pair(hold_ns: u64) -> String {
    format!(
        r#"{{"tasks":[
          {{"name":"A","affinity":"0","program":[{{"lock":"m"}},{{"compute":{{"ns":{hold_ns}}}}},{{"mark":"a.out"}},{{"unlock":"m"}}]}},
          {{"name":"B","affinity":"1","program":[{{"sleep":{{"ns":1000}}}},{{"mark":"b.ask"}},{{"spin_lock":{{"mutex":"m"}}}},{{"mark":"b.in"}},{{"unlock":"m"}}]}}]}}"#
    )
}

/// The longest spin round at the default costs: 5 units x 50 PAUSEs x 10
/// cycles at 3 GHz.
const MAX_ROUND_NS: u64 = 5 * 50 * 10 * 1000 / 3000;

#[test]
fn a_spin_that_outlasts_the_holder_takes_the_mutex_without_sleeping() {
    // MySQL 8.0's TTASEventMutex::spin_and_try_lock: is_free() finds the
    // lock word clear within its spin rounds, try_lock() takes it; no
    // sync-array wait. A's 5 us section ends inside B's spin (30 rounds
    // average 12.5 us).
    let topo = machine(1, 1, 2, 1, HwCosts::default());
    let out = run(&topo, &spin_pair(5_000), None);
    let (a_out, ask, b_in) = (
        marks(&out, "a.out")[0],
        marks(&out, "b.ask")[0],
        marks(&out, "b.in")[0],
    );
    assert_eq!(counter(&out, "futex.wait"), 0);
    assert_eq!(counter(&out, "futex.wake"), 0);
    assert_eq!(counter(&out, "spin.acquired"), 1);
    assert_eq!(counter(&out, "spin.slept"), 0);
    // B got it within a round of the release, and the CPU it burned is
    // the spin: from its request to its last round's end.
    assert!(
        b_in > a_out && b_in - a_out <= MAX_ROUND_NS + 200,
        "a.out {a_out} b.in {b_in}"
    );
    let spun = counter(&out, "spin.ns");
    assert!(
        spun + 200 >= b_in - ask && spun <= b_in - ask,
        "spun {spun} ns, asked {ask} got {b_in}"
    );
    // B's CPU was busy (user time) all along its spin.
    assert!(out.cpu_time[1].busy_ns >= spun, "{:?}", out.cpu_time[1]);
}

#[test]
fn a_spin_that_the_holder_outlasts_sleeps_in_futex_wait_after_its_rounds() {
    // mutex_enter's slow path (TTASEventMutex::spin_and_try_lock, MySQL
    // 8.0): all rounds spent, the thread reserves a sync-array cell and
    // waits for the event; A's 200 us section outlasts the 30 rounds.
    let topo = machine(1, 1, 2, 1, HwCosts::default());
    let out = run(&topo, &spin_pair(200_000), None);
    let (a_out, b_in) = (marks(&out, "a.out")[0], marks(&out, "b.in")[0]);
    assert_eq!(counter(&out, "spin.rounds"), 30);
    assert_eq!(counter(&out, "spin.slept"), 1);
    assert_eq!(counter(&out, "futex.wait"), 1);
    assert_eq!(counter(&out, "futex.wake"), 1);
    let spun = counter(&out, "spin.ns");
    assert!(spun > 0 && spun <= 30 * MAX_ROUND_NS, "spun {spun} ns");
    // Woken by A's unlock, B takes it (a remote wakeup to an idle CPU).
    assert!(
        b_in > a_out && b_in - a_out < 10_000,
        "a.out {a_out} b.in {b_in}"
    );
}

#[test]
fn a_spinner_sharing_the_holders_cpu_burns_its_slice_then_sleeps() {
    // The holder preempted: A and B share CPU 0; B wakes at 1 us and
    // gets the CPU from A, inside A's 20 ms section, by the time A's
    // slice ends at the latest; it spins its 30 rounds while A cannot
    // run, then sleeps, and A finishes. Spinning bought nothing.
    let topo = machine(1, 1, 1, 1, HwCosts::default());
    let json = r#"{"tasks":[
      {"name":"A","program":[{"lock":"m"},{"compute":{"ns":20000000}},{"mark":"a.out"},{"unlock":"m"}]},
      {"name":"B","program":[{"sleep":{"ns":1000}},{"spin_lock":{"mutex":"m"}},{"mark":"b.in"},{"unlock":"m"}]}]}"#;
    let out = run(&topo, json, None);
    assert_eq!(counter(&out, "spin.slept"), 1, "{:?}", out.counters);
    assert_eq!(counter(&out, "spin.rounds"), 30);
    assert_eq!(counter(&out, "spin.acquired"), 0);
    assert_eq!(counter(&out, "futex.wait"), 1);
    assert!(marks(&out, "b.in")[0] > marks(&out, "a.out")[0]);
}

#[test]
fn an_innodb_event_wakes_every_sleeper_a_futex_one() {
    // InnoDB's sync array (os_event_set broadcasts): a release wakes all
    // threads asleep on the mutex; a futex mutex wakes one.
    let topo = machine(1, 1, 4, 1, HwCosts::default());
    let json = |all: bool| {
        let waiter = |name: &str, cpu: usize| {
            format!(
                r#"{{"name":"{name}","affinity":"{cpu}","program":[{{"sleep":{{"ns":1000}}}},{{"spin_lock":{{"mutex":"m","rounds":0,"wake_all":{all}}}}},{{"compute":{{"ns":1000}}}},{{"unlock":"m"}}]}}"#
            )
        };
        format!(
            r#"{{"tasks":[{{"name":"A","affinity":"0","program":[{{"lock":"m"}},{{"compute":{{"ns":100000}}}},{{"unlock":"m"}}]}},{},{},{}]}}"#,
            waiter("B", 1),
            waiter("C", 2),
            waiter("D", 3)
        )
    };
    let all = run(&topo, &json(true), None);
    let one = run(&topo, &json(false), None);
    // One at a time: each unlock with sleepers wakes one (3 wakeups).
    assert_eq!(counter(&one, "futex.woken"), 3);
    // All at once: A's unlock wakes B, C, D; two find it taken and sleep
    // again, and so on: more wakeups, and more waits.
    assert!(counter(&all, "futex.woken") > 3, "{:?}", all.counters);
    assert!(counter(&all, "futex.wait") > counter(&one, "futex.wait"));
}

/// A counting semaphore: a post before the wait is kept in the count (the
/// wait takes it without sleeping); a wait on zero sleeps until a post
/// hands one over with a futex wake.
#[test]
fn a_semaphore_keeps_early_posts_and_wakes_a_waiter_with_a_futex_wake() {
    let topo = machine(1, 1, 2, 1, HwCosts::default());
    // A posts at once and again after 100 us; B sleeps 50 us, then waits
    // twice: the first post is in the count, the second wakes it.
    let out = run(
        &topo,
        r#"{"tasks":[
          {"name":"A","affinity":"0","program":[{"sem_post":{"sem":"s"}},{"compute":{"ns":100000}},{"mark":"a.post"},{"sem_post":{"sem":"s"}}]},
          {"name":"B","affinity":"1","program":[{"sleep":{"ns":50000}},{"sem_wait":{"sem":"s"}},{"mark":"b.first"},{"sem_wait":{"sem":"s"}},{"mark":"b.second"}]}]}"#,
        None,
    );
    let first = marks(&out, "b.first")[0];
    assert!((50_000..60_000).contains(&first), "b.first {first}");
    let (post, second) = (marks(&out, "a.post")[0], marks(&out, "b.second")[0]);
    // The post's futex wake, then a remote wakeup of an idle CPU.
    assert!(
        second > post && second - post < 20_000,
        "a.post {post} b.second {second}"
    );
    assert_eq!(counter(&out, "futex.wait"), 1);
    assert_eq!(counter(&out, "futex.wake"), 1);
    assert_eq!(counter(&out, "futex.woken"), 1);
    assert_eq!(counter(&out, "sem.queued_behind"), 0);
}

/// Waiters queue on a semaphore oldest first and each post hands one over
/// in that order; `sem.queued_behind` counts the waits that found another
/// waiter already queued (sysbench's row locks: the duplicate key's
/// precondition, docs/fidelity.md).
#[test]
fn semaphore_waiters_are_served_in_order_and_those_behind_another_are_counted() {
    let topo = machine(1, 1, 4, 1, HwCosts::default());
    let waiter = |name: &str, cpu: u32, delay: u64| {
        format!(
            r#"{{"name":"{name}","affinity":"{cpu}","program":[{{"sleep":{{"ns":{delay}}}}},{{"sem_wait":{{"sem":"s"}}}},{{"mark":"{name}.in"}}]}}"#
        )
    };
    let out = run(
        &topo,
        &format!(
            r#"{{"tasks":[
          {{"name":"A","affinity":"0","program":[{{"compute":{{"ns":100000}}}},{{"sem_post":{{"sem":"s"}}}},{{"compute":{{"ns":50000}}}},{{"sem_post":{{"sem":"s"}}}},{{"compute":{{"ns":50000}}}},{{"sem_post":{{"sem":"s"}}}}]}},
          {},{},{}]}}"#,
            waiter("B", 1, 10_000),
            waiter("C", 2, 20_000),
            waiter("D", 3, 30_000)
        ),
        None,
    );
    let (b, c, d) = (
        marks(&out, "B.in")[0],
        marks(&out, "C.in")[0],
        marks(&out, "D.in")[0],
    );
    assert!(b < c && c < d, "B {b} C {c} D {d}");
    assert!(
        b > 100_000 && c > 150_000 && d > 200_000,
        "B {b} C {c} D {d}"
    );
    assert_eq!(counter(&out, "futex.wait"), 3);
    assert_eq!(counter(&out, "sem.queued_behind"), 2);
}

/// `free` semaphore operations (a replayed trace's wakeups) charge no
/// atomic and no system call: only the wakeup's own work separates the
/// post from the woken task's next mark, and a post nobody waits for
/// takes no time at all.
#[test]
fn free_semaphore_operations_charge_only_the_wakeup() {
    let topo = machine(1, 1, 2, 1, HwCosts::default());
    let out = run(
        &topo,
        r#"{"tasks":[
          {"name":"A","affinity":"0","program":[{"compute":{"ns":100000}},{"mark":"a.post"},{"sem_post":{"sem":"s","free":true}},{"mark":"a.after"},{"sem_post":{"sem":"t","free":true}},{"mark":"a.done"}]},
          {"name":"B","affinity":"1","program":[{"sem_wait":{"sem":"s","free":true}},{"mark":"b.woken"}]}]}"#,
        None,
    );
    // B's sleep is counted as a futex wait (a sleep on the semaphore);
    // no futex wake call is charged.
    assert_eq!(counter(&out, "futex.wake"), 0);
    let (post, woken) = (marks(&out, "a.post")[0], marks(&out, "b.woken")[0]);
    assert!(
        woken > post && woken - post < 20_000,
        "a.post {post} b.woken {woken}"
    );
    // The post to "t" finds no waiter: counted, at no cost.
    assert_eq!(marks(&out, "a.after")[0], marks(&out, "a.done")[0]);
}

/// PostgreSQL 8.3's LWLockRelease does not hand the lock over: it wakes
/// the head waiter, who must try again (LWLockAcquire's retry loop). A
/// holder that releases and takes the lock again before the woken task
/// runs keeps it; the woken task finds it taken, queues again, and is
/// woken by the next release.
#[test]
fn an_lwlock_release_wakes_the_head_waiter_who_must_compete_again() {
    let topo = machine(1, 1, 2, 1, HwCosts::default());
    let out = run(
        &topo,
        r#"{"tasks":[
          {"name":"A","affinity":"0","program":[{"lw_acquire":{"lock":"x"}},{"compute":{"ns":100000}},{"lw_release":"x"},{"lw_acquire":{"lock":"x"}},{"compute":{"ns":100000}},{"mark":"a.out"},{"lw_release":"x"}]},
          {"name":"B","affinity":"1","program":[{"sleep":{"ns":10000}},{"lw_acquire":{"lock":"x"}},{"mark":"b.in"},{"compute":{"ns":10000}},{"lw_release":"x"}]}]}"#,
        None,
    );
    let (a_out, b_in) = (marks(&out, "a.out")[0], marks(&out, "b.in")[0]);
    assert!(b_in > a_out, "a.out {a_out} b.in {b_in}");
    assert_eq!(counter(&out, "lwlock.slept"), 2);
    assert_eq!(counter(&out, "lwlock.woken"), 2);
    assert_eq!(counter(&out, "lwlock.lost"), 1);
    // A semaphore, not a futex.
    assert_eq!(counter(&out, "futex.wait"), 0);
}

/// LWLockRelease (8.3) wakes the run of shared waiters at the head of the
/// queue together, or one exclusive waiter alone; the shared waiter queued
/// behind an exclusive one waits for it.
#[test]
fn an_lwlock_release_wakes_the_shared_run_at_the_head_or_one_exclusive_waiter() {
    let topo = machine(1, 1, 5, 1, HwCosts::default());
    let waiter = |name: &str, cpu: u32, at_us: u64, shared: bool| {
        format!(
            r#"{{"name":"{name}","affinity":"{cpu}","program":[{{"sleep":{{"ns":{}}}}},{{"lw_acquire":{{"lock":"x","shared":{shared}}}}},{{"mark":"{name}.in"}},{{"compute":{{"ns":50000}}}},{{"mark":"{name}.out"}},{{"lw_release":"x"}}]}}"#,
            at_us * 1000
        )
    };
    let json = format!(
        r#"{{"tasks":[{{"name":"A","affinity":"0","program":[{{"lw_acquire":{{"lock":"x"}}}},{{"compute":{{"ns":100000}}}},{{"lw_release":"x"}}]}},{},{},{},{}]}}"#,
        waiter("s1", 1, 10, true),
        waiter("s2", 2, 20, true),
        waiter("e", 3, 30, false),
        waiter("s3", 4, 40, true),
    );
    let out = run(&topo, &json, None);
    let at = |m: &str| marks(&out, m)[0];
    // The two shared waiters at the head hold it together.
    assert!(at("s2.in") < at("s1.out") && at("s1.in") < at("s2.out"));
    // The exclusive one follows them, and the shared one behind it follows it.
    assert!(at("e.in") > at("s1.out").max(at("s2.out")));
    assert!(at("s3.in") > at("e.out"));
    assert_eq!(counter(&out, "lwlock.woken"), 4);
    assert_eq!(counter(&out, "lwlock.lost"), 0);
}

/// After a release that woke waiters, releases wake no one until a woken
/// waiter has run and tried again (8.3's releaseOK): a holder that takes
/// and releases the lock again at once leaves the second waiter asleep;
/// the first, once it has had the lock, wakes it.
#[test]
fn an_lwlock_wakes_no_one_again_until_a_woken_waiter_has_retried() {
    let topo = machine(1, 1, 3, 1, HwCosts::default());
    let out = run(
        &topo,
        r#"{"tasks":[
          {"name":"A","affinity":"0","program":[{"lw_acquire":{"lock":"x"}},{"compute":{"ns":100000}},{"lw_release":"x"},{"lw_acquire":{"lock":"x"}},{"compute":{"ns":100}},{"lw_release":"x"}]},
          {"name":"B","affinity":"1","program":[{"sleep":{"ns":10000}},{"lw_acquire":{"lock":"x"}},{"mark":"b.in"},{"compute":{"ns":50000}},{"mark":"b.out"},{"lw_release":"x"}]},
          {"name":"C","affinity":"2","program":[{"sleep":{"ns":20000}},{"lw_acquire":{"lock":"x"}},{"mark":"c.in"},{"lw_release":"x"}]}]}"#,
        None,
    );
    assert!(
        marks(&out, "c.in")[0] > marks(&out, "b.out")[0],
        "b.in {:?} b.out {:?} c.in {:?} {:?}",
        marks(&out, "b.in"),
        marks(&out, "b.out"),
        marks(&out, "c.in"),
        out.counters
    );
    // A's second release woke no one: B and C were each woken once.
    assert_eq!(counter(&out, "lwlock.woken"), 2);
    assert_eq!(counter(&out, "lwlock.lost"), 0);
}

/// XLogFlush (8.3): a flush writes every record appended before it began;
/// the tasks queued on the lock behind it are woken one by one and find
/// their records flushed, and a task whose record was flushed before it
/// got to its flush does not take the lock at all.
#[test]
fn a_log_flush_covers_every_record_appended_before_it_began() {
    let topo = machine(1, 1, 4, 1, HwCosts::default());
    let flush = r#"{"log_flush":{"log":"wal","lock":"w","io":{"ns":50000}}}"#;
    let json = format!(
        r#"{{"tasks":[
          {{"name":"t1","affinity":"0","program":[{{"log_append":"wal"}},{flush},{{"mark":"t1.done"}}]}},
          {{"name":"t2","affinity":"1","program":[{{"sleep":{{"ns":10000}}}},{{"log_append":"wal"}},{flush},{{"mark":"t2.done"}}]}},
          {{"name":"t3","affinity":"2","program":[{{"sleep":{{"ns":11000}}}},{{"log_append":"wal"}},{flush},{{"mark":"t3.done"}}]}},
          {{"name":"t4","affinity":"3","program":[{{"sleep":{{"ns":20000}}}},{{"log_append":"wal"}},{{"compute":{{"ns":200000}}}},{flush},{{"mark":"t4.done"}}]}}]}}"#
    );
    let out = run(&topo, &json, None);
    let at = |m: &str| marks(&out, m)[0];
    // t1 flushes its own record; t2's flush covers t2, t3 and t4.
    assert_eq!(counter(&out, "log.flushes"), 2);
    // t3 under the lock, t4 before it.
    assert_eq!(counter(&out, "log.covered"), 2);
    assert!(
        (50_000..60_000).contains(&at("t1.done")),
        "{}",
        at("t1.done")
    );
    assert!(
        at("t2.done") > 100_000 && at("t2.done") < 130_000,
        "t1 {} t2 {} t3 {}",
        at("t1.done"),
        at("t2.done"),
        at("t3.done")
    );
    // t3 needed no write of its own: woken by t2's release.
    assert!(at("t3.done") > at("t2.done") && at("t3.done") < at("t2.done") + 20_000);
    assert_eq!(counter(&out, "lwlock.slept"), 2);
}

/// `until` sleeps to a time counted from the task's start (clock_nanosleep
/// to an absolute time), however long the work before it took; past that
/// time it does not sleep at all.
#[test]
fn until_wakes_at_its_time_from_the_tasks_start_or_not_at_all_when_late() {
    let topo = machine(1, 1, 1, 1, HwCosts::default());
    let out = run(
        &topo,
        r#"{"tasks":[
          {"name":"A","program":[{"compute":{"ns":30000}},{"until":{"ns":100000}},{"mark":"a.woke"},{"compute":{"ns":50000}},{"until":{"ns":120000}},{"mark":"a.late"}]}]}"#,
        None,
    );
    let woke = marks(&out, "a.woke")[0];
    assert!((100_000..110_000).contains(&woke), "a.woke {woke}");
    // The second `until` is past (the work ended after 150 us): no sleep.
    let late = marks(&out, "a.late")[0];
    assert!(
        late >= woke + 50_000 && late < woke + 52_000,
        "a.woke {woke} a.late {late}"
    );
}

/// A takes LWLock x shared at `a.try`; an RT task on A's CPU wakes at
/// `rt_wake_ns` and runs 5 ms; B, on another CPU, takes x shared 10 us
/// after `b_at_ns`.
fn preempted_in_the_spinlock(rt_wake_ns: u64, b_at_ns: u64) -> String {
    format!(
        r#"{{"tasks":[
          {{"name":"A","affinity":"0","program":[{{"compute":{{"ns":100000}}}},{{"mark":"a.try"}},{{"lw_acquire":{{"lock":"x","shared":true}}}},{{"mark":"a.in"}},{{"lw_release":"x"}}]}},
          {{"name":"R","affinity":"0","rt":{{"policy":"fifo","priority":50}},"program":[{{"until":{{"ns":{rt_wake_ns}}}}},{{"compute":{{"ns":5000000}}}},{{"mark":"r.out"}}]}},
          {{"name":"B","affinity":"1","program":[{{"until":{{"ns":{}}}}},{{"mark":"b.try"}},{{"lw_acquire":{{"lock":"x","shared":true}}}},{{"mark":"b.in"}},{{"lw_release":"x"}}]}}]}}"#,
        b_at_ns + 10_000
    )
}

/// s_lock (PostgreSQL 8.x's s_lock.c): a backend preempted inside an
/// LWLock's spinlock keeps it until it runs again; another that wants the
/// spinlock tries spins_per_delay times, then sleeps in pg_usleep (1 ms,
/// then 1x-2x longer each time), and gets in only after the holder has
/// run. Not preempted there, the same acquisition waits for nothing.
#[test]
fn a_backend_preempted_inside_an_lwlock_spinlock_makes_the_next_one_spin_then_sleep() {
    let topo = machine(1, 1, 2, 1, HwCosts::default());
    // Where A's try falls, with the RT task waking long after.
    let probe = run(&topo, &preempted_in_the_spinlock(50_000_000, 0), None);
    let a_try = marks(&probe, "a.try")[0];
    let (b_try, b_in) = (marks(&probe, "b.try")[0], marks(&probe, "b.in")[0]);
    assert_eq!(counter(&probe, "lwlock.s_lock_spins"), 0);
    // B's try came long before the RT task woke: in at once.
    let quick = b_in - b_try;
    assert!(quick < 2_000, "b.try {b_try} b.in {b_in}");

    // The RT task wakes 1 ns into A's try and holds A's CPU for 5 ms.
    let out = run(&topo, &preempted_in_the_spinlock(a_try + 1, a_try), None);
    let (b_try, b_in) = (marks(&out, "b.try")[0], marks(&out, "b.in")[0]);
    let r_out = marks(&out, "r.out")[0];
    let a_in = marks(&out, "a.in")[0];
    assert!(
        a_in > r_out,
        "A finished its try at {a_in}, the RT task at {r_out}"
    );
    assert!(
        b_in > a_in,
        "B got in at {b_in}, before A ran again at {a_in}"
    );
    let (spins, delays) = (
        counter(&out, "lwlock.s_lock_spins"),
        counter(&out, "lwlock.s_lock_delays"),
    );
    // 5 ms of waits from 1 ms, each 1x-2x the last: at least 3 sleeps,
    // each after a round of tries, and one more round before each sleep.
    assert!(delays >= 3, "{delays} sleeps");
    assert!(
        spins == delays || spins == delays + 1,
        "{spins} rounds, {delays} sleeps"
    );
    assert!(b_in - b_try >= 4_000_000, "B waited {} ns", b_in - b_try);
    assert_eq!(counter(&out, "lwlock.slept"), 0, "no semaphore wait");
}

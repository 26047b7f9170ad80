//! Generators: the tasks and channels they build, output shaped like the
//! real tools' (checked against lines the tools printed), bad parameters,
//! and behaviour the tools are known for.

use super::ops::*;
use super::readout::*;
use super::*;
use crate::engine::{Sim, SimConfig};
use crate::policy::{Era, PolicySpec};
use crate::topology::{preset, Topology};
use crate::workload::program::{Op, WorkloadSpec};

fn run(machine: &str, era: Era, bench: &Benchmark) -> (RunOutput, Report) {
    run_with(machine, &PolicySpec::era(era), bench)
}

fn run_with(machine: &str, policy: &PolicySpec, bench: &Benchmark) -> (RunOutput, Report) {
    let topology = Topology::from_spec(&preset(machine).unwrap()).unwrap();
    let built = bench.build().unwrap();
    let cfg = SimConfig {
        duration_ns: built.duration_ns,
        measure_from_ns: built.measure_from_ns,
        ..SimConfig::new(topology, policy, &built.spec).unwrap()
    };
    let out = Sim::new(&cfg).unwrap().run().unwrap();
    let report = bench.report(&out);
    (out, report)
}

fn bench(json: &str) -> Benchmark {
    serde_json::from_str(json).unwrap()
}

/// 4.15 with WA_WEIGHT on or off (the WA_WEIGHT commit's two variants).
fn wa_weight(on: bool) -> PolicySpec {
    let mut policy = PolicySpec::era(Era::V4_15);
    policy.features.insert("WA_WEIGHT".into(), on);
    policy
}

/// `digits.dd` with exactly `decimals` decimals.
fn is_decimal(s: &str, decimals: usize) -> bool {
    let Some((int, frac)) = s.split_once('.') else {
        return false;
    };
    !int.is_empty()
        && int.chars().all(|c| c.is_ascii_digit())
        && frac.len() == decimals
        && frac.chars().all(|c| c.is_ascii_digit())
}

fn is_int(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_digit())
}

/// One pattern per tool: each matches the line the real tool printed (the
/// seed fixtures) and the generator's line.
fn pipe_test_line(l: &str) -> bool {
    l.strip_suffix(" usecs/loop.")
        .is_some_and(|v| is_decimal(v, 2))
}
fn tbench_line(l: &str) -> bool {
    let w: Vec<&str> = l.split_whitespace().collect();
    let g = |v: &str| is_int(v) || (1..=5).any(|d| is_decimal(v, d));
    w.len() == 9
        && l.contains(" MB/sec  ")
        && w[0] == "Throughput"
        && g(w[1])
        && w[2] == "MB/sec"
        && is_int(w[3])
        && w[4] == "clients"
        && w[5] == w[3]
        && w[6] == "procs"
        && w[7]
            .strip_prefix("max_latency=")
            .is_some_and(|v| is_decimal(v, 3))
        && w[8] == "ms"
}
fn hackbench_line(l: &str) -> bool {
    l.strip_prefix("Time: ").is_some_and(|v| is_decimal(v, 3))
}
fn lat_ctx_header(l: &str) -> bool {
    let l = l.trim_start_matches('"');
    let Some((size, ovr)) = l.split_once(' ') else {
        return false;
    };
    size.strip_prefix("size=")
        .and_then(|s| s.strip_suffix('k'))
        .is_some_and(is_int)
        && ovr.strip_prefix("ovr=").is_some_and(|v| is_decimal(v, 2))
}
fn lat_ctx_line(l: &str) -> bool {
    l.split_once(' ')
        .is_some_and(|(n, t)| is_int(n) && is_decimal(t, 2))
}
fn netperf_line(l: &str) -> bool {
    let w: Vec<&str> = l.split_whitespace().collect();
    w.len() >= 5
        && w[..w.len() - 2].iter().all(|t| is_int(t))
        && is_decimal(w[w.len() - 2], 2)
        && is_decimal(w[w.len() - 1], 2)
}
fn sysbench_line(l: &str) -> bool {
    let w: Vec<&str> = l.split_whitespace().collect();
    w.len() == 5
        && w[0] == "transactions:"
        && is_int(w[1])
        && w[2].strip_prefix('(').is_some_and(|v| is_decimal(v, 2))
        && w[3] == "per"
        && w[4] == "sec.)"
}
fn perf_line(l: &str) -> bool {
    l.trim_start()
        .strip_suffix(" usecs/op")
        .is_some_and(|v| is_decimal(v, 6))
}

#[test]
fn fixture_lines_match_their_tool_patterns() {
    assert!(pipe_test_line("8.63 usecs/loop."));
    assert!(pipe_test_line("18.26 usecs/loop."));
    assert!(tbench_line(
        "Throughput 9438.1 MB/sec  40 clients  40 procs  max_latency=2.052 ms"
    ));
    assert!(hackbench_line("Time: 7.362"));
    assert!(lat_ctx_header("\"size=0k ovr=2.60"));
    assert!(lat_ctx_header("size=0k ovr=2.60"));
    assert!(lat_ctx_line("2 5.70"));
    // netperf 2.x TCP_RR data line and sysbench 1.0's summary, as printed.
    assert!(netperf_line(
        "16384  87380  1        1       10.00    33874.59"
    ));
    assert!(sysbench_line(
        "transactions:                        24455  (2445.34 per sec.)"
    ));
    assert!(perf_line("       8.873149 usecs/op"));
    // And each rejects another tool's line.
    assert!(!pipe_test_line("Time: 7.362"));
    assert!(!tbench_line("8.63 usecs/loop."));
    assert!(!hackbench_line("2 5.70"));
}

#[test]
fn pipe_test_builds_two_pipes_and_a_forked_child_and_prints_per_batch() {
    let b = bench(r#"{"kind":"pipe_test","loops":2000,"batches":3}"#);
    let built = b.build().unwrap();
    assert_eq!(built.spec.channels.len(), 2);
    assert_eq!(built.spec.tasks.len(), 1);
    assert!(matches!(built.spec.tasks[0].program[0], Op::Fork(_)));
    let (_, r) = run("desktop-8c", Era::V6_5, &b);
    assert_eq!(r.series.len(), 3);
    let lines: Vec<&str> = r.text.lines().collect();
    assert_eq!(lines.len(), 3);
    assert!(lines.iter().all(|l| pipe_test_line(l)), "{}", r.text);
    assert!(r.value > 1.0 && r.value < 50.0, "{}", r.value);
}

#[test]
fn perf_bench_pipe_prints_its_summary() {
    let (_, r) = run(
        "desktop-8c",
        Era::V6_5,
        &bench(r#"{"kind":"perf_bench_pipe","loops":5000}"#),
    );
    assert!(
        r.text
            .contains("# Executed 5000 pipe operations between two processes"),
        "{}",
        r.text
    );
    assert!(r.text.lines().any(perf_line), "{}", r.text);
    assert!(r.text.contains("ops/sec"));
}

#[test]
fn lat_ctx_subtracts_the_measured_overhead() {
    let b = bench(r#"{"kind":"lat_ctx","size_kb":0,"procs":2,"rounds":2000}"#);
    assert_eq!(
        b.build().unwrap().spec.channels.len(),
        3,
        "a pipe per process plus the overhead pipe"
    );
    let (_, r) = run("phoenix-2008", Era::V2_6_28, &b);
    let lines: Vec<&str> = r.text.lines().collect();
    assert!(
        lat_ctx_header(lines[0]) && lat_ctx_line(lines[1]),
        "{}",
        r.text
    );
    assert!(lines[1].starts_with("2 "));
    assert!(r.value > 0.0, "{}", r.text);
}

#[test]
fn hackbench_builds_its_groups_and_prints_the_time() {
    let b = bench(r#"{"kind":"hackbench","groups":2,"loops":10}"#);
    let built = b.build().unwrap();
    let parent = &built.spec.tasks;
    assert_eq!(parent.len(), 1, "one parent forks the children");
    let forks = parent[0]
        .program
        .iter()
        .filter(|op| matches!(op, Op::Fork(_)))
        .count();
    assert_eq!(forks, 80, "2 groups x (20 senders + 20 receivers)");
    assert_eq!(
        built.spec.channels.len(),
        42,
        "the ready and start pipes, and one socket per receiver"
    );
    let (out, r) = run("desktop-8c", Era::V6_5, &b);
    assert!(
        r.text.contains(
            "Running in process mode with 2 groups using 40 file descriptors each (== 80 tasks)"
        ),
        "{}",
        r.text
    );
    assert!(r.text.lines().any(hackbench_line), "{}", r.text);
    assert!(r.value > 0.0);
    // Every child said it was ready and read its start byte.
    assert_eq!(out.channels[0].bytes_read, 80);
    assert_eq!(out.channels[1].bytes_read, 80);
    // Each receiver read 20 senders x 10 loops x 100 bytes.
    assert!(out.channels[2..]
        .iter()
        .all(|c| c.bytes_read == 20 * 10 * 100));
    // The time starts when the parent wakes the children, after the forks.
    let start = marks(&out, "start")[0].0;
    assert!(start > 80 * 1000, "80 forks take time: {start} ns");
    let end = marks(&out, "done").iter().map(|m| m.0).max().unwrap();
    assert_eq!(r.value, (end - start) as f64 / 1e9);
}

#[test]
fn hackbench_times_its_childrens_exits_when_given_them() {
    // rt-tests' hackbench and perf's messaging stop the clock after
    // reaping every child; with exit_us each child computes that long
    // after its work, then the parent's wait(2) is woken by it.
    let plain = bench(r#"{"kind":"hackbench","groups":1,"loops":1}"#);
    let exiting = bench(r#"{"kind":"hackbench","groups":1,"loops":1,"exit_us":500}"#);
    let built = exiting.build().unwrap();
    assert_eq!(
        built.spec.channels.len(),
        23,
        "the exit notices' pipe besides"
    );
    let (out_plain, r_plain) = run("desktop-8c", Era::V6_12, &plain);
    let (out, r) = run("desktop-8c", Era::V6_12, &exiting);
    // 40 children exiting for 500 us each (of the reference CPU's work):
    // their CPU time grows by about that, and the time by at least that
    // spread over every CPU, which one loop alone never takes.
    let children_ns = |o: &RunOutput| -> u64 {
        o.tasks
            .iter()
            .filter(|t| t.name != "hackbench")
            .map(|t| t.sum_exec_ns)
            .sum()
    };
    let extra_ns = children_ns(&out) - children_ns(&out_plain);
    let ncpus = Topology::from_spec(&preset("desktop-8c").unwrap())
        .unwrap()
        .ncpus();
    assert!(extra_ns > 40 * 250_000, "{extra_ns} ns more");
    assert!(r_plain.value < 0.001, "{}", r_plain.text);
    assert!(
        r.value - r_plain.value >= extra_ns as f64 / ncpus as f64 / 1e9,
        "{} then {}",
        r_plain.value,
        r.value
    );
    // Every child's notice was read, one wait(2) each.
    assert_eq!(out.channels[2].bytes_read, 40);
    let start = marks(&out, "start")[0].0;
    let reaped = marks(&out, "reaped")[0].0;
    assert_eq!(r.value, (reaped - start) as f64 / 1e9);
    // The time ends after the last child's exit, not at its last read.
    let last_exit = out
        .tasks
        .iter()
        .filter(|t| t.name != "hackbench")
        .filter_map(|t| t.exited_ns)
        .max()
        .unwrap();
    assert!(
        reaped >= last_exit,
        "reaped at {reaped}, a child exited at {last_exit}"
    );
    assert!(marks(&out, "done").iter().all(|m| m.0 < reaped));
    // Without exit_us the run is what it always was: no notices, no reaping.
    assert!(marks(&out_plain, "reaped").is_empty());
    assert_eq!(out_plain.channels.len(), 22);
}

#[test]
fn hackbench_exit_us_is_checked_and_kept_out_of_links_when_zero() {
    let err = bench(r#"{"kind":"hackbench","exit_us":2000000}"#)
        .build()
        .unwrap_err()
        .to_string();
    assert!(err.contains("exit_us"), "{err}");
    let zero = bench(r#"{"kind":"hackbench","exit_us":0}"#);
    assert!(!serde_json::to_string(&zero).unwrap().contains("exit_us"));
    let set = Benchmark::Hackbench(Hackbench {
        exit_us: 700,
        ..hackbench_default()
    });
    let back: Benchmark = serde_json::from_str(&serde_json::to_string(&set).unwrap()).unwrap();
    assert_eq!(back, set);
    // A sweep may set it, though the JSON leaves it out at zero.
    assert!(zero.with_param("exit_us", &serde_json::json!(300)).is_ok());
}

fn hackbench_default() -> Hackbench {
    match bench(r#"{"kind":"hackbench"}"#) {
        Benchmark::Hackbench(h) => h,
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_unix_socket_holds_messages_by_their_skb_truesize() {
    // 100 bytes: 128 + 320 = 448 -> kmalloc-512, + 256 of sk_buff = 768.
    assert_eq!(unix_stream_capacity(212_992, 100), 277 * 100);
    // 1 byte: 64 + 320 = 384 -> 512 -> 768 as well.
    assert_eq!(unix_stream_capacity(212_992, 1), 277);
    // 4000 bytes: 4032 + 320 -> 8192, + 256.
    assert_eq!(unix_stream_capacity(212_992, 4000), 25 * 4000);
    // A message larger than the buffer still goes.
    assert_eq!(unix_stream_capacity(1000, 65_536), 65_536);
}

#[test]
fn tbench_prints_throughput_and_grows_until_the_box_is_saturated() {
    let mb = |clients: u64| {
        let b = bench(&format!(
            r#"{{"kind":"tbench","clients":{clients},"duration_ms":60,"warmup_ms":20}}"#
        ));
        let (_, r) = run("ivb-ep-2s", Era::V4_15, &b);
        assert!(r.text.lines().all(tbench_line), "{}", r.text);
        r.value
    };
    let (c5, c20, c40, c80) = (mb(5), mb(20), mb(40), mb(80));
    assert!(c20 > 2.5 * c5, "{c5} {c20}");
    assert!(c40 > c20, "{c20} {c40}");
    assert!(
        c80 < 1.15 * c40,
        "past 40 clients the 40 CPUs are saturated: {c40} {c80}"
    );
}

#[test]
fn netperf_tests_report_their_units_and_udp_never_blocks_the_sender() {
    let rr = bench(r#"{"kind":"netperf","test":"TCP_RR","duration_ms":20}"#);
    let (_, r) = run("desktop-8c", Era::V6_5, &rr);
    assert!(r.text.lines().any(netperf_line), "{}", r.text);
    assert!(r.value > 10_000.0, "{}", r.value);
    assert_eq!(rr.metric().unit, "per sec");

    let udp = bench(r#"{"kind":"netperf","test":"UDP_STREAM","duration_ms":20,"send_size":65507}"#);
    let (out, r) = run("desktop-8c", Era::V6_5, &udp);
    assert_eq!(
        out.channels[0].writer_blocks, 0,
        "a UDP sender never blocks"
    );
    assert!(
        out.channels[0].bytes_dropped > 0,
        "the flood overruns the receiver: {:?}",
        out.channels[0]
    );
    assert!(r.value > 0.0);
    assert_eq!(udp.metric().unit, "10^6bits/sec");

    let tcp = bench(r#"{"kind":"netperf","test":"TCP_STREAM","duration_ms":20}"#);
    let (out, r) = run("desktop-8c", Era::V6_5, &tcp);
    assert_eq!(out.channels[0].bytes_dropped, 0);
    assert!(r.value > 0.0);
}

/// netperf's control exchange (request, then netserver's response, which
/// wakes netperf sync) brings the pair into one LLC before data flows, even
/// when fork balancing put netserver on the other node of an idle machine:
/// one instance then streams as fast as each of several does. Without the
/// exchange the bottlenecked reader never blocked, so no sync wakeup ever
/// pulled it over, and each 16 KiB read crossed the interconnect.
#[test]
fn netperfs_control_exchange_puts_the_stream_pair_in_one_llc() {
    let topo = Topology::from_spec(&preset("ivb-ep-2s").unwrap()).unwrap();
    let stream = |n: u64| {
        bench(&format!(
            r#"{{"kind":"netperf","test":"TCP_STREAM","instances":{n},"duration_ms":30,"warmup_ms":5}}"#
        ))
    };
    let (out, one) = run("ivb-ep-2s", Era::V4_15, &stream(1));
    let llc = |name: &str| {
        let t = out.tasks.iter().find(|t| t.name == name).unwrap();
        topo.cpus[t.last_cpu].llc
    };
    assert_eq!(llc("netperf0"), llc("netserver0"));
    assert!(
        !out.counters.contains_key("ttwu.remote.other_node"),
        "{:?}",
        out.counters
    );
    let (_, four) = run("ivb-ep-2s", Era::V4_15, &stream(4));
    let ratio = one.value / four.value;
    assert!(
        (0.95..1.05).contains(&ratio),
        "1: {} 4: {}",
        one.value,
        four.value
    );
}

/// A writer that fills a slow reader's buffer blocks; on a pipe the reader
/// wakes it with the sync hint, on TCP (an ACK freeing window space) without.
#[test]
fn tcp_writers_are_woken_without_the_sync_hint() {
    let run_kind = |kind: &str| {
        let json = format!(
            r#"{{"channels":[{{"kind":"{kind}","capacity":1024}}],"tasks":[
                {{"name":"w","program":[{{"loop":{{"count":200,"body":[{{"write":{{"chan":0,"bytes":512}}}}]}}}}]}},
                {{"name":"r","program":[{{"loop":{{"count":200,"body":[{{"read":{{"chan":0,"bytes":512}}}},{{"compute":{{"ns":50000}}}}]}}}}]}}]}}"#
        );
        let spec: crate::workload::program::WorkloadSpec = serde_json::from_str(&json).unwrap();
        let topology = Topology::from_spec(&preset("desktop-8c").unwrap()).unwrap();
        let cfg = SimConfig {
            check_invariants: true,
            ..SimConfig::new(topology, &PolicySpec::era(Era::V6_5), &spec).unwrap()
        };
        let out = Sim::new(&cfg).unwrap().run().unwrap();
        let c = |k: &str| out.counters.get(k).copied().unwrap_or(0);
        (
            out.channels[0].writer_blocks,
            c("ttwu.sync"),
            c("ttwu.local") + c("ttwu.remote"),
        )
    };
    let (blocks, sync, all) = run_kind("pipe");
    assert!(
        blocks > 50 && sync == all,
        "pipe: {blocks} blocks, {sync} of {all} wakeups sync"
    );
    let (blocks, sync, all) = run_kind("tcp");
    assert!(
        blocks > 50 && sync < all && all - sync >= blocks - 1,
        "tcp: {blocks} blocks, {sync} of {all} wakeups sync"
    );
}

/// A TCP ping-pong whose client waits in poll(2) (libpq): on 2.6.28 the
/// reply wakes the client through sock_def_readable with the sync hint,
/// and the request wakes the server, blocked in tcp_recvmsg, through
/// tcp_prequeue's plain wake_up_interruptible (include/net/tcp.h,
/// net/core/sock.c and fs/select.c's __pollwait of 2.6.28). 4.15 has no
/// prequeue: every read is woken sync.
#[test]
fn a_polling_tcp_reader_is_woken_sync_a_blocked_one_only_after_the_prequeue() {
    let run_era = |era: Era, poll: bool| {
        let json = format!(
            r#"{{"channels":[{{"kind":"tcp"}},{{"kind":"tcp"}}],"tasks":[
                {{"name":"client","program":[{{"loop":{{"count":300,"body":[
                    {{"write":{{"chan":0,"bytes":100}}}},{{"read":{{"chan":1,"bytes":100,"poll":{poll}}}}}]}}}}]}},
                {{"name":"server","program":[{{"loop":{{"count":300,"body":[
                    {{"read":{{"chan":0,"bytes":100}}}},{{"compute":{{"ns":20000}}}},
                    {{"write":{{"chan":1,"bytes":100}}}}]}}}}]}}]}}"#
        );
        let spec: crate::workload::program::WorkloadSpec = serde_json::from_str(&json).unwrap();
        let topology = Topology::from_spec(&preset("phoenix-2008").unwrap()).unwrap();
        let cfg = SimConfig {
            check_invariants: true,
            ..SimConfig::new(topology, &PolicySpec::era(era), &spec).unwrap()
        };
        let out = Sim::new(&cfg).unwrap().run().unwrap();
        let c = |k: &str| out.counters.get(k).copied().unwrap_or(0);
        (c("ttwu.sync"), c("ttwu.local") + c("ttwu.remote"))
    };
    // The client's 300 replies, less the ones that arrive before it waits.
    let (sync, all) = run_era(Era::V2_6_28, true);
    assert!(
        (250..=300).contains(&sync) && all >= 2 * 250,
        "2.6.28, polling client: {sync} of {all} wakeups sync"
    );
    let (sync, all) = run_era(Era::V2_6_28, false);
    assert!(
        sync < 5 && all >= 2 * 250,
        "2.6.28, blocked client: {sync} of {all} wakeups sync"
    );
    let (sync, all) = run_era(Era::V4_15, false);
    assert!(all >= 2 * 250 && sync == all, "4.15: {sync} of {all} sync");
}

/// A polling read pays poll's system call besides the read's own.
#[test]
fn a_polling_read_pays_one_more_system_call() {
    let run_poll = |poll: bool| {
        let json = format!(
            r#"{{"channels":[{{"kind":"pipe"}}],"tasks":[
                {{"name":"t","program":[{{"loop":{{"count":100,"body":[
                    {{"write":{{"chan":0,"bytes":8}}}},{{"read":{{"chan":0,"bytes":8,"poll":{poll}}}}}]}}}}]}}]}}"#
        );
        let spec: crate::workload::program::WorkloadSpec = serde_json::from_str(&json).unwrap();
        let topology = Topology::from_spec(&preset("desktop-8c").unwrap()).unwrap();
        let cfg = SimConfig::new(topology, &PolicySpec::era(Era::V6_5), &spec).unwrap();
        let out = Sim::new(&cfg).unwrap().run().unwrap();
        (
            out.tasks[0].exited_ns.unwrap(),
            cfg.topology.costs.syscall_ns,
        )
    };
    let ((plain, syscall), (polled, _)) = (run_poll(false), run_poll(true));
    assert_eq!(polled - plain, 100 * syscall, "{plain} -> {polled}");
}

/// Whole completions over a short window come in steps of one over its
/// length; the rate read from time does not, and agrees with the count.
#[test]
fn rates_are_read_from_time_not_counted_in_whole_completions() {
    let b = bench(r#"{"kind":"netperf","test":"TCP_RR","duration_ms":12,"warmup_ms":2}"#);
    let (out, r) = run("desktop-8c", Era::V6_5, &b);
    let counted = mark_stats(&out, "trans").unwrap().count as f64 / measured_secs(&out);
    assert_eq!(
        counted % 100.0,
        0.0,
        "a 10 ms window counts in steps of 100/s"
    );
    assert_ne!(r.value % 100.0, 0.0, "{}", r.value);
    assert!(
        (r.value - counted).abs() < 0.01 * counted,
        "from time {} against counted {counted}",
        r.value
    );
    let b = bench(r#"{"kind":"sysbench","threads":4,"duration_ms":30,"warmup_ms":10}"#);
    let (out, r) = run("desktop-8c", Era::V6_5, &b);
    let counted = mark_stats(&out, "txn").unwrap().count as f64 / measured_secs(&out);
    assert_ne!(r.value % 50.0, 0.0, "{}", r.value);
    assert!(
        (r.value - counted).abs() < 0.05 * counted,
        "from time {} against counted {counted}",
        r.value
    );
}

#[test]
fn sysbench_commits_wake_many_and_print_transactions() {
    // Twice as many connections as CPUs, so that row locks are waited on.
    let b = bench(r#"{"kind":"sysbench","threads":16,"db":"pgsql","duration_ms":100}"#);
    let (out, r) = run("desktop-8c", Era::V6_5, &b);
    assert!(r.text.lines().any(sysbench_line), "{}", r.text);
    assert!(r.value > 0.0);
    assert!(
        out.counters.get("wakeup.one_to_many").copied().unwrap_or(0) > 0,
        "{:?}",
        out.counters
    );
}

#[test]
fn every_generator_takes_affinity() {
    for json in [
        r#"{"kind":"pipe_test","affinity":"0-1"}"#,
        r#"{"kind":"perf_bench_pipe","affinity":"0-1"}"#,
        r#"{"kind":"lat_ctx","affinity":"0-1"}"#,
        r#"{"kind":"hackbench","affinity":"0-1"}"#,
        r#"{"kind":"tbench","affinity":"0-1"}"#,
        r#"{"kind":"netperf","test":"TCP_RR","affinity":"0-1"}"#,
        r#"{"kind":"sysbench","affinity":"0-1"}"#,
        r#"{"kind":"schbench","affinity":"0-1"}"#,
    ] {
        let built = bench(json).build().unwrap();
        fn all_pinned(t: &crate::workload::program::TaskSpec) -> bool {
            t.affinity.as_deref() == Some("0-1")
                && t.program.iter().all(|op| match op {
                    Op::Fork(c) => all_pinned(c),
                    _ => true,
                })
        }
        assert!(built.spec.tasks.iter().all(all_pinned), "{json}");
    }
}

#[test]
fn bad_parameters_name_the_parameter_and_range() {
    let err = |json: &str| bench(json).build().unwrap_err().to_string();
    assert_eq!(
        err(r#"{"kind":"pipe_test","loops":0}"#),
        "pipe-test parameter loops is 0; it must be 1..=100000000"
    );
    assert_eq!(
        err(r#"{"kind":"tbench","clients":1000000000}"#),
        "tbench parameter clients is 1000000000; it must be 1..=4096"
    );
    assert_eq!(
        err(r#"{"kind":"hackbench","groups":0}"#),
        "hackbench parameter groups is 0; it must be 1..=200"
    );
    let e = serde_json::from_str::<Benchmark>(r#"{"kind":"lat_ctx","size_kb":-4}"#)
        .unwrap_err()
        .to_string();
    assert!(e.contains("-4") || e.contains("invalid value"), "{e}");
    let e = serde_json::from_str::<Benchmark>(r#"{"kind":"netperf","test":"SCTP_RR"}"#)
        .unwrap_err()
        .to_string();
    assert!(e.contains("SCTP_RR") && e.contains("TCP_RR"), "{e}");
    let e = serde_json::from_str::<Benchmark>(r#"{"kind":"tbench","clinets":4}"#)
        .unwrap_err()
        .to_string();
    assert!(e.contains("clinets"), "{e}");
}

#[test]
fn sweeping_a_parameter() {
    let b = bench(r#"{"kind":"tbench","clients":2}"#);
    let b40 = b.with_param("clients", &serde_json::json!(40)).unwrap();
    assert!(matches!(b40, Benchmark::Tbench(Tbench { clients: 40, .. })));
    let err = b
        .with_param("groups", &serde_json::json!(4))
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("unknown parameter of this workload \"groups\"; valid: clients, duration_ms, warmup_ms, affinity"), "{err}");
    let err = b
        .with_param("clients", &serde_json::json!("many"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("tbench parameter clients"), "{err}");
}

#[test]
fn a_hand_written_program_equal_to_a_generators_runs_identically() {
    let b = bench(r#"{"kind":"pipe_test","loops":500,"batches":2}"#);
    let hand: crate::workload::program::WorkloadSpec = serde_json::from_str(
        r#"{"channels":[{"kind":"pipe","capacity":65536},{"kind":"pipe","capacity":65536}],
            "tasks":[{"name":"parent","program":[
              {"fork":{"name":"child","program":[{"loop":{"count":1000,"body":[
                  {"read":{"chan":0,"bytes":4}},{"write":{"chan":1,"bytes":4}}]}}]}},
              {"mark":"batch"},
              {"loop":{"count":2,"body":[
                  {"loop":{"count":500,"body":[{"write":{"chan":0,"bytes":4}},{"read":{"chan":1,"bytes":4}}]}},
                  {"mark":"batch"}]}}]}]}"#,
    )
    .unwrap();
    assert_eq!(b.build().unwrap().spec, hand);
    let topology = Topology::from_spec(&preset("ivb-ep-2s").unwrap()).unwrap();
    let cfg = SimConfig::new(topology, &PolicySpec::era(Era::V4_15), &hand).unwrap();
    let by_hand = Sim::new(&cfg).unwrap().run().unwrap();
    let (generated, _) = run("ivb-ep-2s", Era::V4_15, &b);
    assert_eq!(by_hand.end_ns, generated.end_ns);
    assert_eq!(by_hand.counters, generated.counters);
    assert_eq!(by_hand.marks[0].series, generated.marks[0].series);
}

#[test]
fn every_kind_has_defaults_and_lists_exactly_its_parameters() {
    for kind in KINDS {
        let b = Benchmark::default_of(kind).unwrap();
        assert_eq!(b.kind(), kind);
        b.build().unwrap();
        let json = serde_json::to_value(&b).unwrap();
        let mut keys: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            // A custom workload's program is edited as text, not as parameters.
            .filter(|k| !["kind", "channels", "tasks"].contains(k))
            .filter(|k| !b.params().iter().any(|p| p.optional && p.name == *k))
            .collect();
        let mut listed: Vec<&str> = b
            .params()
            .iter()
            .filter(|p| !p.optional)
            .map(|p| p.name)
            .collect();
        keys.sort_unstable();
        listed.sort_unstable();
        assert_eq!(keys, listed, "{kind}");
        for p in b.params() {
            for choice in p.choices {
                let changed = b.with_param(p.name, &serde_json::json!(choice)).unwrap();
                assert_eq!(serde_json::to_value(&changed).unwrap()[p.name], *choice);
            }
            if p.optional {
                b.with_param(p.name, &serde_json::json!("0"))
                    .or_else(|_| b.with_param(p.name, &serde_json::json!(1)))
                    .unwrap();
            }
        }
    }
    let err = Benchmark::default_of("dbench").unwrap_err().to_string();
    assert!(err.contains("unknown workload kind \"dbench\""), "{err}");
    assert!(err.contains("hackbench"), "{err}");
}

#[test]
fn a_custom_workload_runs_and_reports_its_metric() {
    let b = Benchmark::default_of("custom").unwrap();
    let (out, report) = run("ivb-ep-2s", Era::V6_5, &b);
    // The consumer marks "consumed" once per item: about one per 20 us.
    let rate = report.value;
    assert!((30_000.0..=60_000.0).contains(&rate), "{rate}");
    assert!(report.text.contains("producer"), "{}", report.text);
    assert!(report.text.contains("mark \"consumed\""), "{}", report.text);
    assert!(out.tasks[1].wakeup_latency.count > 1000);
    let p99 = b
        .with_param("metric", &serde_json::json!("wakeup_p99"))
        .unwrap();
    let (_, r) = run("ivb-ep-2s", Era::V6_5, &p99);
    assert!(r.value > 0.0 && r.value < 100.0, "{}", r.value);
    assert_eq!(p99.metric().name, "wakeup latency p99");
}

#[test]
fn every_generator_as_a_custom_workload_runs_identically() {
    for json in [
        r#"{"kind":"pipe_test","loops":300,"batches":2}"#,
        r#"{"kind":"tbench","clients":3,"duration_ms":20,"warmup_ms":5}"#,
        r#"{"kind":"hackbench","groups":2,"loops":20}"#,
    ] {
        let b = bench(json);
        let custom = Benchmark::Custom(b.to_custom().unwrap());
        // Through JSON and back, as the page and links carry it.
        let text = serde_json::to_string(&custom).unwrap();
        let custom: Benchmark = serde_json::from_str(&text).unwrap();
        let (a, _) = run("ivb-ep-2s", Era::V4_15, &b);
        let (c, _) = run("ivb-ep-2s", Era::V4_15, &custom);
        assert_eq!(a.end_ns, c.end_ns, "{json}");
        assert_eq!(a.counters, c.counters, "{json}");
        assert_eq!(a.tasks, c.tasks, "{json}");
    }
}

#[test]
fn custom_errors_name_the_task_the_instruction_and_the_path() {
    // Each message leads with where its path is in the text (tested once
    // here, by column, and in json_path), then the path itself.
    let without_position = |e: String| match e.split_once(": ") {
        Some((at, rest)) if at.starts_with("line ") => rest.to_string(),
        _ => e,
    };
    let err = |json: &str| Custom::from_json(json).unwrap_err().to_string();
    let e = err(r#"{"tasks":[{"name":"a","program":[{"compute":{"ns":1}}]},
        {"name":"b","program":[{"loop":{"count":2,"body":[{"mark":"x"},{"comput":{"ns":1}}]}}]}]}"#);
    assert!(
        e.starts_with("line 2, column 72: workload.tasks[1].program[0].loop.body[1] (task \"b\", comput): unknown variant `comput`"),
        "{e}"
    );
    let err = |json: &str| without_position(err(json));
    let e = err(r#"{"tasks":[{"name":"a","program":[{"forever":[{"read":{"chan":0}}]}]}]}"#);
    assert!(
        e.starts_with(
            "workload.tasks[0].program[0].forever[0] (task \"a\", read): missing field `bytes`"
        ),
        "{e}"
    );
    let e = err(r#"{"tasks":[{"name":"a","nice":3,"program":[],"cpus":"0"}]}"#);
    assert!(
        e.starts_with("workload.tasks[0] (task \"a\"): unknown field `cpus`"),
        "{e}"
    );
    let e = err(r#"{"channels":[{"kind":"fifo"}],"tasks":[]}"#);
    assert!(
        e.starts_with("workload.channels[0]: unknown variant `fifo`"),
        "{e}"
    );
    let e = Custom::from_json("{\n  \"tasks\": [\n}")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("line 3, column 1"), "{e}");

    // What only the machine can check is caught by the experiment, by path.
    let exp = |workload: &str| {
        crate::experiment::Experiment::from_json(&format!(
            r#"{{"version":1,"name":"t","machine":"ivb-ep-2s","policy":{{"era":"6.5"}},
                "variants":[{{"label":"A"}}],"workload":{workload}}}"#
        ))
        .unwrap_err()
        .to_string()
    };
    let e = exp(r#"{"kind":"custom","tasks":[{"name":"w","program":[
        {"fork":{"name":"kid","program":[{"write":{"chan":2,"bytes":1}}]}}]}]}"#);
    assert_eq!(
        e,
        "line 3, column 42: workload.tasks[0].program[0].fork.program[0] (task \"kid\", write): channel 2 does not exist (the workload has 0)"
    );
    let exp = |workload: &str| without_position(exp(workload));
    let e = exp(
        r#"{"kind":"custom","tasks":[{"name":"w","affinity":"99","program":[{"compute":{"ns":1}}]}]}"#,
    );
    assert!(
        e.starts_with("workload.tasks[0].affinity (task \"w\"): cpulist"),
        "{e}"
    );
    let e = exp(
        r#"{"kind":"custom","metric":"mark_rate","tasks":[{"name":"w","program":[{"compute":{"ns":1}}]}]}"#,
    );
    assert_eq!(e, "workload.mark: the metric reads a mark; name its label");
    let e = exp(
        r#"{"kind":"custom","tasks":[{"name":"w","program":[{"loop":{"count":3,"body":[{"mark":"m"}]}}]}]}"#,
    );
    assert!(
        e.contains("program[0] (task \"w\", loop): a loop body needs"),
        "{e}"
    );
}

#[test]
fn schbench_prints_wakeup_and_request_percentiles_and_rps() {
    let b = bench(
        r#"{"kind":"schbench","message_threads":2,"workers":4,"runtime_ms":1000,"warmup_ms":100}"#,
    );
    let built = b.build().unwrap();
    // Two message threads, each forking its four workers, threads of one process.
    assert_eq!(built.spec.tasks.len(), 2);
    assert_eq!(built.spec.channels.len(), 16);
    let (out, report) = run("desktop-8c", Era::V6_5, &b);
    let lines: Vec<&str> = report.text.lines().collect();
    assert!(
        lines[0].starts_with("Wakeup Latencies percentiles (usec) runtime 1 (s) ("),
        "{}",
        report.text
    );
    assert!(lines[1].starts_with("\t  50.0th: "), "{}", report.text);
    assert!(lines[3].starts_with("\t* 99.0th: "), "{}", report.text);
    assert!(lines[4].starts_with("\t  99.9th: "), "{}", report.text);
    assert!(
        lines[6].starts_with("Request Latencies percentiles (usec)"),
        "{}",
        report.text
    );
    assert!(lines[12].starts_with("average rps: "), "{}", report.text);
    // Eight workers on 16 CPUs: at most 8 / (1 ms of work + 0.1 ms sleep)
    // per second, less as each message thread serves its workers in turn.
    // A second, as a 200 ms run is start-up: seeds gave 4,600 to 5,900
    // there and 5,900 to 6,450 over a second.
    let rps = report.details.iter().find(|d| d.0 == "rps").unwrap().1;
    assert!((5_000.0..=8_000.0).contains(&rps), "{rps}");
    let req_p99 = report.details[0].1;
    assert!((1_100.0..=2_000.0).contains(&req_p99), "{req_p99}");
    assert!(report.value > 0.0 && report.value < req_p99);
    assert!(
        out.tasks
            .iter()
            .filter(|t| t.name.starts_with("worker"))
            .count()
            == 8
    );

    // -R (run_rps_thread, schbench v1.0): each message thread posts its
    // share of R at the start of every second, then sleeps to the second's
    // end. In 1.5 s the workers (8 x 1.1 ms a request) clear two bursts of
    // 2000 in about 0.28 s each: 4000 requests, 2667 a second (posts spread
    // evenly would give 2000).
    let paced = b
        .with_param("rps", &serde_json::json!(2000))
        .and_then(|b| b.with_param("runtime_ms", &serde_json::json!(1500)))
        .and_then(|b| b.with_param("warmup_ms", &serde_json::json!(0)))
        .unwrap();
    let (_, r) = run("desktop-8c", Era::V6_5, &paced);
    let rps = r.details.iter().find(|d| d.0 == "rps").unwrap().1;
    assert!((2_600.0..=2_667.0).contains(&rps), "{rps}");
    let err = bench(r#"{"kind":"schbench","message_threads":4,"rps":3}"#)
        .build()
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("rps is 3, below one request per second per message thread (4)"),
        "{err}"
    );

    let err = bench(r#"{"kind":"schbench","workers":0}"#)
        .build()
        .unwrap_err()
        .to_string();
    assert_eq!(err, "schbench parameter workers is 0; it must be 1..=1024");
}

/// A line's shape: each number replaced by `I` (integer) or `D.k` (k
/// decimals), runs of spaces kept by length class (one, or more), so a
/// line matches another of the same words, units, spacing and number kinds.
/// Numbers printed with `%g` (tbench's MB/sec, the netperf tables' "Avg:")
/// have no fixed decimals: `G`.
fn shape(line: &str) -> String {
    for g in ["Throughput ", "Avg: "] {
        if let Some((head, tail)) = line.split_once(g) {
            let rest = tail.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
            if rest.len() < tail.len() {
                return format!("{}{g}G{}", shape(head), shape(rest));
            }
        }
    }
    let mut out = String::new();
    let chars: Vec<char> = line.trim_end().chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_ascii_digit() {
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            if i + 1 < chars.len() && chars[i] == '.' && chars[i + 1].is_ascii_digit() {
                i += 1;
                let frac = i;
                while i < chars.len() && chars[i].is_ascii_digit() {
                    i += 1;
                }
                out.push_str(&format!("D.{}", i - frac));
            } else {
                out.push('I');
            }
        } else if c == ' ' {
            let start = i;
            while i < chars.len() && chars[i] == ' ' {
                i += 1;
            }
            // Column padding varies with the numbers' widths; one space
            // against several does not.
            out.push_str(if i - start == 1 || start == 0 {
                " "
            } else {
                "  "
            });
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Every line the generator prints has the shape of a line of the real
/// tool's sample (samples/), and the sample's headline is printed.
fn prints_like(sample: &str, text: &str, headline: &str) {
    let shapes: Vec<String> = sample.lines().map(shape).collect();
    for line in text.lines() {
        assert!(
            shapes.contains(&shape(line)),
            "no line of the sample is shaped like {line:?} ({:?}); the sample:\n{sample}\nprinted:\n{text}",
            shape(line)
        );
    }
    assert!(
        text.lines().any(|l| l.contains(headline)),
        "{headline:?} missing from\n{text}"
    );
}

#[test]
fn every_tool_prints_like_a_real_sample_of_its_output() {
    let s = |name: &str| match name {
        "hackbench" => include_str!("samples/hackbench.txt"),
        "perf" => include_str!("samples/perf-bench-sched-pipe.txt"),
        "tbench" => include_str!("samples/tbench.txt"),
        "sysbench" => include_str!("samples/sysbench.txt"),
        "tcp_stream" => include_str!("samples/netperf-tcp-stream.txt"),
        "tcp_rr" => include_str!("samples/netperf-tcp-rr.txt"),
        _ => include_str!("samples/netperf-udp-stream.txt"),
    };
    let text = |json: &str| run("desktop-8c", Era::V6_5, &bench(json)).1.text;
    prints_like(
        s("hackbench"),
        &text(r#"{"kind":"hackbench","groups":2,"loops":10}"#),
        "Time: ",
    );
    prints_like(
        s("perf"),
        &text(r#"{"kind":"perf_bench_pipe","loops":5000}"#),
        "usecs/op",
    );
    prints_like(
        s("tbench"),
        &text(r#"{"kind":"tbench","clients":2,"duration_ms":20,"warmup_ms":5}"#),
        "MB/sec",
    );
    prints_like(
        s("sysbench"),
        &text(r#"{"kind":"sysbench","threads":2,"duration_ms":20,"warmup_ms":5}"#),
        "transactions:",
    );
    for (test, sample, headline) in [
        ("TCP_STREAM", "tcp_stream", "TCP_STREAM-2    : Avg: "),
        ("TCP_SENDFILE", "tcp_stream", "TCP_SENDFILE-2  : Avg: "),
        ("TCP_RR", "tcp_rr", "TCP_RR-2        : Avg: "),
        ("UDP_STREAM", "udp_stream", "UDP_STREAM-2    : Avg: "),
    ] {
        let sample = s(sample).replace("TCP STREAM", "TCP SENDFILE");
        let sample = if test == "TCP_SENDFILE" {
            sample
        } else {
            s(sample_name(test)).to_string()
        };
        prints_like(
            &sample.replace("TCP_STREAM-", &format!("{test}-")),
            &text(&format!(
                r#"{{"kind":"netperf","test":"{test}","instances":2,"duration_ms":20,"warmup_ms":5}}"#
            )),
            headline,
        );
    }
    prints_like(
        include_str!("samples/schbench.txt"),
        &text(r#"{"kind":"schbench","message_threads":1,"workers":4,"runtime_ms":1000}"#),
        "* 99.0th: ",
    );
    prints_like(
        include_str!("samples/pipe-test.txt"),
        &text(r#"{"kind":"pipe_test","loops":2000,"batches":2}"#),
        "usecs/loop.",
    );
    prints_like(
        include_str!("samples/lat_ctx.txt"),
        &text(r#"{"kind":"lat_ctx","size_kb":0,"procs":2,"rounds":2000}"#),
        "\"size=0k ovr=",
    );
    // UDP_RR prints TCP_RR's block with UDP in its banner.
    prints_like(
        &s("tcp_rr").replace("TCP", "UDP"),
        &text(r#"{"kind":"netperf","test":"UDP_RR","instances":2,"duration_ms":20,"warmup_ms":5}"#),
        "UDP_RR-2        : Avg: ",
    );
}

fn sample_name(test: &str) -> &'static str {
    match test {
        "TCP_RR" => "tcp_rr",
        "UDP_STREAM" => "udp_stream",
        _ => "tcp_stream",
    }
}

#[test]
fn numbers_print_as_c_percent_g_does() {
    assert_eq!(fmt_g(685.211), "685.211");
    assert_eq!(fmt_g(9438.1), "9438.1");
    assert_eq!(fmt_g(3655.3349), "3655.33");
    assert_eq!(fmt_g(31532.1), "31532.1");
    assert_eq!(fmt_g(999_999.7), "1e+06");
    assert_eq!(fmt_g(3_808_660.0), "3.80866e+06");
    assert_eq!(fmt_g(0.0001234), "0.0001234");
    assert_eq!(fmt_g(0.0), "0");
}

fn detail(r: &Report, name: &str) -> f64 {
    r.details.iter().find(|d| d.0 == name).unwrap().1
}

#[test]
fn group_commit_covers_concurrent_commits_with_one_flush() {
    // One connection: every flush covers its one commit.
    let b = bench(r#"{"kind":"sysbench","threads":1,"duration_ms":40,"warmup_ms":5}"#);
    let (_, r) = run("desktop-8c", Era::V6_5, &b);
    let alone = detail(&r, "commits_per_flush");
    assert!((alone - 1.0).abs() < 0.05, "{alone}");
    // Sixteen: commits queue while a flush is under way and share the next.
    let b = bench(r#"{"kind":"sysbench","threads":16,"duration_ms":40,"warmup_ms":5}"#);
    let (_, r) = run("desktop-8c", Era::V6_5, &b);
    let grouped = detail(&r, "commits_per_flush");
    assert!(grouped > 1.2, "16 connections: {grouped} commits per flush");
}

#[test]
fn echo_writes_what_the_last_read_returned() {
    // Three 1-byte requests drained by one read are answered by one echo
    // of three bytes: all three waiters get through.
    let spec: WorkloadSpec = serde_json::from_str(
        r#"{"channels":[{"kind":"pipe"},{"kind":"pipe"}],"tasks":[
        {"name":"srv","program":[{"sleep":{"ns":100000}},{"read":{"chan":0,"bytes":64}},
          {"write":{"chan":1,"bytes":64,"echo":true}}]},
        {"name":"a","program":[{"write":{"chan":0,"bytes":1}},{"read":{"chan":1,"bytes":1}},{"mark":"done"}]},
        {"name":"b","program":[{"write":{"chan":0,"bytes":1}},{"read":{"chan":1,"bytes":1}},{"mark":"done"}]},
        {"name":"c","program":[{"write":{"chan":0,"bytes":1}},{"read":{"chan":1,"bytes":1}},{"mark":"done"}]}
        ]}"#,
    )
    .unwrap();
    let topology = Topology::from_spec(&preset("desktop-8c").unwrap()).unwrap();
    let cfg = SimConfig::new(topology, &PolicySpec::era(Era::V6_5), &spec).unwrap();
    let out = Sim::new(&cfg).unwrap().run().unwrap();
    assert_eq!(mark_stats(&out, "done").unwrap().count, 3);
    assert_eq!(out.channels[1].bytes_written, 3);
}

#[test]
fn a_lock_channel_serialises_its_holders() {
    // Four threads on eight CPUs each hold the lock for 100 us, ten times:
    // one at a time, so the run takes at least 40 holds, and they wait.
    let holder = |name: &str| {
        format!(
            r#"{{"name":"{name}","program":[{{"loop":{{"count":10,"body":[
            {{"read":{{"chan":0,"bytes":1}}}},{{"compute":{{"ns":100000}}}},
            {{"write":{{"chan":0,"bytes":1}}}},{{"compute":{{"ns":20000}}}}]}}}}]}}"#
        )
    };
    let json = format!(
        r#"{{"channels":[{{"kind":"pipe","capacity":1}}],"tasks":[
        {{"name":"init","program":[{{"write":{{"chan":0,"bytes":1}}}}]}},{},{},{},{}]}}"#,
        holder("a"),
        holder("b"),
        holder("c"),
        holder("d")
    );
    let spec: WorkloadSpec = serde_json::from_str(&json).unwrap();
    let topology = Topology::from_spec(&preset("desktop-8c").unwrap()).unwrap();
    let cfg = SimConfig::new(topology, &PolicySpec::era(Era::V6_5), &spec).unwrap();
    let out = Sim::new(&cfg).unwrap().run().unwrap();
    assert!(out.end_ns >= 40 * 100_000, "{} ns", out.end_ns);
    assert!(out.channels[0].reader_blocks >= 10, "{:?}", out.channels[0]);
    // Without the lock, four CPUs run them side by side in about a quarter.
    assert!(out.end_ns < 40 * 120_000 + 500_000, "{} ns", out.end_ns);
}

#[test]
fn sysbench_row_locks_wait_more_as_connections_grow() {
    let waits = |threads: u64| {
        let b = bench(&format!(
            r#"{{"kind":"sysbench","threads":{threads},"duration_ms":40,"warmup_ms":5}}"#
        ));
        let (_, r) = run("desktop-8c", Era::V6_5, &b);
        detail(&r, "lock_waits_per_txn")
    };
    let (few, many) = (waits(2), waits(32));
    assert!(many > 4.0 * few.max(0.01), "2: {few}, 32: {many}");
}

#[test]
fn postgres_backends_are_processes_mysql_connections_threads() {
    let servers = |db: &str| {
        let b = bench(&format!(r#"{{"kind":"sysbench","threads":4,"db":"{db}"}}"#));
        let built = b.build().unwrap();
        built
            .spec
            .tasks
            .iter()
            .filter(|t| !t.name.starts_with("sysbench"))
            .map(|t| t.process)
            .collect::<Vec<_>>()
    };
    // MySQL: the log writer and connection threads share one address space.
    let my = servers("mysql");
    assert!(my.iter().all(|p| p.is_some() && *p == my[0]), "{my:?}");
    // PostgreSQL: each backend (and the postmaster) a process of its own,
    // so switching between them pays the process switch.
    assert!(servers("pgsql").iter().all(Option::is_none));
}

/// libpq waits for a reply in poll(2) (pqWait); MySQL's client library
/// reads its blocking socket; servers of either read blocking.
#[test]
fn pgsql_clients_wait_for_replies_in_poll_mysql_clients_in_read() {
    let reads = |db: &str, client: bool| {
        let b = bench(&format!(r#"{{"kind":"sysbench","threads":2,"db":"{db}"}}"#));
        let built = b.build().unwrap();
        let task = built
            .spec
            .tasks
            .into_iter()
            .find(|t| t.name.ends_with('0') && t.name.starts_with("sysbench") == client)
            .unwrap();
        let Some(Op::Forever(body)) = task.program.into_iter().last() else {
            panic!("no loop")
        };
        body.iter()
            .filter_map(|op| match op {
                Op::Read { poll, .. } => Some(*poll),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    let pg = reads("pgsql", true);
    assert!(pg.len() > 100 && pg.iter().all(|&p| p), "{pg:?}");
    assert!(reads("mysql", true).iter().all(|&p| !p));
    assert!(reads("pgsql", false).iter().all(|&p| !p));
    assert!(reads("mysql", false).iter().all(|&p| !p));
}

#[test]
fn postgres_backends_pay_process_switches() {
    let run_db = |db: &str| {
        let b = bench(&format!(
            r#"{{"kind":"sysbench","threads":16,"db":"{db}","read_only":true,"affinity":"0-1","duration_ms":30,"warmup_ms":5}}"#
        ));
        run("desktop-8c", Era::V6_5, &b).1.value
    };
    // Read-only (no locks or log), crowded on two CPUs: every statement is
    // two switches, and a backend's are process switches.
    let (my, pg) = (run_db("mysql"), run_db("pgsql"));
    assert!(pg < my, "mysql {my} tps, pgsql {pg} tps");
}

#[test]
fn tbench_replays_the_loadfile_mix_and_its_server_only_answers() {
    let built = bench(r#"{"kind":"tbench","clients":1}"#).build().unwrap();
    // tbench_srv's listener accepts the connection and forks its server.
    let listener = &built.spec.tasks[0];
    assert_eq!(listener.name, "tbench_srv");
    let Op::Fork(server) = &listener.program[1] else {
        panic!("the listener forks a server per connection")
    };
    let client = &built.spec.tasks[1];
    assert!(
        matches!(client.program[0], Op::Write { chan: 2, .. }),
        "the client connects first"
    );
    let Op::Forever(server_ops) = &server.program[0] else {
        panic!("the server answers forever")
    };
    // tbench_srv computes nothing: it reads a request and writes the reply.
    assert!(server_ops
        .iter()
        .all(|op| matches!(op, Op::Read { .. } | Op::Write { .. })));
    let Op::Forever(client_ops) = &client.program[2] else {
        panic!("the client replays forever")
    };
    let count = |label: &str| {
        client_ops
            .iter()
            .filter(|op| **op == Op::Mark(label.into()))
            .count()
    };
    // 200 operations a cycle; ReadX about 27% of them, WriteX about 8.6%.
    assert_eq!(count("op"), 200);
    assert_eq!(count("readx"), 54);
    assert_eq!(count("writex"), 17);
    // Replies follow the operation: ReadX's carries the data, WriteX's not.
    let replies: Vec<u64> = server_ops
        .iter()
        .filter_map(|op| match op {
            Op::Write { bytes, .. } => Some(*bytes),
            _ => None,
        })
        .collect();
    assert!(replies.iter().filter(|&&b| b > 10_000).count() == 54);
    assert!(replies.iter().filter(|&&b| b < 1_000).count() == 200 - 54);
}

#[test]
fn the_tick_counts_tasks_waiting_for_a_cpu() {
    // Four CPU-bound tasks pinned to CPU 0: at each 4 ms tick three wait.
    let task = |n: &str| {
        format!(
            r#"{{"name":"{n}","affinity":"0","program":[{{"forever":[{{"compute":{{"ns":1000000}}}}]}}]}}"#
        )
    };
    let json = format!(
        r#"{{"tasks":[{},{},{},{}]}}"#,
        task("a"),
        task("b"),
        task("c"),
        task("d")
    );
    let spec: WorkloadSpec = serde_json::from_str(&json).unwrap();
    let topology = Topology::from_spec(&preset("desktop-8c").unwrap()).unwrap();
    let cfg = SimConfig {
        duration_ns: Some(40_000_000),
        ..SimConfig::new(topology, &PolicySpec::era(Era::V6_5), &spec).unwrap()
    };
    let out = Sim::new(&cfg).unwrap().run().unwrap();
    let waiting = out.counters["sched.tick_waiting"];
    assert!((24..=33).contains(&waiting), "{waiting}");
}

/// The counters behind waweight-sysbench-mysql's curve, a line per point
/// and variant (`cargo test --release -p schedlab mysql_curve_counters --
/// --ignored --nocapture`): run-queue waiting (tasks waiting at a tick, on
/// average over the machine), row-lock waits, futex waits and tasks woken,
/// spin rounds and time, tasks that spun and slept, and migrations.
#[test]
#[ignore]
fn mysql_curve_counters() {
    println!("threads variant tps p95_ms rq_wait lockw/txn futex_wait/txn woken/txn spin_us/txn spin_won/txn spin_slept/txn migr/txn busy% overhead%");
    for threads in [2u64, 5, 10, 20, 40, 80] {
        for wa in [false, true] {
            let b = bench(&format!(
                r#"{{"kind":"sysbench","db":"mysql","threads":{threads},"duration_ms":120,"warmup_ms":20}}"#
            ));
            let policy = wa_weight(wa);
            let tick = policy.resolve(40).unwrap().tunables.tick_ns();
            let (out, r) = run_with("ivb-ep-2s", &policy, &b);
            let c = |n: &str| out.counters.get(n).copied().unwrap_or(0) as f64;
            let txns = mark_stats(&out, "txn").map_or(1, |m| m.count).max(1) as f64;
            let migr: f64 = out
                .counters
                .iter()
                .filter(|(k, _)| k.starts_with("migrations."))
                .map(|(_, v)| *v as f64)
                .sum();
            let busy: u64 = out.cpu_time.iter().map(|t| t.busy_ns).sum();
            let over: u64 = out.cpu_time.iter().map(|t| t.overhead_ns).sum();
            let total: u64 = out.cpu_time.iter().map(|t| t.total()).sum();
            println!(
                "{threads} {} {:.0} {:.2} {:.1} {:.2} {:.2} {:.2} {:.2} {:.2} {:.2} {:.2} {:.1} {:.1}",
                if wa { "WA_WEIGHT" } else { "NO_WA_WEIGHT" },
                r.value,
                detail(&r, "latency_p95_ms"),
                c("sched.tick_waiting") * tick as f64 / out.end_ns as f64,
                detail(&r, "lock_waits_per_txn"),
                c("futex.wait") / txns,
                c("futex.woken") / txns,
                c("spin.ns") / 1000.0 / txns,
                c("spin.acquired") / txns,
                c("spin.slept") / txns,
                migr / txns,
                100.0 * busy as f64 / total.max(1) as f64,
                100.0 * over as f64 / total.max(1) as f64,
            );
        }
    }
}

/// What the first server (connection thread or backend) of a 2-thread
/// sysbench repeats.
fn sysbench_server_loop(db: &str, read_only: bool) -> Vec<Op> {
    sysbench_server_loop_of(&format!(
        r#"{{"kind":"sysbench","threads":2,"db":"{db}","read_only":{read_only}}}"#
    ))
}

fn sysbench_server_loop_of(workload: &str) -> Vec<Op> {
    let b = bench(workload);
    let built = b.build().unwrap();
    let server = built
        .spec
        .tasks
        .into_iter()
        .find(|t| t.name.ends_with('0') && !t.name.starts_with("sysbench"))
        .unwrap();
    match server.program.into_iter().next() {
        Some(Op::Forever(body)) => body,
        other => panic!("{other:?}"),
    }
}

#[test]
fn mysql_transactions_take_innodbs_spinning_global_mutexes_postgres_not() {
    // Per read-write transaction: trx_sys->mutex at the read view's open,
    // the first write and commit; lock_sys->mutex for each write's record
    // lock and the release at commit. Each spins with MySQL's defaults and
    // sleeps on an event every release sets (wake_all).
    let sections = |db: &str, read_only: bool| {
        let body = sysbench_server_loop(db, read_only);
        let mut n = (0, 0);
        for op in &body {
            if let Op::SpinLock(s) = op {
                assert!(s.wake_all && s.rounds == 30 && s.max_delay == 6);
                assert_eq!(s.pauses_per_delay, 50);
                match s.mutex.as_str() {
                    "trx_sys" => n.0 += 1,
                    "lock_sys" => n.1 += 1,
                    m => panic!("{m}"),
                }
            }
        }
        n
    };
    // 16 transaction variants per connection.
    assert_eq!(sections("mysql", false), (3 * 16, 5 * 16));
    assert_eq!(sections("mysql", true), (0, 0));
    assert_eq!(sections("pgsql", false), (0, 0));
}

/// PostgreSQL 8.3's transaction (issue 35): a snapshot under ProcArrayLock
/// (shared) for every statement but BEGIN, a WAL record under
/// WALInsertLock for each write and the commit, the backend's own WAL
/// flush (XLogFlush under WALWriteLock), ProcArrayLock exclusive at
/// commit; MySQL takes none of them.
#[test]
fn postgres_8_3_transactions_take_its_lwlocks_and_flush_the_wal_themselves() {
    let lwlocks = |db: &str, read_only: bool| {
        let body = sysbench_server_loop(db, read_only);
        let mut n = std::collections::BTreeMap::new();
        for op in &body {
            let key = match op {
                Op::LwAcquire(x) => format!(
                    "{} {}",
                    x.lock,
                    if x.shared { "shared" } else { "exclusive" }
                ),
                Op::LogFlush(x) => format!("flush {} under {}", x.log, x.lock),
                _ => continue,
            };
            *n.entry(key).or_insert(0) += 1;
        }
        n.into_iter().collect::<Vec<(String, usize)>>()
    };
    let owned = |v: &[(&str, usize)]| {
        v.iter()
            .map(|&(k, n)| (k.to_string(), n))
            .collect::<Vec<_>>()
    };
    // 16 transaction variants per connection, 19 statements each.
    assert_eq!(
        lwlocks("pgsql", false),
        owned(&[
            ("ProcArrayLock exclusive", 16),
            ("ProcArrayLock shared", 18 * 16),
            ("WALInsertLock exclusive", 5 * 16),
            ("flush wal under WALWriteLock", 16),
        ])
    );
    assert_eq!(
        lwlocks("pgsql", true),
        owned(&[("ProcArrayLock shared", 14)])
    );
    assert!(lwlocks("mysql", false).is_empty());

    // Run: committers queue on WALWriteLock behind a flush and find their
    // records covered, more of them as connections grow.
    let per_flush = |threads: u64| {
        let b = bench(&format!(
            r#"{{"kind":"sysbench","threads":{threads},"db":"pgsql","duration_ms":40,"warmup_ms":5}}"#
        ));
        let (out, r) = run("desktop-8c", Era::V6_5, &b);
        assert!(out.counters.get("log.flushes").copied().unwrap_or(0) > 0);
        detail(&r, "commits_per_flush")
    };
    let (few, many) = (per_flush(1), per_flush(32));
    assert_eq!(few, 1.0);
    assert!(many > 1.5, "32 connections: {many} commits per flush");
}

/// sysbench 0.4's complex OLTP transaction (get_request_complex in
/// sb_oltp.c, every 0.4 release): index update, non-index update, one
/// more index update of the row then deleted and re-inserted, delete,
/// insert. Its row locks are taken by the three UPDATEs; the delete and
/// insert write a row the transaction already holds. 1.0's
/// oltp_read_write.lua has four writes.
#[test]
fn sysbench_0_4_updates_the_reinserted_row_first() {
    // Per statement of the first transaction variant: whether it waits
    // for row locks, by statement index; and the WAL records per variant.
    let shape = |version: &str| {
        let body = sysbench_server_loop_of(&format!(
            r#"{{"kind":"sysbench","threads":2,"db":"pgsql","version":"{version}"}}"#
        ));
        let (mut statement, mut locking, mut wal, mut commits) = (0, vec![], 0, 0);
        for op in &body {
            match op {
                Op::Read { .. } if commits == 0 => statement += 1,
                Op::SemWait(_) if commits == 0 => locking.push(statement - 1),
                Op::LwAcquire(x) if x.lock == "WALInsertLock" => wal += 1,
                Op::LogFlush(_) => commits += 1,
                _ => {}
            }
        }
        locking.dedup();
        (locking, wal / commits)
    };
    let (v04_locking, v04_wal) = shape("0.4");
    let (v10_locking, v10_wal) = shape("1.0");
    // BEGIN, 10 points and 4 ranges are statements 0..15; then the writes.
    assert_eq!((v04_wal, v10_wal), (5 + 1, 4 + 1));
    assert!(
        v04_locking.iter().all(|&s| (15..18).contains(&s)),
        "{v04_locking:?}"
    );
    assert!(
        v10_locking.iter().all(|&s| (15..19).contains(&s)),
        "{v10_locking:?}"
    );
    assert!(!v04_locking.is_empty());
    // The default is 1.0's, and an experiment without the field reads so.
    let plain = sysbench_server_loop("pgsql", false);
    let v10 =
        sysbench_server_loop_of(r#"{"kind":"sysbench","threads":2,"db":"pgsql","version":"1.0"}"#);
    assert_eq!(format!("{plain:?}"), format!("{v10:?}"));
    // A version sysbench never had is an error naming the field's values.
    let bad = serde_json::from_str::<Benchmark>(r#"{"kind":"sysbench","version":"0.5"}"#);
    assert!(bad.unwrap_err().to_string().contains("0.4"));
}

/// Issue 18 item 5: where WA_WEIGHT's time goes in hackbench -g 20 run
/// long (`cargo test --release -p schedlab hackbench_wa_weight_counters --
/// --ignored --nocapture`): run time, CPU time by kind, and the wakeup
/// counters.
#[test]
#[ignore]
fn hackbench_wa_weight_counters() {
    println!("loops variant secs busy_s overhead_s idle_s newidle_s switches preempt_waker_cpu preempt_other_cpu ipis local remote other_node wake_lat_us");
    for loops in [100u64, 1000] {
        for wa in [false, true] {
            let b = bench(&format!(
                r#"{{"kind":"hackbench","groups":20,"loops":{loops},"fds":20,"datasize":100,"pipe":false,"threads":false}}"#
            ));
            let (out, r) = run_with("ivb-ep-2s", &wa_weight(wa), &b);
            let c = |n: &str| out.counters.get(n).copied().unwrap_or(0);
            let sum = |f: fn(&crate::engine::stats::CpuTime) -> u64| {
                out.cpu_time.iter().map(f).sum::<u64>() as f64 / 1e9
            };
            let lat: u64 = out.tasks.iter().map(|t| t.wakeup_latency.sum_ns).sum();
            let n: u64 = out.tasks.iter().map(|t| t.wakeup_latency.count).sum();
            println!(
                "{loops} {} {:.4} {:.3} {:.3} {:.3} {:.3} {} {} {} {} {} {} {} {:.2}",
                if wa { "WA_WEIGHT" } else { "NO_WA_WEIGHT" },
                r.value,
                sum(|t| t.busy_ns),
                sum(|t| t.overhead_ns),
                sum(|t| t.idle_ns),
                sum(|t| t.newidle_balance_ns),
                c("sched.switches"),
                c("sched.wakeup_preempt.waker_cpu"),
                c("sched.wakeup_preempt.other_cpu"),
                c("ipi.sent"),
                c("ttwu.local"),
                c("ttwu.remote"),
                c("ttwu.remote.other_node"),
                lat as f64 / n.max(1) as f64 / 1000.0,
            );
        }
    }
}

/// tbench's curve on `ivb-ep-2s` under 4.15, one line per client count
/// (issue 18, "Fidelity 2"; `cargo test -p schedlab --release
/// tbench_curve_counters -- --ignored --nocapture`): MB/s per client, the
/// CPUs and cores running a task on average, of a running CPU's time the
/// part its SMT sibling also runs one, and where each wakeup put the wakee
/// against the waker's CPU (same CPU, SMT sibling, same LLC, other node).
#[test]
#[ignore]
fn tbench_curve_counters() {
    use crate::engine::stats::{TraceEvent, TraceWindow};
    println!("clients MB/s/client busy_cpus busy_cores sib_busy% wake_same% wake_smt% wake_llc% wake_node% idle_exits/op");
    for clients in [2u64, 5, 10, 20, 40, 80] {
        let b = bench(&format!(
            r#"{{"kind":"tbench","clients":{clients},"duration_ms":60,"warmup_ms":30}}"#
        ));
        let topology = Topology::from_spec(&preset("ivb-ep-2s").unwrap()).unwrap();
        let built = b.build().unwrap();
        let policy = PolicySpec::era(Era::V4_15);
        let cfg = SimConfig {
            duration_ns: built.duration_ns,
            measure_from_ns: built.measure_from_ns,
            seed: 1,
            trace: Some(TraceWindow {
                start_ns: built.measure_from_ns,
                end_ns: built.duration_ns.unwrap(),
                max_events: 50_000_000,
                from_first_wakeup: false,
            }),
            ..SimConfig::new(topology.clone(), &policy, &built.spec).unwrap()
        };
        let out = Sim::new(&cfg).unwrap().run().unwrap();
        let r = b.report(&out);
        let n = topology.cpus.len();
        let (start, end) = (out.trace_start_ns.unwrap(), out.end_ns);
        // Each CPU's running intervals, then the sibling overlap.
        let mut since: Vec<Option<u64>> = vec![None; n];
        let mut runs: Vec<Vec<(u64, u64)>> = vec![Vec::new(); n];
        let mut wake = [0u64; 5];
        for ev in &out.trace {
            match *ev {
                TraceEvent::Switch { t, cpu, to, .. } => {
                    if let Some(s) = since[cpu].take() {
                        runs[cpu].push((s, t));
                    }
                    if to.is_some() {
                        since[cpu] = Some(t);
                    }
                }
                TraceEvent::Wakeup {
                    waker_cpu, target, ..
                } => {
                    wake[topology.distance(waker_cpu, target) as usize] += 1;
                }
                _ => {}
            }
        }
        for (cpu, s) in since.iter().enumerate() {
            if let Some(s) = *s {
                runs[cpu].push((s, end));
            }
        }
        let busy: u64 = runs.iter().flatten().map(|(a, b)| b - a).sum();
        let overlap = |a: &[(u64, u64)], b: &[(u64, u64)]| -> u64 {
            let (mut i, mut j, mut t) = (0, 0, 0);
            while i < a.len() && j < b.len() {
                let lo = a[i].0.max(b[j].0);
                let hi = a[i].1.min(b[j].1);
                t += hi.saturating_sub(lo);
                if a[i].1 < b[j].1 {
                    i += 1;
                } else {
                    j += 1;
                }
            }
            t
        };
        let mut both = 0;
        for cpu in 0..n / 2 {
            both += overlap(&runs[cpu], &runs[cpu + n / 2]);
        }
        let span = (end - start) as f64;
        let wakes: u64 = wake.iter().sum::<u64>().max(1);
        let pct = |x: u64| 100.0 * x as f64 / wakes as f64;
        let ops = mark_stats(&out, "op").map_or(1, |m| m.count).max(1) as f64;
        let exits: u64 = out
            .counters
            .iter()
            .filter(|(k, _)| k.starts_with("idle.enter."))
            .map(|(_, v)| *v)
            .sum();
        println!(
            "{clients} {:.0} {:.1} {:.1} {:.1} {:.1} {:.1} {:.1} {:.1} {:.2}",
            r.value / clients as f64,
            busy as f64 / span,
            (busy - both) as f64 / span,
            100.0 * 2.0 * both as f64 / busy.max(1) as f64,
            pct(wake[0]),
            pct(wake[1]),
            pct(wake[2]),
            pct(wake[3] + wake[4]),
            exits as f64 / ops,
        );
    }
}

/// `check` (what an experiment's validation runs, instead of building
/// every point) refuses exactly what `build` refuses, with the same words.
#[test]
fn a_generators_check_refuses_what_its_build_refuses() {
    let cases = [
        r#"{"kind":"hackbench","groups":0}"#,
        r#"{"kind":"hackbench","groups":2,"datasize":70000}"#,
        r#"{"kind":"lat_ctx","procs":1}"#,
        r#"{"kind":"netperf","test":"UDP_RR","send_size":70000}"#,
        r#"{"kind":"netperf","duration_ms":10,"warmup_ms":10}"#,
        r#"{"kind":"pipe_test","loops":100000,"batches":2000}"#,
        r#"{"kind":"perf_bench_pipe","loops":0}"#,
        r#"{"kind":"schbench","message_threads":4,"rps":3}"#,
        r#"{"kind":"schbench","message_threads":2,"workers":4}"#,
        r#"{"kind":"sysbench","threads":5000}"#,
        r#"{"kind":"tbench","clients":0}"#,
        r#"{"kind":"tbench","clients":2}"#,
    ];
    let mut refused = 0;
    for json in cases {
        let b = bench(json);
        let built = b.build().map(|_| ()).map_err(|e| e.to_string());
        assert_eq!(b.check().map_err(|e| e.to_string()), built, "{json}");
        refused += usize::from(built.is_err());
    }
    assert_eq!(refused, cases.len() - 2);
    for name in crate::presets::names() {
        let exp = crate::presets::get(name).unwrap();
        assert!(exp.workload.check().is_ok(), "{name}");
    }
}

//! Loopback networking: a TCP or UDP send's receive path runs in the NET_RX
//! softirq on the sending CPU and is accounted there as softirq time; a TCP
//! reader's ACK runs its softirq on the reader's CPU, frees the window and
//! wakes a writer waiting for it. Pipes and unix sockets have no softirq,
//! UDP no ACKs.

mod common;

use common::machine;
use schedlab::cost::CostModel;
use schedlab::engine::stats::{TraceEvent, TraceWindow};
use schedlab::engine::{RunOutput, Sim, SimConfig};
use schedlab::policy::{Era, PolicySpec};
use schedlab::topology::{HwCosts, Topology};
use schedlab::workload::program::{ChannelKind, Workload, WorkloadSpec};

fn topo() -> Topology {
    // Two cores of one LLC, no SMT: segments run at full speed.
    machine(1, 1, 2, 1, HwCosts::default())
}

fn run(topo: &Topology, workload_json: &str) -> RunOutput {
    let spec: WorkloadSpec = serde_json::from_str(workload_json).unwrap();
    let cfg = SimConfig {
        policy: PolicySpec::era(Era::V6_5).resolve(topo.ncpus()).unwrap(),
        workload: Workload::compile(&spec, topo.ncpus()).unwrap(),
        topology: topo.clone(),
        seed: 1,
        start_ns: 0,
        duration_ns: None,
        trace: Some(TraceWindow {
            start_ns: 0,
            end_ns: u64::MAX,
            max_events: 1_000_000,
            from_first_wakeup: false,
        }),
        measure_from_ns: 0,
        check_invariants: true,
        why: None,
    };
    Sim::new(&cfg).unwrap().run().unwrap()
}

/// A writer pinned to CPU 0 sends `count` messages of `bytes` to a reader
/// pinned to CPU 1 that reads each after `think_ns` of work.
fn stream(kind: &str, capacity: u64, count: u64, bytes: u64, think_ns: u64) -> String {
    format!(
        r#"{{"channels":[{{"kind":"{kind}","capacity":{capacity}}}],
            "tasks":[
              {{"name":"writer","affinity":"0","program":[{{"loop":{{"count":{count},"body":[
                  {{"write":{{"chan":0,"bytes":{bytes}}}}}]}}}}]}},
              {{"name":"reader","affinity":"1","program":[{{"loop":{{"count":{count},"body":[
                  {{"compute":{{"ns":{think_ns}}}}},{{"read":{{"chan":0,"bytes":{bytes}}}}}]}}}}]}}]}}"#
    )
}

fn counter(out: &RunOutput, name: &str) -> u64 {
    out.counters.get(name).copied().unwrap_or(0)
}

#[test]
fn a_tcp_streams_receive_path_is_softirq_time_on_the_senders_cpu() {
    let topo = topo();
    let rx = CostModel::new(&topo.costs).net_rx(ChannelKind::Tcp);
    let out = run(&topo, &stream("tcp", 131_072, 100, 16_384, 1));
    assert_eq!(out.channels[0].bytes_read, 100 * 16_384);
    let acks = counter(&out, "tcp.acks");
    assert!(acks > 0, "a bulk stream's reader acknowledges");
    // Every data segment's receive path on the sender's CPU, every ACK's
    // on the reader's, each exactly the receive path's cost.
    assert_eq!(out.cpu_time[0].net_rx_softirq_ns, 100 * rx);
    assert_eq!(out.cpu_time[1].net_rx_softirq_ns, acks * rx);
    assert_eq!(counter(&out, "softirq.net_rx"), 100 + acks);
    // Softirq time is kernel time, split out of it.
    assert!(out.cpu_time[0].overhead_ns > out.cpu_time[0].net_rx_softirq_ns);
}

#[test]
fn a_writer_blocked_on_a_full_window_is_woken_by_the_acks_softirq_on_the_readers_cpu() {
    let topo = topo();
    // Two 16 KiB segments fill the window; the reader is slower than the writer.
    let out = run(&topo, &stream("tcp", 32_768, 50, 16_384, 20_000));
    let ch = out.channels[0];
    assert_eq!(ch.bytes_read, 50 * 16_384);
    assert!(ch.writer_blocks > 10, "{ch:?}");
    // Each block ends with a wakeup by an ACK, from the reader's CPU, not sync.
    assert_eq!(counter(&out, "tcp.ack_wakeups"), ch.writer_blocks);
    let writer_wakeups: Vec<usize> = out
        .trace
        .iter()
        .filter_map(|e| match *e {
            TraceEvent::Wakeup {
                task: 0, waker_cpu, ..
            } => Some(waker_cpu),
            _ => None,
        })
        .collect();
    assert_eq!(writer_wakeups.len() as u64, ch.writer_blocks);
    assert!(writer_wakeups.iter().all(|&c| c == 1), "{writer_wakeups:?}");
    assert_eq!(
        counter(&out, "ttwu.sync"),
        counter(&out, "ttwu.remote") - ch.writer_blocks
    );
}

#[test]
fn pipes_and_unix_sockets_have_no_softirq_and_udp_no_acks() {
    let topo = topo();
    for kind in ["pipe", "unix"] {
        let out = run(&topo, &stream(kind, 32_768, 50, 16_384, 20_000));
        assert_eq!(out.channels[0].bytes_read, 50 * 16_384);
        assert!(out.channels[0].writer_blocks > 0);
        assert!(
            out.cpu_time.iter().all(|t| t.net_rx_softirq_ns == 0),
            "{kind}"
        );
        for c in ["softirq.net_rx", "tcp.acks", "tcp.ack_wakeups"] {
            assert_eq!(counter(&out, c), 0, "{kind}: {c}");
        }
    }
    // UDP: each datagram's receive path on the sender's CPU, dropped ones
    // too, at UDP's own cost (below TCP's); no ACKs, and the sender never
    // blocks.
    let rx = CostModel::new(&topo.costs).net_rx(ChannelKind::Udp);
    assert!(rx < CostModel::new(&topo.costs).net_rx(ChannelKind::Tcp));
    let out = run(&topo, &stream("udp", 1_048_576, 50, 16_384, 1));
    assert_eq!(out.cpu_time[0].net_rx_softirq_ns, 50 * rx);
    assert_eq!(out.cpu_time[1].net_rx_softirq_ns, 0);
    assert_eq!(counter(&out, "softirq.net_rx"), 50);
    assert_eq!(counter(&out, "tcp.acks"), 0);
    assert_eq!(out.channels[0].writer_blocks, 0);
}

//! The model's costs from the probes' medians: each cost with the probes
//! and the formula that give it (recorded in the machine's
//! `calibration.costs`), or the default and why it could not be measured.
//! A pure function of what was measured, so each formula is tested on
//! numbers of its own (`tests`).

use super::{ns, Run, CLASS, CLASS_KEY};
use schedlab::topology::HwCosts;
use std::collections::BTreeMap;

/// What the probes measured, by probe name, and the machine facts the
/// formulas need.
#[derive(Debug, Clone, Default)]
pub(super) struct Measured {
    pub medians: BTreeMap<String, f64>,
    /// Each distance class: whether this machine has a pair of CPUs in it.
    pub partner: [bool; 4],
    /// The nearest class with a pair that are not SMT siblings, where the
    /// wakeup probes ran.
    pub near: Option<usize>,
    /// A virtual machine.
    pub guest: bool,
    /// The clock (MHz) and the LLC size (KiB) as the kernel reports them,
    /// each with where it was read.
    pub clock_mhz: Option<(u32, String)>,
    pub llc_kib: Option<(u64, String)>,
    /// SLUB's skb caches as the kernel lists them, and where.
    pub skb_slabs: Option<(schedlab::topology::SkbSlabs, String)>,
}

impl Measured {
    fn get(&self, probe: &str) -> Option<f64> {
        self.medians.get(probe).copied()
    }

    fn per_class(&self, prefix: &str) -> [Option<f64>; 4] {
        std::array::from_fn(|c| self.get(&format!("{prefix}_{}", CLASS_KEY[c])))
    }

    fn near(&self, name: impl Fn(&str) -> String) -> Option<f64> {
        self.near.and_then(|c| self.get(&name(CLASS_KEY[c])))
    }

    /// The quickest wakeup of the nearest pair's idle CPU, over the idle
    /// gaps probed (`oneway_idle_{class}_{gap}us`), and its probe's name.
    fn idle_floor(&self) -> Option<(&str, f64)> {
        let prefix = format!("oneway_idle_{}_", CLASS_KEY[self.near?]);
        self.medians
            .iter()
            .filter(|(name, _)| name.starts_with(&prefix) && name.ends_with("us"))
            .map(|(name, &v)| (name.as_str(), v))
            .min_by(|a, b| a.1.total_cmp(&b.1))
    }
}

/// Every cost of `costs` the probes can give, in the order each formula
/// needs the ones before it; the rest keep their defaults, each recorded
/// with the reason.
pub(super) fn costs(run: &mut Run, m: &Measured, costs: &mut HwCosts) {
    let d = HwCosts::default();
    let near = m.near;
    let guest = m.guest;
    let pipe_pair = m.get("pipe_op_pair");
    let pipe_copy = m.get("pipe_16k_pair");
    let unix_pair = m.get("unix_msg_pair");
    let tcp_pair = m.get("tcp_loopback_pair");
    let udp_pair = m.get("udp_loopback_pair");
    let fork = m.get("fork");
    let rt_proc = m.get("pipe_rt_same_cpu_processes");
    let rt_thread = m.get("pipe_rt_same_cpu_threads");
    let lone_write = m.get("pipe_write_alone");
    let local_write = m.get("pipe_write_wakes_local");
    let read_local = m.get("read_after_write_same_cpu");
    let miss = m.per_class("line_bounce");
    let poll = m.per_class("read_after_write");
    let refill = m.near(|k| format!("refill_{k}"));
    let busy = m.near(|k| format!("oneway_busy_{k}"));
    let busy_write = m.near(|k| format!("oneway_busy_{k}_write"));
    let smt = m.get("smt_pair_throughput");
    let node_bw: Vec<f64> = m
        .medians
        .iter()
        .filter(|(name, _)| name.starts_with("copy_bw_node"))
        .map(|(_, &v)| v)
        .collect();
    let llc = m.llc_kib.clone();
    unix_backlog(run, m, costs);
    let s = match pipe_pair {
        Some(p) => {
            let mut how =
                "pipe_op_pair / 2 (the engine charges it once per read or write)".to_string();
            let v = ns(p / 2.0, &mut how);
            run.cost("syscall_ns", v as f64, "measured", how);
            costs.syscall_ns = v;
            p / 2.0
        }
        None => {
            run.default_cost("syscall_ns", d.syscall_ns, "pipe_op_pair did not run");
            d.syscall_ns as f64
        }
    };
    let copy_per_kib = match (pipe_copy, pipe_pair) {
        (Some(c), Some(p)) => {
            let mut how =
                "(pipe_16k_pair - pipe_op_pair) / 32 KiB (a write and a read each copy 16 KiB)"
                    .to_string();
            let v = ns((c - p) / 32.0, &mut how);
            run.cost("copy_ns_per_kib", v as f64, "measured", how);
            costs.copy_ns_per_kib = v;
            (c - p) / 32.0
        }
        _ => {
            run.default_cost(
                "copy_ns_per_kib",
                d.copy_ns_per_kib,
                "a pipe probe did not run",
            );
            d.copy_ns_per_kib as f64
        }
    };
    match (unix_pair, pipe_pair) {
        (Some(u), Some(p)) => {
            let mut how = "unix_msg_pair - pipe_op_pair - 2 x 96 bytes of copy (the engine splits it between sender and reader)".to_string();
            let v = ns(u - p - 2.0 * copy_per_kib * 96.0 / 1024.0, &mut how);
            run.cost("unix_msg_ns", v as f64, "measured", how);
            costs.unix_msg_ns = v;
        }
        _ => run.default_cost("unix_msg_ns", d.unix_msg_ns, "a message probe did not run"),
    }
    // A loopback message's stack work: its one-thread write and read
    // beyond a pipe's, send and receive softirq charged to the sender.
    let loopback = [
        (
            "net_msg_ns",
            "tcp_loopback_pair",
            tcp_pair,
            d.net_msg_ns,
            &mut costs.net_msg_ns,
        ),
        (
            "udp_msg_ns",
            "udp_loopback_pair",
            udp_pair,
            d.udp_msg_ns,
            &mut costs.udp_msg_ns,
        ),
    ];
    for (cost, probe, pair, default, field) in loopback {
        match (pair, pipe_pair) {
            (Some(m), Some(p)) => {
                let mut how = format!(
                    "{probe} - pipe_op_pair (send and receive softirq, charged to the sender)"
                );
                *field = ns(m - p, &mut how);
                run.cost(cost, *field as f64, "measured", how);
            }
            _ => run.default_cost(cost, default, "a message probe did not run"),
        }
    }
    match fork {
        Some(f) => {
            run.cost("fork_ns", f.round(), "measured", "fork");
            costs.fork_ns = f.round() as u64;
        }
        None => run.default_cost("fork_ns", d.fork_ns, "the fork probe did not run"),
    }
    // The waker's share of a wakeup: its write() with a blocked reader
    // against one with nobody to wake.
    let w = match (local_write, lone_write) {
        (Some(bw), Some(lw)) => {
            let mut how = "pipe_write_wakes_local - pipe_write_alone (the waker's try_to_wake_up)"
                .to_string();
            let v = ns(bw - lw, &mut how);
            run.cost("wakeup_ns", v as f64, "measured", how);
            costs.wakeup_ns = v;
            v as f64
        }
        _ => {
            run.default_cost("wakeup_ns", d.wakeup_ns, "a wakeup probe did not run");
            d.wakeup_ns as f64
        }
    };
    // The waker's own time for a wakeup with an IPI: its write() waking a
    // reader on another CPU against one waking a reader on its own.
    match (busy_write, local_write, near) {
        (Some(bw), Some(lw), Some(c)) => {
            let mut how = format!(
                "oneway_busy_{}_write - pipe_write_wakes_local (the remote queue's lines and the IPI's send)",
                CLASS_KEY[c]
            );
            let v = ns(bw - lw, &mut how);
            run.cost("ipi_send_ns", v as f64, "measured", how);
            costs.ipi_send_ns = v;
        }
        _ => run.default_cost(
            "ipi_send_ns",
            d.ipi_send_ns,
            "needs two CPUs (not measured)",
        ),
    }
    // A round trip on one CPU without wakeup preemption: per side a write,
    // a wakeup, a read that blocks, one switch.
    let mut ts = d.thread_switch_ns as f64;
    for (rt, field, which) in [
        (rt_proc, "context_switch_ns", "pipe_rt_same_cpu_processes"),
        (rt_thread, "thread_switch_ns", "pipe_rt_same_cpu_threads"),
    ] {
        let dv = if field == "context_switch_ns" {
            d.context_switch_ns
        } else {
            d.thread_switch_ns
        };
        match rt {
            // Noise (a slow wakeup probe) can leave nothing for the switch:
            // the probes disagree, so the cost is not measured.
            Some(rt) if rt / 2.0 - 2.0 * s - w <= 0.0 => run.default_cost(
                field,
                dv,
                format!("{which} / 2 left nothing after 2 x syscall_ns + wakeup_ns (the probes disagree)"),
            ),
            Some(rt) => {
                let mut how = format!(
                    "{which} / 2 - 2 x syscall_ns - wakeup_ns (each side writes, wakes, blocks in read, switches)"
                );
                let v = ns(rt / 2.0 - 2.0 * s - w, &mut how);
                run.cost(field, v as f64, "measured", how);
                if field == "context_switch_ns" {
                    costs.context_switch_ns = v;
                } else {
                    costs.thread_switch_ns = v;
                    ts = v as f64;
                }
            }
            None => run.default_cost(field, dv, format!("{which} did not run")),
        }
    }
    for c in 0..4 {
        match miss[c] {
            Some(m) => {
                let v = m.round().max(1.0) as u64;
                run.cost(
                    &format!("miss_ns[{c}]"),
                    v as f64,
                    "measured",
                    format!("line_bounce_{} ({})", CLASS_KEY[c], CLASS[c]),
                );
                costs.miss_ns[c] = v;
            }
            None => run.default_cost(
                &format!("miss_ns[{c}]"),
                d.miss_ns[c],
                format!("no pair of {} on this machine (unused here)", CLASS[c]),
            ),
        }
    }
    let mlp = match (near, refill) {
        (Some(c), Some(r)) if miss[c].is_some() => {
            let m = miss[c].expect("checked");
            let v = (m / r).round().max(1.0) as u32;
            run.cost(
                "mlp",
                v as f64,
                "measured",
                format!(
                    "line_bounce_{k} / refill_{k} (lines in flight while refilling)",
                    k = CLASS_KEY[c]
                ),
            );
            costs.mlp = v;
            v as f64
        }
        _ => {
            run.default_cost("mlp", d.mlp as u64, "needs two CPUs (not measured)");
            d.mlp as f64
        }
    };
    let mut x_near = None;
    for c in 0..4 {
        match (poll[c], read_local) {
            (Some(l), Some(base)) => {
                let mut how = format!(
                    "read_after_write_{} - read_after_write_same_cpu - miss_ns[{c}] / mlp (the buffer's shared state beside its one data line)",
                    CLASS_KEY[c]
                );
                let v = ns(l - base - costs.miss_ns[c] as f64 / mlp, &mut how);
                run.cost(&format!("transfer_ns[{c}]"), v as f64, "measured", how);
                costs.transfer_ns[c] = v;
                if Some(c) == near {
                    // The reader's transfer (state and data line) and the
                    // writer's (the state its last read left on the reader's CPU).
                    x_near = Some(2.0 * v as f64 + costs.miss_ns[c] as f64 / mlp);
                }
            }
            _ => run.default_cost(
                &format!("transfer_ns[{c}]"),
                d.transfer_ns[c],
                if m.partner[c] {
                    "a read probe did not run".to_string()
                } else {
                    format!("no pair of {} on this machine (unused here)", CLASS[c])
                },
            ),
        }
    }
    match (near, busy, x_near) {
        (Some(c), Some(l), Some(x)) => {
            let k = CLASS_KEY[c];
            // A guest's idle vCPU may wake sooner than a busy one: the host
            // only wakes a halted vCPU's thread, but must kick a running
            // one out of guest mode. The IPI is then the idle wakeup's,
            // and a running target pays the difference.
            let (base, base_probe) = match m.idle_floor() {
                Some((name, f)) if f < l => {
                    let mut how =
                        format!("oneway_busy_{k} - {name}: a busy CPU's wakeup over an idle one's");
                    let v = ns(l - f, &mut how);
                    run.cost("ipi_running_extra_ns", v as f64, "measured", how);
                    costs.ipi_running_extra_ns = v;
                    (f, name.to_string())
                }
                _ => (l, format!("oneway_busy_{k}")),
            };
            let mut how = format!(
                "{base_probe} - syscall_ns - thread_switch_ns - 2 x transfer_ns - miss_ns / mlp: the write with its state transfer, then the IPI, the switch and the read's transfer"
            );
            if guest {
                how.push_str("; a guest: the hypervisor's share is inside the measurement");
            }
            let v = ns(base - s - ts - x, &mut how);
            run.cost("ipi_ns", v as f64, "measured", how);
            costs.ipi_ns = v;
            costs.virt_ipi_extra_ns = 0;
            run.cost(
                "virt_ipi_extra_ns",
                0.0,
                "measured",
                "0: ipi_ns was measured on this machine and includes any hypervisor cost",
            );
        }
        _ => {
            run.default_cost("ipi_ns", d.ipi_ns, "needs two CPUs (not measured)");
            run.default_cost("virt_ipi_extra_ns", 0, "needs two CPUs (not measured)");
        }
    }
    run.default_cost(
        "scan_ns_per_cpu",
        d.scan_ns_per_cpu,
        "checking a CPU in select_idle_sibling cannot be timed from user space",
    );
    match smt {
        Some(p) => {
            let v = p.round().clamp(100.0, 200.0) as u32;
            run.cost(
                "smt_throughput_pct",
                v as f64,
                "measured",
                "smt_pair_throughput (held to 100..=200)",
            );
            costs.smt_throughput_pct = v;
        }
        None => run.default_cost(
            "smt_throughput_pct",
            d.smt_throughput_pct as u64,
            "no SMT siblings (unused on this machine)",
        ),
    }
    match m.clock_mhz.clone() {
        Some((mhz, from)) if mhz > 0 => {
            run.cost("clock_mhz", mhz as f64, "read", from);
            costs.clock_mhz = mhz;
        }
        _ => run.default_cost(
            "clock_mhz",
            d.clock_mhz as u64,
            "no clock in cpufreq or /proc/cpuinfo",
        ),
    }
    match m.skb_slabs.clone() {
        Some((slabs, from)) => {
            run.cost("skb_slabs.head.cpu_partial", slabs.head.cpu_partial as f64, "read", from);
            costs.skb_slabs = Some(slabs);
        }
        None => run.default_cost(
            "skb_slabs",
            0,
            "/sys/kernel/slab lists no skbuff_head_cache (not SLUB, or not shown): skb slabs not modelled",
        ),
    }
    match llc {
        Some((kib, from)) => {
            run.cost("llc_kib", kib as f64, "read", from);
            costs.llc_kib = kib;
        }
        None => run.default_cost("llc_kib", d.llc_kib, "sysfs lists no cache sizes"),
    }
    // memcpy moves each byte twice (a read and a write), as STREAM's Copy
    // counts bandwidth; the slowest node stands for all (the model has one
    // figure per node, the same for every node).
    match node_bw.iter().copied().reduce(f64::min) {
        Some(gb_s) => {
            let v = (2.0 * gb_s * 1000.0).round().max(1.0) as u64;
            run.cost(
                "mem_bw_mb_s",
                v as f64,
                "measured",
                "2 x copy_bw_node (the slowest node): memcpy reads and writes each byte, as STREAM's Copy counts",
            );
            costs.mem_bw_mb_s = v;
        }
        None => run.default_cost("mem_bw_mb_s", d.mem_bw_mb_s, "no node copy probe ran"),
    }
}

/// `unix_backlog`: each backlog probe against the baseline with one
/// message in flight (`unix_backlog_0kib`), the same loop.
fn unix_backlog(run: &mut Run, m: &Measured, costs: &mut HwCosts) {
    let base_name = super::backlog_probe(0);
    let Some(base) = m.get(&base_name) else {
        run.default_cost("unix_backlog", 0, format!("{base_name} did not run"));
        return;
    };
    for kib in super::plan::BACKLOG_KIB.into_iter().filter(|&k| k > 0) {
        let name = super::backlog_probe(kib);
        let Some(v) = m.get(&name) else {
            continue;
        };
        let mut how = format!("{name} - {base_name}");
        let ns = ns(v - base, &mut how);
        let i = costs.unix_backlog.len();
        run.cost(&format!("unix_backlog[{i}].ns"), ns as f64, "measured", how);
        costs
            .unix_backlog
            .push(schedlab::topology::BacklogCost { kib, ns });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::measure::Budget;

    fn run() -> Run {
        Run::new(Budget::quick())
    }

    /// Probe medians chosen so every cost comes out round: a two-CPU
    /// machine (one LLC, no SMT) whose probes all ran.
    fn round_probes() -> Vec<(&'static str, f64)> {
        vec![
            ("pipe_op_pair", 1000.0),                  // syscall_ns 500
            ("pipe_16k_pair", 1000.0 + 3200.0),        // copy 100 ns/KiB
            ("unix_msg_pair", 1000.0 + 700.0 + 18.75), // unix_msg 700
            ("tcp_loopback_pair", 3500.0),             // net_msg 2500
            ("udp_loopback_pair", 2700.0),             // udp_msg 1700
            ("fork", 50_000.0),
            ("pipe_write_alone", 400.0),
            ("pipe_write_wakes_local", 1400.0),     // wakeup 1000
            ("pipe_rt_same_cpu_processes", 8000.0), // context switch 2000
            ("pipe_rt_same_cpu_threads", 7000.0),   // thread switch 1500
            ("line_bounce_llc", 100.0),
            ("refill_llc", 25.0), // mlp 4
            ("read_after_write_same_cpu", 300.0),
            ("read_after_write_llc", 375.0),   // transfer 50
            ("oneway_busy_llc", 3125.0),       // ipi 1000
            ("oneway_busy_llc_write", 3900.0), // ipi send 2500 (over the local 1400)
            ("copy_bw_node0", 5.0),            // mem_bw 10,000 MB/s
        ]
    }

    fn two_cpus(medians: &[(&str, f64)]) -> Measured {
        Measured {
            medians: medians.iter().map(|&(k, v)| (k.to_string(), v)).collect(),
            partner: [false, true, false, false],
            near: Some(1),
            guest: false,
            clock_mhz: Some((2600, "cpuinfo".into())),
            llc_kib: None,
            skb_slabs: None,
        }
    }

    #[test]
    fn each_cost_follows_its_formula() {
        let m = two_cpus(&round_probes());
        let (mut r, mut c) = (run(), HwCosts::default());
        costs(&mut r, &m, &mut c);
        let d = HwCosts::default();
        assert_eq!(c.syscall_ns, 500);
        assert_eq!(c.copy_ns_per_kib, 100);
        assert_eq!(c.unix_msg_ns, 700);
        assert_eq!(c.net_msg_ns, 2500);
        assert_eq!(c.udp_msg_ns, 1700);
        assert_eq!(c.fork_ns, 50_000);
        assert_eq!(c.wakeup_ns, 1000);
        assert_eq!(c.context_switch_ns, 2000);
        assert_eq!(c.thread_switch_ns, 1500);
        assert_eq!(c.miss_ns[1], 100);
        assert_eq!(c.mlp, 4);
        assert_eq!(c.transfer_ns[1], 50);
        assert_eq!(c.ipi_ns, 1000);
        assert_eq!(c.ipi_send_ns, 2500);
        assert_eq!(c.mem_bw_mb_s, 10_000);
        assert_eq!(c.clock_mhz, 2600);
        // What was not measured keeps the default, and says why.
        assert_eq!(c.miss_ns[0], d.miss_ns[0]);
        assert_eq!(c.llc_kib, d.llc_kib);
        let source = |cost: &str| {
            r.costs
                .iter()
                .find(|x| x.cost == cost)
                .map(|x| x.source.clone())
                .unwrap_or_else(|| panic!("{cost} is recorded"))
        };
        assert_eq!(source("ipi_ns"), "measured");
        assert_eq!(source("ipi_send_ns"), "measured");
        assert_eq!(source("miss_ns[0]"), "default");
        assert_eq!(source("llc_kib"), "default");
        assert_eq!(source("clock_mhz"), "read");
    }

    /// A guest's halted vCPU can wake sooner than a running one (the host
    /// kicks a running vCPU out of guest mode): the IPI is then the
    /// quickest idle wakeup's, and a running target pays the difference.
    /// An idle wakeup slower than the busy one leaves the busy formula.
    #[test]
    fn an_idle_wakeup_quicker_than_a_busy_one_gives_the_ipi() {
        let ipi = |idle: &[(&'static str, f64)]| {
            let mut probes = round_probes();
            probes.extend_from_slice(idle);
            let (mut r, mut c) = (run(), HwCosts::default());
            costs(&mut r, &two_cpus(&probes), &mut c);
            (c.ipi_ns, c.ipi_running_extra_ns)
        };
        assert_eq!(ipi(&[]), (1000, 0));
        assert_eq!(ipi(&[("oneway_idle_llc_0us", 3625.0)]), (1000, 0));
        let quicker = [
            ("oneway_idle_llc_0us", 2825.0),
            ("oneway_idle_llc_50us", 2625.0),
            ("oneway_idle_llc_200us", 4000.0),
            // Another class's probe is not this pair's.
            ("oneway_idle_cross_node_0us", 100.0),
        ];
        assert_eq!(ipi(&quicker), (500, 500));
    }

    /// Each backlog point is its probe less the one-message baseline; a
    /// point below the baseline (noise) is 0, and says so; without the
    /// baseline there is no curve.
    #[test]
    fn the_unix_backlog_curve_is_each_probe_over_the_baseline() {
        let medians = [
            ("unix_backlog_0kib", 600.0),
            ("unix_backlog_1024kib", 700.0),
            ("unix_backlog_2048kib", 550.0),
        ];
        let m = Measured {
            medians: medians.iter().map(|&(k, v)| (k.to_string(), v)).collect(),
            ..Measured::default()
        };
        let (mut r, mut c) = (run(), HwCosts::default());
        costs(&mut r, &m, &mut c);
        let point = |kib, ns| schedlab::topology::BacklogCost { kib, ns };
        assert_eq!(c.unix_backlog, vec![point(1024, 100), point(2048, 0)]);
        let second = r
            .costs
            .iter()
            .find(|x| x.cost == "unix_backlog[1].ns")
            .expect("recorded");
        assert_eq!(second.source, "measured");
        assert!(second
            .how
            .contains("unix_backlog_2048kib - unix_backlog_0kib"));
        assert!(second.how.contains("so 0"), "{}", second.how);

        let m = Measured {
            medians: [("unix_backlog_1024kib".to_string(), 700.0)].into(),
            ..Measured::default()
        };
        let (mut r, mut c) = (run(), HwCosts::default());
        costs(&mut r, &m, &mut c);
        assert!(c.unix_backlog.is_empty());
        assert!(r
            .costs
            .iter()
            .any(|x| x.cost == "unix_backlog" && x.source == "default"));
    }

    /// One CPU, nothing across CPUs: the two-CPU costs keep their defaults.
    #[test]
    fn a_lone_cpu_keeps_the_cross_cpu_defaults() {
        let m = Measured {
            medians: [("pipe_op_pair".to_string(), 1000.0)].into(),
            ..Measured::default()
        };
        let (mut r, mut c) = (run(), HwCosts::default());
        costs(&mut r, &m, &mut c);
        let d = HwCosts::default();
        assert_eq!(c.syscall_ns, 500);
        assert_eq!(
            (c.ipi_ns, c.mlp, c.transfer_ns),
            (d.ipi_ns, d.mlp, d.transfer_ns)
        );
        for cost in ["ipi_ns", "ipi_send_ns"] {
            assert!(r
                .costs
                .iter()
                .any(|x| x.cost == cost && x.source == "default"));
        }
        assert_eq!(c.ipi_send_ns, d.ipi_send_ns);
    }
}

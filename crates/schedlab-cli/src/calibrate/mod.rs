//! `schedlab calibrate`: this machine's topology from the kernel, and the
//! model's costs measured by native probes. Every cost written is either
//! measured (with the probes and the formula), read from the kernel, or the
//! model's default with the reason it could not be measured; the machine's
//! `calibration` records all of it.

mod derive;
pub mod measure;
pub mod placement;
mod plan;
pub mod probes;
pub mod sysfs;

use measure::{Budget, Stat};
use probes::{OneWay, Wait};
use schedlab::calibration::{Calibration, DerivedCost, Probe, Skipped};
use schedlab::topology::{CState, CpuPlace, HwCosts, MachineSpec, Topology};
use std::collections::BTreeMap;
use std::io::Write;

pub struct Options {
    pub name: String,
    /// Short probes (for tests): noisier, a few seconds in all.
    pub quick: bool,
}

/// The distance classes of the cost arrays, by index.
const CLASS: [&str; 4] = [
    "SMT siblings",
    "two cores of one LLC",
    "two LLCs of one node",
    "two nodes",
];
const CLASS_KEY: [&str; 4] = ["smt", "llc", "cross_llc", "cross_node"];

/// The most memory the node copy probes may take (sources and
/// destinations together).
const NODE_COPY_MAX_MIB: usize = 4096;

/// The local-wakeup probe's sleep before each write (long enough for the
/// reader to block again), also taken by its no-wakeup twin so both writes
/// start from the same cache state.
const LOCAL_WAKE_PAUSE_NS: u64 = 50_000;

/// One idle-exit probe: the idle gap before the wakeup (ns), the wakeup's
/// latency (ns), the idle state the target mostly entered, and that
/// state's share of its entries.
type IdleSample = (u64, f64, Option<usize>, f64);

/// Idle periods before a wakeup, for the idle-exit probes.
/// The name of the `unix_backlog` probe at `kib` KiB.
fn backlog_probe(kib: u64) -> String {
    format!("unix_backlog_{kib}kib")
}

const IDLE_GAPS_NS: [u64; 5] = [0, 50_000, 200_000, 1_000_000, 5_000_000];

/// The name cpuidle gives its polling state (drivers/cpuidle/poll_state.c).
const POLL_STATE: &str = "POLL";

struct Run {
    budget: Budget,
    probes: Vec<Probe>,
    skipped: Vec<Skipped>,
    costs: Vec<DerivedCost>,
    done: usize,
    /// The CPU whose probes are held to one pace and the pair whose probes
    /// are held to one host placement, once surveyed.
    holds: Vec<placement::Hold>,
}

/// Runs `f` on a thread of its own, so the probe's pinning ends with it.
fn on_thread<T: Send>(f: impl FnOnce() -> Result<T, String> + Send) -> Result<T, String> {
    std::thread::scope(|s| {
        s.spawn(f)
            .join()
            .map_err(|_| "the probe thread panicked".to_string())?
    })
}

fn fmt_value(v: f64, unit: &str) -> String {
    match unit {
        "ns" if v >= 10_000.0 => format!("{:.1} us", v / 1000.0),
        "ns" => format!("{v:.0} ns"),
        _ => format!("{v:.2} {unit}"),
    }
}

impl Run {
    fn new(budget: Budget) -> Run {
        Run {
            budget,
            probes: vec![],
            skipped: vec![],
            costs: vec![],
            done: 0,
            holds: Vec::new(),
        }
    }

    /// Runs one probe, records it and prints a progress line; a probe that
    /// fails is recorded as skipped with its error. A probe on a held CPU or
    /// pair runs until it ran at the surveyed pace or placement
    /// (`placement::Hold`).
    fn probe(
        &mut self,
        name: &str,
        what: &str,
        cpus: &[u32],
        unit: &str,
        mut f: impl FnMut(&Budget) -> Result<Stat, String> + Send,
    ) -> Option<f64> {
        self.done += 1;
        let mut err = std::io::stderr();
        let _ = write!(err, "calibrate: [{:>2}] {name:<34} ", self.done);
        let _ = err.flush();
        let budget = self.budget;
        let result = match self.holds.iter_mut().find(|h| h.covers(cpus)) {
            Some(h) => h.run(name, || on_thread(|| f(&budget))),
            None => on_thread(|| f(&budget)),
        };
        match result {
            Ok(s) => {
                let _ = writeln!(
                    err,
                    "{:>10}  ±{:.1}% ({} batches)",
                    fmt_value(s.median, unit),
                    s.spread_pct(),
                    s.batches
                );
                self.probes.push(Probe {
                    name: name.into(),
                    what: what.into(),
                    cpus: cpus.to_vec(),
                    unit: unit.into(),
                    median: round2(s.median),
                    spread: round2(s.spread),
                    batches: s.batches,
                });
                Some(s.median)
            }
            Err(e) => {
                let _ = writeln!(err, "not run: {e}");
                self.skip(name, &e);
                None
            }
        }
    }

    /// Surveys what `watch` watches and holds the probes on its CPUs to the
    /// survey's reference; a survey that fails is recorded as skipped.
    fn survey(&mut self, watch: placement::Watch, quick: bool) {
        let (n, gap) = if quick {
            (5, std::time::Duration::from_millis(10))
        } else {
            (20, std::time::Duration::from_millis(100))
        };
        match watch.survey(n, gap) {
            Ok(v) => self.holds.push(placement::Hold::new(watch, v)),
            Err(e) => self.skip(watch.survey_name(), &e),
        }
    }

    fn skip(&mut self, probe: &str, why: &str) {
        self.skipped.push(Skipped {
            probe: probe.into(),
            why: why.into(),
        });
    }

    fn cost(&mut self, cost: &str, value: f64, source: &str, how: impl Into<String>) {
        self.costs.push(DerivedCost {
            cost: cost.into(),
            value: round2(value),
            source: source.into(),
            how: how.into(),
        });
    }

    fn default_cost(&mut self, cost: &str, value: u64, why: impl Into<String>) {
        self.cost(cost, value as f64, "default", why);
    }
}

fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

/// A derived nanosecond cost: rounded, and never below zero (a difference
/// of two noisy medians can be); says so when it was.
fn ns(v: f64, how: &mut String) -> u64 {
    if v < 0.0 {
        how.push_str(&format!(
            " (came out {v:.0} ns: below what the probes resolve, so 0)"
        ));
        0
    } else {
        v.round() as u64
    }
}

/// The distance class of two CPUs (index into the cost arrays).
fn class(a: &CpuPlace, b: &CpuPlace) -> usize {
    if a.core == b.core {
        0
    } else if a.llc == b.llc {
        1
    } else if a.node == b.node {
        2
    } else {
        3
    }
}

pub fn calibrate(opts: &Options) -> Result<MachineSpec, String> {
    let machine = sysfs::machine()?;
    let allowed: Vec<u32> = probes::allowed_cpus()
        .into_iter()
        .filter(|c| machine.places.contains_key(c))
        .collect();
    let Some(&a) = allowed.first() else {
        return Err("this process may run on none of the online CPUs (sched_getaffinity)".into());
    };
    let mut run = Run::new(if opts.quick {
        Budget::quick()
    } else {
        Budget::normal()
    });
    eprintln!(
        "calibrate: {} CPUs ({} allowed), topology from {}{}",
        machine.os_cpus.len(),
        allowed.len(),
        machine.source,
        if opts.quick { "; quick probes" } else { "" }
    );
    for n in &machine.notes {
        eprintln!("calibrate: note: {n}");
    }
    // A partner CPU for each distance class, if there is one.
    let mut partner: [Option<u32>; 4] = [None; 4];
    for &b in &allowed[1..] {
        let c = class(&machine.places[&a], &machine.places[&b]);
        partner[c].get_or_insert(b);
    }

    // How fast the host runs the first CPU, which its probes are held to.
    run.survey(placement::Watch::Pace(a), opts.quick);
    for p in &plan::ONE_CPU {
        let measure = p.measure;
        run.probe(p.name, p.what, &[a], "ns", move |b| measure(a, b));
    }
    for kib in plan::BACKLOG_KIB {
        run.probe(
            &backlog_probe(kib),
            &format!(
                "a 100-byte AF_UNIX write and read by one thread, round-robin over sockets holding {kib} KiB of skbs (truesize) queued on this CPU"
            ),
            &[a],
            "ns",
            move |b| {
                probes::pin(a)?;
                let p = probes::Backlog::new(kib)?;
                measure::repeat(b, || p.batch(20_000))
            },
        );
    }

    // The host's placement of the nearest pair (not SMT siblings), which
    // the probes across it are held to.
    let near = [1, 2, 3, 0].into_iter().find(|&c| partner[c].is_some());
    if let Some(b) = near.and_then(|c| partner[c]) {
        run.survey(placement::Watch::Line(a, b), opts.quick);
    }

    // Across CPUs, for each distance the machine has.
    for c in 0..4 {
        let Some(b) = partner[c] else {
            let why = if allowed.len() < 2 {
                "only one CPU may be used".to_string()
            } else {
                format!("no CPU pair of {} on this machine", CLASS[c])
            };
            run.skip(&format!("cross-CPU probes, {}", CLASS[c]), &why);
            continue;
        };
        for p in &plan::PER_CLASS {
            let measure = p.measure;
            run.probe(
                &format!("{}_{}", p.prefix, CLASS_KEY[c]),
                &p.what.replace("{class}", CLASS[c]),
                &[a, b],
                "ns",
                move |bud| measure(a, b, bud),
            );
        }
    }

    // The wakeup probes use the nearest pair that is not an SMT sibling
    // (the model has one IPI cost and one idle-exit table).
    let states = sysfs::idle_states(near.and_then(|c| partner[c]).unwrap_or(a));
    let (busy, idle) = match near {
        Some(c) => {
            let b = partner[c].expect("near has a partner");
            wakeup_probes(&mut run, a, b, c, &states)
        }
        None => (None, Vec::new()),
    };

    partner[0].and_then(|sib| {
        run.probe(
            "smt_pair_throughput",
            "integer work on both SMT siblings at once against one alone, in percent of one thread",
            &[a, sib],
            "%",
            move |bud| {
                measure::repeat(bud, || {
                    let solo = probes::compute(&[a], 2_000_000)?;
                    let pair = probes::compute(&[a, sib], 2_000_000)?;
                    Ok(200.0 * solo / pair)
                })
            },
        )
    });

    let llc = bandwidth_probes(&mut run, a, &allowed, &machine);

    let measured = derive::Measured {
        medians: run
            .probes
            .iter()
            .map(|p| (p.name.clone(), p.median))
            .collect(),
        partner: partner.map(|p| p.is_some()),
        near,
        guest: sysfs::is_guest(),
        clock_mhz: sysfs::clock_mhz(a),
        llc_kib: llc,
        skb_slabs: sysfs::skb_slabs_here(),
    };
    let mut costs = HwCosts::default();
    derive::costs(&mut run, &measured, &mut costs);
    let guest = measured.guest;
    check_unix_split(&mut run, a);
    if let Some(c) = near {
        let b = partner[c].expect("a near class has a partner");
        check_remote_messages(&mut run, a, b, c, &costs);
        check_remote_tcp(&mut run, a, b, c, &costs);
    }
    // Idle exits are measured over the quickest wakeup (a busy CPU's, or
    // an idle one's where that is quicker: `ipi_running_extra_ns`).
    let quickest = busy.map(|b| b - costs.ipi_running_extra_ns as f64);
    costs.cstates = cstates(&mut run, &states, &idle, quickest, near);
    for h in &run.holds {
        eprintln!("calibrate: note: {}", h.summary());
    }

    let spec = machine_spec(&opts.name, &machine, guest, costs, run);
    Topology::from_spec(&spec)
        .map_err(|e| format!("the measured machine does not validate: {e}"))?;
    Ok(spec)
}

/// The machine record: the topology read, the costs derived, and the
/// calibration (every probe, cost and skip, with the kernel and CPU model).
fn machine_spec(
    name: &str,
    machine: &sysfs::Machine,
    guest: bool,
    costs: HwCosts,
    run: Run,
) -> MachineSpec {
    let (mut placement, mut pace) = (None, None);
    for h in run.holds {
        match h.watch {
            placement::Watch::Line(..) => placement = Some(h.record),
            placement::Watch::Pace(_) => pace = Some(h.record),
        }
    }
    let layout = machine.layout.clone();
    let ncpus = machine.os_cpus.len();
    let kernel = sysfs::kernel_release();
    let model = sysfs::cpu_model();
    MachineSpec {
        name: name.to_string(),
        description: format!(
            "{}{}: {ncpus} CPUs, measured by schedlab calibrate on Linux {kernel}{}.",
            if model.is_empty() {
                "This machine"
            } else {
                &model
            },
            if guest { " (a virtual machine)" } else { "" },
            if machine
                .os_cpus
                .iter()
                .enumerate()
                .any(|(i, &c)| c as usize != i)
            {
                format!("; CPUs 0..{ncpus} are the OS's {:?}", machine.os_cpus)
            } else {
                String::new()
            }
        ),
        layout,
        distances: machine.distances.clone(),
        costs,
        calibration: Some(Calibration {
            tool: format!("schedlab calibrate {}", env!("CARGO_PKG_VERSION")),
            kernel,
            cpu_model: model,
            topology_source: machine.source.clone(),
            probes: run.probes,
            costs: run.costs,
            skipped: run.skipped,
            placement,
            pace,
        }),
    }
}

/// The wakeup probes on `a` and `b` (distance class `c`): the refill of a
/// working set written on the other CPU, a wakeup of a busy CPU (with the
/// waker's write() apart), and wakeups after each idle gap, with the idle
/// state the target entered. Returns the busy wakeup's latency and, per
/// gap, (gap, latency, the state mostly entered, its share of entries).
fn wakeup_probes(
    run: &mut Run,
    a: u32,
    b: u32,
    c: usize,
    states: &[sysfs::IdleState],
) -> (Option<f64>, Vec<IdleSample>) {
    let mut idle: Vec<IdleSample> = Vec::new();
    let key = CLASS_KEY[c];
    run.probe(
        &format!("refill_{key}"),
        &format!(
            "reading a {} KiB working set just written on {} (one load per line, in order), per line",
            256, CLASS[c]
        ),
        &[a, b],
        "ns",
        move |bud| {
            let r = probes::Refill::new(a, b)?;
            measure::repeat(bud, || r.batch())
        },
    );
    let mut bw = None;
    let busy = run.probe(
        &format!("oneway_busy_{key}"),
        &format!(
            "a pipe write to the blocked reader returning on {}, its CPU busy with a SCHED_IDLE task (wakeup preemption by IPI, no idle exit)",
            CLASS[c]
        ),
        &[a, b],
        "ns",
        |bud| {
            let o = OneWay::new(a, b, Wait::Busy, 20_000)?;
            let mut writes = Vec::new();
            let s = measure::repeat(bud, || {
                let x = o.batch(10)?;
                writes.push(x.write_ns);
                Ok(x.latency_ns)
            })?;
            bw = Some(measure::median(&writes));
            Ok(s)
        },
    );
    if let Some(w) = bw {
        run.probes.push(Probe {
            name: format!("oneway_busy_{key}_write"),
            what: "the writer's write() call in oneway_busy (it wakes the reader)".into(),
            cpus: vec![a],
            unit: "ns".into(),
            median: round2(w),
            spread: 0.0,
            batches: 1,
        });
    }
    for gap in IDLE_GAPS_NS {
        let before = sysfs::idle_usage(b);
        let samples = (2_000_000 / (gap + 20_000)).clamp(3, 50) as usize;
        let lat = run.probe(
            &format!("oneway_idle_{key}_{}us", gap / 1000),
            &format!(
                "a pipe write to the blocked reader returning on {}, its CPU idle for {} us before",
                CLASS[c],
                gap / 1000
            ),
            &[a, b],
            "ns",
            move |bud| {
                let o = OneWay::new(a, b, Wait::Idle, gap)?;
                measure::repeat(bud, || o.batch(samples).map(|x| x.latency_ns))
            },
        );
        let after = sysfs::idle_usage(b);
        // The idle state the target entered most during the probe.
        let entered: Vec<u64> = after
            .iter()
            .zip(before.iter().chain(std::iter::repeat(&0)))
            .map(|(x, y)| x.saturating_sub(*y))
            .collect();
        let total: u64 = entered.iter().sum();
        let dominant = entered
            .iter()
            .enumerate()
            .max_by_key(|(_, n)| **n)
            .filter(|(_, n)| **n > 0)
            .map(|(i, _)| i);
        let share = dominant.map_or(0.0, |i| entered[i] as f64 / total as f64);
        if let Some(i) = dominant {
            let name = states
                .iter()
                .find(|s| s.index == i)
                .map_or("?", |s| s.name.as_str());
            eprintln!(
                "calibrate:      CPU {b} mostly entered {name} ({:.0}% of {total} idle entries)",
                share * 100.0
            );
        }
        if let Some(l) = lat {
            idle.push((gap, l, dominant, share));
        }
    }
    (busy, idle)
}

/// Copy bandwidth per core (in cache and from memory) and per node; the
/// LLC size read on the way (it sizes the node probe's buffers), with
/// where it was read.
fn bandwidth_probes(
    run: &mut Run,
    a: u32,
    allowed: &[u32],
    machine: &sysfs::Machine,
) -> Option<(u64, String)> {
    let d = HwCosts::default();
    run.probe(
        "copy_bw_core_cached",
        "memcpy of 256 KiB in cache by one thread",
        &[a],
        "GB/s",
        move |bud| measure::repeat(bud, || probes::copy_bandwidth(&[a], 256, 40)),
    );
    run.probe(
        "copy_bw_core_memory",
        "memcpy of 32 MiB by one thread",
        &[a],
        "GB/s",
        move |bud| measure::repeat(bud, || probes::copy_bandwidth(&[a], 32_768, 2)),
    );
    // Each node's memory bandwidth: every allowed CPU of the node copying at
    // once, with buffers that together hold twice the LLC so the copies
    // stream from memory (a node probe with a cache-sized buffer measures
    // the cache). Skipped where that would take more than NODE_COPY_MAX_MIB.
    let llc = sysfs::llc_kib(a);
    let llc_kib = llc.as_ref().map_or(d.llc_kib, |(k, _)| *k) as usize;
    let mut nodes: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for &c in allowed {
        nodes.entry(machine.places[&c].node).or_default().push(c);
    }
    for (node, cpus) in &nodes {
        let per_cpu_kib = (2 * llc_kib).div_ceil(cpus.len()).max(32 * 1024);
        // A source and a destination per CPU.
        let total_mib = 2 * per_cpu_kib * cpus.len() / 1024;
        let name = format!("copy_bw_node{node}");
        // At most NODE_COPY_MAX_MIB, and half of what the kernel says is
        // available (an allocation that fails aborts the process).
        let limit =
            sysfs::mem_available_mib().map_or(NODE_COPY_MAX_MIB, |m| NODE_COPY_MAX_MIB.min(m / 2));
        if total_mib > limit {
            run.skip(
                &name,
                &format!("its buffers would take {total_mib} MiB to outsize a {llc_kib} KiB LLC (at most {limit} here)"),
            );
            continue;
        }
        let cpus = cpus.clone();
        run.probe(
            &name,
            &format!(
                "memcpy of {} MiB by each of node {node}'s CPUs at once, summed",
                per_cpu_kib / 1024
            ),
            &cpus.clone(),
            "GB/s",
            move |bud| {
                // Few batches: each one allocates and first touches the buffers.
                let few = Budget {
                    min_batches: bud.min_batches.min(3),
                    max_batches: bud.max_batches.min(5),
                    ..*bud
                };
                measure::repeat(&few, || probes::copy_bandwidth(&cpus, per_cpu_kib, 2))
            },
        );
    }

    llc
}

/// Two probes per channel kind, `{kind}_{write,read}_{suffix}`, each the
/// median call time `calls(kind)` returns as (write, read) per batch:
/// [write, read] for each of `kinds` in order, or None if one did not run.
fn message_call_probes<const N: usize>(
    run: &mut Run,
    kinds: [probes::Channel; N],
    suffix: &str,
    what: impl Fn(&str, &str) -> String,
    cpus: &[u32],
    calls: impl Fn(probes::Channel) -> Result<(f64, f64), String> + Copy + Send,
) -> Option<[[f64; 2]; N]> {
    let mut times = [[0.0; 2]; N];
    for (i, kind) in kinds.into_iter().enumerate() {
        for (j, call) in ["write", "read"].into_iter().enumerate() {
            times[i][j] = run.probe(
                &format!("{}_{call}_{suffix}", kind.name()),
                &what(kind.name(), call),
                cpus,
                "ns",
                move |bud| {
                    measure::repeat(bud, || calls(kind).map(|(w, r)| if j == 0 { w } else { r }))
                },
            )?;
        }
    }
    Some(times)
}

/// Holds the model's split of a unix message's socket work (the reader's
/// share `cost::UNIX_RX_SHARE`) against this machine: 100-byte messages
/// written and read at once on CPU `a`, through a pipe and a unix socket;
/// each unix call's time beyond the pipe's is its side's share. Records
/// the four call times and the reader's measured share as a check; it sets
/// no cost.
fn check_unix_split(run: &mut Run, a: u32) {
    let Some([[pw, pr], [uw, ur]]) =
        local_message_probes(run, [probes::Channel::Pipe, probes::Channel::Unix], a)
    else {
        return;
    };
    let (tx, rx) = (uw - pw, ur - pr);
    if tx + rx <= 0.0 {
        return;
    }
    run.probes.push(Probe {
        name: "unix_rx_share".into(),
        what: format!(
            "(unix_read_local - pipe_read_local) / both calls' extra: the reader's share of a unix message's socket work; the model gives the reader {}%",
            schedlab::cost::UNIX_RX_SHARE * 100 / 1024
        ),
        cpus: vec![a],
        unit: "%".into(),
        median: round2(100.0 * rx / (tx + rx)),
        spread: 0.0,
        batches: 1,
    });
}

/// `{kind}_{write,read}_local`: 100-byte messages written and read at
/// once by one thread on CPU `a` (`probes::local_messages`).
fn local_message_probes<const N: usize>(
    run: &mut Run,
    kinds: [probes::Channel; N],
    a: u32,
) -> Option<[[f64; 2]; N]> {
    message_call_probes(
        run,
        kinds,
        "local",
        |kind, call| {
            format!("a 100-byte {kind} {call}() on CPU {a}, the message written and read at once by one thread")
        },
        &[a],
        move |kind| probes::pin(a).and_then(|_| probes::local_messages(kind, 1000)),
    )
}

/// `{kind}_{write,read}_remote_{k}`: 100-byte messages, one in flight,
/// written on CPU `a` and read on CPU `b` (`probes::remote_messages`).
fn remote_message_probes<const N: usize>(
    run: &mut Run,
    kinds: [probes::Channel; N],
    a: u32,
    b: u32,
    k: &str,
) -> Option<[[f64; 2]; N]> {
    message_call_probes(
        run,
        kinds,
        &format!("remote_{k}"),
        |kind, call| {
            let (on, last) = if call == "write" { (a, b) } else { (b, a) };
            format!("a 100-byte {kind} {call}() on CPU {on} with the channel last used on CPU {last} (one message in flight, no wakeups)")
        },
        &[a, b],
        move |kind| probes::remote_messages(kind, a, b, 1000),
    )
}

/// Records derived checks `(name, ns, what)` as probes `{name}_{k}`.
fn push_checks(run: &mut Run, checks: &[(&str, f64, String)], k: &str, cpus: &[u32]) {
    for (name, v, what) in checks {
        run.probes.push(Probe {
            name: format!("{name}_{k}"),
            what: what.clone(),
            cpus: cpus.to_vec(),
            unit: "ns".into(),
            median: round2(*v),
            spread: 0.0,
            batches: 1,
        });
    }
}

/// Holds the model's cross-CPU message costs against this machine: 100-byte
/// messages, one in flight, from CPU `a` to CPU `b` (distance class `c`)
/// through a pipe and a unix socket (`probes::remote_messages`). Records the
/// four call times and, as derived probes, what the model charges beyond a
/// call on one CPU next to what was measured: the pipe write's state
/// transfer (`transfer_ns`), and a unix message's skb lines
/// (`UNIX_SKB_RX_LINES` / `UNIX_SKB_TX_LINES` x `miss_ns`). Nothing here
/// sets a cost: the checks say how well the counted lines hold.
fn check_remote_messages(run: &mut Run, a: u32, b: u32, c: usize, costs: &HwCosts) {
    let k = CLASS_KEY[c];
    let Some([[pw, pr], [uw, ur]]) =
        remote_message_probes(run, [probes::Channel::Pipe, probes::Channel::Unix], a, b, k)
    else {
        return;
    };
    let unix_half = costs.unix_msg_ns as f64 / 2.0;
    let checks = [
        (
            "state_transfer_write",
            pw - costs.syscall_ns as f64,
            format!("pipe_write_remote - syscall_ns: a pipe write's time beyond one on its own CPU; the model charges transfer_ns[{c}] = {} ns", costs.transfer_ns[c]),
        ),
        (
            "skb_read_extra",
            ur - pr - unix_half,
            format!("unix_read_remote - pipe_read_remote - unix_msg_ns / 2: a unix read's time beyond a pipe's and its socket work; the model charges {} skb lines x miss_ns[{c}] = {} ns", schedlab::cost::UNIX_SKB_RX_LINES, schedlab::cost::UNIX_SKB_RX_LINES * costs.miss_ns[c]),
        ),
        (
            "skb_write_extra",
            uw - pw - unix_half,
            format!("unix_write_remote - pipe_write_remote - unix_msg_ns / 2: the same for the write; the model charges {} lines x miss_ns[{c}] = {} ns", schedlab::cost::UNIX_SKB_TX_LINES, schedlab::cost::UNIX_SKB_TX_LINES * costs.miss_ns[c]),
        ),
    ];
    push_checks(run, &checks, k, &[a, b]);
}

/// Holds the model's cross-CPU loopback TCP costs against this machine:
/// 100-byte messages on CPU `a` alone, then one in flight from `a` to `b`
/// (distance class `c`), as for pipes and unix sockets. Records the four
/// call times and, as derived probes, each call's extra across CPUs next
/// to what the model charges for it: the read its skb
/// (`TCP_SKB_RX_LINES`), the write its own and the reader's socket lines
/// (`TCP_SKB_TX_LINES`), each beside the shared state (`transfer_ns`).
/// Nothing here sets a cost.
fn check_remote_tcp(run: &mut Run, a: u32, b: u32, c: usize, costs: &HwCosts) {
    use schedlab::cost::{TCP_SKB_RX_LINES, TCP_SKB_TX_LINES};
    let tcp = [probes::Channel::Tcp];
    let Some([[lw, lr]]) = local_message_probes(run, tcp, a) else {
        return;
    };
    let k = CLASS_KEY[c];
    let Some([[rw, rr]]) = remote_message_probes(run, tcp, a, b, k) else {
        return;
    };
    let miss = costs.miss_ns[c];
    // 100 bytes are two lines, fetched together (`mlp`).
    let data = 2 * miss / costs.mlp.max(1) as u64;
    let (read_model, write_model) = (
        costs.transfer_ns[c] + data + TCP_SKB_RX_LINES * miss,
        costs.transfer_ns[c] + TCP_SKB_TX_LINES * miss,
    );
    let checks = [
        (
            "tcp_read_extra",
            rr - lr,
            format!("tcp_read_remote - tcp_read_local: a loopback TCP read's time beyond one on its own CPU; the model charges transfer_ns[{c}] + the data's lines + {TCP_SKB_RX_LINES} skb lines x miss_ns[{c}] = {read_model} ns"),
        ),
        (
            "tcp_write_extra",
            rw - lw,
            format!("tcp_write_remote - tcp_write_local: the same for the write, whose receive softirq runs on its CPU; the model charges transfer_ns[{c}] + {TCP_SKB_TX_LINES} socket lines x miss_ns[{c}] = {write_model} ns"),
        ),
    ];
    push_checks(run, &checks, k, &[a, b]);
}

/// The idle-state table: the driver's states (names, declared latency and
/// residency), with the exit latency measured over the `quickest` wakeup
/// for each state the target CPU mostly entered during an idle probe, and
/// the residency corrected where the governor entered a state at other
/// idle lengths than declared.
fn cstates(
    run: &mut Run,
    states: &[sysfs::IdleState],
    idle: &[IdleSample],
    quickest: Option<f64>,
    near: Option<usize>,
) -> Vec<CState> {
    let key = near.map_or("", |c| CLASS_KEY[c]);
    let driver = sysfs::idle_driver().map_or("the idle driver".to_string(), |d| {
        format!("idle driver {d}")
    });
    let excess = |l: f64| quickest.map(|b| l - b);
    let counted = idle.iter().any(|p| p.2.is_some());
    if (states.is_empty() || !counted) && quickest.is_some() && !idle.is_empty() {
        // The kernel does not say which state each idle period used (no
        // idle driver, or usage counters that did not move): one state per
        // idle length probed, entered from about that length on, with the
        // exit measured after it.
        let why = if states.is_empty() {
            "no idle states in sysfs".to_string()
        } else {
            format!("{driver}'s usage counters did not say which state was entered")
        };
        let mut out: Vec<CState> = Vec::new();
        let mut prev_gap = 0;
        for (i, (gap, l, _, _)) in idle.iter().enumerate() {
            let mut how = format!(
                "{why}: oneway_idle_{key}_{}us - the quickest wakeup (oneway_busy_{key} less ipi_running_extra_ns)",
                gap / 1000
            );
            let mut exit = ns(excess(*l).unwrap_or(0.0), &mut how);
            if let Some(last) = out.last() {
                if exit < last.exit_latency_ns {
                    how.push_str(&format!(
                        "; raised from {exit} ns to the shorter idle's {} ns",
                        last.exit_latency_ns
                    ));
                    exit = last.exit_latency_ns;
                }
            }
            let residency = if i == 0 {
                0
            } else {
                ((prev_gap.max(1_000) as f64) * (*gap as f64))
                    .sqrt()
                    .round() as u64
            };
            run.cost(
                &format!("cstates[{i}].exit_latency_ns"),
                exit as f64,
                "measured",
                how,
            );
            run.cost(
                &format!("cstates[{i}].target_residency_ns"),
                residency as f64,
                "measured",
                if i == 0 {
                    "the shortest idle probed".to_string()
                } else {
                    format!(
                        "between the idle lengths probed ({} and {} us), geometric mean",
                        prev_gap / 1000,
                        gap / 1000
                    )
                },
            );
            out.push(CState {
                name: format!("idle {}us", gap / 1000),
                exit_latency_ns: exit,
                target_residency_ns: residency,
                // Measured wakeups include whatever IPI they took.
                polls: false,
            });
            prev_gap = *gap;
        }
        return out;
    }
    let mut out = Vec::new();
    let mut prev_exit = 0;
    for (i, st) in states.iter().enumerate() {
        let mine: Vec<&IdleSample> = idle.iter().filter(|p| p.2 == Some(st.index)).collect();
        let mut exit = st.latency_ns;
        let mut residency = st.residency_ns;
        match (mine.first(), quickest) {
            (Some((gap, l, _, share)), Some(_)) => {
                let mut how = format!(
                    "oneway_idle_{key}_{}us - the quickest wakeup (oneway_busy_{key} less ipi_running_extra_ns; the CPU entered {} in {:.0}% of its idle periods)",
                    gap / 1000,
                    st.name,
                    share * 100.0
                );
                exit = ns(excess(*l).unwrap_or(0.0), &mut how);
                run.cost(
                    &format!("cstates[{i}].exit_latency_ns"),
                    exit as f64,
                    "measured",
                    how,
                );
                // Entered later than declared: a shallower state won at an
                // idle length past this one's residency.
                let below = idle
                    .iter()
                    .filter(|p| p.0 < *gap && p.2.is_some_and(|s| s < st.index))
                    .map(|p| p.0)
                    .max();
                if let Some(lo) = below.filter(|&lo| lo >= st.residency_ns) {
                    residency = ((lo.max(1) as f64) * (*gap as f64)).sqrt().round() as u64;
                    run.cost(
                        &format!("cstates[{i}].target_residency_ns"),
                        residency as f64,
                        "measured",
                        format!(
                            "entered after {} us idle but not after {} us (declared {} us): the geometric mean",
                            gap / 1000,
                            lo / 1000,
                            st.residency_ns / 1000
                        ),
                    );
                } else if *gap < st.residency_ns && i > 0 {
                    residency = *gap;
                    run.cost(
                        &format!("cstates[{i}].target_residency_ns"),
                        residency as f64,
                        "measured",
                        format!(
                            "entered after {} us idle (declared {} us)",
                            gap / 1000,
                            st.residency_ns / 1000
                        ),
                    );
                } else {
                    run.cost(
                        &format!("cstates[{i}].target_residency_ns"),
                        residency as f64,
                        "read",
                        format!("declared by {driver} (sysfs)"),
                    );
                }
            }
            _ => {
                run.cost(
                    &format!("cstates[{i}].exit_latency_ns"),
                    exit as f64,
                    "read",
                    format!(
                        "declared by {driver} (sysfs): no idle probe mostly entered this state"
                    ),
                );
                run.cost(
                    &format!("cstates[{i}].target_residency_ns"),
                    residency as f64,
                    "read",
                    format!("declared by {driver} (sysfs)"),
                );
            }
        }
        if exit < prev_exit {
            let name = format!("cstates[{i}].exit_latency_ns");
            if let Some(c) = run.costs.iter_mut().rev().find(|c| c.cost == name) {
                c.how.push_str(&format!(
                    "; raised from {exit} ns to the shallower state's {prev_exit} ns (deeper states exit no faster)"
                ));
                c.value = prev_exit as f64;
            }
            exit = prev_exit;
        }
        prev_exit = exit;
        out.push(CState {
            name: st.name.clone(),
            exit_latency_ns: exit,
            target_residency_ns: residency,
            // cpuidle's poll state (poll_idle) spins with the idle task
            // marked polling, so a waker's flag write ends it, no IPI; the
            // others' measured exits include whatever IPI they took.
            polls: st.name == POLL_STATE,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// cstates() from the driver's table: cpuidle's POLL state (never
    /// entered by a probe here) is written polling, so a CPU in it is woken
    /// without an IPI; a halt state the probes measured is not (its
    /// measured exit already holds the IPI's time).
    #[test]
    fn the_poll_state_polls_and_a_measured_halt_state_does_not() {
        let mut run = Run::new(measure::Budget::quick());
        let state = |index, name: &str, us: u64| sysfs::IdleState {
            index,
            name: name.into(),
            latency_ns: us * 1000,
            residency_ns: us * 1000,
        };
        let states = [state(0, "POLL", 0), state(1, "haltpoll idle", 1)];
        let idle: Vec<IdleSample> = vec![(50_000, 30_000.0, Some(1), 1.0)];
        let out = cstates(&mut run, &states, &idle, Some(18_000.0), Some(1));
        let polls: Vec<(&str, bool)> = out.iter().map(|c| (c.name.as_str(), c.polls)).collect();
        assert_eq!(polls, [("POLL", true), ("haltpoll idle", false)]);
        assert_eq!(out[1].exit_latency_ns, 12_000);
    }
}

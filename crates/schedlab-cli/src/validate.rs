//! `schedlab validate`: the real scheduler benchmarks that are installed
//! (`perf bench sched pipe` and `messaging` from linux-perf, `hackbench`
//! from rt-tests), each run several times on this machine, beside the same
//! workloads simulated on the calibrated machine with the era nearest the
//! running kernel; and whether each A/B change goes the same way in both.

use crate::calibrate::placement::{self, Watch};
use crate::calibrate::{self, measure};
use crate::exits::{self, ExitCost};
use rayon::prelude::*;
use schedlab::experiment::{self, Experiment};
use schedlab::policy::Era;
use schedlab::topology::{MachineSpec, Topology};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::Command;

pub struct Options {
    pub machine: Option<String>,
    pub runs: usize,
    pub pipe_loops: u64,
    pub loops: u64,
    pub tbench_secs: u64,
    pub groups: Vec<u64>,
    pub era: Option<String>,
    pub quick: bool,
    pub json: bool,
    pub jobs: Option<usize>,
    /// Also write the report as a record (JSON) to this file.
    pub record: Option<String>,
    /// Measure the tools' child exits and simulate them (hackbench and
    /// messaging time their children's exits).
    pub exits: bool,
    /// Count every real run whatever the host's placement of the CPUs
    /// (else runs that began or ended in another than the calibration's
    /// run again and stay out of the median).
    pub any_placement: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Real {
    median: f64,
    spread: f64,
    values: Vec<f64>,
    /// Each run's wakeup IPIs a millisecond (`/proc/interrupts`' CAL and
    /// RES rows over every CPU, by the run's wall time); empty in records
    /// from before they were counted, or where the file is unreadable.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    ipis_per_ms: Vec<f64>,
    /// Each run's host placement: one cache line's transfer between the
    /// calibration's placement pair just before and just after the run, ns
    /// (empty where the machine's calibration surveyed none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    placement_ns: Vec<[f64; 2]>,
    /// For a row pinned to one CPU, instead: that CPU's pace, a bare system
    /// call timed just before and just after the run, ns (empty where the
    /// calibration surveyed none on that CPU).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pace_ns: Vec<[f64; 2]>,
    /// `median` and `spread` are over the runs held to the calibrated
    /// placement or pace only (the others ran again; all are in `values`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    held_only: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Row {
    workload: String,
    command: String,
    unit: String,
    real: Option<Real>,
    /// The median of the simulated runs, one per seed.
    simulated: Option<f64>,
    /// Every simulated run (seeds 1, 2, ...), as many as the real runs;
    /// records from before this was kept have only the median.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    simulated_values: Vec<f64>,
    /// simulated / real median.
    ratio: Option<f64>,
    /// Each simulated run's IPIs a millisecond (counter `ipi.sent` by the
    /// measured time).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    simulated_ipis_per_ms: Vec<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Direction {
    comparison: String,
    real_change_pct: f64,
    simulated_change_pct: f64,
    /// yes (with the size against the real change's when it is under
    /// half or over twice), NO, "noise" (the real change is within the
    /// runs' spread) or "flat" (the simulated change is under 0.1%).
    agree: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Skip {
    tool: String,
    package: String,
    why: String,
}

/// What `validate` found: printed as a table, or kept as a record
/// (`--record`) that names the machine whole, so that anyone can simulate
/// it again, and that the book shows as a table (`--show` prints one).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    kernel: String,
    era: String,
    era_note: String,
    machine: String,
    runs: usize,
    rows: Vec<Row>,
    directions: Vec<Direction>,
    skipped: Vec<Skip>,
    /// The machine simulated (calibrated or given), as its JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    machine_spec: Option<MachineSpec>,
    /// The schedlab that made it.
    #[serde(default)]
    schedlab: String,
    /// The tools' child exits, measured and simulated (none in records
    /// from before they were, or where perf sched record cannot trace).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    exits: Vec<ExitCost>,
}

impl Report {
    /// A record as `--record` wrote it.
    pub fn from_json(text: &str) -> Result<Report, String> {
        serde_json::from_str(text).map_err(|e| format!("not a validate record: {e}"))
    }

    /// The table `validate` prints.
    pub fn text(&self) -> String {
        text(self)
    }
}

/// One workload: the real command and the simulated benchmark.
struct Case {
    name: String,
    tool: &'static str,
    args: Vec<String>,
    pinned: bool,
    unit: &'static str,
    /// The benchmark (its JSON) and, for a pinned run, the affinity variant.
    bench: serde_json::Value,
}

const PERF: (&str, &str) = ("perf", "linux-perf");
const HACKBENCH: (&str, &str) = ("hackbench", "rt-tests");
/// tbench (dbench's), against its server tbench_srv on loopback, which
/// validate starts beside each run.
const TBENCH: (&str, &str) = ("tbench", "dbench");

/// (major, minor, patch) of a release string such as "6.18.44-fc-v857".
fn version(release: &str) -> Option<(u32, u32, u32)> {
    let core = release
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .next()?;
    let mut it = core.split('.').map(|p| p.parse::<u32>().ok());
    Some((it.next()??, it.next()??, it.next().flatten().unwrap_or(0)))
}

/// The newest era at or below the running kernel (the oldest for older
/// kernels), and what to say about the choice.
pub fn era_for(release: &str) -> (Era, String) {
    let eras = [
        (Era::V2_6_27, (2, 6, 27)),
        (Era::V2_6_28, (2, 6, 28)),
        (Era::V4_15, (4, 15, 0)),
        (Era::V6_5, (6, 5, 0)),
        (Era::V6_12, (6, 12, 0)),
    ];
    let Some(v) = version(release) else {
        return (
            Era::CURRENT,
            format!(
                "kernel release {release:?} not understood: simulating {}",
                Era::CURRENT
            ),
        );
    };
    let (era, at) = eras
        .iter()
        .rev()
        .find(|(_, at)| *at <= v)
        .copied()
        .unwrap_or(eras[0]);
    let note = if v > (6, 12, u32::MAX) {
        format!(
            "Linux {}.{} is newer than the newest era modelled: simulating 6.12",
            v.0, v.1
        )
    } else if (v.0, v.1) == (at.0, at.1) && (v.0 != 2 || v.2 == at.2) {
        format!(
            "Linux {}.{}: simulating its own era {}",
            v.0,
            v.1,
            era.name()
        )
    } else if v < at {
        format!(
            "Linux {}.{}.{} is older than every era: simulating {}",
            v.0,
            v.1,
            v.2,
            era.name()
        )
    } else {
        format!(
            "Linux {}.{}: simulating {}, the newest era not newer than it",
            v.0,
            v.1,
            era.name()
        )
    };
    (era, note)
}

fn cases(o: &Options) -> Vec<Case> {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let mut out = Vec::new();
    let pl = o.pipe_loops.to_string();
    for (pinned, label) in [(true, "pinned to one CPU"), (false, "free")] {
        out.push(Case {
            name: format!("perf bench sched pipe, {label}"),
            tool: "perf",
            args: s(&["bench", "sched", "pipe", "-l", &pl]),
            pinned,
            unit: "usecs/op",
            bench: serde_json::json!({"kind": "perf_bench_pipe", "loops": o.pipe_loops}),
        });
    }
    out.push(Case {
        name: "perf bench sched pipe -T (threads), free".into(),
        tool: "perf",
        args: s(&["bench", "sched", "pipe", "-T", "-l", &pl]),
        pinned: false,
        unit: "usecs/op",
        bench: serde_json::json!({"kind": "perf_bench_pipe", "loops": o.pipe_loops, "threaded": true}),
    });
    let l = o.loops.to_string();
    let mid = o.groups[o.groups.len() / 2];
    for &g in &o.groups {
        out.push(hack(g, o.loops, false, false));
    }
    out.push(hack(mid, o.loops, true, false));
    out.push(hack(mid, o.loops, false, true));
    // The smallest group count on one CPU, sockets and pipes: the
    // per-message cost with no placement and no cross-CPU traffic.
    let lo = o.groups[0];
    for pipe in [false, true] {
        let mut c = hack(lo, o.loops, pipe, false);
        c.name = format!(
            "hackbench -g {lo}, {}, pinned to one CPU",
            if pipe { "pipes" } else { "sockets" }
        );
        c.pinned = true;
        out.push(c);
    }
    for (pipe, threads) in [(false, false), (true, false), (false, true)] {
        let mut args = s(&[
            "bench",
            "sched",
            "messaging",
            "-g",
            &mid.to_string(),
            "-l",
            &l,
        ]);
        if pipe {
            args.push("-p".into());
        }
        if threads {
            args.push("-t".into());
        }
        out.push(Case {
            name: format!(
                "perf bench sched messaging -g {mid}, {}, {}",
                if pipe { "pipes" } else { "sockets" },
                if threads { "threads" } else { "processes" }
            ),
            tool: "perf",
            args,
            pinned: false,
            unit: "s",
            bench: serde_json::json!({"kind": "hackbench", "groups": mid, "loops": o.loops, "pipe": pipe, "threads": threads}),
        });
    }
    // tbench: one client and its server on one CPU, then free, then two
    // clients (their servers forked by tbench_srv's listener), free and
    // both pairs on one CPU: what two pairs taking turns on a CPU cost
    // each other, with no placement and no cross-CPU traffic.
    let secs = o.tbench_secs.to_string();
    for (clients, pinned) in [(1, true), (1, false), (2, false), (2, true)] {
        out.push(Case {
            name: format!(
                "tbench {clients} client{}, {}",
                if clients == 1 { "" } else { "s" },
                if pinned { "pinned to one CPU" } else { "free" }
            ),
            tool: "tbench",
            args: s(&["-t", &secs, &clients.to_string(), "127.0.0.1"]),
            pinned,
            unit: "MB/sec",
            bench: serde_json::json!({"kind": "tbench", "clients": clients, "duration_ms": 300, "warmup_ms": 50}),
        });
    }
    out
}

fn hack(g: u64, loops: u64, pipe: bool, threads: bool) -> Case {
    let mut args = vec![
        "-g".to_string(),
        g.to_string(),
        "-l".into(),
        loops.to_string(),
    ];
    if pipe {
        args.push("-p".into());
    }
    if threads {
        args.push("-T".into());
    }
    Case {
        name: format!(
            "hackbench -g {g}, {}, {}",
            if pipe { "pipes" } else { "sockets" },
            if threads { "threads" } else { "processes" }
        ),
        tool: "hackbench",
        args,
        pinned: false,
        unit: "s",
        bench: serde_json::json!({"kind": "hackbench", "groups": g, "loops": loops, "pipe": pipe, "threads": threads}),
    }
}

/// Each tool's and mode's child exit (hackbench or perf bench sched
/// messaging, processes or threads), traced once at one group and one
/// loop, set on every case that runs it. A probe that fails is said on
/// stderr and leaves its cases without exits.
fn measure_exits(cases: &mut [Case], usable: &[&str]) -> Vec<ExitCost> {
    let mut found = Vec::new();
    for (tool, comm, base) in [
        ("hackbench", "hackbench", &["-g", "1", "-l", "1"][..]),
        (
            "perf",
            "sched-messaging",
            &["bench", "sched", "messaging", "-g", "1", "-l", "1"][..],
        ),
    ] {
        if !usable.contains(&tool) {
            continue;
        }
        for threads in [false, true] {
            let mut args = base.to_vec();
            if threads {
                args.push(if tool == "perf" { "-t" } else { "-T" });
            }
            let cost = match exits::measure(tool, &args, comm) {
                Ok(cost) => cost,
                Err(e) => {
                    eprintln!("validate: not simulating {tool}'s exits: {e}");
                    continue;
                }
            };
            eprintln!(
                "validate: {}: a child's exit takes {} us (median of {})",
                cost.command, cost.exit_us, cost.children
            );
            set_exits(cases, tool, threads, cost.exit_us);
            found.push(cost);
        }
    }
    found
}

/// Every case of hackbench's shape that `tool` runs (hackbench itself, or
/// perf's messaging), in processes or threads, simulates its children's
/// exits at `exit_us`.
fn set_exits(cases: &mut [Case], tool: &str, threads: bool, exit_us: u64) {
    for c in cases.iter_mut() {
        if c.tool == tool && c.bench["kind"] == "hackbench" && c.bench["threads"] == threads {
            c.bench["exit_us"] = exit_us.into();
        }
    }
}

/// The number a tool prints: usecs/op for perf's pipe, MB/sec for tbench,
/// seconds otherwise.
fn parse(tool: &str, args: &[String], out: &str) -> Option<f64> {
    let num = |s: &str| s.split_whitespace().find_map(|w| w.parse::<f64>().ok());
    if tool == "perf" && args.get(2).map(String::as_str) == Some("pipe") {
        out.lines().find(|l| l.contains("usecs/op")).and_then(num)
    } else if tool == "perf" {
        out.lines()
            .find(|l| l.contains("Total time:"))
            .and_then(|l| num(l.split_once(':')?.1))
    } else if tool == "tbench" {
        out.lines()
            .rev()
            .find_map(|l| l.trim_start().strip_prefix("Throughput"))
            .and_then(num)
    } else {
        out.lines()
            .find(|l| l.starts_with("Time:"))
            .and_then(|l| num(l.split_once(':')?.1))
    }
}

/// Returns the tool's number and the wakeup IPIs a millisecond while it
/// ran (None where /proc/interrupts cannot be read); a tbench server's
/// start is outside that window.
fn run_tool(tool: &str, args: &[String], pin: Option<u32>) -> Result<(f64, Option<f64>), String> {
    let _server = if tool == "tbench" {
        Some(TbenchServer::start(pin)?)
    } else {
        None
    };
    let mut cmd = Command::new(tool);
    cmd.args(args);
    pin_command(&mut cmd, pin);
    let before = wakeup_ipis();
    let start = std::time::Instant::now();
    let out = cmd.output().map_err(|e| e.to_string())?;
    let ms = start.elapsed().as_secs_f64() * 1e3;
    let ipis_per_ms = match (before, wakeup_ipis()) {
        (Some(a), Some(b)) => Some(b.saturating_sub(a) as f64 / ms),
        _ => None,
    };
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let line = err
            .lines()
            .chain(text.lines())
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        return Err(format!(
            "{tool} {} failed ({}): {line}",
            args.join(" "),
            out.status
        ));
    }
    let value = parse(tool, args, &text)
        .ok_or_else(|| format!("{tool} {}: no result in its output", args.join(" ")))?;
    Ok((value, ipis_per_ms))
}

/// What a row's real runs are held to: the calibration's placement of its
/// pair (rows across CPUs) or its pace on the CPU a pinned row runs on, and
/// that survey's reference, ns.
#[derive(Debug, Clone, Copy)]
struct Held {
    watch: Watch,
    reference: f64,
}

/// A row's real runs split by the samples around each: those whose sample
/// before and after was the calibration's (`reference` ns), and the others.
fn split_held(real: &Real, reference: f64) -> (Vec<f64>, Vec<f64>) {
    let mut held = Vec::new();
    let mut other = Vec::new();
    for (v, [x, y]) in real.values.iter().zip(real.watched_ns()) {
        if placement::within(reference, *x) && placement::within(reference, *y) {
            held.push(*v);
        } else {
            other.push(*v);
        }
    }
    (held, other)
}

/// The real runs by host placement, for the rows whose runs were watched
/// across CPUs, and by pace, for the rows pinned to one CPU.
fn placement_table(r: &Report) -> String {
    let Some(cal) = r.machine_spec.as_ref().and_then(|m| m.calibration.as_ref()) else {
        return String::new();
    };
    let mut out = String::new();
    if let Some(p) = &cal.placement {
        let title = format!(
            "real runs by host placement (CPUs {}-{} line {:.0} ns)",
            p.cpus[0], p.cpus[1], p.reference_ns
        );
        out.push_str(&held_table(r, &title, p.reference_ns, |real| {
            real.pace_ns.is_empty() && !real.placement_ns.is_empty()
        }));
    }
    if let Some(p) = &cal.pace {
        let title = format!(
            "real runs by pace (CPU {} system call {:.0} ns)",
            p.cpus[0], p.reference_ns
        );
        out.push_str(&held_table(r, &title, p.reference_ns, |real| {
            !real.pace_ns.is_empty()
        }));
    }
    out
}

/// The rows whose real runs were all watched off the calibration's
/// placement (across CPUs) or pace (pinned).
fn never_held(r: &Report) -> Vec<&str> {
    let Some(cal) = r.machine_spec.as_ref().and_then(|m| m.calibration.as_ref()) else {
        return Vec::new();
    };
    r.rows
        .iter()
        .filter(|row| row.ratio.is_some())
        .filter_map(|row| {
            let real = row.real.as_ref()?;
            let survey = if real.pace_ns.is_empty() {
                cal.placement.as_ref()
            } else {
                cal.pace.as_ref()
            };
            let reference = survey?.reference_ns;
            let none = !real.watched_ns().is_empty() && split_held(real, reference).0.is_empty();
            none.then_some(row.workload.as_str())
        })
        .collect()
}

/// The rows whose real runs `watched`, split by their samples against
/// `reference`.
fn held_table(r: &Report, title: &str, reference: f64, watched: fn(&Real) -> bool) -> String {
    let watched: Vec<(&Row, &Real)> = r
        .rows
        .iter()
        .filter_map(|row| Some((row, row.real.as_ref()?)))
        .filter(|(_, real)| watched(real))
        .collect();
    if watched.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "\n{title:<50} {:>16} {:>16}\n",
        "at it: median", "moved: median"
    );
    let cell = |v: &[f64], n: usize| {
        if v.is_empty() {
            format!("0 of {n}")
        } else {
            format!("{} of {n}: {:.4}", v.len(), measure::median(v))
        }
    };
    for (row, real) in watched {
        let (held, other) = split_held(real, reference);
        let n = real.values.len();
        out.push_str(&format!(
            "{:<50} {:>16} {:>16}\n",
            row.workload,
            cell(&held, n),
            cell(&other, n)
        ));
    }
    out
}

/// Tries of a real benchmark, as a multiple of `--runs`, while its runs
/// are held to the calibrated placement.
const HOLD_TRIES: usize = 3;

/// The real runs of case `c`: `o.runs` of them, or, where the calibration
/// surveyed the placement or pace the row is watched by (`watch`) and
/// `--any-placement` is not given, until `o.runs` began and ended in it
/// (at most HOLD_TRIES times as many tries). None if the tool failed at
/// once.
fn real_runs(
    c: &Case,
    command: &str,
    o: &Options,
    watch: Option<Held>,
    pin: Option<u32>,
) -> Option<Real> {
    let hold = watch.filter(|_| !o.any_placement);
    let tries = if hold.is_some() {
        o.runs * HOLD_TRIES
    } else {
        o.runs
    };
    let mut err = std::io::stderr();
    let _ = write!(err, "validate: {command} x{} ", o.runs);
    let (mut values, mut ipis_per_ms, mut samples) = (Vec::new(), Vec::new(), Vec::new());
    let mut held = 0;
    for _ in 0..tries {
        if held == o.runs || (hold.is_none() && values.len() == o.runs) {
            break;
        }
        let before = watch.map(|h| h.watch.sample());
        let run = run_tool(c.tool, &c.args, pin);
        let after = watch.map(|h| h.watch.sample());
        let (v, ipis) = match run {
            Ok(r) => r,
            Err(e) => {
                let _ = writeln!(err, " {e}");
                break;
            }
        };
        values.push(v);
        ipis_per_ms.extend(ipis);
        if let (Some(Ok(x)), Some(Ok(y))) = (before, after) {
            samples.push([x, y]);
            if hold.is_some_and(|h| {
                placement::within(h.reference, x) && placement::within(h.reference, y)
            }) {
                held += 1;
            }
        }
        let _ = write!(err, ".");
        let _ = err.flush();
    }
    let _ = writeln!(err);
    (!values.is_empty()).then(|| {
        let watched = watch.map(|h| (h.watch, samples));
        Real::from_runs(values, ipis_per_ms, watched, hold.map(|h| h.reference))
    })
}

impl Real {
    /// The samples taken around each run: the pace's or the placement's.
    fn watched_ns(&self) -> &[[f64; 2]] {
        if self.pace_ns.is_empty() {
            &self.placement_ns
        } else {
            &self.pace_ns
        }
    }

    /// The runs' summary: over the runs held to the placement or pace
    /// whose sample is `reference` when given and any were, else over all.
    /// `watched` is what was sampled around each run, and the samples.
    /// Counts that do not cover every run are dropped (they would
    /// misalign the rest).
    fn from_runs(
        values: Vec<f64>,
        ipis_per_ms: Vec<f64>,
        watched: Option<(Watch, Vec<[f64; 2]>)>,
        reference: Option<f64>,
    ) -> Real {
        let ipis_per_ms = if ipis_per_ms.len() == values.len() {
            ipis_per_ms
        } else {
            Vec::new()
        };
        let (mut placement_ns, mut pace_ns) = (Vec::new(), Vec::new());
        match watched {
            Some((w, samples)) if samples.len() == values.len() => match w {
                Watch::Line(..) => placement_ns = samples,
                Watch::Pace(_) => pace_ns = samples,
            },
            _ => {}
        }
        let mut real = Real {
            median: 0.0,
            spread: 0.0,
            values,
            ipis_per_ms,
            placement_ns,
            pace_ns,
            held_only: false,
        };
        let held = reference.map_or_else(Vec::new, |r| split_held(&real, r).0);
        real.held_only = !held.is_empty();
        let s = measure::summarise(if real.held_only { &held } else { &real.values });
        real.median = s.median;
        real.spread = s.spread;
        real
    }
}

/// The calibration's placement pair and its reference transfer (ns), if it
/// surveyed one and this process may run on both CPUs.
fn placement_watch(spec: &MachineSpec) -> Option<Held> {
    let p = spec.calibration.as_ref()?.placement.as_ref()?;
    let allowed = calibrate::probes::allowed_cpus();
    match p.cpus[..] {
        [a, b] if allowed.contains(&a) && allowed.contains(&b) => Some(Held {
            watch: Watch::Line(a, b),
            reference: p.reference_ns,
        }),
        _ => None,
    }
}

/// The calibration's pace of `cpu` (a bare system call, ns), if it
/// surveyed that CPU's: what the rows pinned to it are held to.
fn pace_watch(spec: &MachineSpec, cpu: u32) -> Option<Held> {
    let p = spec.calibration.as_ref()?.pace.as_ref()?;
    (p.cpus == [cpu]).then_some(Held {
        watch: Watch::Pace(cpu),
        reference: p.reference_ns,
    })
}

/// The wakeup IPIs every CPU has taken since boot: /proc/interrupts'
/// function-call (CAL: a remote wakeup queued on the target's wake list)
/// and rescheduling (RES) rows. None where the file cannot be read.
fn wakeup_ipis() -> Option<u64> {
    std::fs::read_to_string("/proc/interrupts")
        .ok()
        .map(|t| count_wakeup_ipis(&t))
}

/// The CAL and RES rows of a /proc/interrupts text, every CPU's column summed.
fn count_wakeup_ipis(text: &str) -> u64 {
    text.lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let name = words.next()?;
            matches!(name, "CAL:" | "RES:")
                .then(|| words.map_while(|w| w.parse::<u64>().ok()).sum::<u64>())
        })
        .sum()
}

/// Runs `cmd` on CPU `pin` only, when given.
fn pin_command(cmd: &mut Command, pin: Option<u32>) {
    if let Some(cpu) = pin {
        // SAFETY: between fork and exec only sched_setaffinity runs, on a
        // stack-allocated set: no allocation, no locks.
        unsafe {
            cmd.pre_exec(move || {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(cpu as usize, &mut set);
                if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
}

/// The port tbench_srv listens on and tbench connects to (dbench's
/// TCP_PORT; neither takes another).
const TBENCH_PORT: u16 = 7003;

/// Whether a listener holds `port` now (this process cannot bind it).
fn port_taken(port: u16) -> bool {
    std::net::TcpListener::bind(("0.0.0.0", port)).is_err()
}

/// tbench_srv, listening on loopback while a tbench run lasts, in a process
/// group of its own: ended when dropped with every process it forked. A
/// listener left behind (a server child that outlives the run, or a
/// tbench_srv started by hand) would take the next runs' connections, and
/// its children would not be pinned with the pinned row's client.
struct TbenchServer(std::process::Child);

impl TbenchServer {
    fn start(pin: Option<u32>) -> Result<TbenchServer, String> {
        // The last run's processes may take a moment to release the port.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while port_taken(TBENCH_PORT) {
            if std::time::Instant::now() >= deadline {
                return Err(format!(
                    "port {TBENCH_PORT} is taken: another tbench_srv (or another program) listens there, and would serve these runs in place of the one started here; stop it first"
                ));
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let mut cmd = Command::new("tbench_srv");
        cmd.stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .process_group(0);
        pin_command(&mut cmd, pin);
        let mut child = cmd.spawn().map_err(|e| format!("tbench_srv: {e}"))?;
        // Time to bind and listen before the clients connect.
        std::thread::sleep(std::time::Duration::from_millis(300));
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!(
                "tbench_srv exited at once ({status}): could it not listen on port {TBENCH_PORT}?"
            ));
        }
        Ok(TbenchServer(child))
    }
}

impl Drop for TbenchServer {
    fn drop(&mut self) {
        // The group is the listener's pid (process_group(0)).
        // SAFETY: killpg with a pid this process spawned and has not reaped.
        unsafe {
            libc::killpg(self.0.id() as libc::pid_t, libc::SIGKILL);
        }
        let _ = self.0.wait();
    }
}

/// Whether a tool runs here; the reason if not.
fn check_tool(tool: &str) -> Result<(), String> {
    let args: &[&str] = match tool {
        "perf" => &["bench", "sched", "pipe", "-l", "10"],
        "tbench" => &["-t", "1", "1", "127.0.0.1"],
        _ => &["-g", "1", "-l", "1"],
    };
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    match run_tool(tool, &args, None) {
        Ok(_) => Ok(()),
        Err(e) if e.contains("No such file") || e.contains("not found") => {
            Err(format!("{tool} is not installed"))
        }
        Err(e) => Err(e),
    }
}

fn load_machine(o: &Options) -> Result<(MachineSpec, String), String> {
    match &o.machine {
        Some(path) => {
            let spec: MachineSpec =
                crate::machine_arg::read_json(schedlab::error::Concern::Machine, path)
                    .map_err(|e| e.to_string())?;
            Topology::from_spec(&spec).map_err(|e| format!("{path}: {e}"))?;
            Ok((spec, path.clone()))
        }
        None => {
            eprintln!("validate: no machine given: calibrating this one first");
            let spec = calibrate::calibrate(&calibrate::Options {
                name: "calibrated".into(),
                quick: o.quick,
            })?;
            Ok((spec, "calibrated now".into()))
        }
    }
}

pub fn run(o: &Options) -> Result<String, String> {
    if o.runs == 0 || o.groups.is_empty() {
        return Err("--runs must be at least 1 and --groups must list at least one count".into());
    }
    let release = calibrate::sysfs::kernel_release();
    let (era, era_note) = match &o.era {
        Some(e) => (
            e.parse::<Era>().map_err(|e| e.to_string())?,
            format!("era {e} chosen with --era (the kernel is {release})"),
        ),
        None => era_for(&release),
    };
    let (spec, from) = load_machine(o)?;
    let topo = Topology::from_spec(&spec).map_err(|e| e.to_string())?;
    let pin_cpu = crate::calibrate::probes::allowed_cpus()
        .first()
        .copied()
        .unwrap_or(0);
    let mut skipped = Vec::new();
    let mut usable = Vec::new();
    for (tool, package) in [PERF, HACKBENCH, TBENCH] {
        match check_tool(tool) {
            Ok(()) => usable.push(tool),
            Err(why) => {
                eprintln!("validate: skipping {tool}: {why} (Debian package {package})");
                skipped.push(Skip {
                    tool: tool.into(),
                    package: package.into(),
                    why,
                });
            }
        }
    }
    let mut cases = cases(o);
    let exits = if o.exits && usable.contains(&"perf") {
        measure_exits(&mut cases, &usable)
    } else {
        Vec::new()
    };

    // The simulations, in parallel.
    let mut exps = Vec::new();
    for c in &cases {
        let mut variant = serde_json::json!({"label": "sim"});
        if c.pinned {
            variant["workload"] = serde_json::json!({"affinity": "0"});
        }
        // As many seeds as real runs: on a small machine a run can tip one
        // way or the other (hackbench's groups settle on a CPU each or stay
        // mixed), so one seed is one sample, as one real run is.
        let exp: Experiment = serde_json::from_value(serde_json::json!({
            "version": 1,
            "name": c.name,
            "machine": spec,
            "policy": {"era": era.name()},
            "variants": [variant],
            "workload": c.bench,
            "seed": 1,
            "repeats": o.runs,
        }))
        .map_err(|e| format!("{}: {e}", c.name))?;
        exp.validate().map_err(|e| format!("{}: {e}", c.name))?;
        exps.push(exp);
    }
    eprintln!(
        "validate: simulating {} workloads on {} with era {}",
        exps.len(),
        topo.summary(),
        era.name()
    );
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(o.jobs.unwrap_or(0))
        .build()
        .map_err(|e| format!("--jobs: {e}"))?;
    let points: Vec<(usize, experiment::Point)> = exps
        .iter()
        .enumerate()
        .map(|(i, exp)| Ok(exp.points()?.into_iter().map(move |p| (i, p))))
        .collect::<Result<Vec<_>, schedlab::error::Error>>()
        .map_err(|e| e.to_string())?
        .into_iter()
        .flatten()
        .collect();
    let outcomes: Vec<Result<(usize, f64, f64), String>> = pool.install(|| {
        points
            .par_iter()
            .map(|(i, p)| {
                let out = experiment::run_point(p, &mut |_| true).map_err(|e| e.to_string())?;
                let t = &out.cpu_time;
                let ms = (t.busy_ns + t.idle_ns + t.overhead_ns) as f64
                    / p.topology.ncpus() as f64
                    / 1e6;
                let ipis = out.counters.get("ipi.sent").copied().unwrap_or(0) as f64;
                Ok((*i, out.value, if ms > 0.0 { ipis / ms } else { 0.0 }))
            })
            .collect()
    });
    let mut sims = vec![(Vec::new(), Vec::new()); exps.len()];
    for outcome in outcomes {
        let (i, v, ipis) = outcome?;
        sims[i].0.push(v);
        sims[i].1.push(ipis);
    }

    // The real tools, one run at a time, each with the host's placement
    // (or, pinned to one CPU, that CPU's pace) sampled around it where the
    // calibration surveyed one.
    let across = placement_watch(&spec);
    let pinned = pace_watch(&spec, pin_cpu);
    let mut rows = Vec::new();
    for (c, (simulated_values, simulated_ipis_per_ms)) in cases.iter().zip(sims) {
        let sim = measure::median(&simulated_values);
        let taskset = if c.pinned {
            format!("taskset -c {pin_cpu} ")
        } else {
            String::new()
        };
        let server = if c.tool == "tbench" {
            format!("{taskset}tbench_srv & ")
        } else {
            String::new()
        };
        let command = format!("{server}{taskset}{} {}", c.tool, c.args.join(" "));
        let real = if usable.contains(&c.tool) {
            let pin = c.pinned.then_some(pin_cpu);
            let watch = if c.pinned { pinned } else { across };
            real_runs(c, &command, o, watch, pin)
        } else {
            None
        };
        rows.push(Row {
            workload: c.name.clone(),
            command,
            unit: c.unit.into(),
            ratio: real.as_ref().map(|r| sim / r.median),
            real,
            simulated: Some(sim),
            simulated_values,
            simulated_ipis_per_ms,
        });
    }
    let directions = directions(&rows, o);
    let report = Report {
        kernel: release,
        era: era.name().into(),
        era_note,
        machine: format!("{} ({from})", topo.summary()),
        runs: o.runs,
        rows,
        directions,
        skipped,
        machine_spec: Some(spec),
        schedlab: format!("schedlab {}", env!("CARGO_PKG_VERSION")),
        exits,
    };
    if let Some(path) = &o.record {
        let json = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())? + "\n";
        std::fs::write(path, json).map_err(|e| format!("--record {path}: {e}"))?;
        eprintln!("validate: the record is in {path}");
    }
    Ok(if o.json {
        serde_json::to_string_pretty(&report).map_err(|e| e.to_string())? + "\n"
    } else {
        text(&report)
    })
}

/// A/B pairs: (what, row A, row B).
fn pairs(o: &Options) -> Vec<(String, String, String)> {
    let mid = o.groups[o.groups.len() / 2];
    let (lo, hi) = (o.groups[0], o.groups[o.groups.len() - 1]);
    let mut v = vec![
        (
            "perf pipe: free against pinned".to_string(),
            "perf bench sched pipe, pinned to one CPU".to_string(),
            "perf bench sched pipe, free".to_string(),
        ),
        (
            "perf pipe, free: threads against processes".to_string(),
            "perf bench sched pipe, free".to_string(),
            "perf bench sched pipe -T (threads), free".to_string(),
        ),
        (
            format!("hackbench -g {mid}: pipes against sockets"),
            format!("hackbench -g {mid}, sockets, processes"),
            format!("hackbench -g {mid}, pipes, processes"),
        ),
        (
            format!("hackbench -g {mid}: threads against processes"),
            format!("hackbench -g {mid}, sockets, processes"),
            format!("hackbench -g {mid}, sockets, threads"),
        ),
        (
            format!("messaging -g {mid}: pipes against sockets"),
            format!("perf bench sched messaging -g {mid}, sockets, processes"),
            format!("perf bench sched messaging -g {mid}, pipes, processes"),
        ),
        (
            format!("messaging -g {mid}: threads against processes"),
            format!("perf bench sched messaging -g {mid}, sockets, processes"),
            format!("perf bench sched messaging -g {mid}, sockets, threads"),
        ),
    ];
    v.push((
        format!("hackbench -g {lo}: free against pinned"),
        format!("hackbench -g {lo}, sockets, pinned to one CPU"),
        format!("hackbench -g {lo}, sockets, processes"),
    ));
    v.push((
        "tbench 1 client: free against pinned".to_string(),
        "tbench 1 client, pinned to one CPU".to_string(),
        "tbench 1 client, free".to_string(),
    ));
    v.push((
        "tbench: 2 clients against 1".to_string(),
        "tbench 1 client, free".to_string(),
        "tbench 2 clients, free".to_string(),
    ));
    v.push((
        "tbench pinned: 2 clients against 1".to_string(),
        "tbench 1 client, pinned to one CPU".to_string(),
        "tbench 2 clients, pinned to one CPU".to_string(),
    ));
    if hi != lo {
        v.push((
            format!("hackbench: {hi} groups against {lo}"),
            format!("hackbench -g {lo}, sockets, processes"),
            format!("hackbench -g {hi}, sockets, processes"),
        ));
    }
    v
}

fn directions(rows: &[Row], o: &Options) -> Vec<Direction> {
    let find = |name: &str| rows.iter().find(|r| r.workload == name);
    let mut out = Vec::new();
    for (what, a, b) in pairs(o) {
        let (Some(a), Some(b)) = (find(&a), find(&b)) else {
            continue;
        };
        let (Some(ra), Some(rb), Some(sa), Some(sb)) = (&a.real, &b.real, a.simulated, b.simulated)
        else {
            continue;
        };
        let real = (rb.median - ra.median) / ra.median * 100.0;
        let sim = (sb - sa) / sa * 100.0;
        let noise = (rb.median - ra.median).abs() <= ra.spread + rb.spread;
        let agree = if noise {
            "noise".to_string()
        } else if sim.abs() < 0.1 {
            "flat (the simulation does not separate them)".to_string()
        } else if (real > 0.0) == (sim > 0.0) {
            same_direction(real, sim)
        } else {
            "NO".to_string()
        };
        out.push(Direction {
            comparison: what,
            real_change_pct: real,
            simulated_change_pct: sim,
            agree,
        });
    }
    out
}

/// The verdict on a change that goes the real way, with its size where
/// the simulated change is under half or over twice the real one: a
/// change at a fiftieth of the real size goes the real way but does not
/// show the mechanism.
fn same_direction(real_pct: f64, sim_pct: f64) -> String {
    let size = sim_pct.abs() / real_pct.abs();
    if size < 0.5 {
        format!("yes, at {:.0}% of the real size", size * 100.0)
    } else if size > 2.0 {
        format!("yes, at {size:.1}x the real size")
    } else {
        "yes".to_string()
    }
}

/// A simulated figure within a third of the real one: at least 3/4 of it
/// and at most 4/3.
const WITHIN_A_THIRD: (f64, f64) = (0.75, 1.33);

fn text(r: &Report) -> String {
    let seeds = if r.rows.iter().any(|row| !row.simulated_values.is_empty()) {
        "; simulated: the same over as many seeds"
    } else {
        ""
    };
    let reals = || r.rows.iter().filter_map(|row| row.real.as_ref());
    let held = if reals().any(|x| x.held_only) {
        // Records from before the pace held every row to the placement.
        let (paced, off, tables) = if reals().any(|x| !x.pace_ns.is_empty()) {
            (
                ", or pinned at the calibrated pace",
                "off it",
                "tables below",
            )
        } else {
            ("", "in another", "placement table")
        };
        format!(
            " in the calibrated placement{paced} (a run that began or ended {off} ran again, up to {HOLD_TRIES}x; all runs are in the {tables})"
        )
    } else {
        String::new()
    };
    let mut out = format!(
        "kernel {} -> era {}: {}\nmachine: {}\nreal: median ± half the interquartile range of {} runs{held}{seeds}\n\n",
        r.kernel, r.era, r.era_note, r.machine, r.runs
    );
    out.push_str(&format!(
        "{:<50} {:>9} {:>20} {:>20} {:>8}\n",
        "workload", "unit", "real", "simulated", "sim/real"
    ));
    for row in &r.rows {
        let real = row.real.as_ref().map_or("not run".to_string(), |x| {
            format!("{:.4} ± {:.4}", x.median, x.spread)
        });
        let sim = match (row.simulated, row.simulated_values.len()) {
            (None, _) => "-".into(),
            (Some(v), 0) => format!("{v:.4}"),
            (Some(v), _) => format!(
                "{v:.4} ± {:.4}",
                measure::summarise(&row.simulated_values).spread
            ),
        };
        let ratio = row.ratio.map_or("-".into(), |v| format!("{v:.2}"));
        out.push_str(&format!(
            "{:<50} {:>9} {:>20} {:>20} {:>8}\n",
            row.workload, row.unit, real, sim, ratio
        ));
    }
    let ratios: Vec<f64> = r.rows.iter().filter_map(|row| row.ratio).collect();
    if !ratios.is_empty() {
        let (lo, hi) = WITHIN_A_THIRD;
        let within = ratios.iter().filter(|&&x| (lo..=hi).contains(&x)).count();
        out.push_str(&format!(
            "{within} of {} rows within a third of real (sim/real {lo}..{hi})\n",
            ratios.len()
        ));
        let off = never_held(r);
        if !off.is_empty() {
            out.push_str(&format!(
                "{} of them had no real run in the calibrated placement or pace ({}): the host moved or slowed these CPUs after the calibration, so their real column is not of the machine simulated; calibrate again and validate that machine to compare them\n",
                off.len(),
                off.join("; ")
            ));
        }
    }
    if !r.exits.is_empty() {
        out.push_str(&format!(
            "\n{:<50} {:>10}\n",
            "a child's exit, simulated (perf sched record)", "us"
        ));
        for e in &r.exits {
            out.push_str(&format!(
                "{:<50} {:>10}\n",
                format!("{} ({} children)", e.command, e.children),
                e.exit_us
            ));
        }
    }
    let with_ipis: Vec<&Row> = r
        .rows
        .iter()
        .filter(|row| {
            row.real.as_ref().is_some_and(|x| !x.ipis_per_ms.is_empty())
                && !row.simulated_ipis_per_ms.is_empty()
        })
        .collect();
    if !with_ipis.is_empty() {
        out.push_str(&format!(
            "\n{:<50} {:>10} {:>10}\n",
            "wakeup IPIs a millisecond (CAL + RES; ipi.sent)", "real", "simulated"
        ));
        for row in with_ipis {
            let real = row
                .real
                .as_ref()
                .map_or(0.0, |x| measure::median(&x.ipis_per_ms));
            out.push_str(&format!(
                "{:<50} {:>10.1} {:>10.1}\n",
                row.workload,
                real,
                measure::median(&row.simulated_ipis_per_ms)
            ));
        }
    }
    out.push_str(&placement_table(r));
    if !r.directions.is_empty() {
        out.push_str(&format!(
            "\n{:<50} {:>10} {:>10}  {}\n",
            "A/B change (B against A)", "real", "simulated", "same direction"
        ));
        // Records from before the size was judged say a bare "yes".
        let verdicts: Vec<String> = r
            .directions
            .iter()
            .map(|d| {
                if d.agree == "yes" {
                    same_direction(d.real_change_pct, d.simulated_change_pct)
                } else {
                    d.agree.clone()
                }
            })
            .collect();
        for (d, agree) in r.directions.iter().zip(&verdicts) {
            out.push_str(&format!(
                "{:<50} {:>+9.1}% {:>+9.1}%  {}\n",
                d.comparison, d.real_change_pct, d.simulated_change_pct, agree
            ));
        }
        let count = |a: &str| verdicts.iter().filter(|v| v.starts_with(a)).count();
        out.push_str(&format!(
            "{} of {} changes go the real way ({} of them at half to twice its size), {} the other, {} within the real runs' noise, {} not separated\n",
            count("yes"),
            r.directions.len(),
            verdicts.iter().filter(|v| *v == "yes").count(),
            count("NO"),
            count("noise"),
            count("flat")
        ));
    }
    for s in &r.skipped {
        out.push_str(&format!(
            "\nskipped {}: {} (install the Debian package {})\n",
            s.tool, s.why, s.package
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_era_is_the_newest_not_newer_than_the_kernel() {
        assert_eq!(era_for("6.18.44-fc-v857").0, Era::V6_12);
        assert_eq!(era_for("6.12.9").0, Era::V6_12);
        assert_eq!(era_for("6.8.0").0, Era::V6_5);
        assert!(era_for("6.18.44").1.contains("newer than the newest era"));
        assert_eq!(era_for("6.5.0-1-amd64").0, Era::V6_5);
        assert_eq!(era_for("5.10.0").0, Era::V4_15);
        assert_eq!(era_for("4.15.0").0, Era::V4_15);
        assert_eq!(era_for("3.2.0").0, Era::V2_6_28);
        assert_eq!(era_for("2.6.27.5").0, Era::V2_6_27);
        assert_eq!(era_for("2.6.18").0, Era::V2_6_27);
        assert_eq!(era_for("banana").0, Era::V6_12);
    }

    #[test]
    fn a_record_reads_back_as_the_table_it_was() {
        let mut spec = schedlab::topology::preset("desktop-8c").unwrap();
        spec.calibration = Some(schedlab::calibration::Calibration {
            tool: "schedlab calibrate".into(),
            placement: Some(schedlab::calibration::Placement {
                cpus: vec![0, 1],
                survey_ns: vec![70.0, 245.0, 70.0],
                reference_ns: 70.0,
                retried: vec![],
                unheld: vec![],
            }),
            pace: Some(schedlab::calibration::Placement {
                cpus: vec![0],
                survey_ns: vec![140.0, 190.0, 141.0],
                reference_ns: 140.0,
                retried: vec![],
                unheld: vec![],
            }),
            ..Default::default()
        });
        let report = Report {
            kernel: "6.18.44".into(),
            era: "6.12".into(),
            era_note: "newest".into(),
            machine: "8 CPUs".into(),
            runs: 3,
            rows: vec![
                Row {
                    workload: "perf bench sched pipe, free".into(),
                    command: "perf bench sched pipe -l 10".into(),
                    unit: "usecs/op".into(),
                    real: Some(Real {
                        median: 5.0,
                        spread: 0.1,
                        values: vec![4.9, 5.0, 5.1],
                        ipis_per_ms: vec![30.0, 40.0, 50.0],
                        // The last run's placement moved during it.
                        placement_ns: vec![[70.0, 72.0], [71.0, 69.0], [68.0, 245.0]],
                        pace_ns: Vec::new(),
                        held_only: true,
                    }),
                    simulated: Some(4.0),
                    simulated_values: vec![3.9, 4.0, 4.2],
                    ratio: Some(0.8),
                    simulated_ipis_per_ms: vec![60.0, 61.0, 62.0],
                },
                Row {
                    workload: "hackbench -g 1, sockets, processes".into(),
                    command: "hackbench -g 1 -l 10".into(),
                    unit: "s".into(),
                    real: Some(Real {
                        median: 0.02,
                        spread: 0.001,
                        values: vec![0.02; 3],
                        ipis_per_ms: Vec::new(),
                        placement_ns: Vec::new(),
                        pace_ns: Vec::new(),
                        held_only: false,
                    }),
                    simulated: Some(0.01),
                    simulated_values: vec![0.01; 3],
                    ratio: Some(0.5),
                    simulated_ipis_per_ms: vec![1.0; 3],
                },
                Row {
                    workload: "hackbench -g 1, pipes, pinned to one CPU".into(),
                    command: "taskset -c 0 hackbench -g 1 -l 10 -p".into(),
                    unit: "s".into(),
                    real: Some(Real {
                        median: 0.0305,
                        spread: 0.0005,
                        values: vec![0.03, 0.05, 0.031],
                        ipis_per_ms: Vec::new(),
                        placement_ns: Vec::new(),
                        // The second run's CPU was slowed (its core shared).
                        pace_ns: vec![[140.0, 141.0], [300.0, 150.0], [139.0, 139.0]],
                        held_only: true,
                    }),
                    simulated: Some(0.03),
                    simulated_values: vec![0.03; 3],
                    ratio: Some(0.98),
                    simulated_ipis_per_ms: vec![0.0; 3],
                },
            ],
            directions: ["yes", "NO", "noise", "yes"]
                .iter()
                .map(|a| Direction {
                    comparison: "B against A".into(),
                    real_change_pct: 10.0,
                    simulated_change_pct: 5.0,
                    agree: a.to_string(),
                })
                .collect(),
            skipped: vec![Skip {
                tool: "hackbench".into(),
                package: "rt-tests".into(),
                why: "not installed".into(),
            }],
            machine_spec: Some(spec.clone()),
            schedlab: "schedlab 0.1.0".into(),
            exits: vec![ExitCost {
                command: "hackbench -g 1 -l 1".into(),
                exit_us: 152,
                children: 41,
            }],
        };
        let json = serde_json::to_string_pretty(&report).unwrap();
        let back = Report::from_json(&json).unwrap();
        assert_eq!(back.text(), report.text());
        assert_eq!(back.machine_spec, Some(spec));
        let text = report.text();
        assert!(text.contains("4.0000 ± 0.0750     0.80"), "{text}");
        // The IPI table: only rows counted on both sides.
        let ipis = text
            .lines()
            .find(|l| l.starts_with("perf bench sched pipe, free") && l.ends_with("61.0"))
            .unwrap_or_else(|| panic!("{text}"));
        assert!(ipis.contains("40.0"), "{ipis}");
        // The placement table: only rows whose runs were watched, split by
        // whether the transfer before and after each was the calibration's.
        assert!(
            text.contains("real runs by host placement (CPUs 0-1 line 70 ns)"),
            "{text}"
        );
        assert!(
            text.contains("of 3 runs in the calibrated placement, or pinned at the calibrated pace (a run that began"),
            "{text}"
        );
        let held = text
            .lines()
            .filter(|l| l.starts_with("perf bench sched pipe, free"))
            .find(|l| l.contains("2 of 3: 4.9500"))
            .unwrap_or_else(|| panic!("{text}"));
        assert!(held.ends_with("1 of 3: 5.1000"), "{held}");
        assert_eq!(
            text.matches("hackbench -g 1, sockets, processes").count(),
            1
        );
        // The pinned row is in the pace's table, not the placement's.
        let pace_table = text
            .split("real runs by pace (CPU 0 system call 140 ns)")
            .nth(1)
            .unwrap_or_else(|| panic!("{text}"));
        let paced = pace_table
            .lines()
            .find(|l| l.starts_with("hackbench -g 1, pipes, pinned to one CPU"))
            .unwrap_or_else(|| panic!("{text}"));
        assert!(paced.contains("2 of 3: 0.0305"), "{paced}");
        assert!(paced.ends_with("1 of 3: 0.0500"), "{paced}");
        assert!(!text
            .split("real runs by pace")
            .next()
            .unwrap()
            .split("real runs by host placement")
            .nth(1)
            .unwrap()
            .contains("pinned to one CPU"));
        assert!(
            text.lines()
                .any(|l| l.starts_with("hackbench -g 1 -l 1 (41 children)") && l.ends_with(" 152")),
            "{text}"
        );
        assert!(
            text.contains("2 of 3 rows within a third of real (sim/real 0.75..1.33)"),
            "{text}"
        );
        // Every row with a held run: nothing said of rows never held. A
        // row whose runs all ran elsewhere is named.
        assert!(!text.contains("had no real run"), "{text}");
        let mut moved = report.clone();
        let pipe = moved.rows[0].real.as_mut().unwrap();
        pipe.placement_ns = vec![[245.0, 250.0]; 3];
        let moved = moved.text();
        assert!(
            moved.contains("1 of them had no real run in the calibrated placement or pace (perf bench sched pipe, free): the host moved"),
            "{moved}"
        );
        assert!(
            text.contains("2 of 4 changes go the real way (2 of them at half to twice its size), 1 the other, 1 within the real runs' noise, 0 not separated"),
            "{text}"
        );
        assert!(Report::from_json("{}")
            .unwrap_err()
            .starts_with("not a validate record: "));
    }

    #[test]
    fn a_tools_exit_goes_to_its_own_cases_in_its_own_mode() {
        let o = Options {
            machine: None,
            runs: 1,
            pipe_loops: 10,
            loops: 10,
            tbench_secs: 1,
            groups: vec![1, 2],
            era: None,
            quick: true,
            json: false,
            jobs: None,
            record: None,
            exits: true,
            any_placement: false,
        };
        let mut cases = cases(&o);
        set_exits(&mut cases, "perf", false, 900);
        set_exits(&mut cases, "hackbench", true, 40);
        let exit_of = |c: &Case| c.bench.get("exit_us").and_then(|v| v.as_u64());
        for c in &cases {
            let want = match (
                c.tool,
                c.bench["kind"].as_str(),
                c.bench["threads"].as_bool(),
            ) {
                ("perf", Some("hackbench"), Some(false)) => Some(900),
                ("hackbench", _, Some(true)) => Some(40),
                _ => None,
            };
            assert_eq!(exit_of(c), want, "{}", c.name);
        }
        // perf's messaging in processes, pipes and sockets; hackbench -T.
        assert_eq!(cases.iter().filter(|c| exit_of(c) == Some(900)).count(), 2);
        assert_eq!(cases.iter().filter(|c| exit_of(c) == Some(40)).count(), 1);
        // Each such case still makes an experiment the simulator takes.
        for c in cases.iter().filter(|c| exit_of(c).is_some()) {
            let b: schedlab::workload::bench::Benchmark =
                serde_json::from_value(c.bench.clone()).unwrap();
            b.build().unwrap();
        }
    }

    /// The CAL and RES rows, every CPU's column, nothing else (the rows'
    /// descriptions and the other interrupts are not counted).
    /// Real::from_runs: the median over the runs that began and ended in
    /// the calibrated placement when asked and any did; over all runs
    /// otherwise; counts that miss a run are dropped.
    #[test]
    fn real_runs_held_to_the_placement_are_the_median() {
        let runs = vec![1.0, 2.0, 3.0, 4.0];
        let at = vec![[70.0, 70.0], [70.0, 245.0], [68.0, 72.0], [250.0, 250.0]];
        let line = |v: &Vec<[f64; 2]>| Some((Watch::Line(0, 1), v.clone()));
        let held = Real::from_runs(runs.clone(), vec![5.0; 4], line(&at), Some(70.0));
        assert_eq!((held.median, held.held_only), (2.0, true));
        assert_eq!((held.values.len(), held.placement_ns.len()), (4, 4));
        let all = Real::from_runs(runs.clone(), vec![5.0; 3], line(&at), None);
        assert_eq!((all.median, all.held_only), (2.5, false));
        assert!(all.ipis_per_ms.is_empty());
        let none_held = Real::from_runs(runs.clone(), vec![], line(&at), Some(1000.0));
        assert_eq!((none_held.median, none_held.held_only), (2.5, false));
        // A pinned row's runs are held to the CPU's pace the same way, and
        // keep their samples as the pace's.
        let paced = Real::from_runs(runs, vec![], Some((Watch::Pace(0), at)), Some(70.0));
        assert_eq!((paced.median, paced.held_only), (2.0, true));
        assert_eq!((paced.placement_ns.len(), paced.pace_ns.len()), (0, 4));
    }

    /// A listener already on tbench's port would serve the runs in place of
    /// the server started for them (unpinned, for the pinned row): the
    /// start refuses, naming the port, and starts nothing.
    #[test]
    fn a_tbench_server_will_not_start_beside_another_listener() {
        let held = std::net::TcpListener::bind(("0.0.0.0", TBENCH_PORT));
        assert!(port_taken(TBENCH_PORT));
        let err = TbenchServer::start(None).err().expect("refused");
        assert!(err.contains("port 7003 is taken"), "{err}");
        drop(held);
        let free = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let port = free.local_addr().unwrap().port();
        assert!(port_taken(port));
        drop(free);
        assert!(!port_taken(port));
    }

    #[test]
    fn wakeup_ipis_are_the_cal_and_res_rows() {
        let text = "           CPU0       CPU1       \n  0:         35          0   IO-APIC   2-edge      timer\nLOC:     123456     654321   Local timer interrupts\nRES:        100         20   Rescheduling interrupts\nCAL:       3000          4   Function call interrupts\nTLB:          7          8   TLB shootdowns\n";
        assert_eq!(count_wakeup_ipis(text), 3124);
        assert_eq!(count_wakeup_ipis(""), 0);
    }

    #[test]
    fn tool_outputs_parse() {
        let perf = "# Running 'sched/pipe' benchmark:\n\n     Total time: 0.056 [sec]\n\n       5.603600 usecs/op\n         178456 ops/sec\n";
        let a = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            parse("perf", &a(&["bench", "sched", "pipe"]), perf),
            Some(5.6036)
        );
        let msg = "# 20 sender and receiver processes per group\n\n     Total time: 0.233 [sec]\n";
        assert_eq!(
            parse("perf", &a(&["bench", "sched", "messaging"]), msg),
            Some(0.233)
        );
        let hb = "Running in process mode with 2 groups using 40 file descriptors each (== 80 tasks)\nEach sender will pass 100 messages of 100 bytes\nTime: 0.114\n";
        assert_eq!(parse("hackbench", &a(&["-g", "2"]), hb), Some(0.114));
        let tb = "dbench version 4.00 - Copyright Andrew Tridgell 1999-2004\n\nRunning for 5 seconds with load '/usr/share/dbench/client.txt' and minimum warmup 1 secs\n   1     13403   955.71 MB/sec  execute   1 sec  latency 0.127 ms\n\nThroughput 955.708 MB/sec  1 clients  1 procs  max_latency=0.127 ms\n";
        assert_eq!(
            parse("tbench", &a(&["-t", "5", "1", "127.0.0.1"]), tb),
            Some(955.708)
        );
        assert_eq!(parse("tbench", &a(&["-t", "5"]), "no server\n"), None);
    }

    /// tbench with two pairs on one CPU once read "yes" at -0.2% against
    /// the machine's -15.1%: the direction, not the mechanism.
    #[test]
    fn a_change_that_goes_the_real_way_says_its_size_when_far_from_real() {
        assert_eq!(same_direction(-15.1, -0.2), "yes, at 1% of the real size");
        assert_eq!(same_direction(10.0, 5.0), "yes");
        assert_eq!(same_direction(10.0, 20.0), "yes");
        assert_eq!(same_direction(10.0, 25.0), "yes, at 2.5x the real size");
        // A record that stored a bare "yes" is judged when printed.
        let mut r = Report {
            kernel: "6.18.0".into(),
            era: "6.12".into(),
            era_note: String::new(),
            machine: String::new(),
            runs: 1,
            rows: Vec::new(),
            directions: [(-15.1, -0.2), (10.0, 8.0)]
                .iter()
                .map(|&(real, sim)| Direction {
                    comparison: format!("B against A {real}"),
                    real_change_pct: real,
                    simulated_change_pct: sim,
                    agree: "yes".into(),
                })
                .collect(),
            skipped: Vec::new(),
            machine_spec: None,
            schedlab: "schedlab 0.1.0".into(),
            exits: Vec::new(),
        };
        let text = r.text();
        assert!(text.contains("yes, at 1% of the real size"), "{text}");
        assert!(
            text.contains("2 of 2 changes go the real way (1 of them at half to twice its size)"),
            "{text}"
        );
        r.directions[0].agree = "NO".into();
        assert!(
            r.text()
                .contains("1 of 2 changes go the real way (1 of them"),
            "{}",
            r.text()
        );
    }
}

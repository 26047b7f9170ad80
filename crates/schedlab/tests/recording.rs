//! Scheduler traces recorded on this machine (tests/traces/README.md) as
//! workloads: what the importer reads from them, that the recording's own
//! figures add up, that a replay on the recording machine gives each task
//! group the CPU time it had (it is the input), and that bad input is an
//! error naming its line or a counted skip, never a panic.

mod common;

use flate2::read::GzDecoder;
use rand_core::{RngCore, SeedableRng};
use schedlab::engine::{Sim, SimConfig};
use schedlab::policy::{Era, PolicySpec};
use schedlab::recording::figures::Figures;
use schedlab::recording::timeline::Step;
use schedlab::recording::workload::Overheads;
use schedlab::recording::{import, Import};
use schedlab::topology::{preset, Topology};
use schedlab::workload::program::Op;
use std::io::{BufReader, Read};

const FIXTURES: [&str; 4] = [
    "pipe-pingpong",
    "hackbench-pipes",
    "hackbench-sockets",
    "mixed",
];

fn fixture_text(name: &str) -> String {
    let path = format!("{}/tests/traces/{name}.txt.gz", env!("CARGO_MANIFEST_DIR"));
    let mut text = String::new();
    GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    text
}

fn kvm() -> Topology {
    Topology::from_spec(&preset("kvm-2vcpu").unwrap()).unwrap()
}

fn read(text: &str, o: Overheads) -> schedlab::error::Result<Import> {
    import(BufReader::new(text.as_bytes()), o, &mut |_| {})
}

#[test]
fn every_fixture_imports_and_its_cpu_time_and_idle_fill_both_cpus() {
    for name in FIXTURES {
        let imp = read(&fixture_text(name), Overheads::default()).unwrap();
        let rec = &imp.recording;
        assert!(rec.events > 1000 && rec.tasks.len() > 2, "{name}");
        assert_eq!(rec.cpu_idle_ns.len(), 2, "{name}");
        // Every CPU's time is some task's or idle, to the switches the
        // trace did not show.
        let busy: u64 = rec.tasks.iter().map(|t| t.figures.cpu_ns).sum();
        let idle: u64 = rec.cpu_idle_ns.iter().sum();
        let whole = 2 * rec.length_ns;
        let off = (busy + idle) as f64 / whole as f64 - 1.0;
        assert!(
            off.abs() < 0.03,
            "{name}: busy {busy} + idle {idle} against {whole}"
        );
        // The benchmark's own tasks are there, with their wakeups.
        let f = Figures::of_recording(rec);
        let top = &f.groups[0];
        assert!(
            ["sched-pipe", "hackbench"].contains(&top.name.as_str()),
            "{name}: {}",
            top.name
        );
        assert!(
            top.wakeups > 100 && top.wakeup_latency.count > 100,
            "{name}"
        );
        assert!(!imp.workload.tasks.is_empty());
    }
}

#[test]
fn a_replay_on_the_recording_machine_gives_each_group_its_recorded_cpu_time() {
    let topo = kvm();
    for name in FIXTURES {
        let imp = read(&fixture_text(name), Overheads::of(&topo.costs)).unwrap();
        let cfg =
            SimConfig::new(topo.clone(), &PolicySpec::era(Era::V6_12), &imp.workload).unwrap();
        let out = Sim::new(&cfg).unwrap().run().unwrap();
        let again = Sim::new(&cfg).unwrap().run().unwrap();
        assert_eq!(
            out.events, again.events,
            "{name}: a replay is deterministic"
        );
        let (rec, sim) = (Figures::of_recording(&imp.recording), Figures::of_run(&out));
        let top = &rec.groups[0];
        let replayed = sim.groups.iter().find(|g| g.name == top.name).unwrap();
        let ratio = replayed.cpu_ns as f64 / top.cpu_ns as f64;
        assert!(
            (0.85..1.15).contains(&ratio),
            "{name}: {} cpu {ratio:.3} of the recording",
            top.name
        );
        // Every task ran to its end: nothing waits for a post that never comes.
        assert!(out.tasks.iter().all(|t| t.exited_ns.is_some()), "{name}");
    }
}

/// A ping-pong in perf's format, by hand: A wakes B and sleeps, B wakes A
/// and is preempted by it (a sync wakeup on one CPU), A sleeps and B
/// resumes: the resumption replays as woken by A (a handoff).
#[test]
fn a_hand_made_ping_pong_becomes_posts_and_waits() {
    let trace = "\
    A 10/10 [000] 1.000000000: sched:sched_waking: comm=B pid=11 prio=120 target_cpu=000
    A 10/10 [000] 1.000002000: sched:sched_switch: prev_comm=A prev_pid=10 prev_prio=120 prev_state=S ==> next_comm=B next_pid=11 next_prio=120
    B 11/11 [000] 1.000005000: sched:sched_waking: comm=A pid=10 prio=120 target_cpu=000
    B 11/11 [000] 1.000006000: sched:sched_switch: prev_comm=B prev_pid=11 prev_prio=120 prev_state=R ==> next_comm=A next_pid=10 next_prio=120
    A 10/10 [000] 1.000010000: sched:sched_switch: prev_comm=A prev_pid=10 prev_prio=120 prev_state=S ==> next_comm=B next_pid=11 next_prio=120
    B 11/11 [000] 1.000013000: sched:sched_switch: prev_comm=B prev_pid=11 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
";
    let imp = read(trace, Overheads::default()).unwrap();
    let rec = &imp.recording;
    let (a, b) = (&rec.tasks[0], &rec.tasks[1]);
    assert_eq!((a.comm.as_str(), b.comm.as_str()), ("A", "B"));
    // A ran 2 us from the start, woke B, slept until B woke it, ran 4 us
    // and handed the CPU back to B before sleeping again.
    assert_eq!(
        a.steps,
        [
            Step::Wake(1),
            Step::Run {
                ns: 2_000,
                slices: 0
            },
            Step::Block,
            Step::Run {
                ns: 4_000,
                slices: 1
            },
            Step::Wake(1),
        ]
    );
    // B: asleep from the start until A's wakeup, ran 4 us, woke A, was
    // preempted after 1 us more; resumed when A slept.
    assert_eq!(
        b.steps,
        [
            Step::Block,
            Step::Run {
                ns: 3_000,
                slices: 1
            },
            Step::Wake(0),
            Step::Run {
                ns: 1_000,
                slices: 0
            },
            Step::Block,
            Step::Run {
                ns: 3_000,
                slices: 1
            },
        ]
    );
    assert_eq!(rec.skipped.handoffs, 1);
    assert_eq!(a.figures.wakeup_latency.count, 1);
    assert_eq!(a.figures.cpu_ns, 6_000);
    // As a workload: B's semaphore posted by A, sync (A sleeps right after).
    let ops = &imp.workload.tasks[0].program;
    assert!(matches!(&ops[0], Op::SemPost(p) if p.sem == "wake.B-11" && p.sync && p.free));
}

#[test]
fn lines_out_of_order_or_unreadable_are_errors_naming_the_line() {
    let text = fixture_text("pipe-pingpong");
    let mut lines: Vec<&str> = text.lines().collect();
    lines.swap(100, 2000);
    let e = read(&lines.join("\n"), Overheads::default())
        .unwrap_err()
        .to_string();
    // Line 101 now holds line 2001, so line 102 comes before it.
    assert!(e.contains("line 102") && e.contains("time order"), "{e}");
    let e = read(
        "x 1 [000] 1.0: sched:sched_switch: prev_comm=x prev_pid=1\n",
        Overheads::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("line 1") && e.contains("prev_state"), "{e}");
    let e = read(
        "x 1 [99999999999] 1.0: sched:sched_waking: comm=y pid=2 prio=120\n",
        Overheads::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("line 1") && e.contains("CPU 99999999999"), "{e}");
    let e = read("hello\nworld\n", Overheads::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("no scheduler events in 2 lines"), "{e}");
}

#[test]
fn a_per_cpu_kernel_thread_beyond_the_machine_is_refused_when_replayed() {
    let trace = "kworker/5:1 40/40 [005] 1.0: sched:sched_switch: prev_comm=kworker/5:1 prev_pid=40 prev_prio=120 prev_state=S ==> next_comm=swapper/5 next_pid=0 next_prio=120\n\
                 swapper 0/0 [005] 1.1: sched:sched_waking: comm=kworker/5:1 pid=40 prio=120 target_cpu=005\n";
    let imp = read(trace, Overheads::default()).unwrap();
    assert_eq!(imp.workload.tasks[0].affinity.as_deref(), Some("5"));
    let e = schedlab::experiment::Experiment::from_trace(imp.workload, "t", "kvm-2vcpu")
        .unwrap_err()
        .to_string();
    assert!(e.contains("affinity") && e.contains('5'), "{e}");
}

/// Truncated, swapped, dropped and altered lines: an error or a counted
/// skip, never a panic, and an imported workload always compiles.
#[test]
fn mangled_traces_never_panic() {
    let text = fixture_text("mixed");
    let lines: Vec<&str> = text.lines().take(4000).collect();
    let mut rng = rand_pcg::Pcg32::seed_from_u64(7);
    for round in 0..60 {
        let mut mangled: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        for _ in 0..20 {
            let i = rng.next_u32() as usize % mangled.len();
            let l = &mut mangled[i];
            match rng.next_u32() % 6 {
                0 => {
                    let cut = rng.next_u32() as usize % (l.len() + 1);
                    let cut = (0..=cut)
                        .rev()
                        .find(|&c| l.is_char_boundary(c))
                        .unwrap_or(0);
                    l.truncate(cut)
                }
                1 => *l = l.replace("[001]", "[999]"),
                2 => *l = l.replace(" next_pid=", " next_pod="),
                3 => *l = l.replace("prev_state=S", "prev_state=?"),
                4 => *l = String::new(),
                _ => {
                    // A switch-in without its switch-out: drop a switch.
                    if l.contains("sched_switch") {
                        *l = String::new();
                    }
                }
            }
        }
        match read(&mangled.join("\n"), Overheads::default()) {
            Ok(imp) => {
                let n = imp.recording.cpu_idle_ns.len();
                schedlab::workload::program::Workload::compile(&imp.workload, n.max(1000))
                    .unwrap_or_else(|e| panic!("round {round}: {e}"));
            }
            Err(e) => assert!(e.to_string().contains("line "), "round {round}: {e}"),
        }
    }
}

/// docs/trace-replay.md shows each fixture's check table as this code
/// makes it; `SCHEDLAB_BLESS=1` rewrites them.
#[test]
fn the_docs_check_tables_are_current() {
    let topo = kvm();
    let blocks: Vec<(&str, String)> = FIXTURES
        .iter()
        .map(|&name| {
            let imp = read(&fixture_text(name), Overheads::of(&topo.costs)).unwrap();
            let cfg =
                SimConfig::new(topo.clone(), &PolicySpec::era(Era::V6_12), &imp.workload).unwrap();
            let out = Sim::new(&cfg).unwrap().run().unwrap();
            let table = schedlab::recording::figures::compare(
                &Figures::of_recording(&imp.recording),
                &Figures::of_run(&out),
            );
            (name, table)
        })
        .collect();
    common::doc_blocks_are_current("docs/trace-replay.md", "check", &blocks);
}

/// What if: the same recording replayed on bigger machines. Without SMT
/// (phoenix-2008's 16 cores) each group keeps its demand, within what the
/// machine's own switch and wakeup costs add; with SMT (desktop-8c) tasks
/// that share a core run slower, so they take more CPU time. With more
/// CPUs to spread over and none slower, the run takes no longer.
#[test]
fn a_trace_replays_on_other_machines() {
    let recorded_on = Overheads::of(&kvm().costs);
    let imp = read(&fixture_text("hackbench-sockets"), recorded_on).unwrap();
    let on = |machine: &str| {
        let exp = schedlab::experiment::Experiment::from_trace(imp.workload.clone(), "t", machine)
            .unwrap();
        let point = &exp.points().unwrap()[0];
        schedlab::experiment::run_point_output(point).unwrap()
    };
    let small = on("kvm-2vcpu");
    let recorded = Figures::of_recording(&imp.recording).groups[0].cpu_ns as f64;
    let cpu = |out: &schedlab::engine::RunOutput| Figures::of_run(out).groups[0].cpu_ns as f64;
    let (cores, smt) = (on("phoenix-2008"), on("desktop-8c"));
    assert!(
        (0.8..1.25).contains(&(cpu(&cores) / recorded)),
        "phoenix-2008: cpu {} of {recorded}",
        cpu(&cores)
    );
    assert!(
        cpu(&smt) > cpu(&cores),
        "SMT sharing slows: {} against {}",
        cpu(&smt),
        cpu(&cores)
    );
    // Wakeups from outside the traced tasks come at their recorded times,
    // so only a machine whose CPUs are not slower (no SMT sharing) ends no
    // later, within what the recorded RT threads (migration/N, SCHED_FIFO
    // 99, preempting whatever runs on their CPU) shift: under 1%.
    assert!(
        cores.end_ns <= small.end_ns + small.end_ns / 100,
        "{} ns against {} on 2 CPUs",
        cores.end_ns,
        small.end_ns
    );
}

/// Wakeups from outside the trace's tasks (here the idle task's context,
/// as an interrupt's): a task that sleeps periodically replays its sleeps
/// as timed sleeps; one woken at irregular times replays each wakeup as
/// an arrival at its recorded time from its start (`until`).
#[test]
fn external_wakeups_replay_as_periodic_sleeps_or_arrivals_at_their_times() {
    // T on CPU 0 runs 100 us after each wakeup, woken at 3, 10, 11 and 17
    // ms; P on CPU 1 runs 100 us every millisecond.
    let mut lines = Vec::new();
    let cycle = |cpu: u32, comm: &str, pid: u32, wakes_ms: &[f64]| {
        let at = |ms: f64| format!("1.{:09}", (ms * 1e6) as u64);
        let cpu_s = format!("[{cpu:03}]");
        let idle = format!("swapper/{cpu}");
        let switch_in = |t: &str| {
            format!("{idle} 0/0 {cpu_s} {t}: sched:sched_switch: prev_comm={idle} prev_pid=0 prev_prio=120 prev_state=R ==> next_comm={comm} next_pid={pid} next_prio=120")
        };
        let switch_out = |t: &str| {
            format!("{comm} {pid}/{pid} {cpu_s} {t}: sched:sched_switch: prev_comm={comm} prev_pid={pid} prev_prio=120 prev_state=S ==> next_comm={idle} next_pid=0 next_prio=120")
        };
        let mut out = vec![(0.0, switch_in(&at(0.0))), (0.1, switch_out(&at(0.1)))];
        for &w in wakes_ms {
            out.push((w, format!("{idle} 0/0 {cpu_s} {}: sched:sched_waking: comm={comm} pid={pid} prio=120 target_cpu={cpu:03}", at(w))));
            out.push((w + 0.002, switch_in(&at(w + 0.002))));
            out.push((w + 0.102, switch_out(&at(w + 0.102))));
        }
        out
    };
    let mut all = cycle(0, "T", 20, &[3.0, 10.0, 11.0, 17.0]);
    all.extend(cycle(1, "P", 30, &[1.0, 2.0, 3.001, 4.0, 5.0]));
    all.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
    lines.extend(all.into_iter().map(|(_, l)| l));
    let imp = read(&(lines.join("\n") + "\n"), Overheads::default()).unwrap();
    let program = |name: &str| {
        let t = imp
            .workload
            .tasks
            .iter()
            .find(|t| t.name.starts_with(name))
            .unwrap();
        t.program
            .iter()
            .filter_map(|op| match op {
                Op::Sleep(t) => Some(("sleep", t.ns)),
                Op::Until(t) => Some(("until", t.ns)),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        program("T-"),
        [
            ("until", 3_000_000),
            ("until", 10_000_000),
            ("until", 11_000_000),
            ("until", 17_000_000)
        ]
    );
    let p = program("P-");
    assert_eq!(p.len(), 5);
    assert!(
        p.iter()
            .all(|&(op, ns)| op == "sleep" && (895_000..=903_000).contains(&ns)),
        "{p:?}"
    );
}

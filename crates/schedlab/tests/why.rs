//! Decision records and divergence: recording changes no run (property
//! test), records are well formed, and the two seed commits' variants part
//! where their commits say they should.

mod common;

use common::machine;
use proptest::prelude::*;
use schedlab::decisions::{diverge, record, Cause, RunChoice};
use schedlab::engine::{RunOutput, Sim, SimConfig};
use schedlab::experiment::Experiment;
use schedlab::policy::{Era, PolicySpec};
use schedlab::presets;
use schedlab::sched::why::{DecisionKind, Fact, Outcome, WhyFilter};
use schedlab::topology::HwCosts;
use schedlab::workload::program::{Workload, WorkloadSpec};

/// `pairs` ping-pongs over pipes and `hogs` tasks computing in bursts.
fn mix(pairs: usize, hogs: usize, loops: u64) -> String {
    let mut chans = Vec::new();
    let mut tasks = Vec::new();
    for i in 0..pairs {
        chans.push(r#"{"kind":"pipe"}"#.to_string());
        chans.push(r#"{"kind":"pipe"}"#.to_string());
        let (a, b) = (2 * i, 2 * i + 1);
        tasks.push(format!(
            r#"{{"name":"ping{i}","program":[{{"loop":{{"count":{loops},"body":[{{"write":{{"chan":{a},"bytes":64}}}},{{"read":{{"chan":{b},"bytes":64}}}}]}}}}]}}"#
        ));
        tasks.push(format!(
            r#"{{"name":"pong{i}","program":[{{"loop":{{"count":{loops},"body":[{{"read":{{"chan":{a},"bytes":64}}}},{{"compute":{{"ns":20000,"jitter_pct":50}}}},{{"write":{{"chan":{b},"bytes":64}}}}]}}}}]}}"#
        ));
    }
    for i in 0..hogs {
        tasks.push(format!(
            r#"{{"name":"hog{i}","program":[{{"loop":{{"count":{loops},"body":[{{"compute":{{"ns":300000,"jitter_pct":50}}}},{{"sleep":{{"ns":100000,"jitter_pct":50}}}}]}}}}]}}"#
        ));
    }
    format!(
        r#"{{"channels":[{}],"tasks":[{}]}}"#,
        chans.join(","),
        tasks.join(",")
    )
}

fn run(
    shape: (u32, u32, u32, u32),
    era: Era,
    json: &str,
    seed: u64,
    why: Option<WhyFilter>,
) -> (RunOutput, usize) {
    let topo = machine(shape.0, shape.1, shape.2, shape.3, HwCosts::default());
    let spec: WorkloadSpec = serde_json::from_str(json).unwrap();
    let cfg = SimConfig {
        policy: PolicySpec::era(era).resolve(topo.ncpus()).unwrap(),
        workload: Workload::compile(&spec, topo.ncpus()).unwrap(),
        topology: topo.clone(),
        seed,
        start_ns: 0,
        duration_ns: Some(30_000_000),
        trace: Some(schedlab::engine::stats::TraceWindow {
            start_ns: 0,
            end_ns: u64::MAX,
            max_events: 100_000,
            from_first_wakeup: false,
        }),
        measure_from_ns: 0,
        check_invariants: false,
        why,
    };
    let mut sim = Sim::new(&cfg).unwrap();
    sim.run_until(u64::MAX).unwrap();
    let (decisions, _) = sim.take_decisions();
    for d in &decisions {
        // Well formed: a tree from depth 0, one level deeper at a time; a
        // placement ends on a CPU of the machine.
        assert_eq!(d.steps.first().map(|s| s.depth), Some(0), "{d:#?}");
        for w in d.steps.windows(2) {
            assert!(w[1].depth <= w[0].depth + 1, "{d:#?}");
        }
        match (&d.kind, &d.outcome) {
            (DecisionKind::Balance, Outcome::Balanced { .. }) => {}
            (DecisionKind::Wakeup | DecisionKind::Fork, Outcome::Placed { cpu, .. }) => {
                assert!(*cpu < topo.ncpus())
            }
            _ => panic!("unfinished or mismatched record: {d:#?}"),
        }
    }
    (sim.finish(), decisions.len())
}

fn era_strategy() -> impl Strategy<Value = Era> {
    prop_oneof![
        Just(Era::V2_6_27),
        Just(Era::V2_6_28),
        Just(Era::V4_15),
        Just(Era::V6_5),
        Just(Era::V6_12),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]

    /// Keeping every decision's record changes nothing the run does: the
    /// same switches, wakeups and migrations at the same times, the same
    /// counters and end.
    #[test]
    fn recording_decisions_changes_no_run(
        nodes in 1u32..3, llcs in 1u32..3, cores in 1u32..4, threads in 1u32..3,
        era in era_strategy(), pairs in 1usize..4, hogs in 0usize..4, seed in 1u64..1000,
    ) {
        let json = mix(pairs, hogs, 40);
        let shape = (nodes, llcs, cores, threads);
        let (plain, none) = run(shape, era, &json, seed, None);
        let (recorded, kept) = run(shape, era, &json, seed, Some(WhyFilter::default()));
        prop_assert_eq!(none, 0);
        prop_assert!(kept > 0);
        prop_assert_eq!(&plain.counters, &recorded.counters);
        prop_assert_eq!(&plain.trace, &recorded.trace);
        prop_assert_eq!(plain.end_ns, recorded.end_ns);
    }
}

/// An active balance's push makes the busiest CPU schedule and balance
/// new-idle inside the load_balance that pushed: the inner record closes
/// first, each whole (found by the property test above: 2.6.27 on a
/// 16-CPU two-node box, one ping-pong and three hogs, seed 153).
#[test]
fn a_decision_made_inside_another_closes_first() {
    let json = mix(1, 3, 40);
    let (plain, _) = run((2, 2, 2, 2), Era::V2_6_27, &json, 153, None);
    let (recorded, kept) = run(
        (2, 2, 2, 2),
        Era::V2_6_27,
        &json,
        153,
        Some(WhyFilter::default()),
    );
    assert!(kept > 0);
    assert_eq!(plain.counters, recorded.counters);
    assert!(plain
        .counters
        .keys()
        .any(|k| k.starts_with("active_balance.")));
}

/// A preset with a shorter run (`loops` loops).
fn preset(name: &str, loops: u64) -> Experiment {
    let mut exp = presets::get(name).unwrap();
    exp.workload = exp
        .workload
        .with_param("loops", &serde_json::json!(loops))
        .unwrap();
    exp
}

fn all() -> WhyFilter {
    WhyFilter::default()
}

fn wakeups() -> WhyFilter {
    WhyFilter {
        balances: false,
        ..WhyFilter::default()
    }
}

/// The re-tune commit (2.6.27's flags against 2.6.28's on the 2008 box):
/// the first record that differs is a CPU going idle, whose new-idle walk
/// stops at MC in 2.6.28 (the commit took SD_BALANCE_NEWIDLE off MC) and
/// pulls nothing either way; the runs part at pipe-test's first
/// cross-node wakeup, affine only with NODE's SD_WAKE_AFFINE, which the
/// commit turned on.
#[test]
fn retune_pipe_test_parts_at_the_flags_the_commit_changed() {
    let exp = preset("retune-pipe-test", 200);
    let d = diverge(&exp, 0, (0, 1), &all()).unwrap();
    let first = d.first_difference.expect("the records differ");
    assert_eq!(first.a.kind, DecisionKind::Balance);
    assert_eq!(first.a.outcome, first.b.outcome);
    let Cause::Knob(k) = &first.cause else {
        panic!("{:?}", first.cause)
    };
    assert_eq!((k.level, k.knob), (Some("MC"), "BALANCE_NEWIDLE"));

    let p = d.parting.expect("the variants part");
    assert_eq!(
        (p.a.kind, p.b.kind),
        (DecisionKind::Wakeup, DecisionKind::Wakeup)
    );
    let Cause::Knob(k) = &p.cause else {
        panic!("{:?}", p.cause)
    };
    assert_eq!(
        (k.level, k.knob, k.a.as_str(), k.b.as_str()),
        (Some("NODE"), "WAKE_AFFINE", "off", "on")
    );
    // 2.6.28 pulls the wakee to the waker's CPU; 2.6.27 leaves it on prev.
    let (Outcome::Placed { cpu: a, .. }, Outcome::Placed { cpu: b, .. }) =
        (&p.a.outcome, &p.b.outcome)
    else {
        panic!("{p:#?}")
    };
    assert_eq!(*b, p.b.cpu);
    assert_ne!(a, b);
    // Comparing wakeups alone finds the same parting.
    let w = diverge(&exp, 0, (0, 1), &wakeups()).unwrap();
    let q = w.parting.expect("the wakeups part");
    assert_eq!((q.a.t_ns, q.a.task), (p.a.t_ns, p.a.task));
}

/// The WA_WEIGHT commit on the 40-CPU Ivy Bridge-EP: the variants part at
/// the first wakeup WA_WEIGHT decides, which in B pulls the wakee to the
/// waker's CPU because this_eff_load <= prev_eff_load held.
#[test]
fn waweight_hackbench_parts_where_wa_weight_first_pulls() {
    let exp = preset("waweight-hackbench-20", 20);
    let d = diverge(&exp, 0, (0, 1), &all()).unwrap();
    let p = d.parting.expect("the variants part");
    assert_eq!(p.b.kind, DecisionKind::Wakeup);
    let Cause::Knob(k) = &p.cause else {
        panic!("{:?}", p.cause)
    };
    assert_eq!((k.level, k.knob), (None, "WA_WEIGHT"));
    let weight =
        p.b.steps
            .iter()
            .find(|s| s.func == "wake_affine_weight")
            .expect("B ran wake_affine_weight");
    let held = weight.facts.iter().any(
        |f| matches!(f, Fact::Compare { lhs, holds: true, .. } if lhs.name == "this_eff_load"),
    );
    assert!(held, "{weight:#?}");
    assert!(!p.a.steps.iter().any(|s| s.func == "wake_affine_weight"));
    // The headline counters part later, WA_WEIGHT's own among them.
    assert!(d
        .counters
        .iter()
        .any(|c| c.counter.starts_with("wake_affine.") && c.counter.ends_with(".weight")));
}

/// Two variants with the same policy make the same decisions to the end.
#[test]
fn identical_variants_never_part() {
    let mut exp = preset("retune-pipe-test", 100);
    exp.variants[1] = exp.variants[0].clone();
    exp.variants[1].label = "again".into();
    let d = diverge(&exp, 0, (0, 1), &all()).unwrap();
    assert!(d.parting.is_none() && d.first_difference.is_none());
    assert!(d.policy_differences.is_empty());
    assert!(d.compared > 100, "{}", d.compared);
    assert!(d.counters.is_empty());
}

/// `record` keeps what its filter asks for, in its window, up to its limit.
#[test]
fn record_filters_by_task_window_kind_and_limit() {
    let exp = preset("retune-pipe-test", 200);
    let choice = RunChoice {
        x: 0,
        variant: 1,
        repeat: 0,
    };
    let r = record(
        &exp,
        choice,
        WhyFilter {
            balances: false,
            task_names: Some(vec!["child".into()]),
            from_ns: 1_000_000,
            to_ns: 2_000_000,
            ..WhyFilter::default()
        },
    )
    .unwrap();
    assert!(!r.decisions.is_empty());
    for d in &r.decisions {
        assert!((1_000_000..2_000_000).contains(&d.t_ns), "{}", d.t_ns);
        assert_eq!(d.kind, DecisionKind::Wakeup);
        assert_eq!(r.task_names[d.task.unwrap()], "child");
    }
    let r = record(
        &exp,
        choice,
        WhyFilter {
            limit: 5,
            ..WhyFilter::default()
        },
    )
    .unwrap();
    assert_eq!(r.decisions.len(), 5);
    assert!(r.limit_reached);
}

/// One docs/why.md block: a record of `preset`'s `variant` under `filter`.
fn docs_record(preset: &str, variant: usize, filter: WhyFilter) -> String {
    let exp = presets::get(preset).unwrap();
    let choice = RunChoice {
        x: 0,
        variant,
        repeat: 0,
    };
    schedlab::why_report::recorded(&record(&exp, choice, filter).unwrap())
}

fn window(from_ns: u64, to_ns: u64, balances: bool) -> WhyFilter {
    WhyFilter {
        wakeups: !balances,
        forks: false,
        balances,
        from_ns,
        to_ns,
        limit: 1,
        ..WhyFilter::default()
    }
}

/// docs/why.md shows records and divergence reports as this code makes
/// them; `SCHEDLAB_BLESS=1` rewrites them.
#[test]
fn the_docs_samples_are_current() {
    let diverged = |name: &str| {
        let exp = presets::get(name).unwrap();
        schedlab::why_report::divergence(&diverge(&exp, 0, (0, 1), &all()).unwrap())
    };
    let blocks: Vec<(&str, String)> = vec![
        (
            "2.6.28",
            docs_record("retune-pipe-test", 1, window(60_000, 70_000, false)),
        ),
        (
            "4.15",
            docs_record(
                "waweight-hackbench-20",
                1,
                WhyFilter {
                    task_names: Some(vec!["receiver2.9".into()]),
                    ..window(40_200_000, 40_300_000, false)
                },
            ),
        ),
        (
            "4.15-balance",
            docs_record(
                "waweight-hackbench-20",
                1,
                WhyFilter {
                    task_names: Some(vec!["receiver*".into()]),
                    ..window(40_000_000, 60_000_000, true)
                },
            ),
        ),
        (
            "6.5",
            docs_record(
                "epyc-hackbench-sis",
                1,
                window(100_000_000, 101_000_000, false),
            ),
        ),
        (
            "6.12",
            docs_record(
                "eevdf-rtapp-desktop",
                1,
                window(10_000_000, 20_000_000, false),
            ),
        ),
        ("diverge retune-pipe-test", diverged("retune-pipe-test")),
        (
            "diverge waweight-hackbench-20",
            diverged("waweight-hackbench-20"),
        ),
    ];
    common::doc_blocks_are_current("docs/why.md", "why", &blocks);
}

/// Balances the NOHZ idle balancer runs for tickless CPUs say so: 2.6.28's
/// owner (retune-pipe-test) and 4.15's kicked CPU (waweight-first-pull)
/// balance other CPUs' domains as idle balances of those CPUs.
#[test]
fn nohz_balances_name_the_idle_balancer() {
    for (name, variant) in [("retune-pipe-test", 1), ("waweight-first-pull", 1)] {
        let exp = presets::get(name).unwrap();
        let r = record(
            &exp,
            RunChoice {
                x: 0,
                variant,
                repeat: 0,
            },
            WhyFilter {
                wakeups: false,
                forks: false,
                to_ns: 200_000_000,
                limit: 100_000,
                ..WhyFilter::default()
            },
        )
        .unwrap();
        let nohz: Vec<_> = r
            .decisions
            .iter()
            .filter(|d| d.nohz_by.is_some_and(|ilb| ilb != d.cpu))
            .collect();
        assert!(
            !nohz.is_empty(),
            "{name}: no NOHZ balance in {} records",
            r.decisions.len()
        );
        for d in &nohz {
            assert_eq!(d.idle, Some("idle"), "{name}: {d:?}");
        }
        let text = schedlab::why_report::headline(nohz[0], &r.task_names);
        assert!(
            text.contains("balanced by the NOHZ idle balancer on CPU"),
            "{text}"
        );
    }
}

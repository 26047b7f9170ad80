//! Experiments end to end: the seed replays' directions (explained by the
//! counters that moved), determinism, repeats, cancellation, and the link
//! codec's golden strings.

use schedlab::codec;
use schedlab::experiment::{self, Experiment, Results};
use schedlab::presets;

fn run(exp: &Experiment) -> Results {
    experiment::run_all(exp, &mut |_, _| true).unwrap()
}

fn value(r: &Results, row: usize, variant: &str) -> f64 {
    r.rows[row].values[variant]
}

fn counter(r: &Results, variant: &str, name: &str) -> u64 {
    r.counters[variant].get(name).copied().unwrap_or(0)
}

#[test]
fn retune_replays_are_faster_with_the_2_6_28_flags() {
    for name in ["retune-pipe-test", "retune-lat-ctx"] {
        let r = run(&presets::get(name).unwrap());
        let (old, new) = (value(&r, 0, "2.6.27"), value(&r, 0, "2.6.28"));
        let why = format!(
            "{name}: 2.6.27 {old:.2} vs 2.6.28 {new:.2}; wake_affine.NODE.affine {} -> {}, ttwu.remote {} -> {}",
            counter(&r, "2.6.27", "wake_affine.NODE.affine"),
            counter(&r, "2.6.28", "wake_affine.NODE.affine"),
            counter(&r, "2.6.27", "ttwu.remote"),
            counter(&r, "2.6.28", "ttwu.remote"),
        );
        assert!(new < old, "{why}");
        assert!(
            counter(&r, "2.6.28", "wake_affine.NODE.affine") > 0,
            "{why}"
        );
        assert!(
            counter(&r, "2.6.28", "ttwu.remote") < counter(&r, "2.6.27", "ttwu.remote"),
            "{why}"
        );
    }
}

#[test]
fn the_flag_flip_timeline_drops_where_wake_affine_turns_on() {
    let r = run(&presets::get("retune-pipe-test-flip").unwrap());
    let s = &r.rows[0].series["flip"];
    assert_eq!(s.len(), 10);
    // Lines 1-3 ran without SD_WAKE_AFFINE on the node level; it turns on
    // after line 3, and every later line is faster than every earlier one.
    let before = s[..3].iter().copied().fold(f64::INFINITY, f64::min);
    let after = s[4..].iter().copied().fold(f64::NEG_INFINITY, f64::max);
    assert!(after < 0.75 * before, "{s:?}");
}

/// The mechanism of the WA_WEIGHT commit on hackbench: with no idle CPU
/// left, only WA_WEIGHT's wake_affine pulls wakees to the waker. Whether that
/// makes hackbench faster is the fidelity table's to say: since the 4.15
/// select_idle_sibling fixes it is not (docs/kernel-review.md; the golden
/// fidelity.txt pins the figure), until the balancing mechanisms 4.15 also
/// has (issue 17, items 2 and 4) are in.
#[test]
fn hackbench_20_wa_weight_pulls_wakees_to_the_waker() {
    let r = run(&presets::get("waweight-hackbench-20").unwrap());
    let (no, yes) = (value(&r, 0, "NO_WA_WEIGHT"), value(&r, 0, "WA_WEIGHT"));
    let why = format!(
        "NO_WA_WEIGHT {no:.3} s vs WA_WEIGHT {yes:.3} s; wake_affine weight pulls {}, local wakeups {} -> {}",
        counter(&r, "WA_WEIGHT", "wake_affine.NUMA.weight") + counter(&r, "WA_WEIGHT", "wake_affine.MC.weight"),
        counter(&r, "NO_WA_WEIGHT", "ttwu.local"),
        counter(&r, "WA_WEIGHT", "ttwu.local"),
    );
    assert!(
        counter(&r, "WA_WEIGHT", "wake_affine.NUMA.weight")
            + counter(&r, "WA_WEIGHT", "wake_affine.MC.weight")
            > 0,
        "{why}"
    );
    // Without WA_WEIGHT the overloaded box gives wake_affine no answer but prev.
    assert_eq!(
        counter(&r, "NO_WA_WEIGHT", "wake_affine.NUMA.weight"),
        0,
        "{why}"
    );
    // A larger share of the wakeups lands on the waker's CPU (the runs
    // differ in how many wakeups they take, so the share, not the count).
    let local_share = |v: &str| {
        let local = counter(&r, v, "ttwu.local") as f64;
        local / (local + counter(&r, v, "ttwu.remote") as f64).max(1.0)
    };
    assert!(
        local_share("WA_WEIGHT") > local_share("NO_WA_WEIGHT"),
        "{why}"
    );
}

#[test]
fn tbench_at_80_clients_is_no_worse_with_wa_weight() {
    let mut exp = presets::get("waweight-tbench").unwrap();
    exp.sweep.as_mut().unwrap().values = vec![serde_json::json!(80)];
    let r = run(&exp);
    let (no, yes) = (value(&r, 0, "NO_WA_WEIGHT"), value(&r, 0, "WA_WEIGHT"));
    let why = format!(
        "80 clients: NO_WA_WEIGHT {no:.1} MB/s, WA_WEIGHT {yes:.1} MB/s; weight decisions {}",
        counter(&r, "WA_WEIGHT", "wake_affine.MC.weight")
    );
    assert!(yes >= no, "{why}");
}

#[test]
fn the_same_experiment_gives_identical_json_and_repeats_spread() {
    let mut exp = presets::get("waweight-tbench").unwrap();
    exp.sweep.as_mut().unwrap().values = vec![serde_json::json!(5)];
    if let schedlab::workload::bench::Benchmark::Tbench(t) = &mut exp.workload {
        t.duration_ms = 30;
        t.warmup_ms = 5;
    }
    exp.repeats = 3;
    let a = run(&exp).to_json();
    let b = run(&exp).to_json();
    assert_eq!(a, b);
    let r = run(&exp);
    let s = &r.rows[0].spread["WA_WEIGHT"];
    assert!(s.max > s.min && s.stddev > 0.0, "{s:?}");
    // Variants share random streams: with the same decisions (tbench at 5
    // clients never reaches WA_WEIGHT) they give the same numbers.
    assert_eq!(
        r.rows[0].values["WA_WEIGHT"],
        r.rows[0].values["NO_WA_WEIGHT"]
    );
}

/// hackbench's tasks draw nothing from their random streams, yet its
/// repeats differ: each seed starts the workload at its own phase of the
/// ticks and PELT periods (`seed::start_phase`), as real runs do.
#[test]
fn repeats_start_at_their_own_phase_so_even_hackbench_spreads() {
    let mut exp = presets::get("waweight-hackbench-20").unwrap();
    if let schedlab::workload::bench::Benchmark::Hackbench(h) = &mut exp.workload {
        h.groups = 4;
        h.loops = 20;
    }
    exp.repeats = 3;
    let r = run(&exp);
    let s = &r.rows[0].spread["NO_WA_WEIGHT"];
    assert!(s.max > s.min && s.stddev > 0.0, "{s:?}");
}

/// Progress counts the workload's own time: a run that starts part of a
/// tick in never reports more than its duration done.
#[test]
fn progress_never_passes_the_workloads_duration() {
    let mut exp = presets::get("waweight-tbench").unwrap();
    // 149 ms in all, and a seed whose run starts over 1 ms into the tick:
    // the 150 ms chunk boundary then falls before the end.
    if let schedlab::workload::bench::Benchmark::Tbench(t) = &mut exp.workload {
        t.duration_ms = 149;
    }
    let phase = |exp: &schedlab::experiment::Experiment| {
        let point = exp.points().unwrap().remove(0);
        let ncpus = point.topology.ncpus();
        let tick = point.policy.resolve(ncpus).unwrap().tunables.tick_ns();
        (schedlab::seed::start_phase(point.seed, tick), point)
    };
    exp.seed = (1..100)
        .find(|&s| {
            exp.seed = s;
            phase(&exp).0 > 1_000_000
        })
        .unwrap();
    let (_, point) = phase(&exp);
    let mut last = None;
    experiment::run_point(&point, &mut |p| {
        let end = p.end_ns.expect("tbench runs for a set time");
        assert!(p.now_ns <= end, "{} of {end}", p.now_ns);
        last = Some((p.now_ns, end));
        true
    })
    .unwrap();
    let (now, end) = last.unwrap();
    assert!(now + 2 * experiment::CHUNK_NS >= end, "{now} of {end}");
}

/// A task blocked for good on a machine whose idle CPUs stop their ticks
/// (4.15) leaves no event queued: the run idles to its duration, or ends
/// there without one, instead of waiting for an event that never comes.
#[test]
fn a_run_whose_tasks_block_for_good_ends() {
    for duration in [Some(20), None] {
        let mut workload = serde_json::json!({
            "kind": "custom",
            "channels": [{"kind": "pipe"}],
            "tasks": [
                {"name": "w", "program": [{"write": {"chan": 0, "bytes": 100}}]},
                {"name": "r", "program": [
                    {"read": {"chan": 0, "bytes": 100}},
                    {"read": {"chan": 0, "bytes": 100}}]}
            ]
        });
        if let Some(ms) = duration {
            workload["duration_ms"] = ms.into();
        }
        let exp = Experiment::from_json(
            &serde_json::json!({
                "version": 1, "name": "stuck", "machine": "desktop-8c",
                "policy": {"era": "4.15"}, "variants": [{"label": "4.15"}],
                "workload": workload
            })
            .to_string(),
        )
        .unwrap();
        let point = &exp.points().unwrap()[0];
        let mut chunks = 0;
        let out = experiment::run_point(point, &mut |_| {
            chunks += 1;
            chunks < 1000
        });
        assert!(out.is_ok(), "{duration:?}: {out:?}");
        assert!(chunks <= 3, "{duration:?}: {chunks} chunks");
    }
}

#[test]
fn cancelling_a_run_stops_it_at_the_next_chunk() {
    let exp = presets::get("waweight-tbench").unwrap();
    let points = exp.points().unwrap();
    let mut calls = 0;
    let err = experiment::run_point(&points[0], &mut |p| {
        calls += 1;
        assert!(p.now_ns <= 2 * experiment::CHUNK_NS);
        calls < 2
    })
    .unwrap_err();
    assert_eq!(err.to_string(), "the run was cancelled");
    assert_eq!(calls, 2);
}

#[test]
fn golden_links_keep_decoding() {
    let golden = include_str!("golden/links-v1.txt");
    let mut n = 0;
    for line in golden.lines() {
        let (name, code) = line.split_once(' ').unwrap();
        let exp = codec::decode(code).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(exp.name, name);
        n += 1;
    }
    assert_eq!(n, presets::ALL.len());
}

#[test]
fn bad_experiments_say_what_and_where() {
    let err = |json: &str| Experiment::from_json(json).unwrap_err().to_string();
    assert!(
        err("{\"version\": 1,\n \"name\": ").starts_with("experiment JSON (line 2, column"),
        "{}",
        err("{\"version\": 1,\n \"name\": ")
    );
    assert_eq!(
        err(r#"{"version": 9}"#),
        "experiment version 9 is not known to this build (it reads versions 0 and 1)"
    );
    let mut exp = presets::get("waweight-tbench").unwrap();
    exp.sweep.as_mut().unwrap().param = "groups".into();
    let e = exp.validate().unwrap_err().to_string();
    assert!(
        e.starts_with("unknown parameter of this workload \"groups\""),
        "{e}"
    );
    let mut exp = presets::get("retune-pipe-test").unwrap();
    exp.variants[1]
        .policy
        .features
        .insert("WA_WEIGHT".into(), true);
    let e = exp.validate().unwrap_err().to_string();
    assert!(
        e.contains("unknown feature for era 2.6.28 \"WA_WEIGHT\""),
        "{e}"
    );
    let mut exp = presets::get("retune-pipe-test").unwrap();
    exp.repeats = 1000;
    assert!(exp
        .validate()
        .unwrap_err()
        .to_string()
        .contains("max repeats"));
}

/// Links people have shared must keep opening with every setting intact:
/// each preset by name, edited experiments (hand-built machine, flag and
/// parameter changes with run-on-open, a sweep with repeats), and version-0
/// links both base64 and as plain percent-encoded JSON.
#[test]
fn golden_fragments_keep_opening_exactly() {
    let golden: serde_json::Value =
        serde_json::from_str(include_str!("golden/fragments-v1.json")).unwrap();
    let cases = golden.as_array().unwrap();
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let link = codec::parse_fragment(case["fragment"].as_str().unwrap())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let expected = match case.get("experiment") {
            Some(e) => Experiment::from_json(&e.to_string()).unwrap(),
            None => presets::get(name).unwrap(),
        };
        assert_eq!(link.experiment, expected, "{name}");
        assert_eq!(link.run, case["run"].as_bool().unwrap_or(false), "{name}");
    }
    assert_eq!(cases.len(), presets::ALL.len() + 5);
}

/// `rows[].cpu`: every CPU's time after the warm-up, in shares that add up
/// to one. A producer and consumer over a TCP channel pay the loopback
/// receive path in the NET_RX softirq; over a pipe they pay none.
#[test]
fn cpu_shares_add_up_and_show_net_rx_only_for_network_channels() {
    let exp = |kind: &str| {
        Experiment::from_json(&format!(
            r#"{{"version":1,"name":"cpu shares","machine":"desktop-8c","policy":{{"era":"6.5"}},
              "variants":[{{"label":"A"}}],
              "workload":{{"kind":"custom","duration_ms":10,"warmup_ms":2,"metric":"mark_rate","mark":"consumed",
                "channels":[{{"kind":"{kind}"}}],
                "tasks":[
                  {{"name":"producer","program":[{{"forever":[{{"compute":{{"ns":20000}}}},{{"write":{{"chan":0,"bytes":64}}}}]}}]}},
                  {{"name":"consumer","program":[{{"forever":[{{"read":{{"chan":0,"bytes":64}}}},{{"compute":{{"ns":15000}}}},{{"mark":"consumed"}}]}}]}}]}}}}"#
        ))
        .unwrap()
    };
    for (kind, net) in [("tcp", true), ("pipe", false)] {
        let r = run(&exp(kind));
        let c = r.rows[0].cpu["A"];
        let sum = c.user + c.kernel + c.balancing + c.net_rx_softirq + c.idle;
        assert!((sum - 1.0).abs() < 1e-9, "{kind}: {c:?}");
        // Two tasks on 16 CPUs (8 cores x 2 threads), each computing most
        // of the time: at most 2/16 user.
        assert!(c.user > 0.05 && c.user < 0.125, "{kind}: {c:?}");
        assert!(c.idle > 0.6, "{kind}: {c:?}");
        assert_eq!(c.net_rx_softirq > 0.0, net, "{kind}: {c:?}");
    }
}

/// eevdf-rtapp-desktop's tail under 6.12 (pick_eevdf, update_curr's
/// deadline check at the tick, v6.12): a nice-0 wakee with no lag and the
/// running task's request waits for that request to end, seen at the next
/// tick, so the tail follows the tick period (hz); RUN_TO_PARITY is not
/// its cause.
#[test]
fn the_eevdf_tail_follows_the_tick_not_run_to_parity() {
    let mut v: serde_json::Value =
        serde_json::from_str(&presets::get("eevdf-rtapp-desktop").unwrap().to_json()).unwrap();
    v["variants"] = serde_json::json!([
        {"label": "hz250"},
        {"label": "no-RTP", "policy": {"features": {"RUN_TO_PARITY": false}}},
        {"label": "hz1000", "policy": {"tunables": {"hz": 1000}}},
        {"label": "hz100", "policy": {"tunables": {"hz": 100}}}
    ]);
    v["repeats"] = serde_json::json!(3);
    let r = run(&Experiment::from_json(&v.to_string()).unwrap());
    let p99 = |label| value(&r, 0, label);
    assert!(
        p99("hz1000") < p99("hz250") && p99("hz250") < p99("hz100"),
        "{:?}",
        r.rows[0].values
    );
    let rtp_off = p99("no-RTP") / p99("hz250");
    assert!(
        (0.8..1.2).contains(&rtp_off),
        "RUN_TO_PARITY off moves p99 by {rtp_off:.2}x"
    );
}

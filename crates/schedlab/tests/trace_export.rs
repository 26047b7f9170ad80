//! The Perfetto export follows the trace-event format's rules: valid JSON,
//! every slice closed, timestamps ordered per track, no two slices on one
//! CPU at once, and every pid and tid named.

use schedlab::experiment::run_point;
use schedlab::presets;
use schedlab::trace_export::chrome_trace;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

fn check(doc: &Value) -> (usize, usize) {
    let text = serde_json::to_string(doc).unwrap();
    let doc: Value = serde_json::from_str(&text).expect("valid JSON");
    let events = doc["traceEvents"].as_array().expect("a traceEvents array");
    let mut processes = BTreeSet::new();
    let mut threads = BTreeSet::new();
    let mut tracks: BTreeMap<(u64, u64), Vec<&Value>> = BTreeMap::new();
    for e in events {
        let pid = e["pid"].as_u64().expect("pid");
        let tid = e["tid"].as_u64().expect("tid");
        match e["ph"].as_str().unwrap() {
            "M" if e["name"] == "process_name" => {
                processes.insert(pid);
            }
            "M" if e["name"] == "thread_name" => {
                threads.insert((pid, tid));
            }
            "M" => {}
            "X" | "i" => {
                assert!(e["ts"].as_f64().unwrap() >= 0.0);
                if e["ph"] == "X" {
                    assert!(e["dur"].as_f64().expect("a closed slice has dur") >= 0.0);
                }
                tracks.entry((pid, tid)).or_default().push(e);
            }
            other => panic!("unexpected phase {other}"),
        }
    }
    let (mut slices, mut instants) = (0, 0);
    for ((pid, tid), evs) in &tracks {
        assert!(processes.contains(pid), "pid {pid} is named");
        assert!(
            threads.contains(&(*pid, *tid)),
            "tid {tid} of pid {pid} is named"
        );
        let mut last_ts = f64::NEG_INFINITY;
        let mut busy_until = f64::NEG_INFINITY;
        for e in evs {
            let ts = e["ts"].as_f64().unwrap();
            assert!(ts >= last_ts, "timestamps ordered on track {pid}/{tid}");
            last_ts = ts;
            if e["ph"] == "X" {
                assert!(ts >= busy_until - 1e-9, "one task at a time on CPU {tid}");
                busy_until = ts + e["dur"].as_f64().unwrap();
                slices += 1;
            } else {
                instants += 1;
            }
        }
    }
    (slices, instants)
}

#[test]
fn traces_of_real_runs_follow_the_format() {
    for name in ["kvm-pipe-test-pinning", "retune-lat-ctx"] {
        let exp = presets::get(name).unwrap();
        let points = exp.points().unwrap();
        let outcomes: Vec<_> = points
            .iter()
            .map(|p| run_point(p, &mut |_| true).unwrap())
            .collect();
        let runs: Vec<(&str, &_)> = exp
            .variants
            .iter()
            .zip(&outcomes)
            .map(|(v, o)| (v.label.as_str(), &o.trace))
            .collect();
        let (slices, instants) = check(&chrome_trace(&runs));
        assert!(
            slices > 10 && instants > 10,
            "{name}: {slices} slices, {instants} instants"
        );
    }
}

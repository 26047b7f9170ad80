//! rt-app import: files shaped like rt-app's own examples (written for these
//! tests) become experiments that run, report each task's period, slack and
//! wakeup latency; what is not modelled is an error naming the key.

use schedlab::experiment::{run_all, Experiment};
use schedlab::workload::bench::Benchmark;

fn file(name: &str) -> String {
    std::fs::read_to_string(format!("{}/tests/rtapp/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn import(text: &str) -> Result<(Experiment, Vec<String>), String> {
    Experiment::from_rtapp(text, "rt-app", "desktop-8c").map_err(|e| e.to_string())
}

/// The mean interval of a "mark ..." line of the tool output, us.
fn mean_of(text: &str, label: &str) -> f64 {
    let line = text
        .lines()
        .find(|l| l.starts_with(&format!("mark \"{label}\"")))
        .unwrap_or_else(|| panic!("no {label} in\n{text}"));
    let v = line.rsplit("mean interval ").next().unwrap();
    v.trim_end_matches(" us").parse().unwrap()
}

#[test]
fn a_periodic_set_runs_with_its_periods_and_slack() {
    let (exp, ignored) = import(&file("periodic.json")).unwrap();
    assert!(
        ignored.contains(&"global.calibration".to_string()),
        "{ignored:?}"
    );
    assert!(ignored.contains(&"global.log_basename".to_string()));
    let Benchmark::Custom(c) = &exp.workload else {
        panic!()
    };
    assert_eq!(c.duration_ms, Some(1000));
    let names: Vec<&str> = c.tasks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["thread0", "thread1-0", "thread1-1"]);
    assert_eq!(c.tasks[1].nice, 5);
    assert_eq!(c.tasks[1].affinity.as_deref(), Some("0,1"));
    // The experiment survives JSON, as `schedlab import` writes it.
    let exp = Experiment::from_json(&exp.to_json()).unwrap();
    let r = run_all(&exp, &mut |_, _| true).unwrap();
    let text = &r.rows[0].text["6.12"];
    // Periods hold on an idle 16-CPU box; slack is the period less the run.
    assert!(
        (mean_of(text, "thread0.period") - 10_000.0).abs() < 50.0,
        "{text}"
    );
    assert!(
        (mean_of(text, "thread1-0.period") - 16_000.0).abs() < 50.0,
        "{text}"
    );
    let slack = mean_of(text, "thread0.slack");
    assert!((7_500.0..8_000.0).contains(&slack), "{slack}\n{text}");
    let slack = mean_of(text, "thread1-1.slack");
    assert!((9_500.0..10_000.0).contains(&slack), "{slack}\n{text}");
    assert!(text.contains("thread1-1"), "{text}");
    assert!(r.rows[0].wakeup_latency["6.12"].wakeups > 200);
}

#[test]
fn phases_loops_delay_and_relative_timers() {
    let (exp, _) = import(&file("phases.json")).unwrap();
    let Benchmark::Custom(c) = &exp.workload else {
        panic!()
    };
    // No duration: the task ends after its two loops.
    assert_eq!(c.duration_ms, None);
    let prog = serde_json::to_value(&c.tasks[0].program).unwrap();
    assert_eq!(prog[0], serde_json::json!({"sleep": {"ns": 500000}}));
    let body = &prog[1]["loop"];
    assert_eq!(body["count"], 2);
    assert_eq!(body["body"][0]["loop"]["count"], 20);
    // The heavy phase: events in file order.
    let heavy = &body["body"][1]["loop"]["body"];
    let names: Vec<String> = heavy
        .as_array()
        .unwrap()
        .iter()
        .map(|op| op.as_object().unwrap().keys().next().unwrap().clone())
        .collect();
    assert_eq!(names, ["compute", "sleep", "compute", "timer", "mark"]);
    assert_eq!(heavy[3]["timer"]["relative"], true);
    let r = run_all(&exp, &mut |_, _| true).unwrap();
    let text = &r.rows[0].text["6.12"];
    // 60 periods of 10 ms: 40 light ones with 9 ms of slack, 20 heavy ones
    // (6 + 1 ms of work around a 1 ms sleep) with 2 ms.
    assert!(text.contains("mark \"ramp.period\": 60 times"), "{text}");
    assert!(
        (mean_of(text, "ramp.period") - 10_000.0).abs() < 50.0,
        "{text}"
    );
    let slack = mean_of(text, "ramp.slack");
    assert!((6_000.0..6_700.0).contains(&slack), "{slack}\n{text}");
}

#[test]
fn what_is_not_modelled_is_an_error_naming_the_key() {
    let e = import(&file("mutex.json")).unwrap_err();
    assert_eq!(
        e,
        "resources.m0.type: mutex resources are not modelled (only timers)"
    );
    let cases = [
        (
            r#"{"tasks":{"a":{"loop":-1,"lock":"m0","run":10}},"global":{"duration":1}}"#,
            "tasks.a.lock: the rt-app event \"lock\" is not modelled",
        ),
        (
            r#"{"tasks":{"a":{"phases":{"p":{"loop":3,"barrier":"b","run":10}}}}}"#,
            "tasks.a.phases.p.barrier: the rt-app event \"barrier\"",
        ),
        (
            r#"{"tasks":{"a":{"loop":-1,"signal":"c","run":10}},"global":{"duration":1}}"#,
            "tasks.a.signal: the rt-app event \"signal\"",
        ),
        (
            r#"{"tasks":{"a":{"loop":1,"mem0":1000,"run":10}}}"#,
            "tasks.a.mem0: the rt-app event \"mem\"",
        ),
        (
            r#"{"tasks":{"a":{"policy":"SCHED_FIFO","run":10}}}"#,
            "tasks.a.policy: only SCHED_OTHER is modelled",
        ),
        (
            r#"{"global":{"default_policy":"SCHED_RR"},"tasks":{"a":{"run":10}}}"#,
            "global.default_policy: only SCHED_OTHER",
        ),
        (
            r#"{"global":{"frobnicate":1},"tasks":{"a":{"run":10}}}"#,
            "global.frobnicate: not a global key",
        ),
        (
            r#"{"tasks":{"a":{"loop":-1,"run":10}}}"#,
            "global.duration: a task loops forever",
        ),
        (
            r#"{"tasks":{"a":{"loop":1,"run":10,"cpus":[0,99]}}}"#,
            "workload.tasks[0].affinity (task \"a\"): cpulist",
        ),
        (
            r#"{"tasks":{"a":{"loop":1,"timer":{"ref":"t","period":10}},"b":{"loop":1,"timer":{"ref":"t","period":10}}}}"#,
            "tasks.b: timer \"t\" is also used by a",
        ),
        (
            r#"{"tasks":{"a":{"loop":1,"run":-5}}}"#,
            "tasks.a.run: -5 us is negative",
        ),
        ("{\"tasks\": {", "line 1, column 11"),
    ];
    for (json, want) in cases {
        let e = import(json).unwrap_err();
        assert!(e.starts_with(want), "{json}\n{e}");
    }
}

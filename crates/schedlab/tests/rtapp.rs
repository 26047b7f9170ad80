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
    // run, as rt-app logs it: from the activation's start of running to
    // its timer: the 2 ms and 6 ms of work, stretched by at most the SMT
    // sibling's share when the start phase lands thread0 beside a thread1
    // (select_idle_sibling keeps an idle prev CPU even on a busy core).
    let run = mean_of(text, "thread0.run");
    assert!((2_000.0..2_700.0).contains(&run), "{run}\n{text}");
    let run = mean_of(text, "thread1-0.run");
    assert!((6_000.0..8_000.0).contains(&run), "{run}\n{text}");
    // Each period is the run, the slack and the wakeup latency (~0.1 ms).
    for (task, period) in [
        ("thread0", 10_000.0),
        ("thread1-0", 16_000.0),
        ("thread1-1", 16_000.0),
    ] {
        let run = mean_of(text, &format!("{task}.run"));
        let slack = mean_of(text, &format!("{task}.slack"));
        let gap = period - run - slack;
        assert!((0.0..300.0).contains(&gap), "{task}: {gap}\n{text}");
    }
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
    // "runtime0" is rt-app's wall-time run, "run1" an amount of work.
    assert_eq!(names, ["runtime", "sleep", "compute", "timer", "mark"]);
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

/// rt-app's synchronisation events between threads: a producer signals a
/// condition variable under a mutex, a consumer waits on it; three render
/// threads meet at a barrier each frame.
#[test]
fn a_producer_consumer_and_a_barrier_import_and_run() {
    let (exp, _) = import(&file("sync.json")).unwrap();
    let Benchmark::Custom(c) = &exp.workload else {
        panic!()
    };
    let names = |ops: &serde_json::Value| -> Vec<String> {
        ops.as_array()
            .unwrap()
            .iter()
            .map(|op| op.as_object().unwrap().keys().next().unwrap().clone())
            .collect()
    };
    let consumer = serde_json::to_value(&c.tasks[1].program).unwrap();
    let body = &consumer[0]["forever"];
    assert_eq!(
        names(body),
        ["lock", "cond_wait", "unlock", "runtime", "mem"]
    );
    assert_eq!(body[1]["cond_wait"]["mutex"], "queue_mutex");
    assert_eq!(body[4]["mem"]["buffer"], 1_048_576);
    let r = run_all(&exp, &mut |_, _| true).unwrap();
    let text = &r.rows[0].text["6.12"];
    // The consumer runs once per signal it catches: up to 250 in 1 s
    // (a 4 ms producer period), each a wakeup by the producer.
    let exec_ms = |name: &str| -> f64 {
        let line = text.lines().find(|l| l.starts_with(name)).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    let consumer_ms = exec_ms("consumer");
    assert!(
        (100.0..200.0).contains(&consumer_ms),
        "{consumer_ms}\n{text}"
    );
    // The render threads keep their 16 ms frames through the barrier.
    assert!(
        (mean_of(text, "render-0.period") - 16_000.0).abs() < 100.0,
        "{text}"
    );
    assert!(r.rows[0].wakeup_latency["6.12"].wakeups > 400);
}

#[test]
fn a_lock_run_unlock_loop_imports_as_a_mutex() {
    let (exp, _) = import(&file("mutex.json")).unwrap();
    let Benchmark::Custom(c) = &exp.workload else {
        panic!()
    };
    let prog = serde_json::to_value(&c.tasks[0].program).unwrap();
    assert_eq!(prog[0]["forever"][0], serde_json::json!({"lock": "m0"}));
    assert_eq!(prog[0]["forever"][2], serde_json::json!({"unlock": "m0"}));
}

/// rt-app logs slack as the period's end less the phase's end: negative
/// when the phase overruns. A 15 ms run in a 10 ms relative period is
/// 5 ms late every time.
/// The "signed mean" slack line of a task "late" that overruns its timer.
fn late_slack(mode: &str) -> (f64, String) {
    let json = format!(
        r#"{{"tasks":{{"late":{{"loop":20,"run":15000,
        "timer":{{"ref":"unique","period":10000{mode}}}}}}}}}"#
    );
    let (exp, _) = import(&json).unwrap();
    let r = run_all(&exp, &mut |_, _| true).unwrap();
    let text = &r.rows[0].text["6.12"];
    let line = text
        .lines()
        .find(|l| l.starts_with("mark \"late.slack\": signed mean"))
        .unwrap_or_else(|| panic!("{text}"))
        .to_string();
    let signed: f64 = line
        .split("signed mean ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    (signed, line)
}

#[test]
fn an_overrunning_periodic_task_reports_negative_slack() {
    // Relative: each late period restarts from its end, 5 ms late each time.
    let (signed, line) = late_slack(r#","mode":"relative""#);
    assert!((-5_100.0..-4_990.0).contains(&signed), "{line}");
    assert!(line.contains("20 overruns"), "{line}");
    // Absolute: the reference stays, so the lateness adds up (5, 10, ... ms).
    let (absolute, line) = late_slack(r#","mode":"absolute""#);
    assert!(absolute < -40_000.0, "{line}");
    // rt-app's timers are relative unless told otherwise (doc/tutorial.txt).
    assert_eq!(late_slack("").0, signed);
}

#[test]
fn what_is_not_modelled_is_an_error_naming_the_key() {
    let cases = [
        (
            r#"{"tasks":{"a":{"loop":1,"unlock":"m0","run":10}}}"#,
            "workload.tasks[0].program[0] (task \"a\", unlock): the task does not hold mutex \"m0\"",
        ),
        (
            r#"{"tasks":{"a":{"loop":-1,"lock":"m0","run":10}},"global":{"duration":1}}"#,
            "workload.tasks[0].program[0] (task \"a\", forever): a loop body must hold the same locks at its end as at its start (holds none before an iteration, mutex \"m0\" after)",
        ),
        (
            r#"{"tasks":{"a":{"loop":1,"wait":{"ref":"c","mutex":"m"},"run":10}}}"#,
            "workload.tasks[0].program[0] (task \"a\", cond_wait): waiting on \"c\" needs its mutex \"m\" held",
        ),
        (
            r#"{"tasks":{"a":{"loop":1,"lock":"m","wait":{"ref":"c"},"unlock":"m"}}}"#,
            "tasks.a.wait.mutex: names the mutex",
        ),
        (
            r#"{"resources":{"m0":{"type":"mutex"}},"tasks":{"a":{"loop":1,"signal":"m0","run":10}}}"#,
            "tasks.a.signal: resource \"m0\" is declared as a mutex, used here as a wait",
        ),
        (
            r#"{"resources":{"d":{"type":"iodev"}},"tasks":{"a":{"loop":1,"run":10}}}"#,
            "resources.d.type: iodev resources are not modelled",
        ),
        (
            r#"{"tasks":{"a":{"loop":1,"iorun":1000,"run":10}}}"#,
            "tasks.a.iorun: the rt-app event \"iorun\" is not modelled",
        ),
        (
            r#"{"tasks":{"a":{"loop":1,"mem0":-5,"run":10}}}"#,
            "tasks.a.mem0: -5 is not a size in bytes",
        ),
        (
            r#"{"tasks":{"a":{"loop":-1,"suspend":"a","run":10}},"global":{"duration":1}}"#,
            "tasks.a.suspend: the rt-app event \"suspend\"",
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

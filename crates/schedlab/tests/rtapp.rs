//! rt-app import: files shaped like rt-app's own examples (written for these
//! tests) become experiments that run, report each task's period, slack and
//! wakeup latency; what is not modelled is an error naming the key.

mod common;

use common::machine;
use schedlab::engine::{Sim, SimConfig};
use schedlab::experiment::{run_all, Experiment};
use schedlab::policy::{Era, PolicySpec};
use schedlab::topology::HwCosts;
use schedlab::workload::bench::Benchmark;
use schedlab::workload::program::WorkloadSpec;

fn file(name: &str) -> String {
    std::fs::read_to_string(format!("{}/tests/rtapp/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn import(text: &str) -> Result<(Experiment, Vec<String>), String> {
    Experiment::from_rtapp(text, "rt-app", "desktop-8c")
        .map(|(exp, remarks)| (exp, remarks.ignored))
        .map_err(|e| e.to_string())
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
    // The delay: a clock_nanosleep to 0.5 ms after the start, where the
    // timer's periods begin.
    assert_eq!(prog[0], serde_json::json!({"until": {"ns": 500000}}));
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
    assert_eq!(heavy[3]["timer"]["origin_ns"], 500000);
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
fn what_is_not_modelled_is_an_error_naming_the_key_and_its_line() {
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
            "{\"tasks\":{\"a\":{\"loop\":1,\n \"lock\":\"m\",\"wait\":{\"ref\":\"c\"},\"unlock\":\"m\"}}}",
            "tasks.a.wait.mutex (line 2): names the mutex",
        ),
        (
            r#"{"resources":{"d":{"type":"gpu"}},"tasks":{"a":{"loop":1,"run":10}}}"#,
            "resources.d.type (line 1): not an rt-app resource type",
        ),
        (
            r#"{"tasks":{"a":{"loop":1,"memrun":{"type":"read"},"run":10}}}"#,
            "tasks.a.memrun (line 1): the memrun event is not modelled",
        ),
        (
            r#"{"tasks":{"a":{"loop":1,"mem0":-5,"run":10}}}"#,
            "tasks.a.mem0 (line 1): -5 is not a size in bytes",
        ),
        (
            r#"{"tasks":{"a":{"policy":"SCHED_BATCH","run":10}}}"#,
            "tasks.a.policy (line 1): SCHED_BATCH is not modelled",
        ),
        (
            r#"{"tasks":{"a":{"priority":150,"policy":"SCHED_RR","run":10}}}"#,
            "tasks.a.priority (line 1): 150 is not an RT priority (1..=99",
        ),
        (
            r#"{"tasks":{"a":{"priority":-30,"run":10}}}"#,
            "tasks.a.priority (line 1): -30 is not a nice value",
        ),
        (
            r#"{"tasks":{"a":{"policy":"SCHED_DEADLINE","dl-runtime":100,"run":10}}}"#,
            "tasks.a.policy (line 1): SCHED_DEADLINE is not modelled",
        ),
        (
            r#"{"tasks":{"a":{"loop":1,"phases":{"p":{"run":10,"dl-runtime":100}}}}}"#,
            "tasks.a.phases.p.dl-runtime (line 1): a phase's own scheduling parameters are not modelled",
        ),
        (
            r#"{"global":{"default_policy":"SCHED_IDLE"},"tasks":{"a":{"run":10}}}"#,
            "global.default_policy (line 1): SCHED_IDLE is not modelled",
        ),
        (
            r#"{"global":{"frobnicate":1},"tasks":{"a":{"run":10}}}"#,
            "global.frobnicate (line 1): not an rt-app global key",
        ),
        (
            r#"{"tasks":{"a":{"loop":1,"run":10,"cpus":[0,99]}}}"#,
            "workload.tasks[0].affinity (task \"a\"): cpulist",
        ),
        (
            r#"{"tasks":{"a":{"loop":1,"run":-5}}}"#,
            "tasks.a.run (line 1): -5 us is negative",
        ),
        (
            r#"{"tasks":{"a":{"loop":1,"run":"ten"}}}"#,
            "tasks.a.run (line 1): expected a whole number",
        ),
        (
            r#"{"tasks":{"a":{"loop":1,"fork":"b","run":10}}}"#,
            "tasks.a.fork (line 1): no task is named \"b\"",
        ),
        (
            r#"{"tasks":{"a":{"loop":1,"fork":"b","run":10},"b":{"loop":1,"fork":"a","run":10}}}"#,
            "tasks.a (line 1): forks itself through a -> b -> a",
        ),
        (
            r#"{"tasks":{"a":{"loop":1,"phases":{"p":{"run":10,"priority":-25}}}}}"#,
            "tasks.a.phases.p.priority (line 1): -25 is not a nice value",
        ),
        (
            r#"{"tasks":{"a":{"loop":1,"run":10,"phases":{"p":{"run":10}}}}}"#,
            "tasks.a.run (line 1): a task with phases runs only its phases' events",
        ),
        (
            r#"{"tasks":{"a":{"instance":0,"run":10}}}"#,
            "tasks (line 1): no task starts",
        ),
        (
            r#"{"tasks":{"a":{"loop":1,"slep":10}}}"#,
            "tasks.a.slep (line 1): not a task key or event",
        ),
        (
            r#"{"tasks":{"a":{"loop":1,"run":0}}}"#,
            "tasks.a (line 1): its events take no time",
        ),
        ("{\"tasks\": {", "line 1, column 12: expected a key"),
    ];
    for (json, want) in cases {
        let e = import(json).unwrap_err();
        assert!(e.starts_with(want), "{json}\n{e}");
    }
}

/// rt-app's dialect and its events as its media examples use them
/// (tests/rtapp/media.json): the file imports as json-c and workgen read
/// it, and each event does what rt-app's run_event does.
#[test]
fn a_media_pipeline_in_rt_apps_dialect_imports_and_runs_as_rt_app_runs_it() {
    let (exp, remarks) =
        Experiment::from_rtapp(&file("media.json"), "media", "desktop-8c").unwrap();
    assert!(remarks.ignored.contains(&"global.frag".to_string()));
    let notes = remarks.notes.join("\n");
    assert!(
        notes.contains(
            "tasks.mover.phases.there.taskgroup (line 47): task group \"/background\" is run flat"
        ),
        "{notes}"
    );
    let Benchmark::Custom(c) = &exp.workload else {
        panic!()
    };
    let names: Vec<&str> = c.tasks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["tick", "out", "decoder", "spawner", "mover"]);
    assert!(c.tasks.iter().all(|t| t.process == Some(1)), "one process");
    let ops = |t: usize| serde_json::to_value(&c.tasks[t].program).unwrap()[0]["forever"].clone();
    // The repeated "run" keeps its place; the bare suspend waits on the
    // task's own condition variable.
    let out = ops(1);
    assert_eq!(out[1]["cond_wait"]["cond"], "out");
    assert_eq!(out[3]["compute"]["ns"], 275_000);
    assert_eq!(out[7]["compute"]["ns"], 500_000);
    let decoder = ops(2);
    assert_eq!(decoder[4], "yield");
    assert_eq!(decoder[5]["syscalls"], 1);
    assert_eq!(decoder[6]["syscalls"], 2);

    let spec = WorkloadSpec {
        channels: Vec::new(),
        tasks: c.tasks.clone(),
    };
    let topo = machine(1, 1, 4, 1, HwCosts::default());
    let cfg = SimConfig {
        duration_ns: Some(1_000_000_000),
        check_invariants: true,
        ..SimConfig::new(topo, &PolicySpec::era(Era::V6_12), &spec).unwrap()
    };
    let run = Sim::new(&cfg).unwrap().run().unwrap();
    let woken = |name: &str| {
        let t = run.tasks.iter().find(|t| t.name == name).unwrap();
        t.wakeup_latency.count
    };
    // 166 ticks in 1 s, each resuming the output thread, which resumes the
    // decoder: no resume comes before its suspend, so none is lost.
    for who in ["out", "decoder"] {
        assert!((164..=167).contains(&woken(who)), "{who}: {}", woken(who));
    }
    assert_eq!(run.counters["sched.yield"], woken("decoder"));
    // Two forks of three loops each; the mover's 4 rounds each leave CPU 2
    // for CPU 0 and come back.
    let workers = run.tasks.iter().filter(|t| t.name == "worker").count();
    assert_eq!(workers, 2);
    let moved: u64 = run
        .counters
        .iter()
        .filter(|(k, _)| k.starts_with("migrations.affinity."))
        .map(|(_, v)| v)
        .sum();
    assert_eq!(moved, 8);
}

/// rt-app's RT policies: SCHED_FIFO and SCHED_RR tasks at their priority
/// (rt-app's default 10 when none is given), the global default policy
/// for tasks that name none; a note where priority inheritance would
/// matter.
#[test]
fn sched_fifo_and_sched_rr_tasks_import_into_the_rt_class() {
    let text = r#"{
      "global": { "default_policy": "SCHED_FIFO", "pi_enabled": true, "duration": 1 },
      "tasks": {
        "audio": { "priority": 50, "loop": -1, "run": 500, "timer": { "ref": "unique", "period": 2000 } },
        "rr": { "policy": "SCHED_RR", "loop": -1, "run": 1000, "sleep": 1000 },
        "fair": { "policy": "SCHED_OTHER", "priority": -5, "dl-runtime": 1000, "loop": -1, "run": 3000, "sleep": 1000 }
      }
    }"#;
    let (exp, remarks) = Experiment::from_rtapp(text, "rt", "desktop-8c").unwrap();
    let Benchmark::Custom(c) = &exp.workload else {
        panic!()
    };
    let rt: Vec<String> = c
        .tasks
        .iter()
        .map(|t| serde_json::to_string(&t.rt).unwrap())
        .collect();
    assert_eq!(
        rt,
        [
            r#"{"policy":"fifo","priority":50}"#,
            r#"{"policy":"rr","priority":10}"#,
            "null"
        ]
    );
    assert_eq!(c.tasks[2].nice, -5);
    // A SCHED_OTHER task's dl-runtime is its custom slice (6.12).
    assert_eq!(c.tasks[2].slice_ns, Some(1_000_000));
    assert!(
        remarks
            .notes
            .iter()
            .any(|n| n.contains("priority inheritance is not modelled")),
        "{remarks:?}"
    );
    let r = run_all(&exp, &mut |_, _| true).unwrap();
    let text = &r.rows[0].text["6.12"];
    assert!(
        (mean_of(text, "audio.period") - 2_000.0).abs() < 20.0,
        "{text}"
    );
}

/// A phase's own policy and priority apply from its start, as rt-app's
/// set_thread_param does at each phase: a priority alone keeps the policy
/// then in force, a phase with neither keeps what the last one set.
#[test]
fn a_phases_own_policy_and_priority_become_sched_setattr_at_its_start() {
    let text = r#"{
      "global": { "duration": 1 },
      "tasks": { "t": { "priority": 2, "loop": -1, "phases": {
        "quiet": { "priority": 10, "run": 1000, "sleep": 1000 },
        "rt": { "policy": "SCHED_FIFO", "run": 1000, "sleep": 1000 },
        "higher": { "priority": 60, "run": 1000, "sleep": 1000 },
        "same": { "run": 1000, "sleep": 1000 },
        "fair": { "policy": "SCHED_OTHER", "run": 1000, "sleep": 1000 }
      } } }
    }"#;
    let (exp, _) = import(text).unwrap();
    let Benchmark::Custom(c) = &exp.workload else {
        panic!()
    };
    let body = serde_json::to_value(&c.tasks[0].program).unwrap()[0]["forever"].clone();
    let set: Vec<String> = body
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|op| op.get("scheduler").map(|s| s.to_string()))
        .collect();
    assert_eq!(
        set,
        [
            r#"{"nice":10}"#,
            r#"{"rt":{"policy":"fifo","priority":10}}"#,
            r#"{"rt":{"policy":"fifo","priority":60}}"#,
            "{}"
        ]
    );
    assert_eq!(c.tasks[0].nice, 2);
    let r = run_all(&exp, &mut |_, _| true).unwrap();
    assert!(r.rows[0].values["6.12"] > 0.0);
}

//! The `schedlab` binary: output on success, one clear line and an exit
//! code by what was wrong on bad input (2 the command line and files, 3
//! machine, 4 policy, 5 workload, 6 experiment, 7 link, 8 import, 9 run).

use assert_cmd::Command;
use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};

fn schedlab() -> Command {
    Command::cargo_bin("schedlab").unwrap()
}

/// Runs and expects failure: exit code 2 (the CLI's own: arguments, files)
/// and exactly one line on stderr.
fn fails(args: &[&str]) -> String {
    fails_with(2, args)
}

/// Runs and expects failure: exit code `code` and exactly one line on stderr.
fn fails_with(code: i32, args: &[&str]) -> String {
    let out = schedlab().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(code), "{args:?}: {out:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        err.lines().count(),
        1,
        "{args:?}: one line expected, got {err:?}"
    );
    err
}

/// A file named `name` in a directory of its own; both are removed when
/// the test drops it.
struct Scratch {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<OsStr> for Scratch {
    fn as_ref(&self) -> &OsStr {
        self.path.as_os_str()
    }
}

fn temp_file(name: &str, contents: &str) -> Scratch {
    let dir = scratch_dir();
    let path = dir.path().join(name);
    std::fs::File::create(&path)
        .unwrap()
        .write_all(contents.as_bytes())
        .unwrap();
    Scratch { _dir: dir, path }
}

/// A directory of the test's own, removed when the test drops it.
fn scratch_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("schedlab-cli-test-")
        .tempdir()
        .unwrap()
}

#[test]
fn domains_prints_levels_flags_and_parameters() {
    let out = schedlab()
        .args(["domains", "ivb-ep-2s", "--era", "4.15", "--cpu", "20"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("domain0 SMT      span 0,20"), "{text}");
    assert!(text.contains("domain2 NUMA     span 0-39"), "{text}");
    assert!(
        text.contains("flags 0x642f LOAD_BALANCE|BALANCE_NEWIDLE"),
        "{text}"
    );
}

#[test]
fn domains_json_is_one_object_per_cpu() {
    let out = schedlab()
        .args(["domains", "kvm-2vcpu", "--era", "6.5", "--format", "json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["era"], "6.5");
    assert_eq!(v["cpus"].as_array().unwrap().len(), 2);
    assert_eq!(v["cpus"][1]["domains"][0]["level"], "MC");
    assert_eq!(v["cpus"][1]["domains"][0]["span"], "0-1");
}

#[test]
fn domains_reads_lscpu_and_policy_files() {
    let lscpu = temp_file(
        "box.lscpu",
        "# CPU,Core,Socket,Node\n0,0,0,0\n1,0,0,0\n2,1,0,0\n3,1,0,0\n",
    );
    let policy = temp_file(
        "p.json",
        r#"{"era":"4.15","levels":{"SMT":{"params":{"busy_factor":7}}}}"#,
    );
    let out = schedlab()
        .args([
            "domains",
            lscpu.to_str().unwrap(),
            "--policy",
            policy.to_str().unwrap(),
            "--cpu",
            "0",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("box: 4 CPUs, 1 nodes, 1 packages, 1 LLCs, 2 cores, 2 threads/core"),
        "{text}"
    );
    assert!(text.contains("busy_factor 7"), "{text}");
}

#[test]
fn bad_input_is_one_line_and_an_exit_code_by_its_part() {
    let err = fails_with(3, &["domains", "nosuchbox"]);
    assert!(
        err.contains("unknown machine preset \"nosuchbox\"; valid: phoenix-2008"),
        "{err}"
    );

    let err = fails_with(4, &["domains", "ivb-ep-2s", "--era", "3.0"]);
    assert!(
        err.contains("unknown era \"3.0\"; valid: 2.6.27, 2.6.28, 4.15, 6.5"),
        "{err}"
    );

    let err = fails(&["domains", "ivb-ep-2s", "--cpu", "40"]);
    assert!(
        err.contains("--cpu 40 is not a CPU of ivb-ep-2s (it has CPUs 0..=39)"),
        "{err}"
    );

    let lscpu = temp_file("bad.lscpu", "# CPU,Core,Socket,Node\n0,0,0,0\n1,zero,0,0\n");
    let err = fails_with(3, &["domains", lscpu.to_str().unwrap()]);
    assert!(
        err.contains("lscpu line 3: column CORE is \"zero\""),
        "{err}"
    );

    let policy = temp_file(
        "broken.json",
        "{\"era\": \"4.15\",\n \"features\": {\"WA_WEIGHT\": tru}}",
    );
    let err = fails_with(
        4,
        &["domains", "ivb-ep-2s", "--policy", policy.to_str().unwrap()],
    );
    assert!(
        err.contains("broken.json (line 2, column") && err.contains("true, false or null"),
        "{err}"
    );

    let policy = temp_file(
        "unknown.json",
        r#"{"era":"4.15","features":{"WA_WAIT":true}}"#,
    );
    let err = fails_with(
        4,
        &["domains", "ivb-ep-2s", "--policy", policy.to_str().unwrap()],
    );
    assert!(
        err.contains("unknown feature for era 4.15 \"WA_WAIT\""),
        "{err}"
    );
}

#[test]
fn run_prints_the_commit_table_and_json_is_identical_across_jobs() {
    let out = schedlab()
        .args(["run", "kvm-pipe-test-pinning"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("usecs/loop (us, lower is better)"),
        "{text}"
    );
    assert!(text.contains("% loss") || text.contains("% win"), "{text}");
    let json = |jobs: &str| {
        let out = schedlab()
            .args(["run", "retune-lat-ctx", "--format", "json", "--jobs", jobs])
            .output()
            .unwrap();
        assert!(out.status.success());
        out.stdout
    };
    let one = json("1");
    assert_eq!(one, json("4"));
    let v: serde_json::Value = serde_json::from_slice(&one).unwrap();
    assert_eq!(v["experiment"], "retune-lat-ctx");
    assert_eq!(v["metric"]["better"], "lower");
    assert_eq!(v["variants"], serde_json::json!(["2.6.27", "2.6.28"]));
    assert!(v["rows"][0]["values"]["2.6.28"].as_f64().unwrap() > 0.0);
    assert!(v["rows"][0]["text"]["2.6.27"]
        .as_str()
        .unwrap()
        .contains("size=0k ovr="));
    assert!(
        v["counters"]["2.6.28"]["wake_affine.NODE.affine"]
            .as_u64()
            .unwrap()
            > 0
    );
}

#[test]
fn presets_show_encode_decode() {
    let out = schedlab().args(["presets"]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("retune-pipe-test\n") && text.contains("waweight-tbench\n"));
    let shown = schedlab()
        .args(["show", "waweight-tbench"])
        .output()
        .unwrap()
        .stdout;
    let code = String::from_utf8(
        schedlab()
            .args(["encode", "waweight-tbench"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let decoded = schedlab()
        .args(["decode", code.trim()])
        .output()
        .unwrap()
        .stdout;
    assert_eq!(shown, decoded);
}

#[test]
fn bench_times_the_named_presets_only() {
    let out = schedlab()
        .args(["bench", "kvm-pipe-test-pinning"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<&str> = text.lines().skip(1).collect();
    assert_eq!(rows.len(), 1, "{text}");
    let fields: Vec<&str> = rows[0].split_whitespace().collect();
    assert_eq!(fields[0], "kvm-pipe-test-pinning");
    assert!(fields[1].parse::<u64>().unwrap() > 100_000, "{text}");
    let err = fails_with(6, &["bench", "no-such-preset"]);
    assert!(
        err.contains("unknown bench case or preset \"no-such-preset\""),
        "{err}"
    );
}

/// `bench --against`: this binary against itself, on a published case's
/// file, alternately: both medians, a ratio near 1, the same results.
#[test]
fn bench_against_another_binary_times_both_on_the_same_file() {
    let me = assert_cmd::cargo::cargo_bin("schedlab");
    let out = schedlab()
        .args([
            "bench",
            "kvm-pipe-test-pinning.v1",
            "--pairs",
            "2",
            "--against",
        ])
        .arg(&me)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let row = text
        .lines()
        .find(|l| l.starts_with("kvm-pipe-test-pinning.v1"))
        .unwrap_or_else(|| panic!("{text}"));
    let f: Vec<&str> = row.split_whitespace().collect();
    let (a, b, ratio): (f64, f64, f64) = (
        f[1].parse().unwrap(),
        f[2].parse().unwrap(),
        f[3].parse().unwrap(),
    );
    assert!(a > 0.0 && b > 0.0, "{row}");
    assert!(
        (ratio - a / b).abs() < 0.5 * ratio,
        "the ratio is A's over B's: {row}"
    );
    assert_eq!(
        f.last(),
        Some(&"yes"),
        "one binary prints the same results: {row}"
    );
    let err = fails(&["bench", "--against", "/no/such/schedlab"]);
    assert!(err.contains("/no/such/schedlab"), "{err}");
}

#[test]
fn bad_experiment_input_is_one_line_and_an_exit_code_by_its_part() {
    let err = fails_with(6, &["run", "no-such-preset"]);
    assert!(err.contains("unknown preset \"no-such-preset\""), "{err}");
    let truncated = temp_file(
        "truncated.json",
        "{\"version\": 1,\n  \"name\": \"x\",\n  \"machine\": ",
    );
    let err = fails_with(6, &["run", truncated.to_str().unwrap()]);
    assert!(
        err.contains("truncated.json: experiment JSON (line 3, column"),
        "{err}"
    );
    let future = temp_file("future.json", r#"{"version": 2, "name": "x"}"#);
    let err = fails_with(6, &["run", future.to_str().unwrap()]);
    assert!(err.contains("version 2 is not known"), "{err}");
    let shown = String::from_utf8(
        schedlab()
            .args(["show", "retune-pipe-test"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let bad_flag = temp_file(
        "flag.json",
        &shown.replace(
            "\"era\": \"2.6.28\"",
            "\"era\": \"2.6.28\", \"levels\": {\"MC\": {\"flags\": {\"WAKE_AFINE\": true}}}",
        ),
    );
    let err = fails_with(4, &["run", bad_flag.to_str().unwrap()]);
    assert!(
        err.contains("unknown SD flag for era 2.6.28 \"WAKE_AFINE\""),
        "{err}"
    );
    let bad_sweep = temp_file(
        "sweep.json",
        &shown.replace(
            "\"repeats\": 1",
            "\"repeats\": 1, \"sweep\": {\"param\": \"clients\", \"values\": [1]}",
        ),
    );
    let err = fails_with(5, &["run", bad_sweep.to_str().unwrap()]);
    assert!(
        err.contains("unknown parameter of this workload \"clients\""),
        "{err}"
    );
    let err = fails_with(7, &["decode", "1.not-a-real-link"]);
    assert!(err.contains("the link's code is"), "{err}");
}

#[test]
fn run_opens_playground_links_explains_and_writes_a_perfetto_trace() {
    let code = String::from_utf8(
        schedlab()
            .args(["encode", "kvm-pipe-test-pinning"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let link = format!("https://example.org/schedlab/#x={}&run", code.trim());
    let scratch = scratch_dir();
    let dir = scratch.path();
    let trace = dir.join("trace.json");
    let out = schedlab()
        .args(["run", &link, "--explain", "--trace"])
        .arg(&trace)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("usecs/loop (us, lower is better)"),
        "{text}"
    );
    assert!(
        text.trim_end()
            .ends_with("sending an IPI for 100% of its wakeups."),
        "{text}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    let events = doc["traceEvents"].as_array().unwrap();
    assert!(events.iter().any(|e| e["ph"] == "X"));
    assert!(events
        .iter()
        .any(|e| e["ph"] == "M" && e["args"]["name"] == "pinned"));

    let err = fails_with(7, &["run", "#x=1.broken"]);
    assert!(err.contains("the link: the link's code"), "{err}");
}

#[test]
fn import_rt_app_writes_an_experiment_that_runs() {
    let file = temp_file(
        "periodic.json",
        r#"{"tasks":{"t":{"loop":-1,"run":1000,"timer":{"ref":"unique","period":4000}}},
            "global":{"duration":1,"calibration":"CPU0","logdir":"./"}}"#,
    );
    let out = schedlab()
        .args(["import", "rt-app", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("global.calibration, global.logdir"), "{err}");
    let exp = temp_file("imported.json", &String::from_utf8(out.stdout).unwrap());
    let run = schedlab()
        .args(["run", exp.to_str().unwrap(), "--format", "text"])
        .output()
        .unwrap();
    let text = String::from_utf8(run.stdout).unwrap();
    assert!(text.contains("mark \"t.period\": "), "{text}");
    assert!(text.contains("mark \"t.slack\": "), "{text}");

    let lock = temp_file(
        "lock.json",
        r#"{"tasks":{"t":{"loop":1,"lock":"m","run":1000,"unlock":"m"}}}"#,
    );
    let out = schedlab()
        .args(["import", "rt-app", lock.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8(out.stdout)
        .unwrap()
        .contains(r#""lock": "m""#));

    let bad = temp_file(
        "deadline.json",
        "{\"tasks\":{\"t\":{\"loop\":1,\n\"policy\":\"SCHED_DEADLINE\",\"run\":1000}}}",
    );
    let err = fails_with(8, &["import", "rt-app", bad.to_str().unwrap()]);
    assert!(
        err.contains("tasks.t.policy (line 2): SCHED_DEADLINE is not modelled"),
        "{err}"
    );
}

/// A small sweep with repeats: 2 sweep values x 2 variants x 2 repeats.
fn small_sweep(file: &str) -> Scratch {
    let shown = String::from_utf8(
        schedlab()
            .args(["show", "retune-lat-ctx"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let exp = shown
        .replace("\"rounds\": 20000", "\"rounds\": 2000")
        .replace(
            "\"repeats\": 1",
            "\"repeats\": 2, \"sweep\": {\"param\": \"procs\", \"values\": [2, 4]}",
        );
    assert_ne!(exp, shown);
    temp_file(file, &exp)
}

#[test]
fn three_shards_merged_equal_the_unsharded_run_in_every_format() {
    let exp = small_sweep("small-sweep.json");
    let exp = exp.to_str().unwrap();
    let scratch = scratch_dir();
    let dir = scratch.path();
    let mut parts = Vec::new();
    for i in 1..=3 {
        let out = schedlab()
            .args(["run", exp, "--jobs", "1", "--shard", &format!("{i}/3")])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let part = dir.join(format!("part-{i}.json"));
        std::fs::write(&part, &out.stdout).unwrap();
        parts.push(part.to_str().unwrap().to_string());
    }
    // 8 points dealt round-robin: 3, 3 and 2.
    let held = |p: &str| {
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
        v["outcomes"].as_array().unwrap().len()
    };
    assert_eq!(parts.iter().map(|p| held(p)).collect::<Vec<_>>(), [3, 3, 2]);
    for format in ["json", "csv", "text", "table"] {
        let whole_trace = dir.join(format!("whole-{format}.trace"));
        let merged_trace = dir.join(format!("merged-{format}.trace"));
        let whole = schedlab()
            .args(["run", exp, "--explain", "--format", format, "--trace"])
            .arg(&whole_trace)
            .output()
            .unwrap();
        assert!(whole.status.success(), "{whole:?}");
        // Parts in any order.
        let merged = schedlab()
            .args(["merge", &parts[2], &parts[0], &parts[1]])
            .args(["--explain", "--format", format, "--trace"])
            .arg(&merged_trace)
            .output()
            .unwrap();
        assert!(merged.status.success(), "{merged:?}");
        assert!(!whole.stdout.is_empty());
        assert_eq!(
            String::from_utf8(whole.stdout).unwrap(),
            String::from_utf8(merged.stdout).unwrap(),
            "{format}"
        );
        assert_eq!(
            std::fs::read(&whole_trace).unwrap(),
            std::fs::read(&merged_trace).unwrap()
        );
    }

    let err = fails(&["merge", &parts[0], &parts[2]]);
    assert!(
        err.contains("shard 2/3 is missing (given 2 of 3 parts)"),
        "{err}"
    );
    let err = fails(&["merge", &parts[0], &parts[1], &parts[1], &parts[2]]);
    assert!(
        err.contains("shard 2/3 is given twice: ") && err.contains("part-2.json"),
        "{err}"
    );
    let other = dir.join("other-seed.json");
    let out = schedlab()
        .args(["run", exp, "--seed", "7", "--shard", "3/3"])
        .output()
        .unwrap();
    std::fs::write(&other, &out.stdout).unwrap();
    let err = fails(&["merge", &parts[0], &parts[1], other.to_str().unwrap()]);
    assert!(
        err.contains("other-seed.json is a part of another experiment than")
            && err.contains("part-1.json"),
        "{err}"
    );
    let halves = dir.join("half.json");
    let out = schedlab()
        .args(["run", exp, "--shard", "2/2"])
        .output()
        .unwrap();
    std::fs::write(&halves, &out.stdout).unwrap();
    let err = fails(&["merge", &parts[0], halves.to_str().unwrap()]);
    assert!(
        err.contains("half.json is shard 2/2 but") && err.contains("part-1.json is shard 1/3"),
        "{err}"
    );
    let edited = dir.join("edited.json");
    std::fs::write(
        &edited,
        std::fs::read_to_string(&parts[0])
            .unwrap()
            .replace("\"seed\": 1", "\"seed\": 2"),
    )
    .unwrap();
    let err = fails(&["merge", edited.to_str().unwrap()]);
    assert!(
        err.contains("edited.json: its experiment does not match"),
        "{err}"
    );
    let err = fails(&["merge", exp]);
    assert!(err.contains("small-sweep.json: not a part file"), "{err}");

    let err = fails(&["run", exp, "--shard", "0/3"]);
    assert!(
        err.contains("--shard \"0/3\": I must be between 1 and N (1/3 to 3/3)"),
        "{err}"
    );
    let err = fails(&["run", exp, "--shard", "4/3"]);
    assert!(
        err.contains("--shard \"4/3\": I must be between 1 and N"),
        "{err}"
    );
    let err = fails(&["run", exp, "--shard", "1of3"]);
    assert!(err.contains("--shard \"1of3\": expected I/N"), "{err}");
}

#[test]
fn estimate_says_about_how_long_from_a_measured_rate_and_runs_nothing_else() {
    let exp = small_sweep("estimated.json");
    let out = schedlab()
        .args(["run", exp.to_str().unwrap(), "--estimate", "--jobs", "1"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    // The seconds depend on the machine; the sentence's shape does not.
    let line = text.trim_end();
    assert!(
        line.starts_with("about ") || line.starts_with("under a second"),
        "{text}"
    );
    assert!(
        line.contains(" for 8 points on 1 thread (measured on the start of the run: ")
            && line.ends_with(" M events/s per thread)"),
        "{text}"
    );
    let out = schedlab()
        .args(["run", exp.to_str().unwrap(), "--estimate", "--jobs", "2"])
        .args(["--shard", "3/3"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains(" for 2 points on 2 threads "), "{text}");
}

/// A scheduler trace recorded on this machine: its figures, its replay
/// beside it, and an experiment that `run` takes; a file that is no trace
/// is an import error naming its line.
#[test]
fn trace_stats_import_and_check_read_a_recorded_trace() {
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../schedlab/tests/traces/pipe-pingpong.txt.gz"
    );
    let out = schedlab()
        .args(["trace", "stats", fixture])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(
        table.lines().nth(1).unwrap().starts_with("sched-pipe"),
        "{table}"
    );
    assert!(table.contains("idle per CPU"), "{table}");

    let out = schedlab()
        .args(["trace", "check", fixture, "--machine", "kvm-2vcpu"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let check = String::from_utf8(out.stdout).unwrap();
    assert!(check.contains("replay/recording: cpu time"), "{check}");

    let exp = temp_file("pingpong.json", "");
    let out = schedlab()
        .args(["trace", "import", fixture, "--machine", "kvm-2vcpu", "-o"])
        .arg(&exp)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8(out.stderr).unwrap().contains("tasks"));
    let out = schedlab()
        .args(["run", exp.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");

    let bad = temp_file(
        "not-a-trace.txt",
        "x 1 [000] 1.5: sched:sched_waking: comm=y pid=z\n",
    );
    let err = fails_with(8, &["trace", "stats", bad.to_str().unwrap()]);
    assert!(err.contains("line 1") && err.contains("\"z\""), "{err}");
}

#[test]
fn why_prints_each_decision_as_a_tree_and_json_for_tools() {
    let args = [
        "why",
        "retune-pipe-test",
        "--variant",
        "2.6.28",
        "--kind",
        "wakeup",
        "--from",
        "0.06ms",
        "--to",
        "0.07ms",
    ];
    let out = schedlab().args(args).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("wakeup of parent (#0) from CPU 1  -> CPU 1 (wake_affine)"),
        "{text}"
    );
    assert!(text.contains("\n    this_sd (lowest domain"), "{text}");
    assert!(text.contains("        NODE: SD_WAKE_AFFINE set"), "{text}");
    let out = schedlab().args(args).arg("--json").output().unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let first = &json["decisions"][0];
    assert_eq!(first["kind"], "wakeup");
    assert_eq!(first["steps"][0]["func"], "select_task_rq_fair");
    assert_eq!(first["outcome"]["cpu"], 1);
    // The limit stops the run and says so.
    let out = schedlab()
        .args(["why", "retune-pipe-test", "--limit", "2", "--to", "1s"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("2 decisions of variant 2.6.27"), "{text}");
    assert!(
        text.contains("The limit of 2 records was reached"),
        "{text}"
    );
}

#[test]
fn diverge_reports_where_the_variants_part() {
    let out = schedlab()
        .args(["diverge", "retune-pipe-test", "--kind", "wakeup"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("A and B part at 0.064670 ms"), "{text}");
    assert!(
        text.contains(
            "traces back to the policy difference NODE SD_WAKE_AFFINE: off in A, on in B"
        ),
        "{text}"
    );
}

#[test]
fn why_and_diverge_refuse_bad_arguments_in_words() {
    let err = fails(&["why", "retune-pipe-test", "--variant", "C"]);
    assert!(
        err.contains("no variant C: the experiment's variants are A (2.6.27), B (2.6.28)"),
        "{err}"
    );
    let err = fails(&["why", "retune-pipe-test", "--from", "10"]);
    assert!(
        err.contains("--from: \"10\" needs a unit: ns, us, ms or s"),
        "{err}"
    );
    let err = fails(&["why", "retune-pipe-test", "--from", "2ms", "--to", "1ms"]);
    assert!(err.contains("must be after --from"), "{err}");
    let err = fails(&["why", "retune-pipe-test", "--task", "nobody"]);
    assert!(err.contains("--task nobody: no task of this run"), "{err}");
    assert!(err.contains("parent, child"), "{err}");
    let err = fails(&["why", "retune-pipe-test", "--limit", "0"]);
    assert!(err.contains("--limit must be from 1 to 100000"), "{err}");
    let err = fails(&["diverge", "retune-pipe-test", "--a", "B", "--b", "2"]);
    assert!(err.contains("name the same variant"), "{err}");
    let err = fails(&["diverge", "retune-pipe-test", "--x", "2"]);
    assert!(
        err.contains("--x 2: the experiment has 1 sweep value(s)"),
        "{err}"
    );
}

//! docs/workloads.md: every JSON example parses as what it shows (an
//! experiment, a channel, a task or an instruction), and the worked
//! examples run.

use schedlab::experiment::{run_all, Experiment};
use schedlab::workload::program::{ChannelSpec, Op, TaskSpec};

fn json_blocks() -> Vec<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/workloads.md");
    let text = std::fs::read_to_string(path).unwrap();
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        match (&mut current, line.trim_start()) {
            (None, "```json") => current = Some(String::new()),
            (Some(b), "```") => {
                blocks.push(std::mem::take(b));
                current = None;
            }
            (Some(b), _) => {
                b.push_str(line);
                b.push('\n');
            }
            _ => {}
        }
    }
    blocks
}

#[test]
fn every_example_in_the_workload_reference_parses_and_the_worked_ones_run() {
    let blocks = json_blocks();
    let mut instructions = Vec::new();
    let mut experiments = 0;
    for b in &blocks {
        let v: serde_json::Value = serde_json::from_str(b).unwrap_or_else(|e| panic!("{e}\n{b}"));
        if v.get("version").is_some() {
            let exp = Experiment::from_json(b).unwrap_or_else(|e| panic!("{e}\n{b}"));
            let r = run_all(&exp, &mut |_, _| true).unwrap();
            for label in &r.variants {
                assert!(r.rows[0].values[label] > 0.0, "{}: {label}", exp.name);
                assert!(r.rows[0].wakeup_latency[label].wakeups > 0);
            }
            experiments += 1;
        } else if v.get("kind").is_some() {
            serde_json::from_value::<ChannelSpec>(v).unwrap();
        } else if v.get("program").is_some() {
            serde_json::from_value::<TaskSpec>(v).unwrap();
        } else {
            let op: Op = serde_json::from_value(v).unwrap_or_else(|e| panic!("{e}\n{b}"));
            instructions.push(op.name());
        }
    }
    assert_eq!(experiments, 4);
    // Every instruction has its example.
    instructions.sort_unstable();
    assert_eq!(
        instructions,
        [
            "affinity",
            "barrier",
            "broadcast",
            "compute",
            "cond_wait",
            "forever",
            "fork",
            "lap",
            "lock",
            "log_append",
            "log_flush",
            "loop",
            "lw_acquire",
            "lw_release",
            "mark",
            "mem",
            "read",
            "runtime",
            "scheduler",
            "sem_post",
            "sem_wait",
            "signal",
            "sleep",
            "spin_lock",
            "syscalls",
            "timer",
            "unlock",
            "until",
            "write",
            "yield"
        ]
    );
}

//! How long a benchmark's child takes to exit, measured from a scheduler
//! trace of the tool itself (`perf sched record`), for `schedlab
//! validate`'s simulated hackbench and messaging runs.
//!
//! Both tools stop their clock only after reaping every child, so each
//! child's exit is inside the time they print. What an exit costs is a
//! property of the tool's process on the machine: a perf child runs perf's
//! exit handlers (its libraries' destructors, each page they write a
//! copy-on-write fault) and tears down perf's large address space, a
//! hackbench child little of either, a thread neither. The probe runs the
//! tool with one group and one loop, so that a child's last run is its
//! last message and its exit, and takes the median over the children of a
//! few runs of that run: from its last switch in to its switch out as a
//! zombie (`prev_state` Z, or X for a thread reaped at once). A child
//! preempted in its exit shows only the exit's end; the median over ~120
//! children is the typical one.

use std::collections::HashMap;
use std::process::{Command, Stdio};

/// A child's exit as the probe measured it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ExitCost {
    /// The tool's command line the probe traced.
    pub command: String,
    /// The median child's last run, microseconds.
    pub exit_us: u64,
    /// Children whose exit a trace held (the tool's own process among them).
    pub children: usize,
}

/// The last run of every task named `comm` that the trace (`perf sched
/// script`'s text) shows dying, in nanoseconds, in the order they died.
pub fn last_runs_of_dying(script: &str, comm: &str) -> Vec<u64> {
    let mut switched_in: HashMap<u32, u64> = HashMap::new();
    let mut runs = Vec::new();
    for line in script.lines() {
        let Some(sw) = Switch::parse(line) else {
            continue;
        };
        if sw.prev_comm == comm && (sw.prev_state.starts_with('Z') || sw.prev_state == "X") {
            if let Some(&t) = switched_in.get(&sw.prev_pid) {
                runs.push(sw.ns - t);
            }
        }
        switched_in.insert(sw.next_pid, sw.ns);
    }
    runs
}

/// One `sched:sched_switch` line of `perf sched script`.
struct Switch<'a> {
    ns: u64,
    prev_comm: &'a str,
    prev_pid: u32,
    prev_state: &'a str,
    next_pid: u32,
}

impl<'a> Switch<'a> {
    fn parse(line: &'a str) -> Option<Switch<'a>> {
        let (head, fields) = line.split_once("sched:sched_switch:")?;
        // "comm pid [cpu] seconds.micros:" before the event's name.
        let stamp = head.trim_end().trim_end_matches(':');
        let secs = stamp.rsplit(char::is_whitespace).next()?;
        let (whole, frac) = secs.split_once('.')?;
        let frac_ns: u64 = format!("{frac:0<9}").get(..9)?.parse().ok()?;
        let ns = whole.parse::<u64>().ok()? * 1_000_000_000 + frac_ns;
        let (prev, next) = fields.split_once("==>")?;
        let field = |part: &'a str, key: &str| -> Option<&'a str> {
            let at = part.find(key)? + key.len();
            let rest = &part[at..];
            // A comm may hold spaces: it runs to the next field's key.
            let end = [
                " prev_pid=",
                " prev_prio=",
                " next_pid=",
                " next_prio=",
                " prev_state=",
            ]
            .iter()
            .filter_map(|k| rest.find(k))
            .min()
            .unwrap_or(rest.trim_end().len());
            Some(rest[..end].trim())
        };
        Some(Switch {
            ns,
            prev_comm: field(prev, "prev_comm=")?,
            prev_pid: field(prev, "prev_pid=")?.parse().ok()?,
            prev_state: field(prev, "prev_state=")?,
            next_pid: field(next, "next_pid=")?.parse().ok()?,
        })
    }
}

/// Traces of the probe: each one's children pooled, so that one trace
/// whose exits met other work does not decide the median.
const TRACES: usize = 3;

/// Traces `tool args` with `perf sched record` [`TRACES`] times and returns
/// the median child's exit. `comm` is the name the children run under.
pub fn measure(tool: &str, args: &[&str], comm: &str) -> Result<ExitCost, String> {
    let command = format!("{tool} {}", args.join(" "));
    let mut runs = Vec::new();
    for _ in 0..TRACES {
        let script = trace(tool, args, &command)?;
        runs.extend(last_runs_of_dying(&script, comm));
    }
    if runs.is_empty() {
        return Err(format!(
            "the trace of {command} shows no {comm} task exiting"
        ));
    }
    runs.sort_unstable();
    Ok(ExitCost {
        exit_us: runs[runs.len() / 2].div_ceil(1000),
        children: runs.len() / TRACES,
        command,
    })
}

/// `perf sched script`'s text of one run of `tool args`.
fn trace(tool: &str, args: &[&str], command: &str) -> Result<String, String> {
    let data = std::env::temp_dir().join(format!("schedlab-exits-{}.data", std::process::id()));
    let data_arg = data.to_string_lossy().to_string();
    let recorded = Command::new("perf")
        .args(["sched", "record", "-q", "-o", &data_arg, "--", tool])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("perf sched record: {e}"))?;
    let script = if recorded.status.success() {
        Command::new("perf")
            .args(["sched", "script", "-i", &data_arg])
            .stderr(Stdio::null())
            .output()
            .map_err(|e| format!("perf sched script: {e}"))
            .map(|out| String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "perf sched record -- {command}: {}",
            String::from_utf8_lossy(&recorded.stderr).trim()
        ))
    };
    let _ = std::fs::remove_file(&data);
    script
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines as perf sched script prints them (perf 6.x), trimmed to the
    /// switches and one other event.
    const SCRIPT: &str = "\
 sched-messaging 22863 [001]  2277.619973:       sched:sched_switch: prev_comm=sched-messaging prev_pid=22863 prev_prio=120 prev_state=R ==> next_comm=sched-messaging next_pid=22824 next_prio=120
 sched-messaging 22824 [001]  2277.619993:       sched:sched_switch: prev_comm=sched-messaging prev_pid=22824 prev_prio=120 prev_state=R ==> next_comm=sched-messaging next_pid=22822 next_prio=120
 sched-messaging 22822 [001]  2277.620004:       sched:sched_switch: prev_comm=sched-messaging prev_pid=22822 prev_prio=120 prev_state=S ==> next_comm=sched-messaging next_pid=22824 next_prio=120
 sched-messaging 22824 [001]  2277.620994:       sched:sched_waking: comm=sched-messaging pid=22822 prio=120 target_cpu=000
 sched-messaging 22824 [001]  2277.621015:       sched:sched_switch: prev_comm=sched-messaging prev_pid=22824 prev_prio=120 prev_state=Z ==> next_comm=kworker/0:1 H next_pid=22863 next_prio=120
         swapper     0 [000]  2277.700000:       sched:sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=bash next_pid=900 next_prio=120
            bash   900 [000]  2277.700500:       sched:sched_switch: prev_comm=bash prev_pid=900 prev_prio=120 prev_state=Z ==> next_comm=swapper/0 next_pid=0 next_prio=120
 sched-messaging 22863 [001]  2277.800000:       sched:sched_switch: prev_comm=sched-messaging prev_pid=22863 prev_prio=120 prev_state=X ==> next_comm=swapper/1 next_pid=0 next_prio=120
";

    #[test]
    fn a_dying_childs_last_run_is_from_its_last_switch_in() {
        // 22824: in at .620004, out as a zombie at .621015; 22863: in at
        // .621015 (after the comm with a space), out dead at .800000; bash
        // is another command.
        assert_eq!(
            last_runs_of_dying(SCRIPT, "sched-messaging"),
            vec![1_011_000, 178_985_000]
        );
        assert_eq!(last_runs_of_dying(SCRIPT, "bash"), vec![500_000]);
        assert!(last_runs_of_dying(SCRIPT, "hackbench").is_empty());
    }

    #[test]
    fn a_task_that_was_never_seen_switching_in_gives_no_run() {
        let only_exit = SCRIPT.lines().nth(4).unwrap();
        assert!(last_runs_of_dying(only_exit, "sched-messaging").is_empty());
        assert!(last_runs_of_dying("not a trace\n\n", "sched-messaging").is_empty());
    }
}

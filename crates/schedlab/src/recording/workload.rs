//! A recording's timelines as an ordinary workload in the task language:
//! each task computes what it ran, posts the semaphore of each task it
//! woke at the point of its work where it woke it, forks its children
//! where it forked them, and waits on its own semaphore where a task of
//! the trace woke it. Where something outside the trace's tasks woke it
//! (an interrupt, a timer), a regular sleep (one of a task's periodic
//! ones) replays as a timed sleep, any other as an arrival at its
//! recorded time from the task's start (`until`). The recorded placement
//! is not replayed: the simulated policy places.

use super::timeline::{Recording, Step, Task};
use crate::topology::HwCosts;
use crate::workload::program::{Op, RtPolicy, RtSpec, SemSpec, TaskSpec, Time, WorkloadSpec};

/// What the recording machine's kernel spent inside each run slice on the
/// mechanisms the simulation charges itself: the switch that began the
/// slice and the waker's part of each wakeup. Taken off the recorded runs,
/// so that a replay charges them once, at the replaying machine's costs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Overheads {
    pub switch_ns: u64,
    pub wakeup_ns: u64,
}

impl Overheads {
    /// The recording machine's costs (a process switch: the trace does
    /// not always say which tasks share an address space).
    pub fn of(costs: &HwCosts) -> Overheads {
        Overheads {
            switch_ns: costs.context_switch_ns,
            wakeup_ns: costs.wakeup_ns,
        }
    }
}

/// Per-CPU kernel threads, pinned to their CPU as the kernel pins them
/// (`migration/3`, `ksoftirqd/3`, `kworker/3:1`; `kworker/u8:2` is not).
pub fn per_cpu_kthread(comm: &str) -> Option<usize> {
    let (name, rest) = comm.split_once('/')?;
    let pinned = matches!(
        name,
        "migration" | "ksoftirqd" | "cpuhp" | "idle_inject" | "watchdog" | "rcuc" | "kworker"
    );
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let tail = &rest[digits.len()..];
    (pinned && !digits.is_empty() && (tail.is_empty() || tail.starts_with(':')))
        .then(|| digits.parse().ok())
        .flatten()
}

/// The task's name in the workload: its comm and id, and its incarnation
/// after the first.
pub fn task_name(t: &Task) -> String {
    match t.incarnation {
        0 => format!("{}-{}", t.comm, t.tid),
        n => format!("{}-{}.{n}", t.comm, t.tid),
    }
}

fn wake_sem(t: &Task) -> String {
    format!("wake.{}", task_name(t))
}

/// A CFS priority as a nice value (an RT task's is unused: 0).
fn nice(prio: Option<i32>) -> i8 {
    match prio {
        Some(p) if p < 100 => 0,
        Some(p) => (p - 120).clamp(-20, 19) as i8,
        None => 0,
    }
}

/// A priority below 100 as the RT class: SCHED_FIFO (the switch events
/// give the priority, not the policy; the kernel's own RT threads, such
/// as migration/N and irq threads, are FIFO) at rt_priority 99 - prio.
fn rt(prio: Option<i32>) -> Option<RtSpec> {
    let p = prio.filter(|&p| p < 100)?;
    Some(RtSpec {
        policy: RtPolicy::Fifo,
        priority: (99 - p).clamp(1, 99) as u8,
    })
}

/// A waker that sleeps within this much of its own run after a wakeup
/// woke as a pipe or socket write does, with WF_SYNC (the trace does not
/// say; the write-then-read of a ping-pong is a few microseconds).
pub const SYNC_WINDOW_NS: u64 = 20_000;

/// Whether the wakeup at `steps[at]` is sync: its waker sleeps after at
/// most [`SYNC_WINDOW_NS`] of run.
fn is_sync(steps: &[Step], at: usize) -> bool {
    let mut ran = 0;
    for step in &steps[at + 1..] {
        match *step {
            Step::Run { ns, .. } => ran += ns,
            Step::Wake(_) => {}
            Step::Block | Step::Sleep { .. } => return ran <= SYNC_WINDOW_NS,
            Step::Fork(_) => return false,
        }
        if ran > SYNC_WINDOW_NS {
            return false;
        }
    }
    false
}

/// A run's demand net of the mechanisms the simulation charges: its
/// switch-ins and the wakeups that follow it.
fn net_demand(steps: &[Step], at: usize, ns: u64, slices: u32, o: Overheads) -> u64 {
    let wakes = steps[at + 1..]
        .iter()
        .take_while(|s| matches!(s, Step::Wake(_)))
        .count() as u64;
    ns.saturating_sub(u64::from(slices) * o.switch_ns + wakes * o.wakeup_ns)
}

/// A task sleeps periodically when at least this many of its external
/// sleeps, and at least half of them, are within
/// [`PERIODIC_TOLERANCE_PCT`] of their median (a timer's period, give or
/// take the wakeup's latency).
const PERIODIC_SLEEPS: usize = 3;
const PERIODIC_TOLERANCE_PCT: u64 = 10;

fn near(ns: u64, period: u64) -> bool {
    ns.abs_diff(period) * 100 <= period * PERIODIC_TOLERANCE_PCT
}

/// The period of a task's external sleeps, if it sleeps periodically.
fn periodic_sleep(t: &Task) -> Option<u64> {
    let mut sleeps: Vec<u64> = t
        .steps
        .iter()
        .filter_map(|s| match *s {
            Step::Sleep { ns, .. } if ns > 0 => Some(ns),
            _ => None,
        })
        .collect();
    if sleeps.len() < PERIODIC_SLEEPS {
        return None;
    }
    let mid = sleeps.len() / 2;
    let median = *sleeps.select_nth_unstable(mid).1;
    let periodic = sleeps.iter().filter(|&&ns| near(ns, median)).count();
    (periodic >= PERIODIC_SLEEPS && 2 * periodic >= sleeps.len()).then_some(median)
}

/// An external wakeup as an instruction: one of the task's periodic
/// sleeps as the sleep it was, any other as an arrival at its recorded
/// time from the task's start.
fn external_sleep(ns: u64, until: u64, period: Option<u64>) -> Op {
    match period {
        Some(p) if near(ns, p) => Op::Sleep(Time::fixed(ns)),
        _ => Op::Until(Time::fixed(until)),
    }
}

fn spec(rec: &Recording, i: usize, o: Overheads) -> TaskSpec {
    let t = &rec.tasks[i];
    let period = periodic_sleep(t);
    let mut program = Vec::with_capacity(t.steps.len());
    for (at, step) in t.steps.iter().enumerate() {
        match *step {
            Step::Run { ns, slices } => match net_demand(&t.steps, at, ns, slices, o) {
                0 => {}
                net => program.push(Op::Compute(Time::fixed(net))),
            },
            Step::Wake(w) => program.push(Op::SemPost(SemSpec {
                sem: wake_sem(&rec.tasks[w]),
                sync: is_sync(&t.steps, at),
                free: true,
            })),
            Step::Fork(c) => program.push(Op::Fork(Box::new(spec(rec, c, o)))),
            Step::Block => program.push(Op::SemWait(SemSpec {
                sem: wake_sem(t),
                sync: false,
                free: true,
            })),
            Step::Sleep { ns, until } if ns > 0 => program.push(external_sleep(ns, until, period)),
            Step::Sleep { .. } => {}
        }
    }
    TaskSpec {
        name: task_name(t),
        nice: nice(t.prio),
        affinity: per_cpu_kthread(&t.comm).map(|c| c.to_string()),
        process: t.pid,
        working_set_kib: 0,
        start_cpu: None,
        rt: rt(t.prio),
        slice_ns: None,
        program,
    }
}

/// The workload: every task the trace did not see forked starts at time
/// 0 (the trace's start); forked ones start where their parent forked
/// them. Tasks that did nothing replayable are left out. `recorded_on`
/// is the overhead taken off each run ([`Overheads`]).
pub fn workload(rec: &Recording, recorded_on: Overheads) -> WorkloadSpec {
    let tasks = (0..rec.tasks.len())
        .filter(|&i| rec.tasks[i].forked_by.is_none())
        .filter(|&i| !rec.tasks[i].steps.is_empty())
        .map(|i| spec(rec, i, recorded_on))
        .collect();
    WorkloadSpec {
        channels: Vec::new(),
        tasks,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_cpu_kernel_threads_are_known_by_name() {
        assert_eq!(per_cpu_kthread("migration/3"), Some(3));
        assert_eq!(per_cpu_kthread("kworker/12:1H"), Some(12));
        assert_eq!(per_cpu_kthread("ksoftirqd/0"), Some(0));
        assert_eq!(per_cpu_kthread("kworker/u8:2"), None);
        assert_eq!(per_cpu_kthread("rcu_preempt"), None);
        assert_eq!(per_cpu_kthread("my/3"), None);
    }

    #[test]
    fn a_wakeup_is_sync_when_its_waker_sleeps_soon_after() {
        use Step::*;
        let run = |ns| Run { ns, slices: 1 };
        let steps = [run(5_000), Wake(1), run(3_000), Wake(2), run(1_000), Block];
        assert!(is_sync(&steps, 1));
        assert!(is_sync(&steps, 3));
        let steps = [Wake(1), run(SYNC_WINDOW_NS + 1), Block];
        assert!(!is_sync(&steps, 0));
        assert!(!is_sync(&[Wake(1), Fork(2), Block], 0));
        assert!(!is_sync(&[Wake(1), run(10)], 0));
    }

    #[test]
    fn the_demand_is_net_of_each_switch_in_and_the_wakeups_that_follow() {
        use Step::*;
        let o = Overheads {
            switch_ns: 1_000,
            wakeup_ns: 300,
        };
        let steps = [
            Run {
                ns: 10_000,
                slices: 2,
            },
            Wake(1),
            Wake(2),
            Block,
        ];
        assert_eq!(net_demand(&steps, 0, 10_000, 2, o), 10_000 - 2_000 - 600);
        assert_eq!(net_demand(&steps, 0, 1_500, 2, o), 0);
        assert_eq!(net_demand(&[Run { ns: 5, slices: 0 }], 0, 5, 0, o), 5);
    }

    #[test]
    fn nice_follows_the_cfs_priority() {
        assert_eq!(nice(Some(120)), 0);
        assert_eq!(nice(Some(100)), -20);
        assert_eq!(nice(Some(139)), 19);
        assert_eq!(nice(None), 0);
    }

    #[test]
    fn a_priority_below_100_is_the_rt_class_at_99_minus_it() {
        assert_eq!(rt(Some(120)), None);
        let fifo = |priority| {
            Some(RtSpec {
                policy: RtPolicy::Fifo,
                priority,
            })
        };
        // migration/N: prio 0, rt_priority 99; an irq thread at 50: prio 49.
        assert_eq!(rt(Some(0)), fifo(99));
        assert_eq!(rt(Some(49)), fifo(50));
        assert_eq!(rt(Some(98)), fifo(1));
    }
}

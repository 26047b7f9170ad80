//! The RT class's placement (kernel/sched/rt.c, cpupri.c): where an RT
//! task goes: select_task_rq_rt at a wakeup or fork, find_lowest_rq over
//! the CPUs' priorities (cpupri), push_rt_task when a CPU holds more RT
//! tasks than it runs, pull_rt_task when a CPU's RT priority drops, and
//! RT_RUNTIME_SHARE's borrowing of runtime. The queues are `rt_rq`.
//!
//! A CPU without RT tasks counts as below every RT priority
//! (CPUPRI_NORMAL: idle CPUs too, as nothing sets CPUPRI_IDLE).

use super::env::SchedEnv;
use super::rt_rq::{MAX_RT_PRIO, RT_PERIOD_NS};
use super::wakeup::select_fallback_rq;
use crate::counters::Reason;
use crate::cpuset::CpuSet;
use crate::policy::{Generation, SdFlag};

/// The task running on `cpu`, of either class.
pub fn cpu_curr(env: &impl SchedEnv, cpu: usize) -> Option<usize> {
    env.rt_rq(cpu).curr.or(env.rq(cpu).curr)
}

/// The RT priority of the task running on `cpu` (MAX_RT_PRIO when it is
/// not an RT task, or none runs).
fn curr_prio(env: &impl SchedEnv, cpu: usize) -> u8 {
    env.rt_rq(cpu).curr.map_or(MAX_RT_PRIO, |t| prio(env, t))
}

fn prio(env: &impl SchedEnv, task: usize) -> u8 {
    env.task(task).rt.map_or(MAX_RT_PRIO, |r| r.prio)
}

/// select_task_rq_rt at a wakeup or fork: stay on the task's CPU unless an
/// RT task runs there that it should not wait behind or preempt.
/// v2.6.28: any RT task running there sends a task that may move to
/// find_lowest_rq. v4.15, v6.x: only one that cannot move or whose
/// priority is at least the task's, and the lowest CPU is taken only if
/// the task would run there at once (its priority above that CPU's best).
pub fn select_task_rq_rt(env: &mut impl SchedEnv, task: usize, this_cpu: usize) -> (usize, Reason) {
    let (cpu, reason) = select(env, task, this_cpu);
    if env.allowed(task).contains(cpu) {
        return (cpu, reason);
    }
    let prev = env.task_cpu(task);
    (
        select_fallback_rq(env, task, prev),
        Reason::AffinityFallback,
    )
}

fn select(env: &mut impl SchedEnv, task: usize, this_cpu: usize) -> (usize, Reason) {
    let cpu = env.task_cpu(task);
    let p = prio(env, task);
    let stay = (cpu, Reason::Prev);
    let Some(curr) = env.rt_rq(cpu).curr else {
        return stay;
    };
    if env.policy().era.rules().generation == Generation::Legacy {
        if env.allowed(task).len() < 2 {
            return stay;
        }
        return match find_lowest_rq(env, task, this_cpu) {
            Some(c) => (c, Reason::RtLowest),
            None => stay,
        };
    }
    if env.allowed(curr).len() >= 2 && prio(env, curr) > p {
        return stay;
    }
    match find_lowest_rq(env, task, this_cpu) {
        Some(c) if p < env.rt_rq(c).highest_prio() => (c, Reason::RtLowest),
        _ => stay,
    }
}

/// cpupri_find: the CPUs of the lowest priority level (no RT task counts
/// lowest) below the task's priority that it may run on, if any.
fn lowest_mask(env: &impl SchedEnv, task: usize) -> Option<CpuSet> {
    let p = prio(env, task);
    let allowed = *env.allowed(task);
    let mut best: Option<(u8, CpuSet)> = None;
    for c in allowed.iter() {
        // A CPU's priority is its queue's best (rt_rq->highest_prio.curr).
        let level = env.rt_rq(c).highest_prio();
        if level <= p {
            continue;
        }
        match &mut best {
            Some((l, set)) if *l == level => set.insert(c),
            Some((l, _)) if *l > level => {}
            _ => best = Some((level, std::iter::once(c).collect())),
        }
    }
    best.map(|(_, set)| set)
}

/// find_lowest_rq: of the lowest CPUs, the task's own; else, walking its
/// CPU's domains up from the lowest with SD_WAKE_AFFINE, this CPU if the
/// domain holds it, else one of the domain's (the first; v6.x spreads the
/// choice, cpumask_any_and_distribute); else this CPU; else any of them.
pub fn find_lowest_rq(env: &mut impl SchedEnv, task: usize, this_cpu: usize) -> Option<usize> {
    if env.allowed(task).len() < 2 {
        return None;
    }
    let mask = lowest_mask(env, task)?;
    let cpu = env.task_cpu(task);
    if mask.contains(cpu) {
        return Some(cpu);
    }
    let this = mask.contains(this_cpu).then_some(this_cpu);
    let spans: Vec<CpuSet> = env
        .domains()
        .of(cpu)
        .filter(|d| d.has(SdFlag::WakeAffine))
        .map(|d| d.span)
        .collect();
    for span in spans {
        if let Some(t) = this.filter(|&t| span.contains(t)) {
            return Some(t);
        }
        let both = mask.intersection(&span);
        if let Some(best) = any(env, this_cpu, &both) {
            return Some(best);
        }
    }
    this.or_else(|| any(env, this_cpu, &mask))
}

/// cpumask_any / cpumask_any_and: the first CPU (v2.6.28, v4.15), or the
/// next after the one `this_cpu` last chose (v6.x, the _distribute forms).
fn any(env: &mut impl SchedEnv, this_cpu: usize, set: &CpuSet) -> Option<usize> {
    if env.policy().era.rules().affinity_distribute {
        env.any_distribute(this_cpu, set)
    } else {
        set.first()
    }
}

/// Whether `cpu` holds more RT tasks than it runs, one of them free to
/// move (rt_rq->overloaded: rt_nr_total > 1 and rt_nr_migratory).
pub fn overloaded(env: &impl SchedEnv, cpu: usize) -> bool {
    let rt = env.rt_rq(cpu);
    rt.nr_running() > 1 && rt.waiting().any(|(_, t)| env.allowed(t).len() > 1)
}

/// push_rt_task, repeated: while `cpu` is overloaded, its best waiting
/// task that may move goes to the lowest CPU if it would run there before
/// everything queued there. Returns how many moved.
pub fn push_rt_tasks(env: &mut impl SchedEnv, cpu: usize) -> usize {
    let mut moved = 0;
    // Each push moves one task off: at most as many as are waiting.
    for _ in 0..env.rt_rq(cpu).nr_running() {
        if !overloaded(env, cpu) {
            break;
        }
        let Some((p, next)) = env
            .rt_rq(cpu)
            .waiting()
            .find(|&(_, t)| env.allowed(t).len() > 1)
        else {
            break;
        };
        // It outranks what runs here: it will run here (a reschedule).
        if p < curr_prio(env, cpu) {
            break;
        }
        match find_lowest_rq(env, next, cpu) {
            Some(to) if to != cpu && env.rt_rq(to).highest_prio() > p => {
                env.migrate_queued(next, cpu, to, Reason::RtPush);
                moved += 1;
            }
            _ => break,
        }
    }
    moved
}

/// pull_rt_task: `cpu`'s RT priority dropped; from each overloaded CPU,
/// take its best waiting task that may run here if that one outranks
/// everything here and is not about to run where it is. Returns how many
/// moved.
pub fn pull_rt_task(env: &mut impl SchedEnv, cpu: usize) -> usize {
    let mut moved = 0;
    for src in 0..env.topology().ncpus() {
        if src == cpu || !overloaded(env, src) {
            continue;
        }
        let here = env.rt_rq(cpu).highest_prio();
        if env.rt_rq(src).next_prio() >= here {
            continue;
        }
        let pick = env
            .rt_rq(src)
            .waiting()
            .find(|&(_, t)| env.allowed(t).contains(cpu) && env.allowed(t).len() > 1);
        let Some((p, task)) = pick else { continue };
        if p >= here || p < curr_prio(env, src) {
            continue;
        }
        env.migrate_queued(task, src, cpu, Reason::RtPull);
        moved += 1;
    }
    moved
}

/// sched_rt_runtime_exceeded with RT_RUNTIME_SHARE's balance_runtime:
/// borrow from every other CPU a share (1/ncpus) of its unused runtime
/// until this CPU may run RT tasks the whole period.
pub fn borrow_runtime(env: &mut impl SchedEnv, cpu: usize) {
    let n = env.topology().ncpus() as u64;
    for other in 0..env.topology().ncpus() {
        let runtime = env.rt_rq(cpu).rt_runtime_ns;
        if other == cpu || runtime >= RT_PERIOD_NS {
            continue;
        }
        let o = env.rt_rq(other);
        let spare = o.rt_runtime_ns.saturating_sub(o.rt_time_ns) / n;
        let lend = spare.min(RT_PERIOD_NS - runtime);
        if lend > 0 {
            env.rt_rq_mut(other).rt_runtime_ns -= lend;
            env.rt_rq_mut(cpu).rt_runtime_ns += lend;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Era;
    use crate::sched::rt_rq::{RtParams, RT_RUNTIME_NS};
    use crate::sched::testenv::TestEnv;

    /// A sleeping SCHED_FIFO task of `rt_priority` that last ran on `prev`.
    fn sleeping_rt(env: &mut TestEnv, prev: usize, rt_priority: u8) -> usize {
        let t = env.sleeper(prev);
        env.tasks[t].rt = Some(RtParams::new(rt_priority, false));
        t
    }

    /// select_task_rq_rt (v2.6.28, v4.15): B (rt_priority 50) wakes where A
    /// runs, woken from CPU 3 of the 8-core SMT desktop whose other CPUs
    /// are idle. Moving, it goes to CPU 0's SMT sibling, CPU 8: the lowest
    /// domain with SD_WAKE_AFFINE that holds a lowest CPU (find_lowest_rq).
    #[test]
    fn select_task_rq_rt_leaves_an_rt_task_only_behind_one_it_cannot_preempt() {
        let cases = [
            // A outranks B: both eras look for a lowest CPU.
            (Era::V4_15, 60, false, (8, Reason::RtLowest)),
            (Era::V2_6_28, 60, false, (8, Reason::RtLowest)),
            // B outranks A: 4.15 stays to preempt it (A may move away);
            // 2.6.28 moves on for any RT task running there.
            (Era::V4_15, 40, false, (0, Reason::Prev)),
            (Era::V2_6_28, 40, false, (8, Reason::RtLowest)),
            // A pinned: 4.15 moves B rather than preempt what cannot move.
            (Era::V4_15, 40, true, (8, Reason::RtLowest)),
        ];
        for (era, a_priority, a_pinned, want) in cases {
            let mut env = TestEnv::era("desktop-8c", era);
            let a = env.rt_task(0, a_priority, true);
            if a_pinned {
                env.affinity[a] = CpuSet::single(0);
            }
            let b = sleeping_rt(&mut env, 0, 50);
            assert_eq!(
                select_task_rq_rt(&mut env, b, 3),
                want,
                "{era}: A at {a_priority}, pinned {a_pinned}"
            );
        }
    }

    /// cpupri_find: the lowest priority level first; CPUs running an RT
    /// task at or above the task's priority are never candidates.
    #[test]
    fn find_lowest_rq_takes_the_cpu_running_the_lowest_priority() {
        let mut env = TestEnv::era("desktop-8c", Era::V4_15);
        for c in 0..15 {
            env.rt_task(c, 70, true);
        }
        env.rt_task(15, 20, true);
        let b = sleeping_rt(&mut env, 0, 50);
        assert_eq!(find_lowest_rq(&mut env, b, 3), Some(15));
        let high = sleeping_rt(&mut env, 0, 80);
        assert_eq!(
            find_lowest_rq(&mut env, high, 3),
            Some(15),
            "the rt_priority 20 CPU is lower than the 70 ones"
        );
        let low = sleeping_rt(&mut env, 0, 10);
        assert_eq!(find_lowest_rq(&mut env, low, 3), None, "nothing runs lower");
    }

    /// push_rt_tasks (v4.15, v6.12): CPU 0 runs A (rt 60) with B (rt 50)
    /// waiting; CPU 1 runs an rt 70 task; the rest are idle. B goes to a
    /// lowest CPU of CPU 0's SMT domain, its sibling 8 (v6.12: the next
    /// after CPU 0's last choice in that domain, the same).
    #[test]
    fn a_crowded_cpu_pushes_its_waiting_rt_task_to_a_lowest_cpu() {
        for era in [Era::V4_15, Era::V6_12] {
            let mut env = TestEnv::era("desktop-8c", era);
            env.rt_task(0, 60, true);
            let b = env.rt_task(0, 50, false);
            env.rt_task(1, 70, true);
            assert!(overloaded(&env, 0));
            assert_eq!(push_rt_tasks(&mut env, 0), 1, "{era}");
            assert_eq!(env.migrated, [(b, 0, 8, Reason::RtPush)], "{era}");
            assert!(!overloaded(&env, 0));
        }
    }

    /// pull_rt_task: CPU 1's RT task left; CPU 0 runs A (rt 60) with B (rt
    /// 50) and C (rt 45) waiting: CPU 1 takes the best of them, B.
    #[test]
    fn a_cpu_whose_rt_priority_dropped_pulls_the_best_waiting_task() {
        let mut env = TestEnv::era("desktop-8c", Era::V6_12);
        env.rt_task(0, 60, true);
        let b = env.rt_task(0, 50, false);
        env.rt_task(0, 45, false);
        assert_eq!(pull_rt_task(&mut env, 1), 1);
        assert_eq!(env.migrated, [(b, 0, 1, Reason::RtPull)]);
        // A waiting task that outranks what runs on its CPU stays: it runs
        // there next.
        let mut env = TestEnv::era("desktop-8c", Era::V6_12);
        env.rt_task(0, 40, true);
        env.rt_task(0, 50, false);
        assert_eq!(pull_rt_task(&mut env, 1), 0);
    }

    /// balance_runtime: a CPU out of runtime borrows 1/ncpus of each other
    /// CPU's unused runtime, up to the whole period: on 16 CPUs each lends
    /// up to 59.375 ms, so the first lends all 50 ms it needs.
    #[test]
    fn an_rt_queue_out_of_runtime_borrows_up_to_the_period() {
        let mut env = TestEnv::era("desktop-8c", Era::V4_15);
        env.rts[0].rt_time_ns = RT_RUNTIME_NS + 1;
        env.rts[2].rt_time_ns = RT_RUNTIME_NS;
        borrow_runtime(&mut env, 0);
        assert_eq!(env.rts[0].rt_runtime_ns, RT_PERIOD_NS);
        assert_eq!(env.rts[1].rt_runtime_ns, RT_RUNTIME_NS - 50_000_000);
        assert_eq!(env.rts[2].rt_runtime_ns, RT_RUNTIME_NS, "nothing to lend");
        env.rts[0].rt_runtime_ns = RT_RUNTIME_NS;
        env.rts[1].rt_time_ns = RT_RUNTIME_NS - 50_000_000 - 16 * 1_000_000;
        env.rts[1].rt_runtime_ns = RT_RUNTIME_NS - 50_000_000;
        borrow_runtime(&mut env, 0);
        assert_eq!(
            env.rts[1].rt_runtime_ns,
            RT_RUNTIME_NS - 51_000_000,
            "a sixteenth of its 16 ms unused"
        );
    }
}

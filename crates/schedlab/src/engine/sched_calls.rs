//! The scheduling calls a task makes on itself: sched_yield and
//! sched_setaffinity.

use super::Sim;
use crate::counters::{Cause, Counter, Reason};
use crate::cpuset::CpuSet;

impl Sim {
    /// The CPUs `cpusets[i]` of the workload names (None: every CPU).
    pub(super) fn cpuset_of(&self, i: u32) -> CpuSet {
        self.workload.cpusets[i as usize].unwrap_or_else(|| CpuSet::first_n(self.topo.ncpus()))
    }

    /// do_sched_yield: the era's yield_task_fair, then schedule() (which
    /// may pick the yielder again).
    pub(super) fn sched_yield(&mut self, cpu: usize, task: usize) {
        self.touch_rq(cpu);
        self.touch_task(task);
        let kind = self.policy.era.rules().yield_task;
        self.cpus[cpu].rq.yield_curr(task, &mut self.ents, kind);
        self.counters.count(Counter::Yields);
        self.schedule(cpu);
    }

    /// __set_cpus_allowed_ptr: the task may now use `cpusets[i]`; running
    /// where it may not, it is moved (by the stopper, migration_cpu_stop)
    /// to the CPU the era picks from the new set.
    pub(super) fn set_affinity(&mut self, cpu: usize, task: usize, i: u32) {
        let set = self.cpuset_of(i);
        let stays = set.contains(cpu);
        self.affinity[task] = set;
        if stays {
            self.continue_or_preempt(cpu);
            return;
        }
        let dest = self.affinity_dest(cpu, task);
        self.touch_rq(cpu);
        self.touch_task(task);
        self.cpus[cpu].rq.put_prev(task, &self.ents);
        self.tasks[task].state = super::task::TaskState::Queued(cpu);
        let level = self
            .domains
            .lowest_spanning(cpu, dest)
            .map_or("none", |d| d.level);
        self.counters.count(Counter::Migration {
            cause: Cause::Affinity,
            level,
        });
        self.migrate_queued(task, cpu, dest, Reason::SetAffinity);
        self.schedule(cpu);
    }

    /// Where set_cpus_allowed_ptr sends a task off its CPU: the first CPU
    /// of the new set (cpumask_any_and; v2.6.28, v4.15), or the next one
    /// after the last this CPU chose, wrapping (cpumask_any_and_distribute,
    /// v5.7+: v6.5, v6.12).
    fn affinity_dest(&mut self, cpu: usize, task: usize) -> usize {
        let set = &self.affinity[task];
        let first = set.iter().next().expect("a cpulist names a CPU");
        if !self.policy.era.rules().affinity_distribute {
            return first;
        }
        let prev = self.cpus[cpu].distribute_prev;
        let next = set.iter().find(|&c| c > prev).unwrap_or(first);
        self.cpus[cpu].distribute_prev = next;
        next
    }
}

//! The engine's side of the scheduler's interface: the scheduler's view of
//! the simulated machine, and the two migrations it asks the engine for.

use super::Sim;
use crate::counters::{Counter, Reason};
use crate::cpuset::CpuSet;
use crate::domains::Domains;
use crate::policy::KernelPolicy;
use crate::sched::cfs::{CfsRq, Entity};
use crate::sched::load::CpuLoad;
use crate::sched::rt_rq::RtRq;
use crate::sched::LbWork;
use crate::sched::{IdleState, SchedEnv, SchedState, TaskSched};
use crate::topology::Topology;

impl SchedEnv for Sim {
    fn now(&self) -> u64 {
        self.now
    }
    fn policy(&self) -> &KernelPolicy {
        &self.policy
    }
    fn domains(&self) -> &Domains {
        &self.domains
    }
    fn topology(&self) -> &Topology {
        &self.topo
    }
    fn rq(&self, cpu: usize) -> &CfsRq {
        &self.cpus[cpu].rq
    }
    fn rt_rq(&self, cpu: usize) -> &RtRq {
        &self.cpus[cpu].rt
    }
    fn rt_rq_mut(&mut self, cpu: usize) -> &mut RtRq {
        &mut self.cpus[cpu].rt
    }
    fn any_distribute(&mut self, this: usize, set: &CpuSet) -> Option<usize> {
        Sim::any_distribute(self, this, set)
    }
    fn cpu_load(&self, cpu: usize) -> &CpuLoad {
        &self.cpus[cpu].cpu_load
    }
    fn avg_idle_ns(&self, cpu: usize) -> u64 {
        self.cpus[cpu].avg_idle_ns
    }
    fn cpu_idle(&self, cpu: usize) -> bool {
        Sim::cpu_idle(self, cpu)
    }
    fn idle_cpus(&self) -> CpuSet {
        self.idle_cpus
    }
    fn cpu_curr_idle(&self, cpu: usize) -> bool {
        Sim::cpu_curr_idle(self, cpu)
    }
    fn idle_state(&self, cpu: usize) -> IdleState {
        let c = &self.cpus[cpu];
        IdleState {
            exit_latency_ns: self.cost.idle_exit(c.cstate),
            since_ns: c.idle_since,
        }
    }
    fn entity(&self, task: usize) -> &Entity {
        &self.ents[task]
    }
    fn task_cpu(&self, task: usize) -> usize {
        self.tasks[task].cpu
    }
    fn allowed(&self, task: usize) -> &CpuSet {
        &self.affinity[task]
    }
    fn task(&self, task: usize) -> &TaskSched {
        &self.tasks[task].sched
    }
    fn task_mut(&mut self, task: usize) -> &mut TaskSched {
        &mut self.tasks[task].sched
    }
    fn state(&self) -> &SchedState {
        &self.sched
    }
    fn state_mut(&mut self) -> &mut SchedState {
        &mut self.sched
    }
    fn scan_ns(&self, cpus: u64) -> u64 {
        cpus * self.cost.costs().scan_ns_per_cpu
    }
    fn balance_ns(&self, work: &LbWork) -> u64 {
        self.cost.balance(&self.topo, work)
    }
    fn count(&mut self, counter: Counter) {
        self.counters.count(counter);
    }
    fn decay_idle_load(&mut self, cpu: usize) {
        self.decay_missed_load(cpu);
    }
    fn migrate_queued(&mut self, task: usize, from: usize, to: usize, why: Reason) {
        Sim::migrate_queued(self, task, from, to, why);
    }
    fn list_move_head(&mut self, cpu: usize, task: usize) {
        self.cpus[cpu].rq.list_move_head(task, &mut self.ents);
    }
    fn active_balance(&mut self, from: usize, to: usize) -> bool {
        Sim::active_balance(self, from, to)
    }
}

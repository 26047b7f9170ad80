//! The engine's side of the scheduler's interface: the scheduler's view of
//! the simulated machine, and the two migrations it asks the engine for.
//!
//! A run that keeps decision records calls the scheduler through
//! [`Recording`], which is the same machine with the trail handed out;
//! `Sim` itself hands out none, so in the scheduler's code the engine
//! normally runs, every note compiles away (recording is free when off).

use super::Sim;
use crate::counters::{Counter, Reason};
use crate::cpuset::CpuSet;
use crate::domains::Domains;
use crate::policy::KernelPolicy;
use crate::sched::balance::{self, NewidleBalance};
use crate::sched::cfs::{CfsRq, Entity};
use crate::sched::load::CpuLoad;
use crate::sched::nohz;
use crate::sched::rt_rq::RtRq;
use crate::sched::wakeup::{self, Placement, WakeKind};
use crate::sched::why::TrailCell;
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
    fn update_blocked_averages(&mut self, cpu: usize) {
        self.touch_rq(cpu);
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

/// The machine as the scheduler sees it while the run keeps decision
/// records: every read and action is `Sim`'s own; only `why` differs.
struct Recording<'a>(&'a mut Sim);

impl SchedEnv for Recording<'_> {
    fn now(&self) -> u64 {
        self.0.now
    }
    fn policy(&self) -> &KernelPolicy {
        SchedEnv::policy(self.0)
    }
    fn domains(&self) -> &Domains {
        SchedEnv::domains(self.0)
    }
    fn topology(&self) -> &Topology {
        SchedEnv::topology(self.0)
    }
    fn rq(&self, cpu: usize) -> &CfsRq {
        SchedEnv::rq(self.0, cpu)
    }
    fn rt_rq(&self, cpu: usize) -> &RtRq {
        SchedEnv::rt_rq(self.0, cpu)
    }
    fn rt_rq_mut(&mut self, cpu: usize) -> &mut RtRq {
        SchedEnv::rt_rq_mut(self.0, cpu)
    }
    fn any_distribute(&mut self, this: usize, set: &CpuSet) -> Option<usize> {
        SchedEnv::any_distribute(self.0, this, set)
    }
    fn cpu_load(&self, cpu: usize) -> &CpuLoad {
        SchedEnv::cpu_load(self.0, cpu)
    }
    fn avg_idle_ns(&self, cpu: usize) -> u64 {
        SchedEnv::avg_idle_ns(self.0, cpu)
    }
    fn cpu_idle(&self, cpu: usize) -> bool {
        SchedEnv::cpu_idle(self.0, cpu)
    }
    fn idle_cpus(&self) -> CpuSet {
        SchedEnv::idle_cpus(self.0)
    }
    fn cpu_curr_idle(&self, cpu: usize) -> bool {
        SchedEnv::cpu_curr_idle(self.0, cpu)
    }
    fn idle_state(&self, cpu: usize) -> IdleState {
        SchedEnv::idle_state(self.0, cpu)
    }
    fn entity(&self, task: usize) -> &Entity {
        SchedEnv::entity(self.0, task)
    }
    fn task_cpu(&self, task: usize) -> usize {
        SchedEnv::task_cpu(self.0, task)
    }
    fn allowed(&self, task: usize) -> &CpuSet {
        SchedEnv::allowed(self.0, task)
    }
    fn task(&self, task: usize) -> &TaskSched {
        SchedEnv::task(self.0, task)
    }
    fn task_mut(&mut self, task: usize) -> &mut TaskSched {
        SchedEnv::task_mut(self.0, task)
    }
    fn state(&self) -> &SchedState {
        SchedEnv::state(self.0)
    }
    fn state_mut(&mut self) -> &mut SchedState {
        SchedEnv::state_mut(self.0)
    }
    fn scan_ns(&self, cpus: u64) -> u64 {
        SchedEnv::scan_ns(self.0, cpus)
    }
    fn balance_ns(&self, work: &LbWork) -> u64 {
        SchedEnv::balance_ns(self.0, work)
    }
    fn count(&mut self, counter: Counter) {
        SchedEnv::count(self.0, counter)
    }
    fn decay_idle_load(&mut self, cpu: usize) {
        SchedEnv::decay_idle_load(self.0, cpu)
    }
    fn update_blocked_averages(&mut self, cpu: usize) {
        SchedEnv::update_blocked_averages(self.0, cpu)
    }
    fn migrate_queued(&mut self, task: usize, from: usize, to: usize, why: Reason) {
        SchedEnv::migrate_queued(self.0, task, from, to, why)
    }
    fn list_move_head(&mut self, cpu: usize, task: usize) {
        SchedEnv::list_move_head(self.0, cpu, task)
    }
    fn active_balance(&mut self, from: usize, to: usize) -> bool {
        SchedEnv::active_balance(self.0, from, to)
    }
    fn why(&self) -> Option<&TrailCell> {
        self.0.why.as_deref()
    }
}

/// The scheduler's entry points as the engine calls them: on `Sim` itself,
/// or through [`Recording`] (out of line, cold) when the run keeps
/// decision records. One test per call.
impl Sim {
    #[inline(always)]
    pub(crate) fn sched_select_task_rq(
        &mut self,
        task: usize,
        prev: usize,
        this: usize,
        sync: bool,
        kind: WakeKind,
    ) -> Placement {
        if self.why.is_some() {
            return recorded(self, |env| {
                wakeup::select_task_rq(env, task, prev, this, sync, kind)
            });
        }
        wakeup::select_task_rq(self, task, prev, this, sync, kind)
    }

    #[inline(always)]
    pub(crate) fn sched_newidle_balance(&mut self, cpu: usize) -> NewidleBalance {
        if self.why.is_some() {
            return recorded(self, |env| balance::newidle_balance(env, cpu));
        }
        balance::newidle_balance(self, cpu)
    }

    #[inline(always)]
    pub(crate) fn sched_rebalance_domains(&mut self, cpu: usize) -> u64 {
        if self.why.is_some() {
            return recorded(self, |env| balance::rebalance_domains(env, cpu));
        }
        balance::rebalance_domains(self, cpu)
    }

    #[inline(always)]
    pub(crate) fn sched_owner_tick_balance(&mut self, cpu: usize) -> u64 {
        if self.why.is_some() {
            return recorded(self, |env| nohz::owner_tick_balance(env, cpu));
        }
        nohz::owner_tick_balance(self, cpu)
    }

    #[inline(always)]
    pub(crate) fn sched_idle_balance_others(&mut self, ilb: usize) -> u64 {
        if self.why.is_some() {
            return recorded(self, |env| nohz::idle_balance_others(env, ilb));
        }
        nohz::idle_balance_others(self, ilb)
    }
}

/// Runs `f` with the machine seen through [`Recording`].
#[cold]
#[inline(never)]
fn recorded<R>(sim: &mut Sim, f: impl FnOnce(&mut Recording) -> R) -> R {
    f(&mut Recording(sim))
}

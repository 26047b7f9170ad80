//! The narrow interface through which the scheduler reads and changes
//! the machine ([`SchedEnv`]), what a load balance reports for pricing
//! ([`LbWork`]), and reads derived from the environment that every
//! mechanism uses.

use crate::counters::{Counter, Reason};
use crate::cpuset::CpuSet;
use crate::domains::Domains;
use crate::policy::KernelPolicy;
use crate::sched::cfs::{CfsRq, Entity};
use crate::sched::load::CpuLoad;
use crate::sched::rt_rq::RtRq;
use crate::sched::state::{IdleState, SchedState, TaskSched};
use crate::sched::why::record::TrailCell;
use crate::topology::{CpuDistance, Topology};

/// What one load_balance did, for pricing its time (`SchedEnv::balance_ns`):
/// the domain whose CPUs' run-queue statistics it read and the busiest
/// group it read again (kept as sets, so a balance nobody prices pays no
/// distance lookups), the run-queue lock pair it took and how far away,
/// and the tasks it examined and moved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LbWork {
    /// The balancing CPU.
    pub this: usize,
    pub domain: CpuSet,
    pub group: CpuSet,
    /// The busiest CPU's distance, when its queue was locked.
    pub locked: Option<CpuDistance>,
    pub examined: u32,
    pub moved: u32,
}

impl LbWork {
    /// The CPUs read, by distance from the balancing CPU (`CpuDistance as usize`).
    pub fn visited(&self, topo: &Topology) -> [u32; 5] {
        let mut visited = [0; 5];
        for c in self.domain.iter().chain(self.group.iter()) {
            visited[topo.distance(self.this, c) as usize] += 1;
        }
        visited
    }
}

/// The narrow interface through which the scheduler reads and changes the
/// machine. Reads are of the scheduler's own data (run queues, entities,
/// load history, its state) and of the model (policy, domains, topology);
/// the only actions are counting and the two migrations only the engine
/// can carry out.
pub trait SchedEnv {
    /// Simulated time, ns.
    fn now(&self) -> u64;
    fn policy(&self) -> &KernelPolicy;
    fn domains(&self) -> &Domains;
    fn topology(&self) -> &Topology;
    fn rq(&self, cpu: usize) -> &CfsRq;
    /// The RT class's queue of `cpu`.
    fn rt_rq(&self, cpu: usize) -> &RtRq;
    /// Its bandwidth (runtime lent between CPUs).
    fn rt_rq_mut(&mut self, cpu: usize) -> &mut RtRq;
    /// cpumask_any_and_distribute as `this` CPU runs it: the CPU of `set`
    /// after the one `this` chose last, wrapping (v5.7+).
    fn any_distribute(&mut self, this: usize, set: &CpuSet) -> Option<usize>;
    /// The cpu_load[] history of `cpu`.
    fn cpu_load(&self, cpu: usize) -> &CpuLoad;
    /// The kernel's avg_idle of `cpu`: a moving average of its idle periods.
    fn avg_idle_ns(&self, cpu: usize) -> u64;
    /// idle_cpu() of 4.15+: nothing running, queued or on its way.
    fn cpu_idle(&self, cpu: usize) -> bool;
    /// The CPUs for which `cpu_idle` holds.
    fn idle_cpus(&self) -> CpuSet {
        (0..self.topology().ncpus())
            .filter(|&c| self.cpu_idle(c))
            .collect()
    }
    /// idle_cpu() of 2.6.2x: the idle task is current (tasks may be queued).
    fn cpu_curr_idle(&self, cpu: usize) -> bool;
    /// The C-state `cpu` is in (or was last in) and since when.
    fn idle_state(&self, cpu: usize) -> IdleState;
    fn entity(&self, task: usize) -> &Entity;
    /// The CPU whose queue `task` is on, or that it last ran on.
    fn task_cpu(&self, task: usize) -> usize;
    fn allowed(&self, task: usize) -> &CpuSet;
    fn task(&self, task: usize) -> &TaskSched;
    fn task_mut(&mut self, task: usize) -> &mut TaskSched;
    fn state(&self) -> &SchedState;
    fn state_mut(&mut self) -> &mut SchedState;
    /// How long checking `cpus` CPUs' idle state takes the waker, ns.
    fn scan_ns(&self, cpus: u64) -> u64;
    /// How long a load_balance that did `work` takes the balancing CPU, ns.
    fn balance_ns(&self, work: &LbWork) -> u64;
    fn count(&mut self, counter: Counter);
    /// cpu_load_update_idle (4.15): a tickless idle CPU's cpu_load[] takes
    /// the ticks it missed, with no load, before it is balanced.
    fn decay_idle_load(&mut self, cpu: usize);
    /// update_blocked_averages (4.15+): `cpu`'s queue brings its load up to
    /// now, letting go of what tasks that left it by wakeup still held.
    fn update_blocked_averages(&mut self, cpu: usize);
    /// Moves queued (not running) `task` from `from`'s queue to `to`'s.
    fn migrate_queued(&mut self, task: usize, from: usize, to: usize, why: Reason);
    /// Moves `task`, on `cpu`'s queue, to the head of its task list
    /// (detach_tasks' list_move of a task it skips, v4.15+).
    fn list_move_head(&mut self, cpu: usize, task: usize);
    /// The stopper on `from` pushes its running task to `to`; whether one moved.
    fn active_balance(&mut self, from: usize, to: usize) -> bool;
    /// The decision recorder, when the run keeps decision records
    /// (`sched::why`); None, the default, records nothing.
    fn why(&self) -> Option<&TrailCell> {
        None
    }
}

/// task_hot()'s clock test: the task ran within migration_cost, so its
/// cache is likely still warm where it ran. A task that has not run since
/// fork (or, v4.15+, since it migrated) is cold.
pub fn ran_recently(env: &impl SchedEnv, task: usize) -> bool {
    env.entity(task)
        .exec_start_ns
        .is_some_and(|t| env.now().saturating_sub(t) < env.policy().tunables.migration_cost_ns)
}

/// Whether two CPUs share a last-level cache.
pub fn shares_cache(env: &impl SchedEnv, a: usize, b: usize) -> bool {
    let cpus = &env.topology().cpus;
    cpus[a].llc == cpus[b].llc
}

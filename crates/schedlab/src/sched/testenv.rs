//! A hand-built machine state for exact scheduler tests: CPUs whose queues,
//! loads and idle states a test sets directly, implementing [`SchedEnv`]
//! without an engine. Migrations and counters are recorded for the test to
//! read.

use super::cfs::{weight_of_nice, CfsRq, Entity};
use super::env::LbWork;
use super::load::CpuLoad;
use super::rt_rq::{RtParams, RtRq};
use super::why::{Trail, TrailCell, WhyFilter};
use super::{IdleState, SchedEnv, SchedState, TaskSched};
use crate::counters::{Counter, Reason};
use crate::cpuset::CpuSet;
use crate::domains::Domains;
use crate::policy::{Era, KernelPolicy, PolicySpec};
use crate::topology::{preset, MachineSpec, Topology};

pub(crate) struct TestEnv {
    pub now: u64,
    pub policy: KernelPolicy,
    pub domains: Domains,
    pub topo: Topology,
    pub rqs: Vec<CfsRq>,
    pub rts: Vec<RtRq>,
    /// Each CPU's cpumask_any_and_distribute memory.
    pub distribute_prev: Vec<usize>,
    pub cpu_loads: Vec<CpuLoad>,
    pub avg_idle_ns: Vec<u64>,
    /// CPUs running nothing (and with nothing queued or on its way).
    pub idle: Vec<bool>,
    pub idle_states: Vec<IdleState>,
    pub ents: Vec<Entity>,
    pub task_cpu: Vec<usize>,
    pub affinity: Vec<CpuSet>,
    pub tasks: Vec<TaskSched>,
    pub state: SchedState,
    pub counted: Vec<Counter>,
    pub migrated: Vec<(usize, usize, usize, Reason)>,
    /// Active balances asked for: (busiest, destination).
    pub pushed: Vec<(usize, usize)>,
    /// ns per CPU scanned (the machine preset's).
    pub scan_ns_per_cpu: u64,
    /// Decision records, when a test asks for them (`record_decisions`).
    pub why: Option<TrailCell>,
}

impl TestEnv {
    /// Machine preset `machine` under `policy`, every CPU idle, no tasks,
    /// at 1 s of simulated time.
    pub fn new(machine: &str, policy: PolicySpec) -> TestEnv {
        TestEnv::with_machine(preset(machine).unwrap(), policy)
    }

    /// As `new`, on a machine described here.
    pub fn with_machine(spec: MachineSpec, policy: PolicySpec) -> TestEnv {
        let topo = Topology::from_spec(&spec).unwrap();
        let n = topo.ncpus();
        let policy = policy.resolve(n).unwrap();
        let domains = Domains::build(&topo, &policy).unwrap();
        let now = 1_000_000_000;
        TestEnv {
            now,
            state: SchedState::new(&topo, &domains, &policy, now),
            rqs: (0..n)
                .map(|_| CfsRq::with_picker(now, policy.era.rules().picker))
                .collect(),
            rts: vec![RtRq::default(); n],
            distribute_prev: vec![0; n],
            cpu_loads: vec![CpuLoad::default(); n],
            avg_idle_ns: vec![policy.tunables.migration_cost_ns * 2; n],
            idle: vec![true; n],
            idle_states: vec![
                IdleState {
                    exit_latency_ns: 0,
                    since_ns: 0
                };
                n
            ],
            ents: Vec::new(),
            task_cpu: Vec::new(),
            affinity: Vec::new(),
            tasks: Vec::new(),
            counted: Vec::new(),
            why: None,
            migrated: Vec::new(),
            pushed: Vec::new(),
            scan_ns_per_cpu: spec.costs.scan_ns_per_cpu,
            policy,
            domains,
            topo,
        }
    }

    pub fn era(machine: &str, era: Era) -> TestEnv {
        TestEnv::new(machine, PolicySpec::era(era))
    }

    /// A nice-0 task queued on `cpu` with PELT load and utilisation as
    /// given; the first task on a CPU runs. Returns its id.
    pub fn task(&mut self, cpu: usize, load_avg: u64, util_avg: u64) -> usize {
        let id = self.ents.len();
        let mut e = Entity::new(weight_of_nice(0), self.now);
        e.pelt.load_avg = load_avg;
        e.pelt.runnable_avg = load_avg;
        e.pelt.util_avg = util_avg;
        self.ents.push(e);
        self.task_cpu.push(cpu);
        self.affinity.push(CpuSet::first_n(self.topo.ncpus()));
        self.tasks.push(TaskSched {
            recent_used_cpu: cpu,
            ..TaskSched::default()
        });
        let rq = &mut self.rqs[cpu];
        rq.pelt.load_avg += load_avg;
        rq.pelt.runnable_avg += load_avg;
        rq.pelt.util_avg += util_avg;
        if rq.curr.is_none() {
            rq.enqueue(id, &mut self.ents);
            rq.set_curr(id, &mut self.ents, self.now);
        } else {
            rq.enqueue(id, &mut self.ents);
            // Queued tasks last ran 10 ms ago: not cache-hot.
            self.ents[id].exec_start_ns = Some(self.now - 10_000_000);
        }
        self.idle[cpu] = false;
        super::note_nr_running(&mut self.state, self.rqs[cpu].nr_running);
        id
    }

    /// An RT task of `rt_priority` (SCHED_FIFO) on `cpu`'s RT queue,
    /// running there if `running`. Returns its id.
    pub fn rt_task(&mut self, cpu: usize, rt_priority: u8, running: bool) -> usize {
        let id = self.sleeper(cpu);
        let rt = RtParams::new(rt_priority, false);
        self.tasks[id].rt = Some(rt);
        self.rts[cpu].enqueue(id, rt.prio);
        if running {
            self.rts[cpu].curr = Some(id);
        }
        self.idle[cpu] = false;
        id
    }

    /// `n` tasks of full load and utilisation (1024) on each CPU of `cpus`.
    pub fn hogs(&mut self, cpus: &[usize], n: usize) {
        for &c in cpus {
            for _ in 0..n {
                self.task(c, 1024, 1024);
            }
        }
    }

    /// A sleeping task whose previous CPU is `prev`.
    pub fn sleeper(&mut self, prev: usize) -> usize {
        let id = self.ents.len();
        self.ents.push(Entity::new(weight_of_nice(0), self.now));
        self.task_cpu.push(prev);
        self.affinity.push(CpuSet::first_n(self.topo.ncpus()));
        self.tasks.push(TaskSched {
            recent_used_cpu: prev,
            ..TaskSched::default()
        });
        id
    }
}

impl SchedEnv for TestEnv {
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
        &self.rqs[cpu]
    }
    fn rt_rq(&self, cpu: usize) -> &RtRq {
        &self.rts[cpu]
    }
    fn rt_rq_mut(&mut self, cpu: usize) -> &mut RtRq {
        &mut self.rts[cpu]
    }
    fn any_distribute(&mut self, this: usize, set: &CpuSet) -> Option<usize> {
        let next = set
            .first_from(self.distribute_prev[this] + 1)
            .or_else(|| set.first())?;
        self.distribute_prev[this] = next;
        Some(next)
    }
    fn cpu_load(&self, cpu: usize) -> &CpuLoad {
        &self.cpu_loads[cpu]
    }
    fn avg_idle_ns(&self, cpu: usize) -> u64 {
        self.avg_idle_ns[cpu]
    }
    fn cpu_idle(&self, cpu: usize) -> bool {
        self.idle[cpu]
    }
    fn cpu_curr_idle(&self, cpu: usize) -> bool {
        self.rqs[cpu].curr.is_none()
    }
    fn idle_state(&self, cpu: usize) -> IdleState {
        self.idle_states[cpu]
    }
    fn entity(&self, task: usize) -> &Entity {
        &self.ents[task]
    }
    fn task_cpu(&self, task: usize) -> usize {
        self.task_cpu[task]
    }
    fn allowed(&self, task: usize) -> &CpuSet {
        &self.affinity[task]
    }
    fn task(&self, task: usize) -> &TaskSched {
        &self.tasks[task]
    }
    fn task_mut(&mut self, task: usize) -> &mut TaskSched {
        &mut self.tasks[task]
    }
    fn state(&self) -> &SchedState {
        &self.state
    }
    fn state_mut(&mut self) -> &mut SchedState {
        &mut self.state
    }
    fn scan_ns(&self, cpus: u64) -> u64 {
        cpus * self.scan_ns_per_cpu
    }
    /// 100 ns per CPU read, 1 us per lock, 2 us per task moved: round
    /// numbers for hand-worked tests.
    fn balance_ns(&self, work: &LbWork) -> u64 {
        let visited: u32 = work.visited(&self.topo).iter().sum();
        visited as u64 * 100 + work.locked.map_or(0, |_| 1_000) + work.moved as u64 * 2_000
    }
    fn count(&mut self, counter: Counter) {
        self.counted.push(counter);
    }
    /// Hand-set histories stay as set: no clock of ticks here.
    fn decay_idle_load(&mut self, _cpu: usize) {}
    fn update_blocked_averages(&mut self, cpu: usize) {
        let now = self.now;
        self.rqs[cpu].update_load(now);
    }
    fn migrate_queued(&mut self, task: usize, from: usize, to: usize, why: Reason) {
        if let Some(rt) = self.tasks[task].rt {
            self.rts[from].dequeue(task);
            self.rts[to].enqueue(task, rt.prio);
        } else {
            self.rqs[from].dequeue(task, &mut self.ents, &self.policy);
            self.rqs[to].enqueue(task, &mut self.ents);
        }
        self.task_cpu[task] = to;
        self.idle[to] = false;
        self.migrated.push((task, from, to, why));
    }
    fn list_move_head(&mut self, cpu: usize, task: usize) {
        self.rqs[cpu].list_move_head(task, &mut self.ents);
    }
    /// The stopper always succeeds here; the push is recorded, not done.
    fn active_balance(&mut self, from: usize, to: usize) -> bool {
        self.pushed.push((from, to));
        true
    }
    fn why(&self) -> Option<&TrailCell> {
        self.why.as_ref()
    }
}

impl TestEnv {
    /// Keeps a record of every decision from now on.
    pub fn record_decisions(&mut self) {
        self.why = Some(TrailCell::new(Trail::new(WhyFilter::default())));
    }

    /// The records kept so far.
    pub fn decisions(&self) -> Vec<super::why::Decision> {
        self.why
            .as_ref()
            .map_or_else(Vec::new, |w| w.borrow_mut().take())
    }
}

/// The index of `cpu`'s domain level called `name` (tests name levels).
pub(crate) fn level_index(env: &TestEnv, cpu: usize, name: &str) -> usize {
    env.domains
        .of(cpu)
        .position(|d| d.level == name)
        .unwrap_or_else(|| panic!("no {name} level"))
}

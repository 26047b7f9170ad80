//! The task-language interpreter: starting a task, running its program
//! instruction by instruction (`advance`), and what happens when a
//! segment ends (`apply_pending`): channel transfers, sleeps, forks,
//! exits.

use super::cpu::SegKind;
use super::stats::LatencyHist;
use super::task::{Pending, ProgramState, Task, TaskState, Wait};
use super::{Event, Sim};
use crate::counters::{Counter, Reason};
use crate::cpuset::CpuSet;
use crate::error::Concern;
use crate::error::Result;
use crate::limits;
use crate::policy::{ForkVruntime, Picker};
use crate::sched::cfs::{weight_of_nice, Entity};
use crate::sched::rt_rq::RtParams;
use crate::sched::wakeup::{self, WakeKind};
use crate::sched::{note_nr_running, TaskSched};
use crate::seed::splitmix64;
use crate::workload::program::{Insn, Time};
use rand_core::RngCore;
use rand_pcg::Pcg32;

/// A `timer` instruction's timer (its labels aside).
#[derive(Debug, Clone, Copy)]
struct TimerInsn {
    period_ns: u64,
    origin_ns: u64,
    slot: usize,
    shared: bool,
    relative: bool,
}

/// What an instruction left the task doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Flow {
    /// Nothing that takes time: the next instruction runs at once.
    Next,
    /// A segment started, or the task blocked or exited.
    Yield,
}

impl Sim {
    /// Creates a task from template `tpl`: an initial task (parent None) or
    /// a fork child of `parent`, placed by the fork path and made runnable.
    pub(crate) fn start_task(&mut self, tpl: usize, parent: Option<usize>) -> Result<usize> {
        let id = self.tasks.len();
        limits::TASKS.check(Concern::Run, "tasks alive in the run", id as u64 + 1)?;
        let t = &self.workload.templates[tpl];
        let n = self.topo.ncpus();
        let affinity = t.affinity.unwrap_or_else(|| CpuSet::first_n(n));
        let weight = weight_of_nice(t.nice);
        let parent_cpu = parent.map_or(0, |p| self.tasks[p].cpu);
        self.tasks_alive += 1;
        if let Some(why) = &self.why {
            why.borrow_mut().task_started(id, &t.name);
        }
        self.affinity.push(affinity);
        // Each initial task or child is a process of its own unless the
        // workload groups them.
        let mm = self.mms.mm_for(t.process);
        self.tasks.push(Task {
            name: t.name.clone(),
            prog: ProgramState {
                template: tpl,
                pc: 0,
                loops: Vec::new(),
                last_marks: vec![u64::MAX; self.workload.labels.len()],
                timers: vec![None; t.timer_slots],
                started_ns: self.now,
                activation_ns: self.now,
                in_timer: false,
                timer_gen: 0,
                runtime_until: None,
                mem_share: None,
                last_read: 0,
                lap_from_ns: self.now,
                read_blocked: false,
                log_records: vec![0; self.workload.logs.len()],
                log_writing: 0,
                spins: 0,
                wake_all: false,
                lw_retry: false,
                lw_mutex: None,
                s_lock: super::task::SLock::new(),
                released: false,
                acks_owed: Vec::new(),
                in_syscall: false,
                skb: None,
                rng: Pcg32::new(splitmix64(self.seed ^ splitmix64(id as u64)), id as u64),
            },
            state: TaskState::Blocked(Wait::Timer),
            cpu: parent_cpu,
            warm_cpu: None,
            mm,
            working_set_kib: t.working_set_kib,
            pending: Pending::None,
            compute_left: 0,
            exited_ns: None,
            woken_ns: None,
            wakeup_latency: LatencyHist::default(),
            timer_latency: LatencyHist::default(),
            switches: 0,
            migrations: 0,
            sched: TaskSched {
                wakee_flip_decay_ns: self.now,
                recent_used_cpu: parent_cpu,
                rt: t.rt.map(RtParams::from),
                ..TaskSched::default()
            },
            rr_slice_ns: crate::sched::rt_rq::RR_TIMESLICE_NS,
            nice: t.nice,
        });
        let mut entity = Entity::new(weight, self.now);
        entity.custom_slice_ns = self.workload.templates[tpl].slice_ns;
        self.ents.push(entity);
        let placed = match self.workload.templates[tpl].start_cpu {
            Some(cpu) => wakeup::Placement::new(cpu, Reason::StartCpu),
            // 2.6.28's fork balances every class as sched_balance_self.
            None if self.is_rt(id) && !self.policy.era.is_legacy() => {
                let (cpu, reason) = crate::sched::rt::select_task_rq_rt(self, id, parent_cpu);
                wakeup::Placement::new(cpu, reason)
            }
            None => self.sched_select_task_rq(id, parent_cpu, parent_cpu, false, WakeKind::Fork),
        };
        let (cpu, reason) = (placed.cpu, placed.reason);
        self.tasks[id].cpu = cpu;
        self.tasks[id].sched.recent_used_cpu = cpu;
        self.counters.count(Counter::Forks);
        self.count_placement(&placed, parent_cpu);
        if cpu != parent_cpu {
            self.trace_migrate(id, parent_cpu, cpu, reason);
        }
        let remote = parent.is_some() && parent_cpu != cpu;
        if self.is_rt(id) {
            self.enqueue_rt(id, cpu);
            self.notify_enqueued(cpu, id, remote.then_some(parent_cpu), false);
            return Ok(id);
        }
        // wake_up_new_task: initial load, fork placement, enqueue, preemption check.
        self.touch_rq(cpu);
        let pelt = crate::sched::load::Pelt::new_task(self.now, weight, &self.cpus[cpu].rq.pelt);
        self.ents[id].pelt = pelt;
        self.cpus[cpu].rq.pelt.attach(&pelt, weight);
        let child_first = self.place_forked(id, parent, parent_cpu, cpu);
        self.cpus[cpu].rq.enqueue(id, &mut self.ents);
        self.note_idle(cpu);
        note_nr_running(&mut self.sched, self.cpus[cpu].rq.nr_running);
        self.tasks[id].state = TaskState::Queued(cpu);
        if child_first {
            self.resched_local(cpu);
        }
        self.notify_enqueued(cpu, id, remote.then_some(parent_cpu), false);
        Ok(id)
    }

    /// A forked task's first vruntime, as the era's fork gives it; returns
    /// whether the parent swapped vruntimes with it so that it runs first
    /// (v2.6.2x task_new_fair under sysctl_sched_child_runs_first).
    fn place_forked(
        &mut self,
        child: usize,
        parent: Option<usize>,
        parent_cpu: usize,
        cpu: usize,
    ) -> bool {
        let rules = self.policy.era.rules();
        let parent = parent.filter(|&p| rules.picker != Picker::Eevdf && !self.is_rt(p));
        let Some(p) = parent else {
            self.cpus[cpu]
                .rq
                .place(child, &mut self.ents, true, &self.policy);
            return false;
        };
        // update_curr: the parent's vruntime up to now.
        self.touch_rq(parent_cpu);
        self.ents[child].vruntime = self.ents[p].vruntime;
        match rules.fork_vruntime {
            ForkVruntime::Inherited => {
                self.cpus[cpu]
                    .rq
                    .place(child, &mut self.ents, true, &self.policy);
                let runs_first = rules.child_runs_first
                    && cpu == parent_cpu
                    && self.cpus[cpu].rq.curr == Some(p)
                    && self.ents[p].vruntime < self.ents[child].vruntime;
                if runs_first {
                    let (a, b) = (self.ents[p].vruntime, self.ents[child].vruntime);
                    self.ents[p].vruntime = b;
                    self.ents[child].vruntime = a;
                }
                runs_first
            }
            ForkVruntime::FromParentQueue => {
                let from = &self.cpus[parent_cpu].rq;
                from.place(child, &mut self.ents, true, &self.policy);
                let e = &mut self.ents[child];
                e.vruntime = e
                    .vruntime
                    .wrapping_sub(from.min_vruntime)
                    .wrapping_add(self.cpus[cpu].rq.min_vruntime);
                false
            }
        }
    }

    pub(super) fn sample(&mut self, task: usize, t: Time) -> u64 {
        if t.jitter_pct == 0 {
            return t.ns;
        }
        let span = t.ns * t.jitter_pct as u64 / 100;
        let lo = t.ns - span;
        lo + self.tasks[task].prog.rng.next_u64() % (2 * span + 1)
    }

    /// The current task of `cpu` carries on: a preempted compute first, then its program.
    pub(crate) fn resume(&mut self, cpu: usize) {
        let task = self.curr_of(cpu).expect("resume needs a running task");
        let left = std::mem::take(&mut self.tasks[task].compute_left);
        if let Some(until) = self.tasks[task].prog.runtime_until {
            // `runtime` ends at a wall time: time away from the CPU counted.
            if until > self.now {
                self.start_segment(cpu, SegKind::User, until - self.now, Pending::RuntimeDone);
                return;
            }
            self.tasks[task].prog.runtime_until = None;
        } else if left > 0 {
            let prog = &self.tasks[task].prog;
            let (share, pending) = match (prog.mem_share, prog.lw_mutex) {
                (Some(share), _) => (share, Pending::MemDone),
                // Preempted inside an LWLock's spinlock.
                (None, Some(l)) => (0, Pending::LwUnlock(l)),
                (None, None) => (0, Pending::None),
            };
            self.start_work(cpu, SegKind::User, left, share, pending);
            return;
        }
        // Preempted just as a `mem` write or an LWLock's spinlock section
        // had no work left: what its end does is done now.
        let prog = &mut self.tasks[task].prog;
        prog.mem_share = None;
        if let Some(l) = prog.lw_mutex.take() {
            self.sync.lwlocks[l].mutex_holder = None;
        }
        self.advance(cpu, task);
    }

    /// Channel `chan`'s buffered bytes or its reader's or writer's LLC
    /// changed: what it adds to each LLC's buffered bytes follows.
    pub(super) fn recharge_llcs(&mut self, chan: usize) {
        self.chans[chan].recharge_llcs(&mut self.occupancy.llc_buf_bytes);
    }

    /// Interprets the program until an instruction takes time or blocks.
    /// Runs `task`'s program on `cpu` from its pc: instructions that take
    /// no time (loops, marks, a timer already due, a TCP write that an ACK
    /// makes room for) follow each other at once; the first that starts a
    /// segment or blocks ends the step.
    pub(super) fn advance(&mut self, cpu: usize, task: usize) {
        loop {
            let tpl = self.tasks[task].prog.template;
            let pc = self.tasks[task].prog.pc;
            let Some(&insn) = self.workload.templates[tpl].code.get(pc) else {
                self.exit_task(cpu, task);
                return;
            };
            if self.step(cpu, task, insn) == Flow::Yield {
                return;
            }
        }
    }

    /// One instruction.
    fn step(&mut self, cpu: usize, task: usize, insn: Insn) -> Flow {
        match insn {
            Insn::Compute(t) => {
                self.tasks[task].prog.pc += 1;
                let ns = self.sample(task, t);
                self.start_segment(cpu, SegKind::User, ns, Pending::None);
            }
            Insn::Write { chan, bytes, echo } => {
                return self.write_insn(cpu, task, chan, bytes, echo)
            }
            Insn::Read { chan, bytes, poll } => self.read_insn(cpu, task, chan, bytes, poll),
            Insn::Sleep(t) => {
                self.tasks[task].prog.pc += 1;
                let ns = self.sample(task, t);
                let cost = self.cost.syscall();
                self.start_segment(cpu, SegKind::Kernel, cost, Pending::Sleep(ns));
            }
            Insn::Until(t) => {
                self.tasks[task].prog.pc += 1;
                let at = self.tasks[task].prog.started_ns + self.sample(task, t);
                if at <= self.now {
                    return Flow::Next;
                }
                // clock_nanosleep to an absolute time: the wakeup comes at
                // `at`, or after the entry if that is later.
                let cost = self.cost.syscall();
                let ns = (at - self.now).saturating_sub(cost);
                self.start_segment(cpu, SegKind::Kernel, cost, Pending::Sleep(ns));
            }
            Insn::LoopStart { count } => {
                let t = &mut self.tasks[task];
                t.prog.loops.push(count);
                t.prog.pc += 1;
                return Flow::Next;
            }
            Insn::LoopEnd { body } => {
                let t = &mut self.tasks[task];
                let top = t
                    .prog
                    .loops
                    .last_mut()
                    .expect("compiled loops are balanced");
                *top -= 1;
                if *top > 0 {
                    t.prog.pc = body;
                } else {
                    t.prog.loops.pop();
                    t.prog.pc += 1;
                }
                return Flow::Next;
            }
            Insn::Mark(label) => {
                self.mark_insn(task, label);
                return Flow::Next;
            }
            Insn::Timer {
                period_ns,
                origin_ns,
                slot,
                shared,
                relative,
                slack,
                run,
            } => {
                let timer = TimerInsn {
                    period_ns,
                    origin_ns,
                    slot: slot as usize,
                    shared,
                    relative,
                };
                return self.timer_insn(cpu, task, timer, slack, run);
            }
            Insn::Yield => {
                self.tasks[task].prog.pc += 1;
                let cost = self.cost.syscall();
                self.start_segment(cpu, SegKind::Kernel, cost, Pending::Yield);
            }
            Insn::Affinity(i) => {
                self.tasks[task].prog.pc += 1;
                if self.cpuset_of(i) == self.affinity[task] {
                    return Flow::Next;
                }
                let cost = self.cost.syscall();
                self.start_segment(cpu, SegKind::Kernel, cost, Pending::Affinity(i));
            }
            Insn::Scheduler(s) => {
                self.tasks[task].prog.pc += 1;
                if self.sched_spec_of(task) == s {
                    return Flow::Next;
                }
                let cost = self.cost.syscall();
                self.start_segment(cpu, SegKind::Kernel, cost, Pending::Scheduler(s));
            }
            Insn::Syscalls(n) => {
                self.tasks[task].prog.pc += 1;
                let cost = self.cost.syscall().saturating_mul(n);
                self.start_segment(cpu, SegKind::Kernel, cost, Pending::None);
            }
            Insn::Lap(label) => {
                let now = self.now;
                let from = self.tasks[task].prog.lap_from_ns;
                if from >= self.measure_from_ns {
                    self.marks[label].record(now, task, Some(now - from));
                }
                self.tasks[task].prog.pc += 1;
                return Flow::Next;
            }
            Insn::Fork(child) => {
                self.tasks[task].prog.pc += 1;
                let cost = self.cost.fork();
                self.start_segment(cpu, SegKind::Kernel, cost, Pending::Fork(child));
            }
            Insn::Runtime(t) => {
                self.tasks[task].prog.pc += 1;
                let ns = self.sample(task, t);
                self.tasks[task].prog.runtime_until = Some(self.now + ns);
                self.start_segment(cpu, SegKind::User, ns, Pending::RuntimeDone);
            }
            Insn::Mem { bytes, buffer } => {
                self.tasks[task].prog.pc += 1;
                self.start_mem(cpu, task, bytes, buffer);
            }
            Insn::Lock(m) => self.lock(cpu, task, m),
            Insn::SpinLock {
                mutex,
                rounds,
                max_delay,
                pauses_per_delay,
                wake_all,
            } => {
                let spin = super::sync::Spin {
                    rounds: rounds as u32,
                    max_delay: max_delay as u64,
                    pauses_per_delay: pauses_per_delay as u64,
                    wake_all,
                };
                self.spin_lock(cpu, task, mutex as usize, spin);
            }
            Insn::Unlock(m) => {
                self.tasks[task].prog.pc += 1;
                self.unlock(cpu, m);
            }
            Insn::CondWait { cond, mutex } => {
                self.tasks[task].prog.pc += 1;
                self.cond_wait(cpu, task, cond, mutex);
            }
            Insn::Signal { cond, all } => {
                self.tasks[task].prog.pc += 1;
                self.signal(cpu, cond, all);
            }
            Insn::Barrier(b) => {
                self.tasks[task].prog.pc += 1;
                self.barrier(cpu, task, b);
            }
            Insn::SemPost { sem, sync, free } => {
                self.tasks[task].prog.pc += 1;
                return self.sem_post(cpu, task, sem as usize, sync, free);
            }
            Insn::SemWait { sem, free } => {
                self.tasks[task].prog.pc += 1;
                return self.sem_wait(cpu, task, sem as usize, free);
            }
            Insn::LwAcquire { lock, shared } => self.lw_acquire(cpu, task, lock as usize, !shared),
            Insn::LwRelease(lock) => self.lw_release(cpu, task, lock as usize),
            Insn::LogAppend(log) => {
                self.log_append(task, log as usize);
                return Flow::Next;
            }
            Insn::LogSkipIfFlushed { log, to } => {
                self.log_skip_if_flushed(task, log as usize, to as usize);
                return Flow::Next;
            }
            Insn::LogWrite { log, io } => {
                self.tasks[task].prog.pc += 1;
                self.log_write(cpu, task, log as usize, io);
            }
            Insn::LogWritten(log) => {
                self.log_written(task, log as usize);
                return Flow::Next;
            }
        }
        Flow::Yield
    }

    /// `mark`: the interval since the task's last mark of the label.
    fn mark_insn(&mut self, task: usize, label: usize) {
        let now = self.now;
        let last = std::mem::replace(&mut self.tasks[task].prog.last_marks[label], now);
        // Marks in the warm-up only set the start of the next interval.
        if now >= self.measure_from_ns {
            let interval = (last != u64::MAX).then(|| now - last);
            self.marks[label].record(now, task, interval);
        }
        self.tasks[task].prog.pc += 1;
    }

    /// `timer`: the end of the period of its timer; sleeps until it
    /// unless it has passed, recording the activation and its slack.
    fn timer_insn(
        &mut self,
        cpu: usize,
        task: usize,
        timer: TimerInsn,
        slack: Option<u32>,
        run: Option<u32>,
    ) -> Flow {
        let now = self.now;
        let TimerInsn {
            period_ns,
            relative,
            ..
        } = timer;
        let t = &mut self.tasks[task];
        t.prog.pc += 1;
        let activation = std::mem::replace(&mut t.prog.activation_ns, now);
        let first_end = t.prog.started_ns + timer.origin_ns + period_ns;
        let state = if timer.shared {
            &mut self.sync.timers[timer.slot]
        } else {
            &mut t.prog.timers[timer.slot]
        };
        let end = state.unwrap_or(first_end);
        let left = end.saturating_sub(now);
        *state = Some(if left == 0 && relative {
            now + period_ns
        } else {
            end + period_ns
        });
        if let Some(label) = run {
            if activation >= self.measure_from_ns {
                self.marks[label as usize].record(now, task, Some(now - activation));
            }
        }
        if let Some(label) = slack {
            let label = label as usize;
            if now >= self.measure_from_ns {
                self.marks[label].record(now, task, Some(left));
                // rt-app logs an overrun as negative slack.
                if now > end {
                    self.marks[label].record_overrun(now - end);
                }
            }
        }
        if left > 0 {
            // clock_nanosleep to the period's end: the wakeup
            // comes at `end` (or after the entry, if that is later).
            self.tasks[task].prog.in_timer = true;
            let cost = self.cost.syscall();
            let ns = left.saturating_sub(cost);
            self.start_segment(cpu, SegKind::Kernel, cost, Pending::Sleep(ns));
            return Flow::Yield;
        }
        Flow::Next
    }

    /// The syscall entry cost, unless the task is resuming a blocked call.
    pub(super) fn syscall_entry(&mut self, task: usize) -> u64 {
        if std::mem::take(&mut self.tasks[task].prog.in_syscall) {
            0
        } else {
            self.cost.syscall()
        }
    }

    /// A read or write that cannot proceed: enter the syscall (paying its
    /// entry), then sleep if it still cannot.
    pub(super) fn wait_or_enter(&mut self, cpu: usize, task: usize, wait: Wait) {
        if self.tasks[task].prog.in_syscall {
            self.block(cpu, task, wait);
        } else {
            self.tasks[task].prog.in_syscall = true;
            let cost = self.cost.syscall();
            self.start_segment(cpu, SegKind::Kernel, cost, Pending::Recheck);
        }
    }

    /// What happens when a segment of `task` on `cpu` ends: one named step
    /// per kind of `Pending`.
    pub(crate) fn apply_pending(&mut self, cpu: usize, task: usize, pending: Pending) {
        match pending {
            Pending::None | Pending::Recheck => self.continue_or_preempt(cpu),
            Pending::IrqReturn => self.irq_return(cpu, task),
            Pending::SwitchIn => self.switched_in(cpu, task),
            Pending::Deposit {
                chan,
                bytes,
                next_writer,
            } => self.deposit(cpu, task, chan, bytes, next_writer),
            Pending::NetRx { chan, bytes } => self.net_rx(cpu, chan, bytes),
            Pending::AckRx { chan, bytes } => self.ack_rx(cpu, chan, bytes),
            Pending::Acked { chan, bytes } => self.acked(cpu, chan, bytes),
            Pending::Drained { chan, all } => self.drained(cpu, chan, all),
            Pending::Sleep(ns) => {
                self.block(cpu, task, Wait::Timer);
                let gen = self.tasks[task].prog.timer_gen;
                self.queue.push(self.now + ns, Event::Timer { task, gen });
            }
            Pending::Fork(child) => {
                // A run that would exceed the task limit stops forking.
                let _ = self.start_task(child, Some(task));
                self.continue_or_preempt(cpu);
            }
            Pending::RuntimeDone => {
                self.tasks[task].prog.runtime_until = None;
                self.continue_or_preempt(cpu);
            }
            Pending::MemDone => {
                self.tasks[task].prog.mem_share = None;
                self.continue_or_preempt(cpu);
            }
            Pending::WakeMutex(m) => {
                let w = self.pop_mutex_waiters(m);
                self.wake_then(cpu, task, w, false, Pending::None);
            }
            Pending::WakeMutexThenPark { mutex, wait } => {
                let w = self.pop_mutex_waiters(mutex);
                self.wake_then(cpu, task, w, false, Pending::Park(wait));
            }
            Pending::Park(wait) => {
                if std::mem::take(&mut self.tasks[task].prog.released) {
                    self.continue_or_preempt(cpu);
                } else {
                    self.block(cpu, task, wait);
                }
            }
            Pending::Signal { cond, all } => {
                let woken = self.take_cond_waiters(cond, all);
                self.wake_then(cpu, task, woken, false, Pending::None);
            }
            Pending::ReleaseBarrier(b) => {
                let woken = self.take_barrier_waiters(b);
                self.wake_then(cpu, task, woken, false, Pending::None);
            }
            Pending::PostSem { sem, sync } => {
                let woken = self.take_sem_waiter(sem);
                self.wake_then(cpu, task, woken, sync, Pending::None);
            }
            Pending::LwUnlock(l) => {
                self.tasks[task].prog.lw_mutex = None;
                self.sync.lwlocks[l].mutex_holder = None;
                self.continue_or_preempt(cpu);
            }
            Pending::ReleaseLw(lock) => {
                let woken = self.take_lw_waiters(lock);
                self.wake_then(cpu, task, woken, false, Pending::None);
            }
            Pending::Yield => self.sched_yield(cpu, task),
            Pending::Affinity(i) => self.set_affinity(cpu, task, i),
            Pending::Scheduler(s) => self.set_scheduler(cpu, task, s),
        }
    }

    /// The switch to `task` is done: its wakeup latency is recorded, and it
    /// refills its working set if it last ran elsewhere.
    fn switched_in(&mut self, cpu: usize, task: usize) {
        if let Some((at, timer)) = self.tasks[task].woken_ns.take() {
            if at >= self.measure_from_ns {
                let t = &mut self.tasks[task];
                let hist = if timer {
                    &mut t.timer_latency
                } else {
                    &mut t.wakeup_latency
                };
                hist.record(self.now - at);
            }
            let t = &mut self.tasks[task];
            if std::mem::take(&mut t.prog.in_timer) {
                // A timer instruction's wakeup begins an activation.
                t.prog.activation_ns = self.now;
            }
        }
        let ws = self.tasks[task].working_set_kib;
        let warm = self.tasks[task].warm_cpu.replace(cpu);
        let refill = match warm {
            Some(from) if ws > 0 => {
                // Part of it may have been evicted from the LLC
                // it was in by the other tasks' working sets there.
                let llc = self.topo.cpus[from].llc;
                let evicted = self.cost.evicted(self.occupancy.llc_ws_kib[llc]);
                self.occupancy.llc_ws_kib[llc] -= ws;
                self.cost
                    .refill_with_eviction(&self.topo, ws, from, cpu, evicted)
            }
            _ => 0,
        };
        self.occupancy.llc_ws_kib[self.topo.cpus[cpu].llc] += ws;
        if refill > 0 {
            self.start_segment(cpu, SegKind::User, refill, Pending::None);
        } else {
            self.continue_or_preempt(cpu);
        }
    }

    pub(super) fn exit_task(&mut self, cpu: usize, task: usize) {
        if self.is_rt(task) {
            self.dequeue_rt_curr(cpu, task);
        } else {
            self.touch_rq(cpu);
            self.touch_task(task);
            self.cpus[cpu].rq.dequeue_curr(task, &self.ents);
            self.note_idle(cpu);
            let rq = &mut self.cpus[cpu].rq;
            rq.pelt
                .detach(&self.ents[task].pelt, self.ents[task].weight);
        }
        self.tasks[task].state = TaskState::Exited;
        self.tasks_alive -= 1;
        self.tasks[task].exited_ns = Some(self.now);
        if let Some(warm) = self.tasks[task].warm_cpu {
            self.occupancy.llc_ws_kib[self.topo.cpus[warm].llc] -= self.tasks[task].working_set_kib;
        }
        self.schedule(cpu);
    }

    pub(crate) fn timer_fired(&mut self, task: usize, gen: u64) {
        let t = &self.tasks[task];
        if t.state == TaskState::Blocked(Wait::Timer) && t.prog.timer_gen == gen {
            // The timer interrupt runs on the CPU the task slept on.
            self.try_to_wake_up(task, None, false);
        }
    }
}

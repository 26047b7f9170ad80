//! Blocking and waking tasks: try_to_wake_up (placement by the
//! scheduler, then a local enqueue, a direct remote one or a queued one by
//! IPI), wakeup preemption, the enqueue's notifications, and the
//! migrations the balancer asks for.

use super::cpu::{CpuState, SegKind};
use super::stats::TraceEvent;
use super::task::{Pending, TaskState, Wait};
use super::{Event, Sim};
use crate::counters::{Counter, Distance, Reason};
use crate::policy::{Feature, Picker, UtilEstRule};
use crate::sched::load::{update_avg, Pelt, UtilEst, SCHED_CAPACITY_SCALE};
use crate::sched::note_nr_running;
use crate::sched::wakeup::{self, WakeKind};

impl Sim {
    /// Wakes `waiters` (each a futex wake: the waker pays for each wakeup
    /// and its placement's scan), then goes on with `then`.
    pub(super) fn wake_then(
        &mut self,
        cpu: usize,
        task: usize,
        waiters: Vec<usize>,
        sync: bool,
        then: Pending,
    ) {
        let mut woken = 0;
        self.waker_extra_ns = 0;
        for w in waiters {
            if self.try_to_wake_up(w, Some(cpu), sync) {
                woken += 1;
            }
        }
        if woken > 1 {
            self.counters.count(Counter::WakeupOneToMany);
        }
        if woken > 0 {
            self.counters.add(Counter::FutexWoken, woken);
            let cost = woken * self.cost.wakeup() + std::mem::take(&mut self.waker_extra_ns);
            self.start_segment(cpu, SegKind::Kernel, cost, then);
        } else {
            self.apply_pending(cpu, task, then);
        }
    }

    /// `task` sent data on TCP channel `chan`: the segment carries the ACK
    /// of what the task read and has not acknowledged on the connection's
    /// other direction (a channel `chan`'s reader writes and `task` reads),
    /// so tcp_ack in this softirq frees that window and wakes its writers
    /// (not sync), added to `waiters`.
    pub(super) fn piggyback_acks(
        &mut self,
        task: usize,
        chan: usize,
        waiters: &mut Vec<(usize, bool)>,
    ) {
        let peer = self.chans[chan].last_reader_task();
        if peer.is_none() || self.tasks[task].prog.acks_owed.is_empty() {
            return;
        }
        // In place and in order: the ACKs not owed on this way stay owed,
        // and the lists keep their memory (nothing allocated per message).
        let mut owed = std::mem::take(&mut self.tasks[task].prog.acks_owed);
        owed.retain(|&r| {
            let back = &mut self.chans[r];
            if !back.is_way_back(peer, task) {
                return true;
            }
            back.ack_read();
            let writers = back.take_writers();
            for _ in 0..writers.len() {
                self.counters.count(Counter::TcpAckWakeup);
            }
            waiters.extend(writers.iter().map(|&w| (w, false)));
            self.chans[r].return_writers(writers);
            self.recharge_llcs(r);
            false
        });
        self.tasks[task].prog.acks_owed = owed;
    }

    /// Wakes every waiter of a channel; the waker pays for each wakeup
    /// (and its placement's idle-CPU scan) before continuing.
    pub(super) fn wake_all(&mut self, cpu: usize, waiters: &[usize], sync: bool) {
        self.wake_each(cpu, waiters.iter().map(|&w| (w, sync)));
    }

    /// [`Self::wake_all`] with each waiter's own sync hint.
    pub(super) fn wake_each(
        &mut self,
        cpu: usize,
        waiters: impl IntoIterator<Item = (usize, bool)>,
    ) {
        let mut woken = 0;
        self.waker_extra_ns = 0;
        for (w, sync) in waiters {
            if self.try_to_wake_up(w, Some(cpu), sync) {
                woken += 1;
            }
        }
        if woken > 1 {
            self.counters.count(Counter::WakeupOneToMany);
        }
        if woken > 0 {
            // Each wakeup's work, plus the CPUs its placement scanned and
            // the IPIs it sent.
            let cost = woken * self.cost.wakeup() + std::mem::take(&mut self.waker_extra_ns);
            self.start_segment(cpu, SegKind::Kernel, cost, Pending::None);
        } else {
            self.continue_or_preempt(cpu);
        }
    }

    pub(super) fn block(&mut self, cpu: usize, task: usize, wait: Wait) {
        if self.is_rt(task) {
            self.dequeue_rt_curr(cpu, task);
        } else {
            self.dequeue_fair_curr(cpu, task);
        }
        self.tasks[task].state = TaskState::Blocked(wait);
        self.wait_on(cpu, task, wait);
    }

    /// dequeue_task_fair for the running task going to sleep.
    fn dequeue_fair_curr(&mut self, cpu: usize, task: usize) {
        self.touch_rq(cpu);
        // v6.12's dequeue_task_fair takes the UTIL_EST sample before the
        // dequeue brings the task's PELT up to now; v6.5's after.
        let early = (self.ents[task].util_est, self.ents[task].pelt);
        let moved = self.touch_task(task);
        // avg_overlap: how long the task ran on after it last woke another.
        if let Some(at) = self.tasks[task].sched.last_wakeup_exec.take() {
            let sample = self.ents[task].sum_exec_ns - at;
            let t = &mut self.tasks[task];
            update_avg(&mut t.sched.avg_overlap_ns, sample);
        }
        // Under EEVDF's DELAY_DEQUEUE the task may stay queued, delayed.
        self.cpus[cpu]
            .rq
            .block_curr(task, &mut self.ents, &self.policy);
        self.sample_util_est(task, early, moved);
        self.note_idle(cpu);
    }

    /// Blocking continued: the task waits on `wait`'s list, and `cpu`
    /// picks another.
    fn wait_on(&mut self, cpu: usize, task: usize, wait: Wait) {
        match wait {
            Wait::Read(c) => {
                let measuring = self.now >= self.measure_from_ns;
                self.chans[c].queue_reader(task, measuring);
            }
            Wait::Write(c) => {
                let measuring = self.now >= self.measure_from_ns;
                self.chans[c].queue_writer(task, measuring);
            }
            Wait::Timer => self.tasks[task].prog.timer_gen += 1,
            Wait::Lock(m) => {
                self.note_futex_wait();
                self.sync.mutexes[m].queue(task);
                // Woken, a spinning lock spins again before sleeping again.
                self.tasks[task].prog.spins = 0;
                // Woken, it retries the atomic in user space first.
                self.tasks[task].prog.in_syscall = false;
            }
            // Already on the wait list since they arrived.
            Wait::Cond(_) | Wait::Barrier(_) | Wait::Sem(_) => self.note_futex_wait(),
            Wait::Lw(_) => self.counters.count(Counter::LwSlept),
        }
        self.schedule(cpu);
    }

    /// util_est_update for a task that went to sleep: its utilisation is a
    /// sample of its size, once its estimate has left the queue's sum.
    /// `early` is the estimate and PELT before the dequeue's update, which
    /// moved the averages or not.
    pub(super) fn sample_util_est(&mut self, task: usize, early: (UtilEst, Pelt), moved: bool) {
        let rule = self.policy.era.rules().util_est;
        if rule == UtilEstRule::Absent || !self.policy.features.has(Feature::UtilEst) {
            return;
        }
        let fastup = self.policy.features.has(Feature::UtilEstFastup);
        let e = &mut self.ents[task];
        if rule == UtilEstRule::Ewma {
            let (mut ue, pelt) = early;
            ue.sample(
                rule,
                fastup,
                pelt.util_avg,
                pelt.runnable_avg,
                SCHED_CAPACITY_SCALE,
            );
            // The dequeue's update came after the sample.
            ue.unchanged &= !moved;
            e.util_est = ue;
        } else {
            let (util, runnable) = (e.pelt.util_avg, e.pelt.runnable_avg);
            e.util_est
                .sample(rule, fastup, util, runnable, SCHED_CAPACITY_SCALE);
        }
    }

    /// try_to_wake_up: picks a CPU for a blocked task and makes it runnable
    /// there. `waker_cpu` None means an interrupt on the task's own CPU.
    /// Returns false if the task was not blocked.
    pub(crate) fn try_to_wake_up(
        &mut self,
        task: usize,
        waker_cpu: Option<usize>,
        sync: bool,
    ) -> bool {
        if !matches!(self.tasks[task].state, TaskState::Blocked(_)) {
            return false;
        }
        let prev = self.tasks[task].cpu;
        let this = waker_cpu.unwrap_or(prev);
        // The kernel syncs the wakee's load and accounts the waker before
        // deciding; it updates neither queue's load.
        self.touch_task(task);
        self.sync_rq(this);
        self.sync_rq(prev);
        let waker = waker_cpu.and_then(|c| self.curr_of(c));
        if let Some(w) = waker {
            self.tasks[w].sched.last_wakeup_exec = Some(self.ents[w].sum_exec_ns);
        }
        if sync {
            self.counters.count(Counter::TtwuSync);
        }
        let timer = waker_cpu.is_none();
        self.tasks[task].woken_ns = Some((self.now, timer));
        if let TaskState::Blocked(Wait::Read(_)) = self.tasks[task].state {
            self.tasks[task].prog.lap_from_ns = self.now;
            self.tasks[task].prog.read_blocked = true;
        }
        if self.ents[task].delayed {
            self.wake_delayed(task, this);
            return true;
        }
        let placed = if self.is_rt(task) {
            let (cpu, reason) = crate::sched::rt::select_task_rq_rt(self, task, this);
            wakeup::Placement::new(cpu, reason)
        } else {
            self.sched_select_task_rq(task, prev, this, sync, WakeKind::Wakeup)
        };
        let (target, reason) = (placed.cpu, placed.reason);
        self.waker_extra_ns += placed.scanned as u64 * self.cost.costs().scan_ns_per_cpu;
        self.count_placement(&placed, prev);
        self.trace_event(TraceEvent::Wakeup {
            t: self.now,
            task,
            waker_cpu: this,
            target,
            reason,
        });
        if target != prev {
            self.trace_migrate(task, prev, target, reason);
        }
        if target == this {
            self.counters.count(Counter::TtwuLocal);
            self.activate(task, target);
            let preempted = self.notify_enqueued(target, task, None, sync);
            self.count_wakeup_preempt(preempted, true);
            self.rt_woken(target, task, preempted);
            return true;
        }
        self.counters.count(Counter::TtwuRemote);
        if let Some(d) = self.topo.distance(this, target).cost_index() {
            self.counters.count(Counter::TtwuRemoteAt(Distance::ALL[d]));
        }
        if self.wakeup_is_queued(this, target) {
            // TTWU_QUEUE: the target enqueues it when the IPI arrives, or,
            // idle in MWAIT, when it sees need_resched (set_nr_if_polling).
            let delay = if self.idle_polling(target) {
                self.counters.count(Counter::WakeIdleWithoutIpi);
                self.cost.polling_wake(&self.topo, this, target)
            } else {
                self.ipi_sent();
                let halted = self.cpus[target].state == CpuState::Idle;
                self.cost.ipi_latency(halted)
            };
            self.tasks[task].state = TaskState::Waking(target);
            self.cpus[target].wake_pending += 1;
            self.note_idle(target);
            self.queue
                .push(self.now + delay, Event::WakeArrive { cpu: target, task });
        } else {
            self.activate(task, target);
            let preempted = self.notify_enqueued(target, task, Some(this), sync);
            self.count_wakeup_preempt(preempted, false);
            self.rt_woken(target, task, preempted);
        }
        true
    }

    /// An IPI goes out: counted, and its sending charged to the waker
    /// (when a waker's wakeups are being charged: wake_then, wake_each).
    fn ipi_sent(&mut self) {
        self.counters.count(Counter::IpiSent);
        self.waker_extra_ns += self.cost.ipi_send();
    }

    /// ttwu_runnable: a delayed task (EEVDF) is still on its queue, so it
    /// is woken there, with no CPU selection, and may preempt.
    pub(super) fn wake_delayed(&mut self, task: usize, this: usize) {
        let cpu = self.tasks[task].cpu;
        self.touch_rq(cpu);
        self.cpus[cpu]
            .rq
            .requeue_delayed(task, &mut self.ents, &self.policy);
        self.note_idle(cpu);
        self.tasks[task].state = TaskState::Queued(cpu);
        self.counters.count(Counter::TtwuDelayed);
        if cpu == this {
            self.counters.count(Counter::TtwuLocal);
        } else {
            self.counters.count(Counter::TtwuRemote);
        }
        self.trace_event(TraceEvent::Wakeup {
            t: self.now,
            task,
            waker_cpu: this,
            target: cpu,
            reason: Reason::Delayed,
        });
        let preempted = self.notify_enqueued(cpu, task, (cpu != this).then_some(this), false);
        self.count_wakeup_preempt(preempted, cpu == this);
    }

    /// Counts a wakeup that preempted the running task, by whether that was
    /// the waker on its own CPU.
    pub(super) fn count_wakeup_preempt(&mut self, preempted: bool, on_waker_cpu: bool) {
        if preempted {
            self.counters.count(if on_waker_cpu {
                Counter::WakeupPreemptWakerCpu
            } else {
                Counter::WakeupPreemptOtherCpu
            });
        }
    }

    /// Whether a remote wakeup goes through the target's wake list and an
    /// IPI rather than a direct enqueue (TTWU_QUEUE; not in 2.6.2x).
    /// Whether `cpu` is idle in a state it leaves when a waker writes its
    /// flags word (MWAIT), so that waking it takes no IPI.
    pub(super) fn idle_polling(&self, cpu: usize) -> bool {
        self.cpus[cpu].state == CpuState::Idle && self.cost.idle_polls(self.cpus[cpu].cstate)
    }

    pub(super) fn wakeup_is_queued(&self, this: usize, target: usize) -> bool {
        if !self.policy.features.has(Feature::TtwuQueue) {
            return false;
        }
        let shares_llc = self.topo.cpus[this].llc == self.topo.cpus[target].llc;
        !shares_llc || (self.policy.era.rules().ttwu_queue_to_idle && self.cpu_idle(target))
    }

    pub(crate) fn wake_arrive(&mut self, cpu: usize, task: usize) {
        self.cpus[cpu].wake_pending -= 1;
        self.note_idle(cpu);
        self.activate(task, cpu);
        let preempted = self.notify_enqueued(cpu, task, None, false);
        self.count_wakeup_preempt(preempted, false);
        self.rt_woken(cpu, task, preempted);
    }

    /// Makes a woken task runnable on `cpu`: moves its vruntime and load
    /// between queues if it changed CPU, places it, enqueues it.
    pub(super) fn activate(&mut self, task: usize, cpu: usize) {
        if self.is_rt(task) {
            self.enqueue_rt(task, cpu);
            return;
        }
        let from = self.tasks[task].cpu;
        self.touch_task(task);
        if from != cpu {
            self.move_accounting(task, from, cpu, Departure::Wakeup);
        } else {
            self.touch_rq(cpu);
        }
        self.cpus[cpu]
            .rq
            .place(task, &mut self.ents, false, &self.policy);
        self.cpus[cpu].rq.enqueue(task, &mut self.ents);
        self.note_idle(cpu);
        note_nr_running(&mut self.sched, self.cpus[cpu].rq.nr_running);
        self.tasks[task].state = TaskState::Queued(cpu);
    }

    /// Moves a task's load and vruntime from `from`'s queue to `to`'s (it is
    /// on neither tree at this point). A task leaving by wakeup keeps its
    /// load on `from` until that queue's next update in eras whose
    /// migrate_task_rq_fair calls remove_entity_load_avg for it.
    pub(super) fn move_accounting(&mut self, task: usize, from: usize, to: usize, how: Departure) {
        let e = &self.ents[task];
        if how == Departure::Wakeup && self.policy.era.rules().wakeup_migration_removes_late {
            self.cpus[from].rq.removed.add(&e.pelt, e.weight);
        } else {
            self.touch_rq(from);
            let e = &self.ents[task];
            self.cpus[from].rq.pelt.detach(&e.pelt, e.weight);
        }
        let old_min = self.cpus[from].rq.min_vruntime;
        self.touch_rq(to);
        let e = &mut self.ents[task];
        // Keep the task's lag relative to its queue (modular, like the kernel's u64).
        e.vruntime = e
            .vruntime
            .wrapping_sub(old_min)
            .wrapping_add(self.cpus[to].rq.min_vruntime);
        if self.policy.era.rules().migration_makes_cold {
            e.exec_start_ns = None;
        }
        self.cpus[to]
            .rq
            .pelt
            .attach(&self.ents[task].pelt, self.ents[task].weight);
        self.tasks[task].cpu = to;
        self.tasks[task].migrations += 1;
    }

    /// Moves a queued (not running) task to another CPU (load balancing,
    /// RT push and pull, sched_setaffinity).
    pub(crate) fn migrate_queued(&mut self, task: usize, from: usize, to: usize, reason: Reason) {
        if self.is_rt(task) {
            self.migrate_rt(task, from, to, reason);
            return;
        }
        self.touch_task(task);
        self.touch_rq(from);
        self.cpus[from]
            .rq
            .dequeue(task, &mut self.ents, &self.policy);
        self.note_idle(from);
        self.move_accounting(task, from, to, Departure::Balance);
        if self.policy.era.rules().picker == Picker::Eevdf {
            // EEVDF places a moved task by its lag on the new queue.
            self.cpus[to]
                .rq
                .place(task, &mut self.ents, false, &self.policy);
        }
        self.cpus[to].rq.enqueue(task, &mut self.ents);
        self.note_idle(to);
        note_nr_running(&mut self.sched, self.cpus[to].rq.nr_running);
        // A delayed task (EEVDF) moves still asleep, and stays delayed.
        if !self.ents[task].delayed {
            self.tasks[task].state = TaskState::Queued(to);
        }
        self.trace_migrate(task, from, to, reason);
        self.notify_enqueued(to, task, None, false);
    }

    /// Active balance: the stopper on `from` pushes its running task to
    /// `to`. Only a task in user space is pushed (a syscall finishes first);
    /// returns whether one moved.
    pub(crate) fn active_balance(&mut self, from: usize, to: usize) -> bool {
        let Some(task) = self.cpus[from].rq.curr else {
            return false;
        };
        let in_user = self.cpus[from].seg.is_some_and(|s| s.kind == SegKind::User);
        if !in_user || !self.allowed(task).contains(to) {
            return false;
        }
        let left = self.stop_segment(from);
        self.tasks[task].compute_left += left;
        self.touch_rq(from);
        self.touch_task(task);
        self.cpus[from].rq.put_prev(task, &self.ents);
        self.tasks[task].state = TaskState::Queued(from);
        self.migrate_queued(task, from, to, Reason::ActiveBalance);
        self.schedule(from);
        true
    }

    /// After `task` was enqueued on `cpu`: wake the CPU if idle, or preempt
    /// its current task if the woken one should run first. `from` is the
    /// enqueuing CPU when it is another, which needs an IPI to do either
    /// (an idle CPU waiting in MWAIT only the write to its flags word).
    /// Returns whether the current task is preempted.
    pub(super) fn notify_enqueued(
        &mut self,
        cpu: usize,
        task: usize,
        from: Option<usize>,
        sync: bool,
    ) -> bool {
        let remote = from.is_some();
        let ipi = if remote {
            self.cost
                .ipi_latency(self.cpus[cpu].state == CpuState::Idle)
        } else {
            0
        };
        let mut preempted = false;
        match self.cpus[cpu].state {
            CpuState::Idle if remote && self.idle_polling(cpu) => {
                // resched_curr on a polling idle task: no IPI.
                if !self.cpus[cpu].kick_pending {
                    self.counters.count(Counter::WakeIdleWithoutIpi);
                }
                let from = from.unwrap_or(cpu);
                let at = self.now + self.cost.polling_wake(&self.topo, from, cpu);
                self.kick(cpu, at);
            }
            CpuState::Idle => {
                if remote && !self.cpus[cpu].kick_pending {
                    self.ipi_sent();
                }
                self.kick(cpu, self.now + ipi);
            }
            // Both look at the queue when they are done.
            CpuState::ExitingIdle | CpuState::Balancing => {}
            CpuState::Running => {
                if self.check_preempt_wakeup(cpu, task, sync) {
                    preempted = true;
                    if remote {
                        self.ipi_sent();
                        self.queue.push(self.now + ipi, Event::Resched { cpu });
                    } else {
                        self.resched_local(cpu);
                    }
                }
            }
        }
        preempted
    }
}

/// How a task leaves a CPU's queue, which decides when its load leaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Departure {
    /// try_to_wake_up chose another CPU.
    Wakeup,
    /// Moved while queued (balancing, affinity, RT push and pull).
    Balance,
}

#[cfg(test)]
mod tests {
    use super::{Departure, TaskState};
    use crate::engine::{Sim, SimConfig};
    use crate::policy::{Era, PolicySpec};
    use crate::topology::{preset, Topology};

    /// Two spinners per CPU of the 40-CPU Ivy Bridge, run for `ns`.
    fn crowded(era: Era, ns: u64) -> Sim {
        let topo = Topology::from_spec(&preset("ivb-ep-2s").unwrap()).unwrap();
        let task = r#"{"name":"spin","program":[{"compute":{"ns":500000000}}]}"#;
        let spec =
            serde_json::from_str(&format!(r#"{{"tasks":[{}]}}"#, [task; 80].join(","))).unwrap();
        let cfg = SimConfig::new(topo, &PolicySpec::era(era), &spec).unwrap();
        let mut sim = Sim::new(&cfg).unwrap();
        sim.run_until(ns).unwrap();
        sim
    }

    fn queued_task(sim: &Sim) -> (usize, usize) {
        (0..sim.tasks.len())
            .find_map(|t| match sim.tasks[t].state {
                TaskState::Queued(cpu) if sim.ents[t].exec_start_ns.is_some() => Some((t, cpu)),
                _ => None,
            })
            .expect("a queued task that has run")
    }

    /// __sched_fork (every era) clears exec_start: a task that has not run
    /// yet is never cache-hot for task_hot().
    #[test]
    fn a_task_that_has_not_run_yet_has_no_exec_start() {
        let sim = crowded(Era::V2_6_28, 1_000);
        let waiting = (0..sim.tasks.len())
            .find(|&t| matches!(sim.tasks[t].state, TaskState::Queued(_)))
            .expect("80 tasks on 40 CPUs: some wait");
        assert_eq!(sim.ents[waiting].exec_start_ns, None);
    }

    /// check_preempt_wakeup (v2.6.28, v4.15, v6.5) and
    /// check_preempt_wakeup_fair (v6.12): with a reschedule already pending
    /// on the CPU ("we can come here with TIF_NEED_RESCHED already set"),
    /// the buddies are marked as the era marks them first (2.6.28: next
    /// always; later: only under NEXT_BUDDY, off), then no preemption is
    /// decided. A wakee far behind in vruntime would preempt otherwise.
    #[test]
    fn a_pending_reschedule_stops_the_wakeup_preemption_check_after_the_buddies() {
        for (era, marks_next) in [
            (Era::V2_6_28, true),
            (Era::V4_15, false),
            (Era::V6_5, false),
            (Era::V6_12, false),
        ] {
            let setup = |need_resched: bool| {
                let mut sim = crowded(era, 60_000_000);
                let (task, cpu) = queued_task(&sim);
                let curr = sim.curr_of(cpu).expect("a crowded CPU runs a task");
                let v = sim.ents[curr].vruntime - 100_000_000;
                sim.cpus[cpu].rq.dequeue(task, &mut sim.ents, &sim.policy);
                sim.ents[task].vruntime = v;
                sim.ents[task].deadline = v;
                sim.cpus[cpu].rq.enqueue(task, &mut sim.ents);
                sim.cpus[cpu].rq.next = None;
                sim.cpus[cpu].need_resched = need_resched;
                (sim, task, cpu)
            };
            let (mut sim, task, cpu) = setup(false);
            assert!(sim.check_preempt_wakeup(cpu, task, false), "{era:?}");
            let (mut sim, task, cpu) = setup(true);
            assert!(!sim.check_preempt_wakeup(cpu, task, false), "{era:?}");
            assert_eq!(sim.cpus[cpu].rq.next == Some(task), marks_next, "{era:?}");
        }
    }

    /// migrate_task_rq_fair (v4.15, v6.5, v6.12): a task moved by its
    /// wakeup is only noted in the old queue's `removed`
    /// (remove_entity_load_avg), which takes the load away at its next
    /// update_cfs_rq_load_avg; a wakeup's CPU selection reads the queue
    /// without updating it. A task the balancer moves leaves at once (6.x
    /// detach_entity_cfs_rq), and v2.6.28's queues weigh only what they hold.
    #[test]
    fn a_task_woken_elsewhere_leaves_its_load_until_the_old_queue_updates() {
        for (era, late) in [
            (Era::V2_6_28, false),
            (Era::V4_15, true),
            (Era::V6_5, true),
            (Era::V6_12, true),
        ] {
            for how in [Departure::Wakeup, Departure::Balance] {
                let mut sim = crowded(era, 60_000_000);
                let (t, from) = queued_task(&sim);
                let to = (from + 1) % sim.cpus.len();
                sim.touch_rq(from);
                sim.touch_task(t);
                let before = sim.cpus[from].rq.pelt.load_avg;
                let own = sim.ents[t].pelt.load_avg;
                assert!(own > 0 && before > own, "{era:?}");
                sim.cpus[from].rq.dequeue(t, &mut sim.ents, &sim.policy);
                sim.move_accounting(t, from, to, how);
                sim.sync_rq(from);
                let seen = sim.cpus[from].rq.pelt.load_avg;
                sim.touch_rq(from);
                let updated = sim.cpus[from].rq.pelt.load_avg;
                let waits = late && how == Departure::Wakeup;
                let expect_seen = if waits { before } else { before - own };
                assert_eq!(seen, expect_seen, "{era:?} {how:?}");
                assert_eq!(updated, before - own, "{era:?} {how:?}");
            }
        }
    }

    /// migrate_task_rq_fair (v4.15) and enqueue_entity on ENQUEUE_MIGRATED
    /// (v6.3+, so v6.5 and v6.12) clear a migrated task's exec_start;
    /// v2.6.28's set_task_cpu keeps it.
    #[test]
    fn a_migrated_task_is_cold_from_4_15_on_and_keeps_its_clock_in_2_6_28() {
        for (era, cold) in [
            (Era::V2_6_28, false),
            (Era::V4_15, true),
            (Era::V6_5, true),
            (Era::V6_12, true),
        ] {
            let mut sim = crowded(era, 60_000_000);
            let (t, from) = queued_task(&sim);
            let to = (from + 1) % sim.cpus.len();
            let before = sim.ents[t].exec_start_ns;
            // set_task_cpu's part of a move (the enqueue after it may pick
            // the task at once, which starts its clock again).
            sim.move_accounting(t, from, to, Departure::Balance);
            let after = sim.ents[t].exec_start_ns;
            if cold {
                assert_eq!(after, None, "{era:?}");
            } else {
                assert_eq!(after, before, "{era:?}");
            }
        }
    }
}

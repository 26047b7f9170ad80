//! The pthread objects rt-app uses, as glibc builds them on futexes, and
//! memory writes.
//!
//! - A mutex is a word in user memory. Taking a free one, or releasing one
//!   nobody waits for, is one atomic on its cache line: no system call, no
//!   wakeup ([`crate::cost::CostModel::atomic`]). A task that finds it taken
//!   enters futex wait (a system call) and sleeps; an unlock that finds
//!   waiters calls futex wake, which wakes one through the scheduler's
//!   wakeup path (try_to_wake_up: select_task_rq, enqueue, preemption
//!   check). The woken task retries the atomic in user space and may find
//!   the mutex taken again (glibc's mutexes are not handed over).
//! - A condition variable's wait registers the task, releases the mutex
//!   (waking one of its waiters, if any), and sleeps in futex wait; a
//!   signal or broadcast that finds no waiter is an atomic only, and is
//!   lost. A waiter signalled while still entering its futex wait does not
//!   sleep. Woken, it takes the mutex again (a `lock` follows).
//! - A barrier: the arrivals before the last enter futex wait; the last
//!   calls futex wake for all of them and goes on.
//! - A semaphore (glibc's sem_t): a post that finds no waiter adds one to
//!   the count (an atomic); one that finds a waiter futex-wakes it and
//!   hands the post over. A wait takes one from the count (an atomic), or
//!   registers and futex-waits; posted while still entering, it does not
//!   sleep.

use super::cpu::SegKind;
use super::interp::Flow;
use super::sync::{Arrival, Line, Spin};
use super::task::{Pending, TaskState, Wait};
use super::Sim;
use crate::cost::{CostModel, WORK_SCALE};
use crate::counters::Counter;
use crate::topology::Topology;
use rand_core::RngCore;

impl Sim {
    pub(super) fn note_futex_wait(&mut self) {
        self.counters.count(Counter::FutexWait);
    }

    pub(super) fn note_futex_wake(&mut self) {
        self.counters.count(Counter::FutexWake);
    }

    /// `lock`: takes the mutex if free, else futex-waits for it.
    pub(super) fn lock(&mut self, cpu: usize, task: usize, m: usize) {
        if self.sync.mutexes[m].try_take(task) {
            let cost = atomic_on(&self.cost, &self.topo, &mut self.sync.mutexes[m].line, cpu);
            // Back from a futex wait that found the value changed, or in
            // user space all along.
            let kind = if std::mem::take(&mut self.tasks[task].prog.in_syscall) {
                SegKind::Kernel
            } else {
                SegKind::User
            };
            self.tasks[task].prog.pc += 1;
            self.start_segment(cpu, kind, cost, Pending::None);
        } else {
            self.wait_or_enter(cpu, task, Wait::Lock(m));
        }
    }

    /// `spin_lock`, as InnoDB's TTASEventMutex::enter (MySQL 8.0): takes
    /// the mutex if free; else, in user space, spins a round (ut_delay of
    /// a random 0..max_delay units of PAUSEs, then a look at the lock
    /// word) and tries again, up to `rounds` rounds; then the futex wait of
    /// `lock` (sync_array_wait_event). Woken, it spins again. The spin's
    /// time is user time on the CPU, counted in `spin.ns`.
    pub(super) fn spin_lock(&mut self, cpu: usize, task: usize, m: usize, spin: Spin) {
        let t = &self.tasks[task];
        if self.sync.mutexes[m].is_free() {
            if t.prog.spins > 0 {
                self.counters.count(Counter::SpinAcquired);
            }
            self.tasks[task].prog.spins = 0;
            self.lock(cpu, task, m);
        } else if !t.prog.in_syscall && t.prog.spins < spin.rounds {
            self.tasks[task].prog.spins += 1;
            // The MySQL manual: an integer from 0 up to but not including
            // innodb_spin_wait_delay, times the pause multiplier.
            let units = if spin.max_delay == 0 {
                0
            } else {
                self.tasks[task].prog.rng.next_u64() % spin.max_delay
            };
            // At least the look at the lock word: a load from L1.
            let ns = self.cost.pauses(units * spin.pauses_per_delay).max(1);
            self.counters.count(Counter::SpinRounds);
            self.counters.add(Counter::SpinNs, ns);
            self.start_segment(cpu, SegKind::User, ns, Pending::None);
        } else {
            if !t.prog.in_syscall {
                self.counters.count(Counter::SpinSlept);
            }
            self.tasks[task].prog.wake_all = spin.wake_all;
            self.wait_or_enter(cpu, task, Wait::Lock(m));
        }
    }

    /// `unlock`: releases the mutex; a futex wake if anyone waits.
    pub(super) fn unlock(&mut self, cpu: usize, m: usize) {
        let waiters = self.sync.mutexes[m].release();
        let cost = atomic_on(&self.cost, &self.topo, &mut self.sync.mutexes[m].line, cpu);
        if !waiters {
            self.start_segment(cpu, SegKind::User, cost, Pending::None);
        } else {
            self.note_futex_wake();
            let cost = cost + self.cost.syscall();
            self.start_segment(cpu, SegKind::Kernel, cost, Pending::WakeMutex(m));
        }
    }

    /// The waiters an unlock's futex wake takes: the oldest; if it sleeps
    /// in a `spin_lock` with `wake_all` (InnoDB's event), every such sleeper.
    pub(super) fn pop_mutex_waiters(&mut self, m: usize) -> Vec<usize> {
        let tasks = &self.tasks;
        self.sync.mutexes[m].take_waiters(|w| tasks[w].prog.wake_all)
    }

    /// `cond_wait`: registers on the condition variable, releases the
    /// mutex (waking one of its waiters), and futex-waits.
    pub(super) fn cond_wait(&mut self, cpu: usize, task: usize, cond: usize, mutex: usize) {
        debug_assert_eq!(self.sync.mutexes[mutex].owner(), Some(task));
        self.sync.conds[cond].queue(task);
        self.tasks[task].prog.released = false;
        let mut cost = atomic_on(&self.cost, &self.topo, &mut self.sync.conds[cond].line, cpu);
        let waiters = self.sync.mutexes[mutex].release();
        cost += atomic_on(
            &self.cost,
            &self.topo,
            &mut self.sync.mutexes[mutex].line,
            cpu,
        );
        let wait = Wait::Cond(cond);
        let pending = if !waiters {
            Pending::Park(wait)
        } else {
            self.note_futex_wake();
            cost += self.cost.syscall();
            Pending::WakeMutexThenPark { mutex, wait }
        };
        // The futex wait's entry.
        cost += self.cost.syscall();
        self.start_segment(cpu, SegKind::Kernel, cost, pending);
    }

    /// `signal` / `broadcast`: an atomic if nobody waits (the signal is
    /// lost), else a futex wake.
    pub(super) fn signal(&mut self, cpu: usize, cond: usize, all: bool) {
        let cost = atomic_on(&self.cost, &self.topo, &mut self.sync.conds[cond].line, cpu);
        if !self.sync.conds[cond].has_waiters() {
            self.start_segment(cpu, SegKind::User, cost, Pending::None);
        } else {
            self.note_futex_wake();
            let cost = cost + self.cost.syscall();
            self.start_segment(cpu, SegKind::Kernel, cost, Pending::Signal { cond, all });
        }
    }

    /// The waiters a signal (one) or broadcast (all) takes: those asleep
    /// are returned to be woken; those still entering are marked released.
    pub(super) fn take_cond_waiters(&mut self, cond: usize, all: bool) -> Vec<usize> {
        let taken = self.sync.conds[cond].take_waiters(all);
        self.asleep_or_released(taken, Wait::Cond(cond))
    }

    pub(super) fn asleep_or_released(&mut self, tasks: Vec<usize>, wait: Wait) -> Vec<usize> {
        let mut asleep = Vec::new();
        for t in tasks {
            if self.tasks[t].state == TaskState::Blocked(wait) {
                asleep.push(t);
            } else {
                self.tasks[t].prog.released = true;
            }
        }
        asleep
    }

    /// `barrier`: the last of its users to arrive releases the others.
    pub(super) fn barrier(&mut self, cpu: usize, task: usize, b: usize) {
        let br = &mut self.sync.barriers[b];
        let mut cost = atomic_on(&self.cost, &self.topo, &mut br.line, cpu);
        match br.arrive(task) {
            Arrival::Releases { anyone: false } => {
                self.start_segment(cpu, SegKind::User, cost, Pending::None);
            }
            Arrival::Releases { anyone: true } => {
                self.note_futex_wake();
                cost += self.cost.syscall();
                self.start_segment(cpu, SegKind::Kernel, cost, Pending::ReleaseBarrier(b));
            }
            Arrival::Waits => {
                self.tasks[task].prog.released = false;
                cost += self.cost.syscall();
                let pending = Pending::Park(Wait::Barrier(b));
                self.start_segment(cpu, SegKind::Kernel, cost, pending);
            }
        }
    }

    pub(super) fn take_barrier_waiters(&mut self, b: usize) -> Vec<usize> {
        let taken = self.sync.barriers[b].take_released();
        self.asleep_or_released(taken, Wait::Barrier(b))
    }

    /// `sem_post`: a futex wake for the oldest waiter, else count one up.
    /// `sync` passes WF_SYNC, as a pipe or socket write's wakeup does;
    /// `free` charges neither the atomic nor the system call (a replayed
    /// trace's run already holds them), only the wakeup.
    pub(super) fn sem_post(
        &mut self,
        cpu: usize,
        task: usize,
        s: usize,
        sync: bool,
        free: bool,
    ) -> Flow {
        let sem = &mut self.sync.sems[s];
        let cost = atomic_on(&self.cost, &self.topo, &mut sem.line, cpu);
        match (!sem.has_waiters(), free) {
            (true, true) => {
                sem.count_up();
                return Flow::Next;
            }
            (true, false) => {
                sem.count_up();
                self.start_segment(cpu, SegKind::User, cost, Pending::None);
            }
            (false, true) => {
                let woken = self.take_sem_waiter(s);
                if woken.is_empty() {
                    return Flow::Next;
                }
                self.wake_then(cpu, task, woken, sync, Pending::None);
            }
            (false, false) => {
                self.note_futex_wake();
                let cost = cost + self.cost.syscall();
                self.start_segment(
                    cpu,
                    SegKind::Kernel,
                    cost,
                    Pending::PostSem { sem: s, sync },
                );
            }
        }
        Flow::Yield
    }

    /// The waiter a post takes, if asleep (else it is marked released).
    pub(super) fn take_sem_waiter(&mut self, s: usize) -> Vec<usize> {
        let taken: Vec<usize> = self.sync.sems[s].take_waiter().into_iter().collect();
        self.asleep_or_released(taken, Wait::Sem(s))
    }

    /// `sem_wait`: takes a post if there is one, else futex-waits for one
    /// (`free`: at no cost, see `sem_post`).
    pub(super) fn sem_wait(&mut self, cpu: usize, task: usize, s: usize, free: bool) -> Flow {
        let sem = &mut self.sync.sems[s];
        let mut cost = atomic_on(&self.cost, &self.topo, &mut sem.line, cpu);
        if sem.take_or_queue(task) {
            if free {
                return Flow::Next;
            }
            self.start_segment(cpu, SegKind::User, cost, Pending::None);
        } else {
            if sem.queued() > 1 {
                self.counters.count(Counter::SemQueuedBehind);
            }
            self.tasks[task].prog.released = false;
            if free {
                self.block(cpu, task, Wait::Sem(s));
            } else {
                cost += self.cost.syscall();
                self.start_segment(cpu, SegKind::Kernel, cost, Pending::Park(Wait::Sem(s)));
            }
        }
        Flow::Yield
    }

    /// `mem`: writes `bytes` of a `buffer`-byte buffer at the core's
    /// copying speed; the part of the buffer (with what the LLC already
    /// holds) that overflows the LLC is memory traffic, sharing the node's
    /// bandwidth like a copy.
    pub(super) fn start_mem(&mut self, cpu: usize, task: usize, bytes: u64, buffer: u64) {
        let ns = self.cost.copy(bytes).max(1);
        let llc = self.topo.cpus[cpu].llc;
        let held = self.occupancy.llc_ws_kib[llc] as u128 * 1024
            + self.occupancy.llc_buf_bytes[llc] as u128
            + buffer as u128;
        let share = self.cost.llc_overflow(held);
        self.tasks[task].prog.mem_share = Some(share);
        self.start_work(cpu, SegKind::User, ns * WORK_SCALE, share, Pending::MemDone);
    }
}

/// An atomic by `cpu` on an object's line: a function of the fields it
/// needs, so callers pass the object's line in place.
fn atomic_on(cost: &CostModel, topo: &Topology, line: &mut Line, cpu: usize) -> u64 {
    cost.atomic(topo, line.write(cpu), cpu)
}

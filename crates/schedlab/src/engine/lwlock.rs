//! PostgreSQL's lightweight locks and write-ahead log flush, as 8.3 has
//! them (lwlock.c's LWLockAcquire and LWLockRelease, xlog.c's XLogFlush).
//!
//! - An LWLock is a few words under a spinlock (the atomic on its line).
//!   A task that cannot have it queues at the tail and sleeps on its own
//!   SysV semaphore (semop: a system call). A release that leaves the lock
//!   free wakes the head of the queue, an exclusive waiter alone or the run
//!   of shared waiters at the head, one semop each, and then wakes no one
//!   until one of them has run and tried again (`release_ok`). The lock is
//!   not handed over: a woken task competes again, and queues again at the
//!   tail if another task took the lock first. The wakeups are not sync.
//! - A log flush covers every record appended before it began: a task
//!   whose record another's flush covered does nothing, before the lock or
//!   once it has it; the tasks queued behind a flush are woken one by one
//!   (each an exclusive waiter), each finding its record flushed.

use super::cpu::SegKind;
use super::task::{Pending, TaskState, Wait};
use super::Sim;
use crate::counters::Counter;
use crate::workload::program::Time;
use rand_core::RngCore;

impl Sim {
    /// `lw_acquire`: takes the lock if it is free for this mode, else
    /// queues and sleeps; woken, the instruction runs again.
    pub(super) fn lw_acquire(&mut self, cpu: usize, task: usize, l: usize, exclusive: bool) {
        if self.s_lock_wait(cpu, task, l) {
            return;
        }
        let retry = std::mem::take(&mut self.tasks[task].prog.lw_retry);
        let lock = &mut self.sync.lwlocks[l];
        let from = lock.line.write(cpu);
        let mut cost = self.cost.atomic(&self.topo, from, cpu);
        if lock.acquire(task, exclusive, retry) {
            self.tasks[task].prog.pc += 1;
            self.hold_lw_mutex(task, l);
            self.start_segment(cpu, SegKind::User, cost, Pending::LwUnlock(l));
        } else {
            if retry {
                self.counters.count(Counter::LwLost);
            }
            self.tasks[task].prog.released = false;
            // PGSemaphoreLock's semop.
            cost += self.cost.syscall();
            self.start_segment(cpu, SegKind::Kernel, cost, Pending::Park(Wait::Lw(l)));
        }
    }

    /// `lw_release`: frees the lock; if that leaves it free and wakeups
    /// are allowed, takes the head waiters off the queue and posts each
    /// one's semaphore.
    pub(super) fn lw_release(&mut self, cpu: usize, task: usize, l: usize) {
        if self.s_lock_wait(cpu, task, l) {
            return;
        }
        self.tasks[task].prog.pc += 1;
        let lock = &mut self.sync.lwlocks[l];
        let from = lock.line.write(cpu);
        let mut cost = self.cost.atomic(&self.topo, from, cpu);
        let taken = lock.release();
        if taken.is_empty() {
            self.hold_lw_mutex(task, l);
            self.start_segment(cpu, SegKind::User, cost, Pending::LwUnlock(l));
            return;
        }
        let n = taken.len();
        for &t in taken {
            self.tasks[t].prog.lw_retry = true;
        }
        self.counters.add(Counter::LwWoken, n as u64);
        // One PGSemaphoreUnlock (semop) per waiter.
        cost += n as u64 * self.cost.syscall();
        self.start_segment(cpu, SegKind::Kernel, cost, Pending::ReleaseLw(l));
    }

    /// `task` holds lock `l`'s spinlock until its user segment ends (a
    /// kernel segment cannot be preempted, so only these can keep it
    /// past their time).
    fn hold_lw_mutex(&mut self, task: usize, l: usize) {
        self.sync.lwlocks[l].mutex_holder = Some(task);
        self.tasks[task].prog.lw_mutex = Some(l);
    }

    /// s_lock (PostgreSQL 8.x's s_lock.c) for lock `l`'s spinlock: while
    /// a task that is not running holds it (preempted inside it), `task`
    /// tries `spins_per_delay` times (a locked exchange and a PAUSE each,
    /// in user space) and then sleeps in pg_usleep, 1 ms at first and
    /// longer each time. Returns whether it is waiting; once the spinlock
    /// is free, or its holder runs (its segment is a few tries long), the
    /// wait ends and spins_per_delay adapts.
    fn s_lock_wait(&mut self, cpu: usize, task: usize, l: usize) -> bool {
        let held = match self.sync.lwlocks[l].mutex_holder {
            Some(h) if h != task => !matches!(self.tasks[h].state, TaskState::Running(_)),
            _ => false,
        };
        let s = &mut self.tasks[task].prog.s_lock;
        if !held {
            if s.waiting() {
                s.acquired();
            }
            return false;
        }
        if !s.spun {
            s.spun = true;
            let tries = s.spins_per_delay as u64;
            let from = self.sync.lwlocks[l].line.write(cpu);
            let first = self.cost.atomic(&self.topo, from, cpu);
            let again = self.cost.atomic(&self.topo, Some(cpu), cpu) + self.cost.pauses(1);
            let ns = first + (tries - 1) * again;
            self.counters.count(Counter::SLockSpins);
            self.start_segment(cpu, SegKind::User, ns, Pending::None);
        } else {
            s.spun = false;
            let random = self.tasks[task].prog.rng.next_u32();
            let ms = self.tasks[task].prog.s_lock.next_delay(random);
            self.counters.count(Counter::SLockDelays);
            // pg_usleep is a select() with a timeout: a system call, then
            // a timer sleep.
            let cost = self.cost.syscall();
            self.start_segment(
                cpu,
                SegKind::Kernel,
                cost,
                Pending::Sleep(ms as u64 * 1_000_000),
            );
        }
        true
    }

    /// The waiters a release took: those asleep are returned to be woken;
    /// those still entering their wait are marked released.
    pub(super) fn take_lw_waiters(&mut self, l: usize) -> Vec<usize> {
        let taken = self.sync.lwlocks[l].take_released();
        self.asleep_or_released(taken, Wait::Lw(l))
    }

    /// `log_append`: the task's record is the log's next.
    pub(super) fn log_append(&mut self, task: usize, log: usize) {
        self.tasks[task].prog.log_records[log] = self.sync.logs[log].append();
        self.tasks[task].prog.pc += 1;
    }

    /// Jumps to `to` if the task's last record is durable (or it has none).
    pub(super) fn log_skip_if_flushed(&mut self, task: usize, log: usize, to: usize) {
        let t = &mut self.tasks[task];
        if self.sync.logs[log].is_durable(t.prog.log_records[log]) {
            self.counters.count(Counter::LogCovered);
            t.prog.pc = to;
        } else {
            t.prog.pc += 1;
        }
    }

    /// The write and sync of every record appended so far: the task sleeps
    /// in the I/O for `io`.
    pub(super) fn log_write(&mut self, cpu: usize, task: usize, log: usize, io: Time) {
        self.counters.count(Counter::LogFlushes);
        self.tasks[task].prog.log_writing = self.sync.logs[log].appended();
        let ns = self.sample(task, io);
        let cost = self.cost.syscall();
        self.start_segment(cpu, SegKind::Kernel, cost, Pending::Sleep(ns));
    }

    /// The write is done: every record it covered is durable.
    pub(super) fn log_written(&mut self, task: usize, log: usize) {
        let t = &mut self.tasks[task];
        self.sync.logs[log].written(t.prog.log_writing);
        t.prog.pc += 1;
    }
}

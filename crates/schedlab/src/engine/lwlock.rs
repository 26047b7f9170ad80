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
use super::task::{Pending, Wait};
use super::Sim;
use crate::counters::Counter;
use crate::workload::program::Time;

impl Sim {
    /// `lw_acquire`: takes the lock if it is free for this mode, else
    /// queues and sleeps; woken, the instruction runs again.
    pub(super) fn lw_acquire(&mut self, cpu: usize, task: usize, l: usize, exclusive: bool) {
        let retry = std::mem::take(&mut self.tasks[task].lw_retry);
        let lock = &mut self.sync.lwlocks[l];
        let from = lock.last_cpu.replace(cpu);
        let mut cost = self.cost.atomic(&self.topo, from, cpu);
        if retry {
            // A woken waiter has run: releases may wake again.
            lock.release_ok = true;
        }
        let free = !lock.exclusive && (!exclusive || lock.shared == 0);
        if free {
            if exclusive {
                lock.exclusive = true;
            } else {
                lock.shared += 1;
            }
            self.tasks[task].pc += 1;
            self.start_segment(cpu, SegKind::User, cost, Pending::None);
        } else {
            if retry {
                self.counters.count(Counter::LwLost);
            }
            lock.waiters.push_back((task, exclusive));
            self.tasks[task].released = false;
            // PGSemaphoreLock's semop.
            cost += self.cost.syscall();
            self.start_segment(cpu, SegKind::Kernel, cost, Pending::Park(Wait::Lw(l)));
        }
    }

    /// `lw_release`: frees the lock; if that leaves it free and wakeups
    /// are allowed, takes the head waiters off the queue and posts each
    /// one's semaphore.
    pub(super) fn lw_release(&mut self, cpu: usize, l: usize) {
        let lock = &mut self.sync.lwlocks[l];
        let from = lock.last_cpu.replace(cpu);
        let mut cost = self.cost.atomic(&self.topo, from, cpu);
        if lock.exclusive {
            lock.exclusive = false;
        } else {
            debug_assert!(lock.shared > 0, "LWLock {l} released while free");
            lock.shared -= 1;
        }
        let wake = !lock.exclusive && lock.shared == 0 && lock.release_ok;
        let head = if wake { lock.waiters.pop_front() } else { None };
        let Some((head, head_exclusive)) = head else {
            self.start_segment(cpu, SegKind::User, cost, Pending::None);
            return;
        };
        lock.releasing.push(head);
        if !head_exclusive {
            while let Some(&(t, false)) = lock.waiters.front() {
                lock.waiters.pop_front();
                lock.releasing.push(t);
            }
        }
        lock.release_ok = false;
        let n = lock.releasing.len();
        for &t in &self.sync.lwlocks[l].releasing {
            self.tasks[t].lw_retry = true;
        }
        self.counters.add(Counter::LwWoken, n as u64);
        // One PGSemaphoreUnlock (semop) per waiter.
        cost += n as u64 * self.cost.syscall();
        self.start_segment(cpu, SegKind::Kernel, cost, Pending::ReleaseLw(l));
    }

    /// The waiters a release took: those asleep are returned to be woken;
    /// those still entering their wait are marked released.
    pub(super) fn take_lw_waiters(&mut self, l: usize) -> Vec<usize> {
        let taken = std::mem::take(&mut self.sync.lwlocks[l].releasing);
        self.asleep_or_released(taken, Wait::Lw(l))
    }

    /// `log_append`: the task's record is the log's next.
    pub(super) fn log_append(&mut self, task: usize, log: usize) {
        let l = &mut self.sync.logs[log];
        l.appended += 1;
        self.tasks[task].log_records[log] = l.appended;
        self.tasks[task].pc += 1;
    }

    /// Jumps to `to` if the task's last record is durable (or it has none).
    pub(super) fn log_skip_if_flushed(&mut self, task: usize, log: usize, to: usize) {
        let t = &mut self.tasks[task];
        if t.log_records[log] <= self.sync.logs[log].flushed {
            self.counters.count(Counter::LogCovered);
            t.pc = to;
        } else {
            t.pc += 1;
        }
    }

    /// The write and sync of every record appended so far: the task sleeps
    /// in the I/O for `io`.
    pub(super) fn log_write(&mut self, cpu: usize, task: usize, log: usize, io: Time) {
        self.counters.count(Counter::LogFlushes);
        self.tasks[task].log_writing = self.sync.logs[log].appended;
        let ns = self.sample(task, io);
        let cost = self.cost.syscall();
        self.start_segment(cpu, SegKind::Kernel, cost, Pending::Sleep(ns));
    }

    /// The write is done: every record it covered is durable.
    pub(super) fn log_written(&mut self, task: usize, log: usize) {
        let t = &mut self.tasks[task];
        let l = &mut self.sync.logs[log];
        l.flushed = l.flushed.max(t.log_writing);
        t.pc += 1;
    }
}

//! The state of the pthread objects rt-app uses (mutexes, spinning
//! mutexes, condition variables, barriers, shared timers), of counting semaphores (a
//! replayed trace's wakeups), and of PostgreSQL's LWLocks and write-ahead
//! logs; how tasks use them is `futex.rs` and `lwlock.rs`.
//!
//! The objects' fields are private to this file: the behaviour files see
//! each object through the few transitions below (take, release, queue,
//! take waiters), so a lock's rules live in one place and its costs,
//! wakeups and segments in another.

use super::task::Wait;
use crate::workload::program::Workload;
use std::collections::VecDeque;

/// The CPU that last wrote an object's cache line: an atomic on the line
/// pays for its transfer from there (`cost::CostModel::atomic`).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Line(Option<usize>);

impl Line {
    /// `cpu` writes the line; returns the CPU it comes from (None: first use).
    pub fn write(&mut self, cpu: usize) -> Option<usize> {
        self.0.replace(cpu)
    }
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Mutex {
    owner: Option<usize>,
    /// Tasks asleep in futex wait, oldest first.
    waiters: VecDeque<usize>,
    pub line: Line,
}

impl Mutex {
    /// Takes the mutex if it is free (the atomic that finds it so).
    pub fn try_take(&mut self, task: usize) -> bool {
        let free = self.owner.is_none();
        if free {
            self.owner = Some(task);
        }
        free
    }

    pub fn is_free(&self) -> bool {
        self.owner.is_none()
    }

    pub fn owner(&self) -> Option<usize> {
        self.owner
    }

    /// Frees it; returns whether anyone waits (the unlock's futex wake).
    pub fn release(&mut self) -> bool {
        self.owner = None;
        !self.waiters.is_empty()
    }

    pub fn queue(&mut self, task: usize) {
        self.waiters.push_back(task);
    }

    /// The waiters a futex wake takes: the oldest; if `wakes_all` says it
    /// sleeps in a `spin_lock` whose event wakes every sleeper (InnoDB's),
    /// every waiter it says so of.
    pub fn take_waiters(&mut self, wakes_all: impl Fn(usize) -> bool) -> Vec<usize> {
        let Some(first) = self.waiters.pop_front() else {
            return Vec::new();
        };
        let mut woken = vec![first];
        if wakes_all(first) {
            let (all, rest): (VecDeque<usize>, VecDeque<usize>) =
                self.waiters.iter().partition(|&&w| wakes_all(w));
            self.waiters = rest;
            woken.extend(all);
        }
        woken
    }
}

/// A `spin_lock`'s parameters (`Insn::SpinLock`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Spin {
    pub rounds: u32,
    pub max_delay: u64,
    pub pauses_per_delay: u64,
    pub wake_all: bool,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Cond {
    /// Tasks waiting (asleep, or still entering their wait), oldest first.
    waiters: VecDeque<usize>,
    pub line: Line,
}

impl Cond {
    pub fn queue(&mut self, task: usize) {
        self.waiters.push_back(task);
    }

    pub fn has_waiters(&self) -> bool {
        !self.waiters.is_empty()
    }

    /// The waiters a signal (the oldest) or a broadcast (all) takes.
    pub fn take_waiters(&mut self, all: bool) -> Vec<usize> {
        let n = if all {
            self.waiters.len()
        } else {
            1.min(self.waiters.len())
        };
        self.waiters.drain(..n).collect()
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Barrier {
    /// The tasks that use it.
    users: usize,
    /// Arrived and waiting (asleep, or still entering their wait).
    waiting: Vec<usize>,
    /// Taken by the last arrival, woken when its futex wake is entered.
    releasing: Vec<usize>,
    pub line: Line,
}

/// What a task's arrival at a barrier does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arrival {
    /// It is not the last: it waits.
    Waits,
    /// The last, and the others are released (none if it is its only user).
    Releases { anyone: bool },
}

impl Barrier {
    pub fn new(users: usize) -> Self {
        Barrier {
            users,
            waiting: Vec::new(),
            releasing: Vec::new(),
            line: Line::default(),
        }
    }

    pub fn arrive(&mut self, task: usize) -> Arrival {
        if self.waiting.len() + 1 >= self.users {
            let waiters = std::mem::take(&mut self.waiting);
            let anyone = !waiters.is_empty();
            self.releasing.extend(waiters);
            Arrival::Releases { anyone }
        } else {
            self.waiting.push(task);
            Arrival::Waits
        }
    }

    /// The tasks the last arrival released, to be woken.
    pub fn take_released(&mut self) -> Vec<usize> {
        std::mem::take(&mut self.releasing)
    }
}

/// A counting semaphore (sem_t).
#[derive(Debug, Clone, Default)]
pub(crate) struct Sem {
    /// Posts no waiter took yet.
    count: u64,
    /// Waiting (asleep, or still entering their wait), oldest first.
    waiters: VecDeque<usize>,
    pub line: Line,
}

impl Sem {
    pub fn has_waiters(&self) -> bool {
        !self.waiters.is_empty()
    }

    /// A post nobody waits for.
    pub fn count_up(&mut self) {
        self.count += 1;
    }

    /// The waiter a post takes.
    pub fn take_waiter(&mut self) -> Option<usize> {
        self.waiters.pop_front()
    }

    /// Tasks queued for a post.
    pub fn queued(&self) -> usize {
        self.waiters.len()
    }

    /// A wait: takes a post if there is one, else queues `task` (false).
    pub fn take_or_queue(&mut self, task: usize) -> bool {
        if self.count > 0 {
            self.count -= 1;
            true
        } else {
            self.waiters.push_back(task);
            false
        }
    }
}

/// A PostgreSQL LWLock (8.3's, lwlock.c).
#[derive(Debug, Clone)]
pub(crate) struct LwLock {
    exclusive: bool,
    shared: u32,
    /// Queued waiters, oldest first, each with whether it wants the lock
    /// exclusive; listed from their arrival (asleep, or still entering the
    /// semaphore wait).
    waiters: VecDeque<(usize, bool)>,
    /// False from a release that woke waiters until one of them retries.
    release_ok: bool,
    /// Taken off the queue by a release, woken when its posts are entered.
    releasing: Vec<usize>,
    /// Its line (the spinlock that guards its words).
    pub line: Line,
    /// The task inside the spinlock: from an acquire's or release's try to
    /// the end of its segment, which a preemption can stretch.
    pub mutex_holder: Option<usize>,
}

impl Default for LwLock {
    fn default() -> Self {
        LwLock {
            exclusive: false,
            shared: 0,
            waiters: VecDeque::new(),
            release_ok: true,
            releasing: Vec::new(),
            line: Line::default(),
            mutex_holder: None,
        }
    }
}

impl LwLock {
    /// LWLockAcquire's try: takes the lock if it is free for this mode,
    /// else queues `task` at the tail (false). `retry`: the task was woken
    /// by a release, so releases may wake again.
    pub fn acquire(&mut self, task: usize, exclusive: bool, retry: bool) -> bool {
        if retry {
            self.release_ok = true;
        }
        let free = !self.exclusive && (!exclusive || self.shared == 0);
        if !free {
            self.waiters.push_back((task, exclusive));
        } else if exclusive {
            self.exclusive = true;
        } else {
            self.shared += 1;
        }
        free
    }

    /// LWLockRelease: frees the lock; if that leaves it free and wakeups
    /// are allowed, takes the head waiters off the queue (an exclusive
    /// waiter alone, or the run of shared waiters at the head) and holds
    /// further wakeups until one of them retries. Returns those taken.
    pub fn release(&mut self) -> &[usize] {
        if self.exclusive {
            self.exclusive = false;
        } else {
            debug_assert!(self.shared > 0, "LWLock released while free");
            self.shared -= 1;
        }
        let wake = !self.exclusive && self.shared == 0 && self.release_ok;
        let head = if wake { self.waiters.pop_front() } else { None };
        let Some((head, head_exclusive)) = head else {
            return &[];
        };
        self.releasing.push(head);
        if !head_exclusive {
            while let Some(&(t, false)) = self.waiters.front() {
                self.waiters.pop_front();
                self.releasing.push(t);
            }
        }
        self.release_ok = false;
        &self.releasing
    }

    /// The tasks the last release took, to be woken.
    pub fn take_released(&mut self) -> Vec<usize> {
        std::mem::take(&mut self.releasing)
    }
}

/// A write-ahead log: records numbered from 1 as they are appended.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Log {
    /// The last record appended.
    appended: u64,
    /// Every record up to this one is durable.
    flushed: u64,
}

impl Log {
    /// Appends a record; returns its number.
    pub fn append(&mut self) -> u64 {
        self.appended += 1;
        self.appended
    }

    pub fn appended(&self) -> u64 {
        self.appended
    }

    pub fn is_durable(&self, record: u64) -> bool {
        record <= self.flushed
    }

    /// A write covering every record up to `upto` is done.
    pub fn written(&mut self, upto: u64) {
        self.flushed = self.flushed.max(upto);
    }
}

/// Every pthread object of a workload, by the index its instructions use.
#[derive(Debug, Clone)]
pub(crate) struct SyncObjects {
    pub mutexes: Vec<Mutex>,
    pub conds: Vec<Cond>,
    pub barriers: Vec<Barrier>,
    pub sems: Vec<Sem>,
    pub lwlocks: Vec<LwLock>,
    pub logs: Vec<Log>,
    /// The end of each shared timer's current period (None until first
    /// used), like a task's own timers.
    pub timers: Vec<Option<u64>>,
}

impl SyncObjects {
    /// All free, with no waiters.
    pub fn new(workload: &Workload) -> Self {
        SyncObjects {
            mutexes: vec![Mutex::default(); workload.mutexes.len()],
            conds: vec![Cond::default(); workload.conds.len()],
            barriers: workload
                .barrier_users
                .iter()
                .map(|&users| Barrier::new(users))
                .collect(),
            sems: vec![Sem::default(); workload.sems.len()],
            lwlocks: vec![LwLock::default(); workload.lwlocks.len()],
            logs: vec![Log::default(); workload.logs.len()],
            timers: vec![None; workload.shared_timers.len()],
        }
    }

    /// Every wait list, with the wait its tasks are in and whether they
    /// are all asleep (a mutex's), or listed from their arrival and so
    /// possibly still entering the wait on a CPU (the others').
    pub fn wait_lists(&self) -> impl Iterator<Item = (Wait, bool, Vec<usize>)> + '_ {
        let all = |w: &VecDeque<usize>| w.iter().copied().collect::<Vec<_>>();
        let mutexes = self.mutexes.iter().enumerate();
        let conds = self.conds.iter().enumerate();
        let barriers = self.barriers.iter().enumerate();
        let sems = self.sems.iter().enumerate();
        let lwlocks = self.lwlocks.iter().enumerate();
        mutexes
            .map(move |(m, mx)| (Wait::Lock(m), true, all(&mx.waiters)))
            .chain(conds.map(move |(c, cv)| (Wait::Cond(c), false, all(&cv.waiters))))
            .chain(barriers.map(|(b, br)| {
                let listed = br.waiting.iter().chain(&br.releasing).copied();
                (Wait::Barrier(b), false, listed.collect())
            }))
            .chain(sems.map(move |(s, sem)| (Wait::Sem(s), false, all(&sem.waiters))))
            .chain(lwlocks.map(|(l, lock)| {
                let queued = lock.waiters.iter().map(|&(t, _)| t);
                let listed = queued.chain(lock.releasing.iter().copied());
                (Wait::Lw(l), false, listed.collect())
            }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// lwlock.c (8.3), LWLockRelease: a release wakes the exclusive waiter
    /// at the head alone, or the run of shared waiters at the head; then
    /// no one until a woken waiter has retried.
    #[test]
    fn an_lwlock_release_wakes_the_head_and_then_waits_for_a_retry() {
        let mut lock = LwLock::default();
        assert!(lock.acquire(0, true, false));
        assert!(!lock.acquire(1, false, false));
        assert!(!lock.acquire(2, false, false));
        assert!(!lock.acquire(3, true, false));
        assert!(!lock.acquire(4, false, false));
        assert_eq!(lock.release(), &[1, 2], "the shared run at the head, not 4");
        assert_eq!(lock.take_released(), vec![1, 2]);
        // Task 0 takes it again before either woken task retries, and its
        // release may wake no one: release_ok is false.
        assert!(lock.acquire(0, true, false));
        assert!(lock.release().is_empty());
        // Task 1 retries: wakeups are allowed again. It takes the lock
        // shared; its release leaves it free and wakes exclusive 3 alone.
        assert!(lock.acquire(1, false, true));
        assert_eq!(lock.release(), &[3]);
    }

    #[test]
    fn a_mutex_hands_nothing_over_and_wakes_its_oldest_waiter() {
        let mut m = Mutex::default();
        assert!(m.try_take(0));
        assert!(!m.try_take(1));
        m.queue(1);
        m.queue(2);
        assert!(m.release(), "someone waits");
        assert!(m.is_free(), "not handed over");
        assert_eq!(m.take_waiters(|_| false), vec![1]);
        // An InnoDB-style event wakes every sleeper that asked for it.
        m.queue(3);
        m.queue(4);
        assert_eq!(m.take_waiters(|w| w != 3), vec![2, 4]);
        assert_eq!(m.take_waiters(|_| false), vec![3]);
    }

    #[test]
    fn a_barrier_releases_on_its_last_arrival() {
        let mut b = Barrier::new(3);
        assert_eq!(b.arrive(0), Arrival::Waits);
        assert_eq!(b.arrive(1), Arrival::Waits);
        assert_eq!(b.arrive(2), Arrival::Releases { anyone: true });
        assert_eq!(b.take_released(), vec![0, 1]);
        assert_eq!(
            Barrier::new(1).arrive(0),
            Arrival::Releases { anyone: false }
        );
    }

    #[test]
    fn a_semaphore_counts_posts_nobody_took() {
        let mut s = Sem::default();
        s.count_up();
        assert!(s.take_or_queue(0), "the post was kept");
        assert!(!s.take_or_queue(1));
        assert!(s.has_waiters());
        assert_eq!(s.take_waiter(), Some(1));
    }

    #[test]
    fn a_log_record_is_durable_once_a_write_covering_it_is_done() {
        let mut log = Log::default();
        let first = log.append();
        let upto = log.appended();
        let second = log.append();
        log.written(upto);
        assert!(log.is_durable(first));
        assert!(!log.is_durable(second));
        log.written(first);
        assert!(
            !log.is_durable(second),
            "an older write never undoes a newer"
        );
    }
}

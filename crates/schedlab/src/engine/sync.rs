//! The state of the pthread objects rt-app uses (mutexes, spinning
//! mutexes, condition variables, barriers, shared timers), of counting semaphores (a
//! replayed trace's wakeups), and of PostgreSQL's LWLocks and write-ahead
//! logs; how tasks use them is `futex.rs` and `lwlock.rs`.

use crate::workload::program::Workload;
use std::collections::VecDeque;

#[derive(Debug, Clone, Default)]
pub(crate) struct Mutex {
    pub owner: Option<usize>,
    /// Tasks asleep in futex wait, oldest first.
    pub waiters: VecDeque<usize>,
    /// The CPU that last wrote the mutex's line.
    pub last_cpu: Option<usize>,
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
    pub waiters: VecDeque<usize>,
    pub last_cpu: Option<usize>,
}

#[derive(Debug, Clone)]
pub(crate) struct Barrier {
    /// The tasks that use it.
    pub users: usize,
    /// Arrived and waiting (asleep, or still entering their wait).
    pub waiting: Vec<usize>,
    /// Taken by the last arrival, woken when its futex wake is entered.
    pub releasing: Vec<usize>,
    pub last_cpu: Option<usize>,
}

impl Barrier {
    pub fn new(users: usize) -> Self {
        Barrier {
            users,
            waiting: Vec::new(),
            releasing: Vec::new(),
            last_cpu: None,
        }
    }
}

/// A counting semaphore (sem_t).
#[derive(Debug, Clone, Default)]
pub(crate) struct Sem {
    /// Posts no waiter took yet.
    pub count: u64,
    /// Waiting (asleep, or still entering their wait), oldest first.
    pub waiters: VecDeque<usize>,
    pub last_cpu: Option<usize>,
}

/// A PostgreSQL LWLock (8.3's, lwlock.c).
#[derive(Debug, Clone)]
pub(crate) struct LwLock {
    pub exclusive: bool,
    pub shared: u32,
    /// Queued waiters, oldest first, each with whether it wants the lock
    /// exclusive; listed from their arrival (asleep, or still entering the
    /// semaphore wait).
    pub waiters: VecDeque<(usize, bool)>,
    /// False from a release that woke waiters until one of them retries.
    pub release_ok: bool,
    /// Taken off the queue by a release, woken when its posts are entered.
    pub releasing: Vec<usize>,
    /// The CPU that last wrote the lock's line (its spinlock).
    pub last_cpu: Option<usize>,
}

impl Default for LwLock {
    fn default() -> Self {
        LwLock {
            exclusive: false,
            shared: 0,
            waiters: VecDeque::new(),
            release_ok: true,
            releasing: Vec::new(),
            last_cpu: None,
        }
    }
}

/// A write-ahead log: records numbered from 1 as they are appended.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Log {
    /// The last record appended.
    pub appended: u64,
    /// Every record up to this one is durable.
    pub flushed: u64,
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
}

//! The state of the pthread objects rt-app uses (mutexes, spinning
//! mutexes, condition variables, barriers) and of counting semaphores
//! (a replayed trace's wakeups); how tasks use them is `futex.rs`.

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

/// Every pthread object of a workload, by the index its instructions use.
#[derive(Debug, Clone)]
pub(crate) struct SyncObjects {
    pub mutexes: Vec<Mutex>,
    pub conds: Vec<Cond>,
    pub barriers: Vec<Barrier>,
    pub sems: Vec<Sem>,
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
        }
    }
}

//! A task as the engine keeps it: where it is in its program, its state
//! (running, queued, blocked on what), what happens when its current
//! segment ends, and the bookkeeping of its measurements. The interpreter
//! is `interp.rs`; waking and migrating, `wake.rs`.

use super::stats::LatencyHist;
use crate::sched::TaskSched;
use rand_pcg::Pcg32;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    Read(usize),
    Write(usize),
    Timer,
    /// In futex wait on a mutex.
    Lock(usize),
    /// In futex wait on a condition variable.
    Cond(usize),
    /// In futex wait at a barrier.
    Barrier(usize),
    /// In futex wait on a semaphore.
    Sem(usize),
    /// Asleep on its own semaphore, queued for an LWLock.
    Lw(usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskState {
    Running(usize),
    Queued(usize),
    Blocked(Wait),
    /// Woken; the wakeup is on its way to this CPU by IPI.
    Waking(usize),
    Exited,
}

/// What happens when the current segment ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pending {
    None,
    /// The context switch to this task is done.
    SwitchIn,
    /// A syscall entry is done; check the channel again.
    Recheck,
    /// A write's copy is done: the data becomes readable. `next_writer`: a
    /// v5.5+ pipe writer that had to wait wakes the next waiting writer if
    /// it leaves a slot free (pipe_write's wake_next_writer).
    Deposit {
        chan: usize,
        bytes: u64,
        next_writer: bool,
    },
    /// A loopback send's transmit path is done: its receive path runs in
    /// the NET_RX softirq on this CPU, then the data (`bytes`, 0 for a
    /// dropped datagram) becomes readable.
    NetRx {
        chan: usize,
        bytes: u64,
    },
    /// A TCP read sent an ACK for `bytes`: its receive path runs in the
    /// NET_RX softirq on this (the reader's) CPU.
    AckRx {
        chan: usize,
        bytes: u64,
    },
    /// The ACK's softirq is done: the window space of `bytes` is free and
    /// writers waiting for it wake (not sync).
    Acked {
        chan: usize,
        bytes: u64,
    },
    /// A read is done: wake the writers waiting for space (all of them, or
    /// the one that waited longest).
    Drained {
        chan: usize,
        all: bool,
    },
    /// nanosleep's entry is done: sleep this long.
    Sleep(u64),
    /// fork's work is done: start the child.
    Fork(usize),
    /// A softirq that interrupted this task's segment is done.
    IrqReturn,
    /// A `runtime` instruction's wall time is over.
    RuntimeDone,
    /// A `mem` instruction's writing is done.
    MemDone,
    /// An unlock's futex wake entry is done: wake one waiter.
    WakeMutex(usize),
    /// A cond wait released its mutex: wake one of the mutex's waiters,
    /// then sleep.
    WakeMutexThenPark {
        mutex: usize,
        wait: Wait,
    },
    /// A futex wait entry is done: sleep, unless already released.
    Park(Wait),
    /// A signal's or broadcast's futex wake entry is done.
    Signal {
        cond: usize,
        all: bool,
    },
    /// The last arrival's futex wake entry is done: release the barrier.
    ReleaseBarrier(usize),
    /// A post's futex wake entry is done: hand the post to a waiter
    /// (`sync`: the waker says it will sleep soon).
    PostSem {
        sem: usize,
        sync: bool,
    },
    /// An LWLock release's semaphore posts are entered: wake the waiters
    /// it took off the queue.
    ReleaseLw(usize),
    /// A try of an LWLock's words is done: its spinlock is free.
    LwUnlock(usize),
    /// sched_yield's entry is done: the era's yield_task_fair, then schedule.
    Yield,
    /// sched_setaffinity's entry is done: the task may use `cpusets[i]`.
    Affinity(u32),
    /// sched_setattr's entry is done: the task takes these settings.
    Scheduler(crate::workload::program::SchedSpec),
}

#[derive(Debug, Clone)]
pub(crate) struct Task {
    pub name: String,
    /// Where it is in its program, and what its instructions keep.
    pub prog: ProgramState,
    pub state: TaskState,
    /// The CPU whose queue the task is on, or last ran on ("prev" for wakeups).
    pub cpu: usize,
    /// The CPU whose cache holds the task's working set.
    pub warm_cpu: Option<usize>,
    /// Its address space (`mm::AddressSpaces`' dense id).
    pub mm: u32,
    pub working_set_kib: u64,
    pub pending: Pending,
    /// Work (scaled) left of a preempted compute or refill.
    pub compute_left: u64,
    pub exited_ns: Option<u64>,
    /// When the task was last woken and has not run since, and whether
    /// by its own timer.
    pub(super) woken_ns: Option<(u64, bool)>,
    /// Wakeup-to-running latencies of measured wakeups by another task.
    pub wakeup_latency: LatencyHist,
    /// The same for wakeups by the task's own timer (sleep).
    pub timer_latency: LatencyHist,
    /// Times switched in, and moved to another CPU's queue.
    pub switches: u64,
    pub migrations: u64,
    /// What the scheduler keeps about the task (wakee flips, overlap, ...).
    pub sched: TaskSched,
    /// SCHED_RR: what is left of its time slice.
    pub(crate) rr_slice_ns: u64,
    /// Its nice value (its fair weight's; kept while in the RT class).
    pub(crate) nice: i8,
}

/// What PostgreSQL's s_lock (s_lock.c, 8.x) keeps while a backend waits
/// for a spinlock: tries between sleeps (per backend, adapting), and the
/// current sleep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SLock {
    pub(crate) spins_per_delay: u32,
    /// The next pg_usleep in ms; 0 until the wait first sleeps.
    pub(crate) cur_delay_ms: u32,
    /// The round of tries since the wait began or last slept is done.
    pub(crate) spun: bool,
}

impl SLock {
    /// DEFAULT_SPINS_PER_DELAY, MIN_SPINS_PER_DELAY, MAX_SPINS_PER_DELAY.
    pub(crate) const DEFAULT_SPINS: u32 = 100;
    pub(crate) const MIN_SPINS: u32 = 10;
    pub(crate) const MAX_SPINS: u32 = 1000;
    /// MIN_DELAY_MSEC, MAX_DELAY_MSEC.
    pub(crate) const MIN_DELAY_MS: u32 = 1;
    pub(crate) const MAX_DELAY_MS: u32 = 1000;

    pub(crate) fn new() -> Self {
        SLock {
            spins_per_delay: Self::DEFAULT_SPINS,
            cur_delay_ms: 0,
            spun: false,
        }
    }

    /// Inside s_lock: a wait begins with a round of tries, and once it
    /// has slept its delay is never 0.
    pub(crate) fn waiting(&self) -> bool {
        self.spun || self.cur_delay_ms > 0
    }

    /// The sleep after a round of tries: 1 ms the first time, then more
    /// by a random fraction between 1x and 2x (`random` of 2^32), back to
    /// 1 ms past a second. Returns the sleep's length in ms.
    pub(crate) fn next_delay(&mut self, random: u32) -> u32 {
        if self.cur_delay_ms == 0 {
            self.cur_delay_ms = Self::MIN_DELAY_MS;
        }
        let this = self.cur_delay_ms;
        // cur_delay += (int) (cur_delay * fraction + 0.5)
        let grow = ((this as u64 * random as u64 + (1 << 31)) >> 32) as u32;
        self.cur_delay_ms += grow;
        if self.cur_delay_ms > Self::MAX_DELAY_MS {
            self.cur_delay_ms = Self::MIN_DELAY_MS;
        }
        this
    }

    /// The spinlock is taken after a wait: spins_per_delay grows by 100 if
    /// the wait never slept (a multiprocessor), else shrinks by one.
    pub(crate) fn acquired(&mut self) {
        if self.cur_delay_ms == 0 {
            self.spins_per_delay = (self.spins_per_delay + 100).min(Self::MAX_SPINS);
        } else {
            self.spins_per_delay = self.spins_per_delay.saturating_sub(1).max(Self::MIN_SPINS);
        }
        self.cur_delay_ms = 0;
        self.spun = false;
    }
}

/// A task's place in its program and what its instructions keep between
/// steps: the interpreter's (`interp.rs`) and the instructions' own
/// (`futex.rs`, `lwlock.rs`, `transfer.rs`) state, apart from what the
/// scheduler and the measurements keep of the task.
#[derive(Debug, Clone)]
pub(crate) struct ProgramState {
    /// Its program (`Workload::templates`) and the instruction it is at.
    pub(crate) template: usize,
    pub(crate) pc: usize,
    /// The iterations left of each loop it is inside, innermost last.
    pub(crate) loops: Vec<u64>,
    /// When it last passed each mark label (u64::MAX: never).
    pub(crate) last_marks: Vec<u64>,
    /// When the task started, and the end of each timer's current period
    /// (None until first used).
    pub(crate) started_ns: u64,
    pub(crate) timers: Vec<Option<u64>>,
    /// When the current activation began running (rt-app's loop start):
    /// the task's start, its first run after a timer wakeup, a late timer.
    pub(crate) activation_ns: u64,
    /// Sleeping in a timer instruction: its wakeup begins an activation.
    pub(crate) in_timer: bool,
    /// Counts its timer sleeps, so a wakeup from an older one is ignored.
    pub(crate) timer_gen: u64,
    /// When the current `runtime` instruction ends (wall time).
    pub(crate) runtime_until: Option<u64>,
    /// The copying part (1/1024) of the current `mem` instruction.
    pub(crate) mem_share: Option<u64>,
    /// Bytes the task's last read returned (0 before any), for echo writes.
    pub(crate) last_read: u64,
    /// Where a `lap` measures from: the wakeup that ended the task's last
    /// blocked read, or that read's completion if it did not block.
    pub(crate) lap_from_ns: u64,
    /// The current read blocked (its wakeup set `lap_from_ns`).
    pub(crate) read_blocked: bool,
    /// Its last record appended to each log (0: none), and what its log
    /// write in progress covers.
    pub(crate) log_records: Vec<u64>,
    pub(crate) log_writing: u64,
    /// Spin rounds done in the current `spin_lock` since it began or the
    /// task last woke from its futex wait.
    pub(crate) spins: u32,
    /// Asleep in a `spin_lock` whose release wakes every such sleeper.
    pub(crate) wake_all: bool,
    /// Woken by an LWLock release: its next try re-enables wakeups
    /// (LWLockAcquire's `retry`).
    pub(crate) lw_retry: bool,
    /// The LWLock whose spinlock it holds in its current segment.
    pub(crate) lw_mutex: Option<usize>,
    /// PostgreSQL's s_lock state for a spinlock held by a task that is
    /// not running.
    pub(crate) s_lock: SLock,
    /// Signalled or released while still entering a cond or barrier wait.
    pub(crate) released: bool,
    /// TCP channels it read from and has not acknowledged yet.
    pub(crate) acks_owed: Vec<usize>,
    /// Blocked inside a read or write: the retry pays no syscall entry.
    pub(crate) in_syscall: bool,
    /// The skb of its AF_UNIX write in progress, allocated at the write's
    /// start and queued when its copy is done (machines with `skb_slabs`).
    pub(crate) skb: Option<super::slab::SkbObjects>,
    /// Its own random stream (seeded from the run's seed and its id).
    pub(crate) rng: Pcg32,
}

#[cfg(test)]
mod tests {
    use super::SLock;

    /// s_lock's delays (s_lock.c, PostgreSQL 8.x): 1 ms first, then grown
    /// by cur_delay x a random fraction, rounded; back to 1 ms past 1 s.
    #[test]
    fn s_lock_sleeps_from_one_ms_growing_by_a_random_fraction_and_wraps() {
        let mut s = SLock::new();
        assert_eq!(s.next_delay(0), 1);
        // A fraction of 0 keeps the delay; just under 1 doubles it.
        assert_eq!(s.next_delay(0), 1);
        assert_eq!(s.next_delay(u32::MAX), 1);
        assert_eq!(s.cur_delay_ms, 2);
        // Half: 2 + round(1.0) = 3; then 3 + round(1.5) = 5.
        assert_eq!(s.next_delay(1 << 31), 2);
        assert_eq!(s.next_delay(1 << 31), 3);
        assert_eq!(s.cur_delay_ms, 5);
        s.cur_delay_ms = 600;
        assert_eq!(s.next_delay(u32::MAX), 600);
        assert_eq!(s.cur_delay_ms, SLock::MIN_DELAY_MS, "past MAX_DELAY_MSEC");
    }

    /// spins_per_delay adapts after each wait: +100 (to 1000) when the
    /// wait never slept, -1 (to 10) when it did.
    #[test]
    fn s_lock_spins_per_delay_grows_fast_without_sleeps_and_shrinks_slowly_with_them() {
        let mut s = SLock::new();
        s.acquired();
        assert_eq!(s.spins_per_delay, 200);
        for _ in 0..20 {
            s.acquired();
        }
        assert_eq!(s.spins_per_delay, SLock::MAX_SPINS);
        s.next_delay(0);
        s.acquired();
        assert_eq!(s.spins_per_delay, SLock::MAX_SPINS - 1);
        assert_eq!(s.cur_delay_ms, 0, "the next wait starts at 1 ms again");
        s.spins_per_delay = SLock::MIN_SPINS;
        s.next_delay(0);
        s.acquired();
        assert_eq!(s.spins_per_delay, SLock::MIN_SPINS);
    }
}

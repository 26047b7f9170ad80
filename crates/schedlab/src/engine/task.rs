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

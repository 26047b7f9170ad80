//! A small task-behaviour language: compute, write to and read from
//! channels, sleep, loop, mark timing points, fork, and the pthread
//! synchronisation rt-app uses (mutexes, condition variables, barriers). A [`WorkloadSpec`] is what
//! generators and users write (serde); [`Workload`] is its checked, compiled
//! form with flat instruction arrays.

use crate::cpuset::CpuSet;
use crate::error::Concern;
use crate::error::{Error, Result};
use crate::limits;
use serde::{Deserialize, Serialize};

/// A duration, optionally jittered uniformly by +-`jitter_pct` percent
/// (drawn from the task's own random stream).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Time {
    pub ns: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub jitter_pct: u32,
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

impl Time {
    pub fn fixed(ns: u64) -> Self {
        Time { ns, jitter_pct: 0 }
    }
}

/// What kind of channel. Every kind wakes a blocked reader with the sync
/// hint (the writer is the waker: on loopback TCP/UDP the receive path runs
/// in the NET_RX softirq on the sender's CPU, accounted as softirq time).
/// Pipes and unix sockets also wake a blocked writer with it; a TCP read
/// frees window space only when it sends an ACK (or data going back on the
/// connection carries one), whose softirq on the reader's CPU wakes the
/// writer, not sync. UDP writers never block: a datagram that does not fit
/// the receive buffer is dropped. TCP and UDP pay the network stack per
/// message (docs/costs.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChannelKind {
    Pipe,
    Unix,
    Tcp,
    Udp,
}

impl ChannelKind {
    pub fn is_network(self) -> bool {
        matches!(self, ChannelKind::Tcp | ChannelKind::Udp)
    }

    /// Whether data arriving wakes a blocked reader sync: always, except
    /// TCP through 2.6.2x's prequeue (`EraRules::tcp_prequeue`).
    pub fn sync_reader_wakeup(self, tcp_prequeue: bool) -> bool {
        !(self == ChannelKind::Tcp && tcp_prequeue)
    }

    pub fn sync_writer_wakeup(self) -> bool {
        matches!(self, ChannelKind::Pipe | ChannelKind::Unix)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChannelSpec {
    pub kind: ChannelKind,
    /// Buffer size in bytes: a writer blocks when it is full (UDP: drops).
    #[serde(default = "default_capacity")]
    pub capacity: u64,
    /// The sender uses sendfile(): no copy from user space.
    #[serde(default, skip_serializing_if = "is_false")]
    pub sendfile: bool,
}

fn is_false(v: &bool) -> bool {
    !*v
}

fn default_capacity() -> u64 {
    // A pipe's default buffer: 16 pages.
    65536
}

/// One step of a task's program.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// Run in user space for a while.
    Compute(Time),
    /// Write `bytes` to a channel; blocks while the buffer is full. With
    /// `echo`, write as many bytes as this task's last read returned (at
    /// most `bytes`; before any read, `bytes`): a server answering every
    /// request it drained at once (group commit's flush).
    Write {
        chan: usize,
        bytes: u64,
        #[serde(default, skip_serializing_if = "is_false")]
        echo: bool,
    },
    /// Read up to `bytes` from a channel; blocks while it is empty. With
    /// `poll`, the task waits in poll(2) and then reads without blocking
    /// (libpq's pqWait and pqReadData): one more system call, and on TCP
    /// the data wakes it through sk_data_ready (sock_def_readable, sync)
    /// rather than 2.6.2x's prequeue, which serves a reader blocked in
    /// tcp_recvmsg (`EraRules::tcp_prequeue`).
    Read {
        chan: usize,
        bytes: u64,
        #[serde(default, skip_serializing_if = "is_false")]
        poll: bool,
    },
    /// Sleep on a timer.
    Sleep(Time),
    /// Sleep on a timer until this long after the task started (an
    /// arrival at a recorded time); no sleep if that time has passed.
    Until(Time),
    /// sched_yield: give the CPU to another runnable task of its queue, as
    /// the era's yield_task_fair lets it (see `YieldTask`).
    Yield,
    /// sched_setaffinity to a cpulist (null: every CPU). A change moves the
    /// task off a CPU it may no longer use, as set_cpus_allowed_ptr does;
    /// the same set again makes no system call (rt-app's check).
    Affinity(Option<String>),
    /// This many system calls that return at once (a write to /dev/null,
    /// a zero-length nanosleep): their entry and exit only.
    Syscalls(u64),
    /// sched_setattr on itself: SCHED_OTHER at a nice value, or the RT
    /// class (rt-app's per-phase policy and priority). The same settings
    /// again make no system call.
    Scheduler(SchedSpec),
    /// Repeat the body `count` times.
    Loop { count: u64, body: Vec<Op> },
    /// Repeat the body until the run ends.
    Forever(Vec<Op>),
    /// Record a timing point under a label.
    Mark(String),
    /// Record, under a label, the time since this task's last read began
    /// to be served: since the wakeup that ended it if it blocked (so the
    /// wakeup latency counts), else since it completed. A request's
    /// latency, for a task that reads requests.
    Lap(String),
    /// Start a child task, placed by the fork path.
    Fork(Box<TaskSpec>),
    /// Sleep until the task's next period (rt-app's timer).
    Timer(Box<TimerSpec>),
    /// Run in user space until this much wall time has passed since the
    /// instruction began (rt-app's `runtime`): time spent preempted counts,
    /// unlike `compute`, whose work is done however long it takes.
    Runtime(Time),
    /// Write `bytes` of a `buffer`-byte buffer (rt-app's `mem`, a memset):
    /// CPU work at the core's copying speed; the part of the buffer that
    /// does not fit in the last-level cache is memory traffic and shares
    /// the node's bandwidth like a copy.
    Mem {
        bytes: u64,
        #[serde(default = "default_mem_buffer")]
        buffer: u64,
    },
    /// Take the named mutex (pthread_mutex_lock): an atomic on its cache
    /// line when free, else a futex wait until an unlock wakes the task.
    Lock(String),
    /// Take the named mutex spinning first, as InnoDB's mutexes do
    /// (TTASEventMutex::enter in MySQL 8.0, mutex_spin_wait in 5.6): while
    /// it is taken, up to `rounds` spin rounds in user space, each a
    /// delay of a uniform random 0..`max_delay` (exclusive) units of
    /// `pauses_per_delay` PAUSE instructions (ut_delay) followed by a
    /// look at the mutex; still taken after the last round, a futex wait
    /// as `lock`'s. Woken, the task spins again before it sleeps again.
    SpinLock(Box<SpinLockSpec>),
    /// Release the named mutex; wakes one waiter (futex wake) if any.
    Unlock(String),
    /// pthread_cond_wait: holding `mutex`, release it and sleep until a
    /// signal or broadcast on `cond`, then take the mutex again.
    CondWait(Box<CondWaitSpec>),
    /// pthread_cond_signal: wake the longest waiter on a condition
    /// variable; lost when no task waits.
    Signal(String),
    /// pthread_cond_broadcast: wake every waiter on a condition variable.
    Broadcast(String),
    /// Wait until every task that uses the named barrier has arrived.
    Barrier(String),
    /// sem_post: wake the longest waiter on the named counting semaphore
    /// (a futex wake), or, when none waits, add one to its count. The
    /// waker-to-wakee edge of a replayed trace.
    SemPost(SemSpec),
    /// sem_wait: take one from the named semaphore's count, or sleep in
    /// futex wait until a `sem_post` hands one over.
    SemWait(SemSpec),
    /// PostgreSQL's LWLockAcquire (lwlock.c, 8.3): take the named
    /// lightweight lock shared or exclusive if it is free for that mode
    /// (shared: no exclusive holder, even with exclusive waiters queued);
    /// else queue at the tail and sleep on the task's own semaphore. A
    /// release does not hand the lock over: the woken task tries again and
    /// may find it taken (then it queues again).
    LwAcquire(LwSpec),
    /// LWLockRelease: when the lock becomes free and a woken waiter has run
    /// since the last wakeup, wake the head of the queue (an exclusive
    /// waiter alone, or the run of shared waiters at the head), each by a
    /// semaphore post; no further wakeups until one of them retries.
    LwRelease(String),
    /// Append a record to the named log (a write-ahead log's insert; it
    /// takes no time: the lock around it does).
    LogAppend(String),
    /// XLogFlush (xlog.c, 8.3): make this task's last record in `log`
    /// durable. Already flushed by another: nothing. Else take `lock`
    /// exclusive; flushed meanwhile: release it; else write and sync every
    /// record appended so far (`io`, asleep), then release it.
    LogFlush(Box<LogFlushSpec>),
}

// A generator's workload holds millions of operations (sysbench at 512
// connections, ~1.5 M): large operands are boxed so that one stays small.
const _: () = assert!(std::mem::size_of::<Op>() <= 40);

/// A `cond_wait`'s condition variable and the mutex it releases and takes
/// again (boxed, as every large operand is: a generator's workload holds
/// millions of operations).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CondWaitSpec {
    pub cond: String,
    pub mutex: String,
}

/// An `lw_acquire`'s lock and mode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LwSpec {
    pub lock: String,
    #[serde(default, skip_serializing_if = "is_false")]
    pub shared: bool,
}

/// A `log_flush`'s log, the lock its writers take, and the write and sync's time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogFlushSpec {
    pub log: String,
    pub lock: String,
    pub io: Time,
}

/// A semaphore operation (one type for both, which keeps the page's
/// first load small; `sync` is refused on a wait).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SemSpec {
    pub sem: String,
    /// A post's wakeup carries WF_SYNC (the waker will sleep soon), as a
    /// pipe or socket write's does.
    #[serde(default, skip_serializing_if = "is_false")]
    pub sync: bool,
    /// Charge no atomic and no system call: the mechanism's cost is in the
    /// tasks' own recorded run (a replayed trace). A wakeup's scheduler
    /// work is still charged.
    #[serde(default, skip_serializing_if = "is_false")]
    pub free: bool,
}

/// A spin-then-block mutex acquisition; the defaults are MySQL's
/// (innodb_sync_spin_loops, innodb_spin_wait_delay,
/// innodb_spin_wait_pause_multiplier).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpinLockSpec {
    pub mutex: String,
    /// Spin rounds before sleeping (innodb_sync_spin_loops: 30).
    #[serde(default = "default_spin_rounds")]
    pub rounds: u32,
    /// Each round delays a uniform random 0..max_delay units, max_delay
    /// excluded (innodb_spin_wait_delay: 6, so 0 to 5 units).
    #[serde(default = "default_spin_max_delay")]
    pub max_delay: u32,
    /// PAUSE instructions per delay unit (innodb_spin_wait_pause_multiplier:
    /// 50; 5.7's ut_delay loops 50 times per unit too).
    #[serde(default = "default_pauses_per_delay")]
    pub pauses_per_delay: u32,
    /// Sleepers wait on one event that a release sets for all of them
    /// (InnoDB's sync array: os_event_set broadcasts), so a release wakes
    /// every task asleep in a `spin_lock` with `wake_all` on this mutex;
    /// false: one, as a futex mutex does.
    #[serde(default, skip_serializing_if = "is_false")]
    pub wake_all: bool,
}

pub fn default_spin_rounds() -> u32 {
    30
}
pub fn default_spin_max_delay() -> u32 {
    6
}
pub fn default_pauses_per_delay() -> u32 {
    50
}

/// Spin parameters at most these (far beyond MySQL's own ranges' useful
/// part: innodb_sync_spin_loops and innodb_spin_wait_delay are 0..2^32 but
/// a round of 6 x 50 PAUSEs is already about a microsecond).
pub const SPIN_LIMIT: u32 = 65_535;

/// rt-app's default `mem_buffer_size`: 4 MiB per thread.
pub fn default_mem_buffer() -> u64 {
    4 << 20
}

/// A periodic timer: the first period starts `origin_ns` after the task
/// starts; each use sleeps until the end of the current period, which then
/// begins the next. Late (the period already over): no sleep, and the next
/// period ends one period after the missed end (absolute) or after now
/// (relative).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimerSpec {
    pub period_ns: u64,
    /// Timers of one task with the same name share their periods.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Every task's timers of this name are one timer (rt-app's named
    /// timers): each use, by whichever task, moves its end one period on.
    /// Its first period starts from the first user's start.
    #[serde(default, skip_serializing_if = "is_false")]
    pub shared: bool,
    /// When the first period starts, after the task's start (rt-app's
    /// initial `delay`).
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub origin_ns: u64,
    #[serde(default, skip_serializing_if = "is_false")]
    pub relative: bool,
    /// Record each use's slack (time left in the period, 0 when late)
    /// under this label, like a mark's intervals; a late use also records
    /// how late (rt-app's negative slack).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slack: Option<String>,
    /// Record each activation's run time under this label (rt-app's
    /// `run`): from when the task began running after its previous timer
    /// wakeup (or its start, or a late use) to this use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskSpec {
    pub name: String,
    #[serde(default, skip_serializing_if = "is_zero_i8")]
    pub nice: i8,
    /// CPUs the task may run on, as a Linux cpulist ("0-3,8"); all when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity: Option<String>,
    /// Tasks with the same process id are threads of one process: switching
    /// between them needs no address-space change. Omitted: a process of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process: Option<u32>,
    /// Hot working set in KiB, refilled after a migration.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub working_set_kib: u64,
    /// Start on this CPU instead of where the fork path would place the task
    /// (for experiments that begin unbalanced).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_cpu: Option<usize>,
    /// The RT class instead of SCHED_OTHER (`nice` then has no effect).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rt: Option<RtSpec>,
    /// A SCHED_OTHER task's own slice (sched_setattr's sched_runtime, 6.12
    /// EEVDF's custom slice, clamped to 0.1..=100 ms as the kernel does);
    /// earlier eras have none and ignore it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slice_ns: Option<u64>,
    pub program: Vec<Op>,
}

/// A `scheduler` instruction's class: `rt`, else SCHED_OTHER at `nice`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchedSpec {
    #[serde(default, skip_serializing_if = "is_zero_i8")]
    pub nice: i8,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rt: Option<RtSpec>,
}

/// SCHED_FIFO or SCHED_RR at an RT priority (1, the lowest, to 99).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RtSpec {
    pub policy: RtPolicy,
    pub priority: u8,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RtPolicy {
    /// Runs until it blocks, yields or a higher priority preempts it.
    Fifo,
    /// As FIFO, but hands the CPU to its equals every time slice (100 ms).
    Rr,
}

fn is_zero_i8(v: &i8) -> bool {
    *v == 0
}
fn is_zero_u64(v: &u64) -> bool {
    *v == 0
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    #[serde(default)]
    pub channels: Vec<ChannelSpec>,
    pub tasks: Vec<TaskSpec>,
}

/// A compiled instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Insn {
    Compute(Time),
    Write {
        chan: usize,
        bytes: u64,
        echo: bool,
    },
    Read {
        chan: usize,
        bytes: u64,
        poll: bool,
    },
    Sleep(Time),
    Until(Time),
    /// Push a loop counter of `count` (u64::MAX: forever).
    LoopStart {
        count: u64,
    },
    /// Decrement the innermost counter; jump to `body` while it is positive.
    LoopEnd {
        body: usize,
    },
    Mark(usize),
    Lap(usize),
    /// Fork the compiled task `template`.
    Fork(usize),
    /// Sleep to the end of the period of timer `slot` (the task's own, or
    /// the workload's `shared` one). (Labels and slots as u32, so that this,
    /// the largest instruction, stays small.)
    Timer {
        period_ns: u64,
        origin_ns: u64,
        slot: u32,
        shared: bool,
        relative: bool,
        slack: Option<u32>,
        run: Option<u32>,
    },
    Yield,
    /// Set the task's CPUs to `cpusets[i]` of the workload.
    Affinity(u32),
    Syscalls(u64),
    Scheduler(SchedSpec),
    /// Compute until the time wall-clock ns after the start.
    Runtime(Time),
    Mem {
        bytes: u64,
        buffer: u64,
    },
    Lock(usize),
    /// Spin, then futex wait (see [`Op::SpinLock`]).
    SpinLock {
        mutex: u32,
        rounds: u16,
        max_delay: u16,
        pauses_per_delay: u16,
        wake_all: bool,
    },
    Unlock(usize),
    /// Release `mutex` and sleep on `cond`; a `Lock(mutex)` follows.
    CondWait {
        cond: usize,
        mutex: usize,
    },
    /// Wake one waiter of `cond`, or all.
    Signal {
        cond: usize,
        all: bool,
    },
    Barrier(usize),
    SemPost {
        sem: u32,
        sync: bool,
        free: bool,
    },
    SemWait {
        sem: u32,
        free: bool,
    },
    LwAcquire {
        lock: u32,
        shared: bool,
    },
    LwRelease(u32),
    LogAppend(u32),
    /// Jump to `to` if this task's last record in `log` is flushed.
    LogSkipIfFlushed {
        log: u32,
        to: u32,
    },
    /// Write and sync every record appended so far: asleep for `io`.
    LogWrite {
        log: u32,
        io: Time,
    },
    /// The write is done: what it covered is flushed.
    LogWritten(u32),
}

/// A checked task, ready to start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskTemplate {
    pub name: String,
    pub nice: i8,
    pub rt: Option<RtSpec>,
    pub slice_ns: Option<u64>,
    pub affinity: Option<CpuSet>,
    pub process: Option<u32>,
    pub working_set_kib: u64,
    pub start_cpu: Option<usize>,
    pub code: Vec<Insn>,
    /// Distinct timers (by name) the code uses.
    pub timer_slots: usize,
}

/// A checked workload: initial tasks, fork templates, channels, mark labels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workload {
    pub channels: Vec<ChannelSpec>,
    /// Every task template; the first `initial` are started at time 0.
    pub templates: Vec<TaskTemplate>,
    pub initial: usize,
    pub labels: Vec<String>,
    /// Mutex, condition variable, barrier and semaphore names, by slot.
    pub mutexes: Vec<String>,
    pub conds: Vec<String>,
    pub barriers: Vec<String>,
    pub sems: Vec<String>,
    /// LWLock and log names, by slot.
    pub lwlocks: Vec<String>,
    pub logs: Vec<String>,
    /// How many initial tasks use each barrier: it opens when they all
    /// have arrived.
    pub barrier_users: Vec<usize>,
    /// Timers every task shares, by name (`TimerSpec::shared`), by slot.
    pub shared_timers: Vec<String>,
    /// The CPU sets `affinity` instructions name (None: every CPU), by slot.
    pub cpusets: Vec<Option<CpuSet>>,
    /// The timer names of the task being compiled.
    timer_names: Vec<String>,
    /// The mutexes the task being compiled holds at this point of its code.
    held: Vec<Held>,
    /// Compiling a fork child (barriers need their users known up front).
    fork_depth: usize,
}

fn takes_time(op: &Op) -> bool {
    match op {
        Op::Compute(_)
        | Op::Write { .. }
        | Op::Read { .. }
        | Op::Sleep(_)
        | Op::Until(_)
        | Op::Yield
        | Op::Affinity(_)
        | Op::Syscalls(_)
        | Op::Scheduler(_)
        | Op::Fork(_)
        | Op::Timer(_)
        | Op::Runtime(_)
        | Op::Mem { .. }
        | Op::Lock(_)
        | Op::SpinLock(_)
        | Op::Unlock(_)
        | Op::CondWait(_)
        | Op::Signal(_)
        | Op::Broadcast(_)
        | Op::Barrier(_)
        | Op::SemPost(_)
        | Op::SemWait(_)
        | Op::LwAcquire(_)
        | Op::LwRelease(_)
        | Op::LogFlush(_) => true,
        Op::Loop { body, .. } | Op::Forever(body) => body.iter().any(takes_time),
        Op::Mark(_) | Op::Lap(_) | Op::LogAppend(_) => false,
    }
}

/// Parses a Linux cpulist ("0-3,8,10-11") for a machine of `ncpus` CPUs.
pub fn parse_cpulist(text: &str, ncpus: usize) -> Result<CpuSet> {
    let mut set = CpuSet::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (part, part),
        };
        let parse = |s: &str| {
            s.parse::<usize>().map_err(|_| {
                Error::invalid(
                    Concern::Workload,
                    format!("cpulist {text:?}: {s:?} is not a CPU number"),
                )
            })
        };
        let (lo, hi) = (parse(lo)?, parse(hi)?);
        if lo > hi || hi >= ncpus {
            return Err(Error::invalid(
                Concern::Workload,
                format!(
                    "cpulist {text:?}: {part:?} is not a range of CPUs 0..={}",
                    ncpus - 1
                ),
            ));
        }
        for c in lo..=hi {
            set.insert(c);
        }
    }
    if set.is_empty() {
        return Err(Error::invalid(
            Concern::Workload,
            format!("cpulist {text:?} names no CPU"),
        ));
    }
    Ok(set)
}

impl Workload {
    /// Checks a spec against a machine of `ncpus` CPUs and compiles it.
    pub fn compile(spec: &WorkloadSpec, ncpus: usize) -> Result<Workload> {
        if spec.tasks.is_empty() {
            return Err(Error::invalid(Concern::Workload, "workload has no tasks"));
        }
        for (i, c) in spec.channels.iter().enumerate() {
            if c.capacity == 0 {
                return Err(Error::invalid(
                    Concern::Workload,
                    format!("channels[{i}].capacity must be at least 1 byte"),
                ));
            }
        }
        let mut w = Workload {
            channels: spec.channels.clone(),
            templates: Vec::new(),
            initial: spec.tasks.len(),
            labels: Vec::new(),
            mutexes: Vec::new(),
            conds: Vec::new(),
            barriers: Vec::new(),
            sems: Vec::new(),
            lwlocks: Vec::new(),
            logs: Vec::new(),
            barrier_users: Vec::new(),
            shared_timers: Vec::new(),
            cpusets: Vec::new(),
            timer_names: Vec::new(),
            held: Vec::new(),
            fork_depth: 0,
        };
        // Initial tasks take the first template slots; forks append after.
        w.templates.resize(
            spec.tasks.len(),
            TaskTemplate {
                name: String::new(),
                nice: 0,
                rt: None,
                slice_ns: None,
                affinity: None,
                process: None,
                working_set_kib: 0,
                start_cpu: None,
                code: Vec::new(),
                timer_slots: 0,
            },
        );
        for (i, t) in spec.tasks.iter().enumerate() {
            w.templates[i] = w.compile_task(t, &format!("tasks[{i}]"), ncpus)?;
        }
        limits::TASKS.check(
            Concern::Workload,
            "workload tasks (initial and fork templates)",
            w.templates.len() as u64,
        )?;
        // A barrier opens when every initial task that uses it has arrived.
        w.barrier_users = vec![0; w.barriers.len()];
        for t in &w.templates[..w.initial] {
            let mut used: Vec<usize> = t
                .code
                .iter()
                .filter_map(|i| match i {
                    Insn::Barrier(b) => Some(*b),
                    _ => None,
                })
                .collect();
            used.sort_unstable();
            used.dedup();
            for b in used {
                w.barrier_users[b] += 1;
            }
        }
        Ok(w)
    }

    fn compile_task(&mut self, t: &TaskSpec, at: &str, ncpus: usize) -> Result<TaskTemplate> {
        let who = format!("task {:?}", t.name);
        if !(-20..=19).contains(&t.nice) {
            return Err(Error::invalid(
                Concern::Workload,
                format!("{at}.nice ({who}): nice {} is not in -20..=19", t.nice),
            ));
        }
        let affinity = match &t.affinity {
            Some(list) => Some(parse_cpulist(list, ncpus).map_err(|e| {
                Error::invalid(Concern::Workload, format!("{at}.affinity ({who}): {e}"))
            })?),
            None => None,
        };
        if let Some(cpu) = t.start_cpu {
            if cpu >= ncpus {
                return Err(Error::invalid(
                    Concern::Workload,
                    format!(
                    "{at}.start_cpu ({who}): CPU {cpu} does not exist (the machine has {ncpus})"
                ),
                ));
            }
        }
        let mut code = Vec::new();
        let outer = std::mem::take(&mut self.timer_names);
        let outer_held = std::mem::take(&mut self.held);
        self.compile_ops(&t.program, &mut code, &format!("{at}.program"), &who, ncpus)?;
        let timer_slots = std::mem::replace(&mut self.timer_names, outer).len();
        let held = std::mem::replace(&mut self.held, outer_held);
        if let Some(&h) = held.first() {
            return Err(Error::invalid(
                Concern::Workload,
                format!(
                    "{at}.program ({who}): the task ends holding {} (release it first)",
                    self.held_name(h)
                ),
            ));
        }
        let rt = match t.rt {
            Some(RtSpec { priority, .. }) if !(1..=99).contains(&priority) => {
                return Err(Error::invalid(
                    Concern::Workload,
                    format!("{at}.rt.priority ({who}): RT priority {priority} is not in 1..=99"),
                ))
            }
            rt => rt,
        };
        if t.slice_ns.is_some() && rt.is_some() {
            return Err(Error::invalid(
                Concern::Workload,
                format!(
                    "{at}.slice_ns ({who}): a custom slice is SCHED_OTHER's; an RT task has none"
                ),
            ));
        }
        Ok(TaskTemplate {
            name: t.name.clone(),
            nice: t.nice,
            rt,
            // sched_setattr clamps a custom slice to 0.1..=100 ms.
            slice_ns: t.slice_ns.map(|s| s.clamp(100_000, 100_000_000)),
            affinity,
            process: t.process,
            working_set_kib: t.working_set_kib,
            start_cpu: t.start_cpu,
            code,
            timer_slots,
        })
    }

    fn compile_loop(
        &mut self,
        count: u64,
        body: &[Op],
        code: &mut Vec<Insn>,
        (here, body_at, who): (&str, &str, &str),
        ncpus: usize,
    ) -> Result<()> {
        let what = if count == u64::MAX { "forever" } else { "loop" };
        // A body that takes no time would spin forever at one instant.
        if !body.iter().any(takes_time) {
            return Err(Error::invalid(Concern::Workload, format!(
                "{here} ({who}, {what}): a loop body needs an operation that takes time (compute, write, read, sleep or fork)"
            )));
        }
        code.push(Insn::LoopStart { count });
        let start = code.len();
        let before = self.held.clone();
        self.compile_ops(body, code, body_at, who, ncpus)?;
        if self.held != before {
            let names = |held: &[Held]| match held {
                [] => "none".to_string(),
                _ => held
                    .iter()
                    .map(|&h| self.held_name(h))
                    .collect::<Vec<_>>()
                    .join(", "),
            };
            let (at_start, at_end) = (names(&before), names(&self.held));
            return Err(Error::invalid(Concern::Workload, format!(
                "{here} ({who}, {what}): a loop body must hold the same locks at its end as at its start (holds {at_start} before an iteration, {at_end} after)"
            )));
        }
        code.push(Insn::LoopEnd { body: start });
        Ok(())
    }

    fn compile_ops(
        &mut self,
        ops: &[Op],
        code: &mut Vec<Insn>,
        at: &str,
        who: &str,
        ncpus: usize,
    ) -> Result<()> {
        for (i, op) in ops.iter().enumerate() {
            // Where the instruction is, spelled out only when needed: a
            // generator's workload has millions of instructions.
            let here = || format!("{at}[{i}]");
            let fail = |msg: String| {
                Error::invalid(
                    Concern::Workload,
                    format!("{} ({who}, {}): {msg}", here(), op.name()),
                )
            };
            match op {
                Op::Compute(t) | Op::Sleep(t) | Op::Until(t) => {
                    if t.jitter_pct > 100 {
                        return Err(fail(format!("jitter_pct {} is over 100", t.jitter_pct)));
                    }
                    limits::SIM_TIME_NS
                        .check(Concern::Workload, "ns", t.ns)
                        .map_err(|e| fail(e.to_string()))?;
                    code.push(match op {
                        Op::Compute(_) => Insn::Compute(*t),
                        Op::Sleep(_) => Insn::Sleep(*t),
                        _ => Insn::Until(*t),
                    });
                }
                Op::Write { chan, bytes, .. } | Op::Read { chan, bytes, .. } => {
                    if *chan >= self.channels.len() {
                        return Err(fail(format!(
                            "channel {chan} does not exist (the workload has {})",
                            self.channels.len()
                        )));
                    }
                    if *bytes == 0 {
                        return Err(fail("bytes must be at least 1".into()));
                    }
                    if matches!(op, Op::Write { .. }) && *bytes > self.channels[*chan].capacity {
                        return Err(fail(format!(
                            "a {bytes}-byte write can never fit channel {chan}'s {}-byte buffer",
                            self.channels[*chan].capacity
                        )));
                    }
                    code.push(match op {
                        Op::Write { echo, .. } => Insn::Write {
                            chan: *chan,
                            bytes: *bytes,
                            echo: *echo,
                        },
                        _ => Insn::Read {
                            chan: *chan,
                            bytes: *bytes,
                            poll: matches!(op, Op::Read { poll: true, .. }),
                        },
                    });
                }
                Op::Yield => code.push(Insn::Yield),
                Op::Affinity(list) => {
                    let set = match list {
                        Some(l) => Some(parse_cpulist(l, ncpus).map_err(|e| fail(e.to_string()))?),
                        None => None,
                    };
                    let i = match self.cpusets.iter().position(|s| *s == set) {
                        Some(i) => i,
                        None => {
                            self.cpusets.push(set);
                            self.cpusets.len() - 1
                        }
                    };
                    code.push(Insn::Affinity(i as u32));
                }
                Op::Scheduler(s) => {
                    if !(-20..=19).contains(&s.nice) {
                        return Err(fail(format!("nice {} is not in -20..=19", s.nice)));
                    }
                    if let Some(rt) = s.rt.filter(|r| !(1..=99).contains(&r.priority)) {
                        return Err(fail(format!(
                            "RT priority {} is not in 1..=99",
                            rt.priority
                        )));
                    }
                    code.push(Insn::Scheduler(*s));
                }
                Op::Syscalls(0) => return Err(fail("needs at least 1 system call".into())),
                Op::Syscalls(n) => {
                    limits::SIM_TIME_NS
                        .check(Concern::Workload, "syscalls", *n)
                        .map_err(|e| fail(e.to_string()))?;
                    code.push(Insn::Syscalls(*n));
                }
                Op::Loop { count: 0, .. } => {
                    return Err(fail("a loop needs a count of at least 1".into()));
                }
                Op::Loop { count, body } => self.compile_loop(
                    *count,
                    body,
                    code,
                    (&here(), &format!("{}.loop.body", here()), who),
                    ncpus,
                )?,
                Op::Forever(body) => self.compile_loop(
                    u64::MAX,
                    body,
                    code,
                    (&here(), &format!("{}.forever", here()), who),
                    ncpus,
                )?,
                Op::Timer(t) => {
                    if t.period_ns == 0 {
                        return Err(fail("period_ns must be at least 1".into()));
                    }
                    limits::SIM_TIME_NS
                        .check(Concern::Workload, "period_ns", t.period_ns)
                        .map_err(|e| fail(e.to_string()))?;
                    if t.origin_ns > 0 {
                        limits::SIM_TIME_NS
                            .check(Concern::Workload, "origin_ns", t.origin_ns)
                            .map_err(|e| fail(e.to_string()))?;
                    }
                    let names = if t.shared {
                        &mut self.shared_timers
                    } else {
                        &mut self.timer_names
                    };
                    let slot = match names.iter().position(|n| *n == t.name) {
                        Some(s) => s,
                        None => {
                            names.push(t.name.clone());
                            names.len() - 1
                        }
                    } as u32;
                    // Labels are named in the program: far fewer than 2^32.
                    let slack = t.slack.as_ref().map(|l| self.label(l) as u32);
                    let run = t.run.as_ref().map(|l| self.label(l) as u32);
                    code.push(Insn::Timer {
                        period_ns: t.period_ns,
                        origin_ns: t.origin_ns,
                        slot,
                        shared: t.shared,
                        relative: t.relative,
                        slack,
                        run,
                    });
                }
                Op::Mark(label) | Op::Lap(label) => {
                    let id = self.label(label);
                    code.push(if matches!(op, Op::Mark(_)) {
                        Insn::Mark(id)
                    } else {
                        Insn::Lap(id)
                    });
                }
                Op::Runtime(t) => {
                    if t.jitter_pct > 100 {
                        return Err(fail(format!("jitter_pct {} is over 100", t.jitter_pct)));
                    }
                    limits::SIM_TIME_NS
                        .check(Concern::Workload, "ns", t.ns)
                        .map_err(|e| fail(e.to_string()))?;
                    code.push(Insn::Runtime(*t));
                }
                Op::Mem { bytes, buffer } => {
                    if *bytes == 0 {
                        return Err(fail("bytes must be at least 1".into()));
                    }
                    if *buffer == 0 {
                        return Err(fail("buffer must be at least 1 byte".into()));
                    }
                    limits::SIM_TIME_NS
                        .check(Concern::Workload, "bytes", *bytes)
                        .map_err(|e| fail(e.to_string()))?;
                    code.push(Insn::Mem {
                        bytes: *bytes,
                        buffer: *buffer,
                    });
                }
                Op::Lock(name) => {
                    let m = slot(&mut self.mutexes, name, &fail)?;
                    if self.held.contains(&Held::Mutex(m)) {
                        return Err(fail(format!(
                            "the task already holds mutex {name:?} here (locking it again would deadlock)"
                        )));
                    }
                    self.held.push(Held::Mutex(m));
                    code.push(Insn::Lock(m));
                }
                Op::SpinLock(s) => {
                    let name = &s.mutex;
                    let m = slot(&mut self.mutexes, name, &fail)?;
                    if self.held.contains(&Held::Mutex(m)) {
                        return Err(fail(format!(
                            "the task already holds mutex {name:?} here (locking it again would deadlock)"
                        )));
                    }
                    for (what, v) in [
                        ("rounds", s.rounds),
                        ("max_delay", s.max_delay),
                        ("pauses_per_delay", s.pauses_per_delay),
                    ] {
                        if v > SPIN_LIMIT {
                            return Err(fail(format!("{what} {v} is over {SPIN_LIMIT}")));
                        }
                    }
                    self.held.push(Held::Mutex(m));
                    code.push(Insn::SpinLock {
                        mutex: m as u32,
                        rounds: s.rounds as u16,
                        max_delay: s.max_delay as u16,
                        pauses_per_delay: s.pauses_per_delay as u16,
                        wake_all: s.wake_all,
                    });
                }
                Op::Unlock(name) => {
                    let m = slot(&mut self.mutexes, name, &fail)?;
                    let Some(i) = self.held.iter().position(|&h| h == Held::Mutex(m)) else {
                        return Err(fail(format!(
                            "the task does not hold mutex {name:?} here (lock it first)"
                        )));
                    };
                    self.held.remove(i);
                    code.push(Insn::Unlock(m));
                }
                Op::CondWait(x) => {
                    let (cond, mutex) = (&x.cond, &x.mutex);
                    let m = slot(&mut self.mutexes, mutex, &fail)?;
                    if !self.held.contains(&Held::Mutex(m)) {
                        return Err(fail(format!(
                            "waiting on {cond:?} needs its mutex {mutex:?} held (lock it first)"
                        )));
                    }
                    let c = slot(&mut self.conds, cond, &fail)?;
                    code.push(Insn::CondWait { cond: c, mutex: m });
                    code.push(Insn::Lock(m));
                }
                Op::Signal(name) | Op::Broadcast(name) => {
                    let c = slot(&mut self.conds, name, &fail)?;
                    code.push(Insn::Signal {
                        cond: c,
                        all: matches!(op, Op::Broadcast(_)),
                    });
                }
                Op::Barrier(name) => {
                    if self.fork_depth > 0 {
                        return Err(fail(
                            "a forked task cannot use a barrier (its users must be known when the run starts)".into(),
                        ));
                    }
                    let b = slot(&mut self.barriers, name, &fail)?;
                    code.push(Insn::Barrier(b));
                }
                Op::SemPost(x) | Op::SemWait(x) => {
                    let sem = slot(&mut self.sems, &x.sem, &fail)? as u32;
                    code.push(match op {
                        Op::SemPost(_) => Insn::SemPost {
                            sem,
                            sync: x.sync,
                            free: x.free,
                        },
                        _ if x.sync => return Err(fail("sync is for sem_post".into())),
                        _ => Insn::SemWait { sem, free: x.free },
                    });
                }
                Op::LwAcquire(x) => {
                    let l = slot(&mut self.lwlocks, &x.lock, &fail)?;
                    if self.held.contains(&Held::Lw(l)) {
                        return Err(fail(format!(
                            "the task already holds LWLock {:?} here (taking it again would deadlock)",
                            x.lock
                        )));
                    }
                    self.held.push(Held::Lw(l));
                    code.push(Insn::LwAcquire {
                        lock: l as u32,
                        shared: x.shared,
                    });
                }
                Op::LwRelease(name) => {
                    let l = slot(&mut self.lwlocks, name, &fail)?;
                    let Some(i) = self.held.iter().position(|&h| h == Held::Lw(l)) else {
                        return Err(fail(format!(
                            "the task does not hold LWLock {name:?} here (take it first)"
                        )));
                    };
                    self.held.remove(i);
                    code.push(Insn::LwRelease(l as u32));
                }
                Op::LogAppend(name) => {
                    let log = slot(&mut self.logs, name, &fail)? as u32;
                    code.push(Insn::LogAppend(log));
                }
                Op::LogFlush(x) => {
                    if x.io.jitter_pct > 100 {
                        return Err(fail(format!(
                            "io.jitter_pct {} is over 100",
                            x.io.jitter_pct
                        )));
                    }
                    let log = slot(&mut self.logs, &x.log, &fail)? as u32;
                    let lock = slot(&mut self.lwlocks, &x.lock, &fail)?;
                    if self.held.contains(&Held::Lw(lock)) {
                        return Err(fail(format!(
                            "the task already holds LWLock {:?} here (the flush takes it)",
                            x.lock
                        )));
                    }
                    // XLogFlush's checks before and under the lock, as jumps.
                    let at = code.len() as u32;
                    code.extend([
                        Insn::LogSkipIfFlushed { log, to: at + 6 },
                        Insn::LwAcquire {
                            lock: lock as u32,
                            shared: false,
                        },
                        Insn::LogSkipIfFlushed { log, to: at + 5 },
                        Insn::LogWrite { log, io: x.io },
                        Insn::LogWritten(log),
                        Insn::LwRelease(lock as u32),
                    ]);
                }
                Op::Fork(child) => {
                    self.fork_depth += 1;
                    let template = self.compile_task(child, &format!("{}.fork", here()), ncpus);
                    self.fork_depth -= 1;
                    let template = template?;
                    self.templates.push(template);
                    code.push(Insn::Fork(self.templates.len() - 1));
                }
            }
        }
        Ok(())
    }
}

/// A lock a task holds at a point of its code, by slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    Mutex(usize),
    Lw(usize),
}

impl Workload {
    fn held_name(&self, h: Held) -> String {
        match h {
            Held::Mutex(m) => format!("mutex {:?}", self.mutexes[m]),
            Held::Lw(l) => format!("LWLock {:?}", self.lwlocks[l]),
        }
    }
}

/// The slot of a named mutex, condition variable, barrier or semaphore,
/// made on first use.
fn slot(names: &mut Vec<String>, name: &str, fail: &dyn Fn(String) -> Error) -> Result<usize> {
    if name.is_empty() {
        return Err(fail("needs a name".into()));
    }
    Ok(match names.iter().position(|n| n == name) {
        Some(i) => i,
        None => {
            names.push(name.to_string());
            names.len() - 1
        }
    })
}

impl Workload {
    fn label(&mut self, label: &str) -> usize {
        match self.labels.iter().position(|l| l == label) {
            Some(id) => id,
            None => {
                self.labels.push(label.to_string());
                self.labels.len() - 1
            }
        }
    }
}

impl Op {
    /// The instruction's name as the JSON spells it.
    pub fn name(&self) -> &'static str {
        match self {
            Op::Compute(_) => "compute",
            Op::Write { .. } => "write",
            Op::Read { .. } => "read",
            Op::Sleep(_) => "sleep",
            Op::Until(_) => "until",
            Op::Yield => "yield",
            Op::Affinity(_) => "affinity",
            Op::Syscalls(_) => "syscalls",
            Op::Scheduler(_) => "scheduler",
            Op::Loop { .. } => "loop",
            Op::Forever(_) => "forever",
            Op::Mark(_) => "mark",
            Op::Lap(_) => "lap",
            Op::Fork(_) => "fork",
            Op::Timer(_) => "timer",
            Op::Runtime(_) => "runtime",
            Op::Mem { .. } => "mem",
            Op::Lock(_) => "lock",
            Op::SpinLock(_) => "spin_lock",
            Op::Unlock(_) => "unlock",
            Op::CondWait { .. } => "cond_wait",
            Op::Signal(_) => "signal",
            Op::Broadcast(_) => "broadcast",
            Op::Barrier(_) => "barrier",
            Op::SemPost(_) => "sem_post",
            Op::SemWait(_) => "sem_wait",
            Op::LwAcquire(_) => "lw_acquire",
            Op::LwRelease(_) => "lw_release",
            Op::LogAppend(_) => "log_append",
            Op::LogFlush(_) => "log_flush",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(json: &str) -> WorkloadSpec {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn compiles_loops_marks_and_forks() {
        let w = Workload::compile(
            &spec(
                r#"{"channels":[{"kind":"pipe"}],
                    "tasks":[{"name":"parent","program":[
                        {"fork":{"name":"child","program":[{"read":{"chan":0,"bytes":1}}]}},
                        {"loop":{"count":3,"body":[{"write":{"chan":0,"bytes":1}},{"mark":"loop"}]}}]}]}"#,
            ),
            4,
        )
        .unwrap();
        assert_eq!(w.initial, 1);
        assert_eq!(w.templates.len(), 2);
        assert_eq!(w.labels, vec!["loop"]);
        assert_eq!(
            w.templates[0].code,
            vec![
                Insn::Fork(1),
                Insn::LoopStart { count: 3 },
                Insn::Write {
                    chan: 0,
                    bytes: 1,
                    echo: false
                },
                Insn::Mark(0),
                Insn::LoopEnd { body: 2 },
            ]
        );
        assert_eq!(w.channels[0].capacity, 65536);
    }

    #[test]
    fn errors_say_where() {
        let err = Workload::compile(
            &spec(r#"{"tasks":[{"name":"a","program":[{"loop":{"count":2,"body":[{"read":{"chan":3,"bytes":1}}]}}]}]}"#),
            2,
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            err,
            "tasks[0].program[0].loop.body[0] (task \"a\", read): channel 3 does not exist (the workload has 0)"
        );

        let err = Workload::compile(
            &spec(r#"{"tasks":[{"name":"a","affinity":"0-4","program":[{"compute":{"ns":5}}]}]}"#),
            4,
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            err,
            "tasks[0].affinity (task \"a\"): cpulist \"0-4\": \"0-4\" is not a range of CPUs 0..=3"
        );

        let err = Workload::compile(&spec(r#"{"tasks":[{"name":"a","program":[{"loop":{"count":0,"body":[{"compute":{"ns":1}}]}}]}]}"#), 1)
            .unwrap_err()
            .to_string();
        assert!(err.contains("a loop needs a count of at least 1"), "{err}");
    }

    #[test]
    fn spin_lock_compiles_with_mysqls_defaults_and_errors_say_where() {
        let w = Workload::compile(
            &spec(r#"{"tasks":[{"name":"conn","program":[{"spin_lock":{"mutex":"lock_sys"}},{"compute":{"ns":500}},{"unlock":"lock_sys"}]}]}"#),
            2,
        )
        .unwrap();
        assert_eq!(
            w.templates[0].code[0],
            Insn::SpinLock {
                mutex: 0,
                rounds: 30,
                max_delay: 6,
                pauses_per_delay: 50,
                wake_all: false
            }
        );
        let err = Workload::compile(
            &spec(r#"{"tasks":[{"name":"conn","program":[{"forever":[{"spin_lock":{"mutex":"m","rounds":70000}},{"unlock":"m"}]}]}]}"#),
            2,
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            err,
            "tasks[0].program[0].forever[0] (task \"conn\", spin_lock): rounds 70000 is over 65535"
        );
        let err = Workload::compile(
            &spec(r#"{"tasks":[{"name":"conn","program":[{"lock":"m"},{"spin_lock":{"mutex":"m"}},{"unlock":"m"}]}]}"#),
            2,
        )
        .unwrap_err()
        .to_string();
        assert!(err.starts_with("tasks[0].program[1] (task \"conn\", spin_lock): the task already holds mutex \"m\""), "{err}");
        let err = Workload::compile(
            &spec(r#"{"tasks":[{"name":"conn","program":[{"spin_lock":{"mutex":""}}]}]}"#),
            2,
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            err,
            "tasks[0].program[0] (task \"conn\", spin_lock): needs a name"
        );
    }

    /// XLogFlush's two checks (before the lock and under it) compile into
    /// jumps around the lock; an LWLock is held as a mutex is.
    #[test]
    fn log_flush_compiles_to_jumps_around_its_lock_and_lwlocks_are_checked() {
        let w = Workload::compile(
            &spec(r#"{"tasks":[{"name":"b","program":[{"log_append":"wal"},{"log_flush":{"log":"wal","lock":"W","io":{"ns":5}}},{"mark":"done"}]}]}"#),
            1,
        )
        .unwrap();
        let io = Time::fixed(5);
        assert_eq!(
            w.templates[0].code,
            [
                Insn::LogAppend(0),
                Insn::LogSkipIfFlushed { log: 0, to: 7 },
                Insn::LwAcquire {
                    lock: 0,
                    shared: false
                },
                Insn::LogSkipIfFlushed { log: 0, to: 6 },
                Insn::LogWrite { log: 0, io },
                Insn::LogWritten(0),
                Insn::LwRelease(0),
                Insn::Mark(0),
            ]
        );
        let err = |json: &str| Workload::compile(&spec(json), 1).unwrap_err().to_string();
        assert_eq!(
            err(r#"{"tasks":[{"name":"b","program":[{"lw_release":"P"}]}]}"#),
            "tasks[0].program[0] (task \"b\", lw_release): the task does not hold LWLock \"P\" here (take it first)"
        );
        assert_eq!(
            err(
                r#"{"tasks":[{"name":"b","program":[{"lw_acquire":{"lock":"P","shared":true}}]}]}"#
            ),
            "tasks[0].program (task \"b\"): the task ends holding LWLock \"P\" (release it first)"
        );
        assert!(err(r#"{"tasks":[{"name":"b","program":[{"lw_acquire":{"lock":"W"}},{"log_flush":{"log":"wal","lock":"W","io":{"ns":5}}},{"lw_release":"W"}]}]}"#)
            .ends_with("the task already holds LWLock \"W\" here (the flush takes it)"));
        assert!(err(r#"{"tasks":[{"name":"b","program":[{"forever":[{"lw_acquire":{"lock":"P"}},{"compute":{"ns":1}}]}]}]}"#)
            .contains("holds none before an iteration, LWLock \"P\" after"));
    }

    #[test]
    fn cpulists() {
        assert_eq!(
            parse_cpulist("0-2, 5", 8).unwrap().to_list_string(),
            "0-2,5"
        );
        assert!(parse_cpulist("", 8).is_err());
        assert!(parse_cpulist("3-1", 8).is_err());
        assert!(parse_cpulist("x", 8).is_err());
    }
}

//! What a run counts and why a task went where it did, as types: the
//! scheduler and the engine write [`Counter`]s and trace [`Reason`]s; explain,
//! the timeline and the trace export read them back by variant. Each has one
//! `Display` (the name results print, like /proc/schedstat's fields) and a
//! parser for it, so writer and reader cannot drift apart.

use crate::policy::Era;
use std::fmt;
use std::str::FromStr;

/// Why a balance runs (the kernel's `enum cpu_idle_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IdleType {
    Idle,
    Busy,
    NewIdle,
}

impl IdleType {
    pub const ALL: [IdleType; 3] = [IdleType::Idle, IdleType::Busy, IdleType::NewIdle];

    pub fn name(self) -> &'static str {
        match self {
            IdleType::Idle => "idle",
            IdleType::Busy => "busy",
            IdleType::NewIdle => "newidle",
        }
    }
}

/// Where a remote wakeup landed, seen from the waker's CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Distance {
    /// The waker's SMT sibling.
    Smt,
    /// Another core of the waker's LLC.
    Llc,
    /// Another LLC of the waker's node.
    OtherLlc,
    /// Another node.
    OtherNode,
}

impl Distance {
    /// Nearest first (the cost model's order).
    pub const ALL: [Distance; 4] = [
        Distance::Smt,
        Distance::Llc,
        Distance::OtherLlc,
        Distance::OtherNode,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Distance::Smt => "smt",
            Distance::Llc => "llc",
            Distance::OtherLlc => "other_llc",
            Distance::OtherNode => "other_node",
        }
    }
}

/// How wake_affine decided at a level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Affine {
    /// 2.6.2x: the balance test pulled the wakee to the waker's CPU.
    Affine,
    /// 2.6.2x: SD_WAKE_BALANCE's passive balancing pulled it.
    Passive,
    /// 4.15+: wake_affine_idle chose the waker's CPU.
    Idle,
    /// 4.15+: wake_affine_idle chose prev, because it is idle.
    IdlePrev,
    /// 4.15+: wake_affine_weight chose the waker's CPU.
    Weight,
    /// Nothing pulled: the wakee stays with prev.
    Prev,
}

impl Affine {
    pub const ALL: [Affine; 6] = [
        Affine::Affine,
        Affine::Passive,
        Affine::Idle,
        Affine::IdlePrev,
        Affine::Weight,
        Affine::Prev,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Affine::Affine => "affine",
            Affine::Passive => "passive",
            Affine::Idle => "idle",
            Affine::IdlePrev => "idle_prev",
            Affine::Weight => "weight",
            Affine::Prev => "prev",
        }
    }

    /// Whether `era`'s wake_affine can come to this outcome (2.6.2x's
    /// wake_affine and passive balance; 4.15+'s wake_affine_idle and _weight).
    pub fn written_by(self, era: Era) -> bool {
        match self {
            Affine::Prev => true,
            Affine::Affine | Affine::Passive => era.is_legacy(),
            Affine::Idle | Affine::IdlePrev | Affine::Weight => !era.is_legacy(),
        }
    }

    /// Whether this outcome moved the wakee to the waker's CPU.
    pub fn pulls_to_waker(self) -> bool {
        matches!(
            self,
            Affine::Affine | Affine::Passive | Affine::Idle | Affine::Weight
        )
    }
}

/// How select_idle_sibling decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Sis {
    TargetIdle,
    PrevIdle,
    Recent,
    Smt,
    ScanFound,
    ScanFailed,
    /// SIS_UTIL judged the LLC too busy to scan.
    UtilSkip,
}

impl Sis {
    pub const ALL: [Sis; 7] = [
        Sis::TargetIdle,
        Sis::PrevIdle,
        Sis::Recent,
        Sis::Smt,
        Sis::ScanFound,
        Sis::ScanFailed,
        Sis::UtilSkip,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Sis::TargetIdle => "target_idle",
            Sis::PrevIdle => "prev_idle",
            Sis::Recent => "recent",
            Sis::Smt => "smt",
            Sis::ScanFound => "scan_found",
            Sis::ScanFailed => "scan_failed",
            Sis::UtilSkip => "util_skip",
        }
    }
}

/// Why a task changed CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cause {
    Wakeup,
    Fork,
    Balance,
    /// sched_setaffinity moved a task off a CPU it may no longer use.
    Affinity,
}

impl Cause {
    pub const ALL: [Cause; 4] = [Cause::Wakeup, Cause::Fork, Cause::Balance, Cause::Affinity];

    pub fn name(self) -> &'static str {
        match self {
            Cause::Wakeup => "wakeup",
            Cause::Fork => "fork",
            Cause::Balance => "balance",
            Cause::Affinity => "affinity",
        }
    }
}

/// What one load_balance call came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LbOutcome {
    Balanced,
    Imbalanced,
    Pulled,
    /// A task was left because it was cache-hot.
    HotRefused,
}

impl LbOutcome {
    pub const ALL: [LbOutcome; 4] = [
        LbOutcome::Balanced,
        LbOutcome::Imbalanced,
        LbOutcome::Pulled,
        LbOutcome::HotRefused,
    ];

    pub fn name(self) -> &'static str {
        match self {
            LbOutcome::Balanced => "balanced",
            LbOutcome::Imbalanced => "imbalanced",
            LbOutcome::Pulled => "pulled",
            LbOutcome::HotRefused => "hot_refused",
        }
    }
}

/// A domain level's name as counters print it: one of the eras' level
/// names, or "none" for two CPUs no domain spans.
pub type Level = &'static str;

/// Every level name any era builds, and "none".
pub const LEVELS: &[Level] = &[
    "SIBLING", "SMT", "MC", "CPU", "DIE", "PKG", "NODE", "ALLNODES", "NUMA", "NUMA2", "NUMA3",
    "none",
];

/// A counter the scheduler or the engine bumps. `idle.enter.<C-state>`
/// counters are named by the machine's C-states and stay strings
/// ([`IDLE_ENTER_PREFIX`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Counter {
    /// A wakeup on the waker's own CPU.
    TtwuLocal,
    /// A wakeup onto another CPU.
    TtwuRemote,
    TtwuRemoteAt(Distance),
    /// A wakeup the waker marked sync.
    TtwuSync,
    IpiSent,
    /// An idle CPU waiting in MWAIT woken by the write to its flags word,
    /// without an IPI (the kernel's sched_wake_idle_without_ipi).
    WakeIdleWithoutIpi,
    Switches,
    /// Tasks waiting in a run queue (queued, not running), summed over
    /// every tick of every CPU: times the tick, the task-time spent
    /// waiting for a CPU; over the run's length, the mean run queue.
    TickWaiting,
    Forks,
    /// A waker that woke several tasks at once.
    WakeupOneToMany,
    /// wake_wide chose not to pull.
    WakeWide,
    /// The fork / BALANCE_WAKE slow path placed the task.
    SelectSlow,
    WakeAffine {
        level: Level,
        outcome: Affine,
    },
    /// 2.6.2x wake_idle found an idle CPU at this level.
    WakeIdleFound {
        level: Level,
    },
    Sis(Sis),
    Migration {
        cause: Cause,
        level: Level,
    },
    Lb {
        level: Level,
        idle: IdleType,
        outcome: LbOutcome,
    },
    ActiveBalance {
        level: Level,
    },
    NewIdleSkipped,
    NewIdlePulled,
    /// EEVDF DELAY_DEQUEUE: a wakeup of a task still queued (delayed), done
    /// where it is, with no CPU selection (ttwu_runnable).
    TtwuDelayed,
    /// 4.15+: a busy tick kicked an idle CPU to balance for the tickless ones.
    NohzKick,
    /// 2.6.28: a tickless CPU took over idle balancing for the others.
    NohzOwner,
    /// A loopback message's receive path ran in the NET_RX softirq (data
    /// on the sender's CPU, an ACK on the reader's).
    NetRxSoftirq,
    /// A TCP reader sent a pure ACK (tcp_cleanup_rbuf's rules).
    TcpAck,
    /// A TCP writer blocked on a full window was woken by an ACK.
    TcpAckWakeup,
    /// A TCP writer blocked while its reader had emptied the queue and
    /// held its ACK: the delayed-ACK timer's ACK, taken at once.
    TcpDelayedAck,
    /// A wakeup preempted the task running where the wakee was queued
    /// (check_preempt_wakeup): the waker itself, on its own CPU, or the
    /// task on another CPU.
    WakeupPreemptWakerCpu,
    WakeupPreemptOtherCpu,
    /// A task slept in futex_wait (a contended mutex, a condition variable,
    /// a barrier).
    FutexWait,
    /// A futex_wake call that found waiters.
    FutexWake,
    /// The tasks futex wakes woke, summed.
    FutexWoken,
    /// A spinlock taken while spinning (it came free within the spin).
    SpinAcquired,
    /// A switch from idle dropped its lazy reference on an mm whose
    /// refcount line another CPU had last written (threads of one process
    /// idling on several CPUs).
    MmLineMoved,
    /// Spin rounds, and the time they took.
    SpinRounds,
    SpinNs,
    /// A spinner that gave up and slept.
    SpinSlept,
    /// An LWLock acquisition that slept on its semaphore; tasks an LWLock
    /// release woke; a woken waiter that found the lock taken again.
    LwSlept,
    LwWoken,
    LwLost,
    /// PostgreSQL's s_lock on an LWLock's spinlock held by a task that is
    /// not running: spin rounds (spins_per_delay tries each), and the
    /// pg_usleep delays between them.
    SLockSpins,
    SLockDelays,
    /// A semaphore wait that queued behind another waiter (a row lock with
    /// two or more transactions waiting for its holder).
    SemQueuedBehind,
    /// A log flush's write and sync; a flush whose record another's
    /// flush had covered.
    LogFlushes,
    LogCovered,
    /// sched_yield calls.
    Yields,
    /// An RT queue ran out of its bandwidth (sched_rt_runtime) and was
    /// throttled until the period's end.
    RtThrottled,
    /// Time AF_UNIX reads spent on skbs their core's backlog had pushed
    /// out of its caches (`cost::unix_backlog`), ns.
    UnixBacklogNs,
    /// Cache lines an AF_UNIX skb's allocation or free took from another
    /// core: recycled objects, slabs' own lines, the node lists' lock
    /// (`HwCosts::skb_slabs`).
    SlabLinesMoved,
    /// Their time, ns, waits for the node lists' locks included.
    SlabNs,
    /// Of it, spinning for a node list's lock another CPU held, ns.
    SlabLockWaitNs,
}

impl Counter {
    /// The counters without a level or an outcome.
    pub const FIXED: [Counter; 44] = [
        Counter::TtwuLocal,
        Counter::TtwuRemote,
        Counter::TtwuSync,
        Counter::IpiSent,
        Counter::WakeIdleWithoutIpi,
        Counter::Switches,
        Counter::TickWaiting,
        Counter::Forks,
        Counter::WakeupOneToMany,
        Counter::WakeWide,
        Counter::SelectSlow,
        Counter::NewIdleSkipped,
        Counter::NewIdlePulled,
        Counter::TtwuDelayed,
        Counter::NohzKick,
        Counter::NohzOwner,
        Counter::NetRxSoftirq,
        Counter::TcpAck,
        Counter::TcpAckWakeup,
        Counter::TcpDelayedAck,
        Counter::WakeupPreemptWakerCpu,
        Counter::WakeupPreemptOtherCpu,
        Counter::FutexWait,
        Counter::FutexWake,
        Counter::FutexWoken,
        Counter::SpinAcquired,
        Counter::SpinRounds,
        Counter::SpinNs,
        Counter::SpinSlept,
        Counter::LwSlept,
        Counter::LwWoken,
        Counter::LwLost,
        Counter::LogFlushes,
        Counter::LogCovered,
        Counter::Yields,
        Counter::RtThrottled,
        Counter::UnixBacklogNs,
        Counter::SlabLinesMoved,
        Counter::SlabNs,
        Counter::SlabLockWaitNs,
        Counter::MmLineMoved,
        Counter::SLockSpins,
        Counter::SLockDelays,
        Counter::SemQueuedBehind,
    ];

    /// How many counters the types can express: one slot each.
    pub const SLOTS: usize =
        Self::FIXED.len() + Distance::ALL.len() + Sis::ALL.len() + LEVELS.len() * PER_LEVEL;

    /// The counter's dense index, below [`Counter::SLOTS`]: counting is an
    /// array add, with no name and no hash on the hot path. The order is
    /// [`Counter::all`]'s.
    #[inline]
    pub fn slot(self) -> usize {
        const REMOTE: usize = Counter::FIXED.len();
        const SIS: usize = REMOTE + Distance::ALL.len();
        const LEVELLED: usize = SIS + Sis::ALL.len();
        let at = |level: Level, within: usize| LEVELLED + level_index(level) * PER_LEVEL + within;
        match self {
            Counter::TtwuRemoteAt(d) => REMOTE + d as usize,
            Counter::Sis(s) => SIS + s as usize,
            Counter::WakeAffine { level, outcome } => at(level, outcome as usize),
            Counter::WakeIdleFound { level } => at(level, Affine::ALL.len()),
            Counter::Migration { cause, level } => {
                at(level, Affine::ALL.len() + 1 + cause as usize)
            }
            Counter::Lb {
                level,
                idle,
                outcome,
            } => at(
                level,
                Affine::ALL.len()
                    + 1
                    + Cause::ALL.len()
                    + idle as usize * LbOutcome::ALL.len()
                    + outcome as usize,
            ),
            Counter::ActiveBalance { level } => at(level, PER_LEVEL - 1),
            fixed => fixed.fixed_slot(),
        }
    }

    /// A counter without a level or an outcome: its place in [`Counter::FIXED`].
    #[inline]
    fn fixed_slot(self) -> usize {
        match self {
            Counter::TtwuLocal => 0,
            Counter::TtwuRemote => 1,
            Counter::TtwuSync => 2,
            Counter::IpiSent => 3,
            Counter::WakeIdleWithoutIpi => 4,
            Counter::Switches => 5,
            Counter::TickWaiting => 6,
            Counter::Forks => 7,
            Counter::WakeupOneToMany => 8,
            Counter::WakeWide => 9,
            Counter::SelectSlow => 10,
            Counter::NewIdleSkipped => 11,
            Counter::NewIdlePulled => 12,
            Counter::TtwuDelayed => 13,
            Counter::NohzKick => 14,
            Counter::NohzOwner => 15,
            Counter::NetRxSoftirq => 16,
            Counter::TcpAck => 17,
            Counter::TcpAckWakeup => 18,
            Counter::TcpDelayedAck => 19,
            Counter::WakeupPreemptWakerCpu => 20,
            Counter::WakeupPreemptOtherCpu => 21,
            Counter::FutexWait => 22,
            Counter::FutexWake => 23,
            Counter::FutexWoken => 24,
            Counter::SpinAcquired => 25,
            Counter::SpinRounds => 26,
            Counter::SpinNs => 27,
            Counter::SpinSlept => 28,
            Counter::LwSlept => 29,
            Counter::LwWoken => 30,
            Counter::LwLost => 31,
            Counter::LogFlushes => 32,
            Counter::LogCovered => 33,
            Counter::Yields => 34,
            Counter::RtThrottled => 35,
            Counter::UnixBacklogNs => 36,
            Counter::SlabLinesMoved => 37,
            Counter::SlabNs => 38,
            Counter::SlabLockWaitNs => 39,
            Counter::MmLineMoved => 40,
            Counter::SLockSpins => 41,
            Counter::SLockDelays => 42,
            Counter::SemQueuedBehind => 43,
            _ => unreachable!("{self:?} has a level or an outcome"),
        }
    }

    /// Every counter the types can express, at every level, in slot order.
    pub fn all() -> Vec<Counter> {
        let mut all = Counter::FIXED.to_vec();
        all.extend(Distance::ALL.map(Counter::TtwuRemoteAt));
        all.extend(Sis::ALL.map(Counter::Sis));
        for &level in LEVELS {
            all.extend(Affine::ALL.map(|outcome| Counter::WakeAffine { level, outcome }));
            all.push(Counter::WakeIdleFound { level });
            all.extend(Cause::ALL.map(|cause| Counter::Migration { cause, level }));
            for idle in IdleType::ALL {
                all.extend(LbOutcome::ALL.map(|outcome| Counter::Lb {
                    level,
                    idle,
                    outcome,
                }));
            }
            all.push(Counter::ActiveBalance { level });
        }
        all
    }
}

/// Slots per domain level: wake_affine's outcomes, wake_idle's find, the
/// migrations by cause, the balancer's outcomes by idle type, active
/// balancing.
const PER_LEVEL: usize =
    Affine::ALL.len() + 1 + Cause::ALL.len() + IdleType::ALL.len() * LbOutcome::ALL.len() + 1;

/// The index of a level in [`LEVELS`]. Every level an era builds is there
/// (`counters::tests::every_era_level_has_counters`).
#[inline]
fn level_index(level: Level) -> usize {
    LEVELS
        .iter()
        .position(|&l| l == level)
        .unwrap_or_else(|| panic!("domain level {level} is not in counters::LEVELS"))
}

/// Prefix of the per-C-state idle entry counters.
pub const IDLE_ENTER_PREFIX: &str = "idle.enter.";

impl fmt::Display for Counter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Counter::TtwuLocal => f.write_str("ttwu.local"),
            Counter::TtwuRemote => f.write_str("ttwu.remote"),
            Counter::TtwuRemoteAt(d) => write!(f, "ttwu.remote.{}", d.name()),
            Counter::TtwuSync => f.write_str("ttwu.sync"),
            Counter::TtwuDelayed => f.write_str("ttwu.delayed"),
            Counter::IpiSent => f.write_str("ipi.sent"),
            Counter::WakeIdleWithoutIpi => f.write_str("ipi.skipped_polling"),
            Counter::Switches => f.write_str("sched.switches"),
            Counter::TickWaiting => f.write_str("sched.tick_waiting"),
            Counter::Forks => f.write_str("sched.forks"),
            Counter::WakeupOneToMany => f.write_str("wakeup.one_to_many"),
            Counter::WakeWide => f.write_str("wake_wide.wide"),
            Counter::SelectSlow => f.write_str("select.slow"),
            Counter::WakeAffine { level, outcome } => {
                write!(f, "wake_affine.{level}.{}", outcome.name())
            }
            Counter::WakeIdleFound { level } => write!(f, "wake_idle.{level}.found"),
            Counter::Sis(s) => write!(f, "sis.{}", s.name()),
            Counter::Migration { cause, level } => {
                write!(f, "migrations.{}.{level}", cause.name())
            }
            Counter::Lb {
                level,
                idle,
                outcome,
            } => write!(f, "lb.{level}.{}.{}", idle.name(), outcome.name()),
            Counter::ActiveBalance { level } => write!(f, "active_balance.{level}"),
            Counter::NewIdleSkipped => f.write_str("newidle.skipped"),
            Counter::NewIdlePulled => f.write_str("newidle.pulled"),
            Counter::NohzKick => f.write_str("nohz.kicks"),
            Counter::NohzOwner => f.write_str("nohz.owner_taken"),
            Counter::NetRxSoftirq => f.write_str("softirq.net_rx"),
            Counter::TcpAck => f.write_str("tcp.acks"),
            Counter::TcpAckWakeup => f.write_str("tcp.ack_wakeups"),
            Counter::TcpDelayedAck => f.write_str("tcp.delayed_acks"),
            Counter::WakeupPreemptWakerCpu => f.write_str("sched.wakeup_preempt.waker_cpu"),
            Counter::WakeupPreemptOtherCpu => f.write_str("sched.wakeup_preempt.other_cpu"),
            Counter::FutexWait => f.write_str("futex.wait"),
            Counter::FutexWake => f.write_str("futex.wake"),
            Counter::FutexWoken => f.write_str("futex.woken"),
            Counter::SpinAcquired => f.write_str("spin.acquired"),
            Counter::SpinRounds => f.write_str("spin.rounds"),
            Counter::SpinNs => f.write_str("spin.ns"),
            Counter::SpinSlept => f.write_str("spin.slept"),
            Counter::LwSlept => f.write_str("lwlock.slept"),
            Counter::LwWoken => f.write_str("lwlock.woken"),
            Counter::LwLost => f.write_str("lwlock.lost"),
            Counter::LogFlushes => f.write_str("log.flushes"),
            Counter::LogCovered => f.write_str("log.covered"),
            Counter::Yields => f.write_str("sched.yield"),
            Counter::RtThrottled => f.write_str("rt.throttled"),
            Counter::UnixBacklogNs => f.write_str("unix.backlog_ns"),
            Counter::SlabLinesMoved => f.write_str("slab.lines_moved"),
            Counter::SlabNs => f.write_str("slab.ns"),
            Counter::SlabLockWaitNs => f.write_str("slab.lock_wait_ns"),
            Counter::MmLineMoved => f.write_str("mm.lazy_ref_line_moved"),
            Counter::SLockSpins => f.write_str("lwlock.s_lock_spins"),
            Counter::SLockDelays => f.write_str("lwlock.s_lock_delays"),
            Counter::SemQueuedBehind => f.write_str("sem.queued_behind"),
        }
    }
}

fn level(s: &str) -> Option<Level> {
    LEVELS.iter().copied().find(|l| *l == s)
}

fn named<T: Copy>(all: &[T], name: impl Fn(T) -> &'static str, s: &str) -> Option<T> {
    all.iter().copied().find(|&t| name(t) == s)
}

impl FromStr for Counter {
    type Err = String;

    /// Reads a counter's printed name back (the inverse of `Display`).
    fn from_str(s: &str) -> Result<Counter, String> {
        if let Some(c) = Counter::FIXED.into_iter().find(|c| c.to_string() == s) {
            return Ok(c);
        }
        let parts: Vec<&str> = s.split('.').collect();
        let parsed = match parts.as_slice() {
            ["ttwu", "remote", d] => {
                named(&Distance::ALL, Distance::name, d).map(Counter::TtwuRemoteAt)
            }
            ["wake_affine", l, o] => level(l)
                .zip(named(&Affine::ALL, Affine::name, o))
                .map(|(level, outcome)| Counter::WakeAffine { level, outcome }),
            ["wake_idle", l, "found"] => level(l).map(|level| Counter::WakeIdleFound { level }),
            ["sis", b] => named(&Sis::ALL, Sis::name, b).map(Counter::Sis),
            ["migrations", c, l] => named(&Cause::ALL, Cause::name, c)
                .zip(level(l))
                .map(|(cause, level)| Counter::Migration { cause, level }),
            ["lb", l, i, o] => level(l).and_then(|level| {
                Some(Counter::Lb {
                    level,
                    idle: named(&IdleType::ALL, IdleType::name, i)?,
                    outcome: named(&LbOutcome::ALL, LbOutcome::name, o)?,
                })
            }),
            ["active_balance", l] => level(l).map(|level| Counter::ActiveBalance { level }),
            _ => None,
        };
        parsed.ok_or_else(|| format!("no counter is named {s:?}"))
    }
}

/// Why a task was placed on, or moved to, a CPU: the branch that decided,
/// as the trace records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reason {
    /// Stayed with its previous CPU.
    Prev,
    /// Pulled to the waker's CPU by wake_affine.
    WakeAffine,
    /// wake_affine_idle chose prev because it is idle.
    WakeAffinePrevIdle,
    /// 2.6.2x passive SD_WAKE_BALANCE.
    WakeBalance,
    /// 2.6.2x wake_idle found an idle CPU.
    WakeIdle,
    /// select_idle_sibling found this CPU.
    Sis(Sis),
    /// The fork / BALANCE_WAKE slow path.
    FindIdlestCpu,
    /// A fork child stayed on the parent's CPU.
    ForkLocal,
    /// The workload started the task on a given CPU.
    StartCpu,
    /// The chosen CPU was not allowed; select_fallback_rq picked another.
    AffinityFallback,
    LoadBalance,
    ActiveBalance,
    /// EEVDF: woken while still queued (delayed), so where it was.
    Delayed,
    /// sched_setaffinity took the CPU it ran on out of its set.
    SetAffinity,
    /// The RT class: find_lowest_rq placed it (a wakeup or fork), a
    /// crowded CPU pushed it, a CPU whose RT priority dropped pulled it.
    RtLowest,
    RtPush,
    RtPull,
}

impl Reason {
    pub const ALL: [Reason; 21] = [
        Reason::Prev,
        Reason::WakeAffine,
        Reason::WakeAffinePrevIdle,
        Reason::WakeBalance,
        Reason::WakeIdle,
        Reason::Sis(Sis::TargetIdle),
        Reason::Sis(Sis::PrevIdle),
        Reason::Sis(Sis::Recent),
        Reason::Sis(Sis::Smt),
        Reason::Sis(Sis::ScanFound),
        Reason::FindIdlestCpu,
        Reason::ForkLocal,
        Reason::StartCpu,
        Reason::AffinityFallback,
        Reason::LoadBalance,
        Reason::ActiveBalance,
        Reason::Delayed,
        Reason::SetAffinity,
        Reason::RtLowest,
        Reason::RtPush,
        Reason::RtPull,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Reason::Prev => "prev",
            Reason::WakeAffine => "wake_affine",
            Reason::WakeAffinePrevIdle => "wake_affine.prev_idle",
            Reason::WakeBalance => "wake_balance",
            Reason::WakeIdle => "wake_idle",
            Reason::Sis(Sis::TargetIdle) => "sis.target_idle",
            Reason::Sis(Sis::PrevIdle) => "sis.prev_idle",
            Reason::Sis(Sis::Recent) => "sis.recent",
            Reason::Sis(Sis::Smt) => "sis.smt",
            Reason::Sis(Sis::ScanFound) => "sis.scan_found",
            Reason::Sis(Sis::ScanFailed) => "sis.scan_failed",
            Reason::Sis(Sis::UtilSkip) => "sis.util_skip",
            Reason::FindIdlestCpu => "find_idlest_cpu",
            Reason::ForkLocal => "fork_local",
            Reason::StartCpu => "start_cpu",
            Reason::AffinityFallback => "affinity_fallback",
            Reason::LoadBalance => "load_balance",
            Reason::ActiveBalance => "active_balance",
            Reason::Delayed => "delayed",
            Reason::SetAffinity => "set_affinity",
            Reason::RtLowest => "rt.lowest",
            Reason::RtPush => "rt.push",
            Reason::RtPull => "rt.pull",
        }
    }

    /// Whether the task moved because of load balancing rather than a wakeup.
    pub fn is_balancing(self) -> bool {
        matches!(self, Reason::LoadBalance | Reason::ActiveBalance)
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Reason {
    type Err = String;
    fn from_str(s: &str) -> Result<Reason, String> {
        Reason::ALL
            .into_iter()
            .find(|r| r.name() == s)
            .ok_or_else(|| format!("no placement reason is named {s:?}"))
    }
}

impl TryFrom<String> for Reason {
    type Error = String;
    fn try_from(s: String) -> Result<Reason, String> {
        s.parse()
    }
}

impl From<Reason> for String {
    fn from(r: Reason) -> String {
        r.name().to_string()
    }
}

impl serde::Serialize for Reason {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for Reason {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Reason, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The engine bumps placement counters by these enums' discriminants.
    #[test]
    fn placement_lists_are_in_discriminant_order() {
        assert!(Sis::ALL.iter().enumerate().all(|(i, &s)| s as usize == i));
        assert!(Affine::ALL
            .iter()
            .enumerate()
            .all(|(i, &a)| a as usize == i));
        assert!(Cause::ALL.iter().enumerate().all(|(i, &k)| k as usize == i));
    }

    /// Each counter has its own slot, and `all` lists them in slot order.
    #[test]
    fn slots_are_dense_and_in_the_order_of_all() {
        let all = Counter::all();
        assert_eq!(all.len(), Counter::SLOTS);
        for (i, c) in all.iter().enumerate() {
            assert_eq!(c.slot(), i, "{c}");
        }
    }

    #[test]
    fn every_era_level_has_counters() {
        for era in Era::ALL {
            for level in era.rules().level_names {
                assert!(LEVELS.contains(level), "{era}: {level}");
            }
        }
    }

    #[test]
    fn every_counter_name_reads_back_as_itself() {
        let all = Counter::all();
        let mut names: Vec<String> = all.iter().map(|c| c.to_string()).collect();
        for (c, name) in all.iter().zip(&names) {
            assert_eq!(name.parse::<Counter>().as_ref(), Ok(c), "{name}");
        }
        names.sort();
        names.dedup();
        assert_eq!(names.len(), all.len(), "two counters print the same name");
        assert!("wake_affine.MC.bogus".parse::<Counter>().is_err());
        assert!("idle.enter.C1".parse::<Counter>().is_err());
    }

    #[test]
    fn every_era_can_write_a_wake_affine_pull() {
        // explain's "wake_affine pulled wakees" sums the pulling outcomes:
        // each era must be able to write one of them.
        for era in Era::ALL {
            assert!(
                Affine::ALL
                    .into_iter()
                    .any(|o| o.written_by(era) && o.pulls_to_waker()),
                "{era}"
            );
        }
    }

    #[test]
    fn every_reason_reads_back_as_itself() {
        for r in Reason::ALL {
            assert_eq!(r.name().parse::<Reason>(), Ok(r));
            let json = serde_json::to_string(&r).unwrap();
            assert_eq!(serde_json::from_str::<Reason>(&json).unwrap(), r);
        }
        assert!("sideways".parse::<Reason>().is_err());
    }
}

//! A CPU as the engine keeps it: its run queue, what its time counts as,
//! the segment of work under way (user or kernel, its rate), idle state
//! and tick. What CPUs do is in `segment.rs` (work and its speed),
//! `schedule.rs` (switching, preemption, softirqs) and `idle.rs` (idle,
//! kicks and the tick).

use super::stats::CpuTime;
use super::task::Pending;
use crate::policy::Picker;
use crate::sched::cfs::CfsRq;
use crate::sched::load::CpuLoad;
use crate::sched::rt_rq::RtRq;

/// What a CPU's time is being counted as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Acct {
    Busy,
    Idle,
    Overhead,
    /// Kernel work in the NET_RX softirq (overhead, split out).
    NetRx,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuState {
    /// In a C-state, nothing to run.
    Idle,
    /// Woken, paying the C-state's exit latency.
    ExitingIdle,
    /// Running a task (or switching to one).
    Running,
    /// Balancing before idling: a new-idle balance that found nothing to
    /// pull, or a tick's balance on an idle CPU that pulled. Not idle to
    /// anyone looking (the kernel's rq->curr is still the task that blocked,
    /// or the CPU is awake in the softirq); when it ends the CPU runs what
    /// its queue holds or idles.
    Balancing,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SegKind {
    User,
    Kernel,
    /// The NET_RX softirq run at the end of a loopback send (its
    /// local_bh_enable): kernel work, accounted apart.
    NetRx,
}

/// A segment paused by a softirq: its kind, the work it had left and what
/// was to happen at its end.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Interrupted {
    pub kind: SegKind,
    pub work: u64,
    pub copy_share: u64,
    pub pending: Pending,
}

/// A stretch of work the current task is doing on this CPU.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Segment {
    pub kind: SegKind,
    /// Work left at `since`, in ns at full speed x WORK_SCALE.
    pub work: u64,
    /// Work per ns.
    pub rate: u64,
    pub since: u64,
    /// Of its work, the part copying to or from user memory, in 1/1024:
    /// spread evenly over the segment, it counts as that many copies in
    /// flight on the node and runs at the node's bandwidth share.
    pub copy_share: u64,
}

#[derive(Debug, Clone)]
pub(crate) struct Cpu {
    pub rq: CfsRq,
    /// The RT class's queue, picked before `rq`.
    pub rt: RtRq,
    pub state: CpuState,
    pub seg: Option<Segment>,
    /// Bumped whenever a pending SegmentDone / IdleExitDone becomes stale.
    pub gen: u64,
    pub need_resched: bool,
    /// Whether siblings were last told this CPU is busy.
    pub busy_notified: bool,
    pub kick_pending: bool,
    /// Queued wakeups on their way here by IPI.
    pub wake_pending: u32,
    pub cstate: usize,
    pub idle_since: u64,
    /// Moving average of idle periods (the kernel's avg_idle), ns.
    pub avg_idle_ns: u64,
    /// The last idle period, ns (None before the first).
    pub last_idle_ns: Option<u64>,
    /// The address space still loaded (lazy TLB), by mm id.
    pub loaded_mm: Option<u32>,
    /// The idle task holds a reference on `loaded_mm` (mmgrab_lazy_tlb),
    /// dropped at the next switch to a task.
    pub idle_mm_ref: bool,
    pub cpu_load: CpuLoad,
    pub time: CpuTime,
    /// The segment a softirq interrupted, resumed when it returns.
    pub interrupted: Option<Interrupted>,
    /// When the balancing under way on a CPU that runs no task ends: an
    /// idle CPU's tick balance (a pull or a wakeup is noticed no earlier),
    /// or the balance before idling.
    pub softirq_until: u64,
    /// An idle CPU's tick balancing time, counted as overhead, not idle.
    pub(super) idle_softirq_ns: u64,
    /// NOHZ: the tick is stopped (an idle CPU); a Tick event still queued
    /// is dropped when it fires.
    pub tick_stopped: bool,
    /// A Tick event for this CPU is queued.
    pub tick_armed: bool,
    /// The tick that last updated cpu_load[] (tickless ticks are caught up).
    pub load_tick_ns: u64,
    pub(super) acct: Acct,
    pub(super) acct_since: u64,
    /// The CPU this one last sent a task to whose affinity excluded it
    /// (cpumask_any_and_distribute's per-CPU distribute_cpu_mask_prev).
    pub(super) distribute_prev: usize,
}

impl Cpu {
    pub fn new(initial_avg_idle_ns: u64, picker: Picker) -> Self {
        Cpu {
            rq: CfsRq::with_picker(0, picker),
            rt: RtRq::default(),
            state: CpuState::Idle,
            seg: None,
            gen: 0,
            need_resched: false,
            busy_notified: false,
            kick_pending: false,
            wake_pending: 0,
            cstate: 0,
            idle_since: 0,
            avg_idle_ns: initial_avg_idle_ns,
            last_idle_ns: None,
            loaded_mm: None,
            idle_mm_ref: false,
            cpu_load: CpuLoad::default(),
            time: CpuTime::default(),
            interrupted: None,
            softirq_until: 0,
            idle_softirq_ns: 0,
            tick_stopped: false,
            tick_armed: true,
            load_tick_ns: 0,
            acct: Acct::Idle,
            acct_since: 0,
            distribute_prev: 0,
        }
    }

    /// Closes the current accounting interval at `now`; switches to `next` if given.
    pub fn account(&mut self, now: u64, next: Option<Acct>) {
        let d = now - self.acct_since;
        match self.acct {
            Acct::Busy => self.time.busy_ns += d,
            Acct::Idle => {
                // The ticks' balancing inside this idle stretch was kernel work.
                let softirq = self.idle_softirq_ns.min(d);
                self.idle_softirq_ns -= softirq;
                self.time.idle_ns += d - softirq;
                self.time.overhead_ns += softirq;
            }
            Acct::Overhead => self.time.overhead_ns += d,
            Acct::NetRx => {
                self.time.overhead_ns += d;
                self.time.net_rx_softirq_ns += d;
            }
        }
        self.acct_since = now;
        if let Some(a) = next {
            self.acct = a;
        }
    }

    /// Time accounted so far plus the open interval.
    pub fn accounted_until(&self, now: u64) -> u64 {
        self.time.total() + (now - self.acct_since)
    }
}

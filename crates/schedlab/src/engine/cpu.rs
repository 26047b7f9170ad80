//! Running CPUs: execution segments (user or kernel work, slowed by a busy
//! SMT sibling), picking the next task and switching to it, idling with a
//! C-state chosen by an idle predictor and leaving it, preemption, the tick.

use super::stats::{CpuTime, TraceEvent};
use super::task::{Pending, TaskState};
use super::{Event, Sim};
use crate::cost::{COPY_SHARE_ONE, WORK_SCALE};
use crate::counters::Counter;
use crate::policy::{NohzBalancer, Picker};
use crate::sched::cfs::CfsRq;
use crate::sched::load::CpuLoad;
use crate::sched::nohz::{self, TickAction};
use crate::sched::update_avg_idle;

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
    /// The address space still loaded (lazy TLB), by process id.
    pub loaded_mm: Option<u32>,
    pub cpu_load: CpuLoad,
    pub time: CpuTime,
    /// The segment a softirq interrupted, resumed when it returns.
    pub interrupted: Option<Interrupted>,
    /// When the balancing under way on a CPU that runs no task ends: an
    /// idle CPU's tick balance (a pull or a wakeup is noticed no earlier),
    /// or the balance before idling.
    pub softirq_until: u64,
    /// An idle CPU's tick balancing time, counted as overhead, not idle.
    idle_softirq_ns: u64,
    /// NOHZ: the tick is stopped (an idle CPU); a Tick event still queued
    /// is dropped when it fires.
    pub tick_stopped: bool,
    /// A Tick event for this CPU is queued.
    pub tick_armed: bool,
    /// The tick that last updated cpu_load[] (tickless ticks are caught up).
    pub load_tick_ns: u64,
    acct: Acct,
    acct_since: u64,
}

impl Cpu {
    pub fn new(initial_avg_idle_ns: u64, picker: Picker) -> Self {
        Cpu {
            rq: CfsRq::with_picker(0, picker),
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

impl Sim {
    /// Threads of `cpu`'s core running a segment, kept by start_work and
    /// seg_ended (counting the siblings read a cache line per thread).
    #[inline]
    pub(crate) fn busy_in_core(&self, cpu: usize) -> usize {
        self.core_busy[self.core_of[cpu]] as usize
    }

    /// Starts a segment of `ns` of work on `cpu` for its current task.
    pub(crate) fn start_segment(&mut self, cpu: usize, kind: SegKind, ns: u64, pending: Pending) {
        self.start_work(cpu, kind, ns * WORK_SCALE, 0, pending);
    }

    /// A read's or write's kernel work of `ns`, `copy_ns` of it copying
    /// data to or from user memory. The copy's lines come from and go to
    /// `cpu`'s LLC while what it holds (the buffered bytes of the channels
    /// its CPUs read and write, and the tasks' working sets) fits there;
    /// only the part that does not fit (`llc_overflow`) is memory traffic
    /// and shares the node's bandwidth, the rest copies at the core's speed.
    pub(crate) fn start_copying(&mut self, cpu: usize, ns: u64, copy_ns: u64, pending: Pending) {
        let llc = self.topo.cpus[cpu].llc;
        let held = self.llc_ws_kib[llc] as u128 * 1024 + self.llc_buf_bytes[llc] as u128;
        let dram = self.cost.llc_overflow(held);
        let share = (copy_ns.min(ns) * dram).checked_div(ns).unwrap_or(0);
        self.start_work(cpu, SegKind::Kernel, ns * WORK_SCALE, share, pending);
    }

    /// Like [`Self::start_segment`] with the work already scaled and its
    /// copying part (1/1024) given.
    pub(crate) fn start_work(
        &mut self,
        cpu: usize,
        kind: SegKind,
        work: u64,
        copy_share: u64,
        pending: Pending,
    ) {
        let task = self.cpus[cpu]
            .rq
            .curr
            .expect("a segment needs a running task");
        self.tasks[task].pending = pending;
        let old_share = self.cpus[cpu].seg.map(|s| s.copy_share);
        let was_busy = old_share.is_some();
        let node = self.topo.cpus[cpu].node;
        let copies_before = self.copies[node];
        self.copies[node] = self.copies[node] - old_share.unwrap_or(0) + copy_share;
        let copies_after = self.copies[node];
        if !was_busy {
            self.core_busy[self.core_of[cpu]] += 1;
        }
        let rate = self.seg_rate(cpu, copy_share, self.busy_in_core(cpu));
        let c = &mut self.cpus[cpu];
        c.account(
            self.now,
            Some(match kind {
                SegKind::User => Acct::Busy,
                SegKind::Kernel => Acct::Overhead,
                SegKind::NetRx => Acct::NetRx,
            }),
        );
        c.seg = Some(Segment {
            kind,
            work,
            rate,
            since: self.now,
            copy_share,
        });
        c.gen += 1;
        // A thread alone on its core runs at WORK_SCALE: a shift, not a
        // division (the most common segment).
        let ns = if rate == WORK_SCALE {
            work.div_ceil(WORK_SCALE)
        } else {
            work.div_ceil(rate)
        };
        let at = self.now + ns;
        let gen = c.gen;
        self.queue.push(at, Event::SegmentDone { cpu, gen });
        self.seg_touched.push(cpu);
        if copies_after != copies_before {
            self.copies_changed(node);
        }
    }

    /// The rate of a segment on `cpu` whose copying part is `copy_share`
    /// (1/1024) when `nbusy` threads of its core are busy: the other work at
    /// the thread's speed, the copying at the lesser of that and the
    /// node's copying speed.
    #[inline]
    fn seg_rate(&self, cpu: usize, copy_share: u64, nbusy: usize) -> u64 {
        let smt = self.cost.smt_rate(nbusy);
        if copy_share == 0 {
            return smt;
        }
        let copy = smt.min(self.copy_cap[self.topo.cpus[cpu].node]);
        if copy == smt {
            return smt;
        }
        // Time per unit of work: (1 - share) / smt + share / copy.
        let one = COPY_SHARE_ONE;
        let fits = |a, b| crate::arith::mul_fits(a, b);
        let num = fits(one, smt)
            .then(|| one * smt)
            .filter(|&x| fits(x, copy))
            .map(|x| x * copy);
        let den = (fits(one - copy_share, copy) && fits(copy_share, smt))
            .then(|| ((one - copy_share) * copy).checked_add(copy_share * smt))
            .flatten();
        match (num, den) {
            // In 64 bits when exact: 128-bit arithmetic is a library call
            // in WebAssembly (crate::arith).
            (Some(n), Some(d)) => (n / d).max(1),
            _ => {
                let (s, c, sh) = (smt as u128, copy as u128, copy_share as u128);
                let one = one as u128;
                ((one * s * c) / ((one - sh) * c + sh * s)).max(1) as u64
            }
        }
    }

    /// A segment copying on `node` started or ended: the node's copying
    /// speed is worked out again (at once when the copies surely fit in
    /// its bandwidth), and if it changed every segment copying on the node
    /// continues at its new rate.
    fn copies_changed(&mut self, node: usize) {
        let cap = if self.cost.copies_fit(self.copies[node]) {
            WORK_SCALE
        } else {
            let mut segs = std::mem::take(&mut self.copy_segs);
            segs.clear();
            for &cpu in &self.node_cpus[node] {
                if let Some(seg) = self.cpus[cpu].seg {
                    if seg.copy_share > 0 {
                        let smt = self.cost.smt_rate(self.busy_in_core(cpu));
                        segs.push((seg.copy_share, smt));
                    }
                }
            }
            let cap = self.cost.copy_cap(&segs);
            self.copy_segs = segs;
            cap
        };
        if cap == self.copy_cap[node] {
            return;
        }
        self.copy_cap[node] = cap;
        for i in 0..self.node_cpus[node].len() {
            let cpu = self.node_cpus[node][i];
            let Some(seg) = self.cpus[cpu].seg else {
                continue;
            };
            if seg.copy_share > 0 {
                let rate = self.seg_rate(cpu, seg.copy_share, self.busy_in_core(cpu));
                self.rerate(cpu, rate);
            }
        }
    }

    /// `cpu`'s segment continues from now at `rate`.
    fn rerate(&mut self, cpu: usize, rate: u64) {
        let now = self.now;
        let c = &mut self.cpus[cpu];
        if let Some(seg) = &mut c.seg {
            if seg.rate != rate {
                seg.work = seg.work.saturating_sub((now - seg.since) * seg.rate);
                seg.since = now;
                seg.rate = rate;
                c.gen += 1;
                let at = now + seg.work.div_ceil(rate);
                let gen = c.gen;
                self.queue.push(at, Event::SegmentDone { cpu, gen });
            }
        }
    }

    /// A segment on `cpu` ended: its thread leaves its core's busy count
    /// and its copying the node's.
    fn seg_ended(&mut self, cpu: usize, copy_share: u64) {
        self.core_busy[self.core_of[cpu]] -= 1;
        if copy_share > 0 {
            let node = self.topo.cpus[cpu].node;
            self.copies[node] -= copy_share;
            self.copies_changed(node);
        }
    }

    /// Stops the current segment, returning the work it had left.
    pub(crate) fn stop_segment(&mut self, cpu: usize) -> u64 {
        let now = self.now;
        let c = &mut self.cpus[cpu];
        c.gen += 1;
        self.seg_touched.push(cpu);
        match c.seg.take() {
            Some(s) => {
                self.seg_ended(cpu, s.copy_share);
                s.work.saturating_sub((now - s.since) * s.rate)
            }
            None => 0,
        }
    }

    /// After an event: if `cpu`'s busy state changed, its SMT siblings'
    /// segments continue at their new speed. Inlined: it runs for every
    /// CPU an event touched, and mostly finds nothing changed.
    #[inline(always)]
    pub(crate) fn flush_touched_cpu(&mut self, cpu: usize) {
        let busy = self.cpus[cpu].seg.is_some();
        if busy != self.cpus[cpu].busy_notified {
            self.busy_changed(cpu, busy);
        }
    }

    /// `cpu` became busy or idle: its siblings' segments are re-rated.
    #[inline(never)]
    fn busy_changed(&mut self, cpu: usize, busy: bool) {
        self.cpus[cpu].busy_notified = busy;
        if self.siblings[cpu].len() < 2 {
            return;
        }
        let nbusy = self.busy_in_core(cpu);
        for i in 0..self.siblings[cpu].len() {
            let s = self.siblings[cpu][i];
            if let Some(seg) = self.cpus[s].seg {
                let rate = self.seg_rate(s, seg.copy_share, nbusy);
                self.rerate(s, rate);
            }
        }
    }

    pub(crate) fn segment_done(&mut self, cpu: usize) {
        if let Some(s) = self.cpus[cpu].seg.take() {
            self.seg_ended(cpu, s.copy_share);
        }
        self.seg_touched.push(cpu);
        let task = self.cpus[cpu]
            .rq
            .curr
            .expect("a finished segment had a task");
        let pending = std::mem::replace(&mut self.tasks[task].pending, Pending::None);
        self.apply_pending(cpu, task, pending);
    }

    /// Continues the current task unless a reschedule is due.
    pub(crate) fn continue_or_preempt(&mut self, cpu: usize) {
        if self.cpus[cpu].need_resched {
            self.cpus[cpu].need_resched = false;
            self.schedule(cpu);
        } else {
            self.resume(cpu);
        }
    }

    /// Reschedules `cpu` now if its task is in user space, else at the end of
    /// its kernel segment.
    pub(crate) fn resched_local(&mut self, cpu: usize) {
        let c = &self.cpus[cpu];
        if c.state != CpuState::Running || c.rq.curr.is_none() {
            return;
        }
        match c.seg {
            Some(s) if s.kind == SegKind::User => {
                let task = c.rq.curr.expect("checked");
                let left = self.stop_segment(cpu);
                self.tasks[task].compute_left += left;
                self.schedule(cpu);
            }
            _ => self.cpus[cpu].need_resched = true,
        }
    }

    /// Picks the next task on `cpu` (the current one, if any, goes back to
    /// the queue first) and switches to it, or idles.
    pub(crate) fn schedule(&mut self, cpu: usize) {
        self.cpus[cpu].need_resched = false;
        let prev = self.cpus[cpu].rq.curr;
        self.touch_rq(cpu);
        if let Some(p) = prev {
            self.touch_task(p);
            self.cpus[cpu].rq.put_prev(p, &self.ents);
            self.tasks[p].state = TaskState::Queued(cpu);
        }
        let mut next = self.pick_next(cpu);
        let mut balance_ns = 0;
        if next.is_none() {
            let newidle = crate::sched::balance::newidle_balance(self, cpu);
            balance_ns = newidle.cost_ns;
            if newidle.pulled {
                next = self.pick_next(cpu);
            }
        }
        match next {
            Some(n) => self.switch_to(cpu, prev, n, balance_ns),
            None if balance_ns > 0 => self.balance_before_idle(cpu, balance_ns),
            None => self.go_idle(cpu),
        }
    }

    /// Switches `cpu` from `prev` to `n`, after `kernel_ns` of kernel work
    /// the switch follows (a new-idle balance that pulled `n`).
    #[inline]
    fn switch_to(&mut self, cpu: usize, prev: Option<usize>, n: usize, kernel_ns: u64) {
        self.touch_task(n);
        self.cpus[cpu].rq.set_curr(n, &mut self.ents, self.now);
        self.tasks[n].state = TaskState::Running(cpu);
        self.cpus[cpu].state = CpuState::Running;
        self.note_idle(cpu);
        if prev == Some(n) {
            self.resume(cpu);
            return;
        }
        self.counters.count(Counter::Switches);
        self.trace_event(TraceEvent::Switch {
            t: self.now,
            cpu,
            from: prev,
            to: Some(n),
        });
        let mm = self.tasks[n].process;
        let same = self.cpus[cpu].loaded_mm == Some(mm);
        self.cpus[cpu].loaded_mm = Some(mm);
        self.cpus[cpu].time.newidle_balance_ns += kernel_ns;
        let cost = self.cost.context_switch(same) + kernel_ns;
        self.start_segment(cpu, SegKind::Kernel, cost, Pending::SwitchIn);
    }

    /// A CPU with nothing to run spends `ns` balancing (not idle meanwhile),
    /// then runs what was queued on it in that time, or idles.
    fn balance_before_idle(&mut self, cpu: usize, ns: u64) {
        let now = self.now;
        let c = &mut self.cpus[cpu];
        c.state = CpuState::Balancing;
        c.time.newidle_balance_ns += ns;
        c.account(now, Some(Acct::Overhead));
        c.softirq_until = now + ns;
        c.gen += 1;
        let gen = c.gen;
        self.note_idle(cpu);
        self.queue.push(now + ns, Event::BalanceDone { cpu, gen });
    }

    pub(crate) fn balance_done(&mut self, cpu: usize) {
        let next = self.pick_next(cpu);
        match next {
            Some(n) => {
                self.touch_rq(cpu);
                self.switch_to(cpu, None, n, 0)
            }
            None => self.go_idle(cpu),
        }
    }

    /// A softirq takes `ns` of kernel time on a CPU running a task: the
    /// task's segment pauses and resumes when it returns (a reschedule
    /// asked for meanwhile happens then). Returns whether there was a
    /// segment to interrupt.
    fn interrupt(&mut self, cpu: usize, ns: u64) -> bool {
        let Some(seg) = self.cpus[cpu].seg else {
            return false;
        };
        let task = self.cpus[cpu].rq.curr.expect("a segment has a task");
        let left = self.stop_segment(cpu);
        if self.tasks[task].pending == Pending::IrqReturn {
            // Already in a softirq: it runs longer.
            self.start_work(
                cpu,
                SegKind::Kernel,
                left + ns * WORK_SCALE,
                0,
                Pending::IrqReturn,
            );
            return true;
        }
        let pending = std::mem::replace(&mut self.tasks[task].pending, Pending::None);
        self.cpus[cpu].interrupted = Some(Interrupted {
            kind: seg.kind,
            work: left,
            copy_share: seg.copy_share,
            pending,
        });
        self.start_segment(cpu, SegKind::Kernel, ns, Pending::IrqReturn);
        true
    }

    /// The softirq is done: a user segment gives way to a reschedule asked
    /// for meanwhile, anything else resumes where it was.
    pub(crate) fn irq_return(&mut self, cpu: usize, task: usize) {
        let Interrupted {
            kind,
            work,
            copy_share,
            pending,
        } = self.cpus[cpu]
            .interrupted
            .take()
            .expect("a softirq returns to what it interrupted");
        if kind == SegKind::User && self.cpus[cpu].need_resched {
            self.tasks[task].compute_left += work;
            self.tasks[task].pending = pending;
            self.cpus[cpu].need_resched = false;
            self.schedule(cpu);
        } else {
            self.start_work(cpu, kind, work, copy_share, pending);
        }
    }

    /// The queue's pick; a delayed task picked (EEVDF DELAY_DEQUEUE) leaves
    /// the queue then, and the pick is made again.
    fn pick_next(&mut self, cpu: usize) -> Option<usize> {
        loop {
            let next = self.cpus[cpu].rq.pick(&self.ents, &self.policy, self.now);
            match next {
                Some(t) if self.ents[t].delayed => {
                    self.touch_task(t);
                    self.cpus[cpu]
                        .rq
                        .finish_delayed(t, &mut self.ents, &self.policy);
                    self.note_idle(cpu);
                }
                _ => return next,
            }
        }
    }

    fn go_idle(&mut self, cpu: usize) {
        let now = self.now;
        let was_running = self.cpus[cpu].state != CpuState::Idle;
        // The idle governor's guess: like menu, trust a recent short idle
        // period over a long average, so a busy ping-pong stays shallow.
        let c = &self.cpus[cpu];
        let predicted = c
            .last_idle_ns
            .map_or(c.avg_idle_ns, |l| l.min(c.avg_idle_ns));
        let cstate = self.cost.pick_cstate(predicted);
        let c = &mut self.cpus[cpu];
        c.state = CpuState::Idle;
        c.idle_since = now;
        c.cstate = cstate;
        self.note_idle(cpu);
        let c = &mut self.cpus[cpu];
        c.account(now, Some(Acct::Idle));
        if crate::sched::nohz::idle_enter(self, cpu, predicted) {
            self.cpus[cpu].tick_stopped = true;
        }
        self.counters.idle_enter(cstate);
        // A core whose threads are all idle is an idle core (SMT only).
        if self.siblings[cpu].len() > 1 && self.siblings[cpu].iter().all(|&s| self.cpu_idle(s)) {
            let llc = self.topo.cpus[cpu].llc;
            self.sched.llc_has_idle_cores[llc] = true;
        }
        if was_running {
            self.trace_event(TraceEvent::Switch {
                t: now,
                cpu,
                from: None,
                to: None,
            });
        }
    }

    /// Wakes an idle CPU at time `at` (a no-op if it is not idle then).
    pub(crate) fn kick(&mut self, cpu: usize, at: u64) {
        let c = &mut self.cpus[cpu];
        if c.state == CpuState::Idle && !c.kick_pending {
            c.kick_pending = true;
            self.queue.push(at, Event::IdleKick { cpu });
        }
    }

    pub(crate) fn idle_kick(&mut self, cpu: usize) {
        let now = self.now;
        let exit = self.cost.idle_exit(self.cpus[cpu].cstate);
        let c = &mut self.cpus[cpu];
        if c.state == CpuState::Idle && now < c.softirq_until {
            // Busy in its tick's balancing: it notices once that is done.
            self.queue.push(c.softirq_until, Event::IdleKick { cpu });
            return;
        }
        c.kick_pending = false;
        if c.state != CpuState::Idle {
            return;
        }
        // avg_idle: a 1/8-weight moving average of idle periods, as the kernel keeps.
        let period = now - c.idle_since;
        update_avg_idle(&self.policy, &self.sched, cpu, &mut c.avg_idle_ns, period);
        let avg_idle = c.avg_idle_ns;
        crate::sched::note_idle_wakeup(&mut self.sched, &self.policy, cpu, avg_idle, now);
        let c = &mut self.cpus[cpu];
        c.last_idle_ns = Some(period);
        c.state = CpuState::ExitingIdle;
        self.restart_tick(cpu);
        let c = &mut self.cpus[cpu];
        c.account(now, Some(Acct::Overhead));
        c.gen += 1;
        let gen = c.gen;
        self.queue
            .push(now + exit, Event::IdleExitDone { cpu, gen });
    }

    pub(crate) fn idle_exit_done(&mut self, cpu: usize) {
        self.cpus[cpu].state = CpuState::Running;
        self.note_idle(cpu);
        self.schedule(cpu);
    }

    /// Whether `cpu` is idle as modern kernels mean it (idle_cpu /
    /// available_idle_cpu): nothing running, nothing queued, no wakeup on
    /// its way.
    pub(crate) fn cpu_idle(&self, cpu: usize) -> bool {
        self.idle_cpus.contains(cpu)
    }

    /// cpu_idle computed from the CPU itself (what `idle_cpus` caches).
    pub(crate) fn cpu_idle_now(&self, cpu: usize) -> bool {
        let c = &self.cpus[cpu];
        self.cpu_curr_idle(cpu) && c.rq.nr_running == 0 && c.wake_pending == 0
    }

    /// Brings `cpu`'s bit in `idle_cpus` up to date; called wherever its
    /// state, its queue's nr_running or its pending wakeups change.
    #[inline]
    pub(crate) fn note_idle(&mut self, cpu: usize) {
        if self.cpu_idle_now(cpu) {
            self.idle_cpus.insert(cpu);
        } else {
            self.idle_cpus.remove(cpu);
        }
    }

    /// 2.6.2x's idle_cpu: the idle task is current (tasks may be queued).
    pub(crate) fn cpu_curr_idle(&self, cpu: usize) -> bool {
        matches!(self.cpus[cpu].state, CpuState::Idle | CpuState::ExitingIdle)
    }

    pub(crate) fn tick(&mut self, cpu: usize) {
        if self.cpus[cpu].tick_stopped {
            self.cpus[cpu].tick_armed = false;
            return;
        }
        let tick = self.policy.tunables.tick_ns();
        self.queue.push(self.now + tick, Event::Tick { cpu });
        self.touch_rq(cpu);
        if let Some(curr) = self.cpus[cpu].rq.curr {
            self.touch_task(curr);
        }
        let rq = &self.cpus[cpu].rq;
        let waiting = (rq.nr_running as u64).saturating_sub(u64::from(rq.curr.is_some()));
        self.counters.add(Counter::TickWaiting, waiting);
        let current = crate::sched::instant_load(self, cpu);
        self.cpus[cpu].cpu_load.tick(current);
        self.cpus[cpu].load_tick_ns = self.now;
        // trigger_load_balance: the NOHZ decision comes before the softirq.
        let action = nohz::tick(self, cpu);
        let mut balance_ns = 0;
        match action {
            TickAction::StopOwnTick => self.cpus[cpu].tick_stopped = true,
            TickAction::Kick(ilb) => {
                let at = self.now + self.cost.ipi_latency();
                self.queue.push(at, Event::NohzKick { cpu: ilb });
            }
            TickAction::None => {}
        }
        if action != TickAction::StopOwnTick {
            balance_ns = crate::sched::balance::rebalance_domains(self, cpu);
            balance_ns += nohz::owner_tick_balance(self, cpu);
        }
        self.charge_softirq(cpu, balance_ns);
        if self.cpus[cpu].state == CpuState::Running
            && self.cpus[cpu]
                .rq
                .tick_preempts(&self.ents, self.policy.era, &self.policy.tunables)
        {
            self.resched_local(cpu);
        }
    }

    /// A tickless CPU leaving idle restarts its tick on the tick grid
    /// (tick_nohz_restart_sched_tick); 4.15+ decays the cpu_load[] ticks it
    /// missed (cpu_load_update_nohz_stop), 2.6.28 left them as they were.
    fn restart_tick(&mut self, cpu: usize) {
        if !self.cpus[cpu].tick_stopped {
            return;
        }
        self.cpus[cpu].tick_stopped = false;
        nohz::tick_restart(self, cpu);
        if self.policy.era.rules().nohz_balancer != NohzBalancer::Owner {
            self.decay_missed_load(cpu);
        }
        self.arm_tick(cpu);
    }

    fn arm_tick(&mut self, cpu: usize) {
        if !self.cpus[cpu].tick_armed {
            let tick = self.policy.tunables.tick_ns();
            self.cpus[cpu].tick_armed = true;
            self.queue
                .push((self.now / tick + 1) * tick, Event::Tick { cpu });
        }
    }

    /// The ticks a tickless CPU missed, as ticks with no load
    /// (decay_load_missed), up to the last tick boundary.
    pub(crate) fn decay_missed_load(&mut self, cpu: usize) {
        let tick = self.policy.tunables.tick_ns();
        let boundary = self.now / tick * tick;
        let c = &mut self.cpus[cpu];
        while c.load_tick_ns + tick <= boundary {
            if c.cpu_load.cpu_load.iter().all(|&l| l == 0) {
                c.load_tick_ns = boundary;
                break;
            }
            c.cpu_load.tick(0);
            c.load_tick_ns += tick;
        }
    }

    /// A NOHZ IPI reaches `cpu`: 4.15+'s kick (it balances for the tickless
    /// idle CPUs, charged to it), or 2.6.28's nomination (it takes over
    /// idle balancing and its tick runs again).
    pub(crate) fn nohz_kick(&mut self, cpu: usize) {
        if self.policy.era.rules().nohz_balancer == NohzBalancer::Owner {
            if nohz::nominated(self, cpu) {
                self.cpus[cpu].tick_stopped = false;
                self.arm_tick(cpu);
            }
            return;
        }
        let ns = nohz::idle_balance_others(self, cpu);
        self.charge_softirq(cpu, ns);
    }

    /// The tick's balancing ran `ns` on `cpu`: a running task waits for it;
    /// an idle CPU is busy in it (a pull or a wakeup is noticed after it); a
    /// CPU already balancing before idling balances longer.
    fn charge_softirq(&mut self, cpu: usize, ns: u64) {
        if ns == 0 {
            return;
        }
        let now = self.now;
        let charged = match self.cpus[cpu].state {
            CpuState::Running => self.interrupt(cpu, ns),
            CpuState::Idle => {
                let c = &mut self.cpus[cpu];
                c.softirq_until = c.softirq_until.max(now) + ns;
                c.idle_softirq_ns += ns;
                true
            }
            // Its time already counts as the idle exit's overhead.
            CpuState::ExitingIdle => false,
            CpuState::Balancing => {
                let c = &mut self.cpus[cpu];
                c.softirq_until = c.softirq_until.max(now) + ns;
                c.gen += 1;
                let (at, gen) = (c.softirq_until, c.gen);
                self.queue.push(at, Event::BalanceDone { cpu, gen });
                true
            }
        };
        if charged {
            self.cpus[cpu].time.tick_balance_ns += ns;
        }
    }

    /// Brings a run queue's accounting (curr's runtime, PELT) up to now.
    pub(crate) fn touch_rq(&mut self, cpu: usize) {
        let now = self.now;
        let rq = &mut self.cpus[cpu].rq;
        rq.update_curr(&mut self.ents, now, &self.policy);
        rq.update_load(now);
    }

    /// Brings a task's PELT signals up to now, under its current state;
    /// returns whether its averages moved (a period boundary was crossed),
    /// which makes its next UTIL_EST sample count (cfs_se_util_change).
    #[inline]
    pub(crate) fn touch_task(&mut self, task: usize) -> bool {
        let (on_rq, running) = match self.tasks[task].state {
            TaskState::Running(_) => (1, true),
            TaskState::Queued(_) => (1, false),
            // A delayed task (EEVDF) is still on its queue, runnable in PELT.
            _ if self.ents[task].delayed => (1, false),
            _ => (0, false),
        };
        let e = &mut self.ents[task];
        let moved = e.pelt.update(self.now, on_rq, on_rq, running, e.weight);
        if moved {
            e.util_est.unchanged = false;
        }
        moved
    }

    /// Wakeup preemption: whether the woken `task` should preempt `cpu`'s
    /// current task (the scheduler decides, and sets the buddies).
    pub(crate) fn check_preempt_wakeup(&mut self, cpu: usize, task: usize, sync: bool) -> bool {
        let Some(curr) = self.cpus[cpu].rq.curr else {
            return false;
        };
        if curr == task {
            return false;
        }
        self.touch_rq(cpu);
        let overlap = crate::sched::wakeup_overlap_preempts(
            &self.policy,
            sync,
            &self.tasks[curr].sched,
            &self.tasks[task].sched,
        );
        self.cpus[cpu]
            .rq
            .check_preempt_wakeup(curr, task, &self.ents, &self.policy, overlap)
    }
}

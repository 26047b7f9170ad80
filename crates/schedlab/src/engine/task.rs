//! Running task programs: the interpreter, channels (buffers that block
//! readers when empty and writers when full), sleeping, forking, exiting,
//! and waking tasks up (locally, by direct remote enqueue, or by IPI).
//! The pthread objects (mutexes, condition variables, barriers) are in
//! `sync.rs`.

use super::cpu::{CpuState, SegKind};
use super::pipe::{round_pipe_size, PipePages};
use super::stats::{LatencyHist, TraceEvent};
use super::{Event, Sim};
use crate::counters::{Counter, Distance, Reason};
use crate::cpuset::CpuSet;
use crate::error::Result;
use crate::limits;
use crate::policy::{Feature, Picker, PipeWriterWake, UtilEstRule};
use crate::sched::cfs::{weight_of_nice, Entity};
use crate::sched::load::{update_avg, Pelt, UtilEst, SCHED_CAPACITY_SCALE};
use crate::sched::wakeup::{self, WakeKind};
use crate::sched::{note_nr_running, TaskSched};
use crate::seed::splitmix64;
use crate::workload::program::{ChannelKind, ChannelSpec, Insn, Time};
use rand_core::RngCore;
use rand_pcg::Pcg32;

/// include/net/tcp.h: the receive MSS assumed before any segment.
const TCP_MSS_DEFAULT: u64 = 536;
/// The loopback device's MSS: its 65,536-byte MTU less the IPv4 and TCP
/// headers and the timestamp option (40 + 12 bytes).
const LOOPBACK_MSS: u64 = 65_484;

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
}

#[derive(Debug, Clone)]
pub(crate) struct Task {
    pub name: String,
    pub template: usize,
    pub pc: usize,
    loops: Vec<u64>,
    pub state: TaskState,
    /// The CPU whose queue the task is on, or last ran on ("prev" for wakeups).
    pub cpu: usize,
    /// The CPU whose cache holds the task's working set.
    pub warm_cpu: Option<usize>,
    pub process: u32,
    pub working_set_kib: u64,
    pub pending: Pending,
    /// Work (scaled) left of a preempted compute or refill.
    pub compute_left: u64,
    /// Blocked inside a read or write: the retry pays no syscall entry.
    pub(crate) in_syscall: bool,
    timer_gen: u64,
    pub(crate) rng: Pcg32,
    last_marks: Vec<u64>,
    pub exited_ns: Option<u64>,
    /// When the task was last woken and has not run since, and whether
    /// by its own timer.
    woken_ns: Option<(u64, bool)>,
    /// Wakeup-to-running latencies of measured wakeups by another task.
    pub wakeup_latency: LatencyHist,
    /// The same for wakeups by the task's own timer (sleep).
    pub timer_latency: LatencyHist,
    /// Where a `lap` measures from: the wakeup that ended the task's last
    /// blocked read, or that read's completion if it did not block.
    lap_from_ns: u64,
    /// Bytes the task's last read returned (0 before any), for echo writes.
    last_read: u64,
    /// The current read blocked (its wakeup set `lap_from_ns`).
    read_blocked: bool,
    /// When the task started, and the end of each timer's current period
    /// (None until first used).
    started_ns: u64,
    timers: Vec<Option<u64>>,
    /// When the current activation began running (rt-app's loop start):
    /// the task's start, its first run after a timer wakeup, a late timer.
    activation_ns: u64,
    /// Sleeping in a timer instruction: its wakeup begins an activation.
    in_timer: bool,
    /// What the scheduler keeps about the task (wakee flips, overlap, ...).
    pub sched: TaskSched,
    /// TCP channels it read from and has not acknowledged yet.
    acks_owed: Vec<usize>,
    /// When the current `runtime` instruction ends (wall time).
    pub(crate) runtime_until: Option<u64>,
    /// The copying part (1/1024) of the current `mem` instruction.
    pub(crate) mem_share: Option<u64>,
    /// Signalled or released while still entering a cond or barrier wait.
    pub(crate) released: bool,
    /// Spin rounds done in the current `spin_lock` since it began or the
    /// task last woke from its futex wait.
    pub(crate) spins: u32,
    /// Asleep in a `spin_lock` whose release wakes every such sleeper.
    pub(crate) wake_all: bool,
}

#[derive(Debug, Clone)]
pub(crate) struct Channel {
    kind: ChannelKind,
    sendfile: bool,
    capacity: u64,
    /// Bytes written or being written and not yet read.
    used: u64,
    /// Bytes a reader can take now.
    readable: u64,
    /// TCP: of `used`, bytes read whose ACK has not been sent (the sender
    /// still holds them, and their window space, until it is).
    unacked: u64,
    /// TCP: the receiver's estimate of the sender's segment size
    /// (icsk_ack.rcv_mss): TCP_MSS_DEFAULT at first, then the largest
    /// segment received, at most the loopback's MSS.
    rcv_mss: u64,
    /// The tasks that last wrote and last read it: a TCP channel and one
    /// going back between the same two tasks are taken as the two
    /// directions of one connection, whose data segments carry each
    /// other's ACKs.
    last_writer_task: Option<usize>,
    last_reader_task: Option<usize>,
    /// The CPUs that last wrote and last read it: where a read's data and
    /// a write's shared state come from (`cost::read_transfer`,
    /// `write_transfer`).
    last_writer_cpu: Option<usize>,
    last_reader_cpu: Option<usize>,
    /// The LLCs of its last writer and last reader: its buffered bytes
    /// (`used`) occupy both (the writer's copy puts them in the one, the
    /// reader's copy pulls them into the other).
    writer_llc: Option<usize>,
    reader_llc: Option<usize>,
    /// What it adds to `Sim::llc_buf_bytes` now: bytes, and the LLCs.
    charged: (u64, [Option<usize>; 2]),
    pub readers: Vec<usize>,
    pub writers: Vec<usize>,
    /// Traffic in the measured part of the run.
    pub stats: ChannelStats,
    /// A pipe's page slots (None for sockets).
    pipe: Option<PipePages>,
}

/// Which blocked writers a read wakes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WakeWriters {
    None,
    One,
    All,
}

/// What went through a channel after the warm-up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ChannelStats {
    pub bytes_written: u64,
    pub bytes_read: u64,
    pub bytes_dropped: u64,
    /// Times a writer blocked because the buffer was full.
    pub writer_blocks: u64,
    /// Times a reader blocked because the buffer was empty (on a lock
    /// channel: lock waits).
    pub reader_blocks: u64,
}

impl Channel {
    /// After a TCP read (its bytes already in `unacked`): whether
    /// tcp_cleanup_rbuf sends an ACK now. Either more than one segment
    /// (`rcv_mss`) arrived since the last ACK, read or still queued (the
    /// once-per-two-segments ACK), or the window the ACK would advertise is
    /// at least twice the one advertised now (a read that freed a lot).
    /// The empty-queue rule for small pushed segments of a one-way stream
    /// is left out: a request/response connection's replies carry its
    /// ACKs (not modelled as such: those ACKs cost nothing here).
    fn time_to_ack(&self) -> bool {
        if self.unacked == 0 {
            return false;
        }
        let free_now = self.capacity - self.used;
        self.unacked + self.readable > self.rcv_mss || free_now + self.unacked >= 2 * free_now
    }

    /// Its byte counts agree: what is readable and what was read but not
    /// acknowledged are both still buffered, and the buffer holds no more
    /// than its capacity.
    pub(super) fn check_bytes(&self) -> std::result::Result<(), String> {
        if self.readable + self.unacked > self.used || self.used > self.capacity {
            return Err(format!(
                "readable {} + unacked {} against used {} of {}",
                self.readable, self.unacked, self.used, self.capacity
            ));
        }
        Ok(())
    }

    /// Takes `take` read bytes out of the buffer (not for TCP, whose space
    /// comes back by ACK) and says which blocked writers that wakes: an
    /// AF_UNIX socket's once unix_writable holds (a quarter of the send
    /// buffer queued at most; unix_write_space, 2.6.27 to 6.12 alike), a
    /// pipe's by the era's rule, every one for UDP.
    fn drain(&mut self, take: u64, rule: PipeWriterWake) -> WakeWriters {
        self.used -= take;
        let wake = |yes: bool, who: WakeWriters| if yes { who } else { WakeWriters::None };
        match (&mut self.pipe, self.kind) {
            (Some(p), _) => {
                let was_full = p.full();
                let freed = p.read(take);
                match rule {
                    PipeWriterWake::PageFreed => wake(freed > 0, WakeWriters::All),
                    PipeWriterWake::ReadOfFullPipe => wake(was_full, WakeWriters::One),
                }
            }
            (None, ChannelKind::Unix) => wake(self.used * 4 <= self.capacity, WakeWriters::All),
            (None, _) => WakeWriters::All,
        }
    }

    /// The writer that has waited longest, out of the wait list (an
    /// exclusive wakeup takes only it).
    fn take_first_writer(&mut self) -> Option<usize> {
        (!self.writers.is_empty()).then(|| self.writers.remove(0))
    }

    /// Whether `bytes` can be queued now: by bytes, and a pipe by its slots.
    fn fits(&self, bytes: u64) -> bool {
        self.capacity - self.used >= bytes && self.pipe.as_ref().is_none_or(|p| p.fits(bytes))
    }

    pub fn new(spec: &ChannelSpec) -> Self {
        let pipe = (spec.kind == ChannelKind::Pipe).then(|| round_pipe_size(spec.capacity));
        Channel {
            kind: spec.kind,
            sendfile: spec.sendfile,
            capacity: pipe.unwrap_or(spec.capacity),
            used: 0,
            readable: 0,
            unacked: 0,
            rcv_mss: TCP_MSS_DEFAULT,
            last_writer_task: None,
            last_reader_task: None,
            last_writer_cpu: None,
            last_reader_cpu: None,
            writer_llc: None,
            reader_llc: None,
            charged: (0, [None, None]),
            readers: Vec::new(),
            writers: Vec::new(),
            stats: ChannelStats::default(),
            pipe: pipe.map(PipePages::new),
        }
    }
}

impl Sim {
    /// Creates a task from template `tpl`: an initial task (parent None) or
    /// a fork child of `parent`, placed by the fork path and made runnable.
    pub(crate) fn start_task(&mut self, tpl: usize, parent: Option<usize>) -> Result<usize> {
        let id = self.tasks.len();
        limits::TASKS.check("tasks alive in the run", id as u64 + 1)?;
        let t = &self.workload.templates[tpl];
        let n = self.topo.ncpus();
        let affinity = t.affinity.unwrap_or_else(|| CpuSet::first_n(n));
        let weight = weight_of_nice(t.nice);
        let parent_cpu = parent.map_or(0, |p| self.tasks[p].cpu);
        self.tasks_alive += 1;
        self.affinity.push(affinity);
        self.tasks.push(Task {
            name: t.name.clone(),
            template: tpl,
            pc: 0,
            loops: Vec::new(),
            state: TaskState::Blocked(Wait::Timer),
            cpu: parent_cpu,
            warm_cpu: None,
            // Each initial task or child is a process of its own unless the
            // workload groups them.
            process: t.process.unwrap_or(1_000_000 + id as u32),
            working_set_kib: t.working_set_kib,
            pending: Pending::None,
            compute_left: 0,
            in_syscall: false,
            timer_gen: 0,
            rng: Pcg32::new(splitmix64(self.seed ^ splitmix64(id as u64)), id as u64),
            last_marks: vec![u64::MAX; self.workload.labels.len()],
            exited_ns: None,
            woken_ns: None,
            wakeup_latency: LatencyHist::default(),
            timer_latency: LatencyHist::default(),
            lap_from_ns: self.now,
            last_read: 0,
            read_blocked: false,
            started_ns: self.now,
            timers: vec![None; t.timer_slots],
            activation_ns: self.now,
            in_timer: false,
            sched: TaskSched {
                wakee_flip_decay_ns: self.now,
                recent_used_cpu: parent_cpu,
                ..TaskSched::default()
            },
            acks_owed: Vec::new(),
            runtime_until: None,
            mem_share: None,
            released: false,
            spins: 0,
            wake_all: false,
        });
        self.ents.push(Entity::new(weight, self.now));
        let placed = match self.workload.templates[tpl].start_cpu {
            Some(cpu) => wakeup::Placement::new(cpu, Reason::StartCpu),
            None => wakeup::select_task_rq(self, id, parent_cpu, parent_cpu, false, WakeKind::Fork),
        };
        let (cpu, reason) = (placed.cpu, placed.reason);
        self.tasks[id].cpu = cpu;
        self.tasks[id].sched.recent_used_cpu = cpu;
        self.counters.count(Counter::Forks);
        self.count_placement(&placed, parent_cpu);
        if cpu != parent_cpu {
            self.trace_event(TraceEvent::Migrate {
                t: self.now,
                task: id,
                from: parent_cpu,
                to: cpu,
                reason,
            });
        }
        // wake_up_new_task: initial load, fork placement, enqueue, preemption check.
        self.touch_rq(cpu);
        let pelt = crate::sched::load::Pelt::new_task(self.now, weight, &self.cpus[cpu].rq.pelt);
        self.ents[id].pelt = pelt;
        self.cpus[cpu].rq.pelt.attach(&pelt, weight);
        self.cpus[cpu]
            .rq
            .place(id, &mut self.ents, true, &self.policy);
        self.cpus[cpu].rq.enqueue(id, &mut self.ents);
        self.note_idle(cpu);
        note_nr_running(&mut self.sched, self.cpus[cpu].rq.nr_running);
        self.tasks[id].state = TaskState::Queued(cpu);
        let remote = parent.is_some() && parent_cpu != cpu;
        self.notify_enqueued(cpu, id, remote.then_some(parent_cpu), false);
        Ok(id)
    }

    pub(super) fn sample(&mut self, task: usize, t: Time) -> u64 {
        if t.jitter_pct == 0 {
            return t.ns;
        }
        let span = t.ns * t.jitter_pct as u64 / 100;
        let lo = t.ns - span;
        lo + self.tasks[task].rng.next_u64() % (2 * span + 1)
    }

    /// The current task of `cpu` carries on: a preempted compute first, then its program.
    pub(crate) fn resume(&mut self, cpu: usize) {
        let task = self.cpus[cpu].rq.curr.expect("resume needs a running task");
        let left = std::mem::take(&mut self.tasks[task].compute_left);
        if let Some(until) = self.tasks[task].runtime_until {
            // `runtime` ends at a wall time: time away from the CPU counted.
            if until > self.now {
                self.start_segment(cpu, SegKind::User, until - self.now, Pending::RuntimeDone);
                return;
            }
            self.tasks[task].runtime_until = None;
        } else if left > 0 {
            let (share, pending) = match self.tasks[task].mem_share {
                Some(share) => (share, Pending::MemDone),
                None => (0, Pending::None),
            };
            self.start_work(cpu, SegKind::User, left, share, pending);
            return;
        }
        self.advance(cpu, task);
    }

    /// Channel `chan`'s buffered bytes or its reader's or writer's LLC
    /// changed: what it adds to each LLC's buffered bytes follows.
    fn recharge_llcs(&mut self, chan: usize) {
        let ch = &mut self.chans[chan];
        let (old, old_llcs) = ch.charged;
        let llcs = [
            ch.writer_llc,
            ch.reader_llc.filter(|&r| Some(r) != ch.writer_llc),
        ];
        if llcs == old_llcs {
            // The usual case: only the bytes changed.
            for l in llcs.into_iter().flatten() {
                self.llc_buf_bytes[l] = self.llc_buf_bytes[l] - old + ch.used;
            }
            ch.charged.0 = ch.used;
            return;
        }
        for l in old_llcs.into_iter().flatten() {
            self.llc_buf_bytes[l] -= old;
        }
        for l in llcs.into_iter().flatten() {
            self.llc_buf_bytes[l] += ch.used;
        }
        ch.charged = (ch.used, llcs);
    }

    /// Interprets the program until an instruction takes time or blocks.
    fn advance(&mut self, cpu: usize, task: usize) {
        loop {
            let tpl = self.tasks[task].template;
            let pc = self.tasks[task].pc;
            let Some(&insn) = self.workload.templates[tpl].code.get(pc) else {
                self.exit_task(cpu, task);
                return;
            };
            match insn {
                Insn::Compute(t) => {
                    self.tasks[task].pc += 1;
                    let ns = self.sample(task, t);
                    self.start_segment(cpu, SegKind::User, ns, Pending::None);
                    return;
                }
                Insn::Write { chan, bytes, echo } => {
                    // In the system call already: it found no room before.
                    let waited = self.tasks[task].in_syscall;
                    let last = self.tasks[task].last_read;
                    let bytes = if echo && last > 0 {
                        last.min(bytes)
                    } else {
                        bytes
                    };
                    let measuring = self.now >= self.measure_from_ns;
                    let ch = &mut self.chans[chan];
                    let fits = ch.fits(bytes);
                    if fits || ch.kind == ChannelKind::Udp {
                        // A datagram that does not fit is dropped, the sender unaware.
                        ch.writer_llc = Some(self.topo.cpus[cpu].llc);
                        if fits {
                            ch.used += bytes;
                            if let Some(p) = &mut ch.pipe {
                                p.write(bytes);
                            }
                        } else if measuring {
                            ch.stats.bytes_dropped += bytes;
                        }
                        let copy = if ch.sendfile {
                            0
                        } else {
                            self.cost.copy(bytes)
                        };
                        let msg = self.cost.msg(ch.kind);
                        let kept = if fits { bytes } else { 0 };
                        let pending = if ch.kind.is_network() {
                            Pending::NetRx { chan, bytes: kept }
                        } else if fits {
                            let rule = self.policy.era.rules().pipe_writer_wake;
                            Pending::Deposit {
                                chan,
                                bytes,
                                next_writer: waited
                                    && ch.pipe.is_some()
                                    && rule == PipeWriterWake::ReadOfFullPipe,
                            }
                        } else {
                            Pending::None
                        };
                        let state_from = ch.last_reader_cpu.unwrap_or(cpu);
                        let kind = ch.kind;
                        self.recharge_llcs(chan);
                        let cost = self.syscall_entry(task)
                            + copy
                            + msg
                            + self.cost.write_transfer(&self.topo, kind, state_from, cpu);
                        self.tasks[task].pc += 1;
                        self.start_copying(cpu, cost, copy, pending);
                        return;
                    } else if ch.kind == ChannelKind::Tcp && ch.readable == 0 && ch.unacked > 0 {
                        // The reader has read everything and holds an ACK
                        // that would make room: its delayed-ACK timer
                        // sends it (taken at once, its cost left out).
                        let acked = std::mem::take(&mut ch.unacked);
                        ch.used -= acked;
                        self.recharge_llcs(chan);
                        self.counters.count(Counter::TcpDelayedAck);
                    } else {
                        self.wait_or_enter(cpu, task, Wait::Write(chan));
                        return;
                    }
                }
                Insn::Read { chan, bytes } => {
                    let ch = &mut self.chans[chan];
                    if ch.readable > 0 {
                        let take = ch.readable.min(bytes);
                        ch.readable -= take;
                        let mut woken = WakeWriters::None;
                        let ack = if ch.kind == ChannelKind::Tcp {
                            ch.unacked += take;
                            ch.time_to_ack().then(|| std::mem::take(&mut ch.unacked))
                        } else {
                            woken = ch.drain(take, self.policy.era.rules().pipe_writer_wake);
                            None
                        };
                        ch.reader_llc = Some(self.topo.cpus[cpu].llc);
                        ch.last_reader_task = Some(task);
                        ch.last_reader_cpu = Some(cpu);
                        if self.now >= self.measure_from_ns {
                            ch.stats.bytes_read += take;
                        }
                        let from = ch.last_writer_cpu.unwrap_or(cpu);
                        self.recharge_llcs(chan);
                        let copy = self.cost.copy(take);
                        let kind = self.chans[chan].kind;
                        let mut cost = self.syscall_entry(task)
                            + copy
                            + self.cost.msg_rx(kind)
                            + self.cost.read_transfer(&self.topo, kind, take, from, cpu);
                        let t = &mut self.tasks[task];
                        t.last_read = take;
                        if !std::mem::take(&mut t.read_blocked) {
                            t.lap_from_ns = self.now;
                        }
                        t.pc += 1;
                        let pending = match ack {
                            // tcp_cleanup_rbuf's tcp_send_ack: the ACK's
                            // transmit path ends the read.
                            Some(acked) => {
                                self.tasks[task].acks_owed.retain(|&c| c != chan);
                                cost += self.cost.net_tx();
                                Pending::AckRx { chan, bytes: acked }
                            }
                            // TCP frees window space only by ACK.
                            None if self.chans[chan].kind == ChannelKind::Tcp => {
                                if !self.tasks[task].acks_owed.contains(&chan) {
                                    self.tasks[task].acks_owed.push(chan);
                                }
                                Pending::None
                            }
                            None if woken == WakeWriters::None => Pending::None,
                            None => Pending::Drained {
                                chan,
                                all: woken == WakeWriters::All,
                            },
                        };
                        self.start_copying(cpu, cost, copy, pending);
                    } else {
                        self.wait_or_enter(cpu, task, Wait::Read(chan));
                    }
                    return;
                }
                Insn::Sleep(t) => {
                    self.tasks[task].pc += 1;
                    let ns = self.sample(task, t);
                    let cost = self.cost.syscall();
                    self.start_segment(cpu, SegKind::Kernel, cost, Pending::Sleep(ns));
                    return;
                }
                Insn::LoopStart { count } => {
                    let t = &mut self.tasks[task];
                    t.loops.push(count);
                    t.pc += 1;
                }
                Insn::LoopEnd { body } => {
                    let t = &mut self.tasks[task];
                    let top = t.loops.last_mut().expect("compiled loops are balanced");
                    *top -= 1;
                    if *top > 0 {
                        t.pc = body;
                    } else {
                        t.loops.pop();
                        t.pc += 1;
                    }
                }
                Insn::Mark(label) => {
                    let now = self.now;
                    let last = std::mem::replace(&mut self.tasks[task].last_marks[label], now);
                    // Marks in the warm-up only set the start of the next interval.
                    if now >= self.measure_from_ns {
                        let interval = (last != u64::MAX).then(|| now - last);
                        self.marks[label].record(now, task, interval);
                    }
                    self.tasks[task].pc += 1;
                }
                Insn::Timer {
                    period_ns,
                    slot,
                    relative,
                    slack,
                    run,
                } => {
                    let now = self.now;
                    let t = &mut self.tasks[task];
                    t.pc += 1;
                    let activation = std::mem::replace(&mut t.activation_ns, now);
                    let end = t.timers[slot].unwrap_or(t.started_ns + period_ns);
                    let left = end.saturating_sub(now);
                    t.timers[slot] = Some(if left == 0 && relative {
                        now + period_ns
                    } else {
                        end + period_ns
                    });
                    if let Some(label) = run {
                        if activation >= self.measure_from_ns {
                            self.marks[label as usize].record(now, task, Some(now - activation));
                        }
                    }
                    if let Some(label) = slack {
                        let label = label as usize;
                        if now >= self.measure_from_ns {
                            self.marks[label].record(now, task, Some(left));
                            // rt-app logs an overrun as negative slack.
                            if now > end {
                                self.marks[label].record_overrun(now - end);
                            }
                        }
                    }
                    if left > 0 {
                        // clock_nanosleep to the period's end: the wakeup
                        // comes at `end` (or after the entry, if that is later).
                        self.tasks[task].in_timer = true;
                        let cost = self.cost.syscall();
                        let ns = left.saturating_sub(cost);
                        self.start_segment(cpu, SegKind::Kernel, cost, Pending::Sleep(ns));
                        return;
                    }
                }
                Insn::Lap(label) => {
                    let now = self.now;
                    let from = self.tasks[task].lap_from_ns;
                    if from >= self.measure_from_ns {
                        self.marks[label].record(now, task, Some(now - from));
                    }
                    self.tasks[task].pc += 1;
                }
                Insn::Fork(child) => {
                    self.tasks[task].pc += 1;
                    let cost = self.cost.fork();
                    self.start_segment(cpu, SegKind::Kernel, cost, Pending::Fork(child));
                    return;
                }
                Insn::Runtime(t) => {
                    self.tasks[task].pc += 1;
                    let ns = self.sample(task, t);
                    self.tasks[task].runtime_until = Some(self.now + ns);
                    self.start_segment(cpu, SegKind::User, ns, Pending::RuntimeDone);
                    return;
                }
                Insn::Mem { bytes, buffer } => {
                    self.tasks[task].pc += 1;
                    self.start_mem(cpu, task, bytes, buffer);
                    return;
                }
                Insn::Lock(m) => {
                    self.lock(cpu, task, m);
                    return;
                }
                Insn::SpinLock {
                    mutex,
                    rounds,
                    max_delay,
                    pauses_per_delay,
                    wake_all,
                } => {
                    let spin = super::sync::Spin {
                        rounds: rounds as u32,
                        max_delay: max_delay as u64,
                        pauses_per_delay: pauses_per_delay as u64,
                        wake_all,
                    };
                    self.spin_lock(cpu, task, mutex as usize, spin);
                    return;
                }
                Insn::Unlock(m) => {
                    self.tasks[task].pc += 1;
                    self.unlock(cpu, m);
                    return;
                }
                Insn::CondWait { cond, mutex } => {
                    self.tasks[task].pc += 1;
                    self.cond_wait(cpu, task, cond, mutex);
                    return;
                }
                Insn::Signal { cond, all } => {
                    self.tasks[task].pc += 1;
                    self.signal(cpu, cond, all);
                    return;
                }
                Insn::Barrier(b) => {
                    self.tasks[task].pc += 1;
                    self.barrier(cpu, task, b);
                    return;
                }
            }
        }
    }

    /// The syscall entry cost, unless the task is resuming a blocked call.
    pub(super) fn syscall_entry(&mut self, task: usize) -> u64 {
        if std::mem::take(&mut self.tasks[task].in_syscall) {
            0
        } else {
            self.cost.syscall()
        }
    }

    /// A read or write that cannot proceed: enter the syscall (paying its
    /// entry), then sleep if it still cannot.
    pub(super) fn wait_or_enter(&mut self, cpu: usize, task: usize, wait: Wait) {
        if self.tasks[task].in_syscall {
            self.block(cpu, task, wait);
        } else {
            self.tasks[task].in_syscall = true;
            let cost = self.cost.syscall();
            self.start_segment(cpu, SegKind::Kernel, cost, Pending::Recheck);
        }
    }

    pub(crate) fn apply_pending(&mut self, cpu: usize, task: usize, pending: Pending) {
        match pending {
            Pending::None | Pending::Recheck => self.continue_or_preempt(cpu),
            Pending::IrqReturn => self.irq_return(cpu, task),
            Pending::SwitchIn => {
                if let Some((at, timer)) = self.tasks[task].woken_ns.take() {
                    if at >= self.measure_from_ns {
                        let t = &mut self.tasks[task];
                        let hist = if timer {
                            &mut t.timer_latency
                        } else {
                            &mut t.wakeup_latency
                        };
                        hist.record(self.now - at);
                    }
                    let t = &mut self.tasks[task];
                    if std::mem::take(&mut t.in_timer) {
                        // A timer instruction's wakeup begins an activation.
                        t.activation_ns = self.now;
                    }
                }
                let ws = self.tasks[task].working_set_kib;
                let warm = self.tasks[task].warm_cpu.replace(cpu);
                let refill = match warm {
                    Some(from) if ws > 0 => {
                        // Part of it may have been evicted from the LLC
                        // it was in by the other tasks' working sets there.
                        let llc = self.topo.cpus[from].llc;
                        let evicted = self.cost.evicted(self.llc_ws_kib[llc]);
                        self.llc_ws_kib[llc] -= ws;
                        self.cost
                            .refill_with_eviction(&self.topo, ws, from, cpu, evicted)
                    }
                    _ => 0,
                };
                self.llc_ws_kib[self.topo.cpus[cpu].llc] += ws;
                if refill > 0 {
                    self.start_segment(cpu, SegKind::User, refill, Pending::None);
                } else {
                    self.continue_or_preempt(cpu);
                }
            }
            Pending::Deposit {
                chan,
                bytes,
                next_writer,
            } => {
                let measuring = self.now >= self.measure_from_ns;
                let ch = &mut self.chans[chan];
                ch.readable += bytes;
                if measuring {
                    ch.stats.bytes_written += bytes;
                }
                ch.last_writer_cpu = Some(cpu);
                ch.last_writer_task = Some(task);
                let sync = ch
                    .kind
                    .sync_reader_wakeup(self.policy.era.rules().tcp_prequeue);
                let readers = std::mem::take(&mut ch.readers);
                if ch.kind == ChannelKind::Tcp {
                    let mut waiters: Vec<(usize, bool)> =
                        readers.iter().map(|&w| (w, sync)).collect();
                    self.piggyback_acks(task, chan, &mut waiters);
                    self.wake_each(cpu, waiters);
                } else {
                    let ch = &mut self.chans[chan];
                    let pipe_full = ch.pipe.as_ref().is_some_and(|p| p.full());
                    let next = if next_writer && !pipe_full {
                        ch.take_first_writer()
                    } else {
                        None
                    };
                    let writer_sync = ch.kind.sync_writer_wakeup();
                    let woken = readers.iter().map(|&w| (w, sync));
                    self.wake_each(cpu, woken.chain(next.map(|w| (w, writer_sync))));
                }
                reuse_list(&mut self.chans[chan].readers, readers);
            }
            Pending::NetRx { chan, bytes } => {
                self.counters.count(Counter::NetRxSoftirq);
                let ns = self.cost.net_rx();
                let then = if bytes > 0 {
                    let ch = &mut self.chans[chan];
                    if ch.kind == ChannelKind::Tcp && bytes >= ch.rcv_mss {
                        ch.rcv_mss = bytes.min(LOOPBACK_MSS);
                    }
                    Pending::Deposit {
                        chan,
                        bytes,
                        next_writer: false,
                    }
                } else {
                    // udp_queue_rcv_skb found the receive buffer full.
                    Pending::None
                };
                self.start_segment(cpu, SegKind::NetRx, ns, then);
            }
            Pending::AckRx { chan, bytes } => {
                self.counters.count(Counter::NetRxSoftirq);
                self.counters.count(Counter::TcpAck);
                let ns = self.cost.net_rx();
                self.start_segment(cpu, SegKind::NetRx, ns, Pending::Acked { chan, bytes });
            }
            Pending::Acked { chan, bytes } => {
                self.chans[chan].used -= bytes;
                self.recharge_llcs(chan);
                let waiters = std::mem::take(&mut self.chans[chan].writers);
                let blocked = waiters.len() as u64;
                for _ in 0..blocked {
                    self.counters.count(Counter::TcpAckWakeup);
                }
                // sk_stream_write_space: a plain (not sync) wakeup.
                self.wake_all(cpu, &waiters, false);
                reuse_list(&mut self.chans[chan].writers, waiters);
            }
            Pending::Drained { chan, all } => {
                let ch = &mut self.chans[chan];
                let sync = ch.kind.sync_writer_wakeup();
                if all {
                    let waiters = std::mem::take(&mut ch.writers);
                    self.wake_all(cpu, &waiters, sync);
                    reuse_list(&mut self.chans[chan].writers, waiters);
                } else {
                    let first = ch.take_first_writer();
                    self.wake_each(cpu, first.map(|w| (w, sync)));
                }
            }
            Pending::Sleep(ns) => {
                self.block(cpu, task, Wait::Timer);
                let gen = self.tasks[task].timer_gen;
                self.queue.push(self.now + ns, Event::Timer { task, gen });
            }
            Pending::Fork(child) => {
                // A run that would exceed the task limit stops forking.
                let _ = self.start_task(child, Some(task));
                self.continue_or_preempt(cpu);
            }
            Pending::RuntimeDone => {
                self.tasks[task].runtime_until = None;
                self.continue_or_preempt(cpu);
            }
            Pending::MemDone => {
                self.tasks[task].mem_share = None;
                self.continue_or_preempt(cpu);
            }
            Pending::WakeMutex(m) => {
                let w = self.pop_mutex_waiters(m);
                self.wake_then(cpu, task, w, Pending::None);
            }
            Pending::WakeMutexThenPark { mutex, wait } => {
                let w = self.pop_mutex_waiters(mutex);
                self.wake_then(cpu, task, w, Pending::Park(wait));
            }
            Pending::Park(wait) => {
                if std::mem::take(&mut self.tasks[task].released) {
                    self.continue_or_preempt(cpu);
                } else {
                    self.block(cpu, task, wait);
                }
            }
            Pending::Signal { cond, all } => {
                let woken = self.take_cond_waiters(cond, all);
                self.wake_then(cpu, task, woken, Pending::None);
            }
            Pending::ReleaseBarrier(b) => {
                let woken = self.take_barrier_waiters(b);
                self.wake_then(cpu, task, woken, Pending::None);
            }
        }
    }

    /// Wakes `waiters` (each a futex wake: the waker pays for each wakeup
    /// and its placement's scan), then goes on with `then`.
    pub(super) fn wake_then(
        &mut self,
        cpu: usize,
        task: usize,
        waiters: Vec<usize>,
        then: Pending,
    ) {
        let mut woken = 0;
        self.wakeup_scan_ns = 0;
        for w in waiters {
            if self.try_to_wake_up(w, Some(cpu), false) {
                woken += 1;
            }
        }
        if woken > 1 {
            self.counters.count(Counter::WakeupOneToMany);
        }
        if woken > 0 {
            self.counters.add(Counter::FutexWoken, woken);
            let cost = woken * self.cost.wakeup() + std::mem::take(&mut self.wakeup_scan_ns);
            self.start_segment(cpu, SegKind::Kernel, cost, then);
        } else {
            self.apply_pending(cpu, task, then);
        }
    }

    /// `task` sent data on TCP channel `chan`: the segment carries the ACK
    /// of what the task read and has not acknowledged on the connection's
    /// other direction (a channel `chan`'s reader writes and `task` reads),
    /// so tcp_ack in this softirq frees that window and wakes its writers
    /// (not sync), added to `waiters`.
    fn piggyback_acks(&mut self, task: usize, chan: usize, waiters: &mut Vec<(usize, bool)>) {
        let peer = self.chans[chan].last_reader_task;
        if peer.is_none() || self.tasks[task].acks_owed.is_empty() {
            return;
        }
        let owed = std::mem::take(&mut self.tasks[task].acks_owed);
        let mut kept = Vec::with_capacity(owed.len());
        for r in owed {
            let back = &mut self.chans[r];
            if back.last_writer_task != peer || back.last_reader_task != Some(task) {
                kept.push(r);
                continue;
            }
            back.used -= std::mem::take(&mut back.unacked);
            let writers = std::mem::take(&mut back.writers);
            for _ in 0..writers.len() {
                self.counters.count(Counter::TcpAckWakeup);
            }
            waiters.extend(writers.into_iter().map(|w| (w, false)));
            self.recharge_llcs(r);
        }
        self.tasks[task].acks_owed = kept;
    }

    /// Wakes every waiter of a channel; the waker pays for each wakeup
    /// (and its placement's idle-CPU scan) before continuing.
    fn wake_all(&mut self, cpu: usize, waiters: &[usize], sync: bool) {
        self.wake_each(cpu, waiters.iter().map(|&w| (w, sync)));
    }

    /// [`Self::wake_all`] with each waiter's own sync hint.
    fn wake_each(&mut self, cpu: usize, waiters: impl IntoIterator<Item = (usize, bool)>) {
        let mut woken = 0;
        self.wakeup_scan_ns = 0;
        for (w, sync) in waiters {
            if self.try_to_wake_up(w, Some(cpu), sync) {
                woken += 1;
            }
        }
        if woken > 1 {
            self.counters.count(Counter::WakeupOneToMany);
        }
        if woken > 0 {
            // Each wakeup's work, plus the CPUs its placement scanned.
            let cost = woken * self.cost.wakeup() + std::mem::take(&mut self.wakeup_scan_ns);
            self.start_segment(cpu, SegKind::Kernel, cost, Pending::None);
        } else {
            self.continue_or_preempt(cpu);
        }
    }

    pub(super) fn block(&mut self, cpu: usize, task: usize, wait: Wait) {
        self.touch_rq(cpu);
        // v6.12's dequeue_task_fair takes the UTIL_EST sample before the
        // dequeue brings the task's PELT up to now; v6.5's after.
        let early = (self.ents[task].util_est, self.ents[task].pelt);
        let moved = self.touch_task(task);
        // avg_overlap: how long the task ran on after it last woke another.
        if let Some(at) = self.tasks[task].sched.last_wakeup_exec.take() {
            let sample = self.ents[task].sum_exec_ns - at;
            let t = &mut self.tasks[task];
            update_avg(&mut t.sched.avg_overlap_ns, sample);
        }
        // Under EEVDF's DELAY_DEQUEUE the task may stay queued, delayed.
        self.cpus[cpu]
            .rq
            .block_curr(task, &mut self.ents, &self.policy);
        self.sample_util_est(task, early, moved);
        self.note_idle(cpu);
        self.tasks[task].state = TaskState::Blocked(wait);
        match wait {
            Wait::Read(c) => {
                if self.now >= self.measure_from_ns {
                    self.chans[c].stats.reader_blocks += 1;
                }
                self.chans[c].readers.push(task)
            }
            Wait::Write(c) => {
                if self.now >= self.measure_from_ns {
                    self.chans[c].stats.writer_blocks += 1;
                }
                self.chans[c].writers.push(task)
            }
            Wait::Timer => self.tasks[task].timer_gen += 1,
            Wait::Lock(m) => {
                self.note_futex_wait();
                self.mutexes[m].waiters.push_back(task);
                // Woken, a spinning lock spins again before sleeping again.
                self.tasks[task].spins = 0;
                // Woken, it retries the atomic in user space first.
                self.tasks[task].in_syscall = false;
            }
            // Already on the wait list since they arrived.
            Wait::Cond(_) | Wait::Barrier(_) => self.note_futex_wait(),
        }
        self.schedule(cpu);
    }

    /// util_est_update for a task that went to sleep: its utilisation is a
    /// sample of its size, once its estimate has left the queue's sum.
    /// `early` is the estimate and PELT before the dequeue's update, which
    /// moved the averages or not.
    fn sample_util_est(&mut self, task: usize, early: (UtilEst, Pelt), moved: bool) {
        let rule = self.policy.era.rules().util_est;
        if rule == UtilEstRule::Absent || !self.policy.features.has(Feature::UtilEst) {
            return;
        }
        let fastup = self.policy.features.has(Feature::UtilEstFastup);
        let e = &mut self.ents[task];
        if rule == UtilEstRule::Ewma {
            let (mut ue, pelt) = early;
            ue.sample(
                rule,
                fastup,
                pelt.util_avg,
                pelt.runnable_avg,
                SCHED_CAPACITY_SCALE,
            );
            // The dequeue's update came after the sample.
            ue.unchanged &= !moved;
            e.util_est = ue;
        } else {
            let (util, runnable) = (e.pelt.util_avg, e.pelt.runnable_avg);
            e.util_est
                .sample(rule, fastup, util, runnable, SCHED_CAPACITY_SCALE);
        }
    }

    fn exit_task(&mut self, cpu: usize, task: usize) {
        self.touch_rq(cpu);
        self.touch_task(task);
        self.cpus[cpu].rq.dequeue_curr(task, &self.ents);
        self.note_idle(cpu);
        let rq = &mut self.cpus[cpu].rq;
        rq.pelt
            .detach(&self.ents[task].pelt, self.ents[task].weight);
        self.tasks[task].state = TaskState::Exited;
        self.tasks_alive -= 1;
        self.tasks[task].exited_ns = Some(self.now);
        if let Some(warm) = self.tasks[task].warm_cpu {
            self.llc_ws_kib[self.topo.cpus[warm].llc] -= self.tasks[task].working_set_kib;
        }
        self.schedule(cpu);
    }

    pub(crate) fn timer_fired(&mut self, task: usize, gen: u64) {
        let t = &self.tasks[task];
        if t.state == TaskState::Blocked(Wait::Timer) && t.timer_gen == gen {
            // The timer interrupt runs on the CPU the task slept on.
            self.try_to_wake_up(task, None, false);
        }
    }

    /// try_to_wake_up: picks a CPU for a blocked task and makes it runnable
    /// there. `waker_cpu` None means an interrupt on the task's own CPU.
    /// Returns false if the task was not blocked.
    pub(crate) fn try_to_wake_up(
        &mut self,
        task: usize,
        waker_cpu: Option<usize>,
        sync: bool,
    ) -> bool {
        if !matches!(self.tasks[task].state, TaskState::Blocked(_)) {
            return false;
        }
        let prev = self.tasks[task].cpu;
        let this = waker_cpu.unwrap_or(prev);
        // The kernel syncs the wakee's load and accounts the waker before deciding.
        self.touch_task(task);
        self.touch_rq(this);
        self.touch_rq(prev);
        let waker = waker_cpu.and_then(|c| self.cpus[c].rq.curr);
        if let Some(w) = waker {
            self.tasks[w].sched.last_wakeup_exec = Some(self.ents[w].sum_exec_ns);
        }
        if sync {
            self.counters.count(Counter::TtwuSync);
        }
        let timer = waker_cpu.is_none();
        self.tasks[task].woken_ns = Some((self.now, timer));
        if let TaskState::Blocked(Wait::Read(_)) = self.tasks[task].state {
            self.tasks[task].lap_from_ns = self.now;
            self.tasks[task].read_blocked = true;
        }
        if self.ents[task].delayed {
            self.wake_delayed(task, this);
            return true;
        }
        let placed = wakeup::select_task_rq(self, task, prev, this, sync, WakeKind::Wakeup);
        let (target, reason) = (placed.cpu, placed.reason);
        self.wakeup_scan_ns += placed.scanned as u64 * self.cost.costs().scan_ns_per_cpu;
        self.count_placement(&placed, prev);
        self.trace_event(TraceEvent::Wakeup {
            t: self.now,
            task,
            waker_cpu: this,
            target,
            reason,
        });
        if target != prev {
            self.trace_event(TraceEvent::Migrate {
                t: self.now,
                task,
                from: prev,
                to: target,
                reason,
            });
        }
        if target == this {
            self.counters.count(Counter::TtwuLocal);
            self.activate(task, target);
            let preempted = self.notify_enqueued(target, task, None, sync);
            self.count_wakeup_preempt(preempted, true);
            return true;
        }
        self.counters.count(Counter::TtwuRemote);
        if let Some(d) = self.topo.distance(this, target).cost_index() {
            self.counters.count(Counter::TtwuRemoteAt(Distance::ALL[d]));
        }
        if self.wakeup_is_queued(this, target) {
            // TTWU_QUEUE: the target enqueues it when the IPI arrives, or,
            // idle in MWAIT, when it sees need_resched (set_nr_if_polling).
            let delay = if self.idle_polling(target) {
                self.counters.count(Counter::WakeIdleWithoutIpi);
                self.cost.polling_wake(&self.topo, this, target)
            } else {
                self.counters.count(Counter::IpiSent);
                self.cost.ipi_latency()
            };
            self.tasks[task].state = TaskState::Waking(target);
            self.cpus[target].wake_pending += 1;
            self.note_idle(target);
            self.queue
                .push(self.now + delay, Event::WakeArrive { cpu: target, task });
        } else {
            self.activate(task, target);
            let preempted = self.notify_enqueued(target, task, Some(this), sync);
            self.count_wakeup_preempt(preempted, false);
        }
        true
    }

    /// ttwu_runnable: a delayed task (EEVDF) is still on its queue, so it
    /// is woken there, with no CPU selection, and may preempt.
    fn wake_delayed(&mut self, task: usize, this: usize) {
        let cpu = self.tasks[task].cpu;
        self.touch_rq(cpu);
        self.cpus[cpu]
            .rq
            .requeue_delayed(task, &mut self.ents, &self.policy);
        self.note_idle(cpu);
        self.tasks[task].state = TaskState::Queued(cpu);
        self.counters.count(Counter::TtwuDelayed);
        if cpu == this {
            self.counters.count(Counter::TtwuLocal);
        } else {
            self.counters.count(Counter::TtwuRemote);
        }
        self.trace_event(TraceEvent::Wakeup {
            t: self.now,
            task,
            waker_cpu: this,
            target: cpu,
            reason: Reason::Delayed,
        });
        let preempted = self.notify_enqueued(cpu, task, (cpu != this).then_some(this), false);
        self.count_wakeup_preempt(preempted, cpu == this);
    }

    /// Counts a wakeup that preempted the running task, by whether that was
    /// the waker on its own CPU.
    fn count_wakeup_preempt(&mut self, preempted: bool, on_waker_cpu: bool) {
        if preempted {
            self.counters.count(if on_waker_cpu {
                Counter::WakeupPreemptWakerCpu
            } else {
                Counter::WakeupPreemptOtherCpu
            });
        }
    }

    /// Whether a remote wakeup goes through the target's wake list and an
    /// IPI rather than a direct enqueue (TTWU_QUEUE; not in 2.6.2x).
    /// Whether `cpu` is idle in a state it leaves when a waker writes its
    /// flags word (MWAIT), so that waking it takes no IPI.
    fn idle_polling(&self, cpu: usize) -> bool {
        self.cpus[cpu].state == CpuState::Idle && self.cost.idle_polls(self.cpus[cpu].cstate)
    }

    fn wakeup_is_queued(&self, this: usize, target: usize) -> bool {
        if !self.policy.features.has(Feature::TtwuQueue) {
            return false;
        }
        let shares_llc = self.topo.cpus[this].llc == self.topo.cpus[target].llc;
        !shares_llc || (self.policy.era.rules().ttwu_queue_to_idle && self.cpu_idle(target))
    }

    pub(crate) fn wake_arrive(&mut self, cpu: usize, task: usize) {
        self.cpus[cpu].wake_pending -= 1;
        self.note_idle(cpu);
        self.activate(task, cpu);
        let preempted = self.notify_enqueued(cpu, task, None, false);
        self.count_wakeup_preempt(preempted, false);
    }

    /// Makes a woken task runnable on `cpu`: moves its vruntime and load
    /// between queues if it changed CPU, places it, enqueues it.
    fn activate(&mut self, task: usize, cpu: usize) {
        let from = self.tasks[task].cpu;
        self.touch_task(task);
        if from != cpu {
            self.move_accounting(task, from, cpu);
        } else {
            self.touch_rq(cpu);
        }
        self.cpus[cpu]
            .rq
            .place(task, &mut self.ents, false, &self.policy);
        self.cpus[cpu].rq.enqueue(task, &mut self.ents);
        self.note_idle(cpu);
        note_nr_running(&mut self.sched, self.cpus[cpu].rq.nr_running);
        self.tasks[task].state = TaskState::Queued(cpu);
    }

    /// Moves a task's load and vruntime from `from`'s queue to `to`'s (it is
    /// on neither tree at this point).
    fn move_accounting(&mut self, task: usize, from: usize, to: usize) {
        self.touch_rq(from);
        let e = &self.ents[task];
        self.cpus[from].rq.pelt.detach(&e.pelt, e.weight);
        let old_min = self.cpus[from].rq.min_vruntime;
        self.touch_rq(to);
        let e = &mut self.ents[task];
        // Keep the task's lag relative to its queue (modular, like the kernel's u64).
        e.vruntime = e
            .vruntime
            .wrapping_sub(old_min)
            .wrapping_add(self.cpus[to].rq.min_vruntime);
        self.cpus[to]
            .rq
            .pelt
            .attach(&self.ents[task].pelt, self.ents[task].weight);
        self.tasks[task].cpu = to;
    }

    /// Moves a queued (not running) task to another CPU (load balancing).
    pub(crate) fn migrate_queued(&mut self, task: usize, from: usize, to: usize, reason: Reason) {
        self.touch_task(task);
        self.touch_rq(from);
        self.cpus[from]
            .rq
            .dequeue(task, &mut self.ents, &self.policy);
        self.note_idle(from);
        self.move_accounting(task, from, to);
        if self.policy.era.rules().picker == Picker::Eevdf {
            // EEVDF places a moved task by its lag on the new queue.
            self.cpus[to]
                .rq
                .place(task, &mut self.ents, false, &self.policy);
        }
        self.cpus[to].rq.enqueue(task, &mut self.ents);
        self.note_idle(to);
        note_nr_running(&mut self.sched, self.cpus[to].rq.nr_running);
        // A delayed task (EEVDF) moves still asleep, and stays delayed.
        if !self.ents[task].delayed {
            self.tasks[task].state = TaskState::Queued(to);
        }
        self.trace_event(TraceEvent::Migrate {
            t: self.now,
            task,
            from,
            to,
            reason,
        });
        self.notify_enqueued(to, task, None, false);
    }

    /// Active balance: the stopper on `from` pushes its running task to
    /// `to`. Only a task in user space is pushed (a syscall finishes first);
    /// returns whether one moved.
    pub(crate) fn active_balance(&mut self, from: usize, to: usize) -> bool {
        let Some(task) = self.cpus[from].rq.curr else {
            return false;
        };
        let in_user = self.cpus[from].seg.is_some_and(|s| s.kind == SegKind::User);
        if !in_user || !self.allowed(task).contains(to) {
            return false;
        }
        let left = self.stop_segment(from);
        self.tasks[task].compute_left += left;
        self.touch_rq(from);
        self.touch_task(task);
        self.cpus[from].rq.put_prev(task, &self.ents);
        self.tasks[task].state = TaskState::Queued(from);
        self.migrate_queued(task, from, to, Reason::ActiveBalance);
        self.schedule(from);
        true
    }

    /// After `task` was enqueued on `cpu`: wake the CPU if idle, or preempt
    /// its current task if the woken one should run first. `from` is the
    /// enqueuing CPU when it is another, which needs an IPI to do either
    /// (an idle CPU waiting in MWAIT only the write to its flags word).
    /// Returns whether the current task is preempted.
    fn notify_enqueued(
        &mut self,
        cpu: usize,
        task: usize,
        from: Option<usize>,
        sync: bool,
    ) -> bool {
        let remote = from.is_some();
        let ipi = if remote { self.cost.ipi_latency() } else { 0 };
        let mut preempted = false;
        match self.cpus[cpu].state {
            CpuState::Idle if remote && self.idle_polling(cpu) => {
                // resched_curr on a polling idle task: no IPI.
                if !self.cpus[cpu].kick_pending {
                    self.counters.count(Counter::WakeIdleWithoutIpi);
                }
                let from = from.unwrap_or(cpu);
                let at = self.now + self.cost.polling_wake(&self.topo, from, cpu);
                self.kick(cpu, at);
            }
            CpuState::Idle => {
                if remote && !self.cpus[cpu].kick_pending {
                    self.counters.count(Counter::IpiSent);
                }
                self.kick(cpu, self.now + ipi);
            }
            // Both look at the queue when they are done.
            CpuState::ExitingIdle | CpuState::Balancing => {}
            CpuState::Running => {
                if self.check_preempt_wakeup(cpu, task, sync) {
                    preempted = true;
                    if remote {
                        self.counters.count(Counter::IpiSent);
                        self.queue.push(self.now + ipi, Event::Resched { cpu });
                    } else {
                        self.resched_local(cpu);
                    }
                }
            }
        }
        preempted
    }
}

/// Gives a wait list the allocation of the list it was taken from, emptied,
/// unless it gained waiters meanwhile: a wakeup then allocates nothing.
fn reuse_list(list: &mut Vec<usize>, mut spare: Vec<usize>) {
    if list.is_empty() {
        spare.clear();
        *list = spare;
    }
}

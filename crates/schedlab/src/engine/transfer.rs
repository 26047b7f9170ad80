//! Moving data through channels: the `write` and `read` instructions
//! (copies, costs, who blocks) and the steps that end their segments:
//! data deposited for readers, the loopback receive softirq, TCP's ACKs,
//! writers woken as room is made.

use super::channel::{Reader, Room, WakeWriters};
use super::cpu::SegKind;
use super::interp::Flow;
use super::slab::{SkbAllocator, SlabOp};
use super::task::{Pending, Wait};
use super::Sim;
use crate::counters::Counter;
use crate::policy::PipeWriterWake;
use crate::workload::program::{ChannelKind, Insn};

impl Sim {
    /// `write`: the bytes go into the channel if they fit (a datagram that
    /// does not is dropped); else the writer blocks, unless a TCP reader
    /// holds an ACK that makes room (then the write runs again).
    pub(super) fn write_insn(
        &mut self,
        cpu: usize,
        task: usize,
        chan: usize,
        bytes: u64,
        echo: bool,
    ) -> Flow {
        // In the system call already: it found no room before.
        let waited = self.tasks[task].prog.in_syscall;
        let last = self.tasks[task].prog.last_read;
        let bytes = if echo && last > 0 {
            last.min(bytes)
        } else {
            bytes
        };
        let measuring = self.now >= self.measure_from_ns;
        let llc = self.topo.cpus[cpu].llc;
        let ch = &mut self.chans[chan];
        let room = ch.write(bytes, llc, measuring);
        match room {
            Room::Queued | Room::Dropped => {
                let kind = ch.kind();
                let copy = if ch.sendfile() {
                    0
                } else {
                    self.cost.copy(bytes)
                };
                let msg = self.cost.msg(kind);
                let queued = room == Room::Queued;
                let pending = if kind.is_network() {
                    let kept = if queued { bytes } else { 0 };
                    Pending::NetRx { chan, bytes: kept }
                } else if queued {
                    let rule = self.policy.era.rules().pipe_writer_wake;
                    Pending::Deposit {
                        chan,
                        bytes,
                        next_writer: waited
                            && ch.is_pipe()
                            && rule == PipeWriterWake::ReadOfFullPipe,
                    }
                } else {
                    Pending::None
                };
                let state_from = ch.last_reader_cpu().unwrap_or(cpu);
                self.recharge_llcs(chan);
                let skb = if queued && kind == ChannelKind::Unix {
                    self.alloc_skb(cpu, task, bytes)
                } else {
                    0
                };
                let cost = self.syscall_entry(task)
                    + copy
                    + msg
                    + self.cost.write_transfer(&self.topo, kind, state_from, cpu)
                    + skb;
                self.tasks[task].prog.pc += 1;
                self.start_copying(cpu, cost, copy, pending);
                Flow::Yield
            }
            Room::AckedLate => {
                self.recharge_llcs(chan);
                self.counters.count(Counter::TcpDelayedAck);
                Flow::Next
            }
            Room::Full => {
                self.wait_or_enter(cpu, task, Wait::Write(chan));
                Flow::Yield
            }
        }
    }

    /// `read`: takes what is readable (up to `bytes`), or blocks. A
    /// polling read blocks in poll(2) and pays the read's own system call
    /// besides.
    pub(super) fn read_insn(
        &mut self,
        cpu: usize,
        task: usize,
        chan: usize,
        bytes: u64,
        poll: bool,
    ) {
        let measuring = self.now >= self.measure_from_ns;
        let llc = self.topo.cpus[cpu].llc;
        let rule = self.policy.era.rules().pipe_writer_wake;
        // What queued behind the message on this core, itself included.
        let backlog = self.occupancy.core_unix_backlog(cpu);
        let ch = &mut self.chans[chan];
        let Some(taken) = ch.read(
            bytes,
            Reader { task, cpu, llc },
            measuring,
            rule,
            &mut self.occupancy.unix_backlog,
        ) else {
            self.wait_or_enter(cpu, task, Wait::Read(chan));
            return;
        };
        let kind = ch.kind();
        let take = taken.bytes;
        let from = (taken.writer_cpu.unwrap_or(cpu), taken.data_cpu);
        let skbs = if kind == ChannelKind::Unix {
            self.free_skbs(cpu, chan, take)
        } else {
            0
        };
        // Read on the core that wrote it: from its own caches, as far as
        // the backlog left it there (from another core, `read_transfer`).
        let backlog_ns = if backlog > 0
            && kind == ChannelKind::Unix
            && self.occupancy.core_of[taken.data_cpu] == self.occupancy.core_of[cpu]
        {
            self.cost.unix_backlog(backlog)
        } else {
            0
        };
        self.recharge_llcs(chan);
        let copy = self.cost.copy(take);
        let poll_then_read = if poll { self.cost.syscall() } else { 0 };
        let mut cost = self.syscall_entry(task)
            + poll_then_read
            + copy
            + self.cost.msg_rx(kind)
            + self.cost.read_transfer(&self.topo, kind, take, from, cpu)
            + backlog_ns
            + skbs;
        if backlog_ns > 0 {
            self.counters.add(Counter::UnixBacklogNs, backlog_ns);
        }
        let t = &mut self.tasks[task];
        t.prog.last_read = take;
        if !std::mem::take(&mut t.prog.read_blocked) {
            t.prog.lap_from_ns = self.now;
        }
        t.prog.pc += 1;
        let pending = match taken.ack {
            // tcp_cleanup_rbuf's tcp_send_ack: the ACK's
            // transmit path ends the read.
            Some(acked) => {
                self.tasks[task].prog.acks_owed.retain(|&c| c != chan);
                cost += self.cost.net_tx(ChannelKind::Tcp);
                Pending::AckRx { chan, bytes: acked }
            }
            // TCP frees window space only by ACK.
            None if kind == ChannelKind::Tcp => {
                if !self.tasks[task].prog.acks_owed.contains(&chan) {
                    self.tasks[task].prog.acks_owed.push(chan);
                }
                Pending::None
            }
            None if taken.woken == WakeWriters::None => Pending::None,
            None => Pending::Drained {
                chan,
                all: taken.woken == WakeWriters::All,
            },
        };
        self.start_copying(cpu, cost, copy, pending);
    }

    /// A write's data reaches the channel: readers (and, for a pipe, the
    /// next blocked writer) are woken.
    pub(super) fn deposit(
        &mut self,
        cpu: usize,
        task: usize,
        chan: usize,
        bytes: u64,
        next_writer: bool,
    ) {
        let measuring = self.now >= self.measure_from_ns;
        let ch = &mut self.chans[chan];
        ch.deposit(
            bytes,
            task,
            cpu,
            measuring,
            &mut self.occupancy.unix_backlog,
        );
        if let Some(skb) = self.tasks[task].prog.skb.take() {
            ch.queue_skb(bytes, skb);
        }
        let kind = ch.kind();
        let sync = kind.sync_reader_wakeup(self.policy.era.rules().tcp_prequeue);
        let readers = ch.take_readers();
        if kind == ChannelKind::Tcp {
            let mut waiters = std::mem::take(&mut self.tcp_wakees);
            waiters.clear();
            waiters.extend(readers.iter().map(|&w| (w, sync || self.waits_in_poll(w))));
            self.piggyback_acks(task, chan, &mut waiters);
            self.wake_each(cpu, waiters.iter().copied());
            self.tcp_wakees = waiters;
        } else {
            let ch = &mut self.chans[chan];
            let next = if next_writer && !ch.pipe_full() {
                ch.take_first_writer()
            } else {
                None
            };
            let writer_sync = kind.sync_writer_wakeup();
            let woken = readers.iter().map(|&w| (w, sync));
            self.wake_each(cpu, woken.chain(next.map(|w| (w, writer_sync))));
        }
        self.chans[chan].return_readers(readers);
    }

    /// An AF_UNIX write's skb, allocated on `cpu` for `task` (machines with
    /// `skb_slabs`): the time of the lines it takes from other cores and
    /// of its waits for a node list's lock.
    fn alloc_skb(&mut self, cpu: usize, task: usize, bytes: u64) -> u64 {
        let node = self.topo.cpus[cpu].node;
        let Some((skb, ns)) = self.slab_op(cpu, |slabs, op| slabs.alloc(cpu, node, bytes, op))
        else {
            return 0;
        };
        self.tasks[task].prog.skb = Some(skb);
        ns
    }

    /// A read of `take` bytes on `cpu` frees the skbs it consumes whole:
    /// the time that takes, as for [`Self::alloc_skb`].
    fn free_skbs(&mut self, cpu: usize, chan: usize, take: u64) -> u64 {
        if self.skb_slabs.is_none() {
            return 0;
        }
        let mut freed = std::mem::take(&mut self.freed_skbs);
        freed.clear();
        self.chans[chan].consume_skbs(take, &mut freed);
        let done = self.slab_op(cpu, |slabs, op| {
            for &skb in &freed {
                slabs.free(cpu, skb, op);
            }
        });
        self.freed_skbs = freed;
        done.map_or(0, |(_, ns)| ns)
    }

    /// Runs `work` on the skb caches as one operation of `cpu`'s, from
    /// now: what it returns and its time (each line from another core at
    /// `cost::slab_moved`'s price, and the lock waits), counted. None on a
    /// machine without the caches.
    fn slab_op<R>(
        &mut self,
        cpu: usize,
        work: impl FnOnce(&mut SkbAllocator, &mut SlabOp) -> R,
    ) -> Option<(R, u64)> {
        let slabs = self.skb_slabs.as_mut()?;
        let (topo, cost) = (&self.topo, &self.cost);
        let mut lines = 0;
        let (out, ns, wait) = {
            let mut price = |from: u32, what| {
                let (n, ns) = cost.slab_moved(topo, from as usize, cpu, what);
                lines += n;
                ns
            };
            let mut op = SlabOp::new(self.now, &mut price);
            let out = work(slabs, &mut op);
            (out, op.elapsed, op.lock_wait)
        };
        if ns > 0 {
            self.counters.add(Counter::SlabLinesMoved, lines);
            self.counters.add(Counter::SlabNs, ns);
            self.counters.add(Counter::SlabLockWaitNs, wait);
        }
        Some((out, ns))
    }

    /// Whether blocked `task` waits in poll(2): its read is then woken by
    /// sock_def_readable, sync, not by TCP's prequeue.
    fn waits_in_poll(&self, task: usize) -> bool {
        let prog = &self.tasks[task].prog;
        matches!(
            self.workload.templates[prog.template].code.get(prog.pc),
            Some(Insn::Read { poll: true, .. })
        )
    }

    /// The loopback receive path of a send, in the NET_RX softirq.
    pub(super) fn net_rx(&mut self, cpu: usize, chan: usize, bytes: u64) {
        self.counters.count(Counter::NetRxSoftirq);
        let ns = self.cost.net_rx(self.chans[chan].kind());
        let then = if bytes > 0 {
            self.chans[chan].segment_received(bytes);
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

    /// The receive path of a reader's ACK.
    pub(super) fn ack_rx(&mut self, cpu: usize, chan: usize, bytes: u64) {
        self.counters.count(Counter::NetRxSoftirq);
        self.counters.count(Counter::TcpAck);
        let ns = self.cost.net_rx(ChannelKind::Tcp);
        self.start_segment(cpu, SegKind::NetRx, ns, Pending::Acked { chan, bytes });
    }

    /// An ACK frees window space: every blocked writer is woken.
    pub(super) fn acked(&mut self, cpu: usize, chan: usize, bytes: u64) {
        self.chans[chan].acked(bytes);
        self.recharge_llcs(chan);
        let waiters = self.chans[chan].take_writers();
        let blocked = waiters.len() as u64;
        for _ in 0..blocked {
            self.counters.count(Counter::TcpAckWakeup);
        }
        // sk_stream_write_space: a plain (not sync) wakeup.
        self.wake_all(cpu, &waiters, false);
        self.chans[chan].return_writers(waiters);
    }

    /// A read made room: the writers its rule wakes.
    pub(super) fn drained(&mut self, cpu: usize, chan: usize, all: bool) {
        let ch = &mut self.chans[chan];
        let sync = ch.kind().sync_writer_wakeup();
        if all {
            let waiters = ch.take_writers();
            self.wake_all(cpu, &waiters, sync);
            self.chans[chan].return_writers(waiters);
        } else {
            let first = ch.take_first_writer();
            self.wake_each(cpu, first.map(|w| (w, sync)));
        }
    }
}

//! Moving data through channels: the `write` and `read` instructions
//! (copies, costs, who blocks) and the steps that end their segments:
//! data deposited for readers, the loopback receive softirq, TCP's ACKs,
//! writers woken as room is made.

use super::channel::{reuse_list, WakeWriters, LOOPBACK_MSS};
use super::cpu::SegKind;
use super::interp::Flow;
use super::task::{Pending, Wait};
use super::Sim;
use crate::counters::Counter;
use crate::policy::PipeWriterWake;
use crate::workload::program::ChannelKind;

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
            return Flow::Yield;
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
            return Flow::Yield;
        }
        Flow::Next
    }

    /// `read`: takes what is readable (up to `bytes`), or blocks.
    pub(super) fn read_insn(&mut self, cpu: usize, task: usize, chan: usize, bytes: u64) {
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
                    cost += self.cost.net_tx(ChannelKind::Tcp);
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
            let mut waiters: Vec<(usize, bool)> = readers.iter().map(|&w| (w, sync)).collect();
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

    /// The loopback receive path of a send, in the NET_RX softirq.
    pub(super) fn net_rx(&mut self, cpu: usize, chan: usize, bytes: u64) {
        self.counters.count(Counter::NetRxSoftirq);
        let ns = self.cost.net_rx(self.chans[chan].kind);
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

    /// The receive path of a reader's ACK.
    pub(super) fn ack_rx(&mut self, cpu: usize, chan: usize, bytes: u64) {
        self.counters.count(Counter::NetRxSoftirq);
        self.counters.count(Counter::TcpAck);
        let ns = self.cost.net_rx(ChannelKind::Tcp);
        self.start_segment(cpu, SegKind::NetRx, ns, Pending::Acked { chan, bytes });
    }

    /// An ACK frees window space: every blocked writer is woken.
    pub(super) fn acked(&mut self, cpu: usize, chan: usize, bytes: u64) {
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

    /// A read made room: the writers its rule wakes.
    pub(super) fn drained(&mut self, cpu: usize, chan: usize, all: bool) {
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
}

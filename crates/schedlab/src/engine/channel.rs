//! Channels: pipes, AF_UNIX and loopback TCP/UDP sockets as buffers that
//! block readers when empty and writers when full, with each kind's
//! capacity, which writers a read wakes, and TCP's acknowledgements.
//!
//! A channel's fields are private to this file: `transfer.rs` (the read
//! and write instructions, their costs and wakeups) and `wake.rs` (wait
//! lists, piggybacked ACKs) change it only through the transitions below.

use std::collections::VecDeque;

use super::pipe::{round_pipe_size, PipePages};
use super::slab::SkbObjects;
use crate::policy::PipeWriterWake;
use crate::workload::program::{ChannelKind, ChannelSpec};

/// include/net/tcp.h: the receive MSS assumed before any segment.
pub(super) const TCP_MSS_DEFAULT: u64 = 536;
/// The loopback device's MSS: its 65,536-byte MTU less the IPv4 and TCP
/// headers and the timestamp option (40 + 12 bytes).
pub(super) const LOOPBACK_MSS: u64 = 65_484;

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
    /// The CPUs that last wrote and last read it: where a read's and a
    /// write's shared state come from (`cost::read_transfer`,
    /// `write_transfer`).
    last_writer_cpu: Option<usize>,
    last_reader_cpu: Option<usize>,
    /// The readable bytes in order, as runs by the CPU that wrote them: a
    /// read's data and skbs come from the CPUs that wrote them, which with
    /// several writers is not always the last one.
    written_on: VecDeque<Run>,
    /// The LLCs of its last writer and last reader: its buffered bytes
    /// (`used`) occupy both (the writer's copy puts them in the one, the
    /// reader's copy pulls them into the other).
    writer_llc: Option<usize>,
    reader_llc: Option<usize>,
    /// What it adds to `Sim::llc_buf_bytes` now: bytes, and the LLCs.
    charged: (u64, [Option<usize>; 2]),
    readers: Vec<usize>,
    writers: Vec<usize>,
    /// Traffic in the measured part of the run.
    stats: ChannelStats,
    /// A pipe's page slots (None for sockets).
    pipe: Option<PipePages>,
    /// AF_UNIX on a machine with `skb_slabs`: the queued skbs' objects
    /// and the bytes of each not yet read, oldest first.
    skbs: VecDeque<(u64, SkbObjects)>,
}

/// Readable bytes one CPU wrote in a row.
#[derive(Debug, Clone, Copy)]
struct Run {
    bytes: u64,
    cpu: usize,
    /// AF_UNIX: the truesize of the run's skbs (`cost::unix_skb_truesize`
    /// of each write), counted in `Sim`'s per-CPU unix backlog while
    /// queued; 0 for other kinds, and where the backlog is not kept.
    truesize: u64,
}

/// Who reads: the task, its CPU and that CPU's LLC.
#[derive(Debug, Clone, Copy)]
pub(super) struct Reader {
    pub task: usize,
    pub cpu: usize,
    pub llc: usize,
}

/// What a write finds in the channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Room {
    /// The bytes are queued.
    Queued,
    /// A datagram that did not fit, dropped (the sender unaware).
    Dropped,
    /// No room, but the TCP reader has read everything and held an ACK
    /// that makes room: its delayed-ACK timer sent it (taken at once).
    AckedLate,
    /// No room: the writer waits.
    Full,
}

/// What a read took.
#[derive(Debug, Clone, Copy)]
pub(super) struct Taken {
    pub bytes: u64,
    /// TCP: the bytes an ACK sent now acknowledges (tcp_cleanup_rbuf).
    pub ack: Option<u64>,
    /// Which blocked writers the room it made wakes (not TCP: its room
    /// comes back by ACK).
    pub woken: WakeWriters,
    /// The CPU that last wrote to the channel: where its shared state
    /// comes from.
    pub writer_cpu: Option<usize>,
    /// The CPU that wrote most of the bytes taken: where they come from.
    pub data_cpu: usize,
}

/// Which blocked writers a read wakes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum WakeWriters {
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
    pub fn kind(&self) -> ChannelKind {
        self.kind
    }

    /// Written by sendfile: no copy from user memory.
    pub fn sendfile(&self) -> bool {
        self.sendfile
    }

    pub fn is_pipe(&self) -> bool {
        self.pipe.is_some()
    }

    /// A pipe with every page slot taken.
    pub fn pipe_full(&self) -> bool {
        self.pipe.as_ref().is_some_and(|p| p.full())
    }

    pub fn stats(&self) -> ChannelStats {
        self.stats
    }

    pub fn last_reader_cpu(&self) -> Option<usize> {
        self.last_reader_cpu
    }

    pub fn last_reader_task(&self) -> Option<usize> {
        self.last_reader_task
    }

    pub fn readers(&self) -> &[usize] {
        &self.readers
    }

    pub fn writers(&self) -> &[usize] {
        &self.writers
    }

    /// A write of `bytes` by a task on `llc`.
    pub fn write(&mut self, bytes: u64, llc: usize, measuring: bool) -> Room {
        let fits = self.fits(bytes);
        if fits || self.kind == ChannelKind::Udp {
            self.writer_llc = Some(llc);
            if fits {
                self.used += bytes;
                if let Some(p) = &mut self.pipe {
                    p.write(bytes);
                }
                return Room::Queued;
            }
            if measuring {
                self.stats.bytes_dropped += bytes;
            }
            Room::Dropped
        } else if self.kind == ChannelKind::Tcp && self.readable == 0 && self.unacked > 0 {
            self.used -= std::mem::take(&mut self.unacked);
            Room::AckedLate
        } else {
            Room::Full
        }
    }

    /// A read of up to `bytes` by `reader`; None if nothing is readable.
    pub fn read(
        &mut self,
        bytes: u64,
        reader: Reader,
        measuring: bool,
        rule: PipeWriterWake,
        unix_backlog: &mut [u64],
    ) -> Option<Taken> {
        if self.readable == 0 {
            return None;
        }
        let take = self.readable.min(bytes);
        self.readable -= take;
        let Reader { task, cpu, llc } = reader;
        let data_cpu = self.take_written(take, unix_backlog);
        let mut woken = WakeWriters::None;
        let ack = if self.kind == ChannelKind::Tcp {
            self.unacked += take;
            self.time_to_ack()
                .then(|| std::mem::take(&mut self.unacked))
        } else {
            woken = self.drain(take, rule);
            None
        };
        self.reader_llc = Some(llc);
        self.last_reader_task = Some(task);
        self.last_reader_cpu = Some(cpu);
        if measuring {
            self.stats.bytes_read += take;
        }
        Some(Taken {
            bytes: take,
            ack,
            woken,
            writer_cpu: self.last_writer_cpu,
            data_cpu,
        })
    }

    /// Takes `take` bytes off the front of `written_on`, and their skbs'
    /// truesize off the writing CPUs' `unix_backlog`; returns the CPU that
    /// wrote most of them (the first such on a tie).
    fn take_written(&mut self, mut take: u64, unix_backlog: &mut [u64]) -> usize {
        let front = self
            .written_on
            .front_mut()
            .expect("readable bytes have a writer");
        if front.bytes > take && front.truesize == 0 {
            // The usual read, within one run and with no skbs counted.
            front.bytes -= take;
            return front.cpu;
        }
        let mut by_cpu: Vec<(usize, u64)> = Vec::new();
        while take > 0 {
            let front = self
                .written_on
                .front_mut()
                .expect("readable bytes have a writer");
            let n = front.bytes.min(take);
            // The skbs' share of the part taken; all that is left with the
            // run's last bytes, so nothing is lost to rounding.
            let truesize = if n == front.bytes {
                front.truesize
            } else {
                (front.truesize as u128 * n as u128 / front.bytes as u128) as u64
            };
            front.bytes -= n;
            front.truesize -= truesize;
            if truesize > 0 {
                unix_backlog[front.cpu] -= truesize;
            }
            take -= n;
            let cpu = front.cpu;
            if front.bytes == 0 {
                self.written_on.pop_front();
            }
            if take == 0 && by_cpu.is_empty() {
                // The usual read: within one run.
                return cpu;
            }
            match by_cpu.iter_mut().find(|(c, _)| *c == cpu) {
                Some((_, b)) => *b += n,
                None => by_cpu.push((cpu, n)),
            }
        }
        let most = by_cpu.iter().map(|&(_, b)| b).max().unwrap_or(0);
        by_cpu
            .iter()
            .find(|&&(_, b)| b == most)
            .map_or(0, |&(c, _)| c)
    }

    /// A write's data arrives for readers (written by `task` on `cpu`); an
    /// AF_UNIX write's skb joins `cpu`'s `unix_backlog` (when it is kept:
    /// not empty).
    pub fn deposit(
        &mut self,
        bytes: u64,
        task: usize,
        cpu: usize,
        measuring: bool,
        unix_backlog: &mut [u64],
    ) {
        self.readable += bytes;
        // Kept only where the machine has the curve (`unix_backlog` empty).
        let truesize = if self.kind == ChannelKind::Unix && bytes > 0 && !unix_backlog.is_empty() {
            crate::cost::unix_skb_truesize(bytes)
        } else {
            0
        };
        if truesize > 0 {
            unix_backlog[cpu] += truesize;
        }
        match self.written_on.back_mut() {
            Some(last) if last.cpu == cpu => {
                last.bytes += bytes;
                last.truesize += truesize;
            }
            _ if bytes > 0 => self.written_on.push_back(Run {
                bytes,
                cpu,
                truesize,
            }),
            _ => {}
        }
        if measuring {
            self.stats.bytes_written += bytes;
        }
        self.last_writer_cpu = Some(cpu);
        self.last_writer_task = Some(task);
    }

    /// TCP: a segment of `bytes` arrived; the receiver's MSS estimate
    /// grows to the largest seen.
    pub fn segment_received(&mut self, bytes: u64) {
        if self.kind == ChannelKind::Tcp && bytes >= self.rcv_mss {
            self.rcv_mss = bytes.min(LOOPBACK_MSS);
        }
    }

    /// TCP: an ACK for `bytes` reached the sender, freeing their room.
    pub fn acked(&mut self, bytes: u64) {
        self.used -= bytes;
    }

    /// TCP: whether this is the other direction of `reader`'s connection
    /// to `peer` (last written by `peer`, last read by `reader`).
    pub fn is_way_back(&self, peer: Option<usize>, reader: usize) -> bool {
        self.last_writer_task == peer && self.last_reader_task == Some(reader)
    }

    /// TCP: everything read is acknowledged at once (an ACK carried by
    /// data going the other way).
    pub fn ack_read(&mut self) {
        self.used -= std::mem::take(&mut self.unacked);
    }

    /// `task` blocks reading (`measuring`: counted in the stats).
    pub fn queue_reader(&mut self, task: usize, measuring: bool) {
        if measuring {
            self.stats.reader_blocks += 1;
        }
        self.readers.push(task);
    }

    /// `task` blocks writing.
    pub fn queue_writer(&mut self, task: usize, measuring: bool) {
        if measuring {
            self.stats.writer_blocks += 1;
        }
        self.writers.push(task);
    }

    /// Every blocked reader, off the list; hand the list back with
    /// [`Self::return_readers`] so waking allocates nothing.
    pub fn take_readers(&mut self) -> Vec<usize> {
        std::mem::take(&mut self.readers)
    }

    pub fn return_readers(&mut self, spare: Vec<usize>) {
        reuse_list(&mut self.readers, spare);
    }

    /// Every blocked writer, off the list (see [`Self::take_readers`]).
    pub fn take_writers(&mut self) -> Vec<usize> {
        std::mem::take(&mut self.writers)
    }

    pub fn return_writers(&mut self, spare: Vec<usize>) {
        reuse_list(&mut self.writers, spare);
    }

    /// Its buffered bytes or its reader's or writer's LLC changed: what it
    /// adds to each LLC's buffered bytes (`llc_buf_bytes`) follows.
    pub fn recharge_llcs(&mut self, llc_buf_bytes: &mut [u64]) {
        let (old, old_llcs) = self.charged;
        let llcs = [
            self.writer_llc,
            self.reader_llc.filter(|&r| Some(r) != self.writer_llc),
        ];
        if llcs == old_llcs {
            // The usual case: only the bytes changed.
            for l in llcs.into_iter().flatten() {
                llc_buf_bytes[l] = llc_buf_bytes[l] - old + self.used;
            }
            self.charged.0 = self.used;
            return;
        }
        for l in old_llcs.into_iter().flatten() {
            llc_buf_bytes[l] -= old;
        }
        for l in llcs.into_iter().flatten() {
            llc_buf_bytes[l] += self.used;
        }
        self.charged = (self.used, llcs);
    }

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

    /// Adds its queued skbs' truesize to `per_cpu` by the CPU that wrote
    /// them (the invariant check's recount of `Sim`'s unix backlog).
    pub(super) fn add_backlog(&self, per_cpu: &mut [u64]) {
        for r in &self.written_on {
            per_cpu[r.cpu] += r.truesize;
        }
    }

    /// Its byte counts agree: what is readable and what was read but not
    /// acknowledged are both still buffered, and the buffer holds no more
    /// than its capacity.
    pub(super) fn check_bytes(&self) -> std::result::Result<(), String> {
        let written: u64 = self.written_on.iter().map(|r| r.bytes).sum();
        if written != self.readable {
            return Err(format!(
                "readable {} but {written} bytes have a writing CPU",
                self.readable
            ));
        }
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
    pub(super) fn take_first_writer(&mut self) -> Option<usize> {
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
            written_on: VecDeque::new(),
            last_reader_cpu: None,
            writer_llc: None,
            reader_llc: None,
            charged: (0, [None, None]),
            readers: Vec::new(),
            writers: Vec::new(),
            stats: ChannelStats::default(),
            pipe: pipe.map(PipePages::new),
            skbs: VecDeque::new(),
        }
    }

    /// A deposited AF_UNIX write's skb (`bytes` of data) joins the queue.
    pub fn queue_skb(&mut self, bytes: u64, skb: SkbObjects) {
        self.skbs.push_back((bytes, skb));
    }

    /// A read of `take` bytes: the skbs it consumes whole go to `freed`,
    /// oldest first; one it reads in part stays with the rest of its
    /// bytes (unix_stream_read_generic's consumed count).
    pub fn consume_skbs(&mut self, mut take: u64, freed: &mut Vec<SkbObjects>) {
        while take > 0 {
            let Some(front) = self.skbs.front_mut() else {
                return;
            };
            if front.0 > take {
                front.0 -= take;
                return;
            }
            take -= front.0;
            freed.push(front.1);
            self.skbs.pop_front();
        }
    }

    /// The skbs queued (machines with `skb_slabs`).
    pub fn queued_skbs(&self) -> usize {
        self.skbs.len()
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

#[cfg(test)]
mod tests {
    use super::*;

    fn by(task: usize, cpu: usize, llc: usize) -> Reader {
        Reader { task, cpu, llc }
    }

    fn channel(kind: ChannelKind, capacity: u64) -> Channel {
        Channel::new(&ChannelSpec {
            kind,
            capacity,
            sendfile: false,
        })
    }

    #[test]
    fn a_datagram_that_does_not_fit_is_dropped_and_counted() {
        let mut ch = channel(ChannelKind::Udp, 100);
        assert_eq!(ch.write(80, 0, true), Room::Queued);
        assert_eq!(ch.write(80, 0, true), Room::Dropped);
        assert_eq!(ch.stats().bytes_dropped, 80);
        ch.check_bytes().unwrap();
    }

    /// A read's data comes from the CPUs that wrote it, in order, not from
    /// the channel's last writer: hackbench's receivers read a queue that
    /// senders on every CPU filled.
    #[test]
    fn a_read_takes_its_bytes_from_the_cpus_that_wrote_them() {
        let mut backlog = [0u64; 2];
        let rule = PipeWriterWake::PageFreed;
        let mut ch = channel(ChannelKind::Unix, 10_000);
        for (task, cpu) in [(1, 0), (2, 0), (3, 1)] {
            assert_eq!(ch.write(100, 0, false), Room::Queued);
            ch.deposit(100, task, cpu, false, &mut backlog);
        }
        ch.check_bytes().unwrap();
        let first = ch
            .read(100, by(9, 1, 0), false, rule, &mut backlog)
            .unwrap();
        assert_eq!((first.writer_cpu, first.data_cpu), (Some(1), 0));
        // 150 bytes: 100 written on CPU 0, 50 on CPU 1.
        let second = ch
            .read(150, by(9, 1, 0), false, rule, &mut backlog)
            .unwrap();
        assert_eq!(second.data_cpu, 0);
        let third = ch
            .read(100, by(9, 1, 0), false, rule, &mut backlog)
            .unwrap();
        assert_eq!((third.bytes, third.data_cpu), (50, 1));
        ch.check_bytes().unwrap();
        assert!(ch.read(1, by(9, 1, 0), false, rule, &mut backlog).is_none());
    }

    /// tcp_cleanup_rbuf: a read of one small segment owes its ACK; the
    /// writer that then finds no room takes the held ACK (the delayed-ACK
    /// timer's), and a reply on the way back carries it instead.
    #[test]
    fn tcp_room_comes_back_only_by_ack() {
        let mut backlog = [0u64; 2];
        let rule = PipeWriterWake::PageFreed;
        let mut ch = channel(ChannelKind::Tcp, 1000);
        assert_eq!(ch.write(100, 0, false), Room::Queued);
        ch.deposit(100, 7, 0, false, &mut backlog);
        let taken = ch
            .read(100, by(8, 1, 1), false, rule, &mut backlog)
            .unwrap();
        assert_eq!(
            (taken.bytes, taken.ack, taken.writer_cpu),
            (100, None, Some(0))
        );
        assert_eq!(taken.woken, WakeWriters::None);
        assert!(
            ch.read(1, by(8, 1, 1), false, rule, &mut backlog).is_none(),
            "nothing readable"
        );
        assert_eq!(ch.write(901, 0, false), Room::AckedLate);
        assert_eq!(ch.write(901, 0, false), Room::Queued);
        // A read of more than one segment (rcv_mss, 536 at first) sends
        // its ACK at once.
        ch.deposit(901, 7, 0, false, &mut backlog);
        let taken = ch
            .read(901, by(8, 1, 1), false, rule, &mut backlog)
            .unwrap();
        assert_eq!(taken.ack, Some(901));
        assert!(ch.is_way_back(Some(7), 8));
        assert!(!ch.is_way_back(Some(8), 7));
        ch.check_bytes().unwrap();
    }

    #[test]
    fn a_full_pipe_blocks_its_writer_until_a_read_frees_a_page() {
        let mut backlog = [0u64; 2];
        let rule = PipeWriterWake::PageFreed;
        let mut ch = channel(ChannelKind::Pipe, 4096);
        assert_eq!(ch.write(4096, 0, false), Room::Queued);
        assert!(ch.pipe_full());
        assert_eq!(ch.write(1, 0, false), Room::Full);
        ch.queue_writer(3, true);
        assert_eq!(ch.stats().writer_blocks, 1);
        ch.deposit(4096, 2, 0, true, &mut backlog);
        let taken = ch
            .read(4096, by(4, 1, 0), true, rule, &mut backlog)
            .unwrap();
        assert_eq!(taken.woken, WakeWriters::All);
        assert_eq!(ch.take_writers(), vec![3]);
        ch.check_bytes().unwrap();
    }

    #[test]
    fn buffered_bytes_are_charged_to_the_writer_and_reader_llcs() {
        let mut backlog = [0u64; 2];
        let rule = PipeWriterWake::PageFreed;
        let mut llc = [0u64; 2];
        let mut ch = channel(ChannelKind::Unix, 1000);
        ch.write(300, 0, false);
        ch.recharge_llcs(&mut llc);
        assert_eq!(llc, [300, 0]);
        ch.deposit(300, 0, 0, false, &mut backlog);
        ch.read(100, by(1, 1, 1), false, rule, &mut backlog)
            .unwrap();
        ch.recharge_llcs(&mut llc);
        assert_eq!(llc, [200, 200], "both LLCs hold what is still queued");
    }

    /// An AF_UNIX message counts its skb's truesize (768 bytes for 100) in
    /// the writing CPU's backlog from its deposit until it is read, also
    /// when one read takes bytes two CPUs wrote; a pipe's bytes count none.
    #[test]
    fn unix_skbs_count_in_the_writing_cpus_backlog_until_read() {
        let rule = PipeWriterWake::PageFreed;
        let mut backlog = [0u64; 2];
        let mut ch = channel(ChannelKind::Unix, 10_000);
        for cpu in [0, 0, 1] {
            ch.write(100, 0, false);
            ch.deposit(100, 1, cpu, false, &mut backlog);
        }
        assert_eq!(backlog, [2 * 768, 768]);
        ch.read(150, by(2, 1, 0), false, rule, &mut backlog)
            .unwrap();
        assert_eq!(
            backlog,
            [768 / 2, 768],
            "half the second skb is still queued"
        );
        ch.read(150, by(2, 1, 0), false, rule, &mut backlog)
            .unwrap();
        assert_eq!(backlog, [0, 0], "nothing is left once all is read");
        let mut pipe = channel(ChannelKind::Pipe, 65_536);
        pipe.write(100, 0, false);
        pipe.deposit(100, 1, 0, false, &mut backlog);
        assert_eq!(backlog, [0, 0]);
    }
}

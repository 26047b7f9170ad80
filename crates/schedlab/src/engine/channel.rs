//! Channels: pipes, AF_UNIX and loopback TCP/UDP sockets as buffers that
//! block readers when empty and writers when full, with each kind's
//! capacity, which writers a read wakes, and TCP's acknowledgements.

use super::pipe::{round_pipe_size, PipePages};
use crate::policy::PipeWriterWake;
use crate::workload::program::{ChannelKind, ChannelSpec};

/// include/net/tcp.h: the receive MSS assumed before any segment.
pub(super) const TCP_MSS_DEFAULT: u64 = 536;
/// The loopback device's MSS: its 65,536-byte MTU less the IPv4 and TCP
/// headers and the timestamp option (40 + 12 bytes).
pub(super) const LOOPBACK_MSS: u64 = 65_484;

#[derive(Debug, Clone)]
pub(crate) struct Channel {
    pub(super) kind: ChannelKind,
    pub(super) sendfile: bool,
    pub(super) capacity: u64,
    /// Bytes written or being written and not yet read.
    pub(super) used: u64,
    /// Bytes a reader can take now.
    pub(super) readable: u64,
    /// TCP: of `used`, bytes read whose ACK has not been sent (the sender
    /// still holds them, and their window space, until it is).
    pub(super) unacked: u64,
    /// TCP: the receiver's estimate of the sender's segment size
    /// (icsk_ack.rcv_mss): TCP_MSS_DEFAULT at first, then the largest
    /// segment received, at most the loopback's MSS.
    pub(super) rcv_mss: u64,
    /// The tasks that last wrote and last read it: a TCP channel and one
    /// going back between the same two tasks are taken as the two
    /// directions of one connection, whose data segments carry each
    /// other's ACKs.
    pub(super) last_writer_task: Option<usize>,
    pub(super) last_reader_task: Option<usize>,
    /// The CPUs that last wrote and last read it: where a read's data and
    /// a write's shared state come from (`cost::read_transfer`,
    /// `write_transfer`).
    pub(super) last_writer_cpu: Option<usize>,
    pub(super) last_reader_cpu: Option<usize>,
    /// The LLCs of its last writer and last reader: its buffered bytes
    /// (`used`) occupy both (the writer's copy puts them in the one, the
    /// reader's copy pulls them into the other).
    pub(super) writer_llc: Option<usize>,
    pub(super) reader_llc: Option<usize>,
    /// What it adds to `Sim::llc_buf_bytes` now: bytes, and the LLCs.
    pub(super) charged: (u64, [Option<usize>; 2]),
    pub readers: Vec<usize>,
    pub writers: Vec<usize>,
    /// Traffic in the measured part of the run.
    pub stats: ChannelStats,
    /// A pipe's page slots (None for sockets).
    pub(super) pipe: Option<PipePages>,
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
    /// After a TCP read (its bytes already in `unacked`): whether
    /// tcp_cleanup_rbuf sends an ACK now. Either more than one segment
    /// (`rcv_mss`) arrived since the last ACK, read or still queued (the
    /// once-per-two-segments ACK), or the window the ACK would advertise is
    /// at least twice the one advertised now (a read that freed a lot).
    /// The empty-queue rule for small pushed segments of a one-way stream
    /// is left out: a request/response connection's replies carry its
    /// ACKs (not modelled as such: those ACKs cost nothing here).
    pub(super) fn time_to_ack(&self) -> bool {
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
    pub(super) fn drain(&mut self, take: u64, rule: PipeWriterWake) -> WakeWriters {
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
    pub(super) fn fits(&self, bytes: u64) -> bool {
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

/// Gives a wait list the allocation of the list it was taken from, emptied,
/// unless it gained waiters meanwhile: a wakeup then allocates nothing.
pub(super) fn reuse_list(list: &mut Vec<usize>, mut spare: Vec<usize>) {
    if list.is_empty() {
        spare.clear();
        *list = spare;
    }
}

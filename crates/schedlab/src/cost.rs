//! The hardware cost model: every cost the engine charges comes from here,
//! computed from the machine's [`HwCosts`] and the distance between CPUs.

use crate::topology::{CpuDistance, HwCosts, Topology};
use crate::workload::program::ChannelKind;

/// Work is measured in nanoseconds at full speed times this scale, so that a
/// CPU slowed by a busy SMT sibling progresses at a fraction of it.
pub const WORK_SCALE: u64 = 1024;
/// A segment's copying part is counted in 1/1024ths of its work.
pub const COPY_SHARE_ONE: u64 = 1024;
const CACHE_LINE: u64 = 64;
/// The receive path's share (1/1024) of a loopback message's network-stack
/// work (`net_msg_ns`): half, an estimate (the transmit and receive paths
/// each build or parse the same headers and take one socket lock); not yet
/// measured. Only where the work is accounted depends on it: the send path
/// and its softirq run back to back on the sender's CPU.
pub const NET_RX_SHARE: u64 = 512;
/// The receiving side's share (1/1024) of an AF_UNIX stream message's
/// socket work (`unix_msg_ns`): half, an estimate. unix_stream_sendmsg
/// allocates the skb and its data and queues it under the peer's state
/// lock; unix_stream_read_generic takes it off under the same lock and
/// frees both (consume_skb, whose sock_wfree runs unix_write_space). One
/// side allocates what the other frees. `schedlab calibrate` measures the
/// pair for `unix_msg_ns` and the split as a check (`unix_rx_share`): the
/// reader's share was 54-56% on the 2-vCPU development VM.
pub const UNIX_RX_SHARE: u64 = 512;
/// Cache lines an AF_UNIX message's reader pulls from the CPU that wrote
/// it, beyond the channel's shared state and the data (x86-64, 2.6.27 to
/// 6.12): the struct sk_buff the writer filled (232-240 bytes: 4 lines),
/// the first line of skb_shared_info (dataref, nr_frags: skb_release_data
/// reads and writes it), one line per object freed into a slab the
/// writer's CPU allocates from (the sk_buff and its kmalloc'ed data: SLUB's
/// __slab_free writes the slab's freelist, 2), and the writer's
/// sk_wmem_alloc (sock_wfree's atomic, 1). Counted from the structures,
/// not fitted; on the 2-vCPU development VM (one message in flight,
/// writer and reader pinned to the two vCPUs) a cross-CPU unix read costs
/// 0.50-0.63 us more than a pipe's, 8 x `miss_ns` = 0.53 (docs/costs.md).
pub const UNIX_SKB_RX_LINES: u64 = 8;
/// Of [`UNIX_SKB_RX_LINES`], the two slabs' lines the reader's frees write;
/// where the machine has `skb_slabs` the slab model moves them instead.
pub const UNIX_SKB_RX_SLAB_LINES: u64 = 2;

/// What moved from another core's cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moved {
    /// One line the next step depends on: a slab's own line (its freelist
    /// and counters, changed by a locked cmpxchg) or the node list's lock.
    Line,
    /// A recycled object, `n` of its lines written by its new user: the
    /// allocation reads its free pointer (one line, a dependent load), and
    /// the rest are written after __alloc_skb's prefetchw, so their
    /// misses overlap.
    Object(u32),
}

/// Lines an AF_UNIX write pulls back after its peer read on another CPU:
/// its socket's sk_wmem_alloc (skb_set_owner_w's atomic; the reader's
/// sock_wfree wrote it) and the peer's wait-queue word sock_def_readable
/// tests. Measured the same way: 0.08-0.17 us over a pipe's write (model
/// 0.13).
pub const UNIX_SKB_TX_LINES: u64 = 2;

/// The memory an AF_UNIX stream message of `msg` bytes holds while queued
/// (its skb's truesize, x86-64, 2.6.27 to 6.12): the payload rounded up to
/// the 64-byte cache line, plus the skb_shared_info (320 bytes), rounded
/// up to the kmalloc size class (powers of two, and 96 and 192; whole
/// pages past 32 KiB), plus the sk_buff itself (232 bytes, 256 aligned).
/// 768 bytes for a 100-byte message.
pub fn unix_skb_truesize(msg: u64) -> u64 {
    let linear = msg.div_ceil(64) * 64 + 320;
    let slab = match linear {
        0..=96 => 96,
        97..=128 => 128,
        129..=192 => 192,
        193..=32_768 => linear.next_power_of_two(),
        _ => linear.div_ceil(4096) * 4096,
    };
    slab + 256
}
/// Cache lines a loopback TCP message's reader pulls from the writer's CPU
/// beyond the socket's shared state and the data (x86-64, 4.15 and 6.12):
/// TCP sends a fast clone of the skb it keeps for retransmission, so the
/// reader takes the clone's struct sk_buff (4 lines), skb_shared_info's
/// first line (dataref, which the clone and the original share), the
/// fclone pair's reference count (kfree_skbmem), and on the free the
/// writer's sk_wmem_alloc (tcp_wfree's atomic) and the line through which
/// the memory goes back to the writer's CPU (SLUB's remote free, or from
/// 5.19 the per-CPU list skb_attempt_defer_free queues it on): 8, as for
/// AF_UNIX. Measured on the 2-vCPU development VM (one message in flight,
/// no wakeups): a cross-CPU TCP read costs 0.88 us more than on one CPU,
/// a unix read 0.82 (docs/fidelity.md).
pub const TCP_SKB_RX_LINES: u64 = 8;
/// Lines a loopback TCP write pulls back after its peer read on another
/// CPU: its own sk_wmem_alloc (the reader's tcp_wfree wrote it), and the
/// reader's socket lines that the receive softirq, which loopback runs on
/// the writer's CPU, writes after the reader's recvmsg wrote them
/// ([`TCP_RX_SOCK_LINES`]).
pub const TCP_SKB_TX_LINES: u64 = 1 + TCP_RX_SOCK_LINES;
/// The receiving socket's lines that both the receive softirq (tcp_v4_rcv
/// -> tcp_rcv_established, tcp_data_queue, tcp_event_data_recv on the
/// writer's CPU) and the reader's recvmsg (lock_sock, tcp_eat_recv_skb,
/// sock_rfree, tcp_rcv_space_adjust, and the ACK __tcp_cleanup_rbuf sends)
/// write, per message. Counted for v6.12 from the offsets of struct
/// tcp_sock (x86-64 defconfig): the receive queue head, sk_rmem_alloc, the
/// socket lock with sk_forward_alloc, icsk_ack, copied_seq with snd_wl1
/// and rcv_tstamp, rcv_nxt with the clock cache, rx_opt with rcv_wnd, and
/// segs_in with rcv_wup: 8 (5 when the writer's CPU sends the ACK itself,
/// in quickack mode). Used for every era: before v6.8 grouped the hot
/// fields the same writes were spread wider, so earlier kernels likely
/// pay more. The ACK's processing on the reader's CPU touches the
/// writer's socket in turn; that mirror is not counted. Measured on the
/// 2-vCPU development VM: a cross-CPU TCP write costs 0.55 us more than a
/// unix write's cross-CPU extra, 8 x `miss_ns` 66 = 0.53.
pub const TCP_RX_SOCK_LINES: u64 = 8;

#[derive(Debug, Clone)]
pub struct CostModel {
    costs: HwCosts,
}

impl CostModel {
    pub fn new(costs: &HwCosts) -> Self {
        CostModel {
            costs: costs.clone(),
        }
    }

    pub fn costs(&self) -> &HwCosts {
        &self.costs
    }

    pub fn syscall(&self) -> u64 {
        self.costs.syscall_ns
    }

    /// Copying `bytes` between user and kernel.
    pub fn copy(&self, bytes: u64) -> u64 {
        bytes * self.costs.copy_ns_per_kib / 1024
    }

    /// Per-message socket work in the sending system call, by channel
    /// kind: for TCP and UDP the transmit path only ([`Self::net_tx`]);
    /// the receive path runs after it as a softirq ([`Self::net_rx`]).
    pub fn msg(&self, kind: crate::workload::program::ChannelKind) -> u64 {
        use crate::workload::program::ChannelKind::*;
        match kind {
            Pipe => 0,
            Unix => self.costs.unix_msg_ns - self.unix_rx(),
            Tcp | Udp => self.net_tx(kind),
        }
    }

    /// Per-read socket work in the receiving system call: an AF_UNIX
    /// read's dequeue and free ([`UNIX_RX_SHARE`] of `unix_msg_ns`; a read
    /// is taken to free one message's skb). Pipes have none; a TCP or UDP
    /// message's receive path ran in the sender's softirq.
    pub fn msg_rx(&self, kind: crate::workload::program::ChannelKind) -> u64 {
        match kind {
            crate::workload::program::ChannelKind::Unix => self.unix_rx(),
            _ => 0,
        }
    }

    fn unix_rx(&self) -> u64 {
        self.costs.unix_msg_ns * UNIX_RX_SHARE / 1024
    }

    /// A loopback message's stack work, send and receive together: UDP's
    /// `udp_msg_ns`, TCP's (and a pure ACK's) `net_msg_ns`.
    fn net_msg(&self, kind: crate::workload::program::ChannelKind) -> u64 {
        match kind {
            crate::workload::program::ChannelKind::Udp => self.costs.udp_msg_ns,
            _ => self.costs.net_msg_ns,
        }
    }

    /// A loopback message's transmit path (tcp_sendmsg / udp_sendmsg to
    /// loopback_xmit and netif_rx) in the sender's system call: the part
    /// of its stack work the receive path does not take.
    pub fn net_tx(&self, kind: crate::workload::program::ChannelKind) -> u64 {
        self.net_msg(kind) - self.net_rx(kind)
    }

    /// A loopback message's receive path in the NET_RX softirq on the CPU
    /// that queued it (process_backlog, ip_rcv, tcp_v4_rcv / udp_rcv, the
    /// queueing and the reader's wakeup; for an ACK, tcp_ack freeing the
    /// acknowledged data and waking a writer): [`NET_RX_SHARE`] of
    /// the message's stack work. A pure ACK costs a TCP message's
    /// transmit and receive paths: `net_msg_ns` comes from 1-byte TCP_RR
    /// messages, whose work is the headers' as an ACK's is.
    pub fn net_rx(&self, kind: crate::workload::program::ChannelKind) -> u64 {
        self.net_msg(kind) * NET_RX_SHARE / 1024
    }

    pub fn fork(&self) -> u64 {
        self.costs.fork_ns
    }

    /// A context switch; threads of one process (or a CPU returning to the
    /// address space it still has loaded) skip the address-space change.
    pub fn context_switch(&self, same_address_space: bool) -> u64 {
        if same_address_space {
            self.costs.thread_switch_ns
        } else {
            self.costs.context_switch_ns
        }
    }

    /// An uncontended atomic read-modify-write (a pthread mutex's or
    /// condition variable's cmpxchg) on a line last written by `from`: the
    /// line's transfer at their distance (`miss_ns`). On the same CPU the
    /// line is in its own L1; the SMT-sibling figure `miss_ns[0]` (5 ns by
    /// default) stands for it, about the 18-20 cycles of a locked cmpxchg
    /// (Agner Fog's instruction tables, Haswell to Skylake). A line no CPU
    /// has written comes from beyond the LLC (`miss_ns[2]`). At least 1 ns.
    pub fn atomic(&self, topo: &Topology, from: Option<usize>, to: usize) -> u64 {
        let i = match from {
            Some(f) => topo.distance(f, to).cost_index().unwrap_or(0),
            None => 2,
        };
        self.costs.miss_ns[i].max(1)
    }

    /// `pauses` PAUSE instructions back to back (a spin round's delay) at
    /// the machine's clock: `pause_cycles` each.
    pub fn pauses(&self, pauses: u64) -> u64 {
        pauses * self.costs.pause_cycles * 1000 / self.costs.clock_mhz.max(1) as u64
    }

    /// An AF_UNIX message's extra time, read on the core that wrote it,
    /// when that core's queued skbs add up to `queued_bytes` of truesize:
    /// `unix_backlog` read linearly between its points (from 0 at 0 KiB),
    /// flat past the last; 0 when the machine has none.
    pub fn unix_backlog(&self, queued_bytes: u64) -> u64 {
        let points = &self.costs.unix_backlog;
        let Some(last) = points.last() else {
            return 0;
        };
        // In KiB x 1024 (bytes), so the line between points is exact enough.
        let (mut x0, mut y0) = (0u64, 0u64);
        for p in points {
            let x1 = p.kib * 1024;
            if queued_bytes <= x1 {
                let span = x1 - x0;
                if span == 0 {
                    return p.ns;
                }
                let along = queued_bytes - x0;
                let y = y0 as i128 + (p.ns as i128 - y0 as i128) * along as i128 / span as i128;
                return y.max(0) as u64;
            }
            (x0, y0) = (x1, p.ns);
        }
        last.ns
    }

    /// The waker's part of try_to_wake_up.
    pub fn wakeup(&self) -> u64 {
        self.costs.wakeup_ns
    }

    /// A load_balance's time on the balancing CPU: a cache miss for each
    /// CPU whose run-queue statistics it reads (at that CPU's distance), for
    /// each task it examines on the busiest queue, and two for taking the
    /// pair of run-queue locks (the lines bounce to this CPU); each task
    /// moved costs what a wakeup's enqueue and preemption check cost.
    pub fn balance(&self, topo: &Topology, work: &crate::sched::LbWork) -> u64 {
        let distances = [
            CpuDistance::Same,
            CpuDistance::SmtSibling,
            CpuDistance::SameLlc,
            CpuDistance::OtherLlc,
            CpuDistance::OtherNode,
        ];
        let visited = work.visited(topo);
        let reads: u64 = distances
            .iter()
            .map(|&d| visited[d as usize] as u64 * self.miss(d))
            .sum();
        let busiest = work.locked.map_or(0, |d| self.miss(d));
        reads + 2 * busiest + work.examined as u64 * busiest + work.moved as u64 * self.wakeup()
    }

    /// From sending an IPI to the handler running on the target, an idle
    /// CPU (before its idle state's exit) or a running one
    /// (`ipi_running_extra_ns` more).
    pub fn ipi_latency(&self, target_idle: bool) -> u64 {
        let running = if target_idle {
            0
        } else {
            self.costs.ipi_running_extra_ns
        };
        self.costs.ipi_ns + self.costs.virt_ipi_extra_ns + running
    }

    /// The waker's own time for sending a wakeup's IPI (`ipi_send_ns`):
    /// it runs while the IPI is on its way, so it adds to the waker's
    /// work, not to the wakee's latency.
    pub fn ipi_send(&self) -> u64 {
        self.costs.ipi_send_ns
    }

    /// Whether idle state `cstate` is left by a write to the idle task's
    /// flags word (MWAIT) rather than by an IPI.
    pub fn idle_polls(&self, cstate: usize) -> bool {
        self.costs.cstates.get(cstate).is_some_and(|c| c.polls)
    }

    /// From a waker on `from` setting need_resched in the flags word an
    /// idle CPU `to` monitors to that CPU's MWAIT ending: the line's
    /// transfer at their distance (`miss_ns`), at least 1 ns.
    pub fn polling_wake(&self, topo: &Topology, from: usize, to: usize) -> u64 {
        self.miss(topo.distance(from, to)).max(1)
    }

    pub fn idle_exit(&self, cstate: usize) -> u64 {
        self.costs
            .cstates
            .get(cstate)
            .map_or(0, |c| c.exit_latency_ns)
    }

    /// The deepest idle state worth entering for an idle period of `predicted_ns`.
    pub fn pick_cstate(&self, predicted_ns: u64) -> usize {
        self.costs
            .cstates
            .iter()
            .rposition(|c| c.target_residency_ns <= predicted_ns)
            .unwrap_or(0)
    }

    /// What an skb's allocation or free on `to` took from `from`'s cache
    /// (`HwCosts::skb_slabs`): the lines, and their time at `miss_ns` of
    /// their distance, a dependent line whole, an object's other lines
    /// shared by `mlp` (their misses overlap). 0 on the same CPU.
    pub fn slab_moved(&self, topo: &Topology, from: usize, to: usize, what: Moved) -> (u64, u64) {
        let miss = self.miss(topo.distance(from, to));
        match what {
            Moved::Line => (1, miss),
            Moved::Object(lines) => {
                let rest = u64::from(lines.saturating_sub(1));
                (
                    u64::from(lines),
                    miss + rest * miss / self.costs.mlp.max(1) as u64,
                )
            }
        }
    }

    fn miss(&self, d: CpuDistance) -> u64 {
        d.cost_index().map_or(0, |i| self.costs.miss_ns[i])
    }

    /// Refilling a hot working set after moving from `from` to `to`:
    /// lines x miss latency / memory-level parallelism.
    pub fn cache_refill(
        &self,
        topo: &Topology,
        working_set_kib: u64,
        from: usize,
        to: usize,
    ) -> u64 {
        let lines = working_set_kib * 1024 / CACHE_LINE;
        lines * self.miss(topo.distance(from, to)) / self.costs.mlp as u64
    }

    /// Of a working set last brought into an LLC whose tasks' working sets
    /// add up to `total_kib`, the part evicted since (1/1024): none while
    /// they fit in its capacity, else all but the capacity's share.
    pub fn evicted(&self, total_kib: u64) -> u64 {
        self.llc_overflow(total_kib as u128 * 1024)
    }

    /// The part (1/1024) of an LLC's contents that does not fit in it when
    /// they add up to `total_bytes`: none while they fit, else all but the
    /// capacity's share. Of a working set it is the part evicted; of a copy
    /// between buffers in the LLC, the part whose lines come from or go to
    /// memory.
    pub fn llc_overflow(&self, total_bytes: u128) -> u64 {
        let cap = self.costs.llc_kib as u128 * 1024;
        if total_bytes <= cap {
            0
        } else {
            // In 64 bits when exact (crate::arith).
            let kept = match (u64::try_from(cap * 1024), u64::try_from(total_bytes)) {
                (Ok(c), Ok(t)) => c / t,
                _ => (cap * 1024 / total_bytes) as u64,
            };
            1024 - kept
        }
    }

    /// Refilling a working set after moving from `from` to `to` when
    /// `evicted` (1/1024) of it has left the cache it was in: that part
    /// comes from local memory (`miss_ns` beyond the LLC), the rest from
    /// the cache at the CPUs' distance.
    pub fn refill_with_eviction(
        &self,
        topo: &Topology,
        working_set_kib: u64,
        from: usize,
        to: usize,
        evicted: u64,
    ) -> u64 {
        let lines = working_set_kib as u128 * 1024 / CACHE_LINE as u128;
        let kept = lines * (1024 - evicted) as u128 / 1024;
        let gone = lines - kept;
        let ns = kept * self.miss(topo.distance(from, to)) as u128
            + gone * self.costs.miss_ns[2] as u128;
        (ns / self.costs.mlp as u128) as u64
    }

    /// A read on `to` of `bytes` written on `data_from`, the channel last
    /// written on `state_from`, beyond the read's own work: the channel's
    /// shared state (`transfer_ns` at `state_from`'s distance: the pipe's
    /// mutex and ring indices, the socket's queue lock and accounting),
    /// the data's lines (`miss_ns` at `data_from`'s, shared by `mlp`), and
    /// for an AF_UNIX or loopback TCP message its skb ([`UNIX_SKB_RX_LINES`],
    /// [`TCP_SKB_RX_LINES`], one after another: each a pointer the next
    /// depends on, so `miss_ns` each). Nothing from the reader's own CPU.
    /// UDP gets no skb lines: it was not measured.
    pub fn read_transfer(
        &self,
        topo: &Topology,
        kind: ChannelKind,
        bytes: u64,
        (state_from, data_from): (usize, usize),
        to: usize,
    ) -> u64 {
        let state = topo
            .distance(state_from, to)
            .cost_index()
            .map_or(0, |i| self.costs.transfer_ns[i]);
        let Some(i) = topo.distance(data_from, to).cost_index() else {
            return state;
        };
        let lines = bytes.div_ceil(CACHE_LINE);
        state
            + lines * self.costs.miss_ns[i] / self.costs.mlp as u64
            + self.skb_lines(kind, true, i)
    }

    /// A write on `to` after the channel's last read on `from`: both sides
    /// write the shared state, so the write brings it back (`transfer_ns`),
    /// and a socket write the lines the reader's side wrote since
    /// ([`UNIX_SKB_TX_LINES`], [`TCP_SKB_TX_LINES`]). 0 on the same CPU.
    pub fn write_transfer(
        &self,
        topo: &Topology,
        kind: ChannelKind,
        from: usize,
        to: usize,
    ) -> u64 {
        let Some(i) = topo.distance(from, to).cost_index() else {
            return 0;
        };
        self.costs.transfer_ns[i] + self.skb_lines(kind, false, i)
    }

    /// A message's skb (and for TCP socket) lines at distance index `i`,
    /// for the read or the write: AF_UNIX and loopback TCP, which were
    /// counted and measured; none for pipes, nor for UDP (not measured).
    fn skb_lines(&self, kind: ChannelKind, read: bool, i: usize) -> u64 {
        let lines = match (kind, read) {
            // The slabs' lines are the slab model's where the machine has one.
            (ChannelKind::Unix, true) if self.costs.skb_slabs.is_some() => {
                UNIX_SKB_RX_LINES - UNIX_SKB_RX_SLAB_LINES
            }
            (ChannelKind::Unix, true) => UNIX_SKB_RX_LINES,
            (ChannelKind::Unix, false) => UNIX_SKB_TX_LINES,
            (ChannelKind::Tcp, true) => TCP_SKB_RX_LINES,
            (ChannelKind::Tcp, false) => TCP_SKB_TX_LINES,
            (ChannelKind::Pipe | ChannelKind::Udp, _) => 0,
        };
        lines * self.costs.miss_ns[i]
    }

    /// The node's memory bandwidth as copying work per ns (x
    /// [`WORK_SCALE`], x 2^16): a copy moves each byte twice (read and
    /// write, as STREAM's Copy counts them), and a core alone copies
    /// 1024 bytes in `copy_ns_per_kib` ns at full speed.
    fn node_copy_work(&self) -> u128 {
        let c = &self.costs;
        // bytes per ns = mem_bw_mb_s / 2000; work per byte = WORK_SCALE x copy_ns_per_kib / 1024.
        ((WORK_SCALE as u128 * c.mem_bw_mb_s as u128 * c.copy_ns_per_kib as u128) << 16)
            / (2000 * 1024)
    }

    /// The copying speed (work per ns x [`WORK_SCALE`], at most
    /// WORK_SCALE) each segment copying on a node gets from the node's
    /// memory bandwidth. A segment is (its copying part in 1/1024, its
    /// thread's speed); its copying is spread evenly over it, so at copying
    /// speed `c` it copies `share x s x c / ((1 - share) c + share x s)` per
    /// ns. With enough bandwidth every copy runs at its thread's speed;
    /// otherwise the bandwidth is shared equally: the fastest `c` at which
    /// the node's copies together fit in it.
    pub fn copy_cap(&self, segments: &[(u64, u64)]) -> u64 {
        let limit = self.node_copy_work();
        let total = |c: u64| -> u128 {
            segments
                .iter()
                .map(|&(share, s)| {
                    let (sh, s, c) = (share as u128, s as u128, c.min(s) as u128);
                    let one = COPY_SHARE_ONE as u128;
                    ((sh * s * c) << 16) / ((one - sh) * c + sh * s).max(1)
                })
                .sum()
        };
        if total(WORK_SCALE) <= limit {
            return WORK_SCALE;
        }
        let (mut lo, mut hi) = (1, WORK_SCALE);
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if total(mid) <= limit {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        lo
    }

    /// Whether copying parts adding up to `copies` (1/1024 each) surely fit
    /// in the node's bandwidth at full speed.
    pub fn copies_fit(&self, copies: u64) -> bool {
        ((copies as u128 * WORK_SCALE as u128) << 16)
            <= self.node_copy_work() * COPY_SHARE_ONE as u128
    }

    /// Work per nanosecond (x [`WORK_SCALE`]) of one thread when `busy` of its
    /// core's threads (itself included) are busy.
    pub fn smt_rate(&self, busy: usize) -> u64 {
        if busy <= 1 {
            WORK_SCALE
        } else {
            WORK_SCALE * self.costs.smt_throughput_pct as u64 / (100 * busy as u64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{preset, Topology};

    /// unix_stream_sendmsg allocates and queues, unix_stream_read_generic
    /// dequeues and frees: each side pays its half of `unix_msg_ns`, and
    /// the two halves are the whole. Pipes pay neither.
    /// `unix_backlog` is read linearly between its points, from 0 at 0
    /// KiB, and flat past the last; a machine without points charges 0.
    #[test]
    fn the_unix_backlog_curve_is_read_between_its_points() {
        let none = CostModel::new(&HwCosts::default());
        assert_eq!(none.unix_backlog(1 << 30), 0);
        let m = CostModel::new(&HwCosts {
            unix_backlog: vec![
                crate::topology::BacklogCost { kib: 1024, ns: 100 },
                crate::topology::BacklogCost { kib: 2048, ns: 300 },
            ],
            ..HwCosts::default()
        });
        let at = |kib: u64| m.unix_backlog(kib * 1024);
        assert_eq!(
            [at(0), at(512), at(1024), at(1536), at(2048), at(1 << 20)],
            [0, 50, 100, 200, 300, 300]
        );
    }

    /// skb truesize on x86-64: payload to the line, shared info, the
    /// kmalloc class, and the sk_buff.
    #[test]
    fn a_unix_skb_holds_its_slab_object_and_its_sk_buff() {
        assert_eq!(unix_skb_truesize(100), 512 + 256);
        assert_eq!(unix_skb_truesize(1), 512 + 256);
        assert_eq!(unix_skb_truesize(200), 1024 + 256);
    }

    #[test]
    fn a_unix_message_is_paid_half_by_its_sender_and_half_by_its_reader() {
        use crate::workload::program::ChannelKind;
        let costs = HwCosts {
            unix_msg_ns: 701,
            ..HwCosts::default()
        };
        let m = CostModel::new(&costs);
        let (tx, rx) = (m.msg(ChannelKind::Unix), m.msg_rx(ChannelKind::Unix));
        assert_eq!(tx + rx, 701);
        assert_eq!((tx, rx), (351, 350));
        assert_eq!(
            (m.msg(ChannelKind::Pipe), m.msg_rx(ChannelKind::Pipe)),
            (0, 0)
        );
        assert_eq!(m.msg_rx(ChannelKind::Tcp), 0);
    }

    #[test]
    fn costs_by_distance_and_working_set() {
        let topo = Topology::from_spec(&preset("ivb-ep-2s").unwrap()).unwrap();
        let m = CostModel::new(&topo.costs);
        // 256 KiB = 4096 lines; x 15 ns (same LLC) / MLP 8 = 7680 ns.
        assert_eq!(m.cache_refill(&topo, 256, 0, 1), 7680);
        assert_eq!(m.cache_refill(&topo, 256, 0, 10), 4096 * 140 / 8);
        assert_eq!(m.cache_refill(&topo, 256, 3, 3), 0);
        // 100 bytes = 2 lines across nodes: 200 + 2 x 140 / 8.
        assert_eq!(
            m.read_transfer(&topo, ChannelKind::Pipe, 100, (0, 0), 10),
            235
        );
        // The writer's side: the shared state only, none on its own CPU.
        assert_eq!(m.write_transfer(&topo, ChannelKind::Pipe, 0, 10), 200);
        assert_eq!(
            m.write_transfer(&topo, ChannelKind::Pipe, 0, 1),
            topo.costs.transfer_ns[1]
        );
        assert_eq!(m.write_transfer(&topo, ChannelKind::Pipe, 4, 4), 0);
        // An AF_UNIX message's skb lines, one miss each at the distance;
        // none for a pipe (above) or on one CPU.
        let miss = topo.costs.miss_ns[3];
        assert_eq!(
            m.read_transfer(&topo, ChannelKind::Unix, 100, (0, 0), 10),
            235 + UNIX_SKB_RX_LINES * miss
        );
        assert_eq!(
            m.write_transfer(&topo, ChannelKind::Unix, 0, 10),
            200 + UNIX_SKB_TX_LINES * miss
        );
        assert_eq!(m.read_transfer(&topo, ChannelKind::Unix, 100, (4, 4), 4), 0);
        // Data written on the reader's CPU, the channel last written across
        // nodes: only the shared state comes from afar, and the other way
        // round only the data and the skb.
        assert_eq!(
            m.read_transfer(&topo, ChannelKind::Unix, 100, (0, 10), 10),
            200
        );
        assert_eq!(
            m.read_transfer(&topo, ChannelKind::Unix, 100, (10, 0), 10),
            35 + UNIX_SKB_RX_LINES * miss
        );
        // Loopback TCP: its skb, and on the write the reader's socket
        // lines; UDP is not counted.
        assert_eq!(
            m.read_transfer(&topo, ChannelKind::Tcp, 100, (0, 0), 10),
            235 + TCP_SKB_RX_LINES * miss
        );
        assert_eq!(
            m.write_transfer(&topo, ChannelKind::Tcp, 0, 10),
            200 + (1 + TCP_RX_SOCK_LINES) * miss
        );
        assert_eq!(
            m.read_transfer(&topo, ChannelKind::Udp, 100, (0, 0), 10),
            235
        );
        assert_eq!(m.write_transfer(&topo, ChannelKind::Udp, 0, 10), 200);
        assert_eq!(m.smt_rate(1), 1024);
        assert_eq!(m.smt_rate(2), 640);
    }

    #[test]
    fn copies_share_the_nodes_bandwidth_only_when_they_exceed_it() {
        let topo = Topology::from_spec(&preset("ivb-ep-2s").unwrap()).unwrap();
        let m = CostModel::new(&topo.costs);
        // 37.5 GB/s per node is 18.75 GB/s of copying; a core alone copies
        // 1024 B per 60 ns (17.1 GB/s): 1125 work per ns against 1024.
        assert_eq!(m.copy_cap(&[(1024, 1024)]), 1024);
        // Two whole copies share it: 1125 / 2.
        assert_eq!(m.copy_cap(&[(1024, 1024), (1024, 1024)]), 562);
        // Two calls copying half of their work fit.
        assert_eq!(m.copy_cap(&[(512, 1024), (512, 1024)]), 1024);
        assert!(m.copies_fit(1024));
        assert!(!m.copies_fit(2048));
    }

    #[test]
    fn a_crowded_llc_evicts_part_of_each_working_set() {
        let topo = Topology::from_spec(&preset("ivb-ep-2s").unwrap()).unwrap();
        let m = CostModel::new(&topo.costs);
        // 25 MB of L3: 20 MB of working sets fit, 50 MB lose half.
        assert_eq!(m.evicted(20 * 1024), 0);
        assert_eq!(m.evicted(50 * 1024), 512);
        // The same fraction in bytes, for copies between buffers held there:
        // 80 x 128 KiB of socket buffers fit, 50 MB overflow by half.
        assert_eq!(m.llc_overflow(80 * 128 * 1024), 0);
        assert_eq!(m.llc_overflow(50 * 1024 * 1024), 512);
        // Nothing evicted: the plain refill (none on the same CPU).
        assert_eq!(m.refill_with_eviction(&topo, 256, 0, 1, 0), 7680);
        assert_eq!(m.refill_with_eviction(&topo, 256, 3, 3, 0), 0);
        // Half evicted on the same CPU: 2048 lines from memory (85 ns) / 8.
        assert_eq!(m.refill_with_eviction(&topo, 256, 3, 3, 512), 2048 * 85 / 8);
    }

    #[test]
    fn deeper_idle_states_need_longer_predicted_idle() {
        let topo = Topology::from_spec(&preset("ivb-ep-2s").unwrap()).unwrap();
        let m = CostModel::new(&topo.costs);
        // Ivy Town: C1 1 us, C1E 80 us, C3 156 us, C6 300 us residency.
        assert_eq!(m.pick_cstate(1_000), 0);
        assert_eq!(m.pick_cstate(50_000), 0);
        assert_eq!(m.pick_cstate(100_000), 1);
        assert_eq!(m.pick_cstate(200_000), 2);
        assert_eq!(m.pick_cstate(5_000_000), 3);
        assert_eq!(m.idle_exit(0), 1_000);
        assert_eq!(m.idle_exit(3), 82_000);
        // All MWAIT states: woken by a write, no IPI.
        assert!((0..4).all(|i| m.idle_polls(i)));
        // The guest's HLT needs the IPI; past the table nothing polls.
        let guest = Topology::from_spec(&preset("kvm-2vcpu").unwrap()).unwrap();
        assert!(!CostModel::new(&guest.costs).idle_polls(0));
        assert!(!m.idle_polls(4));
    }

    #[test]
    fn a_polling_idle_cpu_is_woken_by_the_flags_lines_transfer() {
        let topo = Topology::from_spec(&preset("ivb-ep-2s").unwrap()).unwrap();
        let m = CostModel::new(&topo.costs);
        // CPUs 0 and 20 are SMT siblings, 0 and 1 share the LLC, 0 and 10
        // are on different nodes.
        assert_eq!(m.polling_wake(&topo, 0, 20), 5);
        assert_eq!(m.polling_wake(&topo, 0, 1), 15);
        assert_eq!(m.polling_wake(&topo, 0, 10), 140);
        assert_eq!(m.polling_wake(&topo, 3, 3), 1);
    }
}

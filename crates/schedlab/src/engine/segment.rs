//! Segments: stretches of user or kernel work on a CPU, their speed (a
//! busy SMT sibling, copies sharing a node's memory bandwidth), and their
//! end.

use super::cpu::{Acct, SegKind, Segment};
use super::task::Pending;
use super::{Event, Sim};
use crate::cost::{COPY_SHARE_ONE, WORK_SCALE};

impl Sim {
    /// Threads of `cpu`'s core running a segment, kept by start_work and
    /// seg_ended (counting the siblings read a cache line per thread).
    #[inline]
    pub(crate) fn busy_in_core(&self, cpu: usize) -> usize {
        self.occupancy.core_busy[self.occupancy.core_of[cpu]] as usize
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
        let held = self.occupancy.llc_ws_kib[llc] as u128 * 1024
            + self.occupancy.llc_buf_bytes[llc] as u128;
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
        let task = self.curr_of(cpu).expect("a segment needs a running task");
        self.tasks[task].pending = pending;
        let old_share = self.cpus[cpu].seg.map(|s| s.copy_share);
        let was_busy = old_share.is_some();
        let node = self.topo.cpus[cpu].node;
        let copies_before = self.occupancy.copies[node];
        self.occupancy.copies[node] =
            self.occupancy.copies[node] - old_share.unwrap_or(0) + copy_share;
        let copies_after = self.occupancy.copies[node];
        if !was_busy {
            self.occupancy.core_busy[self.occupancy.core_of[cpu]] += 1;
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
    pub(super) fn seg_rate(&self, cpu: usize, copy_share: u64, nbusy: usize) -> u64 {
        let smt = self.cost.smt_rate(nbusy);
        if copy_share == 0 {
            return smt;
        }
        let copy = smt.min(self.occupancy.copy_cap[self.topo.cpus[cpu].node]);
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
    pub(super) fn copies_changed(&mut self, node: usize) {
        let cap = if self.cost.copies_fit(self.occupancy.copies[node]) {
            WORK_SCALE
        } else {
            let mut segs = std::mem::take(&mut self.occupancy.copy_segs);
            segs.clear();
            for &cpu in &self.occupancy.node_cpus[node] {
                if let Some(seg) = self.cpus[cpu].seg {
                    if seg.copy_share > 0 {
                        let smt = self.cost.smt_rate(self.busy_in_core(cpu));
                        segs.push((seg.copy_share, smt));
                    }
                }
            }
            let cap = self.cost.copy_cap(&segs);
            self.occupancy.copy_segs = segs;
            cap
        };
        if cap == self.occupancy.copy_cap[node] {
            return;
        }
        self.occupancy.copy_cap[node] = cap;
        for i in 0..self.occupancy.node_cpus[node].len() {
            let cpu = self.occupancy.node_cpus[node][i];
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
    pub(super) fn rerate(&mut self, cpu: usize, rate: u64) {
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
    pub(super) fn seg_ended(&mut self, cpu: usize, copy_share: u64) {
        self.occupancy.core_busy[self.occupancy.core_of[cpu]] -= 1;
        if copy_share > 0 {
            let node = self.topo.cpus[cpu].node;
            self.occupancy.copies[node] -= copy_share;
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
    pub(super) fn busy_changed(&mut self, cpu: usize, busy: bool) {
        self.cpus[cpu].busy_notified = busy;
        if self.occupancy.siblings[cpu].len() < 2 {
            return;
        }
        let nbusy = self.busy_in_core(cpu);
        for i in 0..self.occupancy.siblings[cpu].len() {
            let s = self.occupancy.siblings[cpu][i];
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
        let task = self.curr_of(cpu).expect("a finished segment had a task");
        let pending = std::mem::replace(&mut self.tasks[task].pending, Pending::None);
        self.apply_pending(cpu, task, pending);
    }
}

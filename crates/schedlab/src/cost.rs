//! The hardware cost model: every cost the engine charges comes from here,
//! computed from the machine's [`HwCosts`] and the distance between CPUs.

use crate::topology::{CpuDistance, HwCosts, Topology};

/// Work is measured in nanoseconds at full speed times this scale, so that a
/// CPU slowed by a busy SMT sibling progresses at a fraction of it.
pub const WORK_SCALE: u64 = 1024;
const CACHE_LINE: u64 = 64;

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

    /// Per-message socket work on the sending side, by channel kind.
    pub fn msg(&self, kind: crate::workload::program::ChannelKind) -> u64 {
        use crate::workload::program::ChannelKind::*;
        match kind {
            Pipe => 0,
            Unix => self.costs.unix_msg_ns,
            Tcp | Udp => self.costs.net_msg_ns,
        }
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

    /// The waker's part of try_to_wake_up.
    pub fn wakeup(&self) -> u64 {
        self.costs.wakeup_ns
    }

    /// A load_balance's time on the balancing CPU: a cache miss for each
    /// CPU whose run-queue statistics it reads (at that CPU's distance), for
    /// each task it examines on the busiest queue, and two for taking the
    /// pair of run-queue locks (the lines bounce to this CPU); each task
    /// moved costs what a wakeup's enqueue and preemption check cost.
    pub fn balance(&self, topo: &Topology, work: &crate::sched::balance::LbWork) -> u64 {
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

    /// From sending an IPI to the handler running on the target.
    pub fn ipi_latency(&self) -> u64 {
        self.costs.ipi_ns + self.costs.virt_ipi_extra_ns
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

    /// Reading `bytes` a task on `from` wrote: a fixed cost for the buffer's
    /// shared state plus the data's lines.
    pub fn data_transfer(&self, topo: &Topology, bytes: u64, from: usize, to: usize) -> u64 {
        let d = topo.distance(from, to);
        let Some(i) = d.cost_index() else { return 0 };
        let lines = bytes.div_ceil(CACHE_LINE);
        self.costs.transfer_ns[i] + lines * self.costs.miss_ns[i] / self.costs.mlp as u64
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

    #[test]
    fn costs_by_distance_and_working_set() {
        let topo = Topology::from_spec(&preset("ivb-ep-2s").unwrap()).unwrap();
        let m = CostModel::new(&topo.costs);
        // 256 KiB = 4096 lines; x 15 ns (same LLC) / MLP 8 = 7680 ns.
        assert_eq!(m.cache_refill(&topo, 256, 0, 1), 7680);
        assert_eq!(m.cache_refill(&topo, 256, 0, 10), 4096 * 140 / 8);
        assert_eq!(m.cache_refill(&topo, 256, 3, 3), 0);
        // 100 bytes = 2 lines across nodes: 200 + 2 x 140 / 8.
        assert_eq!(m.data_transfer(&topo, 100, 0, 10), 235);
        assert_eq!(m.smt_rate(1), 1024);
        assert_eq!(m.smt_rate(2), 640);
    }

    #[test]
    fn deeper_idle_states_need_longer_predicted_idle() {
        let topo = Topology::from_spec(&preset("ivb-ep-2s").unwrap()).unwrap();
        let m = CostModel::new(&topo.costs);
        // Haswell: C1 2 us, C1E 20 us, C3 100 us, C6 400 us residency.
        assert_eq!(m.pick_cstate(1_000), 0);
        assert_eq!(m.pick_cstate(50_000), 1);
        assert_eq!(m.pick_cstate(150_000), 2);
        assert_eq!(m.pick_cstate(5_000_000), 3);
        assert_eq!(m.idle_exit(3), 133_000);
    }
}

//! What the speed of a CPU's work depends on besides the CPU itself: how
//! many threads of its core run a segment (SMT), the copies in flight on
//! its node (memory bandwidth), and what each LLC holds (working sets and
//! buffered channel data). `segment.rs` reads and updates it as segments
//! start and end.

use crate::topology::Topology;

#[derive(Debug, Clone)]
pub(super) struct Occupancy {
    /// SMT siblings of each CPU (itself included).
    pub siblings: Vec<Vec<usize>>,
    /// Each CPU's core, numbered by its lowest thread (an index into
    /// `core_busy`).
    pub core_of: Vec<usize>,
    /// Threads running a segment, per core (see `core_of`).
    pub core_busy: Vec<u32>,
    /// Each node's CPUs.
    pub node_cpus: Vec<Vec<usize>>,
    /// Copies in flight on each node's CPUs (sharing its memory
    /// bandwidth), in 1/1024: a segment that copies for part of its work
    /// counts as that part of a copy.
    pub copies: Vec<u64>,
    /// Each node's copying speed (work per ns x WORK_SCALE) from its
    /// memory bandwidth: WORK_SCALE while the copies fit in it.
    pub copy_cap: Vec<u64>,
    /// Per LLC, the working sets (KiB) of the tasks whose data it holds
    /// (their warm CPU is one of its CPUs).
    pub llc_ws_kib: Vec<u64>,
    /// Per LLC, the bytes buffered in channels whose last reader or last
    /// writer ran on one of its CPUs.
    pub llc_buf_bytes: Vec<u64>,
    /// Per CPU, the truesize of the AF_UNIX skbs it wrote that are still
    /// queued unread: what competes with them for its core's caches
    /// (`cost::unix_backlog`). Empty, and not kept, on a machine without
    /// the curve.
    pub unix_backlog: Vec<u64>,
    /// Scratch: the copying segments of a node (share, thread speed).
    pub copy_segs: Vec<(u64, u64)>,
}

impl Occupancy {
    /// The unix backlog of `cpu`'s core: its SMT siblings share its caches.
    pub fn core_unix_backlog(&self, cpu: usize) -> u64 {
        if self.unix_backlog.is_empty() {
            return 0;
        }
        self.siblings[cpu]
            .iter()
            .map(|&c| self.unix_backlog[c])
            .sum()
    }

    /// An idle machine: nothing running, copying or cached.
    pub fn new(topo: &Topology) -> Self {
        let n = topo.ncpus();
        let siblings: Vec<Vec<usize>> =
            (0..n).map(|c| topo.core_span(c).iter().collect()).collect();
        let core_of = siblings.iter().map(|s| s[0]).collect();
        let mut node_cpus = vec![Vec::new(); topo.nnodes()];
        for (c, info) in topo.cpus.iter().enumerate() {
            node_cpus[info.node].push(c);
        }
        let llcs = topo.cpus.iter().map(|c| c.llc + 1).max().unwrap_or(0);
        Occupancy {
            siblings,
            core_of,
            core_busy: vec![0; n],
            copies: vec![0; node_cpus.len()],
            copy_cap: vec![crate::cost::WORK_SCALE; node_cpus.len()],
            node_cpus,
            llc_ws_kib: vec![0; llcs],
            llc_buf_bytes: vec![0; llcs],
            unix_backlog: if topo.costs.unix_backlog.is_empty() {
                Vec::new()
            } else {
                vec![0; n]
            },
            copy_segs: Vec::new(),
        }
    }
}

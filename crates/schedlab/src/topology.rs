//! Machines: NUMA nodes with a SLIT distance matrix, packages, LLCs, cores and
//! SMT threads, per-CPU capacity, and the hardware costs that belong to the
//! machine. A [`MachineSpec`] is what a user writes (or a preset, or an `lscpu
//! -p` import gives); [`Topology`] is the validated, indexed form the rest of
//! the core uses.

use crate::cpuset::CpuSet;
use crate::error::Concern;
use crate::error::{Error, Result};
use crate::limits;
use serde::{Deserialize, Serialize};

/// A machine as written by a user or a preset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineSpec {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub layout: Layout,
    /// SLIT distances between nodes (10 on the diagonal). Omitted: 10 local, 20 remote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distances: Option<Vec<Vec<u32>>>,
    #[serde(default)]
    pub costs: HwCosts,
    /// Set by `schedlab calibrate`: the measurements behind `costs`. Not
    /// read by the simulator. The page never keeps it (a machine JSON
    /// pasted there drops it), so in wasm it is read past unparsed and
    /// never written: its parser would weigh on the page's first load.
    #[cfg_attr(
        not(target_arch = "wasm32"),
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    #[cfg_attr(
        target_arch = "wasm32",
        serde(
            default,
            skip_serializing,
            deserialize_with = "crate::calibration::read_past"
        )
    )]
    pub calibration: Option<crate::calibration::Calibration>,
}

/// Where the CPUs are: a regular shape, or an explicit list (from `lscpu -p`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Layout {
    Shape(Shape),
    Cpus(Vec<CpuPlace>),
}

/// A regular machine: every node has the same packages, LLCs, cores, threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shape {
    pub nodes: u32,
    pub packages_per_node: u32,
    pub llcs_per_package: u32,
    pub cores_per_llc: u32,
    pub threads_per_core: u32,
    #[serde(default)]
    pub numbering: Numbering,
}

/// How Linux numbers SMT siblings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Numbering {
    /// Thread t of core c is CPU c + t x cores (Intel and AMD servers: 0 and 20 are siblings).
    #[default]
    SiblingsSplit,
    /// Thread t of core c is CPU c x threads + t (0 and 1 are siblings).
    Interleaved,
}

/// One CPU of an explicit layout. Ids are as the OS reports them; they only
/// need to be equal for CPUs that share the thing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpuPlace {
    pub cpu: u32,
    pub node: u32,
    pub package: u32,
    pub llc: u32,
    pub core: u32,
}

impl CpuPlace {
    /// The sort key of CPU lists: one function (not a closure per call
    /// site), so the page carries one copy of the sort.
    fn cpu_number(&self) -> u32 {
        self.cpu
    }
}

/// One idle state (C-state) of the machine's idle driver.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CState {
    pub name: String,
    /// Time from the wakeup event to the CPU running code again.
    pub exit_latency_ns: u64,
    /// The shortest idle period for which entering this state pays off.
    pub target_residency_ns: u64,
    /// Entered with MWAIT on the idle task's flags word, which it marks
    /// polling (TIF_POLLING_NRFLAG, mwait_idle_with_hints): a waker sets
    /// need_resched there and the write ends the wait, no IPI sent
    /// (resched_curr, set_nr_if_polling; v4.15 and v6.5 on x86). HLT and
    /// I/O-port states need the IPI. Unless said otherwise a state polls,
    /// as intel_idle's all do.
    #[serde(default = "polls_by_default", skip_serializing_if = "is_true")]
    pub polls: bool,
}

fn is_zero_u64(v: &u64) -> bool {
    *v == 0
}

fn polls_by_default() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

/// The hardware costs that belong to a machine. Every figure is a tunable;
/// the defaults and their sources are in docs/costs.md.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HwCosts {
    /// Core clock, for converting workload cycles to time.
    pub clock_mhz: u32,
    /// Entering and leaving the kernel for one system call.
    pub syscall_ns: u64,
    /// Copying data into or out of a kernel buffer, per KiB.
    pub copy_ns_per_kib: u64,
    /// Creating a process (fork) in the parent.
    pub fork_ns: u64,
    /// The loopback network stack per TCP/UDP message, the send path and
    /// the receive softirq together, both on the sender's CPU (a pure ACK
    /// costs the same, on the reader's CPU); split by `cost::NET_RX_SHARE`.
    /// The presets' come from [`net_msg_ns_at`] at their clock.
    pub net_msg_ns: u64,
    /// The same for a loopback UDP datagram (no ACKs, a shorter path); the
    /// presets' from [`udp_msg_ns_at`].
    pub udp_msg_ns: u64,
    /// An AF_UNIX message's socket-buffer work, the sender's allocation and
    /// queueing and the reader's dequeue and free; split by
    /// `cost::UNIX_RX_SHARE`.
    pub unix_msg_ns: u64,
    /// A process context switch (address-space change included).
    pub context_switch_ns: u64,
    /// A switch between threads of one process.
    pub thread_switch_ns: u64,
    /// The waker's work in try_to_wake_up (enqueue, preemption check).
    pub wakeup_ns: u64,
    /// Checking one CPU while searching for an idle one (select_idle_sibling).
    pub scan_ns_per_cpu: u64,
    /// From sending a reschedule IPI to the remote handler running.
    pub ipi_ns: u64,
    /// Extra IPI cost in a guest (VM exit and injection); 0 on bare metal.
    pub virt_ipi_extra_ns: u64,
    /// The waker's own time for a wakeup that sends an IPI to another
    /// CPU, beyond a local wakeup's `wakeup_ns`: the remote queue's lines
    /// and the IPI's send. On bare metal an APIC write (not measured for
    /// the presets: 0); in a guest without IPI virtualization a VM exit
    /// the sending vCPU waits out. `schedlab calibrate` measures it.
    #[serde(skip_serializing_if = "is_zero_u64")]
    pub ipi_send_ns: u64,
    /// An IPI to a CPU that is running (not idle) beyond `ipi_ns`: in a
    /// guest without interrupt virtualization the host must force a
    /// running vCPU out of guest mode, where a halted one is only woken.
    /// `schedlab calibrate` measures it as a busy CPU's wakeup over an
    /// idle one's (0 where not slower); 0 on bare metal and the presets.
    #[serde(skip_serializing_if = "is_zero_u64")]
    pub ipi_running_extra_ns: u64,
    /// Idle states, shallowest first.
    pub cstates: Vec<CState>,
    /// Cache-miss latency by where the line comes from: [SMT sibling, same LLC, other LLC, other node].
    pub miss_ns: [u64; 4],
    /// Outstanding misses overlapped when refilling a working set.
    pub mlp: u32,
    /// Moving a small shared buffer (pipe, socket) between CPUs, by distance as `miss_ns`.
    pub transfer_ns: [u64; 4],
    /// Throughput of a core with both SMT threads busy, in percent of one thread alone.
    pub smt_throughput_pct: u32,
    /// Sustained memory bandwidth of one NUMA node, MB/s, as STREAM counts
    /// it (a copy moves each byte twice: read and write). Every copy in
    /// flight on the node's CPUs shares it.
    pub mem_bw_mb_s: u64,
    /// Capacity of one last-level cache, KiB. When the working sets of the
    /// tasks whose data it holds add up to more, a task coming back to it
    /// finds part of its working set evicted.
    pub llc_kib: u64,
    /// Latency of one PAUSE instruction (a spin-wait hint), cycles: about
    /// 10 before Skylake, about 140 from Skylake on (Intel's optimization
    /// manual). Spinning mutexes (`spin_lock`) delay in PAUSEs.
    pub pause_cycles: u64,
    /// An AF_UNIX message read on the core that wrote it, by how much it
    /// had queued behind it: the extra time of its write and read when the
    /// skbs written on that core and not yet read add up to `kib` (their
    /// truesize), over the same with one message in flight. Points by
    /// growing `kib`, linear between them, from 0 at 0 KiB, flat past the
    /// last. Deep socket queues outgrow the core's private caches, and
    /// each skb is then read from further away. `schedlab calibrate`
    /// measures it; empty (nothing charged) on the presets, whose boxes
    /// were not measured.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unix_backlog: Vec<BacklogCost>,
    /// The SLUB caches an AF_UNIX message's skb comes from, as the
    /// machine's kernel sets them (/sys/kernel/slab). With two CPUs
    /// messaging at once, slabs pass between them through the node's
    /// partial list, and a recycled object's lines, a slab's own line and
    /// the list's lock then come from another core's cache, each at
    /// `miss_ns` (docs/fidelity.md). `schedlab calibrate` reads them; none
    /// (nothing charged) on the presets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skb_slabs: Option<SkbSlabs>,
}

/// [`HwCosts::skb_slabs`]: the skb's head cache and the kmalloc caches
/// its data may come from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkbSlabs {
    /// struct sk_buff's own cache (skbuff_head_cache).
    pub head: SlabCache,
    /// The kmalloc caches a linear skb's data comes from, by growing
    /// object size; a message whose data and skb_shared_info fit none of
    /// them pays for its head only.
    pub data: Vec<SlabCache>,
}

/// One SLUB cache as /sys/kernel/slab/NAME shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlabCache {
    pub name: String,
    /// Bytes an object takes (`object_size`).
    pub object_size: u32,
    /// Objects in one slab (`objs_per_slab`).
    pub objs_per_slab: u32,
    /// Free objects a CPU's partial list keeps before it spills to the
    /// node (`cpu_partial`; SLUB counts them as slabs half full).
    pub cpu_partial: u32,
    /// Partial slabs a node keeps even when empty (`min_partial`).
    pub min_partial: u32,
}

/// One point of [`HwCosts::unix_backlog`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BacklogCost {
    /// Queued skbs written on the core, KiB of truesize.
    pub kib: u64,
    /// A message's extra write and read time at that backlog.
    pub ns: u64,
}

/// The loopback network stack's cycles per message: loopback TCP_RR at
/// 200-243 K transactions/s, about 4-5 us a round trip of two messages, on
/// a 4 GHz desktop (LKML, 2023): 1.5 us at 4 GHz (docs/costs.md).
const NET_MSG_CYCLES: u64 = 6_000;

/// `net_msg_ns` on a core clocked at `clock_mhz`: the stack's path is the
/// same instructions on any x86 of the presets, so its time scales with
/// the clock (a first-order rule: per-clock speed and the kernel version's
/// path length are not modelled). A calibrated machine measures its own.
pub fn net_msg_ns_at(clock_mhz: u32) -> u64 {
    NET_MSG_CYCLES * 1000 / u64::from(clock_mhz.max(1))
}

/// A loopback UDP datagram's stack work against a TCP message's, in
/// percent: measured on this project's 2-vCPU KVM guest (kernel 6.18) as
/// native 1-byte ping-pongs between two processes on one vCPU, 5 runs of
/// 100,000 round trips each, (UDP - pipe) / (TCP - pipe) round-trip time
/// = 0.65 to 0.71 (docs/costs.md): 68.
const UDP_OF_TCP_PCT: u64 = 68;

/// `udp_msg_ns` on a core clocked at `clock_mhz`, as [`net_msg_ns_at`].
pub fn udp_msg_ns_at(clock_mhz: u32) -> u64 {
    NET_MSG_CYCLES * UDP_OF_TCP_PCT / 100 * 1000 / u64::from(clock_mhz.max(1))
}

impl Default for HwCosts {
    fn default() -> Self {
        HwCosts {
            clock_mhz: 3000,
            syscall_ns: 100,
            copy_ns_per_kib: 60,
            fork_ns: 50_000,
            // The measured 1.5 us as it stands (not `net_msg_ns_at(3000)`):
            // saved experiments and links that leave the cost out keep
            // their meaning.
            net_msg_ns: net_msg_ns_at(4000),
            udp_msg_ns: udp_msg_ns_at(4000),
            unix_msg_ns: 700,
            context_switch_ns: 1200,
            thread_switch_ns: 800,
            wakeup_ns: 300,
            scan_ns_per_cpu: 20,
            ipi_ns: 1200,
            virt_ipi_extra_ns: 0,
            ipi_send_ns: 0,
            ipi_running_extra_ns: 0,
            cstates: haswell_cstates(),
            miss_ns: [5, 15, 85, 140],
            mlp: 8,
            transfer_ns: [10, 40, 120, 200],
            smt_throughput_pct: 125,
            mem_bw_mb_s: 37_500,
            llc_kib: 25 * 1024,
            pause_cycles: 10,
            unix_backlog: Vec::new(),
            skb_slabs: None,
        }
    }
}

/// An idle state left by an interrupt (HLT, an I/O-port read): waking it
/// takes an IPI.
fn cstate(name: &str, exit_us: u64, residency_us: u64) -> CState {
    CState {
        name: name.to_string(),
        exit_latency_ns: exit_us * 1000,
        target_residency_ns: residency_us * 1000,
        polls: false,
    }
}

/// An intel_idle state: MWAIT, woken by the write to its flags word.
fn mwait(name: &str, exit_us: u64, residency_us: u64) -> CState {
    CState {
        polls: true,
        ..cstate(name, exit_us, residency_us)
    }
}

/// intel_idle's Haswell table (us): C1 2/2, C1E 10/20, C3 33/100, C6 133/400.
fn haswell_cstates() -> Vec<CState> {
    vec![
        mwait("C1", 2, 2),
        mwait("C1E", 10, 20),
        mwait("C3", 33, 100),
        mwait("C6", 133, 400),
    ]
}

/// intel_idle's Ivy Town (Ivy Bridge-EP, 1 and 2 sockets) table (us):
/// C1 1/1, C1E 10/80, C3 59/156, C6 82/300.
fn ivt_cstates() -> Vec<CState> {
    vec![
        mwait("C1", 1, 1),
        mwait("C1E", 10, 80),
        mwait("C3", 59, 156),
        mwait("C6", 82, 300),
    ]
}

/// How far apart two CPUs are, for the cost model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CpuDistance {
    Same,
    SmtSibling,
    SameLlc,
    OtherLlc,
    OtherNode,
}

impl CpuDistance {
    /// Index into the per-distance cost arrays; `Same` costs nothing and has none.
    pub fn cost_index(self) -> Option<usize> {
        match self {
            CpuDistance::Same => None,
            CpuDistance::SmtSibling => Some(0),
            CpuDistance::SameLlc => Some(1),
            CpuDistance::OtherLlc => Some(2),
            CpuDistance::OtherNode => Some(3),
        }
    }
}

/// Where one CPU sits; ids are dense, 0-based and machine-wide.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CpuInfo {
    pub node: usize,
    pub package: usize,
    pub llc: usize,
    pub core: usize,
}

/// A validated machine.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Topology {
    pub name: String,
    pub description: String,
    pub cpus: Vec<CpuInfo>,
    pub distances: Vec<Vec<u32>>,
    pub costs: HwCosts,
    /// Each CPU's SMT siblings and LLC, and each node's CPUs, computed once:
    /// the wakeup scan asks on every wakeup, building the domains per CPU.
    #[serde(skip)]
    core_spans: Vec<CpuSet>,
    #[serde(skip)]
    llc_spans: Vec<CpuSet>,
    #[serde(skip)]
    node_spans: Vec<CpuSet>,
    #[serde(skip)]
    smt_threads: usize,
}

impl Topology {
    pub fn from_spec(spec: &MachineSpec) -> Result<Topology> {
        let places = match &spec.layout {
            Layout::Shape(shape) => shape_places(shape)?,
            Layout::Cpus(list) => list.clone(),
        };
        let cpus = index_places(&places)?;
        let nodes = cpus.iter().map(|c| c.node).max().map_or(0, |n| n + 1);
        limits::NODES.check(Concern::Machine, "machine.nodes", nodes as u64)?;
        let distances = match &spec.distances {
            Some(d) => {
                validate_distances(d, nodes)?;
                d.clone()
            }
            None => (0..nodes)
                .map(|a| (0..nodes).map(|b| if a == b { 10 } else { 20 }).collect())
                .collect(),
        };
        validate_costs(&spec.costs)?;
        let mut topo = Topology {
            name: spec.name.clone(),
            description: spec.description.clone(),
            cpus,
            distances,
            costs: spec.costs.clone(),
            core_spans: Vec::new(),
            llc_spans: Vec::new(),
            node_spans: Vec::new(),
            smt_threads: 1,
        };
        let per_cpu = |sets: Vec<CpuSet>, key: fn(&CpuInfo) -> usize| -> Vec<CpuSet> {
            topo.cpus.iter().map(|c| sets[key(c)]).collect()
        };
        let cores = per_cpu(topo.spans_by(|c| c.core), |c| c.core);
        let llcs = per_cpu(topo.spans_by(|c| c.llc), |c| c.llc);
        topo.node_spans = topo.spans_by(|c| c.node);
        topo.core_spans = cores;
        topo.llc_spans = llcs;
        topo.smt_threads = topo.core_spans.iter().map(|s| s.len()).max().unwrap_or(1);
        Ok(topo)
    }

    pub fn ncpus(&self) -> usize {
        self.cpus.len()
    }

    pub fn nnodes(&self) -> usize {
        self.distances.len()
    }

    pub fn all_cpus(&self) -> CpuSet {
        CpuSet::first_n(self.ncpus())
    }

    /// The CPUs of each value of `key` (indexed by it), in one pass.
    fn spans_by(&self, key: fn(&CpuInfo) -> usize) -> Vec<CpuSet> {
        let n = self.cpus.iter().map(|c| key(c) + 1).max().unwrap_or(0);
        let mut sets = vec![CpuSet::new(); n];
        for (i, c) in self.cpus.iter().enumerate() {
            sets[key(c)].insert(i);
        }
        sets
    }

    fn span_where(&self, pred: impl Fn(&CpuInfo) -> bool) -> CpuSet {
        self.cpus
            .iter()
            .enumerate()
            .filter(|(_, c)| pred(c))
            .map(|(i, _)| i)
            .collect()
    }

    /// The SMT siblings of `cpu`, itself included.
    pub fn core_span(&self, cpu: usize) -> CpuSet {
        self.core_spans[cpu]
    }

    /// The CPUs sharing `cpu`'s last-level cache.
    pub fn llc_span(&self, cpu: usize) -> CpuSet {
        self.llc_spans[cpu]
    }

    pub fn package_span(&self, cpu: usize) -> CpuSet {
        let pkg = self.cpus[cpu].package;
        self.span_where(|c| c.package == pkg)
    }

    pub fn node_span(&self, cpu: usize) -> CpuSet {
        self.node_spans[self.cpus[cpu].node]
    }

    /// CPUs on nodes within SLIT distance `max_distance` of `cpu`'s node.
    pub fn nodes_within(&self, cpu: usize, max_distance: u32) -> CpuSet {
        let row = &self.distances[self.cpus[cpu].node];
        (0..self.nnodes())
            .filter(|&n| row[n] <= max_distance)
            .fold(CpuSet::new(), |acc, n| acc.union(&self.node_spans[n]))
    }

    /// Distinct SLIT distances, ascending (the local 10 first).
    pub fn distinct_distances(&self) -> Vec<u32> {
        let mut d: Vec<u32> = self.distances.iter().flatten().copied().collect();
        d.sort_unstable();
        d.dedup();
        d
    }

    pub fn smt_threads(&self) -> usize {
        self.smt_threads
    }

    pub fn distance(&self, a: usize, b: usize) -> CpuDistance {
        let (x, y) = (&self.cpus[a], &self.cpus[b]);
        if a == b {
            CpuDistance::Same
        } else if x.core == y.core {
            CpuDistance::SmtSibling
        } else if x.llc == y.llc {
            CpuDistance::SameLlc
        } else if x.node == y.node {
            CpuDistance::OtherLlc
        } else {
            CpuDistance::OtherNode
        }
    }

    /// One line: "ivb-ep-2s: 40 CPUs, 2 nodes, 2 packages, 2 LLCs, 20 cores, 2 threads/core".
    pub fn summary(&self) -> String {
        let count = |f: fn(&CpuInfo) -> usize| {
            let mut v: Vec<usize> = self.cpus.iter().map(f).collect();
            v.sort_unstable();
            v.dedup();
            v.len()
        };
        format!(
            "{}: {} CPUs, {} nodes, {} packages, {} LLCs, {} cores, {} threads/core",
            self.name,
            self.ncpus(),
            self.nnodes(),
            count(|c| c.package),
            count(|c| c.llc),
            count(|c| c.core),
            self.smt_threads()
        )
    }
}

fn shape_places(s: &Shape) -> Result<Vec<CpuPlace>> {
    for (what, v) in [
        ("shape.nodes", s.nodes),
        ("shape.packages_per_node", s.packages_per_node),
        ("shape.llcs_per_package", s.llcs_per_package),
        ("shape.cores_per_llc", s.cores_per_llc),
        ("shape.threads_per_core", s.threads_per_core),
    ] {
        limits::CPUS.check(Concern::Machine, what, v as u64)?;
    }
    let total = [
        s.packages_per_node,
        s.llcs_per_package,
        s.cores_per_llc,
        s.threads_per_core,
    ]
    .iter()
    .fold(s.nodes as u64, |acc, &v| acc * v as u64);
    limits::CPUS.check(
        Concern::Machine,
        "machine CPUs (nodes x packages x LLCs x cores x threads)",
        total,
    )?;
    let llcs_per_node = s.packages_per_node * s.llcs_per_package;
    let cores_per_node = llcs_per_node * s.cores_per_llc;
    let ncores = s.nodes * cores_per_node;
    let mut places = Vec::with_capacity(total as usize);
    for core in 0..ncores {
        let node = core / cores_per_node;
        let llc = core / s.cores_per_llc;
        let package = llc / s.llcs_per_package;
        for t in 0..s.threads_per_core {
            let cpu = match s.numbering {
                Numbering::SiblingsSplit => core + t * ncores,
                Numbering::Interleaved => core * s.threads_per_core + t,
            };
            places.push(CpuPlace {
                cpu,
                node,
                package,
                llc,
                core,
            });
        }
    }
    places.sort_by_key(CpuPlace::cpu_number);
    Ok(places)
}

/// Checks an explicit CPU list (numbered 0..n, each once, a core inside one
/// LLC, an LLC inside one package and node) and makes its ids dense.
fn index_places(places: &[CpuPlace]) -> Result<Vec<CpuInfo>> {
    limits::CPUS.check(Concern::Machine, "machine CPUs", places.len() as u64)?;
    let mut sorted = places.to_vec();
    sorted.sort_by_key(CpuPlace::cpu_number);
    for (i, p) in sorted.iter().enumerate() {
        if p.cpu as usize != i {
            let problem = if (p.cpu as usize) < i {
                format!("CPU {} is listed twice", p.cpu)
            } else {
                format!("CPU {i} is missing")
            };
            return Err(Error::invalid(
                Concern::Machine,
                format!(
                    "CPU numbers must be 0..{} with each listed once; {problem}",
                    places.len()
                ),
            ));
        }
    }
    let dense = |key: &dyn Fn(&CpuPlace) -> (u32, u32, u32, u32)| -> Vec<usize> {
        let mut keys: Vec<_> = sorted.iter().map(key).collect();
        keys.sort_unstable();
        keys.dedup();
        sorted
            .iter()
            .map(|p| keys.binary_search(&key(p)).expect("key was collected"))
            .collect()
    };
    // A core is identified by (node, package, llc, core) so that OS core ids
    // that restart per package stay distinct.
    let node = dense(&|p| (p.node, 0, 0, 0));
    let package = dense(&|p| (p.node, p.package, 0, 0));
    let llc = dense(&|p| (p.node, p.package, p.llc, 0));
    let core = dense(&|p| (p.node, p.package, p.llc, p.core));
    // The same OS package or LLC id on two nodes would be split above; say so
    // instead of silently inventing two packages.
    for (what, ids, get) in [
        (
            "package",
            &package,
            (|p: &CpuPlace| p.package) as fn(&CpuPlace) -> u32,
        ),
        ("LLC", &llc, |p: &CpuPlace| p.llc),
    ] {
        // The first CPU seen with each OS id, and where it sits.
        let mut first: std::collections::BTreeMap<u32, (usize, usize)> = Default::default();
        for (j, b) in sorted.iter().enumerate() {
            let &mut (i, id) = first.entry(get(b)).or_insert((j, ids[j]));
            if id != ids[j] {
                return Err(Error::invalid(
                    Concern::Machine,
                    format!(
                        "CPUs {} and {} share {what} {} but sit in different {}",
                        sorted[i].cpu,
                        b.cpu,
                        get(b),
                        if what == "package" {
                            "nodes"
                        } else {
                            "nodes or packages"
                        }
                    ),
                ));
            }
        }
    }
    Ok((0..sorted.len())
        .map(|i| CpuInfo {
            node: node[i],
            package: package[i],
            llc: llc[i],
            core: core[i],
        })
        .collect())
}

fn validate_distances(d: &[Vec<u32>], nodes: usize) -> Result<()> {
    if d.len() != nodes {
        return Err(Error::invalid(
            Concern::Machine,
            format!(
                "distances has {} rows but the machine has {} nodes",
                d.len(),
                nodes
            ),
        ));
    }
    for (i, row) in d.iter().enumerate() {
        if row.len() != nodes {
            return Err(Error::invalid(
                Concern::Machine,
                format!(
                "distances row {i} has {} entries; the matrix must be square ({nodes} x {nodes})",
                row.len()
            ),
            ));
        }
        if row[i] != 10 {
            return Err(Error::invalid(
                Concern::Machine,
                format!(
                    "distances[{i}][{i}] is {}; the diagonal must be 10 (local)",
                    row[i]
                ),
            ));
        }
        for (j, &v) in row.iter().enumerate() {
            if v != d[j][i] {
                return Err(Error::invalid(Concern::Machine, format!(
                    "distances[{i}][{j}] is {v} but distances[{j}][{i}] is {}; the matrix must be symmetric",
                    d[j][i]
                )));
            }
            if i != j && !(11..=254).contains(&v) {
                return Err(Error::invalid(
                    Concern::Machine,
                    format!("distances[{i}][{j}] is {v}; a remote distance must be 11..=254"),
                ));
            }
        }
    }
    Ok(())
}

fn validate_skb_slabs(slabs: &SkbSlabs) -> Result<()> {
    let caches = std::iter::once(&slabs.head).chain(&slabs.data);
    for (i, c) in caches.enumerate() {
        let fields = [
            ("object_size", c.object_size, 8, 1 << 20),
            ("objs_per_slab", c.objs_per_slab, 1, 4096),
            ("cpu_partial", c.cpu_partial, 0, 1_000_000),
            ("min_partial", c.min_partial, 0, 100_000),
        ];
        if let Some((field, v, lo, hi)) = fields.iter().find(|f| !(f.2..=f.3).contains(&f.1)) {
            let at = match i {
                0 => "head".to_string(),
                _ => format!("data[{}]", i - 1),
            };
            return Err(Error::invalid(
                Concern::Machine,
                format!(
                    "costs.skb_slabs.{at} ({}): {field} is {v}; it must be {lo}..={hi}",
                    c.name
                ),
            ));
        }
    }
    if let Some(i) =
        (1..slabs.data.len()).find(|&i| slabs.data[i].object_size <= slabs.data[i - 1].object_size)
    {
        return Err(Error::invalid(
            Concern::Machine,
            format!(
                "costs.skb_slabs.data[{i}].object_size is {}; the data caches must go by growing object size (the one before is {})",
                slabs.data[i].object_size,
                slabs.data[i - 1].object_size
            ),
        ));
    }
    Ok(())
}

fn validate_costs(c: &HwCosts) -> Result<()> {
    if c.clock_mhz == 0 {
        return Err(Error::invalid(
            Concern::Machine,
            "costs.clock_mhz must be at least 1",
        ));
    }
    if c.mlp == 0 {
        return Err(Error::invalid(
            Concern::Machine,
            "costs.mlp must be at least 1",
        ));
    }
    for (name, v) in [
        ("ipi_send_ns", c.ipi_send_ns),
        ("ipi_running_extra_ns", c.ipi_running_extra_ns),
    ] {
        if v > 1_000_000 {
            return Err(Error::invalid(
                Concern::Machine,
                format!("costs.{name} is {v}; it must be at most 1000000 (1 ms)"),
            ));
        }
    }
    if c.pause_cycles > 10_000 {
        return Err(Error::invalid(
            Concern::Machine,
            format!(
                "costs.pause_cycles is {}; it must be at most 10000",
                c.pause_cycles
            ),
        ));
    }
    if !(100..=200).contains(&c.smt_throughput_pct) {
        return Err(Error::invalid(
            Concern::Machine,
            format!(
                "costs.smt_throughput_pct is {}; it must be 100..=200",
                c.smt_throughput_pct
            ),
        ));
    }
    if c.mem_bw_mb_s == 0 {
        return Err(Error::invalid(
            Concern::Machine,
            "costs.mem_bw_mb_s must be at least 1 (MB/s of memory bandwidth per node)",
        ));
    }
    if c.llc_kib == 0 {
        return Err(Error::invalid(
            Concern::Machine,
            "costs.llc_kib must be at least 1 (KiB of last-level cache)",
        ));
    }
    for (i, pair) in c.unix_backlog.windows(2).enumerate() {
        if pair[1].kib <= pair[0].kib {
            return Err(Error::invalid(
                Concern::Machine,
                format!(
                    "costs.unix_backlog[{}].kib is {}; the points must go by growing kib (the one before is {})",
                    i + 1,
                    pair[1].kib,
                    pair[0].kib
                ),
            ));
        }
    }
    if let Some((i, p)) = c
        .unix_backlog
        .iter()
        .enumerate()
        .find(|(_, p)| p.ns > 1_000_000)
    {
        return Err(Error::invalid(
            Concern::Machine,
            format!(
                "costs.unix_backlog[{i}].ns is {}; a message's extra time must be at most 1000000 ns",
                p.ns
            ),
        ));
    }
    if let Some(slabs) = &c.skb_slabs {
        validate_skb_slabs(slabs)?;
    }
    for pair in c.cstates.windows(2) {
        if pair[1].exit_latency_ns < pair[0].exit_latency_ns {
            return Err(Error::invalid(
                Concern::Machine,
                format!(
                    "costs.cstates must go from shallow to deep; {} exits faster than {}",
                    pair[1].name, pair[0].name
                ),
            ));
        }
    }
    Ok(())
}

/// Parses `lscpu -p` (or `lscpu -p=CPU,CORE,SOCKET,NODE,CACHE`) output. The
/// header comment names the columns; the LLC is the last cache column.
pub fn parse_lscpu(name: &str, text: &str) -> Result<MachineSpec> {
    let mut columns: Option<Vec<String>> = None;
    let mut places = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line_no = n + 1;
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if let Some(comment) = line.strip_prefix('#') {
            let c = comment.trim();
            if c.to_ascii_uppercase().starts_with("CPU,") {
                columns = Some(
                    c.split(',')
                        .map(|s| s.trim().to_ascii_uppercase())
                        .collect(),
                );
            }
            continue;
        }
        let cols = columns.get_or_insert_with(|| {
            // lscpu -p's default columns when no header was pasted.
            [
                "CPU", "CORE", "SOCKET", "NODE", "", "L1D", "L1I", "L2", "L3",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect()
        });
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        let get = |col: &str| -> Result<Option<u32>> {
            let Some(idx) = cols.iter().position(|c| c == col) else {
                return Ok(None);
            };
            match fields.get(idx).copied().unwrap_or("") {
                "" | "-" => Ok(None),
                v => v.parse::<u32>().map(Some).map_err(|_| {
                    Error::invalid(
                        Concern::Machine,
                        format!(
                            "lscpu line {line_no}: column {col} is {:?}, not a number: {:?}",
                            crate::error::excerpt(v),
                            crate::error::excerpt(raw)
                        ),
                    )
                }),
            }
        };
        let need = |col: &str| -> Result<u32> {
            get(col)?.ok_or_else(|| {
                Error::invalid(
                    Concern::Machine,
                    format!(
                        "lscpu line {line_no}: column {col} is missing: {:?}",
                        crate::error::excerpt(raw)
                    ),
                )
            })
        };
        let cpu = need("CPU")?;
        let core = need("CORE")?;
        let package = need("SOCKET")?;
        let node = get("NODE")?.unwrap_or(0);
        // The cache column in `-p=...,CACHE` form is "L1d:L1i:L2:L3".
        let llc = if let Some(idx) = cols.iter().position(|c| c == "CACHE") {
            let v = fields.get(idx).copied().unwrap_or("");
            let last = v.rsplit(':').next().unwrap_or("");
            last.parse::<u32>().map_err(|_| {
                Error::invalid(
                    Concern::Machine,
                    format!(
                        "lscpu line {line_no}: column CACHE is {v:?}, not a cache id list: {raw:?}"
                    ),
                )
            })?
        } else {
            let mut llc = None;
            for c in ["L3", "L2", "L1D"] {
                if let Some(v) = get(c)? {
                    llc = Some(v);
                    break;
                }
            }
            llc.unwrap_or(package)
        };
        places.push(CpuPlace {
            cpu,
            node,
            package,
            llc,
            core,
        });
    }
    if places.is_empty() {
        return Err(Error::invalid(
            Concern::Machine,
            "lscpu output has no CPU lines (expected lines like \"0,0,0,0,,0,0,0,0\")",
        ));
    }
    Ok(MachineSpec {
        name: name.to_string(),
        description: "imported from lscpu -p".to_string(),
        layout: Layout::Cpus(places),
        distances: None,
        costs: HwCosts::default(),
        calibration: None,
    })
}

/// A machine pasted or loaded as text: a machine JSON (as `schedlab
/// calibrate` writes it: its costs are kept, its calibration record, which
/// the simulator never reads, is dropped so links stay short) or `lscpu -p`
/// output.
pub fn import_machine(name: &str, text: &str) -> Result<MachineSpec> {
    if !text.trim_start().starts_with('{') {
        return parse_lscpu(name, text);
    }
    let mut spec: MachineSpec = crate::error::from_json(Concern::Machine, "machine JSON", text)?;
    spec.calibration = None;
    Topology::from_spec(&spec)?;
    Ok(spec)
}

/// The shipped machines, by name.
pub const PRESETS: [&str; 5] = [
    "phoenix-2008",
    "ivb-ep-2s",
    "epyc-2s",
    "desktop-8c",
    "kvm-2vcpu",
];

fn shape(nodes: u32, pkgs: u32, llcs: u32, cores: u32, threads: u32) -> Layout {
    Layout::Shape(Shape {
        nodes,
        packages_per_node: pkgs,
        llcs_per_package: llcs,
        cores_per_llc: cores,
        threads_per_core: threads,
        numbering: Numbering::SiblingsSplit,
    })
}

pub fn preset(name: &str) -> Result<MachineSpec> {
    let base = HwCosts::default();
    let spec = |description: &str, layout, costs| MachineSpec {
        name: name.to_string(),
        description: description.to_string(),
        layout,
        distances: None,
        costs,
        calibration: None,
    };
    Ok(match name {
        "phoenix-2008" => spec(
            "The re-tune commit's NUMA box (2008): 4 sockets x 4 cores, one node and one \
             shared L3 per socket, no SMT. The exact machine is unknown; this is a \
             Barcelona-class Opteron guess.",
            shape(4, 1, 1, 4, 1),
            HwCosts {
                clock_mhz: 2300,
                net_msg_ns: net_msg_ns_at(2300),
                udp_msg_ns: udp_msg_ns_at(2300),
                // lmbench's pipe overhead on the commit's box was 2.60 us for a
                // write and a read: system calls of that era cost ~1.2 us.
                syscall_ns: 1_200,
                wakeup_ns: 600,
                context_switch_ns: 1500,
                // A cross-socket IPI over HyperTransport, 2008.
                ipi_ns: 3_000,
                cstates: vec![cstate("C1", 3, 6), cstate("C1E", 20, 60)],
                miss_ns: [5, 20, 100, 160],
                transfer_ns: [10, 50, 150, 250],
                // Two channels of DDR2-667 per socket (10.7 GB/s peak) at
                // STREAM's ~73% of peak; Barcelona's shared L3 is 2 MB.
                mem_bw_mb_s: 7_800,
                llc_kib: 2 * 1024,
                ..base
            },
        ),
        "ivb-ep-2s" => spec(
            "The WA_WEIGHT commit's box (inferred): 2-socket Ivy Bridge-EP, 2 x 10 cores \
             x 2 SMT threads = 40 CPUs, one node and one L3 per socket.",
            shape(2, 1, 1, 10, 2),
            HwCosts {
                clock_mhz: 2800,
                net_msg_ns: net_msg_ns_at(2800),
                udp_msg_ns: udp_msg_ns_at(2800),
                cstates: ivt_cstates(),
                // STREAM on 2 x E5-2695 v2 (DDR3-1600): 75 GB/s, 37.5 per
                // socket; the 10-core E5-2680 v2 has a 25 MB L3.
                mem_bw_mb_s: 37_500,
                llc_kib: 25 * 1024,
                ..base
            },
        ),
        "epyc-2s" => spec(
            "A 2-socket AMD EPYC (Milan-like): per socket 8 CCX L3s x 8 cores x 2 SMT \
             threads, one node per socket (NPS1); 256 CPUs.",
            shape(2, 1, 8, 8, 2),
            HwCosts {
                clock_mhz: 2450,
                net_msg_ns: net_msg_ns_at(2450),
                udp_msg_ns: udp_msg_ns_at(2450),
                cstates: vec![cstate("C1", 1, 2), cstate("C2", 400, 800)],
                miss_ns: [5, 15, 110, 180],
                transfer_ns: [10, 40, 180, 280],
                // Eight channels of DDR4-3200 per socket (204.8 GB/s peak)
                // at STREAM's ~73% of peak; 32 MB of L3 per CCX.
                mem_bw_mb_s: 150_000,
                llc_kib: 32 * 1024,
                ..base
            },
        ),
        "desktop-8c" => spec(
            "An 8-core desktop with SMT: one L3, 8 cores x 2 threads = 16 CPUs.",
            shape(1, 1, 1, 8, 2),
            HwCosts {
                clock_mhz: 4000,
                net_msg_ns: net_msg_ns_at(4000),
                udp_msg_ns: udp_msg_ns_at(4000),
                context_switch_ns: 900,
                ipi_ns: 1000,
                // Two channels of DDR4-3200 (51.2 GB/s peak) at STREAM's
                // ~73% of peak; an 8-core Coffee Lake's 16 MB L3.
                mem_bw_mb_s: 37_400,
                llc_kib: 16 * 1024,
                // Coffee Lake is a Skylake core: PAUSE about 140 cycles.
                pause_cycles: 140,
                ..base
            },
        ),
        "kvm-2vcpu" => spec(
            "A 2-vCPU KVM guest (one socket, two cores, one shared L3). Cross-CPU \
             wakeups are dear: the IPI goes through the hypervisor and the idle vCPU \
             halts to the host.",
            shape(1, 1, 1, 2, 1),
            HwCosts {
                clock_mhz: 2450,
                net_msg_ns: net_msg_ns_at(2450),
                udp_msg_ns: udp_msg_ns_at(2450),
                syscall_ns: 250,
                context_switch_ns: 3500,
                thread_switch_ns: 1800,
                wakeup_ns: 500,
                ipi_ns: 1200,
                virt_ipi_extra_ns: 2400,
                cstates: vec![cstate("HLT", 2, 2)],
                // The host's EPYC: a Milan socket's memory, a CCX's 32 MB L3.
                mem_bw_mb_s: 150_000,
                llc_kib: 32 * 1024,
                ..base
            },
        ),
        _ => {
            return Err(Error::unknown(
                Concern::Machine,
                "machine preset",
                name,
                PRESETS,
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topo(name: &str) -> Topology {
        Topology::from_spec(&preset(name).unwrap()).unwrap()
    }

    /// The loopback stack's 1.5 us at 4 GHz is the same cycles at every
    /// preset's clock: slower on the 2.3 GHz Barcelona and the 2.8 GHz Ivy
    /// Bridge-EP than on the desktop it was measured on.
    #[test]
    fn the_network_message_cost_scales_with_the_clock() {
        assert_eq!(net_msg_ns_at(4000), 1500);
        assert_eq!(preset("desktop-8c").unwrap().costs.net_msg_ns, 1500);
        assert_eq!(preset("ivb-ep-2s").unwrap().costs.net_msg_ns, 2142);
        assert_eq!(preset("phoenix-2008").unwrap().costs.net_msg_ns, 2608);
        assert_eq!(HwCosts::default().net_msg_ns, 1500);
    }

    /// Bad `skb_slabs` say which cache and which field; good ones pass.
    #[test]
    fn skb_slabs_are_checked_cache_by_cache() {
        let cache = |name: &str, object_size| SlabCache {
            name: name.into(),
            object_size,
            objs_per_slab: 16,
            cpu_partial: 52,
            min_partial: 5,
        };
        let with = |slabs: SkbSlabs| {
            let mut spec = preset("desktop-8c").unwrap();
            spec.costs.skb_slabs = Some(slabs);
            Topology::from_spec(&spec)
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        let good = SkbSlabs {
            head: cache("skbuff_head_cache", 224),
            data: vec![cache("kmalloc-512", 512), cache("kmalloc-1k", 1024)],
        };
        assert_eq!(with(good.clone()), Ok(()));
        let mut no_objects = good.clone();
        no_objects.head.objs_per_slab = 0;
        let err = with(no_objects).unwrap_err();
        assert!(
            err.contains("costs.skb_slabs.head (skbuff_head_cache): objs_per_slab is 0"),
            "{err}"
        );
        let mut out_of_order = good;
        out_of_order.data.swap(0, 1);
        let err = with(out_of_order).unwrap_err();
        assert!(
            err.contains("costs.skb_slabs.data[1].object_size is 512"),
            "{err}"
        );
    }

    #[test]
    fn every_preset_builds_with_the_expected_cpu_count() {
        let expected = [16, 40, 256, 16, 2];
        for (name, n) in PRESETS.iter().zip(expected) {
            assert_eq!(topo(name).ncpus(), n, "{name}");
        }
    }

    #[test]
    fn ivb_numbers_siblings_split() {
        let t = topo("ivb-ep-2s");
        assert_eq!(t.core_span(0).to_list_string(), "0,20");
        assert_eq!(t.core_span(25).to_list_string(), "5,25");
        assert_eq!(t.llc_span(0).to_list_string(), "0-9,20-29");
        assert_eq!(t.node_span(39).to_list_string(), "10-19,30-39");
        assert_eq!(t.distance(0, 20), CpuDistance::SmtSibling);
        assert_eq!(t.distance(0, 1), CpuDistance::SameLlc);
        assert_eq!(t.distance(0, 10), CpuDistance::OtherNode);
        assert_eq!(t.distinct_distances(), vec![10, 20]);
    }

    #[test]
    fn interleaved_numbering_puts_siblings_next_to_each_other() {
        let spec = MachineSpec {
            name: "x".into(),
            description: String::new(),
            layout: Layout::Shape(Shape {
                nodes: 1,
                packages_per_node: 1,
                llcs_per_package: 2,
                cores_per_llc: 2,
                threads_per_core: 2,
                numbering: Numbering::Interleaved,
            }),
            distances: None,
            costs: HwCosts::default(),
            calibration: None,
        };
        let t = Topology::from_spec(&spec).unwrap();
        assert_eq!(t.core_span(2).to_list_string(), "2-3");
        assert_eq!(t.llc_span(5).to_list_string(), "4-7");
        assert_eq!(t.distance(0, 4), CpuDistance::OtherLlc);
    }

    #[test]
    fn unknown_preset_lists_the_valid_ones() {
        let err = preset("cray").unwrap_err().to_string();
        assert!(err.contains("unknown machine preset \"cray\""), "{err}");
        assert!(err.contains("phoenix-2008, ivb-ep-2s"), "{err}");
    }

    fn with_distances(d: Vec<Vec<u32>>) -> Result<Topology> {
        let mut spec = preset("phoenix-2008").unwrap();
        spec.distances = Some(d);
        Topology::from_spec(&spec)
    }

    #[test]
    fn distance_matrix_errors_say_what_and_where() {
        let ok = vec![
            vec![10, 16, 16, 22],
            vec![16, 10, 22, 16],
            vec![16, 22, 10, 16],
            vec![22, 16, 16, 10],
        ];
        assert_eq!(
            with_distances(ok.clone()).unwrap().distinct_distances(),
            vec![10, 16, 22]
        );

        let err = with_distances(ok[..3].to_vec()).unwrap_err().to_string();
        assert!(err.contains("3 rows but the machine has 4 nodes"), "{err}");

        let mut ragged = ok.clone();
        ragged[1].pop();
        let err = with_distances(ragged).unwrap_err().to_string();
        assert!(
            err.contains("row 1 has 3 entries") && err.contains("square"),
            "{err}"
        );

        let mut asym = ok.clone();
        asym[0][3] = 21;
        let err = with_distances(asym).unwrap_err().to_string();
        assert!(
            err.contains("distances[0][3] is 21 but distances[3][0] is 22"),
            "{err}"
        );

        let mut diag = ok;
        diag[2][2] = 11;
        let err = with_distances(diag).unwrap_err().to_string();
        assert!(
            err.contains("distances[2][2] is 11; the diagonal must be 10"),
            "{err}"
        );
    }

    #[test]
    fn too_many_cpus_names_the_limit() {
        let spec = MachineSpec {
            name: "big".into(),
            description: String::new(),
            layout: shape(8, 2, 4, 8, 4),
            distances: None,
            costs: HwCosts::default(),
            calibration: None,
        };
        let err = Topology::from_spec(&spec).unwrap_err().to_string();
        assert!(
            err.contains("is 2048, but the limit is 1..=1024 (max CPUs)"),
            "{err}"
        );
    }

    /// `lscpu -p` from a 2-socket Xeon with SMT (trimmed to 2 x 2 cores x 2
    /// threads, siblings split like the real listing).
    const LSCPU_2S_SMT: &str = "\
# The following is the parsable format, which can be fed to other
# programs. Each different item in every column has an unique ID
# starting from zero.
# CPU,Core,Socket,Node,,L1d,L1i,L2,L3
0,0,0,0,,0,0,0,0
1,1,0,0,,1,1,1,0
2,2,1,1,,2,2,2,1
3,3,1,1,,3,3,3,1
4,0,0,0,,0,0,0,0
5,1,0,0,,1,1,1,0
6,2,1,1,,2,2,2,1
7,3,1,1,,3,3,3,1
";

    #[test]
    fn lscpu_import_gives_the_hierarchy() {
        let t = Topology::from_spec(&parse_lscpu("xeon", LSCPU_2S_SMT).unwrap()).unwrap();
        assert_eq!(t.ncpus(), 8);
        assert_eq!(t.nnodes(), 2);
        assert_eq!(t.core_span(0).to_list_string(), "0,4");
        assert_eq!(t.llc_span(1).to_list_string(), "0-1,4-5");
        assert_eq!(t.node_span(6).to_list_string(), "2-3,6-7");
        assert_eq!(t.smt_threads(), 2);
        assert_eq!(t.distance(0, 2), CpuDistance::OtherNode);
    }

    #[test]
    fn lscpu_without_header_or_node_column_still_parses() {
        let spec = parse_lscpu("box", "0,0,0,,,0,0,0\n1,1,0,,,1,1,1\n").unwrap();
        let t = Topology::from_spec(&spec).unwrap();
        assert_eq!(t.nnodes(), 1);
        // No L3 column value: the LLC falls back to L2, which is per core here.
        assert_eq!(t.distance(0, 1), CpuDistance::OtherLlc);
    }

    #[test]
    fn a_machine_json_imports_without_its_calibration_record() {
        let mut spec = preset("kvm-2vcpu").unwrap();
        spec.calibration = Some(crate::calibration::Calibration {
            tool: "schedlab calibrate".into(),
            ..Default::default()
        });
        let text = serde_json::to_string_pretty(&spec).unwrap();
        let back = import_machine("x", &text).unwrap();
        assert_eq!(back.calibration, None);
        assert_eq!(back.costs, spec.costs);
        // Without the field, as every machine JSON before it.
        let plain = serde_json::to_string(&back).unwrap();
        assert!(!plain.contains("calibration"));
        assert_eq!(import_machine("x", &plain).unwrap(), back);
        let err = import_machine("x", "{\"name\": 1}")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("machine JSON at name (line 1"), "{err}");
        assert_eq!(import_machine("x", LSCPU_2S_SMT).unwrap().name, "x");
    }

    #[test]
    fn lscpu_errors_name_the_line() {
        let err = parse_lscpu("x", "# CPU,Core,Socket,Node\n0,0,0,0\n1,x,0,0\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("lscpu line 3: column CORE is \"x\""),
            "{err}"
        );
        let err = parse_lscpu("x", "# CPU,Core,Socket,Node\n0,0\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("lscpu line 2: column SOCKET is missing"),
            "{err}"
        );
        let err = parse_lscpu("x", "# nothing\n").unwrap_err().to_string();
        assert!(err.contains("no CPU lines"), "{err}");
        let spec = parse_lscpu("x", "0,0,0,0,,0,0,0,0\n0,1,0,0,,1,1,1,0\n").unwrap();
        let err = Topology::from_spec(&spec).unwrap_err().to_string();
        assert!(err.contains("CPU 0 is listed twice"), "{err}");
        // A pasted line of any length comes back as an excerpt.
        let long = format!("# CPU,Core,Socket,Node\n0{},0,0,0\n", "x".repeat(100_000));
        let err = parse_lscpu("x", &long).unwrap_err().to_string();
        assert!(err.len() < 400, "{} chars", err.len());
        assert!(err.contains("(100001 characters)"), "{err}");
    }
}

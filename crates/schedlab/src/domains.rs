//! The sched-domain hierarchy a kernel policy builds on a machine.
//!
//! For each CPU the era's topology levels give candidate domains bottom-up
//! (2.6.2x: SIBLING, MC, CPU, NODE, ALLNODES; 4.15 and 6.5: SMT, MC, DIE,
//! NODE, NUMA...). Each gets the era's template parameters and flags, then
//! the policy's changes; degenerate levels are dropped as the kernel does
//! (a single CPU, no flag that needs its groups, or the same span as the
//! child with nothing new). Identical domains of different CPUs are stored
//! once.

use crate::cpuset::CpuSet;
use crate::error::Concern;
use crate::error::{Error, Result};
use crate::policy::{Era, KernelPolicy, LevelParam, SdFlag, SdFlags};
use crate::topology::Topology;
use serde::Serialize;
use std::collections::BTreeMap;

/// A level's numeric parameters and flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LevelParams {
    pub min_interval_ms: u32,
    pub max_interval_ms: u32,
    /// The balance interval a domain starts with.
    pub initial_interval_ms: u32,
    pub busy_factor: u32,
    pub imbalance_pct: u32,
    pub cache_nice_tries: u32,
    pub busy_idx: u32,
    pub idle_idx: u32,
    pub newidle_idx: u32,
    pub wake_idx: u32,
    pub forkexec_idx: u32,
    #[serde(skip)]
    pub flags: SdFlags,
}

impl LevelParams {
    pub fn get(&self, p: LevelParam) -> u32 {
        match p {
            LevelParam::MinInterval => self.min_interval_ms,
            LevelParam::MaxInterval => self.max_interval_ms,
            LevelParam::BusyFactor => self.busy_factor,
            LevelParam::ImbalancePct => self.imbalance_pct,
            LevelParam::CacheNiceTries => self.cache_nice_tries,
            LevelParam::BusyIdx => self.busy_idx,
            LevelParam::IdleIdx => self.idle_idx,
            LevelParam::NewidleIdx => self.newidle_idx,
            LevelParam::WakeIdx => self.wake_idx,
            LevelParam::ForkexecIdx => self.forkexec_idx,
        }
    }

    fn set(&mut self, p: LevelParam, v: u32) {
        match p {
            LevelParam::MinInterval => self.min_interval_ms = v,
            LevelParam::MaxInterval => self.max_interval_ms = v,
            LevelParam::BusyFactor => self.busy_factor = v,
            LevelParam::ImbalancePct => self.imbalance_pct = v,
            LevelParam::CacheNiceTries => self.cache_nice_tries = v,
            LevelParam::BusyIdx => self.busy_idx = v,
            LevelParam::IdleIdx => self.idle_idx = v,
            LevelParam::NewidleIdx => self.newidle_idx = v,
            LevelParam::WakeIdx => self.wake_idx = v,
            LevelParam::ForkexecIdx => self.forkexec_idx = v,
        }
    }
}

/// One sched domain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Domain {
    /// The level's name in this era ("MC", "NODE", "NUMA2", ...).
    pub level: &'static str,
    pub span: CpuSet,
    /// The balancing groups: the child level's spans (single CPUs at the
    /// bottom), ascending by first CPU. NUMA groups may overlap.
    pub groups: Vec<CpuSet>,
    /// Each group's power on 2.6.2x (__cpu_power), set once when the
    /// domains are built, as the kernel's init_sched_groups_power does:
    /// `group_power_2_6` below. Later eras compute capacity as they go.
    pub power: Vec<u64>,
    pub params: LevelParams,
    /// The SLIT distance a NUMA level spans.
    pub numa_distance: Option<u32>,
}

impl Domain {
    pub fn has(&self, f: SdFlag) -> bool {
        self.params.flags.has(f)
    }

    /// The group that contains `cpu` (the local group when balancing from it).
    pub fn group_of(&self, cpu: usize) -> Option<usize> {
        self.groups.iter().position(|g| g.contains(cpu))
    }
}

/// Every CPU's domains, bottom-up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Domains {
    pub era: Era,
    domains: Vec<Domain>,
    per_cpu: Vec<Vec<usize>>,
}

/// The kind of topology level a candidate is, which picks its template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Smt,
    Mc,
    Cpu,
    Node,
    Numa(u32),
    AllNodes,
}

/// At most this many NUMA levels above NODE are named (NUMA, NUMA2, NUMA3).
const MAX_NUMA_LEVELS: usize = 3;
/// The kernel's RECLAIM_DISTANCE: NUMA levels beyond it lose EXEC, FORK and WAKE_AFFINE.
const RECLAIM_DISTANCE: u32 = 30;
/// 2.6.2x: a NODE domain spans at most this many nearest nodes.
const SD_NODES_PER_DOMAIN: usize = 16;

fn candidate_levels(era: Era, topo: &Topology) -> Result<Vec<(&'static str, Kind)>> {
    if era.is_legacy() {
        let mut levels = vec![
            ("SIBLING", Kind::Smt),
            ("MC", Kind::Mc),
            ("CPU", Kind::Cpu),
            ("NODE", Kind::Node),
        ];
        // ALLNODES only when NODE domains cannot cover the machine.
        if topo.ncpus() > SD_NODES_PER_DOMAIN * topo.node_span(0).len() {
            levels.push(("ALLNODES", Kind::AllNodes));
        }
        return Ok(levels);
    }
    let mut levels = vec![
        ("SMT", Kind::Smt),
        ("MC", Kind::Mc),
        // DIE, or PKG from 6.9 on.
        (era.level_names()[2], Kind::Cpu),
        ("NODE", Kind::Node),
    ];
    let remote: Vec<u32> = topo
        .distinct_distances()
        .into_iter()
        .filter(|&d| d > 10)
        .collect();
    if remote.len() > MAX_NUMA_LEVELS {
        return Err(Error::invalid(Concern::Policy, format!(
            "machine {} has {} distinct remote SLIT distances; schedlab models at most {MAX_NUMA_LEVELS} NUMA levels",
            topo.name,
            remote.len()
        )));
    }
    for (i, d) in remote.into_iter().enumerate() {
        levels.push((["NUMA", "NUMA2", "NUMA3"][i], Kind::Numa(d)));
    }
    Ok(levels)
}

fn candidate_span(era: Era, topo: &Topology, kind: Kind, cpu: usize) -> CpuSet {
    match kind {
        Kind::Smt => topo.core_span(cpu),
        Kind::Mc => topo.llc_span(cpu),
        Kind::Node if era.is_legacy() => nearest_nodes_span(topo, cpu),
        // CPU / DIE span the node (x86's cpu_cpu_mask); later eras' NODE is the node itself.
        Kind::Cpu | Kind::Node => topo.node_span(cpu),
        Kind::Numa(d) => topo.nodes_within(cpu, d),
        Kind::AllNodes => topo.all_cpus(),
    }
}

/// 2.6.2x's NODE level: the 16 nearest nodes (ties by node number).
fn nearest_nodes_span(topo: &Topology, cpu: usize) -> CpuSet {
    let home = topo.cpus[cpu].node;
    let mut nodes: Vec<usize> = (0..topo.nnodes()).collect();
    nodes.sort_by_key(|&n| (topo.distances[home][n], n));
    nodes.truncate(SD_NODES_PER_DOMAIN);
    (0..topo.ncpus())
        .filter(|&c| nodes.contains(&topo.cpus[c].node))
        .collect()
}

fn ms(v: usize) -> u32 {
    v as u32
}

/// The era's template for one level (2.6.2x: include/linux/topology.h and
/// arch/x86's SD_*_INIT; 4.15 and 6.5: sd_init), before the policy's changes.
fn template(era: Era, kind: Kind, weight: usize, ncpus: usize) -> LevelParams {
    if era.is_legacy() {
        legacy_template(era, kind, ncpus)
    } else {
        modern_template(era, kind, weight)
    }
}

/// No load indexes, no flags: what each 2.6.2x template starts from.
const LEGACY_BASE: LevelParams = LevelParams {
    min_interval_ms: 1,
    max_interval_ms: 4,
    initial_interval_ms: 1,
    busy_factor: 64,
    imbalance_pct: 125,
    cache_nice_tries: 1,
    busy_idx: 0,
    idle_idx: 0,
    newidle_idx: 0,
    wake_idx: 0,
    forkexec_idx: 0,
    flags: SdFlags::empty(),
};

/// 2.6.27 / 2.6.28's SD_SIBLING_INIT, SD_MC_INIT, SD_CPU_INIT, SD_NODE_INIT
/// and SD_ALLNODES_INIT (x86). The re-tune commit (2.6.28) put WAKE_AFFINE on
/// NODE, took NEWIDLE off MC and CPU, and put WAKE_BALANCE on the SMP levels.
fn legacy_template(era: Era, kind: Kind, ncpus: usize) -> LevelParams {
    use SdFlag::*;
    let retuned = era.rules().retuned_templates;
    let mut l = match kind {
        Kind::Smt => LevelParams {
            max_interval_ms: 2,
            imbalance_pct: 110,
            cache_nice_tries: 0,
            flags: SdFlags::of(&[
                LoadBalance,
                BalanceNewidle,
                BalanceFork,
                BalanceExec,
                WakeAffine,
                ShareCpuCapacity,
            ]),
            ..LEGACY_BASE
        },
        Kind::Mc => LevelParams {
            busy_idx: 2,
            wake_idx: 1,
            forkexec_idx: 1,
            flags: SdFlags::of(&[
                LoadBalance,
                BalanceFork,
                BalanceExec,
                WakeAffine,
                SharePkgResources,
            ]),
            ..LEGACY_BASE
        },
        Kind::Cpu => LevelParams {
            busy_idx: 2,
            idle_idx: 1,
            newidle_idx: 2,
            wake_idx: 1,
            forkexec_idx: 1,
            flags: SdFlags::of(&[LoadBalance, BalanceFork, BalanceExec, WakeAffine]),
            ..LEGACY_BASE
        },
        Kind::Node => LevelParams {
            min_interval_ms: 8,
            max_interval_ms: 32,
            busy_factor: 32,
            cache_nice_tries: 2,
            busy_idx: 3,
            idle_idx: 2,
            newidle_idx: 2,
            wake_idx: 1,
            forkexec_idx: 1,
            flags: SdFlags::of(&[
                LoadBalance,
                BalanceExec,
                BalanceFork,
                Serialize,
                WakeBalance,
            ]),
            ..LEGACY_BASE
        },
        Kind::AllNodes | Kind::Numa(_) => LevelParams {
            min_interval_ms: 64,
            max_interval_ms: ms(64 * ncpus),
            initial_interval_ms: 64,
            busy_factor: 128,
            imbalance_pct: 133,
            busy_idx: 3,
            idle_idx: 3,
            flags: SdFlags::of(&[LoadBalance, BalanceNewidle, WakeAffine, Serialize]),
            ..LEGACY_BASE
        },
    };
    match kind {
        Kind::Smt => l
            .flags
            .set(if retuned { WakeBalance } else { WakeIdle }, true),
        Kind::Mc | Kind::Cpu => {
            l.flags.set(BalanceNewidle, !retuned);
            l.flags.set(WakeBalance, retuned);
        }
        Kind::Node => l.flags.set(WakeAffine, retuned),
        _ => {}
    }
    l
}

/// sd_init() of 4.15 and 6.5, then the topology level's own flags
/// (cpu_smt_flags, cpu_core_flags, the NUMA levels').
fn modern_template(era: Era, kind: Kind, weight: usize) -> LevelParams {
    use SdFlag::*;
    let rules = era.rules();
    let w = ms(weight);
    let mut flags = SdFlags::of(&[BalanceNewidle, BalanceExec, BalanceFork, WakeAffine]);
    flags.set(LoadBalance, rules.needs_load_balance_flag);
    let idx = rules.load_indexes;
    let mut l = LevelParams {
        min_interval_ms: w,
        max_interval_ms: 2 * w,
        initial_interval_ms: w,
        busy_factor: rules.sd_busy_factor,
        imbalance_pct: rules.sd_imbalance_pct,
        cache_nice_tries: 0,
        busy_idx: 0,
        idle_idx: 0,
        newidle_idx: 0,
        wake_idx: 0,
        forkexec_idx: 0,
        flags,
    };
    match kind {
        Kind::Smt => {
            l.flags.set(ShareCpuCapacity, true);
            l.flags.set(SharePkgResources, true);
            l.flags.set(PreferSibling, true);
            l.imbalance_pct = 110;
        }
        Kind::Mc => {
            l.flags.set(SharePkgResources, true);
            l.flags.set(PreferSibling, true);
            l.imbalance_pct = 117;
            l.cache_nice_tries = 1;
            if idx {
                l.busy_idx = 2;
            }
        }
        Kind::Numa(distance) => {
            l.flags.set(Numa, true);
            l.flags.set(Overlap, true);
            l.flags.set(Serialize, true);
            l.flags.set(PreferSibling, false);
            l.cache_nice_tries = 2;
            if idx {
                l.busy_idx = 3;
                l.idle_idx = 2;
            }
            if distance > RECLAIM_DISTANCE {
                l.flags.set(BalanceExec, false);
                l.flags.set(BalanceFork, false);
                l.flags.set(WakeAffine, false);
            }
        }
        _ => {
            l.flags.set(PreferSibling, true);
            l.cache_nice_tries = 1;
            if idx {
                l.busy_idx = 2;
                l.idle_idx = 1;
            }
        }
    }
    l
}

/// Flags that only mean something when a domain has more than one group.
fn needs_groups(era: Era) -> SdFlags {
    use SdFlag::*;
    if era.is_legacy() {
        SdFlags::of(&[
            LoadBalance,
            BalanceNewidle,
            BalanceFork,
            BalanceExec,
            ShareCpuCapacity,
            SharePkgResources,
        ])
    } else {
        SdFlags::of(&[
            LoadBalance,
            BalanceNewidle,
            BalanceExec,
            BalanceFork,
            BalanceWake,
            ShareCpuCapacity,
            SharePkgResources,
            Serialize,
            PreferSibling,
            Overlap,
            Numa,
        ])
    }
}

fn is_degenerate(era: Era, d: &Domain) -> bool {
    use SdFlag::*;
    if d.span.len() == 1 {
        return true;
    }
    if d.groups.len() > 1 && d.params.flags.intersects(needs_groups(era)) {
        return false;
    }
    let wake_flags = SdFlags::of(&[WakeAffine, WakeIdle, WakeIdleFar, WakeBalance]);
    !d.params.flags.intersects(wake_flags)
}

fn parent_is_degenerate(era: Era, child: &Domain, parent: &Domain, nnodes: usize) -> bool {
    if is_degenerate(era, parent) {
        return true;
    }
    if child.span != parent.span {
        return false;
    }
    let mut pflags = parent.params.flags;
    if era.is_legacy() && child.has(SdFlag::WakeAffine) {
        // WAKE_BALANCE is a subset of WAKE_AFFINE.
        pflags.set(SdFlag::WakeBalance, false);
    }
    if parent.groups.len() == 1 {
        pflags = pflags.without(needs_groups(era));
        if nnodes == 1 {
            pflags.set(SdFlag::Serialize, false);
        }
    }
    pflags.is_subset(child.params.flags)
}

/// A level's template with the policy's changes to it.
fn level_params(
    policy: &KernelPolicy,
    name: &str,
    kind: Kind,
    weight: usize,
    ncpus: usize,
) -> Result<LevelParams> {
    let mut params = template(policy.era, kind, weight, ncpus);
    if let Some(change) = policy.levels.get(name) {
        for &(flag, on) in &change.flags {
            params.flags.set(flag, on);
        }
        for &(param, value) in &change.params {
            let (lo, hi) = param.valid_range();
            if !(lo..=hi).contains(&value) {
                return Err(Error::invalid(
                    Concern::Policy,
                    format!(
                        "level {name} parameter {} is {value}; it must be {lo}..={hi}",
                        param.name()
                    ),
                ));
            }
            params.set(param, value);
        }
    }
    Ok(params)
}

/// One of the era's topology levels on a machine, as CPU 0 sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LevelRow {
    pub name: &'static str,
    /// False when the level is degenerate on this machine and dropped.
    pub present: bool,
    pub params: LevelParams,
}

impl Domains {
    /// Every candidate level of the era on `topo`, bottom-up, with its
    /// parameters and flags after the policy's changes, and whether it
    /// survives the degenerate-level removal.
    pub fn level_table(topo: &Topology, policy: &KernelPolicy) -> Result<Vec<LevelRow>> {
        let built = Domains::build(topo, policy)?;
        let present = built.level_names();
        let n = topo.ncpus();
        candidate_levels(policy.era, topo)?
            .into_iter()
            .map(|(name, kind)| {
                let weight = candidate_span(policy.era, topo, kind, 0).len();
                Ok(LevelRow {
                    name,
                    present: present.contains(&name),
                    params: level_params(policy, name, kind, weight, n)?,
                })
            })
            .collect()
    }

    pub fn build(topo: &Topology, policy: &KernelPolicy) -> Result<Domains> {
        let era = policy.era;
        let levels = candidate_levels(era, topo)?;
        let n = topo.ncpus();
        // spans[level][cpu]
        let spans: Vec<Vec<CpuSet>> = levels
            .iter()
            .map(|&(_, kind)| {
                (0..n)
                    .map(|cpu| candidate_span(era, topo, kind, cpu))
                    .collect()
            })
            .collect();
        // Each (level, span) is built once, however many CPUs share it; its
        // groups are the costly part on big machines.
        let mut candidates: Vec<Domain> = Vec::new();
        let mut candidate_of: BTreeMap<(usize, CpuSet), usize> = BTreeMap::new();
        let mut domains: Vec<Domain> = Vec::new();
        let mut index: BTreeMap<usize, usize> = BTreeMap::new();
        let mut per_cpu = Vec::with_capacity(n);
        for cpu in 0..n {
            let mut kept: Vec<usize> = Vec::new();
            for (li, &(name, kind)) in levels.iter().enumerate() {
                let span = spans[li][cpu];
                let ci = match candidate_of.get(&(li, span)) {
                    Some(&ci) => ci,
                    None => {
                        let groups = groups_of(&span, li.checked_sub(1).map(|c| &spans[c]));
                        let params = level_params(policy, name, kind, span.len(), n)?;
                        let numa_distance = match kind {
                            Kind::Numa(d) => Some(d),
                            _ => None,
                        };
                        candidates.push(Domain {
                            level: name,
                            span,
                            groups,
                            power: Vec::new(),
                            params,
                            numa_distance,
                        });
                        candidate_of.insert((li, span), candidates.len() - 1);
                        candidates.len() - 1
                    }
                };
                let d = &candidates[ci];
                if is_degenerate(era, d) {
                    continue;
                }
                if let Some(&child) = kept.last() {
                    if parent_is_degenerate(era, &candidates[child], d, topo.nnodes()) {
                        continue;
                    }
                }
                kept.push(ci);
            }
            per_cpu.push(
                kept.into_iter()
                    .map(|ci| {
                        *index.entry(ci).or_insert_with(|| {
                            domains.push(candidates[ci].clone());
                            domains.len() - 1
                        })
                    })
                    .collect(),
            );
        }
        let mut built = Domains {
            era,
            domains,
            per_cpu,
        };
        built.set_group_power(topo);
        for level in policy.levels.keys() {
            if !built.domains.iter().any(|d| d.level == level) {
                return Err(Error::invalid(Concern::Policy, format!(
                    "the policy changes level {level}, but era {era} on machine {} has no {level} domain (its levels: {})",
                    topo.name,
                    built.level_names().join(", ")
                )));
            }
        }
        Ok(built)
    }

    /// Every domain's groups' power ([`group_power_2_6`]), each domain
    /// seen from the first CPU that has it.
    fn set_group_power(&mut self, topo: &Topology) {
        let mut power: Vec<Option<Vec<u64>>> = vec![None; self.domains.len()];
        for cpu in 0..self.per_cpu.len() {
            for (level, &di) in self.per_cpu[cpu].iter().enumerate() {
                if power[di].is_none() {
                    let groups = &self.domains[di].groups;
                    power[di] = Some(
                        groups
                            .iter()
                            .map(|g| group_power_2_6(self, topo, cpu, level, g))
                            .collect(),
                    );
                }
            }
        }
        for (d, p) in self.domains.iter_mut().zip(power) {
            d.power = p.unwrap_or_default();
        }
    }

    /// `cpu`'s domains, bottom-up (domain0 first).
    pub fn of(
        &self,
        cpu: usize,
    ) -> impl DoubleEndedIterator<Item = &Domain> + ExactSizeIterator + '_ {
        self.per_cpu[cpu].iter().map(|&i| &self.domains[i])
    }

    /// Every distinct domain, each once.
    pub fn all(&self) -> &[Domain] {
        &self.domains
    }

    /// The distinct level names in bottom-up order.
    pub fn level_names(&self) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = Vec::new();
        for cpu_domains in &self.per_cpu {
            for &i in cpu_domains {
                let l = self.domains[i].level;
                if !names.contains(&l) {
                    names.push(l);
                }
            }
        }
        names
    }

    /// The lowest domain of `cpu` spanning `other`, as select_task_rq's walk finds it.
    pub fn lowest_spanning(&self, cpu: usize, other: usize) -> Option<&Domain> {
        self.of(cpu).find(|d| d.span.contains(other))
    }

    /// The text dump (`schedlab domains`): every CPU's levels with span,
    /// groups, flags (names and bits) and parameters.
    pub fn dump_text(&self, cpus: &[usize]) -> String {
        let mut out = String::new();
        for &cpu in cpus {
            out.push_str(&format!("cpu{cpu}\n"));
            for (i, d) in self.of(cpu).enumerate() {
                let p = &d.params;
                let groups: Vec<String> = d
                    .groups
                    .iter()
                    .map(|g| format!("{{{}}}", g.to_list_string()))
                    .collect();
                out.push_str(&format!(
                    "  domain{i} {:<8} span {}  groups {}\n",
                    d.level,
                    d.span.to_list_string(),
                    groups.join(" ")
                ));
                out.push_str(&format!(
                    "    flags 0x{:x} {}\n",
                    p.flags.kernel_bits(self.era),
                    p.flags.names(self.era).join("|")
                ));
                out.push_str(&format!(
                    "    min_interval {} max_interval {} busy_factor {} imbalance_pct {} cache_nice_tries {}",
                    p.min_interval_ms, p.max_interval_ms, p.busy_factor, p.imbalance_pct, p.cache_nice_tries
                ));
                if self.era.rules().load_indexes {
                    out.push_str(&format!(
                        " busy_idx {} idle_idx {} newidle_idx {} wake_idx {} forkexec_idx {}",
                        p.busy_idx, p.idle_idx, p.newidle_idx, p.wake_idx, p.forkexec_idx
                    ));
                }
                if let Some(dist) = d.numa_distance {
                    out.push_str(&format!(" numa_distance {dist}"));
                }
                out.push('\n');
            }
        }
        out
    }

    /// The same as [`Self::dump_text`] as a JSON value.
    pub fn dump_json(&self, cpus: &[usize]) -> serde_json::Value {
        let cpus: Vec<serde_json::Value> = cpus
            .iter()
            .map(|&cpu| {
                let levels: Vec<serde_json::Value> = self
                    .of(cpu)
                    .map(|d| {
                        serde_json::json!({
                            "level": d.level,
                            "span": d.span.to_list_string(),
                            "groups": d.groups.iter().map(|g| g.to_list_string()).collect::<Vec<_>>(),
                            "flags": {
                                "bits": d.params.flags.kernel_bits(self.era),
                                "names": d.params.flags.names(self.era),
                            },
                            "params": d.params,
                            "numa_distance": d.numa_distance,
                        })
                    })
                    .collect();
                serde_json::json!({ "cpu": cpu, "domains": levels })
            })
            .collect();
        serde_json::json!({ "era": self.era.name(), "cpus": cpus })
    }
}

/// Groups of a domain: the child level's spans covering `span`, in CPU order.
fn groups_of(span: &CpuSet, child_spans: Option<&Vec<CpuSet>>) -> Vec<CpuSet> {
    let mut covered = CpuSet::new();
    let mut groups = Vec::new();
    for cpu in span.iter() {
        if covered.contains(cpu) {
            continue;
        }
        let g = match child_spans {
            Some(spans) => spans[cpu].intersection(span),
            None => CpuSet::single(cpu),
        };
        covered = covered.union(&g);
        groups.push(g);
    }
    groups
}

/// One CPU's power, SCHED_LOAD_SCALE (v2.6.28).
const CPU_POWER: u64 = 1024;

/// A group's __cpu_power (v2.6.28 init_sched_groups_power and
/// init_numa_sched_groups_power, the default "perf" policy), for a group
/// of `this`'s domain at index `level`:
/// - NODE and ALLNODES groups: each physical package's power added once.
///   A package's power (its phys domain group's) is one CPU's: the
///   package's child level shares a core or a cache, or it has none.
/// - Other levels: one CPU's power when the child domain shares a core or
///   a cache (SD_SHARE_CPUPOWER, SD_SHARE_PKG_RESOURCES) or there is none,
///   so it should run one task while other groups idle; else the sum of
///   the child domain's groups' power.
fn group_power_2_6(
    domains: &Domains,
    topo: &Topology,
    this: usize,
    level: usize,
    g: &CpuSet,
) -> u64 {
    let Some(d) = domains.of(this).nth(level) else {
        return CPU_POWER * g.len() as u64;
    };
    if matches!(d.level, "NODE" | "ALLNODES") {
        let packages: CpuSet = g.iter().map(|c| topo.cpus[c].package).collect();
        return CPU_POWER * packages.len() as u64;
    }
    let Some(first) = g.first() else {
        return CPU_POWER;
    };
    let Some(child) = level.checked_sub(1).and_then(|c| domains.of(first).nth(c)) else {
        return CPU_POWER;
    };
    if child.has(SdFlag::ShareCpuCapacity) || child.has(SdFlag::SharePkgResources) {
        return CPU_POWER;
    }
    child
        .groups
        .iter()
        .map(|cg| group_power_2_6(domains, topo, first, level - 1, cg))
        .sum()
}

//! The 4.15 and 6.5 wakeup paths: record_wakee / wake_wide, the domain walk
//! to the first SD_WAKE_AFFINE domain spanning prev, wake_affine (WA_IDLE
//! then WA_WEIGHT), and select_idle_sibling. Where the eras differ each has
//! its own function.

use super::{shares_cache, slow, Placement};
use crate::engine::Sim;
use crate::load::SCHED_CAPACITY_SCALE;
use crate::policy::{Era, Feature, SdFlag};

/// Flips of a waker's wakee halve at most once a second.
const WAKEE_FLIP_DECAY_NS: u64 = 1_000_000_000;

/// select_task_rq_fair for a wakeup (`flag` BALANCE_WAKE) or a fork
/// (`flag` BALANCE_FORK; `prev` is then the parent's CPU).
pub(super) fn select(
    sim: &mut Sim,
    p: usize,
    prev: usize,
    this: usize,
    sync: bool,
    flag: SdFlag,
) -> Placement {
    let mut placed = Placement::new(prev, "prev");
    let wakeup = flag == SdFlag::BalanceWake;
    let waker = sim.cpus[this].rq.curr.filter(|&w| w != p);
    let mut want_affine = false;
    if wakeup {
        if let Some(w) = waker {
            record_wakee(sim, w, p);
        }
        let wide = wake_wide(sim, waker, p, this);
        if wide {
            placed.step("wake_wide", "", "wide");
        }
        want_affine = !wide && sim.allowed(p).contains(this);
    }
    let era = sim.policy.era;
    let mut affine_sd = None;
    let mut slow_sd = None;
    for (i, d) in sim.domains.of(this).enumerate() {
        if era == Era::V4_15 && !d.has(SdFlag::LoadBalance) {
            break;
        }
        if want_affine && d.has(SdFlag::WakeAffine) && d.span.contains(prev) {
            affine_sd = Some((d.level, d.params.imbalance_pct, d.params.wake_idx));
            break;
        }
        if d.has(flag) {
            slow_sd = Some(i);
        } else if !want_affine {
            break;
        }
    }
    let mut new_cpu = prev;
    if let Some((level, imbalance_pct, wake_idx)) = affine_sd {
        slow_sd = None;
        if this != prev {
            new_cpu = wake_affine(
                sim,
                &mut placed,
                level,
                imbalance_pct,
                wake_idx,
                p,
                this,
                prev,
                sync,
                waker,
            );
        }
    }
    match slow_sd {
        None if wakeup => select_idle_sibling(sim, &mut placed, p, prev, new_cpu),
        None => placed.decide(new_cpu, "prev"),
        Some(level) => {
            let cpu = slow::find_idlest_cpu(sim, p, this, prev, level, flag);
            placed.step("select", "", "slow");
            placed.decide(cpu, "find_idlest_cpu");
        }
    }
    placed
}

fn record_wakee(sim: &mut Sim, waker: usize, p: usize) {
    let now = sim.now;
    let w = &mut sim.tasks[waker];
    if now > w.wakee_flip_decay_ns + WAKEE_FLIP_DECAY_NS {
        w.wakee_flips >>= 1;
        w.wakee_flip_decay_ns = now;
    }
    if w.last_wakee != Some(p) {
        w.last_wakee = Some(p);
        w.wakee_flips += 1;
    }
}

/// `cpu`'s LLC domain (sd_llc: the highest with SHARE_PKG_RESOURCES).
fn llc_domain(sim: &Sim, cpu: usize) -> Option<&crate::domains::Domain> {
    sim.domains
        .of(cpu)
        .rev()
        .find(|d| d.has(SdFlag::SharePkgResources))
}

/// wake_wide: many-to-many wakeups spread out instead of piling onto the waker.
fn wake_wide(sim: &Sim, waker: Option<usize>, p: usize, this: usize) -> bool {
    let factor = llc_domain(sim, this).map_or(1, |d| d.span.len() as u64);
    let a = waker.map_or(0, |w| sim.tasks[w].wakee_flips);
    let b = sim.tasks[p].wakee_flips;
    let (master, slave) = (a.max(b), a.min(b));
    !(slave < factor || master < slave * factor)
}

#[allow(clippy::too_many_arguments)]
fn wake_affine(
    sim: &Sim,
    placed: &mut Placement,
    level: &'static str,
    imbalance_pct: u32,
    wake_idx: u32,
    p: usize,
    this: usize,
    prev: usize,
    sync: bool,
    waker: Option<usize>,
) -> usize {
    let f = &sim.policy.features;
    let era = sim.policy.era;
    let mut target = None;
    if f.has(Feature::WaIdle) {
        target = match era {
            Era::V4_15 => wake_affine_idle_4_15(sim, this, prev, sync),
            _ => wake_affine_idle_6_5(sim, this, prev, sync),
        };
        if target.is_some() {
            placed.step("wake_affine", level, "idle");
        }
    }
    if f.has(Feature::WaWeight) && target.is_none() {
        let loads = match era {
            Era::V4_15 => weight_loads_4_15(sim, this, prev, wake_idx),
            _ => weight_loads_6_5(sim, this, prev),
        };
        let current = waker.map_or(0, |w| sim.ents[w].pelt.load_avg);
        let task = sim.ents[p].pelt.load_avg;
        let bias = f.has(Feature::WaBias);
        let picks_this = wake_affine_weight(era, loads, current, task, imbalance_pct, bias, sync);
        if picks_this {
            target = Some(this);
            placed.step("wake_affine", level, "weight");
        }
    }
    match target {
        Some(t) => {
            placed.decide(
                t,
                if t == this {
                    "wake_affine"
                } else {
                    "wake_affine.prev_idle"
                },
            );
            t
        }
        None => {
            placed.step("wake_affine", level, "prev");
            prev
        }
    }
}

/// 4.15: this CPU idle and sharing a cache with prev: prev if idle, else
/// this; a sync wakeup from a CPU running only the waker: this.
fn wake_affine_idle_4_15(sim: &Sim, this: usize, prev: usize, sync: bool) -> Option<usize> {
    if sim.cpu_idle(this) && shares_cache(sim, this, prev) {
        return Some(if sim.cpu_idle(prev) { prev } else { this });
    }
    if sync && sim.cpus[this].rq.nr_running == 1 {
        return Some(this);
    }
    None
}

/// 6.5: as 4.15, then prev if it is idle.
fn wake_affine_idle_6_5(sim: &Sim, this: usize, prev: usize, sync: bool) -> Option<usize> {
    wake_affine_idle_4_15(sim, this, prev, sync).or_else(|| sim.cpu_idle(prev).then_some(prev))
}

/// (this CPU's load, prev's load) as 4.15's wake_affine_weight reads them:
/// target_load and source_load on the wake_idx history.
fn weight_loads_4_15(sim: &Sim, this: usize, prev: usize, wake_idx: u32) -> (u64, u64) {
    (
        super::legacy::target_load(sim, this, wake_idx),
        super::legacy::source_load(sim, prev, wake_idx),
    )
}

/// 6.5: the queues' PELT load.
fn weight_loads_6_5(sim: &Sim, this: usize, prev: usize) -> (u64, u64) {
    (
        sim.cpus[this].rq.pelt.load_avg,
        sim.cpus[prev].rq.pelt.load_avg,
    )
}

/// wake_affine_weight: whether this CPU, with the task added and (for a sync
/// wakeup) the waker taken away, is less loaded than prev without the task,
/// prev's side biased by half the imbalance_pct (WA_BIAS). All capacities
/// are SCHED_CAPACITY_SCALE. 4.15 breaks ties towards this CPU; 6.5 towards
/// prev, except that a sync wakeup adds one to prev's side.
pub(crate) fn wake_affine_weight(
    era: Era,
    (this_load, prev_load): (u64, u64),
    current_load: u64,
    task_load: u64,
    imbalance_pct: u32,
    wa_bias: bool,
    sync: bool,
) -> bool {
    let cap = SCHED_CAPACITY_SCALE as i128;
    let mut this_eff = this_load as i128;
    if sync {
        let current = current_load as i128;
        if current > this_eff {
            return true;
        }
        this_eff -= current;
    }
    this_eff += task_load as i128;
    if wa_bias {
        this_eff *= 100;
    }
    this_eff *= cap;
    let mut prev_eff = prev_load as i128 - task_load as i128;
    if wa_bias {
        prev_eff *= 100 + (imbalance_pct as i128 - 100) / 2;
    }
    prev_eff *= cap;
    match era {
        Era::V4_15 => this_eff <= prev_eff,
        _ => {
            if sync {
                prev_eff += 1;
            }
            this_eff < prev_eff
        }
    }
}

fn select_idle_sibling(
    sim: &mut Sim,
    placed: &mut Placement,
    p: usize,
    prev: usize,
    target: usize,
) {
    let found = match sim.policy.era {
        Era::V4_15 => select_idle_sibling_4_15(sim, placed, p, prev, target),
        _ => select_idle_sibling_6_5(sim, placed, p, prev, target),
    };
    match found {
        Some((cpu, branch)) => {
            placed.step("sis", "", branch);
            placed.decide(
                cpu,
                match branch {
                    "target_idle" => "sis.target_idle",
                    "prev_idle" => "sis.prev_idle",
                    "recent" => "sis.recent",
                    "smt" => "sis.smt",
                    _ => "sis.scan_found",
                },
            );
        }
        None => {
            placed.step("sis", "", "scan_failed");
            placed.decide(
                target,
                if target == prev {
                    "prev"
                } else {
                    "wake_affine"
                },
            );
        }
    }
}

#[cfg(test)]
pub(super) fn select_idle_sibling_for_test(
    sim: &mut Sim,
    placed: &mut Placement,
    p: usize,
    prev: usize,
    target: usize,
) -> Option<(usize, &'static str)> {
    match sim.policy.era {
        Era::V4_15 => select_idle_sibling_4_15(sim, placed, p, prev, target),
        _ => select_idle_sibling_6_5(sim, placed, p, prev, target),
    }
}

/// The "target idle" and "prev idle and cache-affine" steps both eras share.
fn sis_quick(sim: &Sim, prev: usize, target: usize) -> Option<(usize, &'static str)> {
    if sim.cpu_idle(target) {
        return Some((target, "target_idle"));
    }
    if prev != target && shares_cache(sim, prev, target) && sim.cpu_idle(prev) {
        return Some((prev, "prev_idle"));
    }
    None
}

/// 4.15: target, prev, then select_idle_core, select_idle_cpu (SIS_PROP),
/// select_idle_smt over target's LLC. No recent_used_cpu (that is 4.16).
fn select_idle_sibling_4_15(
    sim: &mut Sim,
    placed: &mut Placement,
    p: usize,
    prev: usize,
    target: usize,
) -> Option<(usize, &'static str)> {
    if let Some(hit) = sis_quick(sim, prev, target) {
        return Some(hit);
    }
    let llc = llc_domain(sim, target)?.span;
    let cpus = llc.intersection(sim.allowed(p));
    let smt = sim.topo.smt_threads() > 1;
    let llc_id = sim.topo.cpus[target].llc;
    if smt && sim.llc_has_idle_cores[llc_id] {
        if let Some(core) = scan_idle_core(sim, placed, &cpus, target) {
            return Some((core, "scan_found"));
        }
        sim.llc_has_idle_cores[llc_id] = false;
    }
    let nr = sis_prop_budget(sim, target, llc.len() as u64).unwrap_or(u64::MAX);
    if let Some(cpu) = scan_idle_cpu(sim, placed, &cpus, target, nr, target) {
        return Some((cpu, "scan_found"));
    }
    if smt {
        if let Some(cpu) = idle_sibling(sim, p, target) {
            return Some((cpu, "smt"));
        }
    }
    None
}

/// 6.5: target, prev, recent_used_cpu, an idle SMT sibling of prev when no
/// core is idle, then select_idle_cpu (idle cores, or single CPUs within
/// the SIS_UTIL / SIS_PROP budget) starting after target.
fn select_idle_sibling_6_5(
    sim: &mut Sim,
    placed: &mut Placement,
    p: usize,
    prev: usize,
    target: usize,
) -> Option<(usize, &'static str)> {
    if let Some(hit) = sis_quick(sim, prev, target) {
        sim.tasks[p].recent_used_cpu = prev;
        return Some(hit);
    }
    let recent = std::mem::replace(&mut sim.tasks[p].recent_used_cpu, prev);
    if recent != prev
        && recent != target
        && shares_cache(sim, recent, target)
        && sim.cpu_idle(recent)
        && sim.allowed(p).contains(recent)
    {
        return Some((recent, "recent"));
    }
    let llc = llc_domain(sim, target)?.span;
    let cpus = llc.intersection(sim.allowed(p));
    let llc_id = sim.topo.cpus[target].llc;
    let mut has_idle_core = false;
    if sim.topo.smt_threads() > 1 {
        has_idle_core = sim.llc_has_idle_cores[llc_id];
        if !has_idle_core && shares_cache(sim, prev, target) {
            if let Some(cpu) = idle_sibling(sim, p, prev) {
                return Some((cpu, "smt"));
            }
        }
    }
    let start = next_in(&cpus, target);
    if has_idle_core {
        let found = scan_idle_core(sim, placed, &cpus, start);
        sim.llc_has_idle_cores[llc_id] &= found.is_some();
        return found.map(|c| (c, "scan_found"));
    }
    let f = sim.policy.features;
    let mut nr = u64::MAX;
    if f.has(Feature::SisProp) {
        nr = sis_prop_budget(sim, target, llc.len() as u64).unwrap_or(u64::MAX);
    }
    if f.has(Feature::SisUtil) {
        nr = sis_util_nr_scan(sim, &llc, target) + 1;
        if nr == 1 {
            placed.step("sis", "", "util_skip");
            return None;
        }
    }
    scan_idle_cpu(sim, placed, &cpus, start, nr, target).map(|c| (c, "scan_found"))
}

/// select_idle_smt: an idle SMT thread of `cpu`'s core that `p` may use.
fn idle_sibling(sim: &Sim, p: usize, cpu: usize) -> Option<usize> {
    let core = sim.topo.core_span(cpu);
    let found = core
        .iter()
        .find(|&c| sim.allowed(p).contains(c) && sim.cpu_idle(c));
    found
}

/// The first CPU of `cpus` after `cpu`, wrapping.
fn next_in(cpus: &crate::cpuset::CpuSet, cpu: usize) -> usize {
    cpus.iter()
        .find(|&c| c > cpu)
        .or_else(|| cpus.first())
        .unwrap_or(cpu)
}

/// `cpus` in order starting at `start`, wrapping (for_each_cpu_wrap).
fn wrap_from(cpus: &crate::cpuset::CpuSet, start: usize) -> impl Iterator<Item = usize> + '_ {
    cpus.iter()
        .filter(move |&c| c >= start)
        .chain(cpus.iter().filter(move |&c| c < start))
}

/// select_idle_core: the first core in `cpus` (from `start`) whose threads
/// are all idle.
fn scan_idle_core(
    sim: &Sim,
    placed: &mut Placement,
    cpus: &crate::cpuset::CpuSet,
    start: usize,
) -> Option<usize> {
    let mut checked = crate::cpuset::CpuSet::new();
    for cpu in wrap_from(cpus, start) {
        if checked.contains(cpu) {
            continue;
        }
        let core = sim.topo.core_span(cpu);
        checked = checked.union(&core);
        placed.scanned += core.len() as u32;
        if core.iter().all(|c| sim.cpu_idle(c)) {
            return Some(cpu);
        }
    }
    None
}

/// select_idle_cpu's single-CPU scan: at most `nr - 1` CPUs from `start`.
/// Updates the LLC's average scan cost (SIS_PROP's estimate).
fn scan_idle_cpu(
    sim: &mut Sim,
    placed: &mut Placement,
    cpus: &crate::cpuset::CpuSet,
    start: usize,
    nr: u64,
    target: usize,
) -> Option<usize> {
    let mut nr = nr;
    let mut scanned = 0u64;
    let mut found = None;
    for cpu in wrap_from(cpus, start) {
        nr -= 1;
        if nr == 0 {
            break;
        }
        scanned += 1;
        if sim.cpu_idle(cpu) {
            found = Some(cpu);
            break;
        }
    }
    placed.scanned += scanned as u32;
    let llc = sim.topo.cpus[target].llc;
    let time = scanned * sim.cost.costs().scan_ns_per_cpu;
    let cost = &mut sim.llc_avg_scan_cost_ns[llc];
    *cost = (*cost as i64 + (time as i64 - *cost as i64) / 8) as u64;
    found
}

/// SIS_PROP: scan in proportion to how long this CPU tends to stay idle
/// against how long a scan takes: max(4, span x (avg_idle / 512) / avg_scan_cost).
fn sis_prop_budget(sim: &Sim, target: usize, span: u64) -> Option<u64> {
    let avg_idle = sim.cpus[target].avg_idle_ns / 512;
    let avg_cost = sim.llc_avg_scan_cost_ns[sim.topo.cpus[target].llc] + 1;
    let span_avg = span * avg_idle;
    Some(if span_avg > 4 * avg_cost {
        span_avg / avg_cost
    } else {
        4
    })
}

/// SIS_UTIL: the scan budget shrinks with the LLC's utilisation x:
/// y = 1024 - x^2 pct^2 / (10000 x 1024), nr = llc_weight x y / 1024;
/// 0 from about 85% utilisation at imbalance_pct 117.
fn sis_util_nr_scan(sim: &Sim, llc: &crate::cpuset::CpuSet, target: usize) -> u64 {
    let weight = llc.len() as u64;
    let util: u64 = llc
        .iter()
        .map(|c| sim.cpus[c].rq.pelt.util_avg.min(SCHED_CAPACITY_SCALE))
        .sum();
    let x = util / weight;
    let pct = llc_domain(sim, target).map_or(117, |d| d.params.imbalance_pct as u64);
    let tmp = (x * x * pct * pct / (10_000 * SCHED_CAPACITY_SCALE)).min(SCHED_CAPACITY_SCALE);
    (SCHED_CAPACITY_SCALE - tmp) * weight / SCHED_CAPACITY_SCALE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wake_affine_weight_by_hand() {
        // 6.5, this = 1024, prev = 2048, task 512, imbalance_pct 117, no sync:
        // this_eff = (1024 + 512) x 100 x 1024 = 157,286,400;
        // prev_eff = (2048 - 512) x 108 x 1024 = 169,869,312 -> this CPU.
        assert!(wake_affine_weight(
            Era::V6_5,
            (1024, 2048),
            0,
            512,
            117,
            true,
            false
        ));
        // Without WA_BIAS both sides are 1536 x 1024: a tie goes to prev.
        assert!(!wake_affine_weight(
            Era::V6_5,
            (1024, 2048),
            0,
            512,
            117,
            false,
            false
        ));
        // 4.15 breaks the same tie towards this CPU.
        assert!(wake_affine_weight(
            Era::V4_15,
            (1024, 2048),
            0,
            512,
            117,
            false,
            false
        ));
    }

    #[test]
    fn wake_affine_weight_sync_cases() {
        // Sync: the waker's load (1500) exceeds this CPU's (1024): pick this at once.
        assert!(wake_affine_weight(
            Era::V6_5,
            (1024, 0),
            1500,
            512,
            117,
            true,
            true
        ));
        // Sync: this = 2048 - waker 1024 = 1024, + task 512 = 1536 -> x100 x1024
        // = 157,286,400; prev = (1536 - 512) x 108 x 1024 = 113,246,208 (+1): prev.
        assert!(!wake_affine_weight(
            Era::V6_5,
            (2048, 1536),
            1024,
            512,
            117,
            true,
            true
        ));
        // Without bias and with sync, a tie (1536 vs 1536) goes to this thanks to the +1.
        assert!(wake_affine_weight(
            Era::V6_5,
            (2048, 2048),
            1024,
            512,
            117,
            false,
            true
        ));
        // ... and without sync, the same loads tie to prev.
        assert!(!wake_affine_weight(
            Era::V6_5,
            (1024, 2048),
            0,
            512,
            117,
            false,
            false
        ));
    }
}

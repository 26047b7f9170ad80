//! The 2.6.27 / 2.6.28 wakeup path: select_task_rq_fair with this_sd,
//! wake_affine on cpu_load[] indexes with the imbalance bias, sync and the
//! avg_overlap cancel, passive SD_WAKE_BALANCE, and wake_idle with
//! SD_WAKE_IDLE / SD_WAKE_IDLE_FAR.

use super::Placement;
use crate::engine::Sim;
use crate::policy::{Feature, SdFlag, SdFlags};

/// weighted_cpuload: the queue's instantaneous weight.
fn weighted_cpuload(sim: &Sim, cpu: usize) -> u64 {
    sim.cpus[cpu].rq.load_weight
}

pub(crate) fn source_load(sim: &Sim, cpu: usize, idx: u32) -> u64 {
    let lb_bias = sim.policy.features.has(Feature::LbBias);
    sim.cpus[cpu]
        .cpu_load
        .source_load(sim.instant_load(cpu), idx, lb_bias)
}

pub(crate) fn target_load(sim: &Sim, cpu: usize, idx: u32) -> u64 {
    let lb_bias = sim.policy.features.has(Feature::LbBias);
    sim.cpus[cpu]
        .cpu_load
        .target_load(sim.instant_load(cpu), idx, lb_bias)
}

/// (source_load, target_load) of `cpu` on history index `idx`.
pub(crate) fn loads(sim: &Sim, cpu: usize, idx: u32) -> (u64, u64) {
    (source_load(sim, cpu, idx), target_load(sim, cpu, idx))
}

/// The domain fields the wakeup path reads.
#[derive(Clone, Copy)]
struct ThisSd {
    level: &'static str,
    flags: SdFlags,
    imbalance_pct: u32,
    wake_idx: u32,
}

pub(super) fn select(sim: &mut Sim, p: usize, prev: usize, this: usize, sync: bool) -> Placement {
    let mut placed = Placement::new(prev, "prev");
    if prev == this {
        return wake_idle(sim, p, prev, placed);
    }
    let this_sd = sim.domains.lowest_spanning(this, prev).map(|d| ThisSd {
        level: d.level,
        flags: d.params.flags,
        imbalance_pct: d.params.imbalance_pct,
        wake_idx: d.params.wake_idx,
    });
    let Some(sd) = this_sd else {
        return wake_idle(sim, p, prev, placed);
    };
    if !sim.allowed(p).contains(this) {
        return wake_idle(sim, p, prev, placed);
    }
    let imbalance = 100 + (sd.imbalance_pct as i64 - 100) / 2;
    let load = source_load(sim, prev, sd.wake_idx) as i64;
    let this_load = target_load(sim, this, sd.wake_idx) as i64;
    if wake_affine(sim, &sd, p, prev, this, sync, load, this_load, imbalance) {
        placed.step("wake_affine", sd.level, "affine");
        placed.decide(this, "wake_affine");
        return placed;
    }
    // Passive balancing once half the imbalance_pct limit is reached.
    if sd.flags.has(SdFlag::WakeBalance) && imbalance * this_load <= 100 * load {
        placed.step("wake_affine", sd.level, "passive");
        placed.decide(this, "wake_balance");
        return placed;
    }
    if sd.flags.has(SdFlag::WakeAffine) {
        placed.step("wake_affine", sd.level, "prev");
    }
    wake_idle(sim, p, prev, placed)
}

#[cfg(test)]
pub(super) fn select_for_test(
    sim: &mut Sim,
    p: usize,
    prev: usize,
    this: usize,
    sync: bool,
) -> Placement {
    select(sim, p, prev, this, sync)
}

#[allow(clippy::too_many_arguments)]
fn wake_affine(
    sim: &Sim,
    sd: &ThisSd,
    p: usize,
    prev: usize,
    this: usize,
    sync: bool,
    load: i64,
    this_load: i64,
    imbalance: i64,
) -> bool {
    let f = &sim.policy.features;
    if !sd.flags.has(SdFlag::WakeAffine) || !f.has(Feature::AffineWakeups) {
        return false;
    }
    let curr = sim.cpus[this].rq.curr;
    let migration_cost = sim.policy.tunables.migration_cost_ns;
    // A sync wakeup only counts if waker and wakee both sleep soon after waking others.
    let sync = sync
        && f.has(Feature::SyncWakeups)
        && curr.is_some_and(|c| {
            sim.tasks[c].avg_overlap_ns <= migration_cost
                && sim.tasks[p].avg_overlap_ns <= migration_cost
        });
    let mut tl = this_load;
    if sync {
        // Subtract the (maximum possible) effect of the waker, who will sleep.
        tl -= sim.ents[curr.expect("sync has a waker")].weight as i64;
    }
    let weight = sim.ents[p].weight as i64;
    let balanced = 100 * (tl + weight) <= imbalance * load;
    if sync && balanced {
        return true;
    }
    let rq = &sim.cpus[this].rq;
    let tl_per_task = if rq.nr_running > 0 {
        (weighted_cpuload(sim, this) / rq.nr_running as u64) as i64
    } else {
        0
    };
    balanced || (tl <= load && tl + target_load(sim, prev, sd.wake_idx) as i64 <= tl_per_task)
}

/// A task is cache-hot if it ran within migration_cost.
pub(crate) fn task_hot(sim: &Sim, p: usize) -> bool {
    sim.now.saturating_sub(sim.ents[p].exec_start_ns) < sim.policy.tunables.migration_cost_ns
}

/// wake_idle: keep `cpu` if idle or already busy with more than one task;
/// else look for an idle CPU in domains with SD_WAKE_IDLE (or
/// SD_WAKE_IDLE_FAR for a cache-cold task), stopping at the first without.
fn wake_idle(sim: &Sim, p: usize, cpu: usize, mut placed: Placement) -> Placement {
    if sim.cpu_curr_idle(cpu) || sim.cpus[cpu].rq.nr_running > 1 {
        return placed;
    }
    let allowed = *sim.allowed(p);
    for d in sim.domains.of(cpu) {
        let searches = d.has(SdFlag::WakeIdle) || (d.has(SdFlag::WakeIdleFar) && !task_hot(sim, p));
        if !searches {
            break;
        }
        for i in d.span.intersection(&allowed).iter() {
            placed.scanned += 1;
            if sim.cpu_curr_idle(i) {
                placed.step("wake_idle", d.level, "found");
                placed.decide(i, "wake_idle");
                return placed;
            }
        }
    }
    placed
}

//! The 2.6.27 / 2.6.28 wakeup path: select_task_rq_fair with this_sd,
//! wake_affine on cpu_load[] indexes with the imbalance bias, sync and the
//! avg_overlap cancel, passive SD_WAKE_BALANCE, and wake_idle with
//! SD_WAKE_IDLE / SD_WAKE_IDLE_FAR.

use super::placement::Placement;
use crate::counters::{Affine, Counter, Reason};
use crate::policy::{Feature, SdFlag, SdFlags};
use crate::sched::env::{ran_recently, SchedEnv};
use crate::sched::load_index::{source_load, target_load, weighted_cpuload};

/// The domain fields the wakeup path reads.
#[derive(Clone, Copy)]
struct ThisSd {
    level: &'static str,
    flags: SdFlags,
    imbalance_pct: u32,
    wake_idx: u32,
}

pub(super) fn select(
    env: &mut impl SchedEnv,
    p: usize,
    prev: usize,
    this: usize,
    sync: bool,
) -> Placement {
    let mut placed = Placement::new(prev, Reason::Prev);
    let rules = env.policy().era.rules();
    if prev == this && !rules.affine_when_prev_is_this {
        return wake_idle(env, p, prev, placed);
    }
    let this_sd = env.domains().lowest_spanning(this, prev).map(|d| ThisSd {
        level: d.level,
        flags: d.params.flags,
        imbalance_pct: d.params.imbalance_pct,
        wake_idx: d.params.wake_idx,
    });
    let Some(sd) = this_sd else {
        return wake_idle(env, p, prev, placed);
    };
    if !env.allowed(p).contains(this) {
        return wake_idle(env, p, prev, placed);
    }
    let imbalance = 100 + (sd.imbalance_pct as i64 - 100) / 2;
    let load = source_load(env, prev, sd.wake_idx) as i64;
    let this_load = target_load(env, this, sd.wake_idx) as i64;
    if wake_affine(env, &sd, p, prev, this, sync, load, this_load, imbalance) {
        placed.step(Counter::WakeAffine {
            level: sd.level,
            outcome: Affine::Affine,
        });
        placed.decide(this, Reason::WakeAffine);
        return placed;
    }
    if prev == this {
        return wake_idle(env, p, prev, placed);
    }
    // Passive balancing once half the imbalance_pct limit is reached.
    if sd.flags.has(SdFlag::WakeBalance) && imbalance * this_load <= 100 * load {
        placed.step(Counter::WakeAffine {
            level: sd.level,
            outcome: Affine::Passive,
        });
        placed.decide(this, Reason::WakeBalance);
        return placed;
    }
    if sd.flags.has(SdFlag::WakeAffine) {
        placed.step(Counter::WakeAffine {
            level: sd.level,
            outcome: Affine::Prev,
        });
    }
    wake_idle(env, p, prev, placed)
}

#[allow(clippy::too_many_arguments)]
fn wake_affine(
    env: &impl SchedEnv,
    sd: &ThisSd,
    p: usize,
    prev: usize,
    this: usize,
    sync: bool,
    load: i64,
    this_load: i64,
    imbalance: i64,
) -> bool {
    let f = &env.policy().features;
    if !sd.flags.has(SdFlag::WakeAffine) || !f.has(Feature::AffineWakeups) {
        return false;
    }
    let curr = env.rq(this).curr;
    let migration_cost = env.policy().tunables.migration_cost_ns;
    // 2.6.28: a sync wakeup only counts if waker and wakee both sleep soon
    // after waking others; 2.6.27 trusts the hint.
    let ignores_overlap = env.policy().era.rules().affine_sync_ignores_overlap;
    let sync = sync
        && f.has(Feature::SyncWakeups)
        && curr.is_some_and(|c| {
            ignores_overlap
                || (env.task(c).avg_overlap_ns <= migration_cost
                    && env.task(p).avg_overlap_ns <= migration_cost)
        });
    let mut tl = this_load;
    if sync {
        // Subtract the (maximum possible) effect of the waker, who will sleep.
        tl -= env.entity(curr.expect("sync has a waker")).weight as i64;
    }
    let weight = env.entity(p).weight as i64;
    let balanced = 100 * (tl + weight) <= imbalance * load;
    if sync && balanced {
        return true;
    }
    let rq = &env.rq(this);
    let tl_per_task = if rq.nr_running > 0 {
        (weighted_cpuload(env, this) / rq.nr_running as u64) as i64
    } else {
        0
    };
    balanced || (tl <= load && tl + target_load(env, prev, sd.wake_idx) as i64 <= tl_per_task)
}

/// wake_idle: keep `cpu` if idle or already busy with more than one task;
/// else look for an idle CPU in domains with SD_WAKE_IDLE (or
/// SD_WAKE_IDLE_FAR for a cache-cold task), stopping at the first without.
fn wake_idle(env: &impl SchedEnv, p: usize, cpu: usize, mut placed: Placement) -> Placement {
    if env.cpu_curr_idle(cpu) || env.rq(cpu).nr_running > 1 {
        return placed;
    }
    let allowed = *env.allowed(p);
    for d in env.domains().of(cpu) {
        let searches =
            d.has(SdFlag::WakeIdle) || (d.has(SdFlag::WakeIdleFar) && !ran_recently(env, p));
        if !searches {
            break;
        }
        for i in d.span.intersection(&allowed).iter() {
            placed.scanned += 1;
            if env.cpu_curr_idle(i) {
                placed.step(Counter::WakeIdleFound { level: d.level });
                placed.decide(i, Reason::WakeIdle);
                return placed;
            }
        }
    }
    placed
}

//! The 2.6.27 / 2.6.28 wakeup path: select_task_rq_fair with this_sd,
//! wake_affine on cpu_load[] indexes with the imbalance bias, sync and the
//! avg_overlap cancel, passive SD_WAKE_BALANCE, and wake_idle with
//! SD_WAKE_IDLE / SD_WAKE_IDLE_FAR.

use super::placement::Placement;
use crate::counters::{Affine, Counter, Reason};
use crate::policy::{Feature, SdFlag, SdFlags};
use crate::sched::env::{ran_recently, SchedEnv};
use crate::sched::load_index::{source_load, target_load, weighted_cpuload};
use crate::sched::why::{self, Op};

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
    let era = env.policy().era;
    let rules = era.rules();
    why::note(env, |t| {
        t.step(0, "select_task_rq_fair");
        t.value("prev_cpu", prev as i64);
        t.value("this_cpu", this as i64);
        t.value("sync", sync as i64);
    });
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
    why::note(env, |t| {
        t.step(1, "this_sd (lowest domain spanning this_cpu and prev_cpu)");
        for flag in [SdFlag::WakeAffine, SdFlag::WakeBalance] {
            t.sd(era, sd.level, flag, sd.flags.has(flag));
        }
        t.value("imbalance_pct", sd.imbalance_pct as i64);
        t.value("wake_idx", sd.wake_idx as i64);
    });
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
    why::note(env, |t| {
        t.step(1, "wake_balance (passive)");
        t.sd(
            era,
            sd.level,
            SdFlag::WakeBalance,
            sd.flags.has(SdFlag::WakeBalance),
        );
        t.cmp(
            ("imbalance * this_load", imbalance * this_load),
            Op::Le,
            ("100 * load", 100 * load),
        );
    });
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
    let era = env.policy().era;
    why::note(env, |t| {
        t.step(1, "wake_affine");
        t.sd(
            era,
            sd.level,
            SdFlag::WakeAffine,
            sd.flags.has(SdFlag::WakeAffine),
        );
        t.feature(era, Feature::AffineWakeups, f.has(Feature::AffineWakeups));
    });
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
    why::note(env, |t| {
        t.feature(era, Feature::SyncWakeups, f.has(Feature::SyncWakeups));
        if ignores_overlap {
            t.note("sync trusted as given (no avg_overlap test)");
        } else if let Some(c) = curr {
            t.cmp(
                ("current->se.avg_overlap", env.task(c).avg_overlap_ns as i64),
                Op::Le,
                ("sysctl_sched_migration_cost", migration_cost as i64),
            );
            t.cmp(
                ("p->se.avg_overlap", env.task(p).avg_overlap_ns as i64),
                Op::Le,
                ("sysctl_sched_migration_cost", migration_cost as i64),
            );
        }
        t.value("sync (after the checks)", sync as i64);
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
    let prev_target = target_load(env, prev, sd.wake_idx) as i64;
    why::note(env, |t| {
        t.value("load (source_load of prev_cpu)", load);
        t.value("this_load (target_load of this_cpu)", this_load);
        t.value("tl (this_load, less the waker's weight if sync)", tl);
        t.value("p->se.load.weight", weight);
        t.cmp(
            ("100 * (tl + weight)", 100 * (tl + weight)),
            Op::Le,
            ("imbalance * load", imbalance * load),
        );
        if !(sync && balanced) {
            t.cmp(("tl", tl), Op::Le, ("load", load));
            t.cmp(
                ("tl + target_load(prev_cpu)", tl + prev_target),
                Op::Le,
                ("tl_per_task", tl_per_task),
            );
        }
    });
    balanced || (tl <= load && tl + prev_target <= tl_per_task)
}

/// wake_idle: keep `cpu` if idle or already busy with more than one task;
/// else look for an idle CPU in domains with SD_WAKE_IDLE (or
/// SD_WAKE_IDLE_FAR for a cache-cold task), stopping at the first without.
fn wake_idle(env: &impl SchedEnv, p: usize, cpu: usize, mut placed: Placement) -> Placement {
    why::note(env, |t| {
        t.step(1, "wake_idle");
        t.cpu(
            cpu,
            if env.cpu_curr_idle(cpu) {
                "idle: kept"
            } else if env.rq(cpu).nr_running > 1 {
                "runs more than one task: kept"
            } else {
                "busy with one task: search"
            },
        );
    });
    if env.cpu_curr_idle(cpu) || env.rq(cpu).nr_running > 1 {
        return placed;
    }
    let era = env.policy().era;
    let allowed = *env.allowed(p);
    for d in env.domains().of(cpu) {
        let searches =
            d.has(SdFlag::WakeIdle) || (d.has(SdFlag::WakeIdleFar) && !ran_recently(env, p));
        why::note(env, |t| {
            t.sd(era, d.level, SdFlag::WakeIdle, d.has(SdFlag::WakeIdle));
            if d.has(SdFlag::WakeIdleFar) {
                t.sd(era, d.level, SdFlag::WakeIdleFar, true);
            }
        });
        if !searches {
            break;
        }
        for i in d.span.intersection(&allowed).iter() {
            placed.scanned += 1;
            why::note(env, |t| {
                t.cpu(i, if env.cpu_curr_idle(i) { "idle" } else { "busy" });
            });
            if env.cpu_curr_idle(i) {
                placed.step(Counter::WakeIdleFound { level: d.level });
                placed.decide(i, Reason::WakeIdle);
                return placed;
            }
        }
    }
    placed
}

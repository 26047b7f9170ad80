//! The 4.15 and 6.5 wakeup paths: record_wakee / wake_wide, the domain walk
//! to the first SD_WAKE_AFFINE domain spanning prev, wake_affine (WA_IDLE
//! then WA_WEIGHT), and select_idle_sibling. Where the eras differ each has
//! its own function.

use super::placement::Placement;
use super::slow;
use crate::counters::{Affine, Counter, Reason, Sis};
use crate::policy::{Feature, IdleSibling, SdFlag, WakeAffineIdle, WeightLoads, WeightTie};
use crate::sched::env::{shares_cache, SchedEnv};
use crate::sched::load::{update_avg, SCHED_CAPACITY_SCALE};
use crate::sched::load_index::{source_load, target_load};
use crate::sched::why::{self, Op};

/// Flips of a waker's wakee halve at most once a second.
const WAKEE_FLIP_DECAY_NS: u64 = 1_000_000_000;

/// select_task_rq_fair for a wakeup (`flag` BALANCE_WAKE) or a fork
/// (`flag` BALANCE_FORK; `prev` is then the parent's CPU).
pub(super) fn select(
    env: &mut impl SchedEnv,
    p: usize,
    prev: usize,
    this: usize,
    sync: bool,
    flag: SdFlag,
) -> Placement {
    let mut placed = Placement::new(prev, Reason::Prev);
    let wakeup = flag == SdFlag::BalanceWake;
    let era = env.policy().era;
    why::note(env, |t| {
        t.step(0, "select_task_rq_fair");
        t.value("prev_cpu", prev as i64);
        t.value("this_cpu", this as i64);
        t.value("sync", sync as i64);
    });
    let waker = env.rq(this).curr.filter(|&w| w != p);
    let mut want_affine = false;
    if wakeup {
        if let Some(w) = waker {
            record_wakee(env, w, p);
        }
        let wide = wake_wide(env, waker, p, this);
        if wide {
            placed.step(Counter::WakeWide);
        }
        want_affine = !wide && env.allowed(p).contains(this);
    }
    why::note(env, |t| {
        t.step(1, "for_each_domain");
        t.value("want_affine", want_affine as i64);
    });
    let rules = env.policy().era.rules();
    let mut affine_sd = None;
    let mut slow_sd = None;
    for (i, d) in env.domains().of(this).enumerate() {
        if rules.wake_walk_needs_load_balance && !d.has(SdFlag::LoadBalance) {
            break;
        }
        why::note(env, |t| {
            t.sd(era, d.level, SdFlag::WakeAffine, d.has(SdFlag::WakeAffine));
            if want_affine && d.has(SdFlag::WakeAffine) {
                t.note(if d.span.contains(prev) {
                    "spans prev_cpu: affine_sd"
                } else {
                    "does not span prev_cpu"
                });
            }
            t.sd(era, d.level, flag, d.has(flag));
        });
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
                env,
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
        None if wakeup => select_idle_sibling(env, &mut placed, p, prev, new_cpu, this),
        None => placed.decide(new_cpu, Reason::Prev),
        Some(level) => {
            why::note(env, |t| t.step(1, rules.fn_names.find_idlest_cpu));
            let cpu = slow::find_idlest_cpu(env, p, this, prev, level, flag);
            placed.step(Counter::SelectSlow);
            placed.decide(cpu, Reason::FindIdlestCpu);
        }
    }
    placed
}

fn record_wakee(env: &mut impl SchedEnv, waker: usize, p: usize) {
    let now = env.now();
    let w = env.task_mut(waker);
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
fn llc_domain(env: &impl SchedEnv, cpu: usize) -> Option<&crate::domains::Domain> {
    env.domains()
        .of(cpu)
        .rev()
        .find(|d| d.has(SdFlag::SharePkgResources))
}

/// wake_wide: many-to-many wakeups spread out instead of piling onto the waker.
fn wake_wide(env: &impl SchedEnv, waker: Option<usize>, p: usize, this: usize) -> bool {
    let factor = llc_domain(env, this).map_or(1, |d| d.span.len() as u64);
    let a = waker.map_or(0, |w| env.task(w).wakee_flips);
    let b = env.task(p).wakee_flips;
    let (master, slave) = (a.max(b), a.min(b));
    why::note(env, |t| {
        t.step(1, "wake_wide");
        t.value("factor (sd_llc_size)", factor as i64);
        t.cmp(("slave", slave as i64), Op::Lt, ("factor", factor as i64));
        t.cmp(
            ("master", master as i64),
            Op::Lt,
            ("slave * factor", (slave * factor) as i64),
        );
    });
    !(slave < factor || master < slave * factor)
}

#[allow(clippy::too_many_arguments)]
fn wake_affine(
    env: &impl SchedEnv,
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
    let f = &env.policy().features;
    let era = env.policy().era;
    let rules = era.rules();
    let mut target = None;
    why::note(env, |t| {
        t.step(1, "wake_affine");
        t.sd(era, level, SdFlag::WakeAffine, true);
        t.feature(era, Feature::WaIdle, f.has(Feature::WaIdle));
    });
    if f.has(Feature::WaIdle) {
        target = match rules.wake_affine_idle {
            WakeAffineIdle::ThisIdleOrSync => wake_affine_idle_4_15(env, this, sync),
            WakeAffineIdle::AlsoIdlePrev => wake_affine_idle_6_5(env, this, prev, sync),
        };
        why::note(env, |t| {
            t.step(2, "wake_affine_idle");
            t.cpu(this, idle_word(env, this));
            t.cpu(prev, idle_word(env, prev));
            if rules.wake_affine_idle == WakeAffineIdle::AlsoIdlePrev {
                t.note(if shares_cache(env, this, prev) {
                    "cpus_share_cache(this_cpu, prev_cpu)"
                } else {
                    "this_cpu and prev_cpu share no cache"
                });
            }
            t.cmp(
                ("this_rq()->nr_running", env.rq(this).nr_running as i64),
                Op::Eq,
                ("1", 1),
            );
            t.value("target", target.map_or(-1, |c| c as i64));
        });
        if let Some(t) = target {
            placed.step(Counter::WakeAffine {
                level,
                outcome: if t == this {
                    Affine::Idle
                } else {
                    Affine::IdlePrev
                },
            });
        }
    }
    if target.is_none() {
        why::note(env, |t| {
            t.feature(era, Feature::WaWeight, f.has(Feature::WaWeight));
        });
    }
    if f.has(Feature::WaWeight) && target.is_none() {
        let loads = match rules.weight_loads {
            WeightLoads::CpuLoadHistory => weight_loads_4_15(env, this, prev, wake_idx),
            WeightLoads::QueuePelt => weight_loads_6_5(env, this, prev),
        };
        let current = waker.map_or(0, |w| env.entity(w).pelt.load_avg);
        let task = env.entity(p).pelt.load_avg;
        let bias = f.has(Feature::WaBias);
        let sides = weight_sides(
            rules.weight_tie,
            loads,
            current,
            task,
            imbalance_pct,
            bias,
            sync,
        );
        let picks_this = sides.picks_this();
        why::note(env, |t| {
            t.step(2, "wake_affine_weight");
            t.feature(era, Feature::WaBias, bias);
            t.value("this_eff_load (load of this_cpu)", loads.0 as i64);
            t.value("prev_eff_load (load of prev_cpu)", loads.1 as i64);
            t.value("task_load", task as i64);
            t.value("current_load (the waker)", current as i64);
            t.value("imbalance_pct", imbalance_pct as i64);
            if sides.sync_waker_heavier {
                t.cmp(
                    ("current_load", current as i64),
                    Op::Gt,
                    ("this_eff_load", loads.0 as i64),
                );
            } else {
                t.cmp(
                    ("this_eff_load", sides.this_eff),
                    sides.op,
                    ("prev_eff_load", sides.prev_eff),
                );
            }
        });
        if picks_this {
            target = Some(this);
            placed.step(Counter::WakeAffine {
                level,
                outcome: Affine::Weight,
            });
        }
    }
    match target {
        Some(t) => {
            placed.decide(
                t,
                if t == this {
                    Reason::WakeAffine
                } else {
                    Reason::WakeAffinePrevIdle
                },
            );
            t
        }
        None => {
            placed.step(Counter::WakeAffine {
                level,
                outcome: Affine::Prev,
            });
            prev
        }
    }
}

/// wake_affine_idle (v4.15 kernel/sched/fair.c): this CPU if it is idle,
/// or for a sync wakeup from a CPU running only the waker.
fn wake_affine_idle_4_15(env: &impl SchedEnv, this: usize, sync: bool) -> Option<usize> {
    (env.cpu_idle(this) || (sync && env.rq(this).nr_running == 1)).then_some(this)
}

/// wake_affine_idle (v6.5): an idle CPU sharing a cache with prev gives
/// prev if it is idle too, else itself; a sync wakeup from a CPU running
/// only the waker gives this CPU; then an idle prev.
fn wake_affine_idle_6_5(
    env: &impl SchedEnv,
    this: usize,
    prev: usize,
    sync: bool,
) -> Option<usize> {
    if env.cpu_idle(this) && shares_cache(env, this, prev) {
        return Some(if env.cpu_idle(prev) { prev } else { this });
    }
    if sync && env.rq(this).nr_running == 1 {
        return Some(this);
    }
    env.cpu_idle(prev).then_some(prev)
}

/// (this CPU's load, prev's load) as 4.15's wake_affine_weight reads them:
/// target_load and source_load on the wake_idx history.
fn weight_loads_4_15(env: &impl SchedEnv, this: usize, prev: usize, wake_idx: u32) -> (u64, u64) {
    (
        target_load(env, this, wake_idx),
        source_load(env, prev, wake_idx),
    )
}

/// 6.5: the queues' PELT load.
fn weight_loads_6_5(env: &impl SchedEnv, this: usize, prev: usize) -> (u64, u64) {
    (env.rq(this).pelt.load_avg, env.rq(prev).pelt.load_avg)
}

/// wake_affine_weight: whether this CPU, with the task added and (for a sync
/// wakeup) the waker taken away, is less loaded than prev without the task,
/// prev's side biased by half the imbalance_pct (WA_BIAS). All capacities
/// are SCHED_CAPACITY_SCALE. 4.15 breaks ties towards this CPU; 6.5 towards
/// prev, except that a sync wakeup adds one to prev's side.
#[cfg(test)]
pub(crate) fn wake_affine_weight(
    tie: WeightTie,
    loads: (u64, u64),
    current_load: u64,
    task_load: u64,
    imbalance_pct: u32,
    wa_bias: bool,
    sync: bool,
) -> bool {
    weight_sides(
        tie,
        loads,
        current_load,
        task_load,
        imbalance_pct,
        wa_bias,
        sync,
    )
    .picks_this()
}

/// Both sides of wake_affine_weight's last inequality (`this_eff op
/// prev_eff` picks this CPU), or the sync shortcut taken before it.
struct WeightSides {
    sync_waker_heavier: bool,
    this_eff: i64,
    op: Op,
    prev_eff: i64,
}

impl WeightSides {
    fn picks_this(&self) -> bool {
        self.sync_waker_heavier || self.op.holds(self.this_eff, self.prev_eff)
    }
}

fn weight_sides(
    tie: WeightTie,
    (this_load, prev_load): (u64, u64),
    current_load: u64,
    task_load: u64,
    imbalance_pct: u32,
    wa_bias: bool,
    sync: bool,
) -> WeightSides {
    let cap = SCHED_CAPACITY_SCALE as i128;
    let mut this_eff = this_load as i128;
    let narrow = |v: i128| v.clamp(i64::MIN as i128, i64::MAX as i128) as i64;
    if sync {
        let current = current_load as i128;
        if current > this_eff {
            return WeightSides {
                sync_waker_heavier: true,
                this_eff: 0,
                op: Op::Lt,
                prev_eff: 0,
            };
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
    let op = match tie {
        WeightTie::ThisCpu => Op::Le,
        WeightTie::PrevUnlessSync => {
            if sync {
                prev_eff += 1;
            }
            Op::Lt
        }
    };
    WeightSides {
        sync_waker_heavier: false,
        this_eff: narrow(this_eff),
        op,
        prev_eff: narrow(prev_eff),
    }
}

/// select_idle_sibling for a wakeup by a task on CPU `this`.
fn select_idle_sibling(
    env: &mut impl SchedEnv,
    placed: &mut Placement,
    p: usize,
    prev: usize,
    target: usize,
    this: usize,
) {
    why::note(env, |t| {
        t.step(1, "select_idle_sibling");
        t.value("target", target as i64);
    });
    let found = match env.policy().era.rules().idle_sibling {
        IdleSibling::V4_15 => select_idle_sibling_4_15(env, placed, p, prev, target, this),
        IdleSibling::V6_5 => select_idle_sibling_6_5(env, placed, p, prev, target, this),
    };
    match found {
        Some((cpu, branch)) => {
            placed.step(Counter::Sis(branch));
            placed.decide(cpu, Reason::Sis(branch));
        }
        None => {
            placed.step(Counter::Sis(Sis::ScanFailed));
            placed.decide(
                target,
                if target == prev {
                    Reason::Prev
                } else {
                    Reason::WakeAffine
                },
            );
        }
    }
}

/// The "target idle" and "prev idle and cache-affine" steps both eras share.
fn sis_quick(env: &impl SchedEnv, prev: usize, target: usize) -> Option<(usize, Sis)> {
    why::note(env, |t| {
        t.cpu(
            target,
            if env.cpu_idle(target) {
                "target: idle"
            } else {
                "target: busy"
            },
        );
        if prev != target {
            t.cpu(
                prev,
                if !shares_cache(env, prev, target) {
                    "prev: another LLC"
                } else if env.cpu_idle(prev) {
                    "prev: idle, shares the LLC"
                } else {
                    "prev: busy"
                },
            );
        }
    });
    if env.cpu_idle(target) {
        return Some((target, Sis::TargetIdle));
    }
    if prev != target && shares_cache(env, prev, target) && env.cpu_idle(prev) {
        return Some((prev, Sis::PrevIdle));
    }
    None
}

/// 4.15: target, prev, then select_idle_core, select_idle_cpu (SIS_PROP:
/// the waker's avg_idle against its LLC's scan cost; unbounded without
/// it), select_idle_smt over target's LLC. No recent_used_cpu (that is 4.16).
pub(super) fn select_idle_sibling_4_15(
    env: &mut impl SchedEnv,
    placed: &mut Placement,
    p: usize,
    prev: usize,
    target: usize,
    this: usize,
) -> Option<(usize, Sis)> {
    if let Some(hit) = sis_quick(env, prev, target) {
        return Some(hit);
    }
    let llc = llc_domain(env, target)?.span;
    let cpus = llc.intersection(env.allowed(p));
    let smt = env.topology().smt_threads() > 1;
    let llc_id = env.topology().cpus[target].llc;
    if smt && env.state().llc_has_idle_cores[llc_id] {
        why::note(env, |t| t.step(2, "select_idle_core"));
        if let Ok(core) = scan_idle_core(env, placed, &cpus, target) {
            return Some((core, Sis::ScanFound));
        }
        env.state_mut().llc_has_idle_cores[llc_id] = false;
    }
    let era = env.policy().era;
    let sis_prop = env.policy().features.has(Feature::SisProp);
    why::note(env, |t| {
        t.step(2, "select_idle_cpu");
        t.feature(era, Feature::SisProp, sis_prop);
    });
    let nr = if sis_prop {
        sis_prop_budget(env, this, llc.len() as u64)
    } else {
        u64::MAX
    };
    if let Some(cpu) = scan_idle_cpu(env, placed, &cpus, target, nr, this) {
        return Some((cpu, Sis::ScanFound));
    }
    if smt {
        why::note(env, |t| t.step(2, "select_idle_smt"));
        if let Some(cpu) = idle_sibling(env, p, target) {
            return Some((cpu, Sis::Smt));
        }
    }
    None
}

/// 6.5: target, prev, recent_used_cpu, an idle SMT sibling of prev when no
/// core is idle, then select_idle_cpu starting after target: SIS_UTIL's
/// budget (an empty one skips the scan), then idle cores (falling back to
/// the first idle thread seen), or single CPUs within the SIS_UTIL /
/// SIS_PROP budget. recent_used_cpu becomes prev only on the way past the
/// target and prev steps (since 5.15; an early return leaves it).
pub(super) fn select_idle_sibling_6_5(
    env: &mut impl SchedEnv,
    placed: &mut Placement,
    p: usize,
    prev: usize,
    target: usize,
    this: usize,
) -> Option<(usize, Sis)> {
    if let Some(hit) = sis_quick(env, prev, target) {
        return Some(hit);
    }
    let recent = std::mem::replace(&mut env.task_mut(p).recent_used_cpu, prev);
    why::note(env, |t| {
        if recent != prev && recent != target {
            t.cpu(
                recent,
                if !shares_cache(env, recent, target) {
                    "recent_used_cpu: another LLC"
                } else if !env.cpu_idle(recent) {
                    "recent_used_cpu: busy"
                } else if !env.allowed(p).contains(recent) {
                    "recent_used_cpu: not allowed"
                } else {
                    "recent_used_cpu: idle"
                },
            );
        }
    });
    if recent != prev
        && recent != target
        && shares_cache(env, recent, target)
        && env.cpu_idle(recent)
        && env.allowed(p).contains(recent)
    {
        return Some((recent, Sis::Recent));
    }
    let llc = llc_domain(env, target)?.span;
    let cpus = llc.intersection(env.allowed(p));
    let llc_id = env.topology().cpus[target].llc;
    let mut has_idle_core = false;
    if env.topology().smt_threads() > 1 {
        has_idle_core = env.state().llc_has_idle_cores[llc_id];
        if !has_idle_core && shares_cache(env, prev, target) {
            why::note(env, |t| t.step(2, "select_idle_smt"));
            if let Some(cpu) = idle_sibling(env, p, prev) {
                return Some((cpu, Sis::Smt));
            }
        }
    }
    let start = next_in(&cpus, target);
    let f = env.policy().features;
    let era = env.policy().era;
    why::note(env, |t| {
        t.step(2, "select_idle_cpu");
        t.value("has_idle_core", has_idle_core as i64);
        t.feature(era, Feature::SisProp, f.has(Feature::SisProp));
        t.feature(era, Feature::SisUtil, f.has(Feature::SisUtil));
    });
    let mut nr = u64::MAX;
    if f.has(Feature::SisProp) && !has_idle_core {
        nr = sis_prop_budget(env, this, llc.len() as u64);
    }
    if f.has(Feature::SisUtil) {
        // The budget periodic balancing of target's LLC last wrote.
        let llc_of_target = env.topology().cpus[target].llc;
        nr = env.state().llc_nr_idle_scan[llc_of_target] + 1;
        why::note(env, |t| {
            t.cmp(("sd_share->nr_idle_scan", nr as i64 - 1), Op::Gt, ("0", 0));
        });
        if nr == 1 {
            placed.step(Counter::Sis(Sis::UtilSkip));
            return None;
        }
    }
    if has_idle_core {
        let found = match scan_idle_core(env, placed, &cpus, start) {
            Ok(core) => Some(core),
            Err(first_idle_thread) => {
                env.state_mut().llc_has_idle_cores[llc_id] = false;
                first_idle_thread
            }
        };
        return found.map(|c| (c, Sis::ScanFound));
    }
    scan_idle_cpu(env, placed, &cpus, start, nr, this).map(|c| (c, Sis::ScanFound))
}

/// select_idle_smt: an idle SMT thread of `cpu`'s core that `p` may use.
fn idle_sibling(env: &impl SchedEnv, p: usize, cpu: usize) -> Option<usize> {
    let core = env.topology().core_span(cpu);
    let found = core
        .intersection(env.allowed(p))
        .intersection(&env.idle_cpus())
        .first();
    why::note(env, |t| match found {
        Some(c) => t.cpu(c, "idle thread of the core"),
        None => t.note("no idle thread in the core"),
    });
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
    let mut at = start;
    let mut wrapped = false;
    std::iter::from_fn(move || loop {
        match cpus.first_from(at) {
            Some(c) if !wrapped || c < start => {
                at = c + 1;
                return Some(c);
            }
            None if !wrapped => {
                wrapped = true;
                at = 0;
            }
            _ => return None,
        }
    })
}

/// select_idle_core: the first core in `cpus` (from `start`) whose threads
/// are all idle, or else the first idle thread of `cpus` it saw (which
/// 6.5's select_idle_cpu falls back to).
fn scan_idle_core(
    env: &impl SchedEnv,
    placed: &mut Placement,
    cpus: &crate::cpuset::CpuSet,
    start: usize,
) -> Result<usize, Option<usize>> {
    let idle = env.idle_cpus();
    let mut checked = crate::cpuset::CpuSet::new();
    let mut first_idle = None;
    for cpu in wrap_from(cpus, start) {
        if checked.contains(cpu) {
            continue;
        }
        let core = env.topology().core_span(cpu);
        checked = checked.union(&core);
        placed.scanned += core.len() as u32;
        let core_idle = core.is_subset(&idle);
        why::note(env, |t| {
            t.cpu(cpu, if core_idle { "core idle" } else { "core busy" });
        });
        if core_idle {
            return Ok(cpu);
        }
        if first_idle.is_none() {
            first_idle = core.intersection(cpus).intersection(&idle).first();
        }
    }
    Err(first_idle)
}

/// select_idle_cpu's single-CPU scan: at most `nr - 1` CPUs from `start`.
/// A scan that ends by finding a CPU or by covering them all updates the
/// waker's (`this`) LLC's average scan cost (SIS_PROP's estimate); one that
/// runs out of budget returns before it does (v4.15, v6.5).
fn scan_idle_cpu(
    env: &mut impl SchedEnv,
    placed: &mut Placement,
    cpus: &crate::cpuset::CpuSet,
    start: usize,
    nr: u64,
    this: usize,
) -> Option<usize> {
    // The kernel checks CPUs one by one in wrap order from `start`; the
    // first idle one in that order and its position there give the same
    // outcome and count from the idle mask.
    let budget = nr - 1;
    let idle = cpus.intersection(&env.idle_cpus());
    let first = idle.first_from(start).or_else(|| idle.first());
    let before_start = cpus.count_below(start) as u64;
    let n = cpus.len() as u64;
    let position = first.map(|c| {
        let below = cpus.count_below(c) as u64;
        if c >= start {
            below - before_start
        } else {
            n - before_start + below
        }
    });
    let (found, scanned, exhausted) = match position {
        Some(k) if k < budget => (first, k + 1, false),
        _ if n <= budget => (None, n, false),
        _ => (None, budget, true),
    };
    placed.scanned += scanned as u32;
    why::note(env, |t| {
        t.value(
            "nr (CPUs the budget allows)",
            budget.min(i64::MAX as u64) as i64,
        );
        for c in wrap_from(cpus, start).take(scanned as usize) {
            t.cpu(c, if Some(c) == found { "idle" } else { "busy" });
        }
        if exhausted {
            t.note("budget exhausted");
        }
    });
    if !exhausted {
        let llc = env.topology().cpus[this].llc;
        let time = env.scan_ns(scanned);
        // The scan's time comes off the waker's predicted idle time (v6.5).
        if env.policy().era.rules().sis_prop_wake_avg_idle
            && env.policy().features.has(Feature::SisProp)
        {
            let w = &mut env.state_mut().wake_avg_idle_ns[this];
            *w -= (*w).min(time);
        }
        let cost = &mut env.state_mut().llc_avg_scan_cost_ns[llc];
        update_avg(cost, time);
    }
    found
}

/// SIS_PROP: scan in proportion to how long the waker's CPU (`this`)
/// tends to stay idle against how long a scan of its LLC takes:
/// max(4, span x idle / avg_scan_cost), idle being avg_idle / 512
/// (v4.15) or wake_avg_idle (v6.5), first halved for each jiffy since its
/// stamp (while it is not 0: "if we're busy ... age away the remaining
/// predicted idle time").
fn sis_prop_budget(env: &mut impl SchedEnv, this: usize, span: u64) -> u64 {
    let avg_idle = if env.policy().era.rules().sis_prop_wake_avg_idle {
        let now = env.now() / env.policy().tunables.tick_ns();
        let st = env.state_mut();
        let (w, stamp) = (st.wake_avg_idle_ns[this], st.wake_stamp_jiffies[this]);
        // The kernel's loop halves once per jiffy until the stamp is
        // current or the estimate is 0.
        let n = now.saturating_sub(stamp).min(64 - w.leading_zeros() as u64);
        st.wake_avg_idle_ns[this] = w.checked_shr(n as u32).unwrap_or(0);
        st.wake_stamp_jiffies[this] = stamp + n;
        st.wake_avg_idle_ns[this]
    } else {
        env.avg_idle_ns(this) / 512
    };
    let avg_cost = env.state().llc_avg_scan_cost_ns[env.topology().cpus[this].llc] + 1;
    let span_avg = span * avg_idle;
    why::note(env, |t| {
        t.value("avg_idle (ns)", avg_idle as i64);
        t.value("avg_cost (ns)", avg_cost as i64);
        t.cmp(
            ("span_avg", span_avg as i64),
            Op::Gt,
            ("4 * avg_cost", 4 * avg_cost as i64),
        );
    });
    if span_avg > 4 * avg_cost {
        span_avg / avg_cost
    } else {
        4
    }
}

/// A CPU's state in a decision record.
fn idle_word(env: &impl SchedEnv, cpu: usize) -> &'static str {
    if env.cpu_idle(cpu) {
        "idle"
    } else {
        "busy"
    }
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
            WeightTie::PrevUnlessSync,
            (1024, 2048),
            0,
            512,
            117,
            true,
            false
        ));
        // Without WA_BIAS both sides are 1536 x 1024: a tie goes to prev.
        assert!(!wake_affine_weight(
            WeightTie::PrevUnlessSync,
            (1024, 2048),
            0,
            512,
            117,
            false,
            false
        ));
        // 4.15 breaks the same tie towards this CPU.
        assert!(wake_affine_weight(
            WeightTie::ThisCpu,
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
            WeightTie::PrevUnlessSync,
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
            WeightTie::PrevUnlessSync,
            (2048, 1536),
            1024,
            512,
            117,
            true,
            true
        ));
        // Without bias and with sync, a tie (1536 vs 1536) goes to this thanks to the +1.
        assert!(wake_affine_weight(
            WeightTie::PrevUnlessSync,
            (2048, 2048),
            1024,
            512,
            117,
            false,
            true
        ));
        // ... and without sync, the same loads tie to prev.
        assert!(!wake_affine_weight(
            WeightTie::PrevUnlessSync,
            (1024, 2048),
            0,
            512,
            117,
            false,
            false
        ));
    }
}

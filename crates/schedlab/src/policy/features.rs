//! Scheduler features (/sys/kernel/debug/sched_features) per era. Only the
//! features the simulator models are listed; names are the kernel's, except
//! that 2.6.2x's WAKEUP_PREEMPT is called WAKEUP_PREEMPTION in every era.

use super::era::Era;
use crate::error::Concern;
use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Feature {
    /// 2.6.2x: wake_affine() may pull a wakee to the waker's CPU at all.
    AffineWakeups,
    /// 2.6.2x: honour the sync hint of a wakeup.
    SyncWakeups,
    /// Sleepers are placed up to half (gentle) / a whole latency behind min_vruntime.
    FairSleepers,
    /// New tasks start one slice after min_vruntime.
    StartDebit,
    WakeupPreemption,
    NextBuddy,
    LastBuddy,
    /// A buddy counts as cache-hot for migration.
    CacheHotBuddy,
    /// 2.6.2x / 4.15: source_load / target_load bias by the cpu_load[] index.
    LbBias,
    /// Queue remote wakeups on the target's wake list and send an IPI.
    TtwuQueue,
    SisProp,
    SisUtil,
    WaIdle,
    WaWeight,
    WaBias,
    /// EEVDF (6.12): place a waking task with the lag it left with.
    PlaceLag,
    /// EEVDF: a new task's first deadline is half a slice away.
    PlaceDeadlineInitial,
    /// EEVDF: a task moved between queues (not sleeping) keeps its
    /// deadline relative to its vruntime.
    PlaceRelDeadline,
    /// EEVDF: the picked task runs until its deadline is renewed, unless it
    /// stops being eligible.
    RunToParity,
    /// EEVDF: a woken task with a shorter slice cancels RUN_TO_PARITY.
    PreemptShort,
    /// EEVDF: a task sleeping while not eligible stays queued until picked
    /// or woken.
    DelayDequeue,
    /// EEVDF: a delayed task leaves (or is woken) with its positive lag
    /// dropped to zero.
    DelayZero,
    /// v4.17+: utilisation counts the estimate of what tasks used when they
    /// last slept (`EraRules::util_est`).
    UtilEst,
    /// v5.5 to v6.6: UTIL_EST takes an increase at once, not averaged.
    UtilEstFastup,
    /// 2.6.2x check_preempt_wakeup: a wakeup preempts at once when the
    /// two tasks' avg_overlap says they hand work back and forth (the
    /// condition by era: `EraRules::overlap_preempt_needs_sync`).
    WakeupOverlap,
    /// 3.2+: an RT queue out of runtime borrows unused runtime from the
    /// other CPUs' (balance_runtime; on in 4.15, off from 5.10). 2.6.2x
    /// always borrows (`EraRules::rt_runtime_share_always`).
    RtRuntimeShare,
}

use Feature::*;

/// (feature, name, default) for each era.
fn table(era: Era) -> &'static [(Feature, &'static str, bool)] {
    match era {
        Era::V2_6_27 => &[
            (FairSleepers, "NEW_FAIR_SLEEPERS", true),
            (WakeupPreemption, "WAKEUP_PREEMPTION", true),
            (StartDebit, "START_DEBIT", true),
            (AffineWakeups, "AFFINE_WAKEUPS", true),
            (CacheHotBuddy, "CACHE_HOT_BUDDY", true),
            (SyncWakeups, "SYNC_WAKEUPS", true),
            (LbBias, "LB_BIAS", true),
            (WakeupOverlap, "WAKEUP_OVERLAP", true),
        ],
        Era::V2_6_28 => &[
            (FairSleepers, "NEW_FAIR_SLEEPERS", true),
            (WakeupPreemption, "WAKEUP_PREEMPTION", true),
            (StartDebit, "START_DEBIT", true),
            (AffineWakeups, "AFFINE_WAKEUPS", true),
            (CacheHotBuddy, "CACHE_HOT_BUDDY", true),
            (SyncWakeups, "SYNC_WAKEUPS", true),
            (LbBias, "LB_BIAS", true),
            (LastBuddy, "LAST_BUDDY", true),
            (WakeupOverlap, "WAKEUP_OVERLAP", false),
        ],
        Era::V4_15 => &[
            (FairSleepers, "GENTLE_FAIR_SLEEPERS", true),
            (StartDebit, "START_DEBIT", true),
            (NextBuddy, "NEXT_BUDDY", false),
            (LastBuddy, "LAST_BUDDY", true),
            (CacheHotBuddy, "CACHE_HOT_BUDDY", true),
            (WakeupPreemption, "WAKEUP_PREEMPTION", true),
            (TtwuQueue, "TTWU_QUEUE", true),
            (SisProp, "SIS_PROP", true),
            (LbBias, "LB_BIAS", true),
            (WaIdle, "WA_IDLE", true),
            (WaWeight, "WA_WEIGHT", true),
            (WaBias, "WA_BIAS", true),
            (RtRuntimeShare, "RT_RUNTIME_SHARE", true),
        ],
        Era::V6_5 => &[
            (FairSleepers, "GENTLE_FAIR_SLEEPERS", true),
            (StartDebit, "START_DEBIT", true),
            (NextBuddy, "NEXT_BUDDY", false),
            (LastBuddy, "LAST_BUDDY", true),
            (CacheHotBuddy, "CACHE_HOT_BUDDY", true),
            (WakeupPreemption, "WAKEUP_PREEMPTION", true),
            (TtwuQueue, "TTWU_QUEUE", true),
            (SisProp, "SIS_PROP", false),
            (SisUtil, "SIS_UTIL", true),
            (WaIdle, "WA_IDLE", true),
            (WaWeight, "WA_WEIGHT", true),
            (WaBias, "WA_BIAS", true),
            (UtilEst, "UTIL_EST", true),
            (UtilEstFastup, "UTIL_EST_FASTUP", true),
            (RtRuntimeShare, "RT_RUNTIME_SHARE", false),
        ],
        // kernel/sched/features.h of v6.12: START_DEBIT, GENTLE_FAIR_SLEEPERS,
        // LAST_BUDDY and SIS_PROP are gone with CFS's pick and placement.
        Era::V6_12 => &[
            (PlaceLag, "PLACE_LAG", true),
            (PlaceDeadlineInitial, "PLACE_DEADLINE_INITIAL", true),
            (PlaceRelDeadline, "PLACE_REL_DEADLINE", true),
            (RunToParity, "RUN_TO_PARITY", true),
            (PreemptShort, "PREEMPT_SHORT", true),
            (NextBuddy, "NEXT_BUDDY", false),
            (CacheHotBuddy, "CACHE_HOT_BUDDY", true),
            (DelayDequeue, "DELAY_DEQUEUE", true),
            (DelayZero, "DELAY_ZERO", true),
            (WakeupPreemption, "WAKEUP_PREEMPTION", true),
            (TtwuQueue, "TTWU_QUEUE", true),
            (SisUtil, "SIS_UTIL", true),
            (WaIdle, "WA_IDLE", true),
            (WaWeight, "WA_WEIGHT", true),
            (WaBias, "WA_BIAS", true),
            (UtilEst, "UTIL_EST", true),
            (RtRuntimeShare, "RT_RUNTIME_SHARE", false),
        ],
    }
}

impl Feature {
    /// The era's feature names with their defaults, in the kernel's order.
    pub fn defaults_of(era: Era) -> Vec<(&'static str, bool)> {
        table(era).iter().map(|&(_, n, on)| (n, on)).collect()
    }

    /// The feature's name in `era`; one the era lacks by its name in the
    /// first era that has it.
    pub fn name_in(self, era: Era) -> &'static str {
        [era, Era::V2_6_27, Era::V4_15, Era::V6_5, Era::V6_12]
            .into_iter()
            .find_map(|e| table(e).iter().find(|(f, _, _)| *f == self))
            .map_or("?", |(_, n, _)| *n)
    }

    pub fn parse(era: Era, name: &str) -> Result<Feature> {
        let bare = name.strip_prefix("NO_").unwrap_or(name);
        table(era)
            .iter()
            .find(|(_, n, _)| *n == bare)
            .map(|(f, _, _)| *f)
            .ok_or_else(|| {
                Error::unknown(
                    Concern::Policy,
                    match era {
                        Era::V2_6_27 => "feature for era 2.6.27",
                        Era::V2_6_28 => "feature for era 2.6.28",
                        Era::V4_15 => "feature for era 4.15",
                        Era::V6_5 => "feature for era 6.5",
                        Era::V6_12 => "feature for era 6.12",
                    },
                    name,
                    table(era).iter().map(|(_, n, _)| *n),
                )
            })
    }
}

/// The features that are on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FeatureSet {
    era: Era,
    bits: u32,
}

impl FeatureSet {
    pub fn defaults(era: Era) -> Self {
        let mut s = FeatureSet { era, bits: 0 };
        for &(f, _, on) in table(era) {
            s.set(f, on);
        }
        s
    }

    /// Whether `f` is on; a feature the era does not have is off.
    pub fn has(&self, f: Feature) -> bool {
        self.bits & (1 << f as u32) != 0
    }

    pub fn set(&mut self, f: Feature, on: bool) {
        if on {
            self.bits |= 1 << f as u32;
        } else {
            self.bits &= !(1 << f as u32);
        }
    }

    /// Every feature of the era as the kernel lists them: "NAME" or "NO_NAME".
    pub fn listing(&self) -> Vec<String> {
        table(self.era)
            .iter()
            .map(|&(f, n, _)| {
                if self.has(f) {
                    n.to_string()
                } else {
                    format!("NO_{n}")
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_listing() {
        let mut s = FeatureSet::defaults(Era::V4_15);
        assert!(s.has(WaWeight) && s.has(SisProp) && !s.has(NextBuddy) && !s.has(SisUtil));
        s.set(Feature::parse(Era::V4_15, "NO_WA_WEIGHT").unwrap(), false);
        assert!(s.listing().contains(&"NO_WA_WEIGHT".to_string()));
        let modern = FeatureSet::defaults(Era::V6_5);
        assert!(modern.has(SisUtil) && !modern.has(SisProp));
        assert!(FeatureSet::defaults(Era::V2_6_28).has(AffineWakeups));
    }
}

//! Kernel policy as data: an era (which kernel's code paths and defaults),
//! plus changes to its per-level SD flags and parameters, its scheduler
//! features and its tunables.
//!
//! [`PolicySpec`] is what users and presets write (names as strings, so that a
//! typo is an error listing the valid names); [`KernelPolicy`] is the checked
//! form. The domain templates themselves live in [`crate::domains`].

mod era;
mod features;
mod flags;
mod tunables;

pub use era::{
    ActiveBalance, BalanceLoad, CacheHotBuddy, DetachOrder, DetachSkip, Era, EraRules,
    ForkVruntime, Generation, GroupCompare, IdleSibling, IdlestGroup, NewidleGate, NohzBalancer,
    Picker, PipeWriterWake, TickStop, UtilEstRule, WakeAffineIdle, WakeupBuddies, WeightLoads,
    WeightTie, YieldTask,
};
pub use features::{Feature, FeatureSet};
pub use flags::{SdFlag, SdFlags};
pub use tunables::{Tunable, Tunables};

use crate::error::Concern;
use crate::error::{Error, Result};
use crate::sorted_map::NameMap;
use serde::{Deserialize, Serialize};

/// A kernel policy as written: an era and changes to its defaults.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicySpec {
    pub era: Era,
    /// Changes per domain level, by the era's level name (e.g. "NODE", "MC").
    #[serde(default, skip_serializing_if = "NameMap::is_empty")]
    pub levels: NameMap<LevelChange>,
    /// Scheduler features to turn on (true) or off (false), e.g. "WA_WEIGHT".
    #[serde(default, skip_serializing_if = "NameMap::is_empty")]
    pub features: NameMap<bool>,
    /// Tunables as the sysctl shows them (already scaled by CPU count), e.g.
    /// "sched_migration_cost_ns".
    #[serde(default, skip_serializing_if = "NameMap::is_empty")]
    pub tunables: NameMap<u64>,
}

/// Changes to one domain level.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LevelChange {
    /// SD flags to set (true) or clear (false), with or without the "SD_" prefix.
    #[serde(default, skip_serializing_if = "NameMap::is_empty")]
    pub flags: NameMap<bool>,
    /// Level parameters, e.g. "imbalance_pct", "busy_factor", "wake_idx".
    #[serde(default, skip_serializing_if = "NameMap::is_empty")]
    pub params: NameMap<u32>,
}

/// Changes to a base policy (an experiment's variant or timeline step):
/// like [`PolicySpec`] with the era optional.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyChanges {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub era: Option<Era>,
    #[serde(default, skip_serializing_if = "NameMap::is_empty")]
    pub levels: NameMap<LevelChange>,
    #[serde(default, skip_serializing_if = "NameMap::is_empty")]
    pub features: NameMap<bool>,
    #[serde(default, skip_serializing_if = "NameMap::is_empty")]
    pub tunables: NameMap<u64>,
}

impl PolicySpec {
    /// This policy with `changes` applied (later values win).
    pub fn with(&self, changes: &PolicyChanges) -> PolicySpec {
        self.overlay(&PolicySpec {
            era: changes.era.unwrap_or(self.era),
            levels: changes.levels.clone(),
            features: changes.features.clone(),
            tunables: changes.tunables.clone(),
        })
    }

    pub fn era(era: Era) -> Self {
        PolicySpec {
            era,
            levels: NameMap::new(),
            features: NameMap::new(),
            tunables: NameMap::new(),
        }
    }

    /// This policy with `other`'s changes laid over it (other's era wins).
    pub fn overlay(&self, other: &PolicySpec) -> PolicySpec {
        let mut out = self.clone();
        out.era = other.era;
        for (level, change) in &other.levels {
            let entry = out.levels.entry_or_default(level.clone());
            entry
                .flags
                .extend(change.flags.iter().map(|(k, v)| (k.clone(), *v)));
            entry
                .params
                .extend(change.params.iter().map(|(k, v)| (k.clone(), *v)));
        }
        out.features
            .extend(other.features.iter().map(|(k, v)| (k.clone(), *v)));
        out.tunables
            .extend(other.tunables.iter().map(|(k, v)| (k.clone(), *v)));
        out
    }

    /// Checks every name and value and resolves features and tunables for a
    /// machine of `ncpus` CPUs. Level names are checked against the machine
    /// when the domains are built.
    pub fn resolve(&self, ncpus: usize) -> Result<KernelPolicy> {
        let era = self.era;
        let mut features = FeatureSet::defaults(era);
        for (name, &on) in &self.features {
            features.set(Feature::parse(era, name)?, on);
        }
        let mut tunables = Tunables::defaults(era, ncpus);
        for (name, &value) in &self.tunables {
            tunables.set(Tunable::parse_for(era, name)?, value)?;
        }
        let mut levels = NameMap::new();
        for (level, change) in &self.levels {
            if !era.level_names().contains(&level.as_str()) {
                return Err(Error::unknown(
                    Concern::Policy,
                    "domain level for this era",
                    level,
                    era.level_names(),
                ));
            }
            let mut flags = Vec::new();
            for (name, &on) in &change.flags {
                flags.push((SdFlag::parse(era, name)?, on));
            }
            let mut params = Vec::new();
            for (name, &value) in &change.params {
                params.push((LevelParam::parse(name)?, value));
            }
            levels.insert(level.clone(), CheckedLevelChange { flags, params });
        }
        Ok(KernelPolicy {
            era,
            features,
            tunables,
            levels,
        })
    }
}

/// A checked policy: what the engine and the domain builder read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelPolicy {
    pub era: Era,
    pub features: FeatureSet,
    pub tunables: Tunables,
    /// Changes per level name, applied on top of the era's template.
    pub levels: NameMap<CheckedLevelChange>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedLevelChange {
    pub flags: Vec<(SdFlag, bool)>,
    pub params: Vec<(LevelParam, u32)>,
}

/// The numeric parameters of a domain level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LevelParam {
    MinInterval,
    MaxInterval,
    BusyFactor,
    ImbalancePct,
    CacheNiceTries,
    BusyIdx,
    IdleIdx,
    NewidleIdx,
    WakeIdx,
    ForkexecIdx,
}

impl LevelParam {
    pub const ALL: [LevelParam; 10] = [
        LevelParam::MinInterval,
        LevelParam::MaxInterval,
        LevelParam::BusyFactor,
        LevelParam::ImbalancePct,
        LevelParam::CacheNiceTries,
        LevelParam::BusyIdx,
        LevelParam::IdleIdx,
        LevelParam::NewidleIdx,
        LevelParam::WakeIdx,
        LevelParam::ForkexecIdx,
    ];

    pub fn name(self) -> &'static str {
        match self {
            LevelParam::MinInterval => "min_interval",
            LevelParam::MaxInterval => "max_interval",
            LevelParam::BusyFactor => "busy_factor",
            LevelParam::ImbalancePct => "imbalance_pct",
            LevelParam::CacheNiceTries => "cache_nice_tries",
            LevelParam::BusyIdx => "busy_idx",
            LevelParam::IdleIdx => "idle_idx",
            LevelParam::NewidleIdx => "newidle_idx",
            LevelParam::WakeIdx => "wake_idx",
            LevelParam::ForkexecIdx => "forkexec_idx",
        }
    }

    pub fn parse(name: &str) -> Result<LevelParam> {
        Self::ALL
            .into_iter()
            .find(|p| p.name() == name)
            .ok_or_else(|| {
                Error::unknown(
                    Concern::Policy,
                    "level parameter",
                    name,
                    Self::ALL.map(|p| p.name()),
                )
            })
    }

    /// The values the kernel accepts; anything else is an error, not clamped.
    pub fn valid_range(self) -> (u32, u32) {
        match self {
            LevelParam::MinInterval | LevelParam::MaxInterval => (1, 100_000),
            LevelParam::BusyFactor => (1, 1024),
            LevelParam::ImbalancePct => (100, 1000),
            LevelParam::CacheNiceTries => (0, 100),
            // cpu_load[] has 5 entries: index 0 is the instantaneous load.
            _ => (0, 4),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(json: &str) -> PolicySpec {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn resolves_a_policy_with_changes() {
        let p = spec(
            r#"{"era":"4.15","features":{"WA_WEIGHT":false},
                "levels":{"NUMA":{"flags":{"SD_WAKE_AFFINE":true},"params":{"imbalance_pct":130}}},
                "tunables":{"sched_migration_cost_ns":250000}}"#,
        )
        .resolve(40)
        .unwrap();
        assert!(!p.features.has(Feature::WaWeight));
        assert!(p.features.has(Feature::WaIdle));
        assert_eq!(p.tunables.migration_cost_ns, 250_000);
        let numa = &p.levels["NUMA"];
        assert_eq!(numa.flags, vec![(SdFlag::WakeAffine, true)]);
        assert_eq!(numa.params, vec![(LevelParam::ImbalancePct, 130)]);
    }

    #[test]
    fn unknown_names_list_the_valid_ones() {
        let err = spec(r#"{"era":"4.15","features":{"WA_WIEGHT":true}}"#)
            .resolve(4)
            .unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.starts_with("unknown feature for era 4.15 \"WA_WIEGHT\""),
            "{msg}"
        );
        assert!(msg.contains("WA_WEIGHT"), "{msg}");

        let msg = spec(r#"{"era":"2.6.28","features":{"WA_WEIGHT":true}}"#)
            .resolve(4)
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("AFFINE_WAKEUPS") && !msg.contains("WA_IDLE"),
            "{msg}"
        );

        let msg = spec(r#"{"era":"2.6.28","levels":{"DIE":{}}}"#)
            .resolve(4)
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("unknown domain level for this era \"DIE\""),
            "{msg}"
        );
        assert!(msg.contains("SIBLING, MC, CPU, NODE, ALLNODES"), "{msg}");

        let msg = spec(r#"{"era":"6.5","levels":{"MC":{"flags":{"WAKE_IDLE":true}}}}"#)
            .resolve(4)
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("unknown SD flag for era 6.5 \"WAKE_IDLE\""),
            "{msg}"
        );

        let msg = spec(r#"{"era":"6.5","levels":{"MC":{"params":{"imbalance":1}}}}"#)
            .resolve(4)
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("unknown level parameter \"imbalance\""),
            "{msg}"
        );

        let msg = spec(r#"{"era":"6.5","tunables":{"sched_latency":1}}"#)
            .resolve(4)
            .unwrap_err()
            .to_string();
        assert!(msg.contains("sched_latency_ns"), "{msg}");
    }

    #[test]
    fn unknown_era_is_a_json_error_listing_the_eras() {
        let err = serde_json::from_str::<PolicySpec>(r#"{"era":"5.0"}"#).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("unknown era \"5.0\"; valid: 2.6.27, 2.6.28, 4.15, 6.5"),
            "{msg}"
        );
    }

    #[test]
    fn overlay_merges_changes_and_later_wins() {
        let base = spec(
            r#"{"era":"4.15","features":{"WA_WEIGHT":false},"levels":{"MC":{"params":{"busy_factor":8}}}}"#,
        );
        let b = spec(
            r#"{"era":"4.15","features":{"WA_WEIGHT":true},"levels":{"MC":{"flags":{"WAKE_AFFINE":false}}}}"#,
        );
        let merged = base.overlay(&b);
        assert!(merged.features["WA_WEIGHT"]);
        assert_eq!(merged.levels["MC"].params["busy_factor"], 8);
        assert!(!merged.levels["MC"].flags["WAKE_AFFINE"]);
    }
}

//! Every knob of a kernel policy on a machine, with its value and its era
//! default: what the playground's Kernel panel shows and edits. Computed from
//! the same code the simulator runs, so the panel cannot disagree with a run.

use crate::domains::Domains;
use crate::error::Result;
use crate::policy::{Era, Feature, LevelParam, PolicySpec, SdFlag, Tunable, Tunables};
use crate::topology::Topology;
use serde::Serialize;

/// A value and the era's default for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Knob<T> {
    pub value: T,
    pub default: T,
}

impl<T: PartialEq> Knob<T> {
    pub fn changed(&self) -> bool {
        self.value != self.default
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LevelKnobs {
    /// The level's name in the policy's era ("SIBLING", "MC", "NUMA", ...).
    pub name: &'static str,
    /// False when the level is degenerate on this machine (not built).
    pub present: bool,
    /// Parallel to [`PolicyKnobs::flag_names`].
    pub flags: Vec<Knob<bool>>,
    /// Parallel to [`LevelParam::ALL`].
    pub params: Vec<Knob<u32>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PolicyKnobs {
    pub era: Era,
    /// The era's SD flag names, in the kernel's bit order.
    pub flag_names: Vec<&'static str>,
    /// The era's topology levels on this machine, bottom-up.
    pub levels: Vec<LevelKnobs>,
    pub features: Vec<(&'static str, Knob<bool>)>,
    /// The era's tunables ([`Tunable::of`]), scaled for the machine's CPU count.
    pub tunables: Vec<(&'static str, Knob<u64>)>,
}

impl PolicyKnobs {
    /// The knobs of `spec` on `topo`; errors are the core's (unknown names,
    /// values out of range, changes to a level the machine does not have).
    pub fn of(topo: &Topology, spec: &PolicySpec) -> Result<PolicyKnobs> {
        let era = spec.era;
        let policy = spec.resolve(topo.ncpus())?;
        let defaults = PolicySpec::era(era).resolve(topo.ncpus())?;
        let rows = Domains::level_table(topo, &policy)?;
        let default_rows = Domains::level_table(topo, &defaults)?;
        let flags: Vec<SdFlag> = SdFlag::names_of(era)
            .into_iter()
            .map(|n| SdFlag::parse(era, n))
            .collect::<Result<_>>()?;
        let levels = rows
            .iter()
            .zip(&default_rows)
            .map(|(row, def)| LevelKnobs {
                name: row.name,
                present: row.present,
                flags: flags
                    .iter()
                    .map(|&f| Knob {
                        value: row.params.flags.has(f),
                        default: def.params.flags.has(f),
                    })
                    .collect(),
                params: LevelParam::ALL
                    .iter()
                    .map(|&p| Knob {
                        value: row.params.get(p),
                        default: def.params.get(p),
                    })
                    .collect(),
            })
            .collect();
        let features = Feature::defaults_of(era)
            .into_iter()
            .map(|(name, default)| {
                let value = policy.features.has(Feature::parse(era, name)?);
                Ok((name, Knob { value, default }))
            })
            .collect::<Result<_>>()?;
        let default_tunables = Tunables::defaults(era, topo.ncpus());
        let tunables = Tunable::of(era)
            .iter()
            .map(|&t| {
                let knob = Knob {
                    value: policy.tunables.get(t),
                    default: default_tunables.get(t),
                };
                (t.name(), knob)
            })
            .collect();
        Ok(PolicyKnobs {
            era,
            flag_names: SdFlag::names_of(era),
            levels,
            features,
            tunables,
        })
    }

    pub fn level(&self, name: &str) -> Option<&LevelKnobs> {
        self.levels.iter().find(|l| l.name == name)
    }

    /// The value of `flag` at `level`, if both exist in this era and machine.
    pub fn flag(&self, level: &str, flag: &str) -> Option<bool> {
        let i = self.flag_names.iter().position(|n| *n == flag)?;
        Some(self.level(level)?.flags[i].value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology;

    fn machine(name: &str) -> Topology {
        Topology::from_spec(&topology::preset(name).unwrap()).unwrap()
    }

    fn spec(json: &str) -> PolicySpec {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn the_2008_box_shows_every_legacy_level_and_marks_degenerate_ones() {
        let k = PolicyKnobs::of(&machine("phoenix-2008"), &spec(r#"{"era":"2.6.28"}"#)).unwrap();
        let names: Vec<_> = k.levels.iter().map(|l| (l.name, l.present)).collect();
        // No SMT on that box; CPU spans the same CPUs as MC (see tests/domains.rs).
        assert_eq!(
            names,
            [
                ("SIBLING", false),
                ("MC", true),
                ("CPU", false),
                ("NODE", true)
            ]
        );
        assert_eq!(k.flag("NODE", "WAKE_AFFINE"), Some(true));
        assert_eq!(k.flag("NODE", "NO_SUCH_FLAG"), None);
        assert!(k
            .levels
            .iter()
            .all(|l| l.flags.iter().all(|f| !f.changed())));
    }

    #[test]
    fn changes_show_as_values_against_the_era_defaults() {
        let k = PolicyKnobs::of(
            &machine("ivb-ep-2s"),
            &spec(
                r#"{"era":"4.15","features":{"WA_WEIGHT":false},
                    "levels":{"NUMA":{"flags":{"WAKE_AFFINE":false},"params":{"imbalance_pct":150}}},
                    "tunables":{"sched_migration_cost_ns":1000}}"#,
            ),
        )
        .unwrap();
        let numa = k.level("NUMA").unwrap();
        let wa = k
            .flag_names
            .iter()
            .position(|n| *n == "WAKE_AFFINE")
            .unwrap();
        assert_eq!(
            numa.flags[wa],
            Knob {
                value: false,
                default: true
            }
        );
        let imb = LevelParam::ALL
            .iter()
            .position(|p| *p == LevelParam::ImbalancePct)
            .unwrap();
        assert_eq!(numa.params[imb].value, 150);
        assert!(numa.params[imb].changed());
        let (_, weight) = k.features.iter().find(|(n, _)| *n == "WA_WEIGHT").unwrap();
        assert!(!weight.value && weight.default);
        let (_, cost) = k
            .tunables
            .iter()
            .find(|(n, _)| *n == "sched_migration_cost_ns")
            .unwrap();
        assert_eq!(cost.value, 1000);
        assert_eq!(cost.default, 500_000);
    }

    #[test]
    fn errors_are_the_cores() {
        let err = PolicyKnobs::of(
            &machine("desktop-8c"),
            &spec(r#"{"era":"6.5","levels":{"NUMA":{"flags":{"WAKE_AFFINE":false}}}}"#),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("has no NUMA domain"), "{err}");
    }
}

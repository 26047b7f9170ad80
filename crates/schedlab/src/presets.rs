//! The experiments shipped with schedlab (presets/*.json, compiled in).

use crate::error::Concern;
use crate::error::{Error, Result};
use crate::experiment::Experiment;

/// (name, JSON) of every preset, in gallery order.
pub const ALL: &[(&str, &str)] = &[
    (
        "retune-lat-ctx",
        include_str!("../../../presets/retune-lat-ctx.json"),
    ),
    (
        "retune-pipe-test",
        include_str!("../../../presets/retune-pipe-test.json"),
    ),
    (
        "retune-pipe-test-flip",
        include_str!("../../../presets/retune-pipe-test-flip.json"),
    ),
    (
        "retune-sysbench-pgsql",
        include_str!("../../../presets/retune-sysbench-pgsql.json"),
    ),
    (
        "waweight-hackbench-20",
        include_str!("../../../presets/waweight-hackbench-20.json"),
    ),
    (
        "waweight-first-pull",
        include_str!("../../../presets/waweight-first-pull.json"),
    ),
    (
        "waweight-tbench",
        include_str!("../../../presets/waweight-tbench.json"),
    ),
    (
        "waweight-netperf-tcp-sendfile",
        include_str!("../../../presets/waweight-netperf-tcp-sendfile.json"),
    ),
    (
        "waweight-netperf-tcp-stream",
        include_str!("../../../presets/waweight-netperf-tcp-stream.json"),
    ),
    (
        "waweight-netperf-tcp-rr",
        include_str!("../../../presets/waweight-netperf-tcp-rr.json"),
    ),
    (
        "waweight-netperf-udp-rr",
        include_str!("../../../presets/waweight-netperf-udp-rr.json"),
    ),
    (
        "waweight-netperf-udp-stream",
        include_str!("../../../presets/waweight-netperf-udp-stream.json"),
    ),
    (
        "waweight-sysbench-mysql",
        include_str!("../../../presets/waweight-sysbench-mysql.json"),
    ),
    (
        "waweight-sysbench-pgsql",
        include_str!("../../../presets/waweight-sysbench-pgsql.json"),
    ),
    (
        "kvm-pipe-test-pinning",
        include_str!("../../../presets/kvm-pipe-test-pinning.json"),
    ),
    (
        "epyc-hackbench-sis",
        include_str!("../../../presets/epyc-hackbench-sis.json"),
    ),
    (
        "rtapp-periodic-desktop",
        include_str!("../../../presets/rtapp-periodic-desktop.json"),
    ),
    (
        "schbench-desktop",
        include_str!("../../../presets/schbench-desktop.json"),
    ),
    (
        "eevdf-rtapp-desktop",
        include_str!("../../../presets/eevdf-rtapp-desktop.json"),
    ),
    (
        "rt-audio-desktop",
        include_str!("../../../presets/rt-audio-desktop.json"),
    ),
];

/// The experiment the playground opens with: today's kernel (6.12)
/// against the last CFS.
pub const DEFAULT: &str = "eevdf-rtapp-desktop";

pub fn names() -> impl Iterator<Item = &'static str> {
    ALL.iter().map(|(n, _)| *n)
}

pub fn get(name: &str) -> Result<Experiment> {
    let (_, json) = ALL
        .iter()
        .find(|(n, _)| *n == name)
        .ok_or_else(|| Error::unknown(Concern::Experiment, "preset", name, names()))?;
    Experiment::from_json(json)
        .map_err(|e| Error::invalid(Concern::Experiment, format!("preset {name}: {e}")))
}

/// The preset `exp` is, unedited, if any. Presets keep their name, so only
/// the preset of that name is compared.
pub fn unedited(exp: &Experiment) -> Option<&'static str> {
    let (name, json) = ALL.iter().find(|(n, _)| *n == exp.name)?;
    // Parsed without validation (the tests validate every preset): this
    // runs on every edit in the playground.
    let preset: Experiment = serde_json::from_str(json).ok()?;
    (preset == *exp).then_some(*name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::MachineRef;

    #[test]
    fn every_preset_parses_names_itself_and_says_what_it_replays() {
        for (name, _) in ALL {
            let e = get(name).unwrap();
            assert_eq!(e.name, *name);
            assert!(!e.description.is_empty(), "{name}");
            e.points().unwrap();
        }
    }

    #[test]
    fn the_default_starts_from_the_current_era() {
        assert_eq!(
            get(DEFAULT).unwrap().policy.era,
            crate::policy::Era::CURRENT
        );
    }

    #[test]
    fn replay_presets_set_only_machine_policy_and_workload() {
        // A replay must not tune the hardware to fit: the machine is a preset
        // by name, so no cost is overridden.
        for (name, _) in ALL {
            let e = get(name).unwrap();
            assert!(
                matches!(e.machine, MachineRef::Preset(_)),
                "{name} overrides the machine's costs"
            );
        }
    }

    #[test]
    fn unknown_preset_lists_the_names() {
        let err = get("nope").unwrap_err().to_string();
        assert!(
            err.contains("unknown preset \"nope\"; valid: retune-lat-ctx"),
            "{err}"
        );
    }
}

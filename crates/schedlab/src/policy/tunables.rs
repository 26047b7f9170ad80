//! Tunables (the sysctls of kernel/sched): defaults per era, scaled by CPU
//! count as the kernel does at boot.

use super::era::{Era, Picker};
use crate::error::Concern;
use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tunable {
    Latency,
    MinGranularity,
    WakeupGranularity,
    MigrationCost,
    NrMigrate,
    Hz,
    /// EEVDF's request size (sysctl_sched_base_slice, v6.6+).
    BaseSlice,
}

impl Tunable {
    pub const ALL: [Tunable; 6] = [
        Tunable::Latency,
        Tunable::MinGranularity,
        Tunable::WakeupGranularity,
        Tunable::MigrationCost,
        Tunable::NrMigrate,
        Tunable::Hz,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Tunable::Latency => "sched_latency_ns",
            Tunable::MinGranularity => "sched_min_granularity_ns",
            Tunable::WakeupGranularity => "sched_wakeup_granularity_ns",
            Tunable::MigrationCost => "sched_migration_cost_ns",
            Tunable::NrMigrate => "sched_nr_migrate",
            Tunable::Hz => "hz",
            Tunable::BaseSlice => "sched_base_slice_ns",
        }
    }

    /// The tunables an era has, in the order the Kernel panel shows them.
    /// 6.6 replaced sched_latency, min_granularity and wakeup_granularity
    /// with sched_base_slice.
    pub fn of(era: Era) -> &'static [Tunable] {
        match era.rules().picker {
            Picker::Cfs => &Self::ALL,
            Picker::Eevdf => &[
                Tunable::BaseSlice,
                Tunable::MigrationCost,
                Tunable::NrMigrate,
                Tunable::Hz,
            ],
        }
    }

    /// A tunable `era` has, by name.
    pub fn parse_for(era: Era, name: &str) -> Result<Tunable> {
        let valid = Self::of(era);
        valid
            .iter()
            .copied()
            .find(|t| t.name() == name)
            .ok_or_else(|| {
                Error::unknown(
                    Concern::Policy,
                    "tunable",
                    name,
                    valid.iter().map(|t| t.name()),
                )
            })
    }

    fn valid_range(self) -> (u64, u64) {
        match self {
            // The kernel's sysctl bounds: 0.1 ms .. 1 s for the granularities.
            // base_slice has no bound of its own in debugfs; the same range
            // keeps it a slice, not a period.
            Tunable::Latency
            | Tunable::MinGranularity
            | Tunable::WakeupGranularity
            | Tunable::BaseSlice => (100_000, 1_000_000_000),
            Tunable::MigrationCost => (0, 1_000_000_000),
            Tunable::NrMigrate => (1, 10_000),
            Tunable::Hz => (100, 1000),
        }
    }
}

/// Effective values, in nanoseconds unless named otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tunables {
    pub latency_ns: u64,
    pub min_granularity_ns: u64,
    pub wakeup_granularity_ns: u64,
    /// sched_latency / min_granularity: how many tasks fit one latency period.
    pub nr_latency: u64,
    pub migration_cost_ns: u64,
    pub nr_migrate: u64,
    pub hz: u64,
    /// EEVDF's request size r: sysctl_sched_base_slice, 0.75 ms scaled like
    /// the latency tunables (update_sysctl, get_update_sysctl_factor).
    pub base_slice_ns: u64,
}

fn ilog2(n: usize) -> u64 {
    (usize::BITS - 1 - n.max(1).leading_zeros()) as u64
}

impl Tunables {
    /// The era's boot-time values on a machine of `ncpus` CPUs.
    pub fn defaults(era: Era, ncpus: usize) -> Self {
        let ms = 1_000_000;
        if era.is_legacy() {
            // 2.6.2x: factor 1 + ilog2(ncpus), no 8-CPU cap; latency and
            // min_granularity capped at 200 ms.
            let f = 1 + ilog2(ncpus);
            Tunables {
                latency_ns: (20 * ms * f).min(200 * ms),
                min_granularity_ns: (4 * ms * f).min(200 * ms),
                wakeup_granularity_ns: 5 * ms * f,
                nr_latency: 5,
                migration_cost_ns: ms / 2,
                nr_migrate: 32,
                // CONFIG_HZ: x86's defconfigs of 2.6.27 and 2.6.28
                // (arch/x86/configs/{i386,x86_64}_defconfig) set HZ_1000;
                // Kconfig.hz's own default (250) is what the later eras'
                // distribution configs keep.
                hz: 1000,
                base_slice_ns: 3 * ms / 4 * f,
            }
        } else {
            let f = 1 + ilog2(ncpus.min(8));
            Tunables {
                latency_ns: 6 * ms * f,
                min_granularity_ns: 3 * ms / 4 * f,
                wakeup_granularity_ns: ms * f,
                nr_latency: 8,
                migration_cost_ns: ms / 2,
                nr_migrate: 32,
                hz: 250,
                base_slice_ns: 3 * ms / 4 * f,
            }
        }
    }

    pub fn set(&mut self, t: Tunable, value: u64) -> Result<()> {
        let (lo, hi) = t.valid_range();
        if !(lo..=hi).contains(&value) {
            return Err(Error::invalid(
                Concern::Policy,
                format!("tunable {} is {value}; it must be {lo}..={hi}", t.name()),
            ));
        }
        match t {
            Tunable::Latency => self.latency_ns = value,
            Tunable::MinGranularity => self.min_granularity_ns = value,
            Tunable::WakeupGranularity => self.wakeup_granularity_ns = value,
            Tunable::MigrationCost => self.migration_cost_ns = value,
            Tunable::NrMigrate => self.nr_migrate = value,
            Tunable::Hz => self.hz = value,
            Tunable::BaseSlice => self.base_slice_ns = value,
        }
        if matches!(t, Tunable::Latency | Tunable::MinGranularity) {
            self.nr_latency = self.latency_ns.div_ceil(self.min_granularity_ns);
        }
        Ok(())
    }

    pub fn get(&self, t: Tunable) -> u64 {
        match t {
            Tunable::Latency => self.latency_ns,
            Tunable::MinGranularity => self.min_granularity_ns,
            Tunable::WakeupGranularity => self.wakeup_granularity_ns,
            Tunable::MigrationCost => self.migration_cost_ns,
            Tunable::NrMigrate => self.nr_migrate,
            Tunable::Hz => self.hz,
            Tunable::BaseSlice => self.base_slice_ns,
        }
    }

    /// One scheduler tick.
    pub fn tick_ns(&self) -> u64 {
        1_000_000_000 / self.hz
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn era_defaults_scale_with_cpus_as_the_kernel_does() {
        // 2.6.28 on 16 CPUs: factor 5 -> 100 ms / 20 ms / 25 ms.
        let t = Tunables::defaults(Era::V2_6_28, 16);
        assert_eq!(
            (t.latency_ns, t.min_granularity_ns, t.wakeup_granularity_ns),
            (100_000_000, 20_000_000, 25_000_000)
        );
        // x86's 2.6.27 / 2.6.28 defconfig: HZ=1000, a 1 ms tick.
        assert_eq!(t.tick_ns(), 1_000_000);
        assert_eq!(Tunables::defaults(Era::V2_6_27, 4).hz, 1000);
        // 2.6.28 on 1024 CPUs: factor 11, latency capped at 200 ms.
        assert_eq!(
            Tunables::defaults(Era::V2_6_28, 1024).latency_ns,
            200_000_000
        );
        // 4.15 and 6.5 at >= 8 CPUs: factor 4 -> 24 / 3 / 4 ms.
        let t = Tunables::defaults(Era::V6_5, 40);
        assert_eq!(
            (t.latency_ns, t.min_granularity_ns, t.wakeup_granularity_ns),
            (24_000_000, 3_000_000, 4_000_000)
        );
        // 2 CPUs: factor 2.
        assert_eq!(Tunables::defaults(Era::V4_15, 2).latency_ns, 12_000_000);
        assert_eq!(t.tick_ns(), 4_000_000);
    }

    #[test]
    fn base_slice_scales_as_update_sysctl_does_in_v6_12() {
        // update_sysctl(): 0.75 ms x (1 + ilog2(min(ncpus, 8))), v6.12.
        let slice = |n| Tunables::defaults(Era::V6_12, n).base_slice_ns;
        assert_eq!(slice(1), 750_000);
        assert_eq!(slice(2), 1_500_000);
        assert_eq!(slice(4), 2_250_000);
        assert_eq!(slice(8), 3_000_000);
        assert_eq!(slice(256), 3_000_000, "the factor stops at 8 CPUs");
        // 6.12 has no latency tunables; 6.5 has no base slice.
        let names = |e| Tunable::of(e).iter().map(|t| t.name()).collect::<Vec<_>>();
        assert!(names(Era::V6_12).contains(&"sched_base_slice_ns"));
        assert!(!names(Era::V6_12).contains(&"sched_latency_ns"));
        let err = Tunable::parse_for(Era::V6_12, "sched_latency_ns")
            .unwrap_err()
            .to_string();
        assert!(err.contains("sched_base_slice_ns"), "{err}");
        assert!(Tunable::parse_for(Era::V6_5, "sched_base_slice_ns").is_err());
    }

    #[test]
    fn out_of_range_values_are_errors_not_clamped() {
        let mut t = Tunables::defaults(Era::V6_5, 4);
        let err = t.set(Tunable::Hz, 50).unwrap_err().to_string();
        assert_eq!(err, "tunable hz is 50; it must be 100..=1000");
        assert_eq!(t.hz, 250);
    }
}

//! SD flags: the per-domain-level behaviour bits. Each era has its own set of
//! valid names and its own bit values (shown in dumps, so they can be held
//! against the kernel's); internally a flag is an [`SdFlag`].

use super::era::Era;
use crate::error::Concern;
use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SdFlag {
    LoadBalance,
    BalanceNewidle,
    BalanceExec,
    BalanceFork,
    BalanceWake,
    WakeIdle,
    WakeIdleFar,
    WakeAffine,
    WakeBalance,
    ShareCpuCapacity,
    SharePkgResources,
    Serialize,
    PreferSibling,
    Overlap,
    Numa,
}

/// (flag, name, kernel bit value) for one era, in bit order.
type FlagTable = &'static [(SdFlag, &'static str, u32)];

use SdFlag::*;

/// include/linux/sched.h of 2.6.27 / 2.6.28.
const LEGACY: FlagTable = &[
    (LoadBalance, "LOAD_BALANCE", 0x1),
    (BalanceNewidle, "BALANCE_NEWIDLE", 0x2),
    (BalanceExec, "BALANCE_EXEC", 0x4),
    (BalanceFork, "BALANCE_FORK", 0x8),
    (WakeIdle, "WAKE_IDLE", 0x10),
    (WakeAffine, "WAKE_AFFINE", 0x20),
    (WakeBalance, "WAKE_BALANCE", 0x40),
    (ShareCpuCapacity, "SHARE_CPUPOWER", 0x80),
    (SharePkgResources, "SHARE_PKG_RESOURCES", 0x200),
    (Serialize, "SERIALIZE", 0x400),
    (WakeIdleFar, "WAKE_IDLE_FAR", 0x800),
];

/// include/linux/sched/topology.h of 4.15 (ASYM_* and SHARE_POWERDOMAIN not modelled).
const V4_15: FlagTable = &[
    (LoadBalance, "LOAD_BALANCE", 0x1),
    (BalanceNewidle, "BALANCE_NEWIDLE", 0x2),
    (BalanceExec, "BALANCE_EXEC", 0x4),
    (BalanceFork, "BALANCE_FORK", 0x8),
    (BalanceWake, "BALANCE_WAKE", 0x10),
    (WakeAffine, "WAKE_AFFINE", 0x20),
    (ShareCpuCapacity, "SHARE_CPUCAPACITY", 0x80),
    (SharePkgResources, "SHARE_PKG_RESOURCES", 0x200),
    (Serialize, "SERIALIZE", 0x400),
    (PreferSibling, "PREFER_SIBLING", 0x1000),
    (Overlap, "OVERLAP", 0x2000),
    (Numa, "NUMA", 0x4000),
];

/// include/linux/sched/sd_flags.h of 6.5: bits in the file's order, with
/// ASYM_CPUCAPACITY(_FULL), CLUSTER and ASYM_PACKING holding their places.
const V6_5: FlagTable = &[
    (BalanceNewidle, "BALANCE_NEWIDLE", 0x1),
    (BalanceExec, "BALANCE_EXEC", 0x2),
    (BalanceFork, "BALANCE_FORK", 0x4),
    (BalanceWake, "BALANCE_WAKE", 0x8),
    (WakeAffine, "WAKE_AFFINE", 0x10),
    (ShareCpuCapacity, "SHARE_CPUCAPACITY", 0x80),
    (SharePkgResources, "SHARE_PKG_RESOURCES", 0x200),
    (Serialize, "SERIALIZE", 0x400),
    (PreferSibling, "PREFER_SIBLING", 0x1000),
    (Overlap, "OVERLAP", 0x2000),
    (Numa, "NUMA", 0x4000),
];

/// include/linux/sched/sd_flags.h of 6.12: as 6.5, with
/// SHARE_PKG_RESOURCES renamed SHARE_LLC (same bit).
const V6_12: FlagTable = &[
    (BalanceNewidle, "BALANCE_NEWIDLE", 0x1),
    (BalanceExec, "BALANCE_EXEC", 0x2),
    (BalanceFork, "BALANCE_FORK", 0x4),
    (BalanceWake, "BALANCE_WAKE", 0x8),
    (WakeAffine, "WAKE_AFFINE", 0x10),
    (ShareCpuCapacity, "SHARE_CPUCAPACITY", 0x80),
    (SharePkgResources, "SHARE_LLC", 0x200),
    (Serialize, "SERIALIZE", 0x400),
    (PreferSibling, "PREFER_SIBLING", 0x1000),
    (Overlap, "OVERLAP", 0x2000),
    (Numa, "NUMA", 0x4000),
];

fn table(era: Era) -> FlagTable {
    match era {
        Era::V2_6_27 | Era::V2_6_28 => LEGACY,
        Era::V4_15 => V4_15,
        Era::V6_5 => V6_5,
        Era::V6_12 => V6_12,
    }
}

impl SdFlag {
    /// Parses a flag name valid in `era`, with or without the "SD_" prefix.
    pub fn parse(era: Era, name: &str) -> Result<SdFlag> {
        let bare = name.strip_prefix("SD_").unwrap_or(name);
        table(era)
            .iter()
            .find(|(_, n, _)| *n == bare)
            .map(|(f, _, _)| *f)
            .ok_or_else(|| {
                Error::unknown(
                    Concern::Policy,
                    match era {
                        Era::V2_6_27 => "SD flag for era 2.6.27",
                        Era::V2_6_28 => "SD flag for era 2.6.28",
                        Era::V4_15 => "SD flag for era 4.15",
                        Era::V6_5 => "SD flag for era 6.5",
                        Era::V6_12 => "SD flag for era 6.12",
                    },
                    name,
                    table(era).iter().map(|(_, n, _)| *n),
                )
            })
    }

    /// The flag's name in `era` (without "SD_"); a flag the era lacks by
    /// its name in the first era that has it.
    pub fn name_in(self, era: Era) -> &'static str {
        [era, Era::V2_6_27, Era::V4_15, Era::V6_12]
            .into_iter()
            .find_map(|e| table(e).iter().find(|(f, _, _)| *f == self))
            .map_or("?", |(_, n, _)| *n)
    }

    /// The era's flag names in the kernel's bit order.
    pub fn names_of(era: Era) -> Vec<&'static str> {
        table(era).iter().map(|(_, n, _)| *n).collect()
    }

    fn bit(self) -> u32 {
        1 << self as u32
    }
}

/// A set of SD flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct SdFlags(u32);

impl SdFlags {
    pub const fn empty() -> Self {
        SdFlags(0)
    }

    pub fn of(flags: &[SdFlag]) -> Self {
        let mut s = SdFlags::empty();
        for &f in flags {
            s.set(f, true);
        }
        s
    }

    pub fn has(self, f: SdFlag) -> bool {
        self.0 & f.bit() != 0
    }

    pub fn set(&mut self, f: SdFlag, on: bool) {
        if on {
            self.0 |= f.bit();
        } else {
            self.0 &= !f.bit();
        }
    }

    pub fn without(self, other: SdFlags) -> SdFlags {
        SdFlags(self.0 & !other.0)
    }

    pub fn is_subset(self, other: SdFlags) -> bool {
        self.0 & !other.0 == 0
    }

    pub fn intersects(self, other: SdFlags) -> bool {
        self.0 & other.0 != 0
    }

    /// The era's names of the flags set, in the kernel's bit order.
    pub fn names(self, era: Era) -> Vec<&'static str> {
        table(era)
            .iter()
            .filter(|(f, _, _)| self.has(*f))
            .map(|(_, n, _)| *n)
            .collect()
    }

    /// The value /proc/sys/kernel/sched_domain/cpuN/domainM/flags would show.
    pub fn kernel_bits(self, era: Era) -> u32 {
        table(era)
            .iter()
            .filter(|(f, _, _)| self.has(*f))
            .map(|(_, _, b)| *b)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_bits_follow_the_era() {
        let f = SdFlags::of(&[LoadBalance, WakeAffine, SharePkgResources]);
        assert_eq!(f.kernel_bits(Era::V2_6_28), 0x1 | 0x20 | 0x200);
        assert_eq!(
            f.names(Era::V2_6_28),
            ["LOAD_BALANCE", "WAKE_AFFINE", "SHARE_PKG_RESOURCES"]
        );
        // LOAD_BALANCE no longer exists in 6.5, and WAKE_AFFINE moved.
        assert_eq!(f.kernel_bits(Era::V6_5), 0x10 | 0x200);
        assert_eq!(
            SdFlag::parse(Era::V2_6_28, "SD_WAKE_BALANCE"),
            Ok(WakeBalance)
        );
        assert!(SdFlag::parse(Era::V4_15, "WAKE_BALANCE").is_err());
    }
}

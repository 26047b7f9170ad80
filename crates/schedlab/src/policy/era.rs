//! Kernel eras: which kernel's code paths, domain templates and defaults.

use crate::error::Error;
use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Era {
    /// Linux 2.6.27: before the re-tune commit.
    V2_6_27,
    /// Linux 2.6.28: after "sched: re-tune balancing".
    V2_6_28,
    /// Linux 4.15: wake_affine_idle / wake_affine_weight (the WA_WEIGHT commit).
    V4_15,
    /// Linux 6.5: the last CFS before EEVDF.
    V6_5,
}

impl Era {
    pub const ALL: [Era; 4] = [Era::V2_6_27, Era::V2_6_28, Era::V4_15, Era::V6_5];

    pub fn name(self) -> &'static str {
        match self {
            Era::V2_6_27 => "2.6.27",
            Era::V2_6_28 => "2.6.28",
            Era::V4_15 => "4.15",
            Era::V6_5 => "6.5",
        }
    }

    /// The 2.6.2x code paths (cpu_load[] indexes, SD_WAKE_IDLE / SD_WAKE_BALANCE).
    pub fn is_legacy(self) -> bool {
        matches!(self, Era::V2_6_27 | Era::V2_6_28)
    }

    /// The names of the domain levels this era can build, bottom-up. Several
    /// NUMA levels are numbered: NUMA, NUMA2, NUMA3 (the kernel calls them all NUMA).
    pub fn level_names(self) -> &'static [&'static str] {
        match self {
            Era::V2_6_27 | Era::V2_6_28 => &["SIBLING", "MC", "CPU", "NODE", "ALLNODES"],
            Era::V4_15 | Era::V6_5 => &["SMT", "MC", "DIE", "NODE", "NUMA", "NUMA2", "NUMA3"],
        }
    }
}

impl fmt::Display for Era {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl TryFrom<String> for Era {
    type Error = Error;
    fn try_from(s: String) -> Result<Self, Error> {
        s.parse()
    }
}

impl std::str::FromStr for Era {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        Era::ALL
            .into_iter()
            .find(|e| e.name() == s)
            .ok_or_else(|| Error::unknown("era", s, Era::ALL.map(|e| e.name())))
    }
}

impl From<Era> for String {
    fn from(e: Era) -> String {
        e.name().to_string()
    }
}

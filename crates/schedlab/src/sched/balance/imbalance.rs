//! What find_busiest_group hands to the shared steps of load_balance, in
//! every era: which group, how much, and what to move.

/// What to move (6.5's migration types; load for the older eras).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Migrate {
    Load,
    Util,
    Task,
}

impl Migrate {
    /// The kernel's name (6.5's enum migration_type).
    pub(super) fn name(self) -> &'static str {
        match self {
            Migrate::Load => "migrate_load",
            Migrate::Util => "migrate_util",
            Migrate::Task => "migrate_task",
        }
    }
}

/// The outcome of find_busiest_group: which group, how much to move.
pub(super) struct Imbalance {
    pub group: usize,
    pub amount: u64,
    pub kind: Migrate,
}

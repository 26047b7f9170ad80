//! What find_busiest_group hands to the shared steps of load_balance, in
//! every era: which group, how much, and what to move.

/// What to move (6.5's migration types; load for the older eras).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Migrate {
    Load,
    Util,
    Task,
}

/// The outcome of find_busiest_group: which group, how much to move.
pub(super) struct Imbalance {
    pub group: usize,
    pub amount: u64,
    pub kind: Migrate,
}

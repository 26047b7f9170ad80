//! Seeds: one splitmix64 mixer for every seed the core derives (a repeat's
//! seed from the experiment's, a task's random stream and the start phase
//! from the run's).

/// splitmix64's increment (2^64 / golden ratio).
const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// splitmix64's output function: a bijection that scatters nearby inputs.
fn finalize(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// One splitmix64 step from state `z`.
pub fn splitmix64(z: u64) -> u64 {
    finalize(z.wrapping_add(GOLDEN))
}

/// Repeat `repeat`'s seed of an experiment seeded `seed` (repeat 0 is not
/// `seed` itself, but every repeat is a different, fixed stream).
pub fn repeat_seed(seed: u64, repeat: u32) -> u64 {
    finalize(seed ^ (repeat as u64).wrapping_mul(GOLDEN))
}

/// Where within a tick period a run seeded `seed` starts its workload. A
/// real benchmark starts at an arbitrary point of the CPUs' tick and of
/// their PELT periods, and a short run can depend on it, so each seed
/// draws one (the same for every variant of an experiment).
pub fn start_phase(seed: u64, tick_ns: u64) -> u64 {
    /// Keeps the draw apart from the tasks' streams (splitmix64 of the id).
    const SALT: u64 = 0x7374_6172_745f_7068; // "start_ph"
    splitmix64(seed ^ SALT) % tick_ns.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_phases_fall_within_the_tick_and_differ_by_seed() {
        let tick = 4_000_000;
        let phases: Vec<u64> = (0..64).map(|s| start_phase(s, tick)).collect();
        assert!(phases.iter().all(|&p| p < tick));
        let mut distinct = phases.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), phases.len());
        // Spread over the whole tick, not bunched at its start.
        assert!(phases.iter().any(|&p| p > tick / 2) && phases.iter().any(|&p| p < tick / 2));
        assert_eq!(start_phase(7, 0), 0);
    }
}

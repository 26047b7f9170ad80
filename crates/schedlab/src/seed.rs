//! Seeds: one splitmix64 mixer for every seed the core derives (a repeat's
//! seed from the experiment's, a task's random stream from the run's).

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

//! The loads 2.6.2x and 4.15 read from the cpu_load[] history (source_load,
//! target_load on an index, the low and high guesses of a CPU's load),
//! and the instantaneous load the history samples. Wakeup (wake_affine,
//! the slow path) and balancing (find_busiest_group) both read them.

use crate::policy::{BalanceLoad, Feature};
use crate::sched::env::SchedEnv;

/// The load the cpu_load[] history samples and the balancer weighs: the
/// queue's weight in 2.6.2x, its tasks' runnable PELT load later.
#[inline]
pub fn instant_load(env: &impl SchedEnv, cpu: usize) -> u64 {
    let rq = env.rq(cpu);
    if env.policy().era.rules().balance_load == BalanceLoad::Weight {
        rq.load_weight
    } else {
        rq.curr
            .into_iter()
            .chain(rq.queued())
            .map(|t| env.entity(t).pelt.load_avg)
            .sum()
    }
}

/// weighted_cpuload: the queue's instantaneous weight.
pub(crate) fn weighted_cpuload(env: &impl SchedEnv, cpu: usize) -> u64 {
    env.rq(cpu).load_weight
}

pub(crate) fn source_load(env: &impl SchedEnv, cpu: usize, idx: u32) -> u64 {
    let lb_bias = env.policy().features.has(Feature::LbBias);
    env.cpu_load(cpu)
        .source_load(instant_load(env, cpu), idx, lb_bias)
}

pub(crate) fn target_load(env: &impl SchedEnv, cpu: usize, idx: u32) -> u64 {
    let lb_bias = env.policy().features.has(Feature::LbBias);
    env.cpu_load(cpu)
        .target_load(instant_load(env, cpu), idx, lb_bias)
}

/// (source_load, target_load) of `cpu` on history index `idx`.
pub(crate) fn loads(env: &impl SchedEnv, cpu: usize, idx: u32) -> (u64, u64) {
    (source_load(env, cpu, idx), target_load(env, cpu, idx))
}

//! Utilisation as 6.x's balancer and slow wakeup path read it: a CPU's
//! util_avg set against its queue's UTIL_EST sum, and a task's util_avg
//! against its own estimate (cpu_util and task_util_est, v6.5 and v6.12).
//! 4.15 has no UTIL_EST and reads util_avg alone.

use super::env::SchedEnv;
use super::load::SCHED_CAPACITY_SCALE;
use crate::policy::{Feature, UtilEstRule};

fn util_est_on(env: &impl SchedEnv) -> bool {
    env.policy().era.rules().util_est != UtilEstRule::Absent
        && env.policy().features.has(Feature::UtilEst)
}

/// cpu_util (v6.5, v6.12) of `cpu`, leaving out task `without`'s own
/// util_avg when it last ran there (cpu_util_without: a task being placed,
/// asleep, so not in the queue's estimate); `boost` also sets it against
/// the queue's runnable average (cpu_util_cfs_boost). At most the CPU's
/// capacity.
pub(crate) fn cpu_util(
    env: &impl SchedEnv,
    cpu: usize,
    without: Option<usize>,
    boost: bool,
) -> u64 {
    let rq = env.rq(cpu);
    let runnable = if boost { rq.pelt.runnable_avg } else { 0 };
    let mut util = rq.pelt.util_avg.max(runnable);
    if let Some(p) = without.filter(|&p| env.task_cpu(p) == cpu) {
        util = util.saturating_sub(env.entity(p).pelt.util_avg);
    }
    if util_est_on(env) {
        util = util.max(rq.util_est.max(runnable));
    }
    util.min(SCHED_CAPACITY_SCALE)
}

/// task_util_est: the larger of the task's util_avg and its estimate.
pub(crate) fn task_util_est(env: &impl SchedEnv, task: usize) -> u64 {
    let e = env.entity(task);
    if util_est_on(env) {
        e.pelt.util_avg.max(e.util_est.value())
    } else {
        e.pelt.util_avg
    }
}

#[cfg(test)]
mod tests {
    use super::{cpu_util, task_util_est, SCHED_CAPACITY_SCALE};
    use crate::policy::Era;
    use crate::sched::testenv::TestEnv;

    /// A CPU whose task ran long ago: util_avg has decayed to 100, its
    /// queue's estimate still says 600 (cpu_util, v6.5 and v6.12).
    fn decayed(era: Era) -> (TestEnv, usize) {
        let mut env = TestEnv::era("desktop-8c", era);
        let t = env.task(0, 100, 100);
        env.ents[t].util_est.ewma = 600;
        env.rqs[0].util_est = 600;
        env.rqs[0].pelt.runnable_avg = 800;
        (env, t)
    }

    #[test]
    fn cpu_util_6_x_counts_the_queues_estimate_4_15_does_not() {
        for era in [Era::V6_5, Era::V6_12] {
            let (env, t) = decayed(era);
            assert_eq!(cpu_util(&env, 0, None, false), 600, "{era}");
            assert_eq!(task_util_est(&env, t), 600, "{era}");
            // cpu_util_cfs_boost: the runnable average too.
            assert_eq!(cpu_util(&env, 0, None, true), 800, "{era}");
            // cpu_util_without leaves out the task's util_avg, not the
            // estimate of a queue it is not counted in.
            assert_eq!(cpu_util(&env, 0, Some(t), false), 600, "{era}");
        }
        let (env, t) = decayed(Era::V4_15);
        assert_eq!(cpu_util(&env, 0, None, false), 100);
        assert_eq!(task_util_est(&env, t), 100);
        assert_eq!(cpu_util(&env, 0, Some(t), false), 0);
    }

    #[test]
    fn no_util_est_reads_util_avg_alone_and_any_cpu_is_capped_at_its_capacity() {
        let mut env = TestEnv::new(
            "desktop-8c",
            serde_json::from_str(r#"{"era":"6.5","features":{"UTIL_EST":false}}"#).unwrap(),
        );
        let t = env.task(0, 100, 100);
        env.rqs[0].util_est = 600;
        assert_eq!(cpu_util(&env, 0, None, false), 100);
        env.rqs[0].pelt.util_avg = 1300;
        assert_eq!(cpu_util(&env, 0, None, false), SCHED_CAPACITY_SCALE);
        assert_eq!(task_util_est(&env, t), 100);
    }
}

//! Load tracking: PELT in the kernel's integer fixed point, and the 2.6.2x /
//! 4.15 `cpu_load[]` indexes with `source_load` / `target_load`.
//!
//! PELT: time is cut into 1024 us periods; a period's contribution decays by
//! y per period with y^32 = 1/2. Sums saturate at [`LOAD_AVG_MAX`].

/// The largest value a PELT sum of a always-running entity reaches.
pub const LOAD_AVG_MAX: u64 = 47742;
use crate::policy::UtilEstRule;

/// PELT periods for the contribution to halve.
const LOAD_AVG_PERIOD: u64 = 32;
/// The kernel's update_avg(): a 1/8-weight moving average, as avg_idle,
/// avg_overlap and avg_scan_cost are kept.
pub fn update_avg(avg: &mut u64, sample: u64) {
    *avg = (*avg as i64 + (sample as i64 - *avg as i64) / 8) as u64;
}

/// y^n x (2^32 - 1) for n in 0..32, generated as the kernel's sched-pelt.c does.
const Y_INV: [u64; 32] = [
    0xffffffff, 0xfa83b2da, 0xf5257d14, 0xefe4b99a, 0xeac0c6e6, 0xe5b906e6, 0xe0ccdeeb, 0xdbfbb796,
    0xd744fcc9, 0xd2a81d91, 0xce248c14, 0xc9b9bd85, 0xc5672a10, 0xc12c4cc9, 0xbd08a39e, 0xb8fbaf46,
    0xb504f333, 0xb123f581, 0xad583ee9, 0xa9a15ab4, 0xa5fed6a9, 0xa2704302, 0x9ef5325f, 0x9b8d39b9,
    0x9837f050, 0x94f4efa8, 0x91c3d373, 0x8ea4398a, 0x8b95c1e3, 0x88980e80, 0x85aac367, 0x82cd8698,
];
/// One unit of capacity / utilisation.
pub const SCHED_CAPACITY_SCALE: u64 = 1024;

/// val x y^n.
pub fn decay_load(val: u64, n: u64) -> u64 {
    if n > LOAD_AVG_PERIOD * 63 {
        return 0;
    }
    let mut val = val;
    let mut n = n;
    if n >= LOAD_AVG_PERIOD {
        val >>= n / LOAD_AVG_PERIOD;
        n %= LOAD_AVG_PERIOD;
    }
    crate::arith::mul_shr(val, Y_INV[n as usize], 32)
}

/// The contribution of `periods` full periods after a partial one of `d1` us
/// and before a partial one of `d3` us.
fn accumulate_segments(periods: u64, d1: u64, d3: u64) -> u64 {
    let c1 = decay_load(d1, periods);
    let c2 = LOAD_AVG_MAX - decay_load(LOAD_AVG_MAX, periods) - 1024;
    c1 + c2 + d3
}

/// One PELT signal set (a task's or a run queue's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pelt {
    last_update_ns: u64,
    period_contrib: u64,
    pub load_sum: u64,
    pub runnable_sum: u64,
    pub util_sum: u64,
    pub load_avg: u64,
    pub runnable_avg: u64,
    pub util_avg: u64,
}

impl Pelt {
    pub fn new(now_ns: u64) -> Self {
        Pelt {
            last_update_ns: now_ns,
            ..Default::default()
        }
    }

    /// Brings the signals up to `now_ns`, where since the last update the
    /// entity had weight `load` runnable (a run queue: the sum of its runnable
    /// weights; a task: 1 while runnable), `runnable` runnable tasks, and was
    /// running or not. `weight` scales load_avg (1 for run queues, whose
    /// load_sum is already weighted).
    ///
    /// The sums grow on every update, the averages move only when a period
    /// boundary was crossed (___update_load_sum returning 1 before
    /// ___update_load_avg, v4.15 and v6.x); returns whether they moved.
    #[inline]
    pub fn update(
        &mut self,
        now_ns: u64,
        load: u64,
        runnable: u64,
        running: bool,
        weight: u64,
    ) -> bool {
        // Time in ~microseconds (1024 ns), as the kernel does.
        let Some(elapsed) = now_ns.checked_sub(self.last_update_ns) else {
            return false;
        };
        let mut delta = elapsed >> 10;
        if delta == 0 {
            return false;
        }
        self.last_update_ns += delta << 10;
        delta += self.period_contrib;
        let periods = delta / 1024;
        let contrib = if periods > 0 {
            self.load_sum = decay_load(self.load_sum, periods);
            self.runnable_sum = decay_load(self.runnable_sum, periods);
            self.util_sum = decay_load(self.util_sum, periods);
            let d1 = 1024 - self.period_contrib;
            delta %= 1024;
            if load > 0 || runnable > 0 || running {
                accumulate_segments(periods, d1, delta)
            } else {
                0
            }
        } else {
            delta - self.period_contrib
        };
        self.period_contrib = delta;
        if load > 0 {
            self.load_sum += load * contrib;
        }
        if runnable > 0 {
            self.runnable_sum += runnable * contrib * SCHED_CAPACITY_SCALE;
        }
        if running {
            self.util_sum += contrib * SCHED_CAPACITY_SCALE;
        }
        if periods == 0 {
            return false;
        }
        let divider = LOAD_AVG_MAX - 1024 + self.period_contrib;
        self.load_avg = weight * self.load_sum / divider;
        self.runnable_avg = self.runnable_sum / divider;
        self.util_avg = self.util_sum / divider;
        true
    }

    /// A new task's signals (init_entity_runnable_average and
    /// post_init_entity_util_avg): load as if always runnable, and half the
    /// capacity its queue has spare (in proportion to weight if it has load).
    pub fn new_task(now_ns: u64, weight: u64, rq: &Pelt) -> Self {
        let divider = LOAD_AVG_MAX - 1024;
        let cap = SCHED_CAPACITY_SCALE.saturating_sub(rq.util_avg) / 2;
        let util_avg = if rq.util_avg > 0 {
            (rq.util_avg * weight / (rq.load_avg + 1)).min(cap)
        } else {
            cap
        };
        Pelt {
            last_update_ns: now_ns,
            period_contrib: 0,
            load_sum: divider,
            runnable_sum: divider * SCHED_CAPACITY_SCALE,
            util_sum: util_avg * divider,
            load_avg: weight,
            runnable_avg: SCHED_CAPACITY_SCALE,
            util_avg,
        }
    }

    /// A task's load at a new weight (reweight_entity: load_avg from the
    /// same load_sum).
    pub fn reweight(&mut self, weight: u64) {
        self.load_avg = weight * self.load_sum / (LOAD_AVG_MAX - 1024 + self.period_contrib);
    }

    /// Removes a departing task's signals from a run queue's (migration).
    pub fn detach(&mut self, task: &Pelt, task_weight: u64) {
        self.subtract(&Removed::of(task, task_weight));
    }

    /// Takes signals away, none below zero (the kernel's sub_positive).
    fn subtract(&mut self, r: &Removed) {
        self.load_avg = self.load_avg.saturating_sub(r.load_avg);
        self.load_sum = self.load_sum.saturating_sub(r.load_sum);
        self.util_avg = self.util_avg.saturating_sub(r.util_avg);
        self.util_sum = self.util_sum.saturating_sub(r.util_sum);
        self.runnable_avg = self.runnable_avg.saturating_sub(r.runnable_avg);
        self.runnable_sum = self.runnable_sum.saturating_sub(r.runnable_sum);
    }

    /// Takes away what tasks that left by wakeup have kept here until now
    /// (update_cfs_rq_load_avg's `cfs_rq->removed`, 4.15 and 6.x).
    #[inline]
    pub fn apply_removed(&mut self, removed: &mut Removed) {
        if removed.nr > 0 {
            self.subtract(&std::mem::take(removed));
        }
    }

    /// Adds an arriving task's signals to a run queue's.
    pub fn attach(&mut self, task: &Pelt, task_weight: u64) {
        self.load_avg += task.load_avg;
        self.load_sum += task.load_sum * task_weight;
        self.util_avg += task.util_avg;
        self.util_sum += task.util_sum;
        self.runnable_avg += task.runnable_avg;
        self.runnable_sum += task.runnable_sum;
    }
}

/// The signals of tasks that migrated at wakeup, still counted by the
/// queue they left: remove_entity_load_avg (4.15 and 6.x
/// migrate_task_rq_fair, for a task not moved by the balancer) only notes
/// them, under the old queue's `removed` lock, and that queue takes them
/// away at its next update_cfs_rq_load_avg (an enqueue, a dequeue, a tick,
/// a switch, update_blocked_averages). Until then wake_affine_weight and
/// the balancer still see the task's load on the CPU it left.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Removed {
    /// Tasks noted (the kernel's removed.nr): 0, nothing to take away.
    pub nr: u32,
    pub load_avg: u64,
    /// Scaled by the task's weight, as a run queue's load_sum is.
    pub load_sum: u64,
    pub util_avg: u64,
    pub util_sum: u64,
    pub runnable_avg: u64,
    pub runnable_sum: u64,
}

impl Removed {
    fn of(task: &Pelt, task_weight: u64) -> Self {
        Removed {
            nr: 1,
            load_avg: task.load_avg,
            load_sum: task.load_sum * task_weight,
            util_avg: task.util_avg,
            util_sum: task.util_sum,
            runnable_avg: task.runnable_avg,
            runnable_sum: task.runnable_sum,
        }
    }

    /// Notes one more departed task.
    pub fn add(&mut self, task: &Pelt, task_weight: u64) {
        let r = Removed::of(task, task_weight);
        self.nr += 1;
        self.load_avg += r.load_avg;
        self.load_sum += r.load_sum;
        self.util_avg += r.util_avg;
        self.util_sum += r.util_sum;
        self.runnable_avg += r.runnable_avg;
        self.runnable_sum += r.runnable_sum;
    }
}

/// UTIL_EST (v4.17+): what a task's utilisation was when it last went to
/// sleep, so that a task waking from a long sleep, whose util_avg decayed
/// meanwhile, is not taken for a small one. A run queue keeps the sum of
/// its runnable tasks' estimates (cfs_rq->avg.util_est), which cpu_util
/// sets against its util_avg.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UtilEst {
    /// The samples' moving average, new samples weighted 1/4.
    pub ewma: u64,
    /// util_est.enqueued (to v6.6): the last sample itself; v6.7 keeps
    /// the average alone.
    pub last: u64,
    /// UTIL_AVG_UNCHANGED: util_avg has not moved since the last sample,
    /// so another would say nothing new.
    pub unchanged: bool,
}

/// About 1% of a CPU: a sample this close to the estimate changes nothing.
const UTIL_EST_MARGIN: u64 = SCHED_CAPACITY_SCALE / 100;
/// A new sample's weight in the average: 1/2^2.
const UTIL_EST_WEIGHT_SHIFT: u32 = 2;

impl UtilEst {
    /// _task_util_est: what the task adds to its queue's estimate.
    pub fn value(&self) -> u64 {
        self.ewma.max(self.last)
    }

    /// util_est_update after the task went to sleep with utilisation
    /// `util` and runnable average `runnable` on a CPU of `capacity`; a
    /// sample that is skipped leaves the estimate as it was.
    pub fn sample(
        &mut self,
        rule: UtilEstRule,
        fastup: bool,
        util: u64,
        runnable: u64,
        capacity: u64,
    ) {
        if self.unchanged {
            return;
        }
        let mut next = *self;
        next.unchanged = true;
        match rule {
            UtilEstRule::Absent => return,
            // v6.5 util_est_update.
            UtilEstRule::LastAndEwma => {
                let previous_last = self.last as i64;
                next.last = util;
                if fastup && next.ewma < util {
                    next.ewma = util;
                } else {
                    let ewma_diff = util as i64 - next.ewma as i64;
                    let within = |v: i64| v.unsigned_abs() < UTIL_EST_MARGIN;
                    if within(ewma_diff) {
                        if within(previous_last - util as i64) {
                            return;
                        }
                    } else if util > capacity {
                        return;
                    } else {
                        next.ewma = (((next.ewma << UTIL_EST_WEIGHT_SHIFT) as i64 + ewma_diff)
                            >> UTIL_EST_WEIGHT_SHIFT) as u64;
                    }
                }
            }
            // v6.12 util_est_update: increases are taken at once, and a
            // task that waited for the CPU gives no sample of its size.
            UtilEstRule::Ewma => {
                if next.ewma <= util {
                    next.ewma = util;
                } else {
                    let diff = next.ewma - util;
                    if diff >= UTIL_EST_MARGIN {
                        if util > capacity {
                            return;
                        }
                        if util + UTIL_EST_MARGIN >= runnable {
                            next.ewma = ((next.ewma << UTIL_EST_WEIGHT_SHIFT) - diff)
                                >> UTIL_EST_WEIGHT_SHIFT;
                        }
                    }
                }
            }
        }
        *self = next;
    }
}

/// The 2.6.2x / 4.15 per-CPU load history: cpu_load[0] is the instantaneous
/// load, cpu_load[i] a decaying average with weight 1/2^i, updated each tick.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuLoad {
    pub cpu_load: [u64; 5],
}

impl CpuLoad {
    /// One tick's update with the current load.
    pub fn tick(&mut self, current: u64) {
        self.cpu_load[0] = current;
        for i in 1..5 {
            let scale = 1u64 << i;
            let old = self.cpu_load[i];
            // Round up when rising so the average can reach the new value.
            let new = if current > old {
                current + scale - 1
            } else {
                current
            };
            self.cpu_load[i] = (old * (scale - 1) + new) >> i;
        }
    }

    /// A conservative load estimate of a CPU tasks may move from: the lower of
    /// the history at `idx` and the current load (with LB_BIAS; else current).
    pub fn source_load(&self, current: u64, idx: u32, lb_bias: bool) -> u64 {
        if idx == 0 || !lb_bias {
            current
        } else {
            self.cpu_load[idx as usize - 1].min(current)
        }
    }

    /// The higher of the two: a CPU tasks may move to.
    pub fn target_load(&self, current: u64, idx: u32, lb_bias: bool) -> u64 {
        if idx == 0 || !lb_bias {
            current
        } else {
            self.cpu_load[idx as usize - 1].max(current)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn decay_halves_every_32_periods() {
        // Like the kernel, y^0 is (2^32 - 1) / 2^32, so whole halvings lose one.
        assert_eq!(decay_load(1 << 20, 32), (1 << 19) - 1);
        assert_eq!(decay_load(1 << 20, 64), (1 << 18) - 1);
        assert_eq!(decay_load(1 << 20, 16), 741_455); // 2^20 / sqrt(2)
        assert_eq!(decay_load(12345, 0), 12344); // y^0 is (2^32 - 1) / 2^32
        assert_eq!(decay_load(u32::MAX as u64, 3000), 0);
    }

    #[test]
    fn always_running_converges_to_the_kernel_maximum() {
        let mut p = Pelt::new(0);
        let mut now = 0;
        for _ in 0..2000 {
            now += MS;
            p.update(now, 1, 1, true, 1024);
        }
        // util_avg tends to 1024 and load_avg to the weight; the sums to
        // LOAD_AVG_MAX within one period's rounding.
        assert!(p.util_avg >= 1000 && p.util_avg <= 1024, "{}", p.util_avg);
        assert!(p.load_avg >= 1000 && p.load_avg <= 1024, "{}", p.load_avg);
        assert!(
            p.load_sum <= LOAD_AVG_MAX && p.load_sum > LOAD_AVG_MAX - 1100,
            "{}",
            p.load_sum
        );
    }

    #[test]
    fn averages_move_only_when_a_period_boundary_is_crossed() {
        // ___update_load_sum / ___update_load_avg (v4.15, v6.5): within a
        // 1024 us period the sums grow and the averages hold.
        let mut p = Pelt::new(0);
        let mut now = 0;
        for _ in 0..100 {
            now += MS;
            p.update(now, 1, 1, true, 1024);
        }
        let (util, sum) = (p.util_avg, p.util_sum);
        let start = p.period_contrib;
        now += (1024 - start - 10) * 1024; // 10 us short of the boundary
        assert!(!p.update(now, 1, 1, true, 1024));
        assert_eq!(p.util_avg, util);
        assert!(p.util_sum > sum);
        now += 20 * 1024;
        assert!(p.update(now, 1, 1, true, 1024));
        assert_ne!(p.util_avg, util);
    }

    fn sampled(
        rule: UtilEstRule,
        fastup: bool,
        from: UtilEst,
        util: u64,
        runnable: u64,
    ) -> UtilEst {
        let mut ue = from;
        ue.sample(rule, fastup, util, runnable, SCHED_CAPACITY_SCALE);
        ue
    }

    #[test]
    fn util_est_update_6_5_keeps_the_last_sample_and_smooths_decreases() {
        let rule = UtilEstRule::LastAndEwma;
        let ue = |ewma, last, unchanged| UtilEst {
            ewma,
            last,
            unchanged,
        };
        // UTIL_EST_FASTUP takes an increase at once; without it, 1/4 of it.
        assert_eq!(
            sampled(rule, true, ue(0, 0, false), 400, 0),
            ue(400, 400, true)
        );
        assert_eq!(
            sampled(rule, false, ue(0, 0, false), 400, 0),
            ue(100, 400, true)
        );
        // util_avg unchanged since the last sample: nothing new.
        assert_eq!(
            sampled(rule, true, ue(400, 400, true), 200, 0),
            ue(400, 400, true)
        );
        // A decrease moves the average a quarter of the way: 400 - 200 / 4.
        assert_eq!(
            sampled(rule, true, ue(400, 400, false), 200, 0),
            ue(350, 200, true)
        );
        // Within 1% of the average: the sample is kept only if it moved
        // from the last one by more than 1%; otherwise nothing is stored.
        assert_eq!(
            sampled(rule, true, ue(350, 200, false), 345, 0),
            ue(350, 345, true)
        );
        assert_eq!(
            sampled(rule, true, ue(350, 345, false), 346, 0),
            ue(350, 345, false)
        );
        // More than the CPU's capacity: no idle time, no sample.
        assert_eq!(
            sampled(rule, false, ue(350, 345, false), 1100, 0),
            ue(350, 345, false)
        );
        assert_eq!(ue(350, 400, false).value(), 400);
    }

    #[test]
    fn util_est_update_6_12_averages_decreases_of_tasks_that_did_not_wait() {
        let rule = UtilEstRule::Ewma;
        let ue = |ewma, unchanged| UtilEst {
            ewma,
            last: 0,
            unchanged,
        };
        assert_eq!(sampled(rule, false, ue(0, false), 400, 400), ue(400, true));
        assert_eq!(
            sampled(rule, false, ue(400, false), 200, 200),
            ue(350, true)
        );
        // Runnable well above util: it waited, so its size is not known.
        assert_eq!(
            sampled(rule, false, ue(350, false), 100, 500),
            ue(350, true)
        );
        // Within 1%: kept as is.
        assert_eq!(
            sampled(rule, false, ue(350, false), 345, 345),
            ue(350, true)
        );
        assert_eq!(sampled(rule, false, ue(350, true), 100, 100), ue(350, true));
    }

    #[test]
    fn sleeping_halves_every_32_ms() {
        let mut p = Pelt::new(0);
        let mut now = 0;
        for _ in 0..400 {
            now += MS;
            p.update(now, 1, 1, true, 1024);
        }
        // 32 periods of 1024 us = 32.768 ms of sleep halve the signal.
        let before = p.util_sum;
        let period_ns = 1024 * 1024;
        p.update(now + 32 * period_ns, 0, 0, false, 1024);
        let ratio = p.util_sum as f64 / before as f64;
        assert!((ratio - 0.5).abs() < 0.02, "{ratio}");
        let before = p.util_sum;
        p.update(now + 64 * period_ns, 0, 0, false, 1024);
        assert!(((p.util_sum as f64 / before as f64) - 0.5).abs() < 0.02);
    }

    #[test]
    fn cpu_load_indexes_follow_the_recurrence() {
        let mut l = CpuLoad::default();
        l.tick(1024);
        // idx 1: (0 x 1 + 1024 + 1) / 2 = 512; idx 2: (0 + 1027) / 4 = 256.
        assert_eq!(l.cpu_load, [1024, 512, 256, 128, 64]);
        l.tick(0);
        assert_eq!(l.cpu_load, [0, 256, 192, 112, 60]);
        assert_eq!(l.source_load(0, 2, true), 0);
        assert_eq!(l.target_load(0, 2, true), 256);
        assert_eq!(l.target_load(0, 2, false), 0);
    }
}

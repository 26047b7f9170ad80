//! Per-CPU CFS run queues: weights, vruntime, min_vruntime, sleeper and fork
//! placement, wakeup and tick preemption, next/last buddies, slices.
//!
//! The run queue orders its queued (not running) entities by (vruntime, id);
//! the running one is `curr`. Entities live in the engine's table, indexed
//! by task id; functions here take that table.

use crate::policy::{Era, Feature, FeatureSet, KernelPolicy, Tunables, WakeupBuddies};
use crate::sched::load::Pelt;
use std::collections::BTreeSet;

pub type TaskId = usize;

/// nice -20..=19 to load weight (the kernel's sched_prio_to_weight).
pub const NICE_TO_WEIGHT: [u64; 40] = [
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100, 4904,
    3906, 3121, 2501, 1991, 1586, 1277, 1024, 820, 655, 526, 423, 335, 272, 215, 172, 137, 110, 87,
    70, 56, 45, 36, 29, 23, 18, 15,
];
pub const NICE_0_LOAD: u64 = 1024;

pub fn weight_of_nice(nice: i8) -> u64 {
    NICE_TO_WEIGHT[(nice.clamp(-20, 19) + 20) as usize]
}

/// vruntime starts here so that placement behind min_vruntime never wraps.
pub const VRUNTIME_ORIGIN: u64 = 1 << 50;

/// A task's scheduling entity.
#[derive(Debug, Clone)]
pub struct Entity {
    pub weight: u64,
    pub vruntime: u64,
    /// Total CPU time received.
    pub sum_exec_ns: u64,
    /// sum_exec_ns when the task was last picked (for the slice check).
    pub prev_sum_exec_ns: u64,
    /// When the running task's CPU time was last accounted.
    pub exec_start_ns: u64,
    pub pelt: Pelt,
}

impl Entity {
    pub fn new(weight: u64, now_ns: u64) -> Self {
        Entity {
            weight,
            vruntime: VRUNTIME_ORIGIN,
            sum_exec_ns: 0,
            prev_sum_exec_ns: 0,
            exec_start_ns: now_ns,
            pelt: Pelt::new(now_ns),
        }
    }
}

/// delta x NICE_0_LOAD / weight: wall time to virtual time.
pub fn calc_delta_fair(delta: u64, weight: u64) -> u64 {
    if weight == NICE_0_LOAD {
        delta
    } else {
        ((delta as u128 * NICE_0_LOAD as u128) / weight as u128) as u64
    }
}

#[derive(Debug, Clone)]
pub struct CfsRq {
    queued: BTreeSet<(u64, TaskId)>,
    pub curr: Option<TaskId>,
    pub min_vruntime: u64,
    /// Sum of weights of queued tasks and curr.
    pub load_weight: u64,
    /// Queued tasks plus curr.
    pub nr_running: usize,
    pub next: Option<TaskId>,
    pub last: Option<TaskId>,
    /// When the current next-buddy pair started (2.6.27's pair_start).
    pub pair_start_ns: u64,
    pub pelt: Pelt,
}

impl CfsRq {
    pub fn new(now_ns: u64) -> Self {
        CfsRq {
            queued: BTreeSet::new(),
            curr: None,
            min_vruntime: VRUNTIME_ORIGIN,
            load_weight: 0,
            nr_running: 0,
            next: None,
            last: None,
            pair_start_ns: now_ns,
            pelt: Pelt::new(now_ns),
        }
    }

    /// Queued tasks (not curr), leftmost first.
    pub fn queued(&self) -> impl DoubleEndedIterator<Item = TaskId> + '_ {
        self.queued.iter().map(|&(_, id)| id)
    }

    pub fn leftmost(&self) -> Option<TaskId> {
        self.queued.first().map(|&(_, id)| id)
    }

    pub fn is_queued(&self, id: TaskId, e: &Entity) -> bool {
        self.queued.contains(&(e.vruntime, id))
    }

    /// Brings the PELT signals of the queue up to `now`.
    pub fn update_load(&mut self, now_ns: u64) {
        self.pelt.update(
            now_ns,
            self.load_weight,
            self.nr_running as u64,
            self.curr.is_some(),
            1,
        );
    }

    /// Charges the running task for the time since it was last accounted
    /// and advances min_vruntime.
    pub fn update_curr(&mut self, ents: &mut [Entity], now_ns: u64) {
        if let Some(c) = self.curr {
            let e = &mut ents[c];
            let delta = now_ns.saturating_sub(e.exec_start_ns);
            e.exec_start_ns = now_ns;
            e.sum_exec_ns += delta;
            e.vruntime += calc_delta_fair(delta, e.weight);
        }
        self.update_min_vruntime(ents);
    }

    fn update_min_vruntime(&mut self, ents: &[Entity]) {
        let curr_v = self.curr.map(|c| ents[c].vruntime);
        let left_v = self.queued.first().map(|&(v, _)| v);
        let candidate = match (curr_v, left_v) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) => a,
            (None, Some(b)) => b,
            (None, None) => return,
        };
        self.min_vruntime = self.min_vruntime.max(candidate);
    }

    /// Puts a runnable task in the tree (not as curr).
    pub fn enqueue(&mut self, id: TaskId, ents: &[Entity]) {
        let e = &ents[id];
        let inserted = self.queued.insert((e.vruntime, id));
        debug_assert!(inserted, "task {id} enqueued twice");
        self.load_weight += e.weight;
        self.nr_running += 1;
        self.update_min_vruntime(ents);
    }

    /// Takes a queued task out of the tree (it blocks, migrates, or is picked).
    pub fn dequeue(&mut self, id: TaskId, ents: &[Entity]) {
        let e = &ents[id];
        let removed = self.queued.remove(&(e.vruntime, id));
        debug_assert!(removed, "task {id} was not queued");
        self.load_weight -= e.weight;
        self.nr_running -= 1;
        self.clear_buddies(id);
    }

    /// The running task stops running and leaves the queue (blocks or exits).
    pub fn dequeue_curr(&mut self, id: TaskId, ents: &[Entity]) {
        debug_assert_eq!(self.curr, Some(id));
        self.curr = None;
        self.load_weight -= ents[id].weight;
        self.nr_running -= 1;
        self.clear_buddies(id);
    }

    /// The running task goes back into the tree (preempted).
    pub fn put_prev(&mut self, id: TaskId, ents: &[Entity]) {
        debug_assert_eq!(self.curr, Some(id));
        self.curr = None;
        self.queued.insert((ents[id].vruntime, id));
    }

    /// Makes a queued task the running one.
    pub fn set_curr(&mut self, id: TaskId, ents: &mut [Entity], now_ns: u64) {
        let e = &mut ents[id];
        self.queued.remove(&(e.vruntime, id));
        e.exec_start_ns = now_ns;
        e.prev_sum_exec_ns = e.sum_exec_ns;
        self.curr = Some(id);
        // A picked buddy has had its turn.
        if self.next == Some(id) {
            self.next = None;
        }
        if self.last == Some(id) {
            self.last = None;
        }
    }

    pub fn clear_buddies(&mut self, id: TaskId) {
        if self.next == Some(id) {
            self.next = None;
        }
        if self.last == Some(id) {
            self.last = None;
        }
    }

    /// The scheduling period for `nr` runnable tasks.
    pub fn period(nr: usize, t: &Tunables) -> u64 {
        if nr as u64 <= t.nr_latency {
            t.latency_ns
        } else {
            nr as u64 * t.min_granularity_ns
        }
    }

    /// A task's share of the period; `on_rq` says whether its weight is
    /// already in the queue's (a task being placed is not).
    pub fn slice(&self, weight: u64, on_rq: bool, t: &Tunables) -> u64 {
        let (nr, total) = if on_rq {
            (self.nr_running, self.load_weight)
        } else {
            (self.nr_running + 1, self.load_weight + weight)
        };
        let period = Self::period(nr.max(1), t);
        (period as u128 * weight as u128 / total.max(1) as u128) as u64
    }

    /// Sets the vruntime of a task arriving by wakeup (`initial` false) or
    /// fork (`initial` true).
    pub fn place_entity(
        &self,
        e: &mut Entity,
        initial: bool,
        era: Era,
        f: &FeatureSet,
        t: &Tunables,
    ) {
        let mut v = self.min_vruntime;
        if initial {
            if f.has(Feature::StartDebit) {
                v += calc_delta_fair(self.slice(e.weight, false, t), e.weight);
            }
            e.vruntime = v;
            return;
        }
        if f.has(Feature::FairSleepers) {
            let thresh = if era.rules().full_sleeper_credit {
                t.latency_ns
            } else {
                t.latency_ns / 2
            };
            v = v.saturating_sub(thresh);
        }
        // Sleeping never gains a task vruntime credit it did not have.
        e.vruntime = e.vruntime.max(v);
    }

    /// 1: `se` is far enough ahead of `curr`... as the kernel's
    /// wakeup_preempt_entity: -1 if `se` is not behind `curr` in vruntime,
    /// 1 if it is behind by more than the wakeup granularity, else 0.
    pub fn wakeup_preempt_entity(curr: &Entity, se: &Entity, t: &Tunables) -> i32 {
        let vdiff = curr.vruntime as i64 - se.vruntime as i64;
        if vdiff <= 0 {
            return -1;
        }
        let gran = calc_delta_fair(t.wakeup_granularity_ns, se.weight) as i64;
        if vdiff > gran {
            1
        } else {
            0
        }
    }

    /// The next task to run, as the era picks it.
    pub fn pick(&mut self, ents: &[Entity], era: Era, t: &Tunables, now_ns: u64) -> Option<TaskId> {
        if era.rules().pair_slice_pick {
            self.pick_next_pair(ents, t, now_ns)
        } else {
            self.pick_next(ents, t)
        }
    }

    /// pick_next (v2.6.27 kernel/sched_fair.c): the next buddy while the
    /// pair it forms has run no longer than the buddy's sched_slice since
    /// the pair started; else the leftmost, and a new pair starts.
    pub fn pick_next_pair(&mut self, ents: &[Entity], t: &Tunables, now_ns: u64) -> Option<TaskId> {
        let left = self.leftmost()?;
        if let Some(next) = self.next.filter(|&n| self.is_queued(n, &ents[n])) {
            if now_ns - self.pair_start_ns <= self.slice(ents[next].weight, true, t) {
                return Some(next);
            }
        }
        self.pair_start_ns = now_ns;
        Some(left)
    }

    /// The next task to run: the leftmost, unless a buddy (next before last)
    /// is within the wakeup granularity of it.
    pub fn pick_next(&self, ents: &[Entity], t: &Tunables) -> Option<TaskId> {
        let left = self.leftmost()?;
        for buddy in [self.next, self.last].into_iter().flatten() {
            if buddy != left
                && self.is_queued(buddy, &ents[buddy])
                && Self::wakeup_preempt_entity(&ents[buddy], &ents[left], t) < 1
            {
                return Some(buddy);
            }
        }
        Some(left)
    }

    /// check_preempt_wakeup: whether woken `task` preempts `curr`, setting
    /// the buddies as the era does (v2.6.28: next always, last under
    /// LAST_BUDDY; v4.15 / v6.5: next under NEXT_BUDDY with nr_latency
    /// tasks queued, and on any preemption; last on preemption with
    /// nr_latency tasks).
    pub fn check_preempt_wakeup(
        &mut self,
        curr: TaskId,
        task: TaskId,
        ents: &[Entity],
        policy: &KernelPolicy,
    ) -> bool {
        let (f, t) = (&policy.features, &policy.tunables);
        let buddies = policy.era.rules().wakeup_buddies;
        // 4.15+: buddies only once the queue holds nr_latency tasks.
        let scale = self.nr_running as u64 >= t.nr_latency;
        match buddies {
            WakeupBuddies::Always => {
                if f.has(Feature::LastBuddy) {
                    self.last = Some(curr);
                }
                self.next = Some(task);
            }
            WakeupBuddies::ByFeature if f.has(Feature::NextBuddy) && scale => {
                self.next = Some(task)
            }
            WakeupBuddies::ByFeature => {}
        }
        if !f.has(Feature::WakeupPreemption) {
            return false;
        }
        let preempt = Self::wakeup_preempt_entity(&ents[curr], &ents[task], t) == 1;
        if preempt && buddies == WakeupBuddies::ByFeature {
            // A preempting wakee is the next buddy whatever NEXT_BUDDY says.
            self.next = Some(task);
            if f.has(Feature::LastBuddy) && scale {
                self.last = Some(curr);
            }
        }
        preempt
    }

    /// Whether the running task has used up its slice (check_preempt_tick).
    pub fn tick_preempts(&self, ents: &[Entity], era: Era, t: &Tunables) -> bool {
        let Some(c) = self.curr else { return false };
        let e = &ents[c];
        let ideal = self.slice(e.weight, true, t);
        let ran = e.sum_exec_ns - e.prev_sum_exec_ns;
        if ran > ideal {
            return true;
        }
        if !era.rules().tick_preempts_by_vruntime || ran < t.min_granularity_ns {
            return false;
        }
        match self.leftmost() {
            Some(l) => (e.vruntime as i64 - ents[l].vruntime as i64) > ideal as i64,
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{Era, FeatureSet, Tunables};

    fn ents(weights: &[u64]) -> Vec<Entity> {
        weights.iter().map(|&w| Entity::new(w, 0)).collect()
    }

    #[test]
    fn weights_follow_nice() {
        assert_eq!(weight_of_nice(0), 1024);
        assert_eq!(weight_of_nice(-20), 88761);
        assert_eq!(weight_of_nice(19), 15);
        assert_eq!(calc_delta_fair(1000, 2048), 500);
    }

    #[test]
    fn slices_split_the_period_by_weight() {
        let t = Tunables::defaults(Era::V6_5, 8); // 24 ms latency, 3 ms min gran, nr_latency 8
        let mut e = ents(&[1024, 2048]);
        let mut rq = CfsRq::new(0);
        rq.enqueue(0, &e);
        rq.enqueue(1, &e);
        assert_eq!(rq.slice(1024, true, &t), 8_000_000);
        assert_eq!(rq.slice(2048, true, &t), 16_000_000);
        // 10 tasks exceed nr_latency: the period stretches to 10 x 3 ms.
        assert_eq!(CfsRq::period(10, &t), 30_000_000);
        rq.set_curr(0, &mut e, 0);
        rq.update_curr(&mut e, 4_000_000);
        assert_eq!(e[0].vruntime, VRUNTIME_ORIGIN + 4_000_000);
    }

    #[test]
    fn placement_of_sleepers_and_forks() {
        let t = Tunables::defaults(Era::V6_5, 8);
        let f = FeatureSet::defaults(Era::V6_5);
        let rq = CfsRq::new(0);
        let mut e = Entity::new(1024, 0);
        e.vruntime = 0;
        rq.place_entity(&mut e, false, Era::V6_5, &f, &t);
        assert_eq!(
            e.vruntime,
            VRUNTIME_ORIGIN - 12_000_000,
            "modern: half a latency behind"
        );
        rq.place_entity(
            &mut e,
            false,
            Era::V2_6_28,
            &f,
            &Tunables::defaults(Era::V2_6_28, 8),
        );
        assert_eq!(
            e.vruntime,
            VRUNTIME_ORIGIN - 12_000_000,
            "never moves a sleeper back"
        );
        let mut child = Entity::new(1024, 0);
        rq.place_entity(&mut child, true, Era::V6_5, &f, &t);
        assert_eq!(
            child.vruntime,
            VRUNTIME_ORIGIN + 24_000_000,
            "START_DEBIT: one slice of an empty queue"
        );
    }

    #[test]
    fn buddies_win_within_the_granularity() {
        let t = Tunables::defaults(Era::V6_5, 8); // wakeup gran 4 ms
        let mut e = ents(&[1024, 1024, 1024]);
        e[0].vruntime = VRUNTIME_ORIGIN;
        e[1].vruntime = VRUNTIME_ORIGIN + 3_000_000;
        e[2].vruntime = VRUNTIME_ORIGIN + 5_000_000;
        let mut rq = CfsRq::new(0);
        for i in 0..3 {
            rq.enqueue(i, &e);
        }
        assert_eq!(rq.pick_next(&e, &t), Some(0));
        rq.next = Some(2);
        assert_eq!(rq.pick_next(&e, &t), Some(0), "5 ms behind: too far");
        rq.next = Some(1);
        assert_eq!(rq.pick_next(&e, &t), Some(1), "3 ms behind: within 4 ms");
        assert_eq!(CfsRq::wakeup_preempt_entity(&e[2], &e[0], &t), 1);
        assert_eq!(CfsRq::wakeup_preempt_entity(&e[0], &e[2], &t), -1);
    }

    /// pick_next (v2.6.27): two nice-0 tasks queued behind the running
    /// one, 3 runnable in all: the period is the 20 ms latency (3 <=
    /// nr_latency 5 at these tunables), so the buddy's slice is 20 / 3 =
    /// 6.67 ms. The woken buddy runs while the pair is within it, however
    /// far it is behind the leftmost; past it the leftmost runs and a new
    /// pair starts.
    #[test]
    fn pick_next_pair_2_6_27_follows_the_buddy_for_one_slice() {
        let t = Tunables {
            latency_ns: 20_000_000,
            min_granularity_ns: 4_000_000,
            nr_latency: 5,
            ..Tunables::defaults(Era::V2_6_27, 1)
        };
        let mut e = vec![Entity::new(1024, 0); 3];
        e[0].vruntime = VRUNTIME_ORIGIN;
        e[1].vruntime = VRUNTIME_ORIGIN + 50_000_000;
        e[2].vruntime = VRUNTIME_ORIGIN + 10;
        let mut rq = CfsRq::new(0);
        rq.enqueue(2, &e);
        rq.set_curr(2, &mut e, 0);
        rq.enqueue(0, &e);
        rq.enqueue(1, &e);
        rq.next = Some(1);
        assert_eq!(rq.slice(1024, true, &t), 6_666_666);
        assert_eq!(rq.pick_next_pair(&e, &t, 6_666_666), Some(1));
        assert_eq!(rq.pick_next_pair(&e, &t, 6_666_667), Some(0));
        assert_eq!(rq.pair_start_ns, 6_666_667);
        // The new pair: the buddy runs again until its slice is used.
        assert_eq!(rq.pick_next_pair(&e, &t, 6_666_667 + 1_000_000), Some(1));
        // Later eras would not pick a buddy 50 ms behind.
        assert_eq!(rq.pick_next(&e, &t), Some(0));
    }

    /// check_preempt_wakeup (v4.15 kernel/sched/fair.c): a wakee that
    /// preempts becomes the next buddy even with NEXT_BUDDY off; the last
    /// buddy needs nr_latency queued tasks (3 here at 4.15's 8-CPU
    /// tunables: 24 ms / 3 ms = 8), so none is set. A wakee that does not
    /// preempt marks nothing.
    #[test]
    fn check_preempt_wakeup_4_15_marks_a_preempting_wakee_next() {
        let policy = crate::policy::PolicySpec::era(Era::V4_15)
            .resolve(8)
            .unwrap();
        assert_eq!(policy.tunables.nr_latency, 8);
        let mut e = vec![Entity::new(1024, 0); 3];
        e[0].vruntime = VRUNTIME_ORIGIN + 50_000_000;
        e[1].vruntime = VRUNTIME_ORIGIN + 49_000_000;
        e[2].vruntime = VRUNTIME_ORIGIN;
        let mut rq = CfsRq::new(0);
        rq.enqueue(0, &e);
        rq.set_curr(0, &mut e, 0);
        rq.enqueue(1, &e);
        rq.enqueue(2, &e);
        // 1 ms behind the running task: within the wakeup granularity.
        assert!(!rq.check_preempt_wakeup(0, 1, &e, &policy));
        assert_eq!((rq.next, rq.last), (None, None));
        // 50 ms behind: preempts.
        assert!(rq.check_preempt_wakeup(0, 2, &e, &policy));
        assert_eq!((rq.next, rq.last), (Some(2), None));
    }
}

//! EEVDF as v6.12's kernel/sched/fair.c runs it: a task is owed service
//! while its vruntime is at or below the queue's load-weighted average V
//! (eligible); among those the earliest virtual deadline runs. Placement
//! keeps a sleeper's lag, deadlines come from the request size
//! (sysctl_sched_base_slice), and a task that sleeps while not eligible
//! stays queued until picked or woken (DELAY_DEQUEUE).
//!
//! Sums are kept relative to min_vruntime as the kernel does (so they stay
//! small); weights are the nice-0 = 1024 scale (scale_load_down). The tree
//! is searched in deadline order, which gives pick_eevdf's answer without
//! its augmented heap.

use super::{calc_delta_fair, CfsRq, Entity, TaskId};
use crate::policy::{Feature, FeatureSet, KernelPolicy};

impl CfsRq {
    /// (vruntime - min_vruntime) as a signed key (entity_key).
    fn entity_key(&self, vruntime: u64) -> i64 {
        vruntime.wrapping_sub(self.min_vruntime) as i64
    }

    /// entity_key x weight: one entity's term of avg_vruntime.
    fn weighted_key(&self, e: &Entity) -> i128 {
        crate::arith::mul_i128(self.entity_key(e.vruntime) as i128, e.weight as i128)
    }

    pub(super) fn avg_add(&mut self, e: &Entity) {
        self.avg_vruntime += self.weighted_key(e);
        self.avg_load += e.weight;
    }

    pub(super) fn avg_sub(&mut self, e: &Entity) {
        self.avg_vruntime -= self.weighted_key(e);
        self.avg_load -= e.weight;
    }

    /// The weighted sum and total weight of the tree and curr.
    fn avg_with_curr(&self, ents: &[Entity]) -> (i128, i128) {
        let (mut avg, mut load) = (self.avg_vruntime, self.avg_load as i128);
        if let Some(c) = self.curr {
            avg += self.weighted_key(&ents[c]);
            load += ents[c].weight as i128;
        }
        (avg, load)
    }

    /// V's key, the weighted sum over the weight rounded down; None when
    /// nothing is queued or running.
    fn avg_key(&self, ents: &[Entity]) -> Option<i128> {
        let (avg, load) = self.avg_with_curr(ents);
        match (i64::try_from(avg), i64::try_from(load)) {
            // 64-bit division when it is exact in 64 bits: a 128-bit one is
            // a library call in WebAssembly (crate::arith).
            (Ok(a), Ok(l)) if l > 0 => Some(a.div_euclid(l) as i128),
            _ if load > 0 => Some(avg.div_euclid(load)),
            _ => None,
        }
    }

    /// V, the load-weighted average vruntime, rounded down (avg_vruntime).
    pub fn avg_vruntime(&self, ents: &[Entity]) -> u64 {
        let off = self.avg_key(ents).unwrap_or(0);
        self.min_vruntime.wrapping_add(off as i64 as u64)
    }

    /// Whether an entity at `vruntime` is owed service: V >= vruntime,
    /// tested without the division (vruntime_eligible).
    pub fn vruntime_eligible(&self, vruntime: u64, ents: &[Entity]) -> bool {
        let (avg, load) = self.avg_with_curr(ents);
        avg >= crate::arith::mul_i128(self.entity_key(vruntime) as i128, load)
    }

    /// The largest key still eligible, for testing many entities against
    /// one average: vruntime_eligible's `avg >= key * load` is
    /// `key <= floor(avg / load)` for an integer key and a positive load,
    /// one comparison per entity instead of a 128-bit product.
    fn eligible_key_limit(&self, ents: &[Entity]) -> i128 {
        // Nothing queued: vruntime_eligible compares 0 >= 0.
        self.avg_key(ents).unwrap_or(i128::MAX)
    }

    #[inline]
    pub fn entity_eligible(&self, id: TaskId, ents: &[Entity]) -> bool {
        self.vruntime_eligible(ents[id].vruntime, ents)
    }

    /// V - vruntime, limited to the virtual time of two slices or a tick,
    /// whichever is longer (entity_lag).
    pub(super) fn entity_lag(avg: u64, e: &Entity, tick_ns: u64) -> i64 {
        let vlag = avg.wrapping_sub(e.vruntime) as i64;
        let limit = calc_delta_fair((2 * e.slice_ns).max(tick_ns), e.weight) as i64;
        vlag.clamp(-limit, limit)
    }

    fn slice_of(e: &Entity, policy: &KernelPolicy) -> u64 {
        e.custom_slice_ns.unwrap_or(policy.tunables.base_slice_ns)
    }

    /// Once vruntime reaches the deadline, a new request: deadline =
    /// vruntime + r x 1024 / w. Returns whether one began (update_deadline).
    pub(super) fn update_deadline(e: &mut Entity, policy: &KernelPolicy) -> bool {
        if (e.vruntime.wrapping_sub(e.deadline) as i64) < 0 {
            return false;
        }
        e.slice_ns = Self::slice_of(e, policy);
        e.deadline = e.vruntime + calc_delta_fair(e.slice_ns, e.weight);
        true
    }

    /// Deadline order (entity_before); ties go to the lower task id.
    fn before(a: &Entity, b: &Entity) -> bool {
        (a.deadline.wrapping_sub(b.deadline) as i64) < 0
    }

    /// RUN_TO_PARITY's protection: `id` was the last task picked and its
    /// deadline has not moved since.
    fn protected(&self, id: TaskId, ents: &[Entity]) -> bool {
        self.protect == Some((id, ents[id].deadline))
    }

    /// PREEMPT_SHORT in update_curr: curr lost its protection to a shorter
    /// slice and is no longer eligible (did_preempt_short).
    pub(super) fn did_preempt_short(
        &self,
        curr: TaskId,
        ents: &[Entity],
        policy: &KernelPolicy,
    ) -> bool {
        policy.features.has(Feature::PreemptShort)
            && !self.protected(curr, ents)
            && !self.entity_eligible(curr, ents)
    }

    /// Woken `p` has a shorter slice than `curr`, is eligible, and either
    /// has the earlier deadline or `curr` is not eligible (do_preempt_short).
    fn do_preempt_short(&self, p: TaskId, curr: TaskId, ents: &[Entity], f: &FeatureSet) -> bool {
        f.has(Feature::PreemptShort)
            && ents[p].slice_ns < ents[curr].slice_ns
            && self.entity_eligible(p, ents)
            && (Self::before(&ents[p], &ents[curr]) || !self.entity_eligible(curr, ents))
    }

    /// pick_eevdf: the eligible entity with the earliest deadline, curr
    /// included; under RUN_TO_PARITY a protected, eligible curr keeps
    /// running. Called after the engine put the previous task back in the
    /// tree, that task stands in for curr (the kernel picks before putting
    /// it back).
    pub fn pick_eevdf(&self, ents: &[Entity], f: &FeatureSet) -> Option<TaskId> {
        if self.nr_running == 1 {
            return self.curr.or_else(|| self.leftmost());
        }
        let limit = self.eligible_key_limit(ents);
        let eligible = |id: TaskId| self.entity_key(ents[id].vruntime) as i128 <= limit;
        let curr = self.curr.filter(|&c| eligible(c));
        if f.has(Feature::RunToParity) {
            let prev = self
                .protect
                .map(|(p, _)| p)
                .filter(|&p| self.curr.is_none() && self.is_queued(p, &ents[p]) && eligible(p));
            if let Some(c) = curr.or(prev).filter(|&c| self.protected(c, ents)) {
                return Some(c);
            }
        }
        let best = self.queued().find(|&id| eligible(id));
        match (best, curr) {
            (Some(b), Some(c)) if Self::before(&ents[c], &ents[b]) => Some(c),
            (Some(b), _) => Some(b),
            // Some entity is always at or below the average; kept total.
            (None, c) => c.or_else(|| self.leftmost()),
        }
    }

    /// pick_next_entity: an eligible next buddy (NEXT_BUDDY), else
    /// pick_eevdf. The pick may be a delayed task, which the engine then
    /// dequeues (`finish_delayed`) before picking again.
    pub(super) fn pick_next_entity(&self, ents: &[Entity], f: &FeatureSet) -> Option<TaskId> {
        if f.has(Feature::NextBuddy) {
            if let Some(n) = self.next {
                if self.is_queued(n, &ents[n]) && !ents[n].delayed && self.entity_eligible(n, ents)
                {
                    return Some(n);
                }
            }
        }
        self.pick_eevdf(ents, f)
    }

    /// place_entity: at V less the lag the task left with (PLACE_LAG),
    /// scaled by (W + w) / W so that adding it leaves it that lag; its
    /// deadline a slice (half a slice for a new task under
    /// PLACE_DEADLINE_INITIAL) or its kept relative deadline
    /// (PLACE_REL_DEADLINE) away. `self` does not hold the task.
    #[inline]
    pub(super) fn place_eevdf(
        &self,
        id: TaskId,
        ents: &mut [Entity],
        initial: bool,
        policy: &KernelPolicy,
    ) {
        let f = &policy.features;
        let v = self.avg_vruntime(ents);
        let load = self.avg_with_curr(ents).1;
        let e = &mut ents[id];
        e.slice_ns = Self::slice_of(e, policy);
        let mut vslice = calc_delta_fair(e.slice_ns, e.weight);
        let mut lag: i128 = 0;
        if f.has(Feature::PlaceLag) && self.nr_running > 0 {
            // Truncated toward zero, as div_s64.
            lag = crate::arith::mul_div_i128(e.vlag as i128, load + e.weight as i128, load.max(1));
        }
        e.vruntime = v.wrapping_sub(lag as i64 as u64);
        if let Some(rel) = e.rel_deadline.take() {
            if f.has(Feature::PlaceRelDeadline) {
                e.deadline = e.vruntime.wrapping_add(rel);
                return;
            }
        }
        if f.has(Feature::PlaceDeadlineInitial) && initial {
            vslice /= 2;
        }
        e.deadline = e.vruntime.wrapping_add(vslice);
    }

    /// The running task sleeps (dequeue_entity with DEQUEUE_SLEEP). Under
    /// DELAY_DEQUEUE a task that is not eligible stays queued, delayed, and
    /// this returns true; otherwise it leaves with its lag.
    pub fn block_curr(&mut self, id: TaskId, ents: &mut [Entity], policy: &KernelPolicy) -> bool {
        debug_assert_eq!(self.curr, Some(id));
        if !self.eevdf {
            self.dequeue_curr(id, ents);
            return false;
        }
        if policy.features.has(Feature::DelayDequeue) && !self.entity_eligible(id, ents) {
            self.curr = None;
            self.protect = None;
            self.resched = false;
            self.clear_buddies(id);
            // Asleep, its estimate leaves the queue's sum (v6.12
            // dequeue_task_fair), though it stays queued.
            self.util_est_dequeue(&ents[id]);
            ents[id].delayed = true;
            self.nr_delayed += 1;
            self.tree_insert(id, &ents[id]);
            return true;
        }
        let v = self.avg_vruntime(ents);
        ents[id].vlag = Self::entity_lag(v, &ents[id], policy.tunables.tick_ns());
        self.dequeue_curr(id, ents);
        false
    }

    /// A delayed task was picked: it leaves now, with a positive lag
    /// dropped to zero under DELAY_ZERO (dequeue_entities with
    /// DEQUEUE_DELAYED, finish_delayed_dequeue_entity).
    pub fn finish_delayed(&mut self, id: TaskId, ents: &mut [Entity], policy: &KernelPolicy) {
        debug_assert!(ents[id].delayed);
        let v = self.avg_vruntime(ents);
        let e = &mut ents[id];
        e.vlag = Self::entity_lag(v, e, policy.tunables.tick_ns());
        let removed = self.tree_remove(id, &ents[id]);
        debug_assert!(removed, "delayed task {id} was not queued");
        self.load_weight -= ents[id].weight;
        self.nr_running -= 1;
        self.nr_delayed -= 1;
        self.clear_buddies(id);
        self.update_min_vruntime(ents);
        let e = &mut ents[id];
        e.delayed = false;
        if policy.features.has(Feature::DelayZero) && e.vlag > 0 {
            e.vlag = 0;
        }
    }

    /// A delayed task is woken where it is queued (ttwu_runnable ->
    /// requeue_delayed_entity): under DELAY_ZERO, once it is owed service
    /// again it is placed afresh at V.
    pub fn requeue_delayed(&mut self, id: TaskId, ents: &mut [Entity], policy: &KernelPolicy) {
        debug_assert!(ents[id].delayed);
        if policy.features.has(Feature::DelayZero) {
            let v = self.avg_vruntime(ents);
            let lag = Self::entity_lag(v, &ents[id], policy.tunables.tick_ns());
            ents[id].vlag = lag;
            if lag > 0 {
                self.tree_remove(id, &ents[id]);
                self.nr_running -= 1;
                ents[id].vlag = 0;
                self.place_eevdf(id, ents, false, policy);
                self.tree_insert(id, &ents[id]);
                self.nr_running += 1;
            }
        }
        ents[id].delayed = false;
        self.nr_delayed -= 1;
        self.util_est += ents[id].util_est.value();
    }

    /// check_preempt_wakeup_fair: a pending reschedule stands; otherwise the
    /// woken task preempts when it is what pick_eevdf would run now, after
    /// PREEMPT_SHORT may have lifted curr's protection.
    pub(super) fn check_preempt_eevdf(
        &mut self,
        curr: TaskId,
        task: TaskId,
        ents: &[Entity],
        policy: &KernelPolicy,
    ) -> bool {
        let f = &policy.features;
        self.mark_wakeup_buddies(curr, task, ents, policy);
        if self.resched {
            return true;
        }
        if !f.has(Feature::WakeupPreemption) {
            return false;
        }
        if self.do_preempt_short(task, curr, ents, f) && self.protected(curr, ents) {
            self.protect = None;
        }
        self.pick_eevdf(ents, f) == Some(task)
    }

    /// The EEVDF sums match the tree and no delayed task runs (checked with
    /// the engine's invariants).
    pub fn check_eevdf(&self, ents: &[Entity]) -> Result<(), String> {
        if !self.eevdf {
            return Ok(());
        }
        let (mut avg, mut load) = (0i128, 0u64);
        for id in self.queued() {
            avg += self.weighted_key(&ents[id]);
            load += ents[id].weight;
            if !self.by_vruntime.contains(&(ents[id].vruntime, id)) {
                return Err(format!("task {id} is missing from the vruntime index"));
            }
        }
        if (avg, load) != (self.avg_vruntime, self.avg_load) {
            return Err(format!(
                "avg_vruntime {} / avg_load {} but the tree sums to {avg} / {load}",
                self.avg_vruntime, self.avg_load
            ));
        }
        if self.by_vruntime.len() != self.queued.len() {
            return Err("the vruntime index and the tree differ in size".into());
        }
        if let Some(c) = self.curr.filter(|&c| ents[c].delayed) {
            return Err(format!("delayed task {c} is running"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::VRUNTIME_ORIGIN as O;
    use super::*;
    use crate::policy::{Era, Picker, PolicySpec};

    /// v6.12 on 8 CPUs: base_slice 0.75 ms x 4 = 3 ms, tick 4 ms.
    fn policy(features: &str) -> KernelPolicy {
        let json = format!(r#"{{"era":"6.12","features":{{{features}}}}}"#);
        serde_json::from_str::<PolicySpec>(&json)
            .unwrap()
            .resolve(8)
            .unwrap()
    }

    fn rq() -> CfsRq {
        CfsRq::with_picker(0, Picker::Eevdf)
    }

    /// Two nice-0 tasks placed at V = 0: A running since 0, B queued with
    /// its own slice if given.
    fn a_runs_b_waits(p: &KernelPolicy, b_slice: Option<u64>) -> (CfsRq, Vec<Entity>) {
        let mut e = vec![Entity::new(1024, 0), Entity::new(1024, 0)];
        e[1].custom_slice_ns = b_slice;
        let mut q = rq();
        q.place(0, &mut e, false, p);
        q.enqueue(0, &mut e);
        q.set_curr(0, &mut e, 0);
        q.place(1, &mut e, false, p);
        q.enqueue(1, &mut e);
        (q, e)
    }

    fn ent(weight: u64, v: u64, deadline: u64) -> Entity {
        Entity {
            vruntime: O + v,
            deadline: O + deadline,
            ..Entity::new(weight, 0)
        }
    }

    #[test]
    fn eligibility_is_against_the_weighted_average_and_the_earliest_eligible_deadline_wins() {
        let f = policy("").features;
        assert_eq!(Era::V6_12.rules().picker, Picker::Eevdf);
        // avg_vruntime (v6.12): keys 0, 3000, 6000 at weights 2048, 1024,
        // 1024: (0 + 3,072,000 + 6,144,000) / 4096 = 2250.
        let mut e = vec![
            ent(2048, 0, 5000),
            ent(1024, 3000, 1000),
            ent(1024, 6000, 500),
        ];
        let mut q = rq();
        for i in 0..3 {
            q.enqueue(i, &mut e);
        }
        assert_eq!(q.avg_vruntime(&e), O + 2250);
        // entity_eligible: only task 0 (0 <= 2250); pick_eevdf takes it
        // although 1 and 2 have earlier deadlines.
        assert!(q.entity_eligible(0, &e) && !q.entity_eligible(1, &e) && !q.entity_eligible(2, &e));
        assert_eq!(q.pick_eevdf(&e, &f), Some(0));
        // Task 1 at 2000: (2,048,000 + 6,144,000) / 4096 = 2000 = its own
        // vruntime: eligible at equality (vruntime_eligible: 8,192,000 >=
        // 2000 x 4096), and its deadline 1000 beats task 0's 5000.
        q.dequeue(1, &mut e, &policy(""));
        e[1] = ent(1024, 2000, 1000);
        q.enqueue(1, &mut e);
        assert_eq!(q.avg_vruntime(&e), O + 2000);
        assert!(q.entity_eligible(1, &e));
        assert_eq!(q.pick_eevdf(&e, &f), Some(1));
        q.check_eevdf(&e).unwrap();
    }

    proptest::proptest! {
        /// pick_eevdf's one division per pick gives vruntime_eligible's
        /// answer for every entity.
        #[test]
        fn the_eligible_key_limit_agrees_with_vruntime_eligible(
            queued in proptest::collection::vec((1u64..=88_761 << 10, 0u64..1 << 40), 1..8),
            probes in proptest::collection::vec(0u64..1 << 41, 1..16),
            curr in proptest::option::of(0usize..8),
        ) {
            let mut e: Vec<Entity> = queued.iter().map(|&(w, v)| ent(w, v, 0)).collect();
            let mut q = rq();
            for i in 0..e.len() {
                q.enqueue(i, &mut e);
            }
            if let Some(c) = curr.filter(|&c| c < e.len()) {
                q.set_curr(c, &mut e, 0);
            }
            let limit = q.eligible_key_limit(&e);
            for v in probes {
                let vruntime = O + v - (1 << 40);
                proptest::prop_assert_eq!(
                    q.entity_key(vruntime) as i128 <= limit,
                    q.vruntime_eligible(vruntime, &e)
                );
            }
        }
    }

    #[test]
    fn placement_keeps_the_lag_by_inflating_it_with_the_load() {
        let p = policy("");
        // Curr A (1024) at 0, queued B (1024) at 2000: V = 2,048,000 / 2048 = 1000.
        let mut e = vec![ent(1024, 0, 0), ent(1024, 2000, 0), ent(2048, 0, 0)];
        let mut q = rq();
        q.enqueue(0, &mut e);
        q.set_curr(0, &mut e, 0);
        q.enqueue(1, &mut e);
        assert_eq!(q.avg_vruntime(&e), O + 1000);
        // place_entity (v6.12, PLACE_LAG): C (2048) left owed 600; the lag is
        // scaled by (W + w) / W = (2048 + 2048) / 2048: 1200, so C goes to
        // V - 1200 = -200; deadline = -200 + 3 ms x 1024 / 2048.
        e[2].vlag = 600;
        q.place(2, &mut e, false, &p);
        assert_eq!(e[2].vruntime, O - 200);
        assert_eq!(e[2].deadline, O - 200 + 1_500_000);
        q.enqueue(2, &mut e);
        // After it joins, V' = (2,048,000 - 200 x 2048) / 4096 = 400, and
        // C's lag is V' - v = 600 again.
        assert_eq!(q.avg_vruntime(&e), O + 400);
        // Without PLACE_LAG it lands on V itself.
        e[2].vlag = 600;
        q.dequeue(2, &mut e, &p);
        e[2].vlag = 600;
        e[2].rel_deadline = None;
        q.place(2, &mut e, false, &policy(r#""PLACE_LAG":false"#));
        assert_eq!(e[2].vruntime, O + 1000);
    }

    #[test]
    fn a_new_task_starts_half_a_slice_from_its_deadline() {
        // PLACE_DEADLINE_INITIAL (v6.12 place_entity): a fork's first
        // request is half of base_slice: 1.5 ms at weight 1024; without it
        // a whole 3 ms. A new task has no lag, so it starts at V.
        let mut e = vec![ent(1024, 5000, 0), Entity::new(1024, 0)];
        let mut q = rq();
        q.enqueue(0, &mut e);
        q.set_curr(0, &mut e, 0);
        q.place(1, &mut e, true, &policy(""));
        assert_eq!(
            (e[1].vruntime, e[1].deadline),
            (O + 5000, O + 5000 + 1_500_000)
        );
        q.place(
            1,
            &mut e,
            true,
            &policy(r#""PLACE_DEADLINE_INITIAL":false"#),
        );
        assert_eq!(e[1].deadline, O + 5000 + 3_000_000);
    }

    #[test]
    fn a_task_sleeping_while_not_eligible_stays_queued_until_picked() {
        let p = policy("");
        // Curr A at 4000, B queued at 0 (both 1024): V = 2000, A is 2000
        // past it, so not eligible; dequeue_entity (v6.12, DELAY_DEQUEUE)
        // keeps it queued, delayed.
        let mut e = vec![ent(1024, 4000, 3_000_000), ent(1024, 0, 3_000_000)];
        let mut q = rq();
        q.enqueue(0, &mut e);
        q.set_curr(0, &mut e, 0);
        q.enqueue(1, &mut e);
        assert!(q.block_curr(0, &mut e, &p));
        assert!(e[0].delayed && q.nr_running == 2 && q.load_weight == 2048);
        assert_eq!(q.pick_eevdf(&e, &p.features), Some(1));
        // Woken while still not eligible (lag -2000), it is requeued as it
        // is (requeue_delayed_entity keeps a negative lag).
        q.requeue_delayed(0, &mut e, &p);
        assert!(!e[0].delayed);
        assert_eq!((e[0].vruntime, e[0].vlag), (O + 4000, -2000));
        // Without DELAY_DEQUEUE the same sleep leaves, keeping lag -2000
        // (within entity_lag's limit, a 4 ms tick at weight 1024).
        let mut e = vec![ent(1024, 4000, 3_000_000), ent(1024, 0, 3_000_000)];
        let mut q = rq();
        q.enqueue(0, &mut e);
        q.set_curr(0, &mut e, 0);
        q.enqueue(1, &mut e);
        assert!(!q.block_curr(0, &mut e, &policy(r#""DELAY_DEQUEUE":false"#)));
        assert_eq!((q.nr_running, e[0].vlag), (1, -2000));
    }

    #[test]
    fn a_delayed_task_picked_leaves_with_its_positive_lag_zeroed() {
        let p = policy("");
        // Delayed A at 4000 and curr B, which ran on to 10,000: V =
        // (4000 + 10,000) / 2 = 7000, A's lag is +3000; DELAY_ZERO
        // (finish_delayed_dequeue_entity, v6.12) drops it to 0.
        let mut e = vec![ent(1024, 4000, 3_000_000), ent(1024, 10_000, 3_000_000)];
        e[0].delayed = true;
        let mut q = rq();
        q.enqueue(0, &mut e);
        q.enqueue(1, &mut e);
        q.set_curr(1, &mut e, 0);
        q.finish_delayed(0, &mut e, &p);
        assert!(!e[0].delayed && q.nr_running == 1);
        assert_eq!(e[0].vlag, 0);
        let mut e2 = vec![ent(1024, 4000, 3_000_000), ent(1024, 10_000, 3_000_000)];
        e2[0].delayed = true;
        let mut q = rq();
        q.enqueue(0, &mut e2);
        q.enqueue(1, &mut e2);
        q.set_curr(1, &mut e2, 0);
        q.finish_delayed(0, &mut e2, &policy(r#""DELAY_ZERO":false"#));
        assert_eq!(e2[0].vlag, 3000);
    }

    /// pick_next_task_fair (v6.12): the running task picked again keeps
    /// the protection of its first pick, which ends when its deadline
    /// moves on; set_next_entity does not run for a re-pick, so the new
    /// deadline is not stashed (before, a re-pick renewed it).
    #[test]
    fn a_repick_does_not_renew_run_to_parity() {
        let p = policy("");
        let (mut q, mut e) = a_runs_b_waits(&p, None);
        assert!(q.protected(0, &e));
        // A runs out its 3 ms request: a new deadline, the protection gone.
        q.update_curr(&mut e, 3_000_000, &p);
        assert!(!q.protected(0, &e));
        q.put_prev(0, &e);
        q.repick_curr(0, &e);
        assert!(
            !q.protected(0, &e),
            "a re-pick does not stash the new deadline"
        );
        q.put_prev(0, &e);
        q.set_curr(0, &mut e, 3_000_000);
        assert!(q.protected(0, &e), "a pick does");
    }

    /// update_load_avg with se_runnable and h_nr_delayed (v6.12.y,
    /// "sched/eevdf: More PELT vs DELAYED_DEQUEUE"): a delayed task's
    /// weight stays in its queue's load, but it is not runnable.
    #[test]
    fn a_delayed_task_is_load_but_not_runnable() {
        let p = policy("");
        let (mut q, mut e) = a_runs_b_waits(&p, None);
        // A runs out its request, ineligible: its sleep is delayed.
        q.update_curr(&mut e, 3_000_000, &p);
        q.update_load(3_000_000);
        assert!(q.block_curr(0, &mut e, &p));
        assert_eq!((q.nr_running, q.nr_delayed), (2, 1));
        // Half a second on: the load of two, one runnable, none running.
        q.update_load(500_000_000);
        let (load, runnable) = (q.pelt.load_avg, q.pelt.runnable_avg);
        assert!((2000..=2048).contains(&load), "{load}");
        assert!((1000..=1024).contains(&runnable), "{runnable}");
        q.requeue_delayed(0, &mut e, &p);
        assert_eq!((q.nr_running, q.nr_delayed), (2, 0));
    }

    /// update_curr (v6.12) returns before its reschedule test when no time
    /// has passed, so PREEMPT_SHORT's did_preempt_short is judged only
    /// after curr ran.
    #[test]
    fn did_preempt_short_waits_for_time_to_pass() {
        let p = policy("");
        let (mut q, mut e) = a_runs_b_waits(&p, None);
        // A runs out its request: a new deadline ends its protection, and
        // 3 ms of vruntime against B's 0 leaves it ineligible.
        q.update_curr(&mut e, 3_000_000, &p);
        assert!(q.resched);
        assert!(!q.protected(0, &e) && !q.entity_eligible(0, &e));
        q.resched = false;
        q.update_curr(&mut e, 3_000_000, &p);
        assert!(!q.resched, "no time passed: no reschedule test");
        q.update_curr(&mut e, 3_000_001, &p);
        assert!(q.resched, "did_preempt_short: curr is not eligible");
        let p = policy(r#""PREEMPT_SHORT":false"#);
        q.resched = false;
        q.update_curr(&mut e, 3_000_002, &p);
        assert!(
            !q.resched,
            "without PREEMPT_SHORT curr runs to its deadline"
        );
    }

    #[test]
    fn a_woken_task_with_a_shorter_slice_ends_run_to_parity() {
        // Curr A placed on an empty queue: V = 0, slice 3 ms, deadline 3 ms,
        // protected since its pick. B wakes with a 1 ms request (a custom
        // slice) and no lag: at V = 0, deadline 1 ms, eligible.
        let setup = |p: &KernelPolicy| {
            let (q, e) = a_runs_b_waits(p, Some(1_000_000));
            assert_eq!(
                (e[0].deadline, e[1].deadline),
                (O + 3_000_000, O + 1_000_000)
            );
            (q, e)
        };
        // check_preempt_wakeup_fair (v6.12): PREEMPT_SHORT lifts A's
        // protection (B's slice is shorter, B is eligible with the earlier
        // deadline), so pick_eevdf returns B: preempt.
        let p = policy("");
        let (mut q, e) = setup(&p);
        assert!(q.check_preempt_wakeup(0, 1, &e, &p, false));
        // Without PREEMPT_SHORT, RUN_TO_PARITY keeps A until its deadline.
        let p = policy(r#""PREEMPT_SHORT":false"#);
        let (mut q, e) = setup(&p);
        assert!(!q.check_preempt_wakeup(0, 1, &e, &p, false));
        // Without RUN_TO_PARITY the earliest eligible deadline wins at once.
        let p = policy(r#""PREEMPT_SHORT":false,"RUN_TO_PARITY":false"#);
        let (mut q, e) = setup(&p);
        assert!(q.check_preempt_wakeup(0, 1, &e, &p, false));
    }

    #[test]
    fn a_request_ends_at_the_deadline_and_asks_for_a_reschedule() {
        let p = policy("");
        // update_curr / update_deadline (v6.12): weight 2048, placed at
        // V = 0, has its deadline 3 ms x 1024 / 2048 = 1.5 ms on. 1 ms of
        // wall time is 0.5 ms of vruntime: short of it. 6 ms is 3 ms of
        // vruntime, past it: a new request, deadline 3 + 1.5 ms, and with a
        // second task queued a reschedule at the tick.
        let mut e = vec![Entity::new(2048, 0), Entity::new(1024, 0)];
        let mut q = rq();
        q.place(0, &mut e, false, &p);
        q.enqueue(0, &mut e);
        q.set_curr(0, &mut e, 0);
        q.place(1, &mut e, false, &p);
        q.enqueue(1, &mut e);
        assert_eq!(e[0].deadline, O + 1_500_000);
        q.update_curr(&mut e, 1_000_000, &p);
        assert!(
            !q.tick_preempts(&e, Era::V6_12, &p.tunables),
            "0.5 ms short"
        );
        q.update_curr(&mut e, 6_000_000, &p);
        assert_eq!(e[0].vruntime, O + 3_000_000);
        assert_eq!(e[0].deadline, O + 4_500_000);
        assert!(q.tick_preempts(&e, Era::V6_12, &p.tunables));
    }
}

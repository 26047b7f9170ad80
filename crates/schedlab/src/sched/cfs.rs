//! Per-CPU CFS run queues: weights, vruntime, min_vruntime, sleeper and fork
//! placement, wakeup and tick preemption, next/last buddies, slices.
//!
//! The run queue orders its queued (not running) entities by (vruntime, id)
//! under CFS, by (virtual deadline, id) under EEVDF (`eevdf`, v6.12); the
//! running one is `curr`. Entities live in the engine's table, indexed by
//! task id; functions here take that table.

use crate::policy::{
    Era, Feature, FeatureSet, KernelPolicy, Picker, Tunables, WakeupBuddies, YieldTask,
};
use crate::sched::load::{Pelt, Removed, UtilEst};

mod eevdf;
mod ordered;

use ordered::OrderedSet;

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
    /// When the running task's CPU time was last accounted; None is the
    /// kernel's exec_start = 0: never run since fork (__sched_fork) or,
    /// from v4.15, since it migrated (migrate_task_rq_fair in 4.15,
    /// enqueue_entity's ENQUEUE_MIGRATED from 6.3), so task_hot sees it
    /// cold.
    pub exec_start_ns: Option<u64>,
    pub pelt: Pelt,
    /// EEVDF: the virtual deadline, vruntime + slice x 1024 / weight.
    pub deadline: u64,
    /// EEVDF: the request size r the deadline was set from.
    pub slice_ns: u64,
    /// EEVDF: a slice set by the task (sched_attr.sched_runtime) instead of
    /// sysctl_sched_base_slice; the workloads set none yet.
    pub custom_slice_ns: Option<u64>,
    /// EEVDF: the virtual lag V - vruntime kept from the last dequeue.
    pub vlag: i64,
    /// EEVDF DELAY_DEQUEUE: asleep but still queued (sched_delayed).
    pub delayed: bool,
    /// EEVDF PLACE_REL_DEADLINE: deadline - vruntime, kept across a move
    /// between queues.
    pub rel_deadline: Option<u64>,
    /// The run queue's list clock when the task was last enqueued there
    /// (account_entity_enqueue's list_add at the head of the task list): a
    /// larger stamp is nearer the head.
    pub enqueued_seq: u64,
    /// The clock when the task last went to the head of the list by an
    /// enqueue, a pick (4.15+ pick_next_task_fair's list_move, which makes
    /// cfs_tasks most recently used first) or a skip in detach_tasks.
    pub mru_seq: u64,
    /// UTIL_EST's estimate of the task's utilisation when it last slept.
    pub util_est: UtilEst,
}

impl Entity {
    pub fn new(weight: u64, now_ns: u64) -> Self {
        Entity {
            weight,
            vruntime: VRUNTIME_ORIGIN,
            sum_exec_ns: 0,
            prev_sum_exec_ns: 0,
            exec_start_ns: None,
            pelt: Pelt::new(now_ns),
            deadline: VRUNTIME_ORIGIN,
            slice_ns: 0,
            custom_slice_ns: None,
            vlag: 0,
            delayed: false,
            rel_deadline: None,
            enqueued_seq: 0,
            mru_seq: 0,
            util_est: UtilEst::default(),
        }
    }
}

/// delta x NICE_0_LOAD / weight: wall time to virtual time.
pub fn calc_delta_fair(delta: u64, weight: u64) -> u64 {
    if weight == NICE_0_LOAD {
        delta
    } else {
        crate::arith::mul_div(delta, NICE_0_LOAD, weight)
    }
}

#[derive(Debug, Clone)]
pub struct CfsRq {
    queued: OrderedSet,
    pub curr: Option<TaskId>,
    pub min_vruntime: u64,
    /// Sum of weights of queued tasks and curr.
    pub load_weight: u64,
    /// Queued tasks plus curr.
    pub nr_running: usize,
    /// Of them, asleep but still queued (EEVDF DELAY_DEQUEUE): not runnable
    /// in PELT (h_nr_delayed, v6.12.y's "sched/eevdf: More PELT vs
    /// DELAYED_DEQUEUE").
    pub nr_delayed: usize,
    pub next: Option<TaskId>,
    pub last: Option<TaskId>,
    /// The skip buddy: a task that yielded (4.15, 6.5).
    pub skip: Option<TaskId>,
    /// When the current next-buddy pair started (2.6.27's pair_start).
    pub pair_start_ns: u64,
    pub pelt: Pelt,
    /// Tasks that left by wakeup and are still in `pelt` (4.15+).
    pub removed: Removed,
    /// UTIL_EST: the sum of the estimates of the runnable tasks, not
    /// counting delayed ones (cfs_rq->avg.util_est; util_est_enqueue and
    /// util_est_dequeue).
    pub util_est: u64,
    /// The queue picks by EEVDF (v6.12) rather than CFS.
    eevdf: bool,
    /// EEVDF: queued entities by (vruntime, id), for min_vruntime (the
    /// kernel's augmented tree keeps the subtree minimum instead).
    by_vruntime: OrderedSet,
    /// EEVDF: sum over queued entities of (vruntime - min_vruntime) x weight,
    /// and of their weights (cfs_rq->avg_vruntime, avg_load).
    avg_vruntime: i128,
    avg_load: u64,
    /// EEVDF RUN_TO_PARITY: the last picked task and its deadline when
    /// picked (the kernel stashes it in vlag); protected while unchanged.
    protect: Option<(TaskId, u64)>,
    /// EEVDF: update_curr asked for a reschedule (deadline renewed, or a
    /// short-slice preemption); the tick or a wakeup acts on it.
    resched: bool,
    /// Stamps the order of the kernel's task list (cfs_rq->tasks in
    /// 2.6.2x, rq->cfs_tasks later) without keeping the list: each move to
    /// its head takes the next value (see `Entity::enqueued_seq`, `mru_seq`).
    list_clock: u64,
}

impl CfsRq {
    pub fn new(now_ns: u64) -> Self {
        CfsRq {
            queued: OrderedSet::default(),
            curr: None,
            min_vruntime: VRUNTIME_ORIGIN,
            load_weight: 0,
            nr_running: 0,
            nr_delayed: 0,
            next: None,
            last: None,
            skip: None,
            pair_start_ns: now_ns,
            pelt: Pelt::new(now_ns),
            removed: Removed::default(),
            util_est: 0,
            eevdf: false,
            by_vruntime: OrderedSet::default(),
            avg_vruntime: 0,
            avg_load: 0,
            protect: None,
            resched: false,
            list_clock: 0,
        }
    }

    /// An empty queue that picks as `picker` says.
    pub fn with_picker(now_ns: u64, picker: Picker) -> Self {
        CfsRq {
            eevdf: picker == Picker::Eevdf,
            ..Self::new(now_ns)
        }
    }

    /// The tree's order: vruntime (CFS) or virtual deadline (EEVDF).
    fn key(&self, e: &Entity) -> u64 {
        if self.eevdf {
            e.deadline
        } else {
            e.vruntime
        }
    }

    #[inline]
    fn tree_insert(&mut self, id: TaskId, e: &Entity) -> bool {
        if self.eevdf {
            self.by_vruntime.insert((e.vruntime, id));
            self.avg_add(e);
        }
        self.queued.insert((self.key(e), id))
    }

    #[inline]
    fn tree_remove(&mut self, id: TaskId, e: &Entity) -> bool {
        let removed = self.queued.remove(&(self.key(e), id));
        if removed && self.eevdf {
            self.by_vruntime.remove(&(e.vruntime, id));
            self.avg_sub(e);
        }
        removed
    }

    /// Queued tasks (not curr), leftmost first.
    pub fn queued(&self) -> impl DoubleEndedIterator<Item = TaskId> + '_ {
        self.queued.iter().map(|&(_, id)| id)
    }

    pub fn leftmost(&self) -> Option<TaskId> {
        self.queued.first().map(|&(_, id)| id)
    }

    pub fn is_queued(&self, id: TaskId, e: &Entity) -> bool {
        self.queued.contains(&(self.key(e), id))
    }

    /// update_cfs_rq_load_avg: the signals of tasks that left by wakeup go
    /// (4.15+), then the queue's signals are brought up to `now`.
    #[inline]
    pub fn update_load(&mut self, now_ns: u64) {
        self.pelt.apply_removed(&mut self.removed);
        self.decay_load(now_ns);
    }

    /// Brings the signals to `now_ns` and nothing else: what a reader that
    /// updates no queue sees (the model's signals are kept lazily).
    pub fn decay_load(&mut self, now_ns: u64) {
        self.pelt.update(
            now_ns,
            self.load_weight,
            (self.nr_running - self.nr_delayed) as u64,
            self.curr.is_some(),
            1,
        );
    }

    /// Charges the running task for the time since it was last accounted
    /// and advances min_vruntime (update_curr); under EEVDF also renews an
    /// expired deadline and notes the reschedule that asks for.
    #[inline]
    pub fn update_curr(&mut self, ents: &mut [Entity], now_ns: u64, policy: &KernelPolicy) {
        let mut renewed = false;
        let mut ran = false;
        if let Some(c) = self.curr {
            let e = &mut ents[c];
            let delta = now_ns.saturating_sub(e.exec_start_ns.unwrap_or(now_ns));
            e.exec_start_ns = Some(now_ns);
            e.sum_exec_ns += delta;
            e.vruntime += calc_delta_fair(delta, e.weight);
            ran = delta > 0;
            if self.eevdf && ran {
                renewed = Self::update_deadline(e, policy);
            }
        }
        self.update_min_vruntime(ents);
        // v6.12 update_curr returns before the resched test when no time
        // has passed, so PREEMPT_SHORT is judged only on elapsed time.
        if self.eevdf && ran && self.nr_running > 1 {
            let c = self.curr.expect("ran");
            if renewed || self.did_preempt_short(c, ents, policy) {
                self.resched = true;
                self.clear_buddies(c);
            }
        }
    }

    #[inline]
    fn update_min_vruntime(&mut self, ents: &[Entity]) {
        let curr_v = self.curr.map(|c| ents[c].vruntime);
        let tree = if self.eevdf {
            &self.by_vruntime
        } else {
            &self.queued
        };
        let left_v = tree.first().map(|&(v, _)| v);
        let candidate = match (curr_v, left_v) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) => a,
            (None, Some(b)) => b,
            (None, None) => return,
        };
        if self.eevdf && candidate > self.min_vruntime {
            // The keys are relative to min_vruntime (avg_vruntime_update).
            let d = candidate - self.min_vruntime;
            self.avg_vruntime -= crate::arith::mul_i128(self.avg_load as i128, d as i128);
        }
        self.min_vruntime = self.min_vruntime.max(candidate);
    }

    /// Moves `id` to the head of the task list (list_move to cfs_tasks):
    /// the most recently used end, which detach_tasks (4.15+) reaches last.
    pub fn list_move_head(&mut self, id: TaskId, ents: &mut [Entity]) {
        self.list_clock += 1;
        ents[id].mru_seq = self.list_clock;
    }

    /// Puts a runnable task in the tree (not as curr), and at the head of
    /// the task list.
    pub fn enqueue(&mut self, id: TaskId, ents: &mut [Entity]) {
        self.list_clock += 1;
        ents[id].enqueued_seq = self.list_clock;
        ents[id].mru_seq = self.list_clock;
        let e = &ents[id];
        let inserted = self.tree_insert(id, e);
        debug_assert!(inserted, "task {id} enqueued twice");
        self.load_weight += e.weight;
        self.nr_running += 1;
        // A delayed task moves between queues still asleep, not counted.
        if e.delayed {
            self.nr_delayed += 1;
        } else {
            self.util_est += e.util_est.value();
        }
        if !self.eevdf {
            self.update_min_vruntime(ents);
        }
    }

    /// Takes a queued task out of the tree to move it to another queue
    /// (not a sleep); EEVDF keeps its lag and, under PLACE_REL_DEADLINE, its
    /// relative deadline (dequeue_entity).
    pub fn dequeue(&mut self, id: TaskId, ents: &mut [Entity], policy: &KernelPolicy) {
        if self.eevdf {
            let v = self.avg_vruntime(ents);
            let tick = policy.tunables.tick_ns();
            let e = &mut ents[id];
            e.vlag = Self::entity_lag(v, e, tick);
            if policy.features.has(Feature::PlaceRelDeadline) {
                e.rel_deadline = Some(e.deadline.wrapping_sub(e.vruntime));
            }
        }
        let e = &ents[id];
        let removed = self.tree_remove(id, e);
        debug_assert!(removed, "task {id} was not queued");
        self.load_weight -= e.weight;
        self.nr_running -= 1;
        if e.delayed {
            self.nr_delayed -= 1;
        } else {
            self.util_est_dequeue(e);
        }
        self.clear_buddies(id);
        if self.eevdf {
            self.update_min_vruntime(ents);
        }
    }

    /// The running task stops running and leaves the queue (blocks or exits).
    pub fn dequeue_curr(&mut self, id: TaskId, ents: &[Entity]) {
        debug_assert_eq!(self.curr, Some(id));
        self.curr = None;
        self.load_weight -= ents[id].weight;
        self.nr_running -= 1;
        self.util_est_dequeue(&ents[id]);
        self.clear_buddies(id);
        if self.eevdf {
            self.protect = None;
            self.resched = false;
            self.update_min_vruntime(ents);
        }
    }

    /// util_est_dequeue: the task's estimate leaves the queue's sum (never
    /// below zero, as the kernel's min_t keeps it).
    pub(crate) fn util_est_dequeue(&mut self, e: &Entity) {
        self.util_est = self.util_est.saturating_sub(e.util_est.value());
    }

    /// The running task goes back into the tree (preempted).
    pub fn put_prev(&mut self, id: TaskId, ents: &[Entity]) {
        debug_assert_eq!(self.curr, Some(id));
        self.curr = None;
        self.resched = false;
        self.tree_insert(id, &ents[id]);
    }

    /// The task just put back picked again, under EEVDF (v6.12): in
    /// pick_next_task_fair, put_prev_set_next_task does nothing when next
    /// is prev, so set_next_entity does not run: its stash of the deadline
    /// (RUN_TO_PARITY's protection) is not renewed, the clock, the list
    /// order and the buddies stay as they were.
    pub fn repick_curr(&mut self, id: TaskId, ents: &[Entity]) {
        self.tree_remove(id, &ents[id]);
        self.curr = Some(id);
        self.resched = false;
    }

    /// Makes a queued task the running one.
    pub fn set_curr(&mut self, id: TaskId, ents: &mut [Entity], now_ns: u64) {
        self.tree_remove(id, &ents[id]);
        let e = &mut ents[id];
        e.exec_start_ns = Some(now_ns);
        e.prev_sum_exec_ns = e.sum_exec_ns;
        // pick_next_task_fair (4.15+) moves the pick to the list's head.
        self.list_clock += 1;
        e.mru_seq = self.list_clock;
        self.curr = Some(id);
        self.resched = false;
        if self.eevdf {
            // set_next_entity's stash of the deadline at the pick.
            self.protect = Some((id, e.deadline));
        }
        // A picked buddy has had its turn.
        self.clear_buddies(id);
    }

    pub fn clear_buddies(&mut self, id: TaskId) {
        if self.next == Some(id) {
            self.next = None;
        }
        if self.last == Some(id) {
            self.last = None;
        }
        if self.skip == Some(id) {
            self.skip = None;
        }
    }

    /// set_user_nice / sched_setattr on the running task `id` (brought up
    /// to date): its weight becomes `weight`. CFS keeps its vruntime; EEVDF
    /// (reweight_eevdf, v6.12) scales its lag and its deadline's distance
    /// from the average by old / new weight, so its owed service keeps its
    /// real-time worth.
    pub fn reweight_curr(&mut self, id: TaskId, ents: &mut [Entity], weight: u64) {
        debug_assert_eq!(self.curr, Some(id));
        let old = ents[id].weight;
        if self.eevdf {
            let v = self.avg_vruntime(ents);
            let e = &mut ents[id];
            let scale = |d: i64| (d as i128 * old as i128 / weight as i128) as i64;
            let lag = v.wrapping_sub(e.vruntime) as i64;
            let ahead = e.deadline.wrapping_sub(v) as i64;
            e.vruntime = v.wrapping_sub(scale(lag) as u64);
            e.deadline = v.wrapping_add(scale(ahead) as u64);
        }
        self.pelt.detach(&ents[id].pelt, old);
        let e = &mut ents[id];
        e.weight = weight;
        e.pelt.reweight(weight);
        self.pelt.attach(&ents[id].pelt, weight);
        self.load_weight = self.load_weight - old + weight;
        if self.eevdf {
            self.update_min_vruntime(ents);
        }
    }

    /// yield_task_fair on the running task `id`, as `kind` says (the caller
    /// has brought it up to date, update_curr); nothing when it is alone.
    pub fn yield_curr(&mut self, id: TaskId, ents: &mut [Entity], kind: YieldTask) {
        debug_assert_eq!(self.curr, Some(id));
        if self.nr_running == 1 {
            return;
        }
        match kind {
            YieldTask::UpdateCurr => {}
            YieldTask::ClearBuddies => self.clear_buddies(id),
            YieldTask::SkipBuddy => {
                self.clear_buddies(id);
                self.skip = Some(id);
            }
            YieldTask::PushDeadline => {
                self.clear_buddies(id);
                let e = &mut ents[id];
                e.deadline += calc_delta_fair(e.slice_ns, e.weight);
            }
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

    /// A task's share of the period (sched_slice); `on_rq` says whether
    /// its weight is already in the queue's (a task being placed is not);
    /// `floor`: at least sched_min_granularity (BASE_SLICE; not in 4.15).
    pub fn slice(&self, weight: u64, on_rq: bool, floor: bool, t: &Tunables) -> u64 {
        let (nr, total) = if on_rq {
            (self.nr_running, self.load_weight)
        } else {
            (self.nr_running + 1, self.load_weight + weight)
        };
        let period = Self::period(nr.max(1), t);
        let slice = crate::arith::mul_div(period, weight, total.max(1));
        if floor {
            slice.max(t.min_granularity_ns)
        } else {
            slice
        }
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
                v += calc_delta_fair(
                    self.slice(e.weight, false, era.rules().slice_bounds, t),
                    e.weight,
                );
            }
            // No earlier than the vruntime it came with (its parent's).
            e.vruntime = e.vruntime.max(v);
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

    /// Places a task arriving by wakeup, migration (`initial` false) or fork
    /// (`initial` true) as the era's picker does: CFS's sleeper credit or
    /// START_DEBIT, or EEVDF's lag and deadline.
    pub fn place(&self, id: TaskId, ents: &mut [Entity], initial: bool, policy: &KernelPolicy) {
        if self.eevdf {
            self.place_eevdf(id, ents, initial, policy);
        } else {
            let (era, f, t) = (policy.era, &policy.features, &policy.tunables);
            self.place_entity(&mut ents[id], initial, era, f, t);
        }
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
    pub fn pick(&mut self, ents: &[Entity], policy: &KernelPolicy, now_ns: u64) -> Option<TaskId> {
        if policy.era.rules().pair_slice_pick {
            self.pick_next_pair(ents, &policy.tunables, now_ns)
        } else {
            self.pick_next(ents, policy)
        }
    }

    /// pick_next (v2.6.27 kernel/sched_fair.c): the next buddy while the
    /// pair it forms has run no longer than the buddy's sched_slice since
    /// the pair started; else the leftmost, and a new pair starts.
    pub fn pick_next_pair(&mut self, ents: &[Entity], t: &Tunables, now_ns: u64) -> Option<TaskId> {
        let left = self.leftmost()?;
        if let Some(next) = self.next.filter(|&n| self.is_queued(n, &ents[n])) {
            if now_ns - self.pair_start_ns <= self.slice(ents[next].weight, true, false, t) {
                return Some(next);
            }
        }
        self.pair_start_ns = now_ns;
        Some(left)
    }

    /// The next task to run: the leftmost, unless a buddy (next before last)
    /// is within the wakeup granularity of it.
    pub fn pick_next(&self, ents: &[Entity], policy: &KernelPolicy) -> Option<TaskId> {
        if self.eevdf {
            return self.pick_next_entity(ents, &policy.features);
        }
        let t = &policy.tunables;
        let left = self.leftmost()?;
        for buddy in [self.next, self.last].into_iter().flatten() {
            if buddy != left
                && self.is_queued(buddy, &ents[buddy])
                && Self::wakeup_preempt_entity(&ents[buddy], &ents[left], t) < 1
            {
                return Some(buddy);
            }
        }
        // The skip buddy yields to the task after it if that one is
        // within the wakeup granularity of it (pick_next_entity, v4.15).
        if self.skip == Some(left) {
            if let Some(second) = self.queued().nth(1) {
                if Self::wakeup_preempt_entity(&ents[second], &ents[left], t) < 1 {
                    return Some(second);
                }
            }
        }
        Some(left)
    }

    /// The buddies check_preempt_wakeup marks before it looks at whether
    /// `curr` already has a reschedule pending (and returns if so): v2.6.2x
    /// next always and last under LAST_BUDDY; v4.15 / v6.5 next under
    /// NEXT_BUDDY with nr_latency tasks queued; v6.12 next under
    /// NEXT_BUDDY. Returns whether the queue holds nr_latency tasks.
    pub fn mark_wakeup_buddies(
        &mut self,
        curr: TaskId,
        task: TaskId,
        ents: &[Entity],
        policy: &KernelPolicy,
    ) -> bool {
        let (f, t) = (&policy.features, &policy.tunables);
        if self.eevdf {
            if f.has(Feature::NextBuddy) && !ents[task].delayed {
                self.next = Some(task);
            }
            return false;
        }
        // 4.15+: buddies only once the queue holds nr_latency tasks.
        let scale = self.nr_running as u64 >= t.nr_latency;
        match policy.era.rules().wakeup_buddies {
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
        scale
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
        overlap_preempts: bool,
    ) -> bool {
        if self.eevdf {
            return self.check_preempt_eevdf(curr, task, ents, policy);
        }
        let (f, t) = (&policy.features, &policy.tunables);
        let buddies = policy.era.rules().wakeup_buddies;
        let scale = self.mark_wakeup_buddies(curr, task, ents, policy);
        if !f.has(Feature::WakeupPreemption) {
            return false;
        }
        // WAKEUP_OVERLAP (2.6.2x, `sched::wakeup_overlap_preempts`).
        if overlap_preempts {
            return true;
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
        if self.eevdf {
            // entity_tick -> update_curr: an expired deadline (checked when
            // the tick brought the queue up to date) is the only reason.
            return self.resched;
        }
        let Some(c) = self.curr else { return false };
        let e = &ents[c];
        let bounded = era.rules().slice_bounds;
        let mut ideal = self.slice(e.weight, true, bounded, t);
        if bounded {
            ideal = ideal.min(t.latency_ns);
        }
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

    /// sched_slice (v6.5 kernel/sched/fair.c, BASE_SLICE; not in v4.15):
    /// a nice 19 task beside a nice 0 one gets 24 ms x 15 / 1039 = 0.35
    /// ms of the period, floored at sched_min_granularity (3 ms); v4.15
    /// has no floor.
    #[test]
    fn sched_slice_6_5_is_at_least_the_min_granularity() {
        let t = Tunables::defaults(Era::V6_5, 8);
        let mut e = ents(&[1024, 15]);
        let mut rq = CfsRq::new(0);
        rq.enqueue(0, &mut e);
        rq.enqueue(1, &mut e);
        assert_eq!(rq.slice(15, true, false, &t), 24_000_000 * 15 / 1039);
        assert_eq!(
            rq.slice(15, true, Era::V6_5.rules().slice_bounds, &t),
            3_000_000
        );
        assert!(!Era::V4_15.rules().slice_bounds);
        assert_eq!(rq.slice(1024, true, true, &t), 24_000_000 * 1024 / 1039);
    }

    /// check_preempt_tick (v6.5): the slice is capped at sched_latency
    /// when many tasks stretch the period. A nice -20 task among nine nice
    /// 0 ones has 30 ms x 88761 / 97977 = 27.2 ms of a 30 ms period; after
    /// 25 ms it is preempted in 6.5 (cap 24 ms), not under v4.15's rule,
    /// which has no cap.
    #[test]
    fn check_preempt_tick_6_5_caps_the_slice_at_sched_latency() {
        let t = Tunables::defaults(Era::V6_5, 8);
        let mut weights = vec![weight_of_nice(-20)];
        weights.extend([1024; 9]);
        let mut e = ents(&weights);
        let mut rq = CfsRq::new(0);
        for id in 0..e.len() {
            rq.enqueue(id, &mut e);
        }
        rq.set_curr(0, &mut e, 0);
        assert_eq!(rq.slice(e[0].weight, true, true, &t), 27_178_113);
        e[0].sum_exec_ns = 25_000_000;
        assert!(rq.tick_preempts(&e, Era::V6_5, &t));
        assert!(!rq.tick_preempts(&e, Era::V4_15, &t));
        e[0].sum_exec_ns = 23_000_000;
        assert!(!rq.tick_preempts(&e, Era::V6_5, &t));
    }

    #[test]
    fn slices_split_the_period_by_weight() {
        let t = Tunables::defaults(Era::V6_5, 8); // 24 ms latency, 3 ms min gran, nr_latency 8
        let mut e = ents(&[1024, 2048]);
        let mut rq = CfsRq::new(0);
        rq.enqueue(0, &mut e);
        rq.enqueue(1, &mut e);
        assert_eq!(rq.slice(1024, true, false, &t), 8_000_000);
        assert_eq!(rq.slice(2048, true, false, &t), 16_000_000);
        // 10 tasks exceed nr_latency: the period stretches to 10 x 3 ms.
        assert_eq!(CfsRq::period(10, &t), 30_000_000);
        rq.set_curr(0, &mut e, 0);
        let p = crate::policy::PolicySpec::era(Era::V6_5)
            .resolve(8)
            .unwrap();
        rq.update_curr(&mut e, 4_000_000, &p);
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
        let p = crate::policy::PolicySpec::era(Era::V6_5)
            .resolve(8)
            .unwrap();
        let t = p.tunables; // wakeup gran 4 ms
        let mut e = ents(&[1024, 1024, 1024]);
        e[0].vruntime = VRUNTIME_ORIGIN;
        e[1].vruntime = VRUNTIME_ORIGIN + 3_000_000;
        e[2].vruntime = VRUNTIME_ORIGIN + 5_000_000;
        let mut rq = CfsRq::new(0);
        for i in 0..3 {
            rq.enqueue(i, &mut e);
        }
        assert_eq!(rq.pick_next(&e, &p), Some(0));
        rq.next = Some(2);
        assert_eq!(rq.pick_next(&e, &p), Some(0), "5 ms behind: too far");
        rq.next = Some(1);
        assert_eq!(rq.pick_next(&e, &p), Some(1), "3 ms behind: within 4 ms");
        assert_eq!(CfsRq::wakeup_preempt_entity(&e[2], &e[0], &t), 1);
        assert_eq!(CfsRq::wakeup_preempt_entity(&e[0], &e[2], &t), -1);
    }

    /// yield_task_fair, v4.15 / v6.5: the yielder becomes the skip buddy,
    /// and pick_next_entity passes over it for the task after it when that
    /// one is within the wakeup granularity (4 ms at these tunables); v2.6.28
    /// clears its buddies only, so the leftmost runs, the yielder.
    #[test]
    fn a_yield_skips_the_yielder_for_a_task_within_the_granularity_4_15() {
        let p = crate::policy::PolicySpec::era(Era::V6_5)
            .resolve(8)
            .unwrap();
        for (behind, kind, picked) in [
            (3_000_000, YieldTask::SkipBuddy, 1),
            (5_000_000, YieldTask::SkipBuddy, 0),
            (3_000_000, YieldTask::ClearBuddies, 0),
            (3_000_000, YieldTask::UpdateCurr, 0),
        ] {
            let mut e = ents(&[1024, 1024]);
            e[0].vruntime = VRUNTIME_ORIGIN;
            e[1].vruntime = VRUNTIME_ORIGIN + behind;
            let mut rq = CfsRq::new(0);
            rq.enqueue(0, &mut e);
            rq.enqueue(1, &mut e);
            rq.set_curr(0, &mut e, 0);
            rq.next = Some(0);
            rq.yield_curr(0, &mut e, kind);
            assert_eq!(
                rq.next.is_none(),
                kind != YieldTask::UpdateCurr,
                "{kind:?}: clear_buddies from 2.6.28 on"
            );
            rq.put_prev(0, &e);
            assert_eq!(
                rq.pick_next(&e, &p),
                Some(picked),
                "{kind:?}, {behind} ns behind"
            );
            // Picked, the skip buddy has had its turn (clear_buddies).
            rq.set_curr(0, &mut e, 0);
            assert_eq!(rq.skip, None);
        }
    }

    /// yield_task_fair, v6.12: the yielder's deadline moves one slice on
    /// (calc_delta_fair of its slice: 3 ms at nice 0, 6 ms at half the
    /// weight); alone on its queue, nothing changes.
    #[test]
    fn a_yield_pushes_the_deadline_by_a_slice_6_12() {
        let mut e = ents(&[1024, 512]);
        for (i, e) in e.iter_mut().enumerate() {
            e.slice_ns = 3_000_000;
            e.deadline = 10_000_000 + i as u64;
        }
        let mut rq = CfsRq::with_picker(0, Picker::Eevdf);
        rq.enqueue(1, &mut e);
        rq.set_curr(1, &mut e, 0);
        rq.yield_curr(1, &mut e, YieldTask::PushDeadline);
        assert_eq!(e[1].deadline, 10_000_001, "alone: no change");
        rq.enqueue(0, &mut e);
        rq.yield_curr(1, &mut e, YieldTask::PushDeadline);
        assert_eq!(e[1].deadline, 10_000_001 + 6_000_000);
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
        rq.enqueue(2, &mut e);
        rq.set_curr(2, &mut e, 0);
        rq.enqueue(0, &mut e);
        rq.enqueue(1, &mut e);
        rq.next = Some(1);
        assert_eq!(rq.slice(1024, true, false, &t), 6_666_666);
        assert_eq!(rq.pick_next_pair(&e, &t, 6_666_666), Some(1));
        assert_eq!(rq.pick_next_pair(&e, &t, 6_666_667), Some(0));
        assert_eq!(rq.pair_start_ns, 6_666_667);
        // The new pair: the buddy runs again until its slice is used.
        assert_eq!(rq.pick_next_pair(&e, &t, 6_666_667 + 1_000_000), Some(1));
        // Later eras would not pick a buddy 50 ms behind.
        let v28 = crate::policy::PolicySpec::era(Era::V2_6_28)
            .resolve(1)
            .unwrap();
        assert_eq!(rq.pick_next(&e, &v28), Some(0));
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
        rq.enqueue(0, &mut e);
        rq.set_curr(0, &mut e, 0);
        rq.enqueue(1, &mut e);
        rq.enqueue(2, &mut e);
        // 1 ms behind the running task: within the wakeup granularity.
        assert!(!rq.check_preempt_wakeup(0, 1, &e, &policy, false));
        assert_eq!((rq.next, rq.last), (None, None));
        // 50 ms behind: preempts.
        assert!(rq.check_preempt_wakeup(0, 2, &e, &policy, false));
        assert_eq!((rq.next, rq.last), (Some(2), None));
    }

    /// check_preempt_wakeup with WAKEUP_OVERLAP (v2.6.27 sched_fair.c, on
    /// by default; v2.6.28, off by default): the woken task 1 ms behind the
    /// running one is within the wakeup granularity, so it would not
    /// preempt; but a sync wakeup between two tasks whose avg_overlap are
    /// both below migration_cost (0.5 ms) preempts at once in 2.6.27. A
    /// waker that runs on 1 ms after its wakeups does not. 2.6.28 with the
    /// feature on preempts for the sync hint alone, or for two short
    /// overlaps without it; its default leaves the feature off.
    #[test]
    fn check_preempt_wakeup_2_6_27_wakeup_overlap_preempts_a_sync_pair() {
        use crate::sched::{wakeup_overlap_preempts, TaskSched};
        let short = TaskSched {
            avg_overlap_ns: 100_000,
            ..TaskSched::default()
        };
        let long = TaskSched {
            avg_overlap_ns: 1_000_000,
            ..TaskSched::default()
        };
        let v27 = crate::policy::PolicySpec::era(Era::V2_6_27)
            .resolve(2)
            .unwrap();
        let mut e = vec![Entity::new(1024, 0); 2];
        e[0].vruntime = VRUNTIME_ORIGIN + 50_000_000;
        e[1].vruntime = VRUNTIME_ORIGIN + 49_000_000;
        let mut rq = CfsRq::new(0);
        rq.enqueue(0, &mut e);
        rq.set_curr(0, &mut e, 0);
        rq.enqueue(1, &mut e);
        let overlap = wakeup_overlap_preempts(&v27, true, &short, &short);
        assert!(overlap);
        assert!(rq.check_preempt_wakeup(0, 1, &e, &v27, overlap));
        assert!(!rq.check_preempt_wakeup(0, 1, &e, &v27, false));
        assert!(!wakeup_overlap_preempts(&v27, true, &long, &short));
        assert!(!wakeup_overlap_preempts(&v27, false, &short, &short));
        let v28 = crate::policy::PolicySpec::era(Era::V2_6_28)
            .resolve(2)
            .unwrap();
        assert!(!wakeup_overlap_preempts(&v28, true, &short, &short));
        let mut spec = crate::policy::PolicySpec::era(Era::V2_6_28);
        spec.features.insert("WAKEUP_OVERLAP".into(), true);
        let v28_on = spec.resolve(2).unwrap();
        assert!(wakeup_overlap_preempts(&v28_on, true, &long, &long));
        assert!(wakeup_overlap_preempts(&v28_on, false, &short, &short));
        assert!(!wakeup_overlap_preempts(&v28_on, false, &long, &short));
    }
}

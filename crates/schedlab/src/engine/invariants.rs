//! The model's invariants, checked after every event when a run asks for it
//! (the property tests do): every task is in exactly one place, at most one
//! task runs per CPU, queue bookkeeping (count, weight, UTIL_EST sum)
//! matches its contents, every channel's buffered bytes cover what is
//! readable and unacknowledged, every CPU's busy + idle + overhead time
//! equals the elapsed time (its softirq time a part of the overhead), and
//! the idle-CPU mask matches the CPUs.

use super::task::{TaskState, Wait};
use super::Sim;

impl Sim {
    pub(crate) fn check_all(&self) -> Result<(), String> {
        let n = self.tasks.len();
        let mut places = vec![0u32; n];
        for (c, cpu) in self.cpus.iter().enumerate() {
            let rq = &cpu.rq;
            let mut weight = 0;
            let mut count = 0;
            let mut util_est = 0;
            let mut delayed = 0;
            if let Some(t) = rq.curr {
                places[t] += 1;
                count += 1;
                weight += self.ents[t].weight;
                util_est += self.ents[t].util_est.value();
                if self.tasks[t].state != TaskState::Running(c) {
                    return Err(format!(
                        "cpu{c} runs task {t}, whose state is {:?}",
                        self.tasks[t].state
                    ));
                }
            }
            for t in rq.queued() {
                places[t] += 1;
                count += 1;
                weight += self.ents[t].weight;
                if self.ents[t].delayed {
                    // EEVDF DELAY_DEQUEUE: asleep, and still on this queue.
                    delayed += 1;
                    if !matches!(self.tasks[t].state, TaskState::Blocked(_))
                        || self.tasks[t].cpu != c
                    {
                        return Err(format!(
                            "task {t} is delayed on cpu{c} but is {:?} on cpu{}",
                            self.tasks[t].state, self.tasks[t].cpu
                        ));
                    }
                    continue;
                }
                util_est += self.ents[t].util_est.value();
                if self.tasks[t].state != TaskState::Queued(c) {
                    return Err(format!(
                        "task {t} is queued on cpu{c} but its state is {:?}",
                        self.tasks[t].state
                    ));
                }
            }
            let rt = &cpu.rt;
            if let Some(t) = rt.curr {
                if rq.curr.is_some() || self.tasks[t].state != TaskState::Running(c) {
                    return Err(format!(
                        "cpu{c} runs RT task {t} (state {:?}) beside fair task {:?}",
                        self.tasks[t].state, rq.curr
                    ));
                }
            }
            for (_, t) in rt.waiting() {
                places[t] += 1;
                if self.tasks[t].state != TaskState::Queued(c) {
                    return Err(format!(
                        "RT task {t} is queued on cpu{c} but its state is {:?}",
                        self.tasks[t].state
                    ));
                }
            }
            if let Some(t) = rt.curr {
                places[t] += 1;
            }
            if delayed != rq.nr_delayed {
                return Err(format!(
                    "cpu{c}: nr_delayed {} but {delayed} delayed tasks are queued",
                    rq.nr_delayed
                ));
            }
            if count != rq.nr_running || weight != rq.load_weight {
                return Err(format!(
                    "cpu{c}: nr_running {} / load {} but the queue holds {count} tasks of weight {weight}",
                    rq.nr_running, rq.load_weight
                ));
            }
            if util_est != rq.util_est {
                return Err(format!(
                    "cpu{c}: util_est {} but its runnable tasks' estimates sum to {util_est}",
                    rq.util_est
                ));
            }
            rq.check_eevdf(&self.ents)
                .map_err(|e| format!("cpu{c}: {e}"))?;
            if cpu.time.net_rx_softirq_ns > cpu.time.overhead_ns {
                return Err(format!(
                    "cpu{c}: softirq {} ns exceeds its kernel time {} ns",
                    cpu.time.net_rx_softirq_ns, cpu.time.overhead_ns
                ));
            }
            if self.idle_cpus.contains(c) != self.cpu_idle_now(c) {
                return Err(format!(
                    "cpu{c}: the idle mask says idle = {} but the CPU is {:?} with {} queued and {} wakeups pending",
                    self.idle_cpus.contains(c),
                    cpu.state,
                    rq.nr_running,
                    cpu.wake_pending
                ));
            }
            let busy = self.occupancy.siblings[c]
                .iter()
                .filter(|&&s| self.cpus[s].seg.is_some())
                .count();
            if self.busy_in_core(c) != busy {
                return Err(format!(
                    "cpu{c}: its core counts {} busy threads, {busy} run a segment",
                    self.busy_in_core(c)
                ));
            }
            if cpu.accounted_until(self.now) != self.now {
                return Err(format!(
                    "cpu{c}: busy + idle + overhead = {} ns, elapsed {} ns",
                    cpu.accounted_until(self.now),
                    self.now
                ));
            }
        }
        for (l, lock) in self.sync.lwlocks.iter().enumerate() {
            let Some(h) = lock.mutex_holder else {
                continue;
            };
            // Inside a spinlock a task runs or waits to run again: it never
            // sleeps there.
            let t = &self.tasks[h];
            if t.prog.lw_mutex != Some(l)
                || !matches!(t.state, TaskState::Running(_) | TaskState::Queued(_))
            {
                return Err(format!(
                    "LWLock {l}'s spinlock is held by task {h}, which is {:?} and holds {:?}",
                    t.state, t.prog.lw_mutex
                ));
            }
        }
        let mut backlog = vec![0u64; self.cpus.len()];
        for ch in &self.chans {
            ch.add_backlog(&mut backlog);
        }
        let kept = &self.occupancy.unix_backlog;
        if (kept.is_empty() && backlog.iter().any(|&b| b > 0))
            || (!kept.is_empty() && backlog != *kept)
        {
            return Err(format!(
                "the unix backlog per CPU is {:?}, its channels hold {backlog:?}",
                self.occupancy.unix_backlog
            ));
        }
        self.check_skbs()?;
        for (ch_i, ch) in self.chans.iter().enumerate() {
            ch.check_bytes()
                .map_err(|e| format!("channel {ch_i}: {e}"))?;
            for &t in ch.readers() {
                places[t] += 1;
                if self.tasks[t].state != TaskState::Blocked(Wait::Read(ch_i)) {
                    return Err(format!(
                        "task {t} waits to read channel {ch_i} but is {:?}",
                        self.tasks[t].state
                    ));
                }
            }
            for &t in ch.writers() {
                places[t] += 1;
                if self.tasks[t].state != TaskState::Blocked(Wait::Write(ch_i)) {
                    return Err(format!(
                        "task {t} waits to write channel {ch_i} but is {:?}",
                        self.tasks[t].state
                    ));
                }
            }
        }
        // A mutex's waiters are asleep; the other lists name their tasks
        // from their arrival: asleep (counted here) or still entering the
        // wait (on a CPU).
        for (wait, asleep, list) in self.sync.wait_lists() {
            for t in list {
                match self.tasks[t].state {
                    TaskState::Blocked(w) if w == wait => places[t] += 1,
                    TaskState::Running(_) | TaskState::Queued(_) if !asleep => {}
                    s => return Err(format!("task {t} is listed in {wait:?} but is {s:?}")),
                }
            }
        }
        for (t, task) in self.tasks.iter().enumerate() {
            let delayed = u32::from(self.ents[t].delayed);
            let expected = delayed
                + match task.state {
                    TaskState::Running(_) | TaskState::Queued(_) => 1,
                    TaskState::Blocked(
                        Wait::Read(_)
                        | Wait::Write(_)
                        | Wait::Lock(_)
                        | Wait::Cond(_)
                        | Wait::Barrier(_)
                        | Wait::Sem(_)
                        | Wait::Lw(_),
                    ) => 1,
                    // Sleeping on a timer, on the way to a CPU by IPI, or gone:
                    // in no queue and no wait list.
                    TaskState::Blocked(Wait::Timer) | TaskState::Waking(_) | TaskState::Exited => 0,
                };
            if places[t] != expected {
                return Err(format!(
                    "task {t} ({}) is {:?} but found in {} places",
                    task.name, task.state, places[t]
                ));
            }
        }
        let alive = self
            .tasks
            .iter()
            .filter(|t| t.state != TaskState::Exited)
            .count();
        if alive != self.tasks_alive {
            return Err(format!(
                "{alive} tasks have not exited but {} are counted alive",
                self.tasks_alive
            ));
        }
        Ok(())
    }
}

impl Sim {
    /// SLUB's skbs: every live one is queued on a channel or is a write's
    /// in progress, and every slab holds all its objects in one place.
    fn check_skbs(&self) -> Result<(), String> {
        let queued: usize = self.chans.iter().map(|c| c.queued_skbs()).sum();
        let writing = self.tasks.iter().filter(|t| t.prog.skb.is_some()).count();
        let Some(slabs) = &self.skb_slabs else {
            if queued + writing > 0 {
                return Err(format!(
                    "{queued} skbs queued and {writing} being written on a machine without skb_slabs"
                ));
            }
            return Ok(());
        };
        if slabs.live() != (queued + writing) as u64 {
            return Err(format!(
                "{} skbs live in the slabs, {queued} queued and {writing} being written",
                slabs.live()
            ));
        }
        slabs.check()
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::{Sim, SimConfig};
    use crate::topology::{preset, Topology};

    /// A running sim on an SMT machine, stopped mid-run with segments live.
    fn sim_mid_run() -> Sim {
        let topo = Topology::from_spec(&preset("ivb-ep-2s").unwrap()).unwrap();
        let task = r#"{"name":"spin","program":[{"compute":{"ns":5000000}}]}"#;
        let spec =
            serde_json::from_str(&format!(r#"{{"tasks":[{}]}}"#, [task; 8].join(","))).unwrap();
        let cfg = SimConfig::new(
            topo,
            &crate::policy::PolicySpec::era(crate::policy::Era::V4_15),
            &spec,
        )
        .unwrap();
        let mut sim = Sim::new(&cfg).unwrap();
        sim.run_until(1_000_000).unwrap();
        sim
    }

    #[test]
    fn a_core_busy_count_out_of_step_with_the_segments_is_caught() {
        let mut sim = sim_mid_run();
        sim.check_all().unwrap();
        let busy_cpu = (0..sim.cpus.len())
            .find(|&c| sim.cpus[c].seg.is_some())
            .expect("some CPU runs a segment");
        sim.occupancy.core_busy[sim.occupancy.core_of[busy_cpu]] += 1;
        let err = sim.check_all().unwrap_err();
        assert!(err.contains("busy threads"), "{err}");
    }
}

//! Idle CPUs and the tick: entering idle with a C-state from the idle
//! predictor, kicks out of it, the tick (and NOHZ stopping it), the load
//! history's missed ticks.

use super::cpu::{Acct, CpuState};
use super::stats::TraceEvent;
use super::{Event, Sim};
use crate::counters::Counter;
use crate::policy::NohzBalancer;
use crate::sched::nohz::{self, TickAction};
use crate::sched::update_avg_idle;

impl Sim {
    pub(super) fn go_idle(&mut self, cpu: usize) {
        let now = self.now;
        let was_running = self.cpus[cpu].state != CpuState::Idle;
        // The idle governor's guess: like menu, trust a recent short idle
        // period over a long average, so a busy ping-pong stays shallow.
        let c = &self.cpus[cpu];
        let predicted = c
            .last_idle_ns
            .map_or(c.avg_idle_ns, |l| l.min(c.avg_idle_ns));
        let cstate = self.cost.pick_cstate(predicted);
        let c = &mut self.cpus[cpu];
        c.state = CpuState::Idle;
        c.idle_since = now;
        if let (false, Some(mm)) = (c.idle_mm_ref, c.loaded_mm) {
            // The switch to idle takes a reference on the task's mm
            // (mmgrab_lazy_tlb). Its line moves here; the time it takes
            // only delays this CPU's entry into idle.
            c.idle_mm_ref = true;
            self.mms.write_count(mm, cpu);
        }
        c.cstate = cstate;
        self.note_idle(cpu);
        let c = &mut self.cpus[cpu];
        c.account(now, Some(Acct::Idle));
        if crate::sched::nohz::idle_enter(self, cpu, predicted) {
            self.cpus[cpu].tick_stopped = true;
        }
        self.counters.idle_enter(cstate);
        // A core whose threads are all idle is an idle core (SMT only).
        if self.occupancy.siblings[cpu].len() > 1
            && self.occupancy.siblings[cpu]
                .iter()
                .all(|&s| self.cpu_idle(s))
        {
            let llc = self.topo.cpus[cpu].llc;
            self.sched.llc_has_idle_cores[llc] = true;
        }
        if was_running {
            self.trace_event(TraceEvent::Switch {
                t: now,
                cpu,
                from: None,
                to: None,
            });
        }
    }

    /// Wakes an idle CPU at time `at` (a no-op if it is not idle then).
    pub(crate) fn kick(&mut self, cpu: usize, at: u64) {
        let c = &mut self.cpus[cpu];
        if c.state == CpuState::Idle && !c.kick_pending {
            c.kick_pending = true;
            self.queue.push(at, Event::IdleKick { cpu });
        }
    }

    pub(crate) fn idle_kick(&mut self, cpu: usize) {
        let now = self.now;
        let exit = self.cost.idle_exit(self.cpus[cpu].cstate);
        let c = &mut self.cpus[cpu];
        if c.state == CpuState::Idle && now < c.softirq_until {
            // Busy in its tick's balancing: it notices once that is done.
            self.queue.push(c.softirq_until, Event::IdleKick { cpu });
            return;
        }
        c.kick_pending = false;
        if c.state != CpuState::Idle {
            return;
        }
        // avg_idle: a 1/8-weight moving average of idle periods, as the kernel keeps.
        let period = now - c.idle_since;
        update_avg_idle(&self.policy, &self.sched, cpu, &mut c.avg_idle_ns, period);
        let avg_idle = c.avg_idle_ns;
        crate::sched::note_idle_wakeup(&mut self.sched, &self.policy, cpu, avg_idle, now);
        let c = &mut self.cpus[cpu];
        c.last_idle_ns = Some(period);
        c.state = CpuState::ExitingIdle;
        self.restart_tick(cpu);
        let c = &mut self.cpus[cpu];
        c.account(now, Some(Acct::Overhead));
        c.gen += 1;
        let gen = c.gen;
        self.queue
            .push(now + exit, Event::IdleExitDone { cpu, gen });
    }

    pub(crate) fn idle_exit_done(&mut self, cpu: usize) {
        self.cpus[cpu].state = CpuState::Running;
        self.note_idle(cpu);
        self.schedule(cpu);
    }

    /// Whether `cpu` is idle as modern kernels mean it (idle_cpu /
    /// available_idle_cpu): nothing running, nothing queued, no wakeup on
    /// its way.
    pub(crate) fn cpu_idle(&self, cpu: usize) -> bool {
        self.idle_cpus.contains(cpu)
    }

    /// cpu_idle computed from the CPU itself (what `idle_cpus` caches).
    pub(crate) fn cpu_idle_now(&self, cpu: usize) -> bool {
        let c = &self.cpus[cpu];
        self.cpu_curr_idle(cpu)
            && c.rq.nr_running == 0
            && c.rt.nr_running() == 0
            && c.wake_pending == 0
    }

    /// Brings `cpu`'s bit in `idle_cpus` up to date; called wherever its
    /// state, its queue's nr_running or its pending wakeups change.
    #[inline]
    pub(crate) fn note_idle(&mut self, cpu: usize) {
        if self.cpu_idle_now(cpu) {
            self.idle_cpus.insert(cpu);
        } else {
            self.idle_cpus.remove(cpu);
        }
    }

    /// 2.6.2x's idle_cpu: the idle task is current (tasks may be queued).
    pub(crate) fn cpu_curr_idle(&self, cpu: usize) -> bool {
        matches!(self.cpus[cpu].state, CpuState::Idle | CpuState::ExitingIdle)
    }

    pub(crate) fn tick(&mut self, cpu: usize) {
        if self.cpus[cpu].tick_stopped {
            self.cpus[cpu].tick_armed = false;
            return;
        }
        let tick = self.policy.tunables.tick_ns();
        self.queue.push(self.now + tick, Event::Tick { cpu });
        self.touch_rq(cpu);
        if let Some(curr) = self.cpus[cpu].rq.curr {
            self.touch_task(curr);
        }
        let (rq, rt) = (&self.cpus[cpu].rq, &self.cpus[cpu].rt);
        let waiting = (rq.nr_running as u64).saturating_sub(u64::from(rq.curr.is_some()))
            + (rt.nr_running() as u64).saturating_sub(u64::from(rt.curr.is_some()));
        self.counters.add(Counter::TickWaiting, waiting);
        let current = crate::sched::instant_load(self, cpu);
        self.cpus[cpu].cpu_load.tick(current);
        self.cpus[cpu].load_tick_ns = self.now;
        // trigger_load_balance: the NOHZ decision comes before the softirq.
        let action = nohz::tick(self, cpu);
        let mut balance_ns = 0;
        match action {
            TickAction::StopOwnTick => self.cpus[cpu].tick_stopped = true,
            TickAction::Kick(ilb) => {
                // The idle load balancer is idle (find_new_ilb).
                let at = self.now + self.cost.ipi_latency(true);
                self.queue.push(at, Event::NohzKick { cpu: ilb });
            }
            TickAction::None => {}
        }
        if action != TickAction::StopOwnTick {
            balance_ns = self.sched_rebalance_domains(cpu);
            balance_ns += self.sched_owner_tick_balance(cpu);
        }
        self.charge_softirq(cpu, balance_ns);
        let running = self.cpus[cpu].state == CpuState::Running;
        let resched = if self.cpus[cpu].rt.curr.is_some() {
            self.rt_tick(cpu)
        } else {
            self.cpus[cpu]
                .rq
                .tick_preempts(&self.ents, self.policy.era, &self.policy.tunables)
        };
        if running && resched {
            self.resched_local(cpu);
        }
    }

    /// A tickless CPU leaving idle restarts its tick on the tick grid
    /// (tick_nohz_restart_sched_tick); 4.15+ decays the cpu_load[] ticks it
    /// missed (cpu_load_update_nohz_stop), 2.6.28 left them as they were.
    pub(super) fn restart_tick(&mut self, cpu: usize) {
        if !self.cpus[cpu].tick_stopped {
            return;
        }
        self.cpus[cpu].tick_stopped = false;
        nohz::tick_restart(self, cpu);
        if self.policy.era.rules().nohz_balancer != NohzBalancer::Owner {
            self.decay_missed_load(cpu);
        }
        self.arm_tick(cpu);
    }

    pub(super) fn arm_tick(&mut self, cpu: usize) {
        if !self.cpus[cpu].tick_armed {
            let tick = self.policy.tunables.tick_ns();
            self.cpus[cpu].tick_armed = true;
            self.queue
                .push((self.now / tick + 1) * tick, Event::Tick { cpu });
        }
    }

    /// The ticks a tickless CPU missed, as ticks with no load
    /// (decay_load_missed), up to the last tick boundary.
    pub(crate) fn decay_missed_load(&mut self, cpu: usize) {
        let tick = self.policy.tunables.tick_ns();
        let boundary = self.now / tick * tick;
        let c = &mut self.cpus[cpu];
        while c.load_tick_ns + tick <= boundary {
            if c.cpu_load.cpu_load.iter().all(|&l| l == 0) {
                c.load_tick_ns = boundary;
                break;
            }
            c.cpu_load.tick(0);
            c.load_tick_ns += tick;
        }
    }

    /// A NOHZ IPI reaches `cpu`: 4.15+'s kick (it balances for the tickless
    /// idle CPUs, charged to it), or 2.6.28's nomination (it takes over
    /// idle balancing and its tick runs again).
    pub(crate) fn nohz_kick(&mut self, cpu: usize) {
        if self.policy.era.rules().nohz_balancer == NohzBalancer::Owner {
            if nohz::nominated(self, cpu) {
                self.cpus[cpu].tick_stopped = false;
                self.arm_tick(cpu);
            }
            return;
        }
        let ns = self.sched_idle_balance_others(cpu);
        self.charge_softirq(cpu, ns);
    }
}

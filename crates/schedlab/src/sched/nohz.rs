//! NOHZ idle balancing: idle CPUs stop their tick, and one idle CPU
//! balances on their behalf, as each era does it (`EraRules::nohz_balancer`,
//! `EraRules::tick_stop`).
//!
//! - 2.6.28 (`Owner`, select_nohz_load_balancer, trigger_load_balance,
//!   run_rebalance_domains): the first CPU to go tickless while nobody owns
//!   idle balancing keeps its tick and, on each idle tick, balances for
//!   every CPU in nohz.cpu_mask. A busy tick of a CPU that was tickless
//!   gives up its ownership and, with no owner left, nominates the first
//!   tickless CPU (it re-enters idle and takes the job). When every CPU is
//!   tickless the owner stops too.
//! - 4.15+ (`Kick`, nohz_kick_needed / nohz_balancer_kick,
//!   nohz_idle_balance; v6.5 kick_ilb, _nohz_idle_balance): a CPU stopping
//!   its tick joins nohz.idle_cpus_mask and leaves its LLC's busy count;
//!   it leaves the mask at its first busy tick. A busy tick past
//!   nohz.next_balance kicks the first idle CPU of the mask when its queue
//!   runs two tasks or its LLC has two busy CPUs; the kicked CPU balances
//!   every idle CPU of the mask that is due, then itself.
//!
//! The engine calls these at idle entry, tick restart, each tick and the
//! kick's arrival; it owns the tick timers and charges the time.

use super::balance::{idle_next_balance, rebalance_domains};
use super::env::SchedEnv;
use super::why;
use crate::counters::Counter;
use crate::policy::{NohzBalancer, TickStop};

/// `cpu` goes idle, the idle governor expecting `predicted_ns` of idleness:
/// whether its tick stops (tick_nohz_idle_enter / tick_nohz_idle_stop_tick
/// with the era's balancer bookkeeping).
pub fn idle_enter(env: &mut impl SchedEnv, cpu: usize, predicted_ns: u64) -> bool {
    let rules = env.policy().era.rules();
    if rules.tick_stop == TickStop::PredictedTick && predicted_ns < env.policy().tunables.tick_ns()
    {
        return false;
    }
    let ncpus = env.topology().ncpus();
    let llc = env.topology().cpus[cpu].llc;
    let n = &mut env.state_mut().nohz;
    match rules.nohz_balancer {
        // select_nohz_load_balancer(1): the owner keeps its tick.
        NohzBalancer::Owner => {
            n.idle_cpus.insert(cpu);
            n.in_nohz_recently.insert(cpu);
            if n.idle_cpus.len() == ncpus {
                if n.owner == Some(cpu) {
                    n.owner = None;
                }
                return true;
            }
            match n.owner {
                None => {
                    n.owner = Some(cpu);
                    false
                }
                Some(o) => o != cpu,
            }
        }
        // set_cpu_sd_state_idle and nohz_balance_enter_idle.
        NohzBalancer::Kick | NohzBalancer::KickFromNext => {
            if !n.sd_nohz_idle.contains(cpu) {
                n.sd_nohz_idle.insert(cpu);
                n.llc_nr_busy[llc] -= 1;
            }
            n.idle_cpus.insert(cpu);
            true
        }
    }
}

/// A tickless `cpu` leaves idle and restarts its tick
/// (tick_nohz_restart_sched_tick). 2.6.28 leaves nohz.cpu_mask now; 4.15+
/// stays in the mask until its first busy tick.
pub fn tick_restart(env: &mut impl SchedEnv, cpu: usize) {
    if env.policy().era.rules().nohz_balancer == NohzBalancer::Owner {
        let n = &mut env.state_mut().nohz;
        n.idle_cpus.remove(cpu);
        if n.owner == Some(cpu) {
            n.owner = None;
        }
    }
}

/// What a tick asks of the engine beyond the CPU's own balancing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TickAction {
    None,
    /// Send the nohz kick (4.15+) or the owner's nomination (2.6.28) to this CPU.
    Kick(usize),
    /// 2.6.28: every CPU is tickless; the owner stops its own tick too.
    StopOwnTick,
}

/// The NOHZ part of a tick on `cpu` (trigger_load_balance, before the
/// softirq's balancing runs): 2.6.28's ownership hand-over, 4.15+'s
/// nohz_balance_exit_idle and kick decision.
pub fn tick(env: &mut impl SchedEnv, cpu: usize) -> TickAction {
    let idle_at_tick = env.cpu_curr_idle(cpu);
    let ncpus = env.topology().ncpus();
    match env.policy().era.rules().nohz_balancer {
        NohzBalancer::Owner => {
            let n = &mut env.state_mut().nohz;
            if n.in_nohz_recently.contains(cpu) && !idle_at_tick {
                n.in_nohz_recently.remove(cpu);
                if n.owner == Some(cpu) {
                    n.idle_cpus.remove(cpu);
                    n.owner = None;
                }
                if n.owner.is_none() {
                    if let Some(ilb) = n.idle_cpus.first() {
                        return TickAction::Kick(ilb);
                    }
                }
            }
            if idle_at_tick && n.owner == Some(cpu) && n.idle_cpus.len() == ncpus {
                n.owner = None;
                return TickAction::StopOwnTick;
            }
            TickAction::None
        }
        kick @ (NohzBalancer::Kick | NohzBalancer::KickFromNext) => {
            // rq->idle_balance: an idle CPU's tick kicks nobody.
            if env.cpu_idle(cpu) {
                return TickAction::None;
            }
            let llc = env.topology().cpus[cpu].llc;
            let now = env.now();
            let nr_running = env.rq(cpu).nr_running;
            let n = &mut env.state_mut().nohz;
            // set_cpu_sd_state_busy, nohz_balance_exit_idle.
            if n.sd_nohz_idle.contains(cpu) {
                n.sd_nohz_idle.remove(cpu);
                n.llc_nr_busy[llc] += 1;
            }
            n.idle_cpus.remove(cpu);
            if n.idle_cpus.is_empty() || now < n.next_balance_ns {
                return TickAction::None;
            }
            if nr_running < 2 && n.llc_nr_busy[llc] < 2 {
                return TickAction::None;
            }
            // nohz_balancer_kick / kick_ilb: the next balance a jiffy on,
            // the first idle CPU of the mask kicked unless already kicked.
            let jiffy = env.policy().tunables.tick_ns();
            let n = &mut env.state_mut().nohz;
            n.next_balance_ns = if kick == NohzBalancer::Kick {
                n.next_balance_ns + jiffy
            } else {
                now + jiffy
            };
            let Some(ilb) = first_idle(env, cpu) else {
                return TickAction::None;
            };
            let n = &mut env.state_mut().nohz;
            if n.kicked.contains(ilb) {
                return TickAction::None;
            }
            n.kicked.insert(ilb);
            env.count(Counter::NohzKick);
            TickAction::Kick(ilb)
        }
    }
}

/// find_new_ilb: the first idle CPU of the mask other than the kicker.
fn first_idle(env: &impl SchedEnv, kicker: usize) -> Option<usize> {
    let mask = env.state().nohz.idle_cpus;
    let first = mask.iter().find(|&c| c != kicker && env.cpu_idle(c));
    first
}

/// 2.6.28: the nominated CPU re-enters idle (resched_cpu): with nobody
/// owning idle balancing it takes the job and its tick runs again. Returns
/// whether it did.
pub fn nominated(env: &mut impl SchedEnv, cpu: usize) -> bool {
    if !env.cpu_idle(cpu) {
        return false;
    }
    let ncpus = env.topology().ncpus();
    let n = &mut env.state_mut().nohz;
    if n.owner.is_some() || !n.idle_cpus.contains(cpu) || n.idle_cpus.len() == ncpus {
        return false;
    }
    n.owner = Some(cpu);
    env.count(Counter::NohzOwner);
    true
}

/// After a tick's own balancing on `cpu`: 2.6.28's owner, idle at its
/// tick, balances for the tickless CPUs (run_rebalance_domains). Returns
/// the time it took; 0 for any other CPU or era.
pub fn owner_tick_balance(env: &mut impl SchedEnv, cpu: usize) -> u64 {
    if env.state().nohz.owner == Some(cpu) && env.cpu_curr_idle(cpu) {
        idle_balance_others(env, cpu)
    } else {
        0
    }
}

/// Balancing on behalf of the tickless idle CPUs, on `ilb`: 2.6.28's owner
/// on its idle tick (after its own balance, which the caller ran), 4.15+'s
/// kicked CPU (which also balances itself here, last). Returns the time it
/// took; the caller charges it to `ilb`.
pub fn idle_balance_others(env: &mut impl SchedEnv, ilb: usize) -> u64 {
    why::nohz_balancer(env, Some(ilb));
    let cost = balance_for_tickless(env, ilb);
    why::nohz_balancer(env, None);
    cost
}

/// `idle_balance_others`' walk.
fn balance_for_tickless(env: &mut impl SchedEnv, ilb: usize) -> u64 {
    let rules = env.policy().era.rules();
    let mask = env.state().nohz.idle_cpus;
    let mut cost = 0;
    match rules.nohz_balancer {
        NohzBalancer::Owner => {
            for cpu in mask.iter().filter(|&c| c != ilb) {
                // need_resched(): the owner got work of its own.
                if !env.cpu_idle(ilb) {
                    break;
                }
                cost += rebalance_domains(env, cpu);
            }
        }
        kick => {
            env.state_mut().nohz.kicked.remove(ilb);
            if !env.cpu_idle(ilb) {
                return 0;
            }
            let now = env.now();
            let mut next = u64::MAX;
            // 4.15 walks the mask from its first CPU; 6.5 from the CPU after
            // the kicked one. Either way the kicked CPU balances itself last.
            let start = if kick == NohzBalancer::KickFromNext {
                ilb + 1
            } else {
                0
            };
            let order = mask
                .iter()
                .filter(|&c| c >= start)
                .chain(mask.iter().filter(|&c| c < start));
            for cpu in order.filter(|&c| c != ilb) {
                if !env.cpu_idle(cpu) {
                    continue;
                }
                if !env.cpu_idle(ilb) {
                    break;
                }
                let due = now >= idle_next_balance(env, cpu);
                // The walk brings each idle CPU's blocked load up to date:
                // 6.x's kick carries NOHZ_STATS_KICK (update_nohz_stats for
                // every CPU it visits); 4.15's rebalance_domains updates the
                // CPUs it balances.
                if due || kick == NohzBalancer::KickFromNext {
                    env.update_blocked_averages(cpu);
                }
                if due {
                    env.decay_idle_load(cpu);
                    cost += rebalance_domains(env, cpu);
                }
                next = next.min(idle_next_balance(env, cpu));
            }
            if next != u64::MAX {
                env.state_mut().nohz.next_balance_ns = next;
            }
            // Then the kicked CPU's own balance: always in 4.15
            // (run_rebalance_domains), when due in 6.5 (last in the walk).
            let own_due = kick == NohzBalancer::Kick || now >= idle_next_balance(env, ilb);
            if env.cpu_idle(ilb) && own_due {
                env.update_blocked_averages(ilb);
                cost += rebalance_domains(env, ilb);
                let own = idle_next_balance(env, ilb);
                let n = &mut env.state_mut().nohz;
                n.next_balance_ns = n.next_balance_ns.min(own);
            }
        }
    }
    cost
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Era;
    use crate::sched::testenv::TestEnv;

    /// v2.6.28 select_nohz_load_balancer(1): the first CPU to go tickless
    /// with no owner keeps its tick and owns idle balancing; the next stops
    /// its tick; when the owner gets busy, its first busy tick
    /// (trigger_load_balance) drops the ownership and nominates the first
    /// tickless CPU, which takes the job when it re-enters idle.
    #[test]
    fn owner_is_taken_handed_over_and_given_up_v2_6_28() {
        // phoenix-2008: 16 CPUs; CPU 0 busy, the others idle.
        let mut env = TestEnv::era("phoenix-2008", Era::V2_6_28);
        env.hogs(&[0], 1);
        assert!(!idle_enter(&mut env, 5, 0), "the first keeps its tick");
        assert_eq!(env.state.nohz.owner, Some(5));
        assert!(idle_enter(&mut env, 3, 0), "the second stops it");
        assert_eq!(env.state.nohz.idle_cpus.to_list_string(), "3,5");
        // A busy tick on CPU 0, never tickless: nothing to hand over.
        assert_eq!(tick(&mut env, 0), TickAction::None);
        // The owner gets a task: its next tick gives the job up and
        // nominates the first tickless CPU (3).
        env.hogs(&[5], 1);
        assert_eq!(tick(&mut env, 5), TickAction::Kick(3));
        assert_eq!(env.state.nohz.owner, None);
        assert_eq!(env.state.nohz.idle_cpus.to_list_string(), "3");
        assert!(nominated(&mut env, 3));
        assert_eq!(env.state.nohz.owner, Some(3));
        assert!(env.counted.contains(&Counter::NohzOwner));
        // CPU 3 leaving idle later: tick_nohz_restart_sched_tick's
        // select_nohz_load_balancer(0) takes it out of the mask.
        tick_restart(&mut env, 3);
        assert!(env.state.nohz.idle_cpus.is_empty());
        assert_eq!(env.state.nohz.owner, None);
    }

    /// v2.6.28: when every CPU is tickless the owner stops its tick too
    /// (trigger_load_balance's resched_cpu of itself, then
    /// select_nohz_load_balancer(1) with a full mask).
    #[test]
    fn the_owner_stops_when_every_cpu_is_tickless_v2_6_28() {
        let mut env = TestEnv::era("kvm-2vcpu", Era::V2_6_28);
        assert!(!idle_enter(&mut env, 0, 0));
        assert!(idle_enter(&mut env, 1, 0), "CPU 1 stops its tick");
        assert_eq!(env.state.nohz.owner, Some(0));
        assert_eq!(tick(&mut env, 0), TickAction::StopOwnTick);
        assert_eq!(env.state.nohz.owner, None);
    }

    /// v4.15 nohz_kick_needed: a busy tick kicks the first idle tickless
    /// CPU once nohz.next_balance is due, when its queue runs two tasks or
    /// two CPUs of its LLC are busy; not again while that kick is pending.
    #[test]
    fn a_busy_tick_kicks_the_first_tickless_idle_cpu_v4_15() {
        // desktop-8c: one LLC of 16 CPUs. CPU 0 runs one task, the rest idle.
        let mut env = TestEnv::era("desktop-8c", Era::V4_15);
        env.hogs(&[0], 1);
        for c in 1..16 {
            assert!(
                idle_enter(&mut env, c, 0),
                "4.15 stops the tick on every idle entry"
            );
        }
        // set_cpu_sd_state_idle: 16 - 15 busy CPUs in the LLC.
        assert_eq!(env.state.nohz.llc_nr_busy[0], 1);
        env.state.nohz.next_balance_ns = 0;
        // One task, one busy CPU in the LLC: no kick.
        assert_eq!(tick(&mut env, 0), TickAction::None);
        // A second task on CPU 0: kick CPU 1, and next_balance moves a jiffy
        // past its old value (nohz.next_balance++).
        env.hogs(&[0], 1);
        assert_eq!(tick(&mut env, 0), TickAction::Kick(1));
        let jiffy = env.policy.tunables.tick_ns();
        assert_eq!(env.state.nohz.next_balance_ns, jiffy);
        assert!(env.counted.contains(&Counter::NohzKick));
        // CPU 1 is kicked already (NOHZ_BALANCE_KICK set): no second kick.
        assert_eq!(tick(&mut env, 0), TickAction::None);
        // A tickless CPU that runs a task leaves the mask at its first busy
        // tick (nohz_balance_exit_idle) and counts as busy again.
        env.hogs(&[4], 1);
        env.state.nohz.kicked = crate::cpuset::CpuSet::new();
        env.now += 10 * jiffy;
        assert_eq!(tick(&mut env, 4), TickAction::Kick(1));
        assert!(!env.state.nohz.idle_cpus.contains(4));
        assert_eq!(env.state.nohz.llc_nr_busy[0], 2);
    }

    /// v6.5 menu_select: the tick stops only when the governor expects at
    /// least a tick of idleness; kick_ilb sets next_balance a jiffy from now.
    #[test]
    fn a_short_idle_keeps_the_tick_and_a_kick_looks_from_now_v6_5() {
        let mut env = TestEnv::era("desktop-8c", Era::V6_5);
        let jiffy = env.policy.tunables.tick_ns();
        assert!(!idle_enter(&mut env, 3, jiffy - 1));
        assert!(env.state.nohz.idle_cpus.is_empty());
        assert_eq!(env.state.nohz.llc_nr_busy[0], 16);
        assert!(idle_enter(&mut env, 3, jiffy));
        env.hogs(&[0], 2);
        assert_eq!(tick(&mut env, 0), TickAction::Kick(3));
        assert_eq!(env.state.nohz.next_balance_ns, env.now + jiffy);
    }

    /// _nohz_idle_balance (v6.5): a kick carries NOHZ_STATS_KICK, so the
    /// walk brings every idle CPU's blocked load up to date
    /// (update_nohz_stats), due for a balance or not, and a task that left
    /// one by wakeup stops weighing there; v4.15's nohz_idle_balance
    /// updates only the CPUs it balances (rebalance_domains'
    /// update_blocked_averages).
    #[test]
    fn the_kick_walk_updates_the_idle_cpus_blocked_load_v6_5_not_v4_15() {
        for (era, updated) in [(Era::V6_5, true), (Era::V4_15, false)] {
            let mut env = TestEnv::era("desktop-8c", era);
            let jiffy = env.policy.tunables.tick_ns();
            env.hogs(&[0], 3);
            for c in 1..16 {
                assert!(idle_enter(&mut env, c, jiffy), "{era:?}");
            }
            env.state.nohz.kicked.insert(1);
            let mut left = crate::sched::load::Pelt::default();
            left.load_avg = 500;
            env.rqs[5].pelt.load_avg = 800;
            env.rqs[5].removed.add(&left, 1024);
            // No time has passed: no CPU is due for a balance.
            idle_balance_others(&mut env, 1);
            assert!(env.migrated.is_empty(), "{era:?}");
            let expect = if updated { 300 } else { 800 };
            assert_eq!(env.rqs[5].pelt.load_avg, expect, "{era:?}");
            assert_eq!(env.rqs[5].removed.nr == 0, updated, "{era:?}");
        }
    }

    /// nohz_idle_balance (v4.15): the kicked CPU balances each due idle
    /// tickless CPU, then itself; an idle CPU of the mask pulls from the
    /// overloaded one.
    #[test]
    fn the_kicked_cpu_balances_the_tickless_ones_v4_15() {
        let mut env = TestEnv::era("desktop-8c", Era::V4_15);
        env.hogs(&[0], 3);
        for c in 1..16 {
            idle_enter(&mut env, c, 0);
        }
        env.state.nohz.kicked.insert(1);
        // Every level last balanced at the start: all are due 100 ms later.
        env.now += 100_000_000;
        let cost = idle_balance_others(&mut env, 1);
        assert!(cost > 0, "balancing takes time");
        assert!(!env.state.nohz.kicked.contains(1));
        assert!(
            env.migrated
                .iter()
                .any(|&(_, from, to, _)| from == 0 && to != 0),
            "an idle CPU pulled from CPU 0: {:?}",
            env.migrated
        );
        assert!(env.state.nohz.next_balance_ns > env.now);
    }
}

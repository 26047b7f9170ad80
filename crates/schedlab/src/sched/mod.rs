//! The scheduler, one room per mechanism and, inside it, one file per
//! kernel generation:
//!
//! - [`env`]: the [`SchedEnv`] interface to the machine; [`state`]: the
//!   scheduler's own data beside the run queues.
//! - [`cfs`]: the run queues and each era's pick; [`load`]: PELT and the
//!   cpu_load[] history; [`load_index`]: the loads the older eras' wakeup
//!   and balancing read from that history; [`util`]: utilisation.
//! - [`groups`]: sched-group statistics and capacity, shared by the
//!   fork/exec slow path and the balancer.
//! - [`wakeup`]: select_task_rq (v2_6, v4_15 and later, the slow path).
//! - [`balance`]: periodic, new-idle and active balancing (the shared
//!   steps; find_busiest_group in v2_6, v4_15, v6); [`nohz`]: balancing
//!   for tickless idle CPUs.
//! - [`why`]: decision records, kept when a run asks for them.
//! - [`rt_rq`]: the RT class's queues; [`rt`]: where RT tasks go
//!   (select_task_rq_rt, find_lowest_rq, push and pull).
//!
//! API boundary: the scheduler sees the machine's state only through
//! [`SchedEnv`], which the engine implements (and tests implement on
//! hand-built states, `sched::testenv`). It never sees the event queue,
//! where time comes from, or the cost model; it asks the environment to
//! move a queued task or to push a running one, and the engine carries
//! that out. The engine, in turn, never decides placement or balancing.
//! Static dispatch only: every function is generic over the environment.
//!
//! Inside the scheduler a module imports an item from the module that
//! defines it; the re-exports below are for the layers above
//! (tests/layers.rs fails on an import circle).

pub mod balance;
pub mod cfs;
pub mod env;
pub(crate) mod groups;
pub mod load;
pub(crate) mod load_index;
pub mod nohz;
pub mod rt;
pub mod rt_rq;
pub mod state;
pub(crate) mod util;
pub mod wakeup;
pub mod why;

#[cfg(test)]
pub(crate) mod testenv;

pub use env::{ran_recently, shares_cache, LbWork, SchedEnv};
pub use load_index::instant_load;
pub use state::{
    note_idle_wakeup, note_nr_running, update_avg_idle, wakeup_overlap_preempts, IdleState,
    LbState, SchedState, TaskSched,
};

//! The host's placement of a guest's vCPUs, watched through one cache
//! line's transfer between two CPUs, and the speed it runs one vCPU at,
//! watched through a bare system call. On a virtual machine the host may move
//! the vCPU threads between its cores while the guest runs: on the
//! 2-vCPU Firecracker guest of an EPYC host the transfer measured 60-75 ns
//! for seconds and then 240-260 ns (the two vCPUs on cores of one L3, then
//! of two), flipping every few seconds. A probe across CPUs measures
//! whichever placement it ran in, so calibrate surveys the transfer first,
//! takes the survey's median as the placement to calibrate, and holds every
//! probe on that pair to it: a probe whose transfer, sampled just before
//! and just after it, is off the reference runs again.
//!
//! The host also shares the core a vCPU runs on: on the same guest a
//! getppid() took 130-145 ns most of the time, ~190 ns for seconds at a
//! time, and in one calibration every probe on one CPU ran at twice its
//! usual time (a system call, a copy, a pipe write), which made the
//! simulated one-CPU hackbench 1.6-2x slower than real. The probes on one
//! CPU are held the same way to the survey's quickest system call: sharing
//! only ever slows a vCPU, and the survey's median may be a slow spell
//! (one survey: 138-254 ns, median 190).

use super::probes::LineBounce;
use schedlab::calibration::Placement;
use std::time::Duration;

/// Transfers in one sample (half each way): 3-10 ms at 70-250 ns.
const SAMPLE_TRANSFERS: u64 = 20_000;
/// A sample is in the reference placement or pace within this factor of
/// it (the two placements seen differ by 3.5x, one placement's samples by
/// 1.3x; a system call's usual spells by 1.4x, the slow one seen by 2x).
const TOLERANCE: f64 = 1.5;
/// Runs of a probe before it is kept unheld.
const TRIES: u32 = 5;
/// The wait before trying again (the placements seen lasted seconds).
const PAUSE: Duration = Duration::from_millis(300);

/// System calls in one pace sample: 3-6 ms at 130-300 ns.
const SAMPLE_SYSCALLS: u64 = 20_000;

/// What a hold watches.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Watch {
    /// A cache line's transfer between two CPUs: where the host put them.
    Line(u32, u32),
    /// A bare system call on one CPU: how fast the host runs it.
    Pace(u32),
}

impl Watch {
    fn cpus(self) -> Vec<u32> {
        match self {
            Watch::Line(a, b) => vec![a, b],
            Watch::Pace(a) => vec![a],
        }
    }

    /// The name a failed survey is skipped under.
    pub fn survey_name(self) -> &'static str {
        match self {
            Watch::Line(..) => "placement survey",
            Watch::Pace(_) => "pace survey",
        }
    }

    /// One sample, ns, on a thread of its own: a cache line's transfer
    /// (a LineBounce pins the thread that makes it) or a system call.
    pub fn sample(self) -> Result<f64, String> {
        match self {
            Watch::Line(a, b) => {
                super::on_thread(move || LineBounce::new(a, b)?.batch(SAMPLE_TRANSFERS / 2))
            }
            Watch::Pace(a) => super::on_thread(move || {
                super::probes::pin(a)?;
                super::probes::syscall(SAMPLE_SYSCALLS)
            }),
        }
    }

    /// What the probes are held to: the survey's median placement, or its
    /// quickest pace.
    fn reference(self, survey_ns: &[f64]) -> f64 {
        match self {
            Watch::Line(..) => super::measure::median(survey_ns),
            Watch::Pace(_) => range(survey_ns).0,
        }
    }

    /// `n` samples `gap` apart.
    pub fn survey(self, n: usize, gap: Duration) -> Result<Vec<f64>, String> {
        let mut v = Vec::with_capacity(n);
        for i in 0..n {
            if i > 0 {
                std::thread::sleep(gap);
            }
            v.push(self.sample()?);
        }
        Ok(v)
    }
}

/// Whether sample `x` is in the placement whose transfer is `reference`.
pub(crate) fn within(reference: f64, x: f64) -> bool {
    x <= reference * TOLERANCE && x * TOLERANCE >= reference
}

/// The survey's shortest and longest transfer.
fn range(survey: &[f64]) -> (f64, f64) {
    survey.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &x| {
        (lo.min(x), hi.max(x))
    })
}

/// The probes on one pair of CPUs held to one placement, or on one CPU to
/// one pace.
pub(super) struct Hold {
    pub watch: Watch,
    pub record: Placement,
    /// Samples what is watched (`Watch::sample`; a script in tests).
    pub sampler: Box<dyn FnMut() -> Result<f64, String> + Send>,
    pub pause: Duration,
}

impl Hold {
    pub fn new(watch: Watch, survey_ns: Vec<f64>) -> Hold {
        Hold {
            watch,
            record: Placement {
                cpus: watch.cpus(),
                reference_ns: watch.reference(&survey_ns),
                survey_ns,
                retried: vec![],
                unheld: vec![],
            },
            sampler: Box::new(move || watch.sample()),
            pause: PAUSE,
        }
    }

    /// Whether the probe on `cpus` is one this hold watches.
    pub fn covers(&self, cpus: &[u32]) -> bool {
        cpus == self.record.cpus
    }

    /// Runs `attempt` until the sample just before and just after it is
    /// the reference's, at most TRIES times; records the probe
    /// `name` as retried or, if it never held, unheld (keeping the last
    /// run). A sampler that fails ends the watch: the attempt's own result
    /// is kept, unheld.
    pub fn run<T>(&mut self, name: &str, mut attempt: impl FnMut() -> T) -> T {
        let r = self.record.reference_ns;
        let mut tries = 0;
        loop {
            tries += 1;
            let before = (self.sampler)();
            let out = attempt();
            let after = (self.sampler)();
            let held = match (before, after) {
                (Ok(x), Ok(y)) => within(r, x) && within(r, y),
                _ => {
                    self.record.unheld.push(name.to_string());
                    return out;
                }
            };
            if held || tries == TRIES {
                if tries > 1 {
                    self.record.retried.push(name.to_string());
                }
                if !held {
                    self.record.unheld.push(name.to_string());
                }
                return out;
            }
            std::thread::sleep(self.pause);
        }
    }

    /// One line for the calibrate log on what the survey and the holding
    /// found.
    pub fn summary(&self) -> String {
        let p = &self.record;
        let (lo, hi) = range(&p.survey_ns);
        let (watched, reference, one, varies) = match self.watch {
            Watch::Line(a, b) => (
                format!("a cache line between CPUs {a} and {b}"),
                "the median",
                "one placement",
                "the host moves this machine's CPUs",
            ),
            Watch::Pace(a) => (
                format!("a system call on CPU {a}"),
                "the quickest",
                "one pace",
                "the host shares this CPU's core",
            ),
        };
        let seen = format!(
            "{watched} took {lo:.0}-{hi:.0} ns over {} samples",
            p.survey_ns.len()
        );
        let off = p
            .survey_ns
            .iter()
            .filter(|&&x| !within(p.reference_ns, x))
            .count();
        let survey = if off > 0 {
            format!(
                "{seen}, {off} of them off {reference} ({:.0} ns): {varies}",
                p.reference_ns
            )
        } else {
            format!("{seen}: {one}")
        };
        if p.retried.is_empty() && p.unheld.is_empty() {
            return survey;
        }
        let (changed, real) = match self.watch {
            Watch::Line(..) => (
                "moved",
                "real runs across CPUs will vary with the placement they get",
            ),
            Watch::Pace(_) => ("slowed", "real runs will vary with the pace they get"),
        };
        format!(
            "{survey}; it {changed} during {} probes, run again until it held ({} never did{}); {real}",
            p.retried.len().max(p.unheld.len()),
            p.unheld.len(),
            if p.unheld.is_empty() {
                String::new()
            } else {
                format!(": {}", p.unheld.join(", "))
            }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hold on `watch` whose sampler replays `script` (then fails).
    fn scripted(watch: Watch, survey: Vec<f64>, script: Vec<f64>) -> Hold {
        let mut it = script.into_iter();
        Hold {
            sampler: Box::new(move || it.next().ok_or_else(|| "script ended".to_string())),
            pause: Duration::ZERO,
            ..Hold::new(watch, survey)
        }
    }

    #[test]
    fn a_pace_hold_watches_one_cpu_and_says_the_core_is_shared() {
        // Held to the quickest sample, though most of the survey was slow.
        // 190 is within 1.5x of it, 290 is not: the first run is retried.
        let mut h = scripted(
            Watch::Pace(3),
            vec![190.0, 138.0, 290.0, 195.0, 185.0],
            vec![190.0, 290.0, 139.0, 190.0],
        );
        assert!(h.covers(&[3]) && !h.covers(&[3, 0]) && !h.covers(&[0]));
        assert_eq!(h.record.reference_ns, 138.0);
        let mut runs = 0;
        h.run("syscall", || runs += 1);
        assert_eq!(runs, 2);
        let said = h.summary();
        assert!(
            said.starts_with("a system call on CPU 3 took 138-290 ns over 5 samples, 1 of them off the quickest (138 ns): the host shares this CPU's core"),
            "{said}"
        );
        assert!(
            said.ends_with("; it slowed during 1 probes, run again until it held (0 never did); real runs will vary with the pace they get"),
            "{said}"
        );
    }

    #[test]
    fn the_reference_is_the_surveys_median_placement() {
        let h = Hold::new(Watch::Line(0, 1), vec![70.0, 245.0, 65.0, 72.0, 250.0]);
        assert_eq!(h.record.reference_ns, 72.0);
        assert!(
            h.summary()
                .ends_with("2 of them off the median (72 ns): the host moves this machine's CPUs"),
            "{}",
            h.summary()
        );
        let one = Hold::new(Watch::Line(0, 1), vec![60.0, 75.0, 68.0]);
        assert!(one
            .summary()
            .ends_with("60-75 ns over 3 samples: one placement"));
        assert!(h.covers(&[0, 1]) && !h.covers(&[1, 0]) && !h.covers(&[0]));
    }

    #[test]
    fn a_probe_that_saw_another_placement_runs_again() {
        // Before and after the first run: 70 then 245 (moved during it);
        // the second run is held at 68 and 74.
        let mut h = scripted(
            Watch::Line(0, 1),
            vec![70.0; 5],
            vec![70.0, 245.0, 68.0, 74.0],
        );
        let mut runs = 0;
        let out = h.run("pipe_rt_llc", || {
            runs += 1;
            runs * 10
        });
        assert_eq!((runs, out), (2, 20));
        assert_eq!(h.record.retried, ["pipe_rt_llc"]);
        assert!(h.record.unheld.is_empty());
        let said = h.summary();
        assert!(
            said.contains("70-70 ns over 5 samples: one placement"),
            "{said}"
        );
        assert!(
            said.contains("moved during 1 probes, run again until it held (0 never did)"),
            "{said}"
        );
    }

    #[test]
    fn a_probe_held_at_once_runs_once_and_is_not_listed() {
        let mut h = scripted(
            Watch::Line(0, 1),
            vec![240.0, 250.0, 245.0],
            vec![250.0, 230.0],
        );
        let mut runs = 0;
        h.run("line_bounce_llc", || runs += 1);
        assert_eq!(runs, 1);
        assert!(h.record.retried.is_empty() && h.record.unheld.is_empty());
        assert!(
            h.summary()
                .ends_with("240-250 ns over 3 samples: one placement"),
            "{}",
            h.summary()
        );
    }

    #[test]
    fn a_probe_never_held_keeps_its_last_run_and_says_so() {
        let mut h = scripted(
            Watch::Line(0, 1),
            vec![70.0; 3],
            vec![245.0; 2 * TRIES as usize],
        );
        let mut runs = 0;
        let out = h.run("refill_llc", || {
            runs += 1;
            runs
        });
        assert_eq!(out, TRIES);
        assert_eq!(h.record.retried, ["refill_llc"]);
        assert_eq!(h.record.unheld, ["refill_llc"]);
        assert!(
            h.summary().contains("(1 never did: refill_llc)"),
            "{}",
            h.summary()
        );
    }

    #[test]
    fn a_sampler_that_fails_ends_the_watch_with_the_run_kept() {
        let mut h = scripted(Watch::Line(0, 1), vec![70.0; 3], vec![]);
        let mut runs = 0;
        h.run("oneway_busy_llc", || runs += 1);
        assert_eq!(runs, 1);
        assert_eq!(h.record.unheld, ["oneway_busy_llc"]);
    }
}

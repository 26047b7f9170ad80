//! How long a run will take, said before it runs, and how long is left
//! while it runs.
//!
//! An estimate is only as good as what it is measured from, so it is built
//! from measurements, never from a guess at a workload's event density:
//! [`probe`] runs the start of a point (the caller stops it after a short
//! wall-clock budget, the core has no clock) and counts the events it took
//! to reach its simulated time. A point whose simulated length is known (a
//! duration) is extrapolated to its end; one whose length is set by loop
//! counts is known exactly only if the probe finished it, else the probe's
//! events are a lower bound and the estimate says "at least". Events divided
//! by a measured rate (events per second of one thread or worker: the
//! probe's own, or the last run's) and spread over the parallel workers
//! give the seconds.

use crate::error::Result;
use crate::experiment::{simulate, Point};

/// What running the start of a point measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Probe {
    /// Events simulated.
    pub events: u64,
    /// Simulated time reached.
    pub sim_ns: u64,
    /// The point's simulated length, if known before running (a duration).
    pub end_ns: Option<u64>,
    /// Whether the probe ran the point to its end.
    pub done: bool,
}

/// Runs `point` from its start, a chunk of simulated time at a time, while
/// `more()` says so (it is asked between chunks) or to the point's end.
pub fn probe(point: &Point, more: &mut dyn FnMut() -> bool) -> Result<Probe> {
    let end_ns = point.workload.build()?.duration_ns;
    let (sim, done) = simulate(point, &mut |_| more())?;
    let sim_ns = sim.now();
    let out = sim.finish();
    Ok(Probe {
        events: out.events,
        sim_ns,
        end_ns,
        done,
    })
}

/// A point's events, extrapolated from a probe of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Events {
    pub events: f64,
    /// The point may take more: it ends after a loop count the probe did not reach.
    pub at_least: bool,
}

impl Probe {
    pub fn point_events(&self) -> Events {
        match (self.done, self.end_ns) {
            (true, _) => Events {
                events: self.events as f64,
                at_least: false,
            },
            (false, Some(end)) if self.sim_ns > 0 => Events {
                events: self.events as f64 * end as f64 / self.sim_ns as f64,
                at_least: false,
            },
            _ => Events {
                events: self.events as f64,
                at_least: true,
            },
        }
    }
}

/// Which points to probe: one per (sweep value, variant) pair, the first
/// repeat (repeats differ only in seed), at most `max` of them spread
/// evenly over the pairs. Indices into `points`.
pub fn probe_indices(points: &[Point], max: usize) -> Vec<usize> {
    let firsts: Vec<usize> = (0..points.len())
        .filter(|&i| points[i].repeat == 0)
        .collect();
    if firsts.len() <= max {
        return firsts;
    }
    let max = max.max(1);
    // Evenly spread, always the first and the last (the sweep's ends).
    let mut picked: Vec<usize> = (0..max)
        .map(|k| firsts[k * (firsts.len() - 1) / (max - 1).max(1)])
        .collect();
    picked.dedup();
    picked
}

/// For every point, which of the `probed` points (indices into `points`)
/// stands for it: the probe of its own variant at the nearest sweep value
/// (or the nearest of any variant if its own has none); an index into
/// `probed`, None when nothing was probed.
pub fn nearest_probe(points: &[Point], probed: &[usize]) -> Vec<Option<usize>> {
    points
        .iter()
        .map(|p| {
            (0..probed.len()).min_by_key(|&k| {
                let q = &points[probed[k]];
                (q.variant != p.variant, q.x.abs_diff(p.x), q.x)
            })
        })
        .collect()
}

/// A run's expected wall time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    pub secs: f64,
    /// It could take longer (some point's length was not reached by its probe).
    pub at_least: bool,
}

/// Seconds to run points taking `secs` each (and whether each may take
/// longer) on `parallel` workers: the larger of the total shared evenly and
/// the longest point (a point runs on one worker).
pub fn estimate(secs: &[(f64, bool)], parallel: usize) -> Estimate {
    let workers = parallel.min(secs.len()).max(1) as f64;
    let total: f64 = secs.iter().map(|s| s.0).sum();
    let longest = secs.iter().map(|s| s.0).fold(0.0, f64::max);
    Estimate {
        secs: (total / workers).max(longest),
        at_least: secs.iter().any(|s| s.1),
    }
}

impl Events {
    /// Seconds at `events_per_sec`, and whether it may take longer.
    pub fn at(&self, events_per_sec: f64) -> (f64, bool) {
        (
            self.events / events_per_sec.max(f64::MIN_POSITIVE),
            self.at_least,
        )
    }
}

/// Time left of a run `fraction` done (0..=1) after `elapsed_secs`, at the
/// rate so far; None until there is something to go by.
pub fn time_left(elapsed_secs: f64, fraction: f64) -> Option<f64> {
    (fraction > 0.0 && fraction <= 1.0 && elapsed_secs > 0.0)
        .then(|| elapsed_secs * (1.0 - fraction) / fraction)
}

/// A duration in words, rounded as an estimate deserves: "under a second",
/// "about 40 s", "about 3 min", "about 2 h". Two significant figures below
/// ten units, one above, so the figure does not claim precision it lacks.
pub fn about(secs: f64) -> String {
    if !secs.is_finite() {
        return "a long time".into();
    }
    if secs < 1.0 {
        return "under a second".into();
    }
    let round = |v: f64| -> f64 {
        if v < 10.0 {
            v.round()
        } else {
            let scale = 10f64.powi(v.log10().floor() as i32);
            (v / scale).round() * scale
        }
    };
    if secs < 90.0 {
        format!("about {} s", round(secs))
    } else if secs < 90.0 * 60.0 {
        format!("about {} min", round(secs / 60.0))
    } else {
        format!("about {} h", round(secs / 3600.0))
    }
}

impl Estimate {
    /// "about 40 s", or "at least about 40 s".
    pub fn words(&self) -> String {
        match (self.at_least, self.secs < 1.0) {
            (true, true) => format!("at least {:.1} s", self.secs),
            (true, false) => format!("at least {}", about(self.secs)),
            (false, _) => about(self.secs),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(events: f64) -> Events {
        Events {
            events,
            at_least: false,
        }
    }

    #[test]
    fn a_probe_extrapolates_to_a_known_end_and_is_a_lower_bound_otherwise() {
        let p = Probe {
            events: 1_000,
            sim_ns: 10_000_000,
            end_ns: Some(120_000_000),
            done: false,
        };
        assert_eq!(p.point_events(), ev(12_000.0));
        let done = Probe { done: true, ..p };
        assert_eq!(done.point_events(), ev(1_000.0));
        let loops = Probe { end_ns: None, ..p };
        assert_eq!(
            loops.point_events(),
            Events {
                events: 1_000.0,
                at_least: true
            }
        );
    }

    #[test]
    fn the_estimate_shares_points_over_workers_but_never_splits_one() {
        // 4 points of 2 M events at 1 M events/s: 8 s on one worker, 4 s on two.
        let four: Vec<_> = [ev(2e6); 4].iter().map(|e| e.at(1e6)).collect();
        assert_eq!(estimate(&four, 1).secs, 8.0);
        assert_eq!(estimate(&four, 2).secs, 4.0);
        // More workers than points: each point on its own worker.
        assert_eq!(estimate(&four, 16).secs, 2.0);
        // One long point dominates however many workers.
        let skewed = [(9.0, false), (1.0, false), (1.0, false)];
        assert_eq!(estimate(&skewed, 3).secs, 9.0);
        assert_eq!(estimate(&skewed, 1).secs, 11.0);
        assert_eq!(ev(3e6).at(2e6), (1.5, false));
        let open = [
            ev(1e6).at(1e6),
            Events {
                events: 1e6,
                at_least: true,
            }
            .at(1e6),
        ];
        let e = estimate(&open, 1);
        assert!(e.at_least);
        assert_eq!(e.words(), "at least about 2 s");
        assert!(!estimate(&[], 2).at_least);
        assert_eq!(estimate(&[(0.24, true)], 1).words(), "at least 0.2 s");
    }

    #[test]
    fn time_left_is_the_rate_so_far_applied_to_the_rest() {
        assert_eq!(time_left(10.0, 0.25), Some(30.0));
        assert_eq!(time_left(10.0, 1.0), Some(0.0));
        assert_eq!(time_left(10.0, 0.0), None);
        assert_eq!(time_left(0.0, 0.5), None);
    }

    #[test]
    fn durations_in_words_are_rounded_as_estimates() {
        assert_eq!(about(0.4), "under a second");
        assert_eq!(about(3.4), "about 3 s");
        assert_eq!(about(37.0), "about 40 s");
        assert_eq!(about(89.0), "about 90 s");
        assert_eq!(about(200.0), "about 3 min");
        assert_eq!(about(3000.0), "about 50 min");
        assert_eq!(about(7200.0), "about 2 h");
        assert_eq!(about(f64::INFINITY), "a long time");
    }

    #[test]
    fn probes_cover_every_point_by_variant_and_nearest_sweep_value() {
        let mut exp = crate::presets::get("waweight-netperf-udp-rr").unwrap();
        exp.repeats = 2;
        let points = exp.points().unwrap();
        assert_eq!(points.len(), 20);
        let all = probe_indices(&points, 100);
        assert_eq!(all.len(), 10, "one per sweep value and variant");
        assert!(all.iter().all(|&i| points[i].repeat == 0));
        let few = probe_indices(&points, 3);
        assert_eq!(few.len(), 3);
        assert_eq!(few[0], 0);
        assert_eq!(few[2], *all.last().unwrap());
        // Each point is stood for by its own variant's probe at its sweep value.
        let nearest = nearest_probe(&points, &all);
        for (i, p) in points.iter().enumerate() {
            let q = &points[all[nearest[i].unwrap()]];
            assert_eq!((q.x, q.variant, q.repeat), (p.x, p.variant, 0), "point {i}");
        }
        // With three probes (x = 0, 2 of variant 0 and x = 4 of variant 1),
        // variant 0 at x = 4 takes its own variant's x = 2.
        let nearest = nearest_probe(&points, &few);
        let at = |x: usize, v: usize| {
            let i = points
                .iter()
                .position(|p| p.x == x && p.variant == v)
                .unwrap();
            let q = &points[few[nearest[i].unwrap()]];
            (q.x, q.variant)
        };
        assert_eq!(at(4, 0), (2, 0));
        assert_eq!(at(1, 1), (4, 1));
        assert_eq!(at(0, 1), (4, 1));
        assert!(nearest_probe(&points, &[]).iter().all(|n| n.is_none()));
    }

    #[test]
    fn a_probe_of_a_short_point_runs_it_to_its_end() {
        let exp = crate::presets::get("kvm-pipe-test-pinning").unwrap();
        let points = exp.points().unwrap();
        let full = crate::experiment::run_point(&points[0], &mut |_| true).unwrap();
        let p = probe(&points[0], &mut || true).unwrap();
        assert!(p.done);
        assert_eq!(p.events, full.events);
        let mut chunks = 0;
        let stopped = probe(&points[0], &mut || {
            chunks += 1;
            chunks < 2
        })
        .unwrap();
        assert!(!stopped.done && stopped.events < full.events && stopped.events > 0);
        assert!(stopped.point_events().at_least);
    }
}

//! Repeating a probe until its batches agree: the median of the batches and
//! half their interquartile range.

use std::time::{Duration, Instant};

/// A probe's result, in its own unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stat {
    pub median: f64,
    /// Half the interquartile range of the batches.
    pub spread: f64,
    pub batches: u32,
}

impl Stat {
    pub fn spread_pct(&self) -> f64 {
        if self.median == 0.0 {
            0.0
        } else {
            100.0 * self.spread / self.median.abs()
        }
    }
}

/// How long probes may take: `quick` for tests, else the normal budget.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    pub min_batches: u32,
    pub max_batches: u32,
    pub time: Duration,
    /// Stop once the spread is at most this fraction of the median.
    pub target: f64,
}

impl Budget {
    pub fn normal() -> Budget {
        Budget {
            min_batches: 15,
            max_batches: 301,
            time: Duration::from_millis(1000),
            target: 0.01,
        }
    }

    pub fn quick() -> Budget {
        Budget {
            min_batches: 5,
            max_batches: 31,
            time: Duration::from_millis(100),
            target: 0.05,
        }
    }
}

pub fn median(v: &[f64]) -> f64 {
    quantile(v, 0.5)
}

/// The q-quantile by linear interpolation (v need not be sorted).
pub fn quantile(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let pos = q * (s.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    s[lo] + (s[hi] - s[lo]) * (pos - lo as f64)
}

pub fn summarise(v: &[f64]) -> Stat {
    Stat {
        median: median(v),
        spread: (quantile(v, 0.75) - quantile(v, 0.25)) / 2.0,
        batches: v.len() as u32,
    }
}

/// Runs `batch` (which returns one batch's value) once to warm up, then
/// until the batches agree within the budget's target or its time is up.
pub fn repeat(
    budget: &Budget,
    mut batch: impl FnMut() -> Result<f64, String>,
) -> Result<Stat, String> {
    batch()?;
    let start = Instant::now();
    let mut v = Vec::new();
    loop {
        v.push(batch()?);
        let n = v.len() as u32;
        if n >= budget.min_batches {
            let s = summarise(&v);
            if s.spread <= budget.target * s.median.abs()
                || n >= budget.max_batches
                || start.elapsed() >= budget.time
            {
                return Ok(s);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate() {
        let v = [4.0, 1.0, 3.0, 2.0];
        assert_eq!(median(&v), 2.5);
        assert_eq!(quantile(&v, 0.0), 1.0);
        assert_eq!(quantile(&v, 1.0), 4.0);
        let s = summarise(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!((s.median, s.spread, s.batches), (3.0, 1.0, 5));
    }

    #[test]
    fn repeat_stops_when_batches_agree() {
        let mut n = 0;
        let s = repeat(&Budget::normal(), || {
            n += 1;
            Ok(10.0)
        })
        .unwrap();
        assert_eq!(s.batches, 15);
        assert_eq!(n, 16);
    }
}

//! What a run reports: CPU time by kind, named counters, timing points
//! (marks), and a bounded trace window.

use crate::counters::{Counter, Reason, IDLE_ENTER_PREFIX};
use serde::Serialize;
use std::collections::BTreeMap;

/// Where a CPU's time went. busy + idle + overhead = elapsed, exactly.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct CpuTime {
    /// User work (and cache refill stalls) of tasks.
    pub busy_ns: u64,
    pub idle_ns: u64,
    /// Kernel work: system calls, context switches, wakeups, idle exits,
    /// load balancing.
    pub overhead_ns: u64,
    /// Of `overhead_ns`, what new-idle balancing took.
    pub newidle_balance_ns: u64,
    /// Of `overhead_ns`, what the tick's periodic balancing took.
    pub tick_balance_ns: u64,
    /// Of `overhead_ns`, network receive processing in the NET_RX softirq:
    /// the loopback receive path of the TCP/UDP data a task on this CPU
    /// sent, and of the ACKs its reads sent back.
    pub net_rx_softirq_ns: u64,
}

impl CpuTime {
    pub fn total(&self) -> u64 {
        self.busy_ns + self.idle_ns + self.overhead_ns
    }

    /// Field by field `self + other` (several CPUs' or runs' time).
    pub fn plus(&self, other: &CpuTime) -> CpuTime {
        CpuTime {
            busy_ns: self.busy_ns + other.busy_ns,
            idle_ns: self.idle_ns + other.idle_ns,
            overhead_ns: self.overhead_ns + other.overhead_ns,
            newidle_balance_ns: self.newidle_balance_ns + other.newidle_balance_ns,
            tick_balance_ns: self.tick_balance_ns + other.tick_balance_ns,
            net_rx_softirq_ns: self.net_rx_softirq_ns + other.net_rx_softirq_ns,
        }
    }

    /// Field by field `self - earlier` (the time since a snapshot).
    pub fn since(&self, earlier: &CpuTime) -> CpuTime {
        CpuTime {
            busy_ns: self.busy_ns - earlier.busy_ns,
            idle_ns: self.idle_ns - earlier.idle_ns,
            overhead_ns: self.overhead_ns - earlier.overhead_ns,
            newidle_balance_ns: self.newidle_balance_ns - earlier.newidle_balance_ns,
            tick_balance_ns: self.tick_balance_ns - earlier.tick_balance_ns,
            net_rx_softirq_ns: self.net_rx_softirq_ns - earlier.net_rx_softirq_ns,
        }
    }
}

/// Counters like /proc/schedstat: one slot per [`Counter`] (counting is an
/// array add), and entries per idle state, which the machine names. Names
/// are made only when the counters are read out.
#[derive(Debug, Clone)]
pub struct Counters {
    values: Vec<u64>,
    idle_enter: Vec<u64>,
    idle_names: Vec<String>,
}

impl Counters {
    /// Every counter at zero; `idle_states` names the machine's C-states.
    pub fn new(idle_states: impl IntoIterator<Item = String>) -> Self {
        let idle_names: Vec<String> = idle_states.into_iter().collect();
        Counters {
            values: vec![0; Counter::SLOTS],
            idle_enter: vec![0; idle_names.len()],
            idle_names,
        }
    }

    #[inline]
    pub fn count(&mut self, c: Counter) {
        self.values[c.slot()] += 1;
    }

    #[inline]
    pub fn add(&mut self, c: Counter, n: u64) {
        self.values[c.slot()] += n;
    }

    /// A CPU entered C-state `state` (an index into the machine's states).
    pub fn idle_enter(&mut self, state: usize) {
        if let Some(n) = self.idle_enter.get_mut(state) {
            *n += 1;
        }
    }

    pub fn get(&self, c: Counter) -> u64 {
        self.values[c.slot()]
    }

    /// Non-zero counters by name (`idle.enter.<C-state>` for the idle entries).
    pub fn to_map(&self) -> BTreeMap<String, u64> {
        let typed = Counter::all()
            .into_iter()
            .zip(&self.values)
            .filter(|(_, &v)| v > 0)
            .map(|(c, &v)| (c.to_string(), v));
        let idle = self
            .idle_names
            .iter()
            .zip(&self.idle_enter)
            .filter(|(_, &v)| v > 0)
            .map(|(name, &v)| (format!("{IDLE_ENTER_PREFIX}{name}"), v));
        typed.chain(idle).collect()
    }
}

/// Intervals between consecutive marks of one label by one task, and the
/// marks themselves (up to a cap).
#[derive(Debug, Clone, Serialize)]
pub struct MarkStats {
    pub label: String,
    pub count: u64,
    pub intervals: u64,
    pub interval_sum_ns: u64,
    pub interval_min_ns: u64,
    pub interval_max_ns: u64,
    /// For a timer's slack: the uses that came after the period's end
    /// (recorded as an interval of 0), how late in all and at worst. The
    /// signed slack (rt-app logs it negative) is the intervals' sum less
    /// `overrun_sum_ns`.
    #[serde(skip_serializing_if = "is_zero_u64")]
    pub overruns: u64,
    #[serde(skip_serializing_if = "is_zero_u64")]
    pub overrun_sum_ns: u64,
    #[serde(skip_serializing_if = "is_zero_u64")]
    pub overrun_max_ns: u64,
    /// Log-linear histogram of intervals: bucket (exponent, 16 sub-buckets).
    #[serde(skip)]
    hist: Vec<u64>,
    /// (time, task) of each mark, in time order, up to [`MARK_SERIES_CAP`].
    pub series: Vec<(u64, usize)>,
    pub series_truncated: bool,
    /// Each task's marks in the measured part, by task id (uncapped): what
    /// a rate from time needs ([`TaskMarks`]).
    #[serde(skip)]
    pub by_task: Vec<TaskMarks>,
}

/// One task's marks of one label in the measured part: how many, the
/// first (and the interval that ended at it, when a mark came before it)
/// and the last.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TaskMarks {
    pub count: u64,
    pub first_ns: u64,
    /// The interval ending at the first mark (from a mark in the warm-up).
    pub first_interval_ns: Option<u64>,
    pub last_ns: u64,
}

fn is_zero_u64(v: &u64) -> bool {
    *v == 0
}

pub const MARK_SERIES_CAP: usize = 100_000;
const SUB_BUCKETS: u64 = 16;

fn bucket_of(v: u64) -> usize {
    if v < SUB_BUCKETS {
        return v as usize;
    }
    let exp = 63 - v.leading_zeros() as u64; // >= 4
    let sub = (v >> (exp - 4)) & (SUB_BUCKETS - 1);
    ((exp - 3) * SUB_BUCKETS + sub) as usize
}

fn bucket_floor(b: usize) -> u64 {
    let b = b as u64;
    if b < SUB_BUCKETS {
        return b;
    }
    let exp = b / SUB_BUCKETS + 3;
    let sub = b % SUB_BUCKETS;
    (1 << exp) | (sub << (exp - 4))
}

impl MarkStats {
    pub fn new(label: &str) -> Self {
        MarkStats {
            label: label.to_string(),
            count: 0,
            intervals: 0,
            interval_sum_ns: 0,
            interval_min_ns: u64::MAX,
            interval_max_ns: 0,
            overruns: 0,
            overrun_sum_ns: 0,
            overrun_max_ns: 0,
            hist: vec![0; 64 * SUB_BUCKETS as usize],
            series: Vec::new(),
            series_truncated: false,
            by_task: Vec::new(),
        }
    }

    pub fn record(&mut self, now: u64, task: usize, interval: Option<u64>) {
        self.count += 1;
        if self.series.len() < MARK_SERIES_CAP {
            self.series.push((now, task));
        } else {
            self.series_truncated = true;
        }
        if self.by_task.len() <= task {
            self.by_task.resize(task + 1, TaskMarks::default());
        }
        let t = &mut self.by_task[task];
        if t.count == 0 {
            t.first_ns = now;
            t.first_interval_ns = interval;
        }
        t.count += 1;
        t.last_ns = now;
        if let Some(d) = interval {
            self.intervals += 1;
            self.interval_sum_ns += d;
            self.interval_min_ns = self.interval_min_ns.min(d);
            self.interval_max_ns = self.interval_max_ns.max(d);
            self.hist[bucket_of(d)] += 1;
        }
    }

    /// A timer use `late_ns` after its period ended (the slack recorded
    /// with it was 0).
    pub fn record_overrun(&mut self, late_ns: u64) {
        self.overruns += 1;
        self.overrun_sum_ns += late_ns;
        self.overrun_max_ns = self.overrun_max_ns.max(late_ns);
    }

    /// The mean signed interval, ns: a slack's mean with overruns negative.
    pub fn signed_mean_ns(&self) -> f64 {
        if self.intervals == 0 {
            return 0.0;
        }
        (self.interval_sum_ns as f64 - self.overrun_sum_ns as f64) / self.intervals as f64
    }

    /// The interval below which `pct` percent of intervals fall (to within a
    /// sixteenth of its power of two).
    pub fn percentile_ns(&self, pct: u64) -> u64 {
        self.permille_ns(pct * 10)
    }

    /// As [`Self::percentile_ns`], in thousandths (999: the 99.9th).
    pub fn permille_ns(&self, per_mille: u64) -> u64 {
        if self.intervals == 0 {
            return 0;
        }
        let rank = (self.intervals * per_mille).div_ceil(1000).max(1);
        let mut seen = 0;
        for (b, &n) in self.hist.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return bucket_floor(b)
                    .max(self.interval_min_ns)
                    .min(self.interval_max_ns);
            }
        }
        self.interval_max_ns
    }

    /// How many intervals share the histogram bucket holding the
    /// `per_mille` rank (what schbench prints beside each percentile).
    pub fn samples_at(&self, per_mille: u64) -> u64 {
        samples_at_rank(self.hist.iter().copied(), self.intervals, per_mille)
    }
}

/// The count of the bucket in which the `per_mille` rank of `total` samples
/// falls; 0 when empty.
fn samples_at_rank(counts: impl Iterator<Item = u64>, total: u64, per_mille: u64) -> u64 {
    let rank = (total * per_mille).div_ceil(1000).max(1);
    let mut seen = 0;
    for n in counts {
        seen += n;
        if seen >= rank {
            return n;
        }
    }
    0
}

/// Wakeup latency: from a task's wakeup (try_to_wake_up) to its running
/// again (its context switch in done), in a log-linear histogram of fixed
/// memory: values below 16 ns exactly, then 16 sub-buckets per power of two
/// (each within a sixteenth of its value), up to the simulated-time limit.
/// Empty histograms allocate nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(into = "HistWire", try_from = "HistWire")]
pub struct LatencyHist {
    pub count: u64,
    pub sum_ns: u64,
    pub max_ns: u64,
    /// Counts by bucket: empty, or [`LATENCY_BUCKETS`] long.
    buckets: Vec<u32>,
}

/// Buckets of a [`LatencyHist`]: enough for any latency below 2^40 ns
/// (over 18 minutes, beyond the simulated-time limit).
pub const LATENCY_BUCKETS: usize = 37 * SUB_BUCKETS as usize;

/// A histogram as JSON: the non-empty buckets as (lowest value, count).
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct HistWire {
    count: u64,
    sum_ns: u64,
    max_ns: u64,
    buckets: Vec<(u64, u64)>,
}

impl From<LatencyHist> for HistWire {
    fn from(h: LatencyHist) -> Self {
        HistWire {
            count: h.count,
            sum_ns: h.sum_ns,
            max_ns: h.max_ns,
            buckets: h.nonempty().collect(),
        }
    }
}

impl TryFrom<HistWire> for LatencyHist {
    type Error = String;
    fn try_from(w: HistWire) -> Result<Self, String> {
        let mut h = LatencyHist {
            count: w.count,
            sum_ns: w.sum_ns,
            max_ns: w.max_ns,
            buckets: Vec::new(),
        };
        let mut total = 0u64;
        for (floor, n) in w.buckets {
            let b = bucket_of(floor);
            if b >= LATENCY_BUCKETS || bucket_floor(b) != floor {
                return Err(format!("{floor} ns is not a histogram bucket"));
            }
            h.alloc();
            h.buckets[b] = u32::try_from(n).map_err(|_| "a bucket count is too large")?;
            total += n;
        }
        if total != h.count {
            return Err("histogram buckets do not add up to its count".into());
        }
        Ok(h)
    }
}

impl LatencyHist {
    fn alloc(&mut self) {
        if self.buckets.is_empty() {
            self.buckets = vec![0; LATENCY_BUCKETS];
        }
    }

    pub fn record(&mut self, ns: u64) {
        self.alloc();
        self.count += 1;
        self.sum_ns += ns;
        self.max_ns = self.max_ns.max(ns);
        let b = bucket_of(ns).min(LATENCY_BUCKETS - 1);
        self.buckets[b] += 1;
    }

    /// Adds another histogram's samples to this one.
    pub fn merge(&mut self, other: &LatencyHist) {
        if other.count == 0 {
            return;
        }
        self.alloc();
        self.count += other.count;
        self.sum_ns += other.sum_ns;
        self.max_ns = self.max_ns.max(other.max_ns);
        // Counts of one run fit u32 (the event limit); only merging a
        // hundred repeats of billions could reach the ceiling.
        for (a, b) in self.buckets.iter_mut().zip(&other.buckets) {
            *a = a.saturating_add(*b);
        }
    }

    /// The non-empty buckets as (lowest value in ns, count), ascending.
    pub fn nonempty(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.buckets
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(b, &n)| (bucket_floor(b), n as u64))
    }

    /// A latency at or below which `per_mille` thousandths of the samples
    /// fall: the highest value of the bucket holding that rank, capped at
    /// the maximum (so at most a sixteenth above the exact value); 0 when
    /// empty. 500 is the median, 999 the 99.9th percentile.
    pub fn percentile_ns(&self, per_mille: u64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = (self.count * per_mille).div_ceil(1000).max(1);
        let mut seen = 0;
        for (b, &n) in self.buckets.iter().enumerate() {
            seen += n as u64;
            if seen >= rank {
                let top = bucket_floor(b + 1) - 1;
                return top.min(self.max_ns);
            }
        }
        self.max_ns
    }

    pub fn mean_ns(&self) -> u64 {
        self.sum_ns.checked_div(self.count).unwrap_or(0)
    }

    /// How many samples share the bucket holding the `per_mille` rank.
    pub fn samples_at(&self, per_mille: u64) -> u64 {
        samples_at_rank(
            self.buckets.iter().map(|&n| u64::from(n)),
            self.count,
            per_mille,
        )
    }

    /// The lowest sample, to the histogram's resolution (its bucket's floor).
    pub fn min_ns(&self) -> u64 {
        self.nonempty().next().map_or(0, |(floor, _)| floor)
    }
}

/// One scheduling event in the trace window. Reasons are the placement
/// branch or balancer that decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TraceEvent {
    /// `cpu` switched from `from` to `to` (None: idle).
    Switch {
        t: u64,
        cpu: usize,
        from: Option<usize>,
        to: Option<usize>,
    },
    /// `task` was woken by `waker_cpu` onto `target`, placed by `reason`.
    Wakeup {
        t: u64,
        task: usize,
        waker_cpu: usize,
        target: usize,
        reason: Reason,
    },
    /// `task` moved from `from` to `to` because of `reason`.
    Migrate {
        t: u64,
        task: usize,
        from: usize,
        to: usize,
        reason: Reason,
    },
}

/// The window of simulated time to trace and a cap on its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct TraceWindow {
    pub start_ns: u64,
    pub end_ns: u64,
    pub max_events: usize,
    /// Open the window at the first wakeup at or after `start_ns` instead,
    /// keeping its length: a workload may be quiet at a fixed time.
    #[serde(default)]
    pub from_first_wakeup: bool,
}

/// The trace a run records: the events inside its window, which opens at
/// its start or at the first wakeup after it, up to a maximum count.
#[derive(Debug, Clone, Default)]
pub struct TraceRecorder {
    window: Option<TraceWindow>,
    /// When the window opened (it may wait for a wakeup).
    opened_ns: Option<u64>,
    events: Vec<TraceEvent>,
}

impl TraceRecorder {
    /// Records nothing without a window.
    pub fn new(window: Option<TraceWindow>) -> Self {
        TraceRecorder {
            window,
            opened_ns: None,
            events: Vec::new(),
        }
    }

    /// Keeps `ev`, which happened at `now`, if it falls in the window.
    pub fn record(&mut self, now: u64, ev: TraceEvent) {
        let Some(w) = self.window else {
            return;
        };
        if now < w.start_ns || self.events.len() >= w.max_events {
            return;
        }
        let opened = match self.opened_ns {
            Some(t) => t,
            None if !w.from_first_wakeup => w.start_ns,
            None if matches!(ev, TraceEvent::Wakeup { .. }) => now,
            None => return,
        };
        self.opened_ns = Some(opened);
        if now - opened < w.end_ns - w.start_ns {
            self.events.push(ev);
        }
    }

    pub fn opened_ns(&self) -> Option<u64> {
        self.opened_ns
    }

    pub fn into_events(self) -> Vec<TraceEvent> {
        self.events
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_are_monotone_and_tight() {
        let mut last = 0;
        for v in [0u64, 1, 15, 16, 17, 31, 32, 1000, 1 << 20, u64::MAX >> 1] {
            let b = bucket_of(v);
            assert!(b >= last);
            last = b;
            let floor = bucket_floor(b);
            assert!(floor <= v && v - floor <= v / 16, "{v} -> {b} -> {floor}");
        }
    }

    #[test]
    fn latency_histogram_percentiles_merge_and_round_trip() {
        let mut h = LatencyHist::default();
        assert_eq!(h.percentile_ns(500), 0);
        for d in 1..=1000u64 {
            h.record(d * 1000);
        }
        let p50 = h.percentile_ns(500);
        assert!((500_000..=532_000).contains(&p50), "{p50}");
        let p999 = h.percentile_ns(999);
        assert!((999_000..=1_000_000).contains(&p999), "{p999}");
        assert_eq!(h.max_ns, 1_000_000);
        // Far beyond any simulated latency: the last bucket, not a panic.
        h.record(u64::MAX / 2);
        let mut m = LatencyHist::default();
        m.merge(&h);
        m.merge(&LatencyHist::default());
        assert_eq!(m, h);
        let json = serde_json::to_string(&h).unwrap();
        let back: LatencyHist = serde_json::from_str(&json).unwrap();
        assert_eq!(back, h);
        assert!(serde_json::from_str::<LatencyHist>(
            r#"{"count":1,"sum_ns":9,"max_ns":9,"buckets":[[1000001,1]]}"#
        )
        .is_err());
        assert!(serde_json::from_str::<LatencyHist>(
            r#"{"count":2,"sum_ns":3,"max_ns":3,"buckets":[[3,1]]}"#
        )
        .is_err());
    }

    #[test]
    fn percentiles() {
        let mut m = MarkStats::new("op");
        for d in 1..=100u64 {
            m.record(d, 0, Some(d * 1000));
        }
        assert_eq!(m.interval_max_ns, 100_000);
        let p50 = m.percentile_ns(50);
        assert!((46_000..=50_000).contains(&p50), "{p50}");
        let p99 = m.percentile_ns(99);
        assert!((92_000..=99_000).contains(&p99), "{p99}");
    }
}

//! A sentence or two on the largest difference between two variants, read
//! from the run's counters (never written per preset): where wakeups landed
//! and why, how often load balancing moved tasks, how often CPUs went idle.

use crate::counters::{Cause, Counter, Distance, Level, Sis, IDLE_ENTER_PREFIX};
use crate::experiment::Results;
use std::collections::BTreeMap;

type Counters = BTreeMap<String, u64>;

/// A run's counters read back as types; `idle.enter.*` (named by the
/// machine's C-states) summed apart.
struct Typed {
    counts: Vec<(Counter, u64)>,
    idle_entries: u64,
}

impl Typed {
    fn of(c: &Counters) -> Typed {
        let mut t = Typed {
            counts: Vec::new(),
            idle_entries: 0,
        };
        for (name, &n) in c {
            if name.starts_with(IDLE_ENTER_PREFIX) {
                t.idle_entries += n;
            } else if let Ok(counter) = name.parse::<Counter>() {
                t.counts.push((counter, n));
            }
        }
        t
    }

    fn get(&self, want: Counter) -> u64 {
        self.sum(|c| c == want)
    }

    fn sum(&self, pick: impl Fn(Counter) -> bool) -> u64 {
        self.counts
            .iter()
            .filter(|(c, _)| pick(*c))
            .map(|(_, n)| n)
            .sum()
    }

    /// The total of the counters `level_of` picks, and each level's share,
    /// most first.
    fn by_level(&self, level_of: impl Fn(Counter) -> Option<Level>) -> (u64, Vec<(String, u64)>) {
        let mut levels: BTreeMap<Level, u64> = BTreeMap::new();
        for &(c, n) in &self.counts {
            if let Some(l) = level_of(c).filter(|_| n > 0) {
                *levels.entry(l).or_default() += n;
            }
        }
        let mut levels: Vec<(String, u64)> = levels
            .into_iter()
            .map(|(l, n)| (l.to_string(), n))
            .collect();
        levels.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        (levels.iter().map(|(_, v)| v).sum(), levels)
    }
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// Where a remote wakeup landed, in words.
fn place(d: Distance) -> &'static str {
    match d {
        Distance::Smt => "on the waker's SMT sibling",
        Distance::Llc => "elsewhere in the waker's LLC",
        Distance::OtherLlc => "in another LLC of the waker's node",
        Distance::OtherNode => "on another node",
    }
}

/// What one variant's counters say.
struct Facts<'a> {
    label: &'a str,
    wakeups: u64,
    local_pct: f64,
    ipi_pct: f64,
    affine: (u64, Vec<(String, u64)>),
    balance_moves: (u64, Vec<(String, u64)>),
    idle_entries: u64,
    /// select_idle_sibling skipped its LLC scan (SIS_UTIL saw a busy LLC).
    scan_skipped_pct: f64,
    /// select_idle_sibling found an idle CPU by scanning the LLC.
    scan_found_pct: f64,
    /// Where most remote wakeups landed, seen from the waker, and how many.
    remote_mostly: Option<(&'static str, f64)>,
    /// Periods in which a CPU's RT tasks used up their runtime.
    rt_throttled: u64,
}

impl<'a> Facts<'a> {
    fn of(label: &'a str, c: &Counters) -> Facts<'a> {
        let c = Typed::of(c);
        let local = c.get(Counter::TtwuLocal);
        let wakeups = local + c.get(Counter::TtwuRemote);
        Facts {
            label,
            wakeups,
            local_pct: pct(local, wakeups),
            ipi_pct: pct(c.get(Counter::IpiSent), wakeups),
            affine: c.by_level(|counter| match counter {
                Counter::WakeAffine { level, outcome } if outcome.pulls_to_waker() => Some(level),
                _ => None,
            }),
            balance_moves: c.by_level(|counter| match counter {
                Counter::Migration {
                    cause: Cause::Balance,
                    level,
                } => Some(level),
                _ => None,
            }),
            idle_entries: c.idle_entries,
            scan_skipped_pct: pct(c.get(Counter::Sis(Sis::UtilSkip)), wakeups),
            scan_found_pct: pct(c.get(Counter::Sis(Sis::ScanFound)), wakeups),
            remote_mostly: Distance::ALL
                .into_iter()
                .map(|d| (place(d), c.get(Counter::TtwuRemoteAt(d))))
                .filter(|(_, n)| *n > 0)
                .max_by_key(|(_, n)| *n)
                .map(|(place, n)| (place, pct(n, wakeups))),
            rt_throttled: c.get(Counter::RtThrottled),
        }
    }

    fn affine_clause(&self) -> String {
        let (total, levels) = &self.affine;
        if *total == 0 {
            return String::new();
        }
        let list: Vec<String> = levels
            .iter()
            .take(2)
            .map(|(l, n)| format!("{l} ({n}x)"))
            .collect();
        format!(
            "; wake_affine pulled wakees to the waker's CPU at the {} level{}",
            list.join(" and "),
            if levels.len() > 1 { "s" } else { "" }
        )
    }
}

fn per_1000(n: u64, wakeups: u64) -> f64 {
    if wakeups == 0 {
        n as f64
    } else {
        1000.0 * n as f64 / wakeups as f64
    }
}

/// Sentences on the largest difference between the first two variants (or
/// on the only one), for people reading a result.
pub fn explain(r: &Results) -> String {
    let facts: Vec<Facts> = r
        .variants
        .iter()
        .map(|v| Facts::of(v, r.counters.get(v).unwrap_or(&Counters::new())))
        .collect();
    match facts.as_slice() {
        [] => String::new(),
        [only] => format!(
            "{} woke {:.0}% of wakees on the waker's own CPU{} and sent an IPI for {:.0}% of wakeups.",
            only.label,
            only.local_pct,
            only.affine_clause(),
            only.ipi_pct
        ),
        [a, b, ..] => compare(a, b),
    }
}

/// With three or more variants, a sentence or two on each later variant
/// against the first, in variant order; with one or two, [`explain`]'s.
pub fn explain_each(r: &Results) -> Vec<String> {
    if r.variants.len() < 3 {
        return vec![explain(r)];
    }
    let facts: Vec<Facts> = r
        .variants
        .iter()
        .map(|v| Facts::of(v, r.counters.get(v).unwrap_or(&Counters::new())))
        .collect();
    facts[1..].iter().map(|b| compare(&facts[0], b)).collect()
}

fn compare(a: &Facts, b: &Facts) -> String {
    // RT throttling takes a CPU from its RT tasks for the rest of a period:
    // where one variant throttles and the other does not, that comes first.
    if a.rt_throttled != b.rt_throttled && (a.rt_throttled == 0 || b.rt_throttled == 0) {
        let (hi, lo) = if a.rt_throttled > b.rt_throttled {
            (a, b)
        } else {
            (b, a)
        };
        return format!(
            "{} throttled its RT tasks {} times (a CPU's RT runtime for the period used up), letting fair tasks run; {} never did.",
            hi.label, hi.rt_throttled, lo.label
        );
    }
    let local_gap = (a.local_pct - b.local_pct).abs();
    let (ba, bb) = (
        per_1000(a.balance_moves.0, a.wakeups),
        per_1000(b.balance_moves.0, b.wakeups),
    );
    let balance_gap = (ba - bb).abs() / ba.max(bb).max(1e-9);
    let (ia, ib) = (
        per_1000(a.idle_entries, a.wakeups),
        per_1000(b.idle_entries, b.wakeups),
    );
    let idle_gap = (ia - ib).abs() / ia.max(ib).max(1e-9);
    if local_gap >= 10.0 {
        let (hi, lo) = if a.local_pct > b.local_pct {
            (a, b)
        } else {
            (b, a)
        };
        let far = lo
            .remote_mostly
            .map(|(place, p)| format!(" ({p:.0}% {place})"))
            .unwrap_or_default();
        return format!(
            "{} woke {:.0}% of wakees on the waker's own CPU{}. {} woke {:.0}% of them on another CPU{far}, sending an IPI for {:.0}% of its wakeups.",
            hi.label,
            hi.local_pct,
            hi.affine_clause(),
            lo.label,
            100.0 - lo.local_pct,
            lo.ipi_pct
        );
    }
    let scan_gap = (a.scan_skipped_pct - b.scan_skipped_pct)
        .abs()
        .max((a.scan_found_pct - b.scan_found_pct).abs());
    if scan_gap >= 3.0 && a.scan_skipped_pct.max(b.scan_skipped_pct) < 0.5 {
        // Neither skipped a scan: only what the scans found differs.
        let (hi, lo) = if a.scan_found_pct > b.scan_found_pct {
            (a, b)
        } else {
            (b, a)
        };
        return format!(
            "{} found an idle CPU by scanning its LLC (select_idle_sibling) for {:.0}% of wakeups, {} for {:.0}%.",
            hi.label, hi.scan_found_pct, lo.label, lo.scan_found_pct
        );
    }
    if scan_gap >= 3.0 {
        let (hi, lo) = if a.scan_skipped_pct > b.scan_skipped_pct {
            (a, b)
        } else {
            (b, a)
        };
        return format!(
            "{} skipped select_idle_sibling's scan of a busy LLC for {:.0}% of wakeups and found an idle CPU by scanning for {:.0}%; {} skipped it for {:.0}% and found one for {:.0}%.",
            hi.label, hi.scan_skipped_pct, hi.scan_found_pct, lo.label, lo.scan_skipped_pct, lo.scan_found_pct
        );
    }
    // Balancing explains a difference only when it moves tasks often
    // enough to matter: at least one move per 1000 wakeups.
    if balance_gap >= 0.2 && a.balance_moves.0.max(b.balance_moves.0) >= 10 && ba.max(bb) >= 1.0 {
        let (hi, lo) = if ba > bb { (a, b) } else { (b, a) };
        let level = hi
            .balance_moves
            .1
            .first()
            .map(|(l, _)| format!(", mostly at the {l} level"))
            .unwrap_or_default();
        return format!(
            "{} moved tasks by load balancing {} times{level}; {} only {} times. Wakeups landed alike ({:.0}% and {:.0}% on the waker's CPU).",
            hi.label, hi.balance_moves.0, lo.label, lo.balance_moves.0, a.local_pct, b.local_pct
        );
    }
    if idle_gap >= 0.2 && a.idle_entries.max(b.idle_entries) >= 10 {
        let (hi, lo) = if ia > ib { (a, b) } else { (b, a) };
        return format!(
            "{} let CPUs go idle {:.0} times per 1000 wakeups, {} {:.0} times: each idle exit is paid on the next wakeup.",
            hi.label, per_1000(hi.idle_entries, hi.wakeups), lo.label, per_1000(lo.idle_entries, lo.wakeups)
        );
    }
    format!(
        "{} and {} placed wakeups alike ({:.0}% and {:.0}% on the waker's CPU) and balanced alike; no placement counter differs by much.",
        a.label, b.label, a.local_pct, b.local_pct
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::run_all;
    use crate::presets;

    fn explained(edit: impl FnOnce(&mut crate::experiment::Experiment)) -> String {
        let mut exp = presets::get("retune-lat-ctx").unwrap();
        edit(&mut exp);
        explain(&run_all(&exp, &mut |_, _| true).unwrap())
    }

    #[test]
    fn the_retune_win_is_told_as_wakeup_placement() {
        let s = explained(|_| {});
        let local: u32 = s
            .strip_prefix("2.6.28 woke ")
            .and_then(|r| r.split('%').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{s}"));
        assert!(local >= 90, "{s}");
        assert!(
            s.contains("% of wakees on the waker's own CPU; wake_affine pulled"),
            "{s}"
        );
        assert!(
            s.contains("2.6.27 woke 100% of them on another CPU (100% on another node), sending an IPI for 100%"),
            "{s}"
        );
    }

    #[test]
    fn turning_on_node_wake_affine_in_a_changes_the_sentence() {
        let before = explained(|_| {});
        let after = explained(|e| {
            e.policy = serde_json::from_str(
                r#"{"era":"2.6.27","levels":{"NODE":{"flags":{"WAKE_AFFINE":true}}}}"#,
            )
            .unwrap();
        });
        assert_ne!(before, after);
        // wake_affine may now pull across the node, so 2.6.27 no longer
        // sends its wakees to another node; what is left is placement
        // within the LLC, balancing or idling (2.6.27's WAKEUP_OVERLAP
        // preempts the waker on a sync wakeup pulled to its CPU).
        assert!(before.contains("on another node"), "{before}");
        assert!(!after.contains("on another node"), "{after}");
        assert!(
            [
                "alike",
                "balancing",
                "go idle",
                "elsewhere in the waker's LLC"
            ]
            .iter()
            .any(|s| after.contains(s)),
            "{after}"
        );
    }

    /// Each era's own ping-pong on the one-LLC desktop: every counter it writes reads back as a
    /// type (wake_affine outcomes only of that era's kinds), and its
    /// explanation names wake_affine's pulls, which decided.
    #[test]
    fn every_era_writes_what_explain_reads_and_is_explained_by_it() {
        use crate::counters::{Counter, IDLE_ENTER_PREFIX};
        use crate::policy::Era;
        for era in Era::ALL {
            let mut exp = presets::get("retune-lat-ctx").unwrap();
            // One LLC, so every era's wake_affine applies to the pair.
            exp.machine = serde_json::from_str(r#""desktop-8c""#).unwrap();
            exp.policy = crate::policy::PolicySpec::era(era);
            exp.variants.truncate(1);
            exp.variants[0].label = era.to_string();
            let r = run_all(&exp, &mut |_, _| true).unwrap();
            let counters = &r.counters[&era.to_string()];
            let mut pulls = 0;
            for (name, n) in counters {
                if name.starts_with(IDLE_ENTER_PREFIX) {
                    continue;
                }
                let c: Counter = name.parse().unwrap_or_else(|e| panic!("{era}: {e}"));
                if let Counter::WakeAffine { outcome, .. } = c {
                    assert!(outcome.written_by(era), "{era} wrote {name}");
                    if outcome.pulls_to_waker() {
                        pulls += n;
                    }
                }
            }
            assert!(pulls > 0, "{era}: no wake_affine pull in {counters:?}");
            let s = explain(&r);
            assert!(s.contains("wake_affine pulled wakees"), "{era}: {s}");
        }
    }

    /// Results with only counters, for the sentences that need big runs.
    fn counters(a: &[(&str, u64)], b: &[(&str, u64)]) -> Results {
        let map = |c: &[(&str, u64)]| c.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        Results {
            experiment: "synthetic".into(),
            metric: crate::workload::bench::Benchmark::default_of("hackbench")
                .unwrap()
                .metric(),
            variants: vec!["A".into(), "B".into()],
            repeats: 1,
            rows: Vec::new(),
            counters: [("A".to_string(), map(a)), ("B".to_string(), map(b))].into(),
        }
    }

    #[test]
    fn a_skipped_llc_scan_and_balancing_moves_are_told_when_placement_is_alike() {
        let wake = [("ttwu.local", 400), ("ttwu.remote", 600)];
        let scan = |skip: u64, found: u64| {
            let mut c = wake.to_vec();
            c.extend([("sis.util_skip", skip), ("sis.scan_found", found)]);
            c
        };
        let s = explain(&counters(&scan(0, 100), &scan(120, 90)));
        assert_eq!(
            s,
            "B skipped select_idle_sibling's scan of a busy LLC for 12% of wakeups and found an idle CPU by scanning for 9%; A skipped it for 0% and found one for 10%."
        );
        // Neither skips: only the scans' finds are told.
        let s = explain(&counters(&scan(0, 130), &scan(0, 90)));
        assert_eq!(
            s,
            "A found an idle CPU by scanning its LLC (select_idle_sibling) for 13% of wakeups, B for 9%."
        );
        let mut moves = wake.to_vec();
        moves.push(("migrations.balance.MC", 300));
        let s = explain(&counters(&moves, &wake));
        assert!(s.starts_with("A moved tasks by load balancing 300 times, mostly at the MC level; B only 0 times."), "{s}");
        // 18 moves against 11 over 500,000 wakeups are not a reason.
        let many = [("ttwu.local", 200_000), ("ttwu.remote", 300_000)];
        let with = |n| {
            let mut c = many.to_vec();
            c.push(("migrations.balance.MC", n));
            c
        };
        let s = explain(&counters(&with(18), &with(11)));
        assert!(s.starts_with("A and B placed wakeups alike"), "{s}");
    }

    #[test]
    fn rt_throttling_in_one_variant_only_is_told_first() {
        let wake = [("ttwu.local", 400), ("ttwu.remote", 600)];
        let mut throttled = wake.to_vec();
        throttled.push(("rt.throttled", 2));
        let s = explain(&counters(&wake, &throttled));
        assert!(s.starts_with("B throttled its RT tasks 2 times"), "{s}");
        assert!(s.contains("A never did"), "{s}");
        assert!(
            explain(&counters(&throttled, &throttled)).starts_with("A and B placed wakeups alike")
        );
    }

    #[test]
    fn each_later_variant_is_explained_against_the_first() {
        let mut exp = presets::get("retune-lat-ctx").unwrap();
        let mut c = exp.variants[0].clone();
        c.label = "C".into();
        exp.variants.push(c);
        let r = run_all(&exp, &mut |_, _| true).unwrap();
        let each = explain_each(&r);
        assert_eq!(each.len(), 2);
        let (a, b) = (&r.variants[0], &r.variants[1]);
        assert!(
            each[0].contains(a.as_str()) && each[0].contains(b.as_str()),
            "{}",
            each[0]
        );
        assert_eq!(each[0], explain(&r), "B against A is what explain says");
        assert!(
            each[1].starts_with(&format!("{a} and C placed wakeups alike")),
            "{}",
            each[1]
        );
        exp.variants.pop();
        let r = run_all(&exp, &mut |_, _| true).unwrap();
        assert_eq!(explain_each(&r), vec![explain(&r)]);
    }
}

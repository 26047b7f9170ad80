//! The figures a recording states by task group (the comm, a per-CPU
//! kernel thread's without its CPU), in one table shape so that a
//! recording and a replay are read with one tool.

use super::timeline::Recording;
use crate::engine::stats::LatencyHist;
use crate::engine::RunOutput;
use std::fmt::Write;

/// One group's figures.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Group {
    pub name: String,
    pub tasks: u64,
    pub cpu_ns: u64,
    pub wakeups: u64,
    /// Voluntary (slept) and involuntary (preempted) switches out.
    pub switches: u64,
    pub migrations: u64,
    /// Wakeup to running.
    pub wakeup_latency: LatencyHist,
    /// Time runnable after a preemption (a recording's only: None for a run).
    pub preempted_wait_ns: Option<u64>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figures {
    /// By CPU time, largest first.
    pub groups: Vec<Group>,
    pub cpu_idle_ns: Vec<u64>,
    pub length_ns: u64,
}

/// A task's group: its comm, without a per-CPU kernel thread's `/N...`.
pub fn group_of(comm: &str) -> &str {
    match comm.split_once('/') {
        Some((name, _)) if super::workload::per_cpu_kthread(comm).is_some() => name,
        _ => comm,
    }
}

/// The group named `name` in `groups`, made if new.
fn group<'a>(groups: &'a mut Vec<Group>, name: &str) -> &'a mut Group {
    match groups.iter().position(|g| g.name == name) {
        Some(i) => &mut groups[i],
        None => {
            groups.push(Group {
                name: name.to_string(),
                ..Group::default()
            });
            groups.last_mut().expect("pushed")
        }
    }
}

/// A replayed task's comm: its workload name without `-tid` and `.n`
/// ([`super::workload::task_name`]).
pub fn comm_of_task_name(name: &str) -> &str {
    let base = match name.rsplit_once('.') {
        Some((b, n)) if !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()) => b,
        _ => name,
    };
    match base.rsplit_once('-') {
        Some((comm, tid)) if !tid.is_empty() && tid.bytes().all(|c| c.is_ascii_digit()) => comm,
        _ => base,
    }
}

fn sorted(mut groups: Vec<Group>) -> Vec<Group> {
    groups.sort_by(|a, b| b.cpu_ns.cmp(&a.cpu_ns).then(a.name.cmp(&b.name)));
    groups
}

impl Figures {
    pub fn of_recording(rec: &Recording) -> Figures {
        let mut groups: Vec<Group> = Vec::new();
        for t in &rec.tasks {
            let g = group(&mut groups, group_of(&t.comm));
            let f = &t.figures;
            g.tasks += 1;
            g.cpu_ns += f.cpu_ns;
            g.wakeups += f.wakeups;
            g.switches += f.voluntary_switches + f.preemptions;
            g.migrations += f.migrations;
            g.wakeup_latency.merge(&f.wakeup_latency);
            *g.preempted_wait_ns.get_or_insert(0) += f.preempted_wait_ns;
        }
        Figures {
            groups: sorted(groups),
            cpu_idle_ns: rec.cpu_idle_ns.clone(),
            length_ns: rec.length_ns,
        }
    }

    /// A simulated run's figures, its tasks grouped as a replay names
    /// them. Its preempted waiting is not measured (shown as `-`).
    pub fn of_run(out: &RunOutput) -> Figures {
        let mut groups: Vec<Group> = Vec::new();
        for t in &out.tasks {
            let g = group(&mut groups, group_of(comm_of_task_name(&t.name)));
            g.tasks += 1;
            g.cpu_ns += t.sum_exec_ns;
            g.wakeups += t.wakeup_latency.count + t.timer_latency.count;
            g.switches += t.switches;
            g.migrations += t.migrations;
            g.wakeup_latency.merge(&t.wakeup_latency);
            g.wakeup_latency.merge(&t.timer_latency);
        }
        Figures {
            groups: sorted(groups),
            cpu_idle_ns: out.cpu_time.iter().map(|c| c.idle_ns).collect(),
            length_ns: out.end_ns,
        }
    }

    /// One line on what the figures hold: the task count, the length, and
    /// the largest groups by CPU time (the page's notice after an import).
    pub fn summary(&self) -> String {
        const SHOWN: usize = 4;
        let tasks: u64 = self.groups.iter().map(|g| g.tasks).sum();
        let mut line = format!(
            "{tasks} task{} in {} group{} over {:.1} ms",
            if tasks == 1 { "" } else { "s" },
            self.groups.len(),
            if self.groups.len() == 1 { "" } else { "s" },
            self.length_ns as f64 / 1e6
        );
        for (i, g) in self.groups.iter().take(SHOWN).enumerate() {
            let sep = if i == 0 { ": " } else { ", " };
            let cpu_ms = g.cpu_ns as f64 / 1e6;
            let _ = write!(line, "{sep}{} x{} ({cpu_ms:.1} ms CPU)", g.name, g.tasks);
        }
        if self.groups.len() > SHOWN {
            let _ = write!(line, ", and {} more", self.groups.len() - SHOWN);
        }
        line
    }

    /// The table `schedlab trace stats` prints.
    pub fn table(&self) -> String {
        let ms = |ns: u64| format!("{:.3}", ns as f64 / 1e6);
        let us = |ns: u64| format!("{:.1}", ns as f64 / 1e3);
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{:<20} {:>6} {:>11} {:>8} {:>8} {:>6} {:>9} {:>9} {:>10} {:>12}",
            "group",
            "tasks",
            "cpu ms",
            "wakeups",
            "switches",
            "migr",
            "lat p50us",
            "lat p99us",
            "lat max us",
            "preempt ms"
        );
        for g in &self.groups {
            let l = &g.wakeup_latency;
            let _ = writeln!(
                out,
                "{:<20} {:>6} {:>11} {:>8} {:>8} {:>6} {:>9} {:>9} {:>10} {:>12}",
                truncate(&g.name, 20),
                g.tasks,
                ms(g.cpu_ns),
                g.wakeups,
                g.switches,
                g.migrations,
                us(l.percentile_ns(500)),
                us(l.percentile_ns(990)),
                us(l.max_ns),
                g.preempted_wait_ns.map_or("-".into(), ms)
            );
        }
        let idle: Vec<String> = self.cpu_idle_ns.iter().map(|&n| ms(n)).collect();
        let _ = writeln!(
            out,
            "length {} ms; idle per CPU (ms): {}",
            ms(self.length_ns),
            idle.join(" ")
        );
        out
    }
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n - 1).chain(['~']).collect()
    }
}

/// The Kolmogorov-Smirnov distance between two latency distributions: the
/// largest gap between their cumulative fractions, 0 (alike) to 1 (apart).
/// Both histograms share their buckets, so the gap is read at each floor.
pub fn ks_distance(a: &LatencyHist, b: &LatencyHist) -> f64 {
    if a.count == 0 || b.count == 0 {
        return if a.count == b.count { 0.0 } else { 1.0 };
    }
    let mut floors: Vec<u64> = a.nonempty().chain(b.nonempty()).map(|(f, _)| f).collect();
    floors.sort_unstable();
    floors.dedup();
    let cdf = |h: &LatencyHist| {
        let mut seen = 0;
        let counts: Vec<(u64, u64)> = h.nonempty().collect();
        let mut i = 0;
        floors
            .iter()
            .map(|&f| {
                while i < counts.len() && counts[i].0 <= f {
                    seen += counts[i].1;
                    i += 1;
                }
                seen as f64 / h.count as f64
            })
            .collect::<Vec<f64>>()
    };
    cdf(a)
        .iter()
        .zip(cdf(b))
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// A recording and its replay side by side, group by group, with how far
/// apart they are: CPU time (the replay's input: it should match), counts
/// as replay/recording, the latency distributions by their KS distance.
pub fn compare(recorded: &Figures, replayed: &Figures) -> String {
    let ms = |ns: u64| format!("{:.2}", ns as f64 / 1e6);
    let us = |ns: u64| format!("{:.1}", ns as f64 / 1e3);
    let ratio = |a: u64, b: u64| {
        if a == 0 {
            "-".to_string()
        } else {
            format!("{:.2}", b as f64 / a as f64)
        }
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<18} {:>17} {:>13} {:>13} {:>11} {:>15} {:>15} {:>5}",
        "group (rec | sim)",
        "cpu ms",
        "wakeups",
        "switches",
        "migr",
        "lat p50 us",
        "lat p99 us",
        "KS"
    );
    let empty = Group::default();
    for r in &recorded.groups {
        let s = replayed
            .groups
            .iter()
            .find(|g| g.name == r.name)
            .unwrap_or(&empty);
        let pair = |a: String, b: String, w: usize| format!("{:>w$}", format!("{a} | {b}"));
        let (rl, sl) = (&r.wakeup_latency, &s.wakeup_latency);
        let _ = writeln!(
            out,
            "{:<18} {} {} {} {} {} {} {:>5.2}",
            truncate(&r.name, 18),
            pair(ms(r.cpu_ns), ms(s.cpu_ns), 17),
            pair(r.wakeups.to_string(), s.wakeups.to_string(), 13),
            pair(r.switches.to_string(), s.switches.to_string(), 13),
            pair(r.migrations.to_string(), s.migrations.to_string(), 11),
            pair(us(rl.percentile_ns(500)), us(sl.percentile_ns(500)), 15),
            pair(us(rl.percentile_ns(990)), us(sl.percentile_ns(990)), 15),
            ks_distance(rl, sl)
        );
    }
    let total = |f: &Figures, pick: fn(&Group) -> u64| f.groups.iter().map(pick).sum::<u64>();
    let mut all_rec = LatencyHist::default();
    let mut all_sim = LatencyHist::default();
    for g in &recorded.groups {
        all_rec.merge(&g.wakeup_latency);
    }
    for g in &replayed.groups {
        all_sim.merge(&g.wakeup_latency);
    }
    let idle = |f: &Figures| f.cpu_idle_ns.iter().sum::<u64>();
    let _ = writeln!(
        out,
        "replay/recording: cpu time {}, wakeups {}, switches {}, migrations {}, length {} ({} | {} ms), idle {}; wakeup latency KS distance {:.2} (p50 {} | {} us, p99 {} | {} us)",
        ratio(total(recorded, |g| g.cpu_ns), total(replayed, |g| g.cpu_ns)),
        ratio(total(recorded, |g| g.wakeups), total(replayed, |g| g.wakeups)),
        ratio(total(recorded, |g| g.switches), total(replayed, |g| g.switches)),
        ratio(total(recorded, |g| g.migrations), total(replayed, |g| g.migrations)),
        ratio(recorded.length_ns, replayed.length_ns),
        ms(recorded.length_ns),
        ms(replayed.length_ns),
        ratio(idle(recorded), idle(replayed)),
        ks_distance(&all_rec, &all_sim),
        us(all_rec.percentile_ns(500)),
        us(all_sim.percentile_ns(500)),
        us(all_rec.percentile_ns(990)),
        us(all_sim.percentile_ns(990)),
    );
    out
}

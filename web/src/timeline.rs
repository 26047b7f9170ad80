//! The per-CPU timeline of a run's traced window: which task ran where,
//! with wakeups and migrations marked and coloured by the branch or
//! balancer that placed them. One block per variant, stacked.

use schedlab::engine::stats::TraceEvent;
use schedlab::experiment::Trace;
use std::collections::BTreeMap;
use yew::prelude::*;

/// What happened on one CPU in the window.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Lane {
    pub cpu: usize,
    /// (start, end, task), in time order, not overlapping.
    pub slices: Vec<(u64, u64, usize)>,
    /// (time, "wakeup" | "migrate", reason)
    pub marks: Vec<(u64, &'static str, String)>,
}

fn lane(lanes: &mut BTreeMap<usize, Lane>, cpu: usize) -> &mut Lane {
    lanes.entry(cpu).or_insert_with(|| Lane {
        cpu,
        ..Lane::default()
    })
}

/// The lanes of the CPUs that did anything, in CPU order.
pub fn lanes(trace: &Trace) -> Vec<Lane> {
    let mut lanes: BTreeMap<usize, Lane> = BTreeMap::new();
    let mut running: BTreeMap<usize, (usize, u64)> = BTreeMap::new();
    let mut seen: Vec<usize> = Vec::new();
    for ev in &trace.events {
        match ev {
            TraceEvent::Switch { t, cpu, from, to } => {
                // Before its first switch, a CPU ran `from` since the window opened.
                let current = running.remove(cpu).or_else(|| {
                    (!seen.contains(cpu))
                        .then_some(*from)
                        .flatten()
                        .map(|task| (task, trace.start_ns))
                });
                seen.push(*cpu);
                if let Some((task, since)) = current {
                    lane(&mut lanes, *cpu).slices.push((since, *t, task));
                }
                if let Some(task) = to {
                    running.insert(*cpu, (*task, *t));
                    lane(&mut lanes, *cpu);
                }
            }
            TraceEvent::Wakeup {
                t, target, reason, ..
            } => {
                lane(&mut lanes, *target)
                    .marks
                    .push((*t, "wakeup", reason.to_string()));
            }
            TraceEvent::Migrate { t, to, reason, .. } => {
                lane(&mut lanes, *to)
                    .marks
                    .push((*t, "migrate", reason.to_string()));
            }
        }
    }
    for (cpu, (task, since)) in running {
        lane(&mut lanes, cpu)
            .slices
            .push((since, trace.end_ns.max(since), task));
    }
    lanes.into_values().collect()
}

const TASK_COLORS: [&str; 8] = [
    "#7aa6e8", "#f0a36f", "#7fcf9f", "#c49be0", "#e8c96f", "#6fd0d8", "#e88fa8", "#a8b4c4",
];
const REASON_COLORS: [&str; 6] = [
    "#c0392b", "#1f6f3f", "#6c3483", "#b9770e", "#1a5276", "#555555",
];

#[derive(Properties, PartialEq)]
pub struct Props {
    /// (variant label, its traced window)
    pub traces: Vec<(String, Trace)>,
}

#[function_component]
pub fn Timeline(props: &Props) -> Html {
    // One colour per reason across all variants, so A and B compare.
    let mut reasons: Vec<String> = Vec::new();
    let all_lanes: Vec<Vec<Lane>> = props.traces.iter().map(|(_, t)| lanes(t)).collect();
    for l in all_lanes.iter().flatten() {
        for (_, _, r) in &l.marks {
            if !reasons.contains(r) {
                reasons.push(r.clone());
            }
        }
    }
    let color_of = |r: &str| {
        let i = reasons.iter().position(|x| x == r).unwrap_or(0);
        REASON_COLORS[i % REASON_COLORS.len()]
    };
    const W: f64 = 1000.0;
    const LEFT: f64 = 56.0;
    const ROW: f64 = 18.0;
    let blocks = props.traces.iter().zip(&all_lanes).map(|((label, trace), lanes)| {
        let span = (trace.end_ns.saturating_sub(trace.start_ns)).max(1) as f64;
        let x = |t: u64| LEFT + (t.saturating_sub(trace.start_ns)) as f64 / span * (W - LEFT - 8.0);
        let height = ROW * lanes.len().max(1) as f64 + 22.0;
        let rows = lanes.iter().enumerate().map(|(row, lane)| {
            let y = 4.0 + row as f64 * ROW;
            let slices = lane.slices.iter().map(|&(a, b, task)| {
                let name = trace.tasks.get(task).cloned().unwrap_or_else(|| format!("task {task}"));
                html! {
                    <rect class="slice" x={format!("{:.1}", x(a))} y={format!("{:.1}", y)}
                        width={format!("{:.2}", (x(b) - x(a)).max(0.5))} height={format!("{}", ROW - 5.0)}
                        fill={TASK_COLORS[task % TASK_COLORS.len()]}>
                        <title>{ format!("{name} on CPU {}: {:.1}-{:.1} us", lane.cpu, (a - trace.start_ns) as f64 / 1e3, (b - trace.start_ns) as f64 / 1e3) }</title>
                    </rect>
                }
            });
            let marks = lane.marks.iter().map(|(t, kind, reason)| {
                let (cx, top) = (x(*t), y - 2.0);
                let points = if *kind == "wakeup" {
                    format!("{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}", cx - 3.5, top, cx + 3.5, top, cx, top + 6.0)
                } else {
                    format!("{:.1},{:.1} {:.1},{:.1} {:.1},{:.1} {:.1},{:.1}", cx, top - 1.0, cx + 4.0, top + 3.0, cx, top + 7.0, cx - 4.0, top + 3.0)
                };
                html! {
                    <polygon class={*kind} {points} fill={color_of(reason)}>
                        <title>{ format!("{kind} on CPU {}: {reason}", lane.cpu) }</title>
                    </polygon>
                }
            });
            html! {
                <g>
                    <text x="4" y={format!("{:.1}", y + ROW - 8.0)} class="lane-label">{ format!("CPU {}", lane.cpu) }</text>
                    { for slices }
                    { for marks }
                </g>
            }
        });
        html! {
            <figure class="timeline-block" data-variant-label={label.clone()}>
                <figcaption>{ format!("{label}: {:.0} us from {:.3} ms", span / 1e3, trace.start_ns as f64 / 1e6) }</figcaption>
                if lanes.is_empty() {
                    <p class="hint">{ "Nothing was scheduled in the traced window." }</p>
                } else {
                    <svg viewBox={format!("0 0 {W} {height}")} role="img" aria-label={format!("per-CPU timeline of {label}")}>
                        { for rows }
                    </svg>
                }
            </figure>
        }
    });
    html! {
        <div class="timeline" id="timeline">
            { for blocks }
            <p class="legend">
                <span>{ "▼ wakeup ◆ migration, coloured by what placed them: " }</span>
                { for reasons.iter().map(|r| html! { <span class="reason"><i style={format!("background:{}", color_of(r))}></i>{ r.clone() }</span> }) }
            </p>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_of_a_real_trace_are_ordered_and_never_overlap() {
        let exp = schedlab::presets::get("kvm-pipe-test-pinning").unwrap();
        let point = &exp.points().unwrap()[1];
        let outcome = schedlab::experiment::run_point(point, &mut |_| true).unwrap();
        let lanes = lanes(&outcome.trace);
        assert_eq!(lanes.len(), 2, "the free pair uses both vCPUs");
        for lane in &lanes {
            assert!(!lane.slices.is_empty() && !lane.marks.is_empty());
            for w in lane.slices.windows(2) {
                assert!(w[0].1 <= w[1].0, "{w:?}");
            }
            for s in &lane.slices {
                assert!(s.0 <= s.1 && s.0 >= outcome.trace.start_ns && s.1 <= outcome.trace.end_ns);
            }
        }
    }
}

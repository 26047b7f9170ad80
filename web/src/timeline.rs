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
    pub marks: Vec<Mark>,
}

/// A wakeup or migration onto a CPU.
#[derive(Debug, Clone, PartialEq)]
pub struct Mark {
    pub t: u64,
    /// "wakeup" or "migrate".
    pub kind: &'static str,
    pub task: usize,
    /// The branch or balancer that placed it.
    pub reason: String,
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
                t,
                task,
                target,
                reason,
                ..
            } => lane(&mut lanes, *target).marks.push(Mark {
                t: *t,
                kind: "wakeup",
                task: *task,
                reason: reason.to_string(),
            }),
            TraceEvent::Migrate {
                t,
                task,
                to,
                reason,
                ..
            } => lane(&mut lanes, *to).marks.push(Mark {
                t: *t,
                kind: "migrate",
                task: *task,
                reason: reason.to_string(),
            }),
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

/// A mark clicked (or chosen with the keyboard): which variant's block,
/// which task, when (the trace's time), what kind.
#[derive(Debug, Clone, PartialEq)]
pub struct MarkClick {
    pub label: String,
    pub task: usize,
    pub t_ns: u64,
    pub kind: &'static str,
}

#[derive(Properties, PartialEq)]
pub struct Props {
    /// (variant label, its traced window)
    pub traces: Vec<(String, Trace)>,
    /// Marks answer clicks and Enter with this (the Why panel).
    #[prop_or_default]
    pub on_mark: Option<Callback<MarkClick>>,
    /// A moment to draw a line at, in the traces' time (where A and B part).
    #[prop_or_default]
    pub at_ns: Option<u64>,
    /// Captions count time from here (the traces' own zero unless told).
    #[prop_or_default]
    pub origin_ns: u64,
    #[prop_or(AttrValue::Static("timeline"))]
    pub id: AttrValue,
}

#[function_component]
pub fn Timeline(props: &Props) -> Html {
    // One colour per reason across all variants, so A and B compare.
    let mut reasons: Vec<String> = Vec::new();
    let all_lanes: Vec<Vec<Lane>> = props.traces.iter().map(|(_, t)| lanes(t)).collect();
    for l in all_lanes.iter().flatten() {
        for m in &l.marks {
            if !reasons.contains(&m.reason) {
                reasons.push(m.reason.clone());
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
        let first_mark = std::cell::Cell::new(true);
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
            let marks = lane.marks.iter().map(|m| {
                let (t, kind, reason) = (&m.t, &m.kind, &m.reason);
                let (cx, top) = (x(*t), y - 2.0);
                let points = if *kind == "wakeup" {
                    format!("{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}", cx - 3.5, top, cx + 3.5, top, cx, top + 6.0)
                } else {
                    format!("{:.1},{:.1} {:.1},{:.1} {:.1},{:.1} {:.1},{:.1}", cx, top - 1.0, cx + 4.0, top + 3.0, cx, top + 7.0, cx - 4.0, top + 3.0)
                };
                let Some(on_mark) = &props.on_mark else {
                    return html! {
                        <polygon class={*kind} {points} fill={color_of(reason)}>
                            <title>{ format!("{kind} on CPU {}: {reason}", lane.cpu) }</title>
                        </polygon>
                    };
                };
                let click = MarkClick { label: label.clone(), task: m.task, t_ns: m.t, kind: m.kind };
                let onclick = { let (on_mark, click) = (on_mark.clone(), click.clone()); Callback::from(move |_: MouseEvent| on_mark.emit(click.clone())) };
                let onkeydown = {
                    let on_mark = on_mark.clone();
                    Callback::from(move |e: KeyboardEvent| match e.key().as_str() {
                        "Enter" | " " => {
                            e.prevent_default();
                            on_mark.emit(click.clone());
                        }
                        "ArrowRight" | "ArrowDown" => focus_neighbour(&e, 1),
                        "ArrowLeft" | "ArrowUp" => focus_neighbour(&e, -1),
                        _ => {}
                    })
                };
                // One Tab stop per block, the first mark; arrows move between marks.
                let tabindex = if first_mark.replace(false) { "0" } else { "-1" };
                let name = trace.tasks.get(m.task).cloned().unwrap_or_else(|| format!("task {}", m.task));
                html! {
                    <polygon class={classes!(*kind, "clickable")} {points} fill={color_of(reason)} {tabindex} role="button"
                        data-task={m.task.to_string()} data-t-ns={m.t.to_string()} {onclick} {onkeydown}
                        aria-label={format!("{kind} of {name} on CPU {}: {reason}; why?", lane.cpu)}>
                        <title>{ format!("{kind} of {name} on CPU {}: {reason} (click: why)", lane.cpu) }</title>
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
        let parting = props.at_ns.filter(|t| (trace.start_ns..=trace.end_ns).contains(t)).map(|t| html! {
            <line class="parting" x1={format!("{:.1}", x(t))} x2={format!("{:.1}", x(t))} y1="0" y2={format!("{:.1}", height - 18.0)}>
                <title>{ "where A and B part" }</title>
            </line>
        });
        html! {
            <figure class="timeline-block" data-variant-label={label.clone()}>
                <figcaption>{ format!("{label}: {:.0} us from {:.3} ms", span / 1e3, trace.start_ns.saturating_sub(props.origin_ns) as f64 / 1e6) }</figcaption>
                if lanes.is_empty() {
                    <p class="hint">{ "Nothing was scheduled in the traced window." }</p>
                } else {
                    <svg viewBox={format!("0 0 {W} {height}")} role={if props.on_mark.is_some() { "group" } else { "img" }} aria-label={format!("per-CPU timeline of {label}")}>
                        { for rows }
                        { for parting }
                    </svg>
                }
            </figure>
        }
    });
    html! {
        <div class="timeline" id={props.id.clone()}>
            { for blocks }
            <p class="legend">
                <span>{ if props.on_mark.is_some() { "▼ wakeup ◆ migration (click one: why it went there), coloured by what placed them: " } else { "▼ wakeup ◆ migration, coloured by what placed them: " } }</span>
                { for reasons.iter().map(|r| html! { <span class="reason"><svg viewBox="0 0 10 10" aria-hidden="true"><rect width="10" height="10" rx="2" fill={color_of(r)} /></svg>{ r.clone() }</span> }) }
            </p>
        </div>
    }
}

/// Moves the focus `step` marks on from the mark a key was pressed on, in
/// its timeline block's drawing order.
fn focus_neighbour(e: &KeyboardEvent, step: i32) {
    use wasm_bindgen::JsCast;
    let Some(me) = e
        .target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
    else {
        return;
    };
    let Ok(Some(svg)) = me.closest("svg") else {
        return;
    };
    let Ok(marks) = svg.query_selector_all("polygon.clickable") else {
        return;
    };
    let n = marks.length() as i32;
    let Some(at) = (0..n).find(|&i| me.is_same_node(marks.item(i as u32).as_ref())) else {
        return;
    };
    e.prevent_default();
    let next = marks.item((at + step).clamp(0, n - 1) as u32);
    if let Some(mark) = next.and_then(|m| m.dyn_into::<web_sys::SvgElement>().ok()) {
        let _ = mark.focus();
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

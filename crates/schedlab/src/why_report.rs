//! Decision records and divergence reports as text: each decision an
//! indented tree of the kernel functions it went through, each fact on a
//! line of its own under its function (`schedlab why`, `schedlab diverge`).

use crate::decisions::{
    same_point, Cause, Divergence, Parting, PolicyDifference, Recorded, COUNTER_PARTING,
};
use crate::sched::why::{Decision, DecisionKind, Fact, Outcome, Term};
use std::fmt::Write;

/// A time since the workload's start, in ms with ns digits.
fn ms(ns: u64) -> String {
    format!("{}.{:06} ms", ns / 1_000_000, ns % 1_000_000)
}

fn task_name(names: &[String], task: usize) -> String {
    match names.get(task) {
        Some(n) => format!("{n} (#{task})"),
        None => format!("#{task}"),
    }
}

/// One line saying what was decided and how it ended.
pub fn headline(d: &Decision, names: &[String]) -> String {
    let what = match (d.kind, d.task) {
        (DecisionKind::Balance, _) => match d.level {
            Some(level) => format!(
                "{} balance at {level} by CPU {}{}",
                d.idle.unwrap_or("?"),
                d.cpu,
                match d.nohz_by {
                    Some(ilb) if ilb != d.cpu => {
                        format!(" (tickless, balanced by the NOHZ idle balancer on CPU {ilb})")
                    }
                    _ => String::new(),
                }
            ),
            None => format!("new-idle balance by CPU {}", d.cpu),
        },
        (kind, Some(t)) => format!(
            "{} of {} from CPU {}",
            if kind == DecisionKind::Fork {
                "fork"
            } else {
                "wakeup"
            },
            task_name(names, t),
            d.cpu
        ),
        (_, None) => format!("placement on CPU {}", d.cpu),
    };
    let outcome = match &d.outcome {
        Outcome::Placed { cpu, reason } => format!("-> CPU {cpu} ({reason})"),
        Outcome::Balanced {
            busiest,
            moved,
            active,
        } => match (busiest, moved.is_empty()) {
            (None, _) => "-> nothing to pull".into(),
            (Some(b), true) => format!("-> none moved from CPU {b}"),
            (Some(b), false) => format!(
                "-> {} from CPU {b}{}",
                moved
                    .iter()
                    .map(|&t| task_name(names, t))
                    .collect::<Vec<_>>()
                    .join(", "),
                if *active { " (active balance)" } else { "" }
            ),
        },
        Outcome::Unfinished => "-> (unfinished)".into(),
    };
    format!("{}  {what}  {outcome}", ms(d.t_ns))
}

/// A side of a comparison: "name (value)", or the value alone for a constant.
fn term_text(t: &Term) -> String {
    if t.name == t.value.to_string() {
        t.name.to_string()
    } else {
        format!("{} ({})", t.name, t.value)
    }
}

/// A fact in words.
pub fn fact_text(f: &Fact, names: &[String]) -> String {
    match f {
        Fact::Compare {
            lhs,
            op,
            rhs,
            holds,
        } => format!(
            "{} {} {}: {}",
            term_text(lhs),
            op.symbol(),
            term_text(rhs),
            if *holds { "true" } else { "false" }
        ),
        Fact::Value(t) => format!("{} = {}", t.name, t.value),
        Fact::Flag {
            level: Some(level),
            name,
            on,
        } => format!("{level}: SD_{name} {}", if *on { "set" } else { "not set" }),
        Fact::Flag {
            level: None,
            name,
            on,
        } => format!(
            "sched_feat {}",
            if *on {
                name.to_string()
            } else {
                format!("NO_{name}")
            }
        ),
        Fact::Cpu { cpu, verdict } => format!("CPU {cpu}: {verdict}"),
        Fact::Domain { level } => format!("sched domain {level}"),
        Fact::Task { task, verdict } => format!("task {}: {verdict}", task_name(names, *task)),
        Fact::Note { text } => text.to_string(),
    }
}

/// A decision as lines: its headline, then each function indented by its
/// depth with its facts below it.
pub fn tree_lines(d: &Decision, names: &[String]) -> Vec<String> {
    let mut lines = vec![headline(d, names)];
    for step in &d.steps {
        let indent = "  ".repeat(step.depth as usize + 1);
        lines.push(format!("{indent}{}", step.func));
        for f in &step.facts {
            lines.push(format!("{indent}    {}", fact_text(f, names)));
        }
    }
    lines
}

/// `schedlab why`'s text.
pub fn recorded(r: &Recorded) -> String {
    let n = r.decisions.len();
    let mut out = format!(
        "{n} decision{} of variant {} (era {})\n",
        if n == 1 { "" } else { "s" },
        r.variant,
        r.era
    );
    for d in &r.decisions {
        out.push('\n');
        for line in tree_lines(d, &r.task_names) {
            out.push_str(&line);
            out.push('\n');
        }
    }
    if r.decisions.is_empty() {
        out.push_str(
            "\nNo decision matched: widen the window (--from, --to), the task or the kind.\n",
        );
    }
    if r.limit_reached {
        let _ = writeln!(
            out,
            "\nThe limit of {n} record{} was reached and the run stopped there: narrow the \
             window (--from, --to), the task (--task) or the kind (--kind), or raise --limit.",
            if n == 1 { "" } else { "s" }
        );
    }
    out
}

fn difference_text(p: &PolicyDifference) -> String {
    match p.level {
        Some(level) if p.knob.chars().all(|c| c.is_ascii_uppercase() || c == '_') => {
            format!("{level} SD_{}: {} in A, {} in B", p.knob, p.a, p.b)
        }
        Some(level) => format!("{level} {}: {} in A, {} in B", p.knob, p.a, p.b),
        None => format!("{}: {} in A, {} in B", p.knob, p.a, p.b),
    }
}

/// Two columns, `left` padded to `width`.
fn side_by_side(left: &[String], right: &[String], width: usize) -> String {
    let mut out = String::new();
    for i in 0..left.len().max(right.len()) {
        let l = left.get(i).map_or("", String::as_str);
        let r = right.get(i).map_or("", String::as_str);
        let l: String = l.chars().take(width).collect();
        let _ = writeln!(out, "{l:<width$} | {r}");
    }
    out
}

/// What differs between a parting's two records, and what it traces back to.
fn why_differs(p: &Parting, names: &[String]) -> String {
    let f = &p.difference;
    let side = |fact: &Option<Fact>, func: Option<&str>| match (func, fact) {
        (Some(func), Some(fact)) => format!("{func}: {}", fact_text(fact, names)),
        (Some(func), None) => format!("{func}: (nothing)"),
        (None, _) => "(the same steps; only the outcome differs)".into(),
    };
    let cause = match &p.cause {
        Cause::Knob(k) => format!("the policy difference {}", difference_text(k)),
        Cause::EraCode { a, b } => format!("the eras' code: {a} and {b} take different paths here"),
        Cause::StateParted => "the state: the values read differ, so the runs parted before \
                               this decision, outside placement and balancing (a pick, a \
                               preemption, a cost)"
            .into(),
    };
    let mut out = String::new();
    if !same_point(&p.a, &p.b) {
        let _ = writeln!(out, "  A: {}", headline(&p.a, names));
        let _ = writeln!(out, "  B: {}", headline(&p.b, names));
    }
    let _ = writeln!(out, "  A: {}", side(&f.a, f.func_a));
    let _ = writeln!(out, "  B: {}", side(&f.b, f.func_b));
    let _ = writeln!(out, "  traces back to {cause}");
    out
}

/// `schedlab diverge`'s text.
pub fn divergence(d: &Divergence) -> String {
    let mut out = format!(
        "A = {} (era {}), B = {} (era {})\n",
        d.variants[0], d.eras[0], d.variants[1], d.eras[1]
    );
    if d.policy_differences.is_empty() {
        out.push_str("The two policies set every knob alike.\n");
    } else {
        out.push_str("Policy differences:\n");
        for p in &d.policy_differences {
            let _ = writeln!(out, "  {}", difference_text(p));
        }
    }
    out.push('\n');
    let same = match (&d.first_difference, &d.parting) {
        (Some(f), Some(p)) => f.a == p.a && f.b == p.b,
        _ => false,
    };
    if let (Some(first), false) = (&d.first_difference, same) {
        let _ = writeln!(
            out,
            "The records first differ at {}, after {} identical decisions, in a decision \
             that ends alike:\n  {}",
            ms(first.a.t_ns.min(first.b.t_ns)),
            first.matched,
            headline(&first.a, &d.task_names)
        );
        out.push_str(&why_differs(first, &d.task_names));
        out.push('\n');
    }
    match &d.parting {
        None => {
            let _ = writeln!(
                out,
                "A and B never part: each of the {} decisions compared ends alike over the \
                 whole run ({}).",
                d.compared,
                ms(d.run_ns)
            );
        }
        Some(p) => {
            let _ = writeln!(
                out,
                "A and B part at {}, after {} decisions that ended alike:",
                ms(p.a.t_ns.min(p.b.t_ns)),
                p.matched,
            );
            out.push_str(&why_differs(p, &d.task_names));
            out.push('\n');
            let a = tree_lines(&p.a, &d.task_names);
            let b = tree_lines(&p.b, &d.task_names);
            let width = a
                .iter()
                .map(|l| l.chars().count())
                .max()
                .unwrap_or(0)
                .min(72);
            out.push_str(&side_by_side(&a, &b, width));
        }
    }
    out.push('\n');
    if d.counters.is_empty() {
        let _ = writeln!(
            out,
            "No counter differs by more than {:.0}% over the run.",
            COUNTER_PARTING * 100.0
        );
    } else {
        let _ = writeln!(
            out,
            "Counters, when each first differs by more than {:.0}% (A / B; checked every 10 ms):",
            COUNTER_PARTING * 100.0
        );
        for c in &d.counters {
            let _ = writeln!(out, "  {}  {}  {} / {}", ms(c.at_ns), c.counter, c.a, c.b);
        }
    }
    out
}

//! A decision record's data and the [`Trail`] that keeps them under a
//! [`WhyFilter`]. Knows nothing of the environment, so the environment's
//! interface can name the trail.

use crate::counters::{IdleType, Reason};
use crate::policy::{Era, Feature, SdFlag};
use serde::Serialize;
use std::cell::RefCell;

/// Which decisions a run records: by kind, task and window, up to a limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WhyFilter {
    pub wakeups: bool,
    pub forks: bool,
    pub balances: bool,
    /// Only decisions about tasks of these names (placements of them,
    /// balances that moved one of them); a name ending in `*` is a
    /// prefix. None: all.
    pub task_names: Option<Vec<String>>,
    /// The window in absolute simulated time, [from, to).
    pub from_ns: u64,
    pub to_ns: u64,
    /// At most this many records; later ones are counted, not kept.
    pub limit: usize,
}

impl Default for WhyFilter {
    fn default() -> Self {
        WhyFilter {
            wakeups: true,
            forks: true,
            balances: true,
            task_names: None,
            from_ns: 0,
            to_ns: u64::MAX,
            limit: usize::MAX,
        }
    }
}

/// What was decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DecisionKind {
    Wakeup,
    Fork,
    /// A load_balance at one level (periodic, on behalf of tickless CPUs
    /// too, or new-idle).
    Balance,
}

/// One decision, as the era's code reached it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decision {
    pub t_ns: u64,
    pub kind: DecisionKind,
    /// A balance's idle type (busy, idle, newidle).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idle: Option<&'static str>,
    /// The deciding CPU: the waker's (or forking parent's), the balancing one.
    pub cpu: usize,
    /// A balance's domain level.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<&'static str>,
    /// A balance run for this tickless CPU by the NOHZ idle balancer, this
    /// CPU (2.6.28's owner, 4.15+'s kicked CPU).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nohz_by: Option<usize>,
    /// The task placed; None for a balance.
    pub task: Option<usize>,
    pub steps: Vec<Step>,
    pub outcome: Outcome,
}

/// A kernel function the decision went through, at its depth in the call tree.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    pub depth: u8,
    pub func: &'static str,
    pub facts: Vec<Fact>,
}

/// A comparison's operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Op {
    #[serde(rename = "<")]
    Lt,
    #[serde(rename = "<=")]
    Le,
    #[serde(rename = ">")]
    Gt,
    #[serde(rename = ">=")]
    Ge,
    #[serde(rename = "==")]
    Eq,
}

impl Op {
    pub fn symbol(self) -> &'static str {
        match self {
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::Eq => "==",
        }
    }

    pub(crate) fn holds(self, a: i64, b: i64) -> bool {
        match self {
            Op::Lt => a < b,
            Op::Le => a <= b,
            Op::Gt => a > b,
            Op::Ge => a >= b,
            Op::Eq => a == b,
        }
    }
}

/// A named value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Term {
    pub name: &'static str,
    pub value: i64,
}

/// What a step saw.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "fact", rename_all = "snake_case")]
pub enum Fact {
    /// `lhs op rhs`, and whether it held.
    Compare {
        lhs: Term,
        op: Op,
        rhs: Term,
        holds: bool,
    },
    Value(Term),
    /// A domain's SD flag (with its level) or a scheduler feature (no
    /// level), as the era names it, and whether it is set.
    Flag {
        #[serde(skip_serializing_if = "Option::is_none")]
        level: Option<&'static str>,
        name: &'static str,
        on: bool,
    },
    /// A CPU looked at, and what was found there.
    Cpu {
        cpu: usize,
        verdict: &'static str,
    },
    /// The domain level a load_balance works on.
    Domain {
        level: &'static str,
    },
    /// A task looked at by detach_tasks, and what became of it.
    Task {
        task: usize,
        verdict: &'static str,
    },
    /// A branch taken, in words.
    Note {
        text: &'static str,
    },
}

/// How a decision ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    Placed {
        cpu: usize,
        reason: Reason,
    },
    Balanced {
        /// The busiest CPU, if one was found.
        busiest: Option<usize>,
        /// The tasks moved (one pushed by the stopper for active balance).
        moved: Vec<usize>,
        active: bool,
    },
    /// Not closed yet (a record's outcome until it is).
    Unfinished,
}

/// A decision being made. Decisions open inside others (an active
/// balance's push makes the busiest CPU schedule, and maybe balance
/// new-idle) and close before them, so they are kept as a stack.
#[derive(Debug, Clone)]
struct Open {
    /// None: the filter does not want it; its steps go nowhere.
    record: Option<Decision>,
    /// A new-idle walk: the load_balances it runs nest in its record.
    walk: bool,
    /// One of the walk's load_balances is running: its steps go one level
    /// deeper.
    nested: bool,
    /// The busiest CPU the walk's load_balances found last.
    nested_busiest: Option<usize>,
}

/// Records the decisions a run makes, under a [`WhyFilter`].
#[derive(Debug, Clone, Default)]
pub struct Trail {
    filter: WhyFilter,
    /// The tasks whose names the filter names, as they start.
    tasks: Vec<usize>,
    /// The NOHZ idle balancer at work, if one is (`Decision::nohz_by`).
    nohz_by: Option<usize>,
    open: Vec<Open>,
    done: Vec<Decision>,
    kept: usize,
    /// Records that passed the filter after the limit was reached.
    pub over_limit: u64,
}

impl Trail {
    pub fn new(filter: WhyFilter) -> Self {
        Trail {
            filter,
            ..Trail::default()
        }
    }

    /// Opens a record, kept if the filter wants it (a task's placement is
    /// judged here, a balance's when it ends and its moves are known); a
    /// load_balance inside a new-idle walk joins the walk's.
    pub(super) fn begin(
        &mut self,
        now: u64,
        kind: DecisionKind,
        idle: Option<IdleType>,
        cpu: usize,
        level: Option<&'static str>,
        task: Option<usize>,
    ) {
        let balance = kind == DecisionKind::Balance;
        if let Some(top) = self.open.last_mut() {
            if top.walk && !top.nested && balance && level.is_some() {
                top.nested = true;
                return;
            }
        }
        let f = &self.filter;
        let wanted = now >= f.from_ns
            && now < f.to_ns
            && match kind {
                DecisionKind::Balance => f.balances,
                DecisionKind::Wakeup => f.wakeups && task.is_none_or(|t| self.wants_task(t)),
                DecisionKind::Fork => f.forks && task.is_none_or(|t| self.wants_task(t)),
            };
        let record = wanted.then(|| Decision {
            t_ns: now,
            kind,
            idle: idle.map(IdleType::name),
            cpu,
            level,
            nohz_by: self.nohz_by.filter(|_| balance),
            task,
            steps: Vec::new(),
            outcome: Outcome::Unfinished,
        });
        self.open.push(Open {
            record,
            walk: balance && level.is_none(),
            nested: false,
            nested_busiest: None,
        });
    }

    fn wants_task(&self, task: usize) -> bool {
        self.filter.task_names.is_none() || self.tasks.contains(&task)
    }

    /// Task `task` called `name` started: the filter may want it.
    pub fn task_started(&mut self, task: usize, name: &str) {
        let Some(names) = &self.filter.task_names else {
            return;
        };
        let matches = |n: &String| match n.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => name == n,
        };
        if names.iter().any(matches) {
            self.tasks.push(task);
        }
    }

    /// Closes the innermost open record with `outcome`.
    pub(super) fn finish(&mut self, outcome: Outcome) {
        let Some(Open {
            record: Some(mut d),
            ..
        }) = self.open.pop()
        else {
            return;
        };
        if let Outcome::Balanced { moved, .. } = &outcome {
            if self.filter.task_names.is_some() && !moved.iter().any(|&t| self.wants_task(t)) {
                return;
            }
        }
        d.outcome = outcome;
        if self.kept < self.filter.limit {
            self.kept += 1;
            self.done.push(d);
        } else {
            self.over_limit += 1;
        }
    }

    /// Closes the innermost balance: a walk's load_balance returns to the
    /// walk; anything else ends with the tasks its steps moved.
    pub(super) fn finish_balance(&mut self, busiest: Option<usize>) {
        let Some(top) = self.open.last_mut() else {
            return;
        };
        if top.nested {
            top.nested = false;
            top.nested_busiest = busiest.or(top.nested_busiest);
            return;
        }
        let busiest = busiest.or(top.nested_busiest);
        let (mut moved, mut active) = (Vec::new(), false);
        let facts = top
            .record
            .iter()
            .flat_map(|d| &d.steps)
            .flat_map(|s| &s.facts);
        for fact in facts {
            if let Fact::Task { task, verdict } = fact {
                if *verdict == MOVED || *verdict == PUSHED {
                    moved.push(*task);
                    active |= *verdict == PUSHED;
                }
            }
        }
        self.finish(Outcome::Balanced {
            busiest,
            moved,
            active,
        });
    }

    /// The NOHZ idle balancer `ilb` starts (Some) or ends (None) its work
    /// for the tickless CPUs.
    pub(super) fn nohz_balancer(&mut self, ilb: Option<usize>) {
        self.nohz_by = ilb;
    }

    /// Whether the innermost open decision is being recorded.
    pub fn is_open(&self) -> bool {
        self.open.last().is_some_and(|o| o.record.is_some())
    }

    /// Enters `func` at `depth` of the call tree.
    pub fn step(&mut self, depth: u8, func: &'static str) {
        if let Some(Open {
            record: Some(d),
            nested,
            ..
        }) = self.open.last_mut()
        {
            d.steps.push(Step {
                depth: depth + *nested as u8,
                func,
                facts: Vec::new(),
            });
        }
    }

    fn fact(&mut self, fact: Fact) {
        let top = self.open.last_mut().and_then(|o| o.record.as_mut());
        if let Some(step) = top.and_then(|d| d.steps.last_mut()) {
            step.facts.push(fact);
        }
    }

    /// `lhs op rhs`, each side named as the kernel's code names it.
    pub fn cmp(&mut self, lhs: (&'static str, i64), op: Op, rhs: (&'static str, i64)) {
        self.fact(Fact::Compare {
            lhs: Term {
                name: lhs.0,
                value: lhs.1,
            },
            op,
            rhs: Term {
                name: rhs.0,
                value: rhs.1,
            },
            holds: op.holds(lhs.1, rhs.1),
        });
    }

    pub fn value(&mut self, name: &'static str, value: i64) {
        self.fact(Fact::Value(Term { name, value }));
    }

    pub fn flag(&mut self, level: Option<&'static str>, name: &'static str, on: bool) {
        self.fact(Fact::Flag { level, name, on });
    }

    /// A domain's SD flag at `level`, named as `era` names it.
    pub fn sd(&mut self, era: Era, level: &'static str, flag: SdFlag, on: bool) {
        self.flag(Some(level), flag.name_in(era), on);
    }

    /// A scheduler feature, named as `era` names it.
    pub fn feature(&mut self, era: Era, feature: Feature, on: bool) {
        self.flag(None, feature.name_in(era), on);
    }

    pub fn cpu(&mut self, cpu: usize, verdict: &'static str) {
        self.fact(Fact::Cpu { cpu, verdict });
    }

    pub fn domain(&mut self, level: &'static str) {
        self.fact(Fact::Domain { level });
    }

    pub fn task(&mut self, task: usize, verdict: &'static str) {
        self.fact(Fact::Task { task, verdict });
    }

    pub fn note(&mut self, text: &'static str) {
        self.fact(Fact::Note { text });
    }

    /// The records finished so far, handed over (a long run drains them
    /// as it goes).
    pub fn take(&mut self) -> Vec<Decision> {
        std::mem::take(&mut self.done)
    }

    /// Whether the limit stopped keeping records.
    pub fn limit_reached(&self) -> bool {
        self.over_limit > 0
    }
}

/// detach_tasks' verdict on a task it moved.
pub const MOVED: &str = "moved";
/// The stopper's push of the busiest CPU's running task.
pub const PUSHED: &str = "pushed by the stopper (active balance)";

/// The cell an environment keeps its trail in.
pub type TrailCell = RefCell<Trail>;

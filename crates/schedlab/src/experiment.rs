//! Experiments: what a user runs and shares. A machine, a base kernel
//! policy, variants (A, B, ...) as changes to it, a benchmark, an optional
//! sweep over one of its parameters, an optional timeline of policy changes
//! during each run, a seed and a repeat count.
//!
//! Running is split so callers can parallelise: [`Experiment::points`] lists
//! the independent runs (sweep value x variant x repeat), [`run_point`] runs
//! one (with progress and cancellation between chunks of simulated time),
//! [`assemble`] turns the points' outcomes into [`Results`]. The same
//! experiment gives the same results however the points are scheduled.

use crate::engine::stats::{CpuTime, LatencyHist, TraceEvent, TraceWindow};
use crate::engine::{RunOutput, Sim, SimConfig};
use crate::error::Concern;
use crate::error::{Error, Result};
use crate::limits;
use crate::policy::{PolicyChanges, PolicySpec};
use crate::sched::why::WhyFilter;
use crate::topology::{self, MachineSpec, Topology};
use crate::workload::bench::{Benchmark, Metric};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The experiment format this build writes; older ones are migrated.
pub const VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Experiment {
    pub version: u32,
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// What the experiment replays (a commit, a measurement), if anything.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source: String,
    pub machine: MachineRef,
    pub policy: PolicySpec,
    pub variants: Vec<Variant>,
    pub workload: Benchmark,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<Sweep>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub timeline: Vec<TimelineStep>,
    #[serde(default = "default_seed")]
    pub seed: u64,
    #[serde(default = "default_repeats")]
    pub repeats: u32,
    /// Add a SUM row to the commit-style table (as the re-tune commit did).
    #[serde(default, skip_serializing_if = "is_false")]
    pub sum_row: bool,
}

fn default_seed() -> u64 {
    1
}
fn default_repeats() -> u32 {
    1
}
fn is_false(b: &bool) -> bool {
    !*b
}

/// A machine preset by name, or a whole machine.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum MachineRef {
    Preset(String),
    Spec(Box<MachineSpec>),
}

/// A name or an object: read by its JSON type, so that a mistake inside a
/// machine object is reported as that mistake, at its field.
impl<'de> Deserialize<'de> for MachineRef {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = MachineRef;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                write!(
                    f,
                    "a machine preset name ({}) or a machine object",
                    topology::PRESETS.join(", ")
                )
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<MachineRef, E> {
                Ok(MachineRef::Preset(v.to_string()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> std::result::Result<MachineRef, A::Error> {
                let spec =
                    MachineSpec::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(MachineRef::Spec(Box::new(spec)))
            }
        }
        d.deserialize_any(Visit)
    }
}

impl MachineRef {
    pub fn spec(&self) -> Result<MachineSpec> {
        match self {
            MachineRef::Preset(name) => topology::preset(name),
            MachineRef::Spec(spec) => Ok((**spec).clone()),
        }
    }
}

/// A named variant: changes to the base policy and, optionally, to the
/// workload's parameters (pinning, for instance).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    pub label: String,
    #[serde(default, skip_serializing_if = "is_default_changes")]
    pub policy: PolicyChanges,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub workload: BTreeMap<String, serde_json::Value>,
}

fn is_default_changes(c: &PolicyChanges) -> bool {
    *c == PolicyChanges::default()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sweep {
    pub param: String,
    pub values: Vec<serde_json::Value>,
}

/// A policy change during a run: after `mark` has been recorded `count`
/// times (by any task), apply `policy` to the variant's policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimelineStep {
    pub mark: String,
    pub count: u64,
    pub policy: PolicyChanges,
    /// What the change is, for reports ("+WAKE_AFFINE on domain0+domain1").
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
}

/// One independent run.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Index of the sweep value (0 without a sweep).
    pub x: usize,
    pub variant: usize,
    pub repeat: u32,
    pub topology: Topology,
    pub policy: PolicySpec,
    pub timeline: Vec<(String, u64, PolicySpec)>,
    pub workload: Benchmark,
    pub seed: u64,
    /// Whether the run records a trace window: only each variant's first
    /// point (first sweep value, first repeat), the one that is drawn.
    pub traced: bool,
}

/// What one point gave.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointOutcome {
    pub value: f64,
    pub series: Vec<f64>,
    pub text: String,
    pub counters: BTreeMap<String, u64>,
    pub events: u64,
    /// Every task's wakeup-to-running latencies in the measured part, merged.
    #[serde(default)]
    pub wakeup_latency: LatencyHist,
    /// Every CPU's time in the measured part, summed.
    #[serde(default)]
    pub cpu_time: CpuTime,
    /// A short window of the run, every switch, wakeup and migration in it
    /// (empty unless the point is `traced`).
    pub trace: Trace,
}

/// A traced window of a run and the names of its tasks (by task id).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    pub start_ns: u64,
    pub end_ns: u64,
    pub ncpus: usize,
    pub tasks: Vec<String>,
    pub events: Vec<TraceEvent>,
}

/// The traced window starts this long after measuring starts (past start-up).
const TRACE_OFFSET_NS: u64 = 1_000_000;
/// Long enough to see a few hundred wakeups of a ping-pong, short enough to draw.
const TRACE_LEN_NS: u64 = 200_000;
pub(crate) const TRACE_MAX_EVENTS: usize = 4_000;

impl Trace {
    /// The traced window of a finished run, `len_ns` long from where it
    /// opened (or empty, at the run's end, if it never did).
    pub(crate) fn of_output(out: &RunOutput, ncpus: usize, len_ns: u64) -> Trace {
        let start_ns = out.trace_start_ns.unwrap_or(out.end_ns);
        Trace {
            start_ns,
            end_ns: (start_ns + len_ns).min(out.end_ns.max(start_ns)),
            ncpus,
            tasks: out.tasks.iter().map(|t| t.name.clone()).collect(),
            events: out.trace.clone(),
        }
    }
}

pub use crate::seed::repeat_seed;

/// The part of an experiment's JSON that does not read as its type: the
/// machine, the policy (the experiment's or a variant's), the workload;
/// else the experiment itself.
fn part_at_fault(value: &serde_json::Value) -> Concern {
    // Read from text, as the experiment was: from_value would build a second
    // deserializer of every type into the page's wasm.
    fn fails<T: serde::de::DeserializeOwned>(v: Option<&serde_json::Value>) -> bool {
        v.is_some_and(|v| serde_json::from_str::<T>(&v.to_string()).is_err())
    }
    let variants = value.get("variants").and_then(|v| v.as_array());
    let variant_policy_fails =
        variants.is_some_and(|vs| vs.iter().any(|v| fails::<PolicyChanges>(v.get("policy"))));
    if fails::<MachineRef>(value.get("machine")) {
        Concern::Machine
    } else if fails::<PolicySpec>(value.get("policy")) || variant_policy_fails {
        Concern::Policy
    } else if fails::<Benchmark>(value.get("workload")) {
        Concern::Workload
    } else {
        Concern::Experiment
    }
}

impl Experiment {
    /// Parses an experiment from JSON; errors carry line and column.
    pub fn from_json(text: &str) -> Result<Experiment> {
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
            crate::error::json_error(Concern::Experiment, "experiment JSON", ".", &e)
        })?;
        let version = value.get("version").and_then(|v| v.as_u64());
        match version {
            Some(1) => {}
            Some(v) => {
                return Err(Error::invalid(
                    Concern::Experiment,
                    format!(
                    "experiment version {v} is not known to this build (it reads versions 0 and 1)"
                ),
                ))
            }
            None => {
                return Err(Error::invalid(
                    Concern::Experiment,
                    "the experiment has no \"version\" (expected 1)",
                ))
            }
        }
        let exp: Experiment = crate::error::from_json(Concern::Experiment, "experiment JSON", text)
            .map_err(|e| match e.concern() {
                // serde reports an error inside a tagged value (the
                // workload) at the value's end, with no path to read.
                Concern::Experiment => e.about(part_at_fault(&value)),
                _ => e,
            })?;
        exp.validate()
            .map_err(|e| e.map_message(|msg| crate::json_path::with_position(text, "", &msg)))?;
        Ok(exp)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("an experiment serialises")
    }

    /// Checks everything that can be checked before running.
    pub fn validate(&self) -> Result<()> {
        if self.variants.is_empty() {
            return Err(Error::invalid(
                Concern::Experiment,
                "the experiment has no variants",
            ));
        }
        let mut labels: Vec<&str> = self.variants.iter().map(|v| v.label.as_str()).collect();
        labels.sort_unstable();
        labels.dedup();
        if labels.len() != self.variants.len() {
            return Err(Error::invalid(
                Concern::Experiment,
                "variant labels must be distinct",
            ));
        }
        limits::REPEATS.check(Concern::Experiment, "repeats", self.repeats as u64)?;
        if let Some(s) = &self.sweep {
            limits::SWEEP_POINTS.check(
                Concern::Experiment,
                "sweep points",
                s.values.len() as u64,
            )?;
        }
        self.points().map(|_| ())
    }

    /// The sweep values (a single null without a sweep).
    pub fn xs(&self) -> Vec<Option<serde_json::Value>> {
        match &self.sweep {
            Some(s) => s.values.iter().cloned().map(Some).collect(),
            None => vec![None],
        }
    }

    /// Every independent run, in (x, variant, repeat) order.
    pub fn points(&self) -> Result<Vec<Point>> {
        let topology = Topology::from_spec(&self.machine.spec()?)?;
        // Each variant's policy and timeline, checked (names, levels on this
        // machine) once and now rather than mid-run.
        let mut policies = Vec::with_capacity(self.variants.len());
        for variant in &self.variants {
            let policy = self.policy.with(&variant.policy);
            crate::domains::Domains::build(&topology, &policy.resolve(topology.ncpus())?)?;
            let mut timeline = Vec::new();
            let mut current = policy.clone();
            for step in &self.timeline {
                current = current.with(&step.policy);
                crate::domains::Domains::build(&topology, &current.resolve(topology.ncpus())?)?;
                timeline.push((step.mark.clone(), step.count, current.clone()));
            }
            policies.push((policy, timeline));
        }
        let mut points = Vec::new();
        for (xi, x) in self.xs().into_iter().enumerate() {
            let base = match (&self.sweep, x) {
                (Some(s), Some(v)) => self.workload.with_param(&s.param, &v)?,
                _ => self.workload.clone(),
            };
            for (vi, (variant, (policy, timeline))) in
                self.variants.iter().zip(&policies).enumerate()
            {
                let mut workload = base.clone();
                for (k, v) in &variant.workload {
                    workload = workload.with_param(k, v)?;
                }
                // A generator's parameters are checked, not built (a big
                // one builds millions of instructions); a custom workload's
                // channel numbers, cpulists and loop bodies are caught now,
                // by path.
                match &workload {
                    Benchmark::Custom(c) => {
                        let built = c.build()?;
                        crate::workload::program::Workload::compile(&built.spec, topology.ncpus())
                            .map_err(|e| {
                                Error::invalid(Concern::Experiment, format!("workload.{e}"))
                            })?;
                    }
                    generator => generator.check()?,
                }
                for repeat in 0..self.repeats {
                    points.push(Point {
                        x: xi,
                        variant: vi,
                        repeat,
                        topology: topology.clone(),
                        policy: policy.clone(),
                        timeline: timeline.clone(),
                        workload: workload.clone(),
                        seed: repeat_seed(self.seed, repeat),
                        traced: xi == 0 && repeat == 0,
                    });
                }
            }
        }
        Ok(points)
    }

    pub fn metric(&self) -> Metric {
        self.workload.metric()
    }

    /// An experiment running an rt-app file's tasks (see
    /// [`crate::workload::rtapp`]) on `machine` (a preset name) under the
    /// current era's defaults (6.12), and what the import says about the
    /// file (keys accepted and ignored, notes).
    pub fn from_rtapp(
        text: &str,
        name: &str,
        machine: &str,
    ) -> Result<(Experiment, crate::workload::rtapp::Remarks)> {
        let import = crate::workload::rtapp::import(text)?;
        let description =
            "Imported from an rt-app file: each task's period, slack, CPU time and wakeup latency.";
        let exp = Experiment::imported(name, description, machine, import.workload)?;
        Ok((exp, import.remarks))
    }

    /// An imported scheduler trace's workload as an experiment on
    /// `machine` under the current era; run until every task is done.
    pub fn from_trace(
        workload: crate::workload::program::WorkloadSpec,
        name: &str,
        machine: &str,
    ) -> Result<Experiment> {
        let description = "Replayed from a scheduler trace: each task runs what it ran in the recording and wakes whom it woke; the policy places.";
        let custom = crate::workload::bench::Custom::replay(workload);
        Experiment::imported(name, description, machine, custom)
    }

    /// An imported workload on `machine` (a preset name), one variant of
    /// the current era; what the model refuses of it is the import's fault.
    fn imported(
        name: &str,
        description: &str,
        machine: &str,
        workload: crate::workload::bench::Custom,
    ) -> Result<Experiment> {
        topology::preset(machine)?;
        let era = crate::policy::Era::CURRENT;
        let exp = Experiment {
            version: VERSION,
            name: name.to_string(),
            description: description.into(),
            source: String::new(),
            machine: MachineRef::Preset(machine.to_string()),
            policy: PolicySpec::era(era),
            variants: vec![Variant {
                label: era.name().into(),
                policy: PolicyChanges::default(),
                workload: BTreeMap::new(),
            }],
            workload: Benchmark::Custom(workload),
            sweep: None,
            timeline: Vec::new(),
            seed: default_seed(),
            repeats: default_repeats(),
            sum_row: false,
        };
        exp.validate().map_err(|e| e.about(Concern::Import))?;
        Ok(exp)
    }
}

/// What a run reports to its caller between chunks, and how the caller answers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    /// Simulated time done so far.
    pub now_ns: u64,
    /// The run's end if known (it has a duration), else None.
    pub end_ns: Option<u64>,
}

/// Simulated time between progress reports and cancellation checks.
pub const CHUNK_NS: u64 = 10_000_000;

/// A point's simulation run chunk by chunk ([`CHUNK_NS`] of simulated
/// time each), the timeline's steps applied between chunks.
pub(crate) struct PointRun<'a> {
    point: &'a Point,
    pub(crate) sim: Sim,
    next_step: usize,
    until: u64,
    start_ns: u64,
    duration_ns: Option<u64>,
}

impl<'a> PointRun<'a> {
    /// The point's simulation at its start, traced if the point is;
    /// `why` keeps decision records.
    pub(crate) fn new(point: &'a Point, why: Option<WhyFilter>) -> Result<PointRun<'a>> {
        PointRun::with_trace(point, why, None)
    }

    /// As `new`, traced over `trace` instead (since the workload's start).
    pub(crate) fn with_trace(
        point: &'a Point,
        why: Option<WhyFilter>,
        trace: Option<TraceWindow>,
    ) -> Result<PointRun<'a>> {
        let built = point.workload.build()?;
        let base = SimConfig::new(point.topology.clone(), &point.policy, &built.spec)?;
        let cfg = SimConfig {
            seed: point.seed,
            start_ns: start_ns_of(point)?,
            duration_ns: built.duration_ns,
            measure_from_ns: built.measure_from_ns,
            trace: trace.or(point.traced.then_some(TraceWindow {
                start_ns: built.measure_from_ns + TRACE_OFFSET_NS,
                end_ns: built.measure_from_ns + TRACE_OFFSET_NS + TRACE_LEN_NS,
                max_events: TRACE_MAX_EVENTS,
                from_first_wakeup: true,
            })),
            why,
            ..base
        };
        Ok(PointRun {
            point,
            sim: Sim::new(&cfg)?,
            next_step: 0,
            until: 0,
            start_ns: cfg.start_ns,
            duration_ns: built.duration_ns,
        })
    }

    /// Runs the next chunk; whether the run is over.
    pub(crate) fn chunk(&mut self) -> Result<bool> {
        self.until += CHUNK_NS;
        let done = self.sim.run_until(self.until)?;
        let n = self.point.topology.ncpus();
        while let Some((mark, count, policy)) = self.point.timeline.get(self.next_step) {
            if self.sim.mark_count(mark) < *count {
                break;
            }
            self.sim.set_policy(policy.resolve(n)?)?;
            self.next_step += 1;
        }
        Ok(done)
    }

    /// Simulated time of the workload's own, as its duration counts.
    pub(crate) fn progress(&self) -> Progress {
        Progress {
            now_ns: self.elapsed_ns(),
            end_ns: self.duration_ns,
        }
    }

    /// Simulated time since the workload started.
    pub(crate) fn elapsed_ns(&self) -> u64 {
        self.sim.now().saturating_sub(self.start_ns)
    }

    /// When the workload started, in the simulation's own time.
    pub(crate) fn start_ns(&self) -> u64 {
        self.start_ns
    }
}

/// When `point`'s workload starts in its run's own time: a phase within
/// the first tick drawn from its seed (`seed::start_phase`).
pub(crate) fn start_ns_of(point: &Point) -> Result<u64> {
    let tick = point
        .policy
        .resolve(point.topology.ncpus())?
        .tunables
        .tick_ns();
    Ok(crate::seed::start_phase(point.seed, tick))
}

/// Runs `point` in chunks of simulated time until it ends or `progress`
/// returns false; the simulation and whether it ended.
pub(crate) fn simulate(
    point: &Point,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<(Sim, bool)> {
    let mut run = PointRun::new(point, None)?;
    loop {
        if run.chunk()? {
            return Ok((run.sim, true));
        }
        if !progress(run.progress()) {
            return Ok((run.sim, false));
        }
    }
}

/// Runs one point to the engine's own report (the per-task figures
/// `schedlab trace stats` tables for a simulated run).
pub fn run_point_output(point: &Point) -> Result<crate::engine::RunOutput> {
    let (sim, _) = simulate(point, &mut |_| true)?;
    Ok(sim.finish())
}

/// Runs one point. `progress` is called between chunks of simulated time;
/// returning false cancels the run (an error saying so).
pub fn run_point(
    point: &Point,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<PointOutcome> {
    let (sim, done) = simulate(point, progress)?;
    if !done {
        return Err(Error::invalid(Concern::Experiment, "the run was cancelled"));
    }
    let n = point.topology.ncpus();
    let out: RunOutput = sim.finish();
    let report = point.workload.report(&out);
    let mut wakeup_latency = LatencyHist::default();
    for t in &out.tasks {
        wakeup_latency.merge(&t.wakeup_latency);
        wakeup_latency.merge(&t.timer_latency);
    }
    let trace = if point.traced {
        Trace::of_output(&out, n, TRACE_LEN_NS)
    } else {
        Trace::default()
    };
    Ok(PointOutcome {
        value: report.value,
        series: report.series,
        text: report.text,
        counters: out.counters,
        events: out.events,
        wakeup_latency,
        cpu_time: out
            .measured_cpu_time
            .iter()
            .fold(CpuTime::default(), |sum, t| sum.plus(t)),
        trace,
    })
}

/// The spread of one variant's value at one sweep point over the repeats
/// (the population standard deviation; zero for a single run).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Spread {
    pub min: f64,
    pub max: f64,
    pub stddev: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub x: Option<serde_json::Value>,
    pub values: BTreeMap<String, f64>,
    pub spread: BTreeMap<String, Spread>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub series: BTreeMap<String, Vec<f64>>,
    pub text: BTreeMap<String, String>,
    /// Wakeup-to-running latency of every task, over the variant's repeats.
    pub wakeup_latency: BTreeMap<String, LatencySummary>,
    /// Where the CPUs' time went in the measured part, over the variant's repeats.
    pub cpu: BTreeMap<String, CpuShares>,
}

/// Shares (0 to 1) of all CPUs' time in the measured part: tasks' own work,
/// the kernel's (system calls, switches, wakeups, idle exits), load
/// balancing, the NET_RX softirq, and idle. They add up to 1.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CpuShares {
    pub user: f64,
    pub kernel: f64,
    pub balancing: f64,
    pub net_rx_softirq: f64,
    pub idle: f64,
}

impl CpuShares {
    pub fn of(t: &CpuTime) -> Self {
        let total = t.total().max(1) as f64;
        // Balancing is counted when it starts and its kernel time as it
        // passes, so a window can cut one short: never more than the rest.
        let balancing =
            (t.newidle_balance_ns + t.tick_balance_ns).min(t.overhead_ns - t.net_rx_softirq_ns);
        let share = |ns: u64| ns as f64 / total;
        CpuShares {
            user: share(t.busy_ns),
            kernel: share(t.overhead_ns - balancing - t.net_rx_softirq_ns),
            balancing: share(balancing),
            net_rx_softirq: share(t.net_rx_softirq_ns),
            idle: share(t.idle_ns),
        }
    }
}

/// Percentiles of a wakeup-latency histogram, and the histogram itself
/// (non-empty buckets as lowest value in ns and count) for a CDF.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LatencySummary {
    pub wakeups: u64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p99_9_ns: u64,
    pub max_ns: u64,
    pub histogram: Vec<(u64, u64)>,
}

impl LatencySummary {
    pub fn of(h: &LatencyHist) -> Self {
        LatencySummary {
            wakeups: h.count,
            p50_ns: h.percentile_ns(500),
            p90_ns: h.percentile_ns(900),
            p99_ns: h.percentile_ns(990),
            p99_9_ns: h.percentile_ns(999),
            max_ns: h.max_ns,
            histogram: h.nonempty().collect(),
        }
    }
}

/// An experiment's results: the object `schedlab run --format json` prints.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Results {
    pub experiment: String,
    pub metric: Metric,
    pub variants: Vec<String>,
    /// Runs per sweep value and variant, each with its own seed: a row's
    /// `values` are their mean, `spread` their range and standard deviation.
    pub repeats: u32,
    pub rows: Vec<Row>,
    /// Summed over every point and repeat of the variant.
    pub counters: BTreeMap<String, BTreeMap<String, u64>>,
}

impl Results {
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("results serialise")
    }
}

/// Turns the points' outcomes (in [`Experiment::points`] order) into results.
pub fn assemble(exp: &Experiment, points: &[Point], outcomes: &[PointOutcome]) -> Results {
    let labels: Vec<String> = exp.variants.iter().map(|v| v.label.clone()).collect();
    let mut counters: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    let mut rows = Vec::new();
    for (xi, x) in exp.xs().into_iter().enumerate() {
        let mut row = Row {
            x,
            values: BTreeMap::new(),
            spread: BTreeMap::new(),
            series: BTreeMap::new(),
            text: BTreeMap::new(),
            wakeup_latency: BTreeMap::new(),
            cpu: BTreeMap::new(),
        };
        for (vi, label) in labels.iter().enumerate() {
            let mine: Vec<&PointOutcome> = points
                .iter()
                .zip(outcomes)
                .filter(|(p, _)| p.x == xi && p.variant == vi)
                .map(|(_, o)| o)
                .collect();
            let vals: Vec<f64> = mine.iter().map(|o| o.value).collect();
            let mean = vals.iter().sum::<f64>() / vals.len().max(1) as f64;
            let var = vals.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>()
                / vals.len().max(1) as f64;
            row.values.insert(label.clone(), mean);
            row.spread.insert(
                label.clone(),
                Spread {
                    min: vals.iter().copied().fold(f64::INFINITY, f64::min),
                    max: vals.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                    stddev: var.sqrt(),
                },
            );
            if let Some(first) = mine.first() {
                if !first.series.is_empty() {
                    row.series.insert(label.clone(), first.series.clone());
                }
                row.text.insert(label.clone(), first.text.clone());
            }
            let mut latency = LatencyHist::default();
            for o in &mine {
                latency.merge(&o.wakeup_latency);
            }
            row.wakeup_latency
                .insert(label.clone(), LatencySummary::of(&latency));
            let cpu = mine
                .iter()
                .fold(CpuTime::default(), |sum, o| sum.plus(&o.cpu_time));
            row.cpu.insert(label.clone(), CpuShares::of(&cpu));
            let sums = counters.entry(label.clone()).or_default();
            for o in &mine {
                for (k, v) in &o.counters {
                    *sums.entry(k.clone()).or_default() += v;
                }
            }
        }
        rows.push(row);
    }
    Results {
        experiment: exp.name.clone(),
        metric: exp.metric(),
        variants: labels,
        repeats: exp.repeats,
        rows,
        counters,
    }
}

/// Each variant's traced window at the first sweep value and repeat: what
/// the playground's timeline draws and `--trace` writes.
pub fn first_traces(
    exp: &Experiment,
    points: &[Point],
    outcomes: &[PointOutcome],
) -> Vec<(String, Trace)> {
    points
        .iter()
        .zip(outcomes)
        .filter(|(p, _)| p.traced)
        .map(|(p, o)| (exp.variants[p.variant].label.clone(), o.trace.clone()))
        .collect()
}

/// Runs every point in order on this thread.
pub fn run_all(
    exp: &Experiment,
    progress: &mut dyn FnMut(usize, Progress) -> bool,
) -> Result<Results> {
    let points = exp.points()?;
    let mut outcomes = Vec::with_capacity(points.len());
    for (i, p) in points.iter().enumerate() {
        outcomes.push(run_point(p, &mut |pr| progress(i, pr))?);
    }
    Ok(assemble(exp, &points, &outcomes))
}

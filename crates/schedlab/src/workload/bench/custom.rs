//! A workload of your own: the task language ([`crate::workload::program`])
//! written directly in the experiment, with a run length, a warm-up and the
//! number to report (docs/workloads.md). Bad input names the task, the
//! instruction and its JSON path (`workload.tasks[1].program[0].loop.body[2]`).

use super::ops::{ms_to_ns, Built};
use super::readout::{measured_secs, Better, Metric, Report};
use crate::engine::stats::LatencyHist;
use crate::engine::RunOutput;
use crate::error::Concern;
use crate::error::{Error, Result};
use crate::workload::program::{ChannelSpec, Op, TaskSpec, WorkloadSpec};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What a custom workload reports as its headline number.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CustomMetric {
    /// The 99th percentile of every task's wakeup-to-running latency, us.
    #[default]
    WakeupP99,
    /// The mean time between consecutive marks of `mark` by one task, us.
    MarkInterval,
    /// Marks of `mark` per second, over all tasks.
    MarkRate,
}

pub const METRICS: [&str; 3] = ["wakeup_p99", "mark_interval", "mark_rate"];

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    duration_ms: Option<u64>,
    #[serde(default)]
    warmup_ms: u64,
    #[serde(default)]
    metric: CustomMetric,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mark: Option<String>,
    #[serde(default)]
    channels: Vec<ChannelSpec>,
    tasks: Vec<TaskSpec>,
}

/// A custom workload. Deserialising checks every instruction on its own so
/// an error can say where it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "Value")]
pub struct Custom {
    /// Run length, ms; omitted: until every task has exited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// Start of the run not measured, ms.
    #[serde(default)]
    pub warmup_ms: u64,
    #[serde(default)]
    pub metric: CustomMetric,
    /// The mark label `mark_interval` and `mark_rate` read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mark: Option<String>,
    #[serde(default)]
    pub channels: Vec<ChannelSpec>,
    pub tasks: Vec<TaskSpec>,
}

impl TryFrom<Value> for Custom {
    type Error = String;
    fn try_from(v: Value) -> std::result::Result<Custom, String> {
        match serde_json::from_value::<Raw>(v.clone()) {
            Ok(r) => Ok(Custom {
                duration_ms: r.duration_ms,
                warmup_ms: r.warmup_ms,
                metric: r.metric,
                mark: r.mark,
                channels: r.channels,
                tasks: r.tasks,
            }),
            Err(e) => Err(locate(&v).unwrap_or_else(|| format!("workload: {e}"))),
        }
    }
}

/// The first element that does not parse, with its path, task and
/// instruction; None if every element parses on its own.
fn locate(v: &Value) -> Option<String> {
    let Value::Object(obj) = v else {
        return Some("workload: a custom workload is an object".into());
    };
    if let Some(Value::Array(chans)) = obj.get("channels") {
        for (i, c) in chans.iter().enumerate() {
            if let Err(e) = serde_json::from_value::<ChannelSpec>(c.clone()) {
                return Some(format!("workload.channels[{i}]: {e}"));
            }
        }
    }
    match obj.get("tasks") {
        Some(Value::Array(tasks)) => tasks
            .iter()
            .enumerate()
            .find_map(|(i, t)| locate_task(t, &format!("workload.tasks[{i}]"))),
        Some(_) => Some("workload.tasks: a list of tasks".into()),
        None => None,
    }
}

fn locate_task(t: &Value, at: &str) -> Option<String> {
    let name = t.get("name").and_then(Value::as_str).unwrap_or("?");
    let who = format!("task {name:?}");
    match t.get("program") {
        Some(Value::Array(ops)) => {
            if let Some(e) = locate_ops(ops, &format!("{at}.program"), &who) {
                return Some(e);
            }
        }
        Some(_) => return Some(format!("{at}.program ({who}): a list of instructions")),
        None => {}
    }
    serde_json::from_value::<TaskSpec>(t.clone())
        .err()
        .map(|e| format!("{at} ({who}): {e}"))
}

fn locate_ops(ops: &[Value], at: &str, who: &str) -> Option<String> {
    for (i, op) in ops.iter().enumerate() {
        let here = format!("{at}[{i}]");
        let key = match op {
            Value::Object(o) if o.len() == 1 => o.keys().next().cloned().unwrap_or_default(),
            Value::String(s) => s.clone(),
            _ => {
                return Some(format!(
                    "{here} ({who}): an instruction is an object with one key, e.g. {{\"compute\": {{\"ns\": 1000}}}}"
                ))
            }
        };
        let inner = match key.as_str() {
            "loop" => match op["loop"].get("body") {
                Some(Value::Array(body)) => locate_ops(body, &format!("{here}.loop.body"), who),
                _ => None,
            },
            "forever" => match &op["forever"] {
                Value::Array(body) => locate_ops(body, &format!("{here}.forever"), who),
                _ => None,
            },
            "fork" => locate_task(&op["fork"], &format!("{here}.fork")),
            _ => None,
        };
        if inner.is_some() {
            return inner;
        }
        if let Err(e) = serde_json::from_value::<Op>(op.clone()) {
            return Some(format!("{here} ({who}, {key}): {e}"));
        }
    }
    None
}

/// The custom workload a new one starts from: a producer handing items
/// to a consumer through a pipe.
const EXAMPLE: &str = r#"{
  "duration_ms": 100,
  "warmup_ms": 10,
  "metric": "mark_rate",
  "mark": "consumed",
  "channels": [{"kind": "pipe"}],
  "tasks": [
    {"name": "producer", "program": [{"forever": [
      {"compute": {"ns": 20000, "jitter_pct": 20}},
      {"write": {"chan": 0, "bytes": 64}}
    ]}]},
    {"name": "consumer", "program": [{"forever": [
      {"read": {"chan": 0, "bytes": 64}},
      {"compute": {"ns": 15000}},
      {"mark": "consumed"}
    ]}]}
  ]
}"#;

impl Custom {
    pub fn example() -> Custom {
        serde_json::from_str(EXAMPLE).expect("the example parses")
    }

    /// A replayed recording's workload: run until every task is done,
    /// measured by the default metric.
    pub fn replay(spec: WorkloadSpec) -> Custom {
        Custom {
            duration_ms: None,
            warmup_ms: 0,
            metric: Default::default(),
            mark: None,
            channels: spec.channels,
            tasks: spec.tasks,
        }
    }

    /// Parses a custom workload from its JSON text (the `workload` object
    /// without `kind`, or with `"kind": "custom"`); errors carry the path,
    /// and line and column when the text is not JSON.
    pub fn from_json(text: &str) -> Result<Custom> {
        let mut v: Value = serde_json::from_str(text).map_err(|e| {
            Error::invalid(
                Concern::Workload,
                format!("line {}, column {}: {e}", e.line(), e.column()),
            )
        })?;
        if let Value::Object(o) = &mut v {
            match o.remove("kind") {
                None => {}
                Some(Value::String(k)) if k == "custom" => {}
                Some(k) => {
                    return Err(Error::invalid(
                        Concern::Workload,
                        format!("workload.kind: {k} is not \"custom\""),
                    ))
                }
            }
        }
        Custom::try_from(v).map_err(|msg| {
            Error::invalid(
                Concern::Workload,
                crate::json_path::with_position(text, "workload", &msg),
            )
        })
    }

    pub fn spec(&self) -> WorkloadSpec {
        WorkloadSpec {
            channels: self.channels.clone(),
            tasks: self.tasks.clone(),
        }
    }

    pub fn build(&self) -> Result<Built> {
        if let Some(d) = self.duration_ms {
            super::ops::check(
                "custom",
                "duration_ms",
                d,
                1,
                crate::limits::SIM_TIME_NS.max / 1_000_000,
            )?;
            super::ops::check(
                "custom",
                "warmup_ms",
                self.warmup_ms,
                0,
                d.saturating_sub(1),
            )?;
        }
        if self.tasks.is_empty() {
            return Err(Error::invalid(
                Concern::Workload,
                "workload.tasks: a custom workload needs a task",
            ));
        }
        if self.metric != CustomMetric::WakeupP99 {
            let Some(mark) = &self.mark else {
                return Err(Error::invalid(
                    Concern::Workload,
                    "workload.mark: the metric reads a mark; name its label",
                ));
            };
            if !self.tasks.iter().any(|t| marks_in(&t.program, mark)) {
                return Err(Error::invalid(
                    Concern::Workload,
                    format!("workload.mark: no task records the mark {mark:?}"),
                ));
            }
        }
        Ok(Built {
            spec: self.spec(),
            duration_ns: self.duration_ms.map(ms_to_ns),
            measure_from_ns: ms_to_ns(self.warmup_ms),
        })
    }

    pub fn metric(&self) -> Metric {
        match self.metric {
            CustomMetric::WakeupP99 => Metric {
                name: "wakeup latency p99",
                unit: "us",
                better: Better::Lower,
            },
            CustomMetric::MarkInterval => Metric {
                name: "usecs/op",
                unit: "us",
                better: Better::Lower,
            },
            CustomMetric::MarkRate => Metric {
                name: "ops/sec",
                unit: "per sec",
                better: Better::Higher,
            },
        }
    }

    /// A line per task: CPU time, wakeups and their latency; then the marks.
    pub fn report(&self, out: &RunOutput) -> Report {
        let mut all = LatencyHist::default();
        let mut text = String::from(
            "task                 cpu_ms  wakeups  lat_p50_us  lat_p99_us  lat_max_us\n",
        );
        let us = |ns: u64| ns as f64 / 1000.0;
        for t in &out.tasks {
            let mut h = t.wakeup_latency.clone();
            h.merge(&t.timer_latency);
            let h = &h;
            all.merge(h);
            text.push_str(&format!(
                "{:<18} {:>8.3} {:>8} {:>11.1} {:>11.1} {:>11.1}\n",
                t.name,
                t.sum_exec_ns as f64 / 1e6,
                h.count,
                us(h.percentile_ns(500)),
                us(h.percentile_ns(990)),
                us(h.max_ns)
            ));
        }
        let secs = measured_secs(out);
        for m in &out.marks {
            let mean = m.interval_sum_ns.checked_div(m.intervals).unwrap_or(0);
            text.push_str(&format!(
                "mark {:?}: {} times, {:.1}/sec, mean interval {:.3} us\n",
                m.label,
                m.count,
                if secs > 0.0 {
                    m.count as f64 / secs
                } else {
                    0.0
                },
                us(mean)
            ));
            if m.overruns > 0 {
                // A timer's slack: rt-app's signed figure, overruns negative.
                text.push_str(&format!(
                    "mark {:?}: signed mean {:.3} us, {} overruns, worst {:.3} us\n",
                    m.label,
                    m.signed_mean_ns() / 1000.0,
                    m.overruns,
                    -(m.overrun_max_ns as f64) / 1000.0
                ));
            }
        }
        let mark = self
            .mark
            .as_deref()
            .and_then(|l| out.marks.iter().find(|m| m.label == l));
        let value = match self.metric {
            CustomMetric::WakeupP99 => us(all.percentile_ns(990)),
            CustomMetric::MarkInterval => mark.map_or(0.0, |m| {
                us(m.interval_sum_ns.checked_div(m.intervals).unwrap_or(0))
            }),
            CustomMetric::MarkRate => mark.map_or(0.0, |m| {
                if secs > 0.0 {
                    m.count as f64 / secs
                } else {
                    0.0
                }
            }),
        };
        Report {
            value,
            series: vec![],
            details: vec![],
            text,
        }
    }
}

fn marks_in(ops: &[Op], label: &str) -> bool {
    ops.iter().any(|op| match op {
        Op::Mark(l) | Op::Lap(l) => l == label,
        Op::Loop { body, .. } | Op::Forever(body) => marks_in(body, label),
        Op::Fork(t) => marks_in(&t.program, label),
        Op::Timer(t) => t.slack.as_deref() == Some(label),
        _ => false,
    })
}

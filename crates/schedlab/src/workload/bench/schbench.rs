//! schbench -m M -t T: M message threads, each with T worker threads of
//! one process. A message thread hands its workers requests; a worker
//! sleeps on its request (a futex in the tool, a pipe here), and when woken
//! does the request: a short sleep (-s, standing for I/O or a lock) and
//! then -c of CPU work, and hands its reply back. The wakeup latency is the
//! workers' (from the message thread's wakeup to the worker's running), the
//! request latency runs from that wakeup to the request's end, RPS counts
//! requests per second.
//!
//! Without -R the message thread keeps every worker busy, round robin:
//! it takes worker i's reply and posts it its next request. With -R the
//! tool divides R among its message threads, and each, at the start of
//! every second, posts its share back to back, round robin over its
//! workers, without waiting for replies, then sleeps to the end of that
//! second (run_rps_thread in schbench v1.0): the load comes in bursts, a
//! request arriving while its worker is busy waits in its queue, and the
//! request latency starts when the worker takes it. A run shorter than a
//! second sees one burst. Left out: the tool's per-CPU locking, its skip of
//! a worker with over 128 requests pending (here the post blocks when the
//! worker's queue is full), its cache-footprint
//! matrix, and its automatic -t (one worker per CPU).

use super::ops::{channel, check, compute, ms_to_ns, read, task, write, Built};
use super::readout::{mark_stats, measured_secs, Report};
use crate::engine::stats::LatencyHist;
use crate::engine::RunOutput;
use crate::error::Concern;
use crate::error::Result;
use crate::workload::program::{ChannelKind, Op, Time, TimerSpec, WorkloadSpec};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Schbench {
    /// -m: message threads.
    #[serde(default = "one")]
    pub message_threads: u64,
    /// -t: workers per message thread.
    #[serde(default = "default_workers")]
    pub workers: u64,
    /// -r: run time, ms (the tool takes seconds, default 30).
    #[serde(default = "default_runtime")]
    pub runtime_ms: u64,
    /// -s: sleep in each request, us.
    #[serde(default = "default_sleep")]
    pub sleep_us: u64,
    /// -c: CPU work in each request, us.
    #[serde(default = "default_cpu")]
    pub cputime_us: u64,
    /// -R: requests per second overall; 0: as fast as the workers go.
    #[serde(default)]
    pub rps: u64,
    /// -w: start of the run not measured, ms.
    #[serde(default = "default_warmup")]
    pub warmup_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity: Option<String>,
}

fn one() -> u64 {
    1
}
fn default_workers() -> u64 {
    4
}
fn default_runtime() -> u64 {
    500
}
fn default_sleep() -> u64 {
    100
}
fn default_cpu() -> u64 {
    1_000
}
fn default_warmup() -> u64 {
    50
}

/// A post or a reply: a futex word's worth.
const MSG: u64 = 8;
/// The message thread's own work per request (queueing it).
const POST_NS: u64 = 500;

impl Schbench {
    /// The parameters' limits, without building the workload.
    pub fn check(&self) -> Result<()> {
        check("schbench", "message_threads", self.message_threads, 1, 64)?;
        check("schbench", "workers", self.workers, 1, 1024)?;
        check(
            "schbench",
            "message_threads x workers",
            self.message_threads * self.workers,
            1,
            4096,
        )?;
        check("schbench", "runtime_ms", self.runtime_ms, 1, 600_000)?;
        check(
            "schbench",
            "warmup_ms",
            self.warmup_ms,
            0,
            self.runtime_ms.saturating_sub(1),
        )?;
        check("schbench", "sleep_us", self.sleep_us, 0, 1_000_000)?;
        check("schbench", "cputime_us", self.cputime_us, 1, 1_000_000)?;
        check("schbench", "rps", self.rps, 0, 10_000_000)?;
        let m = self.message_threads;
        if self.rps > 0 && self.rps / m == 0 {
            return Err(crate::error::Error::invalid(Concern::Workload, format!(
                "schbench parameter rps is {}, below one request per second per message thread ({m}); use 0 for as fast as the workers go",
                self.rps
            )));
        }
        Ok(())
    }

    pub fn build(&self) -> Result<Built> {
        self.check()?;
        let (m, t) = (self.message_threads as usize, self.workers as usize);
        // schbench divides -R among its message threads, rounding down
        // (at least one each: `check`).
        let per_thread = (self.rps > 0).then(|| self.rps / m as u64);
        let mut channels = Vec::new();
        let mut tasks = Vec::new();
        for mi in 0..m {
            let mut program = Vec::new();
            let mut serve = Vec::new();
            // Worker w's posts go to channel base + 2w, its replies to the next.
            let base = channels.len();
            let post_to = |w: usize| [compute(POST_NS, 0), write(base + 2 * w, MSG)];
            for wi in 0..t {
                let (post, reply) = (channels.len(), channels.len() + 1);
                channels.push(channel(ChannelKind::Pipe, 4096));
                channels.push(channel(ChannelKind::Pipe, 4096));
                let mut work = vec![read(post, MSG)];
                if self.sleep_us > 0 {
                    work.push(Op::Sleep(Time::fixed(self.sleep_us * 1000)));
                }
                work.extend([
                    compute(self.cputime_us * 1000, 10),
                    Op::Lap("request".into()),
                ]);
                let mut body = work;
                if per_thread.is_none() {
                    body.push(write(reply, MSG));
                }
                let mut worker = task(format!("worker{mi}.{wi}"), &self.affinity, {
                    // Ready for the first request.
                    let mut p = if per_thread.is_none() {
                        vec![write(reply, MSG)]
                    } else {
                        vec![]
                    };
                    p.push(Op::Forever(body));
                    p
                });
                worker.process = Some(1);
                program.push(Op::Fork(Box::new(worker)));
                if per_thread.is_none() {
                    serve.extend([read(reply, MSG)]);
                    serve.extend(post_to(wi));
                }
            }
            if let Some(n) = per_thread {
                // One second's share, round robin from worker 0, then sleep
                // to the second's end.
                let round: Vec<Op> = (0..t).flat_map(post_to).collect();
                let rounds = n / t as u64;
                if rounds > 0 {
                    serve.push(Op::Loop {
                        count: rounds,
                        body: round,
                    });
                }
                serve.extend((0..(n % t as u64) as usize).flat_map(post_to));
                serve.push(Op::Timer(Box::new(TimerSpec {
                    period_ns: 1_000_000_000,
                    ..TimerSpec::default()
                })));
            }
            program.push(Op::Forever(serve));
            let mut message = task(format!("message{mi}"), &self.affinity, program);
            message.process = Some(1);
            tasks.push(message);
        }
        Ok(Built {
            spec: WorkloadSpec { channels, tasks },
            duration_ns: Some(ms_to_ns(self.runtime_ms)),
            measure_from_ns: ms_to_ns(self.warmup_ms),
        })
    }

    /// The workers' wakeups by their message thread.
    fn wakeups(out: &RunOutput) -> LatencyHist {
        let mut h = LatencyHist::default();
        for t in out.tasks.iter().filter(|t| t.name.starts_with("worker")) {
            h.merge(&t.wakeup_latency);
        }
        h
    }

    pub fn report(&self, out: &RunOutput) -> Report {
        let wake = Self::wakeups(out);
        let req = mark_stats(out, "request");
        let secs = measured_secs(out);
        let requests = req.map_or(0, |r| r.intervals);
        let rps = if secs > 0.0 {
            requests as f64 / secs
        } else {
            0.0
        };
        let us = |ns: u64| ns.div_ceil(1000);
        // schbench's -r is whole seconds; a shorter simulated run prints its fraction.
        let runtime = self.runtime_ms as f64 / 1000.0;
        // Each percentile as schbench prints it: the value, and how many
        // samples share its histogram bucket (this histogram's buckets).
        let line = |text: &mut String, pm: u64, value_us: u64, samples: u64| {
            let star = if pm == 990 { '*' } else { ' ' };
            let label = format!("{}.{}", pm / 10, pm % 10);
            text.push_str(&format!(
                "\t{star} {label}th: {value_us:<10} ({samples} samples)\n"
            ));
        };
        const PERCENTILES: [u64; 4] = [500, 900, 990, 999];
        let mut text = format!(
            "Wakeup Latencies percentiles (usec) runtime {runtime} (s) ({} total samples)\n",
            wake.count
        );
        for pm in PERCENTILES {
            line(
                &mut text,
                pm,
                us(wake.percentile_ns(pm)),
                wake.samples_at(pm),
            );
        }
        text.push_str(&format!(
            "\t  min={}, max={}\n",
            us(wake.min_ns()),
            us(wake.max_ns)
        ));
        text.push_str(&format!(
            "Request Latencies percentiles (usec) runtime {runtime} (s) ({requests} total samples)\n"
        ));
        for pm in PERCENTILES {
            let (value, samples) = req.map_or((0, 0), |r| (r.permille_ns(pm), r.samples_at(pm)));
            line(&mut text, pm, us(value), samples);
        }
        text.push_str(&format!(
            "\t  min={}, max={}\n",
            us(req
                .filter(|r| r.intervals > 0)
                .map_or(0, |r| r.interval_min_ns)),
            us(req.map_or(0, |r| r.interval_max_ns))
        ));
        text.push_str(&format!("average rps: {rps:.2}\n"));
        Report {
            value: wake.percentile_ns(990) as f64 / 1000.0,
            series: vec![],
            details: vec![
                (
                    "request_p99_us",
                    req.map_or(0, |r| r.permille_ns(990)) as f64 / 1000.0,
                ),
                ("rps", rps),
            ],
            text,
        }
    }
}

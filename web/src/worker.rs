//! The Web Worker: answers [`Request`]s by running the core.

use crate::protocol::{Request, Response, DRAW_EVERY_MS};
use schedlab::decisions;
use schedlab::error::Concern;
use schedlab::estimate;
use schedlab::experiment::{self, Experiment};
use schedlab::recording::{self, figures::Figures, workload::Overheads};
use schedlab::sched::why::WhyFilter;
use schedlab::why_report;
use schedlab::workload::bench::{Benchmark, Custom};
use std::io::BufReader;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

/// Runs in the worker's global scope: answers each message, then says Ready.
pub fn listen() {
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let poster = scope.clone();
    let post = move |resp: &Response| {
        let text = serde_json::to_string(resp).expect("a response serialises");
        // Posting a string to the page cannot fail while the page listens.
        let _ = poster.post_message(&JsValue::from_str(&text));
    };
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
        let text = e.data().as_string().unwrap_or_default();
        let resp = match serde_json::from_str::<Request>(&text) {
            Ok(req) => {
                // No more progress messages than the page draws.
                let mut last_ms = f64::NEG_INFINITY;
                handle(
                    req,
                    &mut |p| {
                        let now = js_sys::Date::now();
                        if now - last_ms >= f64::from(DRAW_EVERY_MS) {
                            last_ms = now;
                            post(&p);
                        }
                    },
                    &js_sys::Date::now,
                    &fetch_bytes,
                )
            }
            Err(err) => Response::Failed {
                error: format!("the worker got a message it cannot read: {err}"),
            },
        };
        post(&resp);
    });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    // The handler lives as long as the worker.
    on_message.forget();
    let ready: Response = Response::Ready {
        build: crate::BUILD_ID.to_string(),
    };
    let text = serde_json::to_string(&ready).expect("serialises");
    let _ = scope.post_message(&JsValue::from_str(&text));
}

/// A URL's bytes, read synchronously (a worker may: it blocks no page).
fn fetch_bytes(url: &str) -> Result<Vec<u8>, String> {
    let words = |e: JsValue| format!("cannot read the file: {}", crate::pool::js_words(&e));
    let xhr = web_sys::XmlHttpRequest::new().map_err(words)?;
    xhr.open_with_async("GET", url, false).map_err(words)?;
    xhr.set_response_type(web_sys::XmlHttpRequestResponseType::Arraybuffer);
    xhr.send().map_err(words)?;
    Ok(js_sys::Uint8Array::new(&xhr.response().map_err(words)?).to_vec())
}

/// The worker's work, kept free of web types so it is tested natively.
/// `progress` receives progress messages while a point runs or a trace is
/// read; `now_ms` is the clock a probe is timed by; `fetch` reads a URL.
pub fn handle(
    req: Request,
    progress: &mut dyn FnMut(Response),
    now_ms: &dyn Fn() -> f64,
    fetch: &dyn Fn(&str) -> Result<Vec<u8>, String>,
) -> Response {
    let result = match req {
        Request::RunPoint { experiment, index } => run_point(&experiment, index, progress),
        Request::Probe {
            experiment,
            budget_ms,
        } => probe(&experiment, budget_ms, now_ms),
        Request::ToCustom { experiment } => Experiment::from_json(&experiment)
            .and_then(|exp| exp.workload.to_custom())
            .map(|custom| imported(custom, String::new())),
        Request::ImportRtapp { text } => import_rtapp(&text),
        Request::ImportTrace { url, experiment } => match fetch(&url) {
            Ok(bytes) => import_trace(&bytes, &experiment, progress),
            Err(error) => return Response::Failed { error },
        },
        Request::Why {
            experiment,
            variant,
            task,
            t_ns,
        } => why_at(&experiment, variant, task, t_ns),
        Request::Diverge { experiment } => diverge(&experiment),
    };
    result.unwrap_or_else(|e| Response::Failed {
        error: e.to_string(),
    })
}

/// How much of the runs' timelines "Where A and B part" draws, from a
/// little before the parting.
const PARTING_BEFORE_NS: u64 = 20_000;
const PARTING_WINDOW_NS: u64 = 200_000;

fn why_at(experiment: &str, variant: usize, task: usize, t_ns: u64) -> schedlab::Result<Response> {
    let exp = Experiment::from_json(experiment)?;
    let choice = decisions::RunChoice {
        x: 0,
        variant,
        repeat: 0,
    };
    let recorded = decisions::at(&exp, choice, task, t_ns)?;
    let text = if recorded.decisions.is_empty() {
        format!(
            "No placement or balance of task #{task} was decided at {:.6} ms: an RT task's \
             wakeup (select_task_rq_rt keeps no record), or a move the task asked for itself \
             (sched_setaffinity).",
            t_ns as f64 / 1e6
        )
    } else {
        why_report::recorded(&recorded)
    };
    Ok(Response::Why { text })
}

fn diverge(experiment: &str) -> schedlab::Result<Response> {
    let exp = Experiment::from_json(experiment)?;
    let report = decisions::diverge(&exp, 0, (0, 1), &WhyFilter::default())?;
    let (mut at_ns, mut origin_ns, mut traces) = (None, 0, Vec::new());
    if let Some(p) = &report.parting {
        let t = p.a.t_ns.min(p.b.t_ns);
        let from = t.saturating_sub(PARTING_BEFORE_NS);
        traces = decisions::traces_around(&exp, 0, [0, 1], from, PARTING_WINDOW_NS)?;
        // The window opens at `from` since the workload's start.
        if let Some((_, trace)) = traces.first() {
            origin_ns = trace.start_ns - from;
            at_ns = Some(origin_ns + t);
        }
    }
    Ok(Response::Diverged {
        text: why_report::divergence(&report),
        at_ns,
        origin_ns,
        traces: serde_json::to_string(&traces).expect("traces serialise"),
    })
}

fn import_rtapp(text: &str) -> schedlab::Result<Response> {
    let import = schedlab::workload::rtapp::import(text)?;
    Ok(imported(import.workload, import.remarks.to_string()))
}

fn imported(workload: Custom, summary: String) -> Response {
    let workload = Benchmark::Custom(workload);
    Response::Imported {
        workload: serde_json::to_string(&workload).expect("a workload serialises"),
        summary,
    }
}

/// A scheduler trace's bytes (gzipped or not) as a replay, its switch and
/// wakeup costs taken off as the machine of `experiment` (its JSON) has them.
fn import_trace(
    bytes: &[u8],
    experiment: &str,
    progress: &mut dyn FnMut(Response),
) -> schedlab::Result<Response> {
    let machine = Experiment::from_json(experiment)?.machine.spec()?;
    let recorded_on = Overheads::of(&machine.costs);
    let mut reading = |bytes: u64| progress(Response::Reading { bytes });
    let import = if bytes.starts_with(&[0x1f, 0x8b]) {
        let gz = flate2::read::GzDecoder::new(bytes);
        recording::import(BufReader::new(gz), recorded_on, &mut reading)
    } else {
        recording::import(bytes, recorded_on, &mut reading)
    }
    .map_err(|e| e.about(Concern::Import))?;
    let summary = format!(
        "Imported {}",
        Figures::of_recording(&import.recording).summary()
    );
    Ok(imported(Custom::replay(import.workload), summary))
}

fn run_point(
    json: &str,
    index: usize,
    progress: &mut dyn FnMut(Response),
) -> schedlab::Result<Response> {
    let exp = Experiment::from_json(json)?;
    let points = exp.points()?;
    let point = points.get(index).ok_or_else(|| {
        schedlab::Error::invalid(
            Concern::Experiment,
            format!("the experiment has no point {index}"),
        )
    })?;
    let outcome = experiment::run_point(point, &mut |p| {
        progress(Response::Progress {
            index,
            now_ns: p.now_ns,
            end_ns: p.end_ns,
        });
        true
    })?;
    Ok(Response::Point {
        index,
        outcome: outcome.into(),
    })
}

/// The start of one point per sweep value and variant (at most 12), each
/// for its share of `budget_ms`; every point's events from its nearest probe.
fn probe(json: &str, budget_ms: f64, now_ms: &dyn Fn() -> f64) -> schedlab::Result<Response> {
    let exp = Experiment::from_json(json)?;
    let points = exp.points()?;
    let probes = estimate::probe_indices(&points, 12);
    let each = budget_ms / probes.len().max(1) as f64;
    let (mut events, mut ms) = (0u64, 0f64);
    let mut probed = Vec::with_capacity(probes.len());
    for &i in &probes {
        let start = now_ms();
        let p = estimate::probe(&points[i], &mut || now_ms() - start < each)?;
        ms += now_ms() - start;
        events += p.events;
        probed.push(p);
    }
    let nearest = estimate::nearest_probe(&points, &probes);
    let events_per_point = nearest
        .iter()
        .map(|k| match k {
            Some(k) => {
                let e = probed[*k].point_events();
                (e.events, e.at_least)
            }
            None => (0.0, true),
        })
        .collect();
    Ok(Response::Probed {
        events: events_per_point,
        events_per_sec: events as f64 / (ms.max(1.0) / 1000.0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_fetch(url: &str) -> Result<Vec<u8>, String> {
        panic!("fetched {url}")
    }

    /// A wakeup in a run's traced window, asked about in the worker, gives
    /// the record of the decision that placed it: the task, the time and
    /// the CPU the trace has.
    #[test]
    fn a_timeline_mark_is_answered_with_the_decision_behind_it() {
        let exp = schedlab::presets::get("retune-pipe-test").unwrap();
        let points = exp.points().unwrap();
        let outcome = experiment::run_point(&points[1], &mut |_| true).unwrap();
        let (t, task, target) = outcome
            .trace
            .events
            .iter()
            .find_map(|e| match e {
                schedlab::engine::stats::TraceEvent::Wakeup {
                    t, task, target, ..
                } => Some((*t, *task, *target)),
                _ => None,
            })
            .expect("the window holds a wakeup");
        let resp = handle(
            Request::Why {
                experiment: serde_json::to_string(&exp).unwrap(),
                variant: 1,
                task,
                t_ns: t,
            },
            &mut |_| {},
            &|| 0.0,
            &no_fetch,
        );
        let Response::Why { text } = resp else {
            panic!("{resp:?}")
        };
        let name = &outcome.trace.tasks[task];
        assert!(text.starts_with("1 decision of variant 2.6.28"), "{text}");
        assert!(
            text.contains(&format!("wakeup of {name} (#{task}) from CPU")),
            "{text}"
        );
        assert!(text.contains(&format!("-> CPU {target} (")), "{text}");
        // A moment with no decision about the task says so.
        let resp = handle(
            Request::Why {
                experiment: serde_json::to_string(&exp).unwrap(),
                variant: 1,
                task,
                t_ns: t + 1,
            },
            &mut |_| {},
            &|| 0.0,
            &no_fetch,
        );
        let Response::Why { text } = resp else {
            panic!("{resp:?}")
        };
        assert!(
            text.starts_with("No placement or balance of task"),
            "{text}"
        );
    }

    /// "Where A and B part" gets the CLI's report and both variants'
    /// timelines around the parting, which falls inside them.
    #[test]
    fn where_a_and_b_part_is_the_cli_report_with_timelines_around_it() {
        let exp = schedlab::presets::get("retune-pipe-test").unwrap();
        let resp = handle(
            Request::Diverge {
                experiment: serde_json::to_string(&exp).unwrap(),
            },
            &mut |_| {},
            &|| 0.0,
            &no_fetch,
        );
        let Response::Diverged {
            text,
            at_ns,
            origin_ns,
            traces,
        } = resp
        else {
            panic!("{resp:?}")
        };
        let report = decisions::diverge(&exp, 0, (0, 1), &WhyFilter::default()).unwrap();
        assert_eq!(text, why_report::divergence(&report));
        let traces: Vec<(String, schedlab::experiment::Trace)> =
            serde_json::from_str(&traces).unwrap();
        let labels: Vec<&str> = traces.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(labels, ["2.6.27", "2.6.28"]);
        let at = at_ns.expect("they part");
        let parting = report.parting.as_ref().unwrap();
        assert_eq!(at - origin_ns, parting.a.t_ns.min(parting.b.t_ns));
        for (_, trace) in &traces {
            assert!(
                (trace.start_ns..trace.end_ns).contains(&at),
                "{at} {trace:?}"
            );
            assert!(!trace.events.is_empty());
        }
    }

    /// A trace fixture (gzipped, as recorded) imports in the worker as
    /// the CLI imports it: the same workload, a line on its tasks, and
    /// progress as it reads; a file that is not a trace is refused in words.
    #[test]
    fn a_dropped_trace_imports_in_the_worker_as_the_cli_imports_it() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../crates/schedlab/tests/traces/pipe-pingpong.txt.gz"
        );
        let exp = schedlab::presets::get("kvm-pipe-test-pinning").unwrap();
        assert_eq!(exp.machine.spec().unwrap().name, "kvm-2vcpu");
        let experiment = serde_json::to_string(&exp).unwrap();
        let fetch = |url: &str| std::fs::read(url).map_err(|e| e.to_string());
        let mut readings = 0;
        let resp = handle(
            Request::ImportTrace {
                url: path.into(),
                experiment: experiment.clone(),
            },
            &mut |r| readings += u64::from(matches!(r, Response::Reading { .. })),
            &|| 0.0,
            &fetch,
        );
        let Response::Imported { workload, summary } = resp else {
            panic!("{resp:?}")
        };
        let spec = schedlab::topology::preset("kvm-2vcpu").unwrap();
        let gz = flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap());
        let cli =
            recording::import(BufReader::new(gz), Overheads::of(&spec.costs), &mut |_| {}).unwrap();
        let expected = Benchmark::Custom(Custom::replay(cli.workload));
        assert_eq!(workload, serde_json::to_string(&expected).unwrap());
        assert!(
            summary.starts_with("Imported ") && summary.contains(" tasks in "),
            "{summary}"
        );
        assert!(readings > 0);

        let bad = handle(
            Request::ImportTrace {
                url: "not a trace".into(),
                experiment,
            },
            &mut |_| {},
            &|| 0.0,
            &|_| Ok(b"hello world\n".to_vec()),
        );
        assert!(
            matches!(&bad, Response::Failed { error } if error.starts_with("no scheduler events in 1 lines")),
            "{bad:?}"
        );
    }

    #[test]
    fn a_point_run_in_the_worker_equals_the_core_run() {
        let exp = schedlab::presets::get("kvm-pipe-test-pinning").unwrap();
        let json = serde_json::to_string(&exp).unwrap();
        let mut progress = 0;
        let resp = handle(
            Request::RunPoint {
                experiment: json.clone(),
                index: 1,
            },
            &mut |_| progress += 1,
            &|| 0.0,
            &no_fetch,
        );
        let expected = experiment::run_point(&exp.points().unwrap()[1], &mut |_| true).unwrap();
        assert_eq!(
            resp,
            Response::Point {
                index: 1,
                outcome: expected.into()
            }
        );
        assert!(progress > 0);
        let missing = handle(
            Request::RunPoint {
                experiment: json,
                index: 9,
            },
            &mut |_| {},
            &|| 0.0,
            &no_fetch,
        );
        assert!(matches!(missing, Response::Failed { error } if error.contains("no point 9")));
    }

    #[test]
    fn a_probe_reports_every_points_events_and_its_rate() {
        let exp = schedlab::presets::get("kvm-pipe-test-pinning").unwrap();
        let full: Vec<u64> = exp
            .points()
            .unwrap()
            .iter()
            .map(|p| experiment::run_point(p, &mut |_| true).unwrap().events)
            .collect();
        // A clock that advances 1 ms a reading and a budget the probes
        // never reach: each point is run to its end, so its events are exact.
        let clock = std::cell::Cell::new(0.0);
        let resp = handle(
            Request::Probe {
                experiment: serde_json::to_string(&exp).unwrap(),
                budget_ms: 1e9,
            },
            &mut |_| {},
            &|| {
                clock.set(clock.get() + 1.0);
                clock.get()
            },
            &no_fetch,
        );
        let Response::Probed {
            events,
            events_per_sec,
        } = resp
        else {
            panic!("{resp:?}")
        };
        let expected: Vec<(f64, bool)> = full.iter().map(|e| (*e as f64, false)).collect();
        assert_eq!(events, expected);
        assert!(events_per_sec > 0.0);
    }
}

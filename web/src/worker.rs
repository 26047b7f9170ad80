//! The Web Worker: answers [`Request`]s by running the core.

use crate::protocol::{Request, Response};
use schedlab::experiment::{self, Experiment};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

const PROGRESS_EVERY_MS: f64 = 100.0;

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
                // At most ten progress messages a second: the page redraws on each.
                let mut last_ms = f64::NEG_INFINITY;
                handle(req, &mut |p| {
                    let now = js_sys::Date::now();
                    if now - last_ms >= PROGRESS_EVERY_MS {
                        last_ms = now;
                        post(&p);
                    }
                })
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
    let text = serde_json::to_string(&Response::Ready).expect("serialises");
    let _ = scope.post_message(&JsValue::from_str(&text));
}

/// The worker's work, kept free of web types so it is tested natively.
/// `progress` receives progress messages while a point runs.
pub fn handle(req: Request, progress: &mut dyn FnMut(Response)) -> Response {
    let result = match req {
        Request::RunPoint { experiment, index } => run_point(&experiment, index, progress),
    };
    result.unwrap_or_else(|e| Response::Failed {
        error: e.to_string(),
    })
}

fn run_point(
    json: &str,
    index: usize,
    progress: &mut dyn FnMut(Response),
) -> schedlab::Result<Response> {
    let exp = Experiment::from_json(json)?;
    let points = exp.points()?;
    let point = points
        .get(index)
        .ok_or_else(|| schedlab::Error::invalid(format!("the experiment has no point {index}")))?;
    let outcome = experiment::run_point(point, &mut |p| {
        progress(Response::Progress {
            index,
            now_ns: p.now_ns,
            end_ns: p.end_ns,
        });
        true
    })?;
    Ok(Response::Point { index, outcome })
}

#[cfg(test)]
mod tests {
    use super::*;

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
        );
        let expected = experiment::run_point(&exp.points().unwrap()[1], &mut |_| true).unwrap();
        assert_eq!(
            resp,
            Response::Point {
                index: 1,
                outcome: expected
            }
        );
        assert!(progress > 0);
        let missing = handle(
            Request::RunPoint {
                experiment: json,
                index: 9,
            },
            &mut |_| {},
        );
        assert!(matches!(missing, Response::Failed { error } if error.contains("no point 9")));
    }
}

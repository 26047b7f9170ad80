//! A pool of Web Workers running the core, each a `worker.js` that trunk
//! builds from `bin/worker.rs`. Messages wait until a worker says Ready.
//! Dropping the pool terminates its workers at once, even mid-point: that
//! is how a run is cancelled.

use crate::protocol::{Request, Response};
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Blob, BlobPropertyBag, MessageEvent, Url, Worker, WorkerOptions, WorkerType};

/// Trunk emits the worker next to index.html; resolving it against the page
/// keeps the site working from any sub-path.
const WORKER_SCRIPT: &str = "worker.js";

struct Member {
    worker: Worker,
    /// Requests sent before the worker was ready; None once it is.
    pending: Rc<RefCell<Option<Vec<String>>>>,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
}

pub struct Pool {
    members: Vec<Member>,
}

impl Pool {
    /// Starts `n` workers; `on_response(worker, response)` hears every reply.
    pub fn start(n: usize, on_response: Rc<dyn Fn(usize, Response)>) -> Result<Pool, String> {
        let url = loader_url()?;
        let mut members = Vec::with_capacity(n);
        for i in 0..n {
            let options = WorkerOptions::new();
            options.set_type(WorkerType::Module);
            let worker = Worker::new_with_options(&url, &options)
                .map_err(|e| format!("cannot start a Web Worker: {e:?}"))?;
            let pending: Rc<RefCell<Option<Vec<String>>>> = Rc::new(RefCell::new(Some(Vec::new())));
            let on_message = {
                let (worker, pending, on_response) =
                    (worker.clone(), pending.clone(), on_response.clone());
                Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
                    let text = e.data().as_string().unwrap_or_default();
                    let resp = serde_json::from_str::<Response>(&text).unwrap_or_else(|err| {
                        Response::Failed {
                            error: format!("unreadable worker message: {err}"),
                        }
                    });
                    if resp == Response::Ready {
                        for msg in pending.borrow_mut().take().unwrap_or_default() {
                            let _ = worker.post_message(&JsValue::from_str(&msg));
                        }
                    } else {
                        on_response(i, resp);
                    }
                })
            };
            worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
            members.push(Member {
                worker,
                pending,
                _on_message: on_message,
            });
        }
        Ok(Pool { members })
    }

    pub fn len(&self) -> usize {
        self.members.len()
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    pub fn send(&self, worker: usize, req: &Request) {
        let text = serde_json::to_string(req).expect("a request serialises");
        let m = &self.members[worker];
        match m.pending.borrow_mut().as_mut() {
            Some(queue) => queue.push(text),
            None => {
                let _ = m.worker.post_message(&JsValue::from_str(&text));
            }
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        for m in &self.members {
            m.worker.terminate();
        }
    }
}

/// A module script that loads trunk's worker glue and starts it.
fn loader_url() -> Result<String, String> {
    let href = web_sys::window()
        .and_then(|w| w.location().href().ok())
        .ok_or("no page location")?;
    let script = Url::new_with_base(WORKER_SCRIPT, &href)
        .map_err(|e| format!("bad worker URL: {e:?}"))?
        .href();
    let source = js_sys::Array::of1(&JsValue::from_str(&format!(
        "import init from '{script}'; await init();"
    )));
    let options = BlobPropertyBag::new();
    options.set_type("application/javascript");
    let blob = Blob::new_with_str_sequence_and_options(&source, &options)
        .map_err(|e| format!("cannot make the worker loader: {e:?}"))?;
    Url::create_object_url_with_blob(&blob).map_err(|e| format!("{e:?}"))
}

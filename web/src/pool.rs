//! A pool of Web Workers running the core, each the worker glue that trunk
//! builds from `bin/worker.rs`. Messages wait until a worker says Ready.
//! Dropping the pool terminates its workers at once, even mid-point: that
//! is how a run is cancelled.

use crate::protocol::{Request, Response};
use serde::de::DeserializeOwned;
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{MessageEvent, Url, Worker, WorkerOptions, WorkerType};

/// The worker's script is named by its content's hash (`tools/hash-assets`,
/// run by trunk after each build), so a cache can never serve an old worker
/// under a new name; index.html, which is never cached for long, names it
/// in this meta element. Resolved against the page, so any sub-path works.
const WORKER_START_META: &str = "meta[name=schedlab-worker-start]";

struct Member {
    worker: Worker,
    /// Requests sent before the worker was ready; None once it is.
    pending: Rc<RefCell<Option<Vec<String>>>>,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_error: Closure<dyn FnMut(web_sys::Event)>,
}

pub struct Pool {
    members: Vec<Member>,
}

impl Pool {
    /// Starts `n` workers; `on_response(worker, response)` hears every reply.
    /// `O` is how replies carry a point's outcome ([`Response`]).
    pub fn start<O: DeserializeOwned + 'static>(
        n: usize,
        on_response: Rc<dyn Fn(usize, Response<O>)>,
    ) -> Result<Pool, String> {
        let url = loader_url()?;
        let mut members = Vec::with_capacity(n);
        for i in 0..n {
            let options = WorkerOptions::new();
            options.set_type(WorkerType::Module);
            let worker = Worker::new_with_options(&url, &options)
                .map_err(|e| format!("cannot start a Web Worker: {}", js_words(&e)))?;
            let pending: Rc<RefCell<Option<Vec<String>>>> = Rc::new(RefCell::new(Some(Vec::new())));
            let on_message = {
                let (worker, pending, on_response) =
                    (worker.clone(), pending.clone(), on_response.clone());
                Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
                    let text = e.data().as_string().unwrap_or_default();
                    let resp = serde_json::from_str::<Response<O>>(&text).unwrap_or_else(|err| {
                        Response::Failed {
                            error: format!("unreadable worker message: {err}"),
                        }
                    });
                    match resp {
                        Response::Ready { build } => match same_build(&build) {
                            Ok(()) => {
                                for msg in pending.borrow_mut().take().unwrap_or_default() {
                                    let _ = worker.post_message(&JsValue::from_str(&msg));
                                }
                            }
                            // Its requests stay unsent: an old worker could give other numbers.
                            Err(error) => on_response(i, Response::Failed { error }),
                        },
                        resp => on_response(i, resp),
                    }
                })
            };
            worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
            // A worker that cannot load, or throws or aborts mid-point, ends
            // the run with what it said, rather than leaving it waiting.
            let on_error = {
                let on_response = on_response.clone();
                Closure::<dyn FnMut(web_sys::Event)>::new(move |e: web_sys::Event| {
                    e.prevent_default();
                    let said = e
                        .dyn_ref::<web_sys::ErrorEvent>()
                        .map(|e| e.message())
                        .filter(|m| !m.is_empty());
                    on_response(
                        i,
                        Response::Failed {
                            error: worker_failed(said.as_deref()),
                        },
                    );
                })
            };
            worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
            worker.set_onmessageerror(Some(on_error.as_ref().unchecked_ref()));
            members.push(Member {
                worker,
                pending,
                _on_message: on_message,
                _on_error: on_error,
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

/// The workers a run may use: the machine's cores.
pub fn hardware_concurrency() -> usize {
    web_sys::window()
        .map_or(1.0, |w| w.navigator().hardware_concurrency())
        .max(1.0) as usize
}

/// What the page says when a worker fails outside a point's own errors.
pub fn worker_failed(said: Option<&str>) -> String {
    match said {
        Some(m) => format!("a Web Worker stopped: {m}"),
        None => "a Web Worker stopped without saying why (it could not load its script, or ran out of memory); reload the page and run again".to_string(),
    }
}

/// Whether a worker of build `theirs` may serve this page; if not, what to say.
pub fn same_build(theirs: &str) -> Result<(), String> {
    if theirs == crate::BUILD_ID {
        Ok(())
    } else {
        Err(format!(
            "this page (build {}) and its Web Worker (build {theirs}) come from different builds of schedlab, as when a cache keeps an old copy; reload the page",
            crate::BUILD_ID
        ))
    }
}

/// The module a worker starts from (tools/hash-assets writes it beside
/// the worker's glue, which it imports and starts), resolved against the
/// page, so any sub-path works. A file of the site's own: the page's CSP
/// allows workers from nowhere else (no blob: loader).
fn loader_url() -> Result<String, String> {
    let href = web_sys::window()
        .and_then(|w| w.location().href().ok())
        .ok_or("no page location")?;
    let name = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.query_selector(WORKER_START_META).ok().flatten())
        .and_then(|m| m.get_attribute("content"))
        .ok_or_else(|| {
            "this page does not name its Web Worker (no <meta name=\"schedlab-worker-start\">); reload the page, or rebuild the site with scripts/build".to_string()
        })?;
    Url::new_with_base(&name, &href)
        .map(|u| u.href())
        .map_err(|e| {
            format!(
                "the worker's address {name} is not valid here: {}",
                js_words(&e)
            )
        })
}

/// A JavaScript exception's message, not its debug form.
pub fn js_words(e: &JsValue) -> String {
    e.dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| "the browser refused".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worker_of_another_build_is_refused_with_reload() {
        assert_eq!(same_build(crate::BUILD_ID), Ok(()));
        let err = same_build("0123456789abcdef").unwrap_err();
        assert!(err.contains("(build 0123456789abcdef)"), "{err}");
        assert!(err.ends_with("reload the page"), "{err}");
        assert_eq!(crate::BUILD_ID.len(), 16);
    }
}

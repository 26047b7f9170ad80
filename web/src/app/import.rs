//! Work on workloads that runs in a Web Worker, so that its code (the
//! benchmark generators, rt-app's dialect, scheduler traces) stays out of
//! the page's first load: a benchmark made a custom workload, a pasted
//! rt-app file, a trace file read through its object URL. Each asks a
//! worker of its own; the answer comes back as an edit, so a refusal is
//! shown at the field like any other.

use crate::pool::Pool;
use crate::protocol::{Request, Response};
use crate::state::{Edit, WorkloadEdit};
use gloo_timers::callback::Timeout;
use serde::de::IgnoredAny;
use std::cell::RefCell;
use std::rc::Rc;
use yew::Callback;

/// A workload's JSON and a line on what it holds, or why there is none.
type Answer = Result<(String, String), String>;

/// Sends `req` to a worker of its own; `reading` hears a trace's progress,
/// `answer` the workload or the error, after which the worker goes.
fn ask(req: Request, reading: Callback<u64>, answer: Callback<Answer>) {
    let slot: Rc<RefCell<Option<Pool>>> = Rc::new(RefCell::new(None));
    let reply = {
        let (slot, answer) = (slot.clone(), answer.clone());
        Rc::new(move |_, resp: Response<IgnoredAny>| {
            let result = match resp {
                Response::Reading { bytes } => return reading.emit(bytes),
                Response::Imported { workload, summary } => Ok((workload, summary)),
                Response::Failed { error } => Err(error),
                _ => return,
            };
            answer.emit(result);
            let slot = slot.clone();
            Timeout::new(0, move || drop(slot.borrow_mut().take())).forget();
        }) as Rc<dyn Fn(usize, Response<IgnoredAny>)>
    };
    match Pool::start(1, reply) {
        Ok(pool) => {
            pool.send(0, &req);
            *slot.borrow_mut() = Some(pool);
        }
        Err(error) => answer.emit(Err(error)),
    }
}

/// The experiment's benchmark as the custom workload it builds (`edit`
/// hears [`WorkloadEdit::ToCustom`]).
pub fn to_custom(experiment: String, edit: Callback<Edit>) {
    let answer = edit.reform(|a: Answer| WorkloadEdit::ToCustom(a.map(|(w, _)| w)).into());
    ask(Request::ToCustom { experiment }, Callback::noop(), answer);
}

/// Imports a pasted rt-app file; `edit` hears the result as
/// [`WorkloadEdit::RtApp`]. Empty text imports nothing.
pub fn rtapp(text: String, edit: Callback<Edit>) {
    if text.trim().is_empty() {
        let imported = Ok((String::new(), String::new()));
        edit.emit(WorkloadEdit::RtApp { text, imported }.into());
        return;
    }
    let answer = {
        let text = text.clone();
        edit.reform(move |imported: Answer| {
            WorkloadEdit::RtApp {
                text: text.clone(),
                imported,
            }
            .into()
        })
    };
    ask(Request::ImportRtapp { text }, Callback::noop(), answer);
}

/// Imports a scheduler trace file recorded on the machine of `experiment`
/// (its JSON) in a worker, which reads it through an object URL; `reading`
/// hears how far it has got (None when done), `edit` the result as
/// [`WorkloadEdit::Trace`].
pub fn trace(
    file: web_sys::File,
    experiment: String,
    edit: Callback<Edit>,
    reading: Callback<Option<String>>,
) {
    let name = file.name();
    let url = match web_sys::Url::create_object_url_with_blob(&file) {
        Ok(url) => url,
        Err(e) => {
            reading.emit(None);
            let error = format!(
                "{name}: cannot read the file: {}",
                crate::pool::js_words(&e)
            );
            edit.emit(
                WorkloadEdit::Trace {
                    imported: Err(error),
                }
                .into(),
            );
            return;
        }
    };
    let progress = {
        let (reading, name) = (reading.clone(), name.clone());
        Callback::from(move |bytes: u64| {
            reading.emit(Some(format!("Reading {name}: {} MB...", bytes >> 20)))
        })
    };
    let answer = {
        let url = url.clone();
        Callback::from(move |a: Answer| {
            reading.emit(None);
            let _ = web_sys::Url::revoke_object_url(&url);
            let imported = a.map_err(|e| format!("{name}: {e}"));
            edit.emit(WorkloadEdit::Trace { imported }.into());
        })
    };
    ask(Request::ImportTrace { url, experiment }, progress, answer);
}

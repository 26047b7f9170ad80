//! Imports that run in a Web Worker: the importer's code (rt-app's
//! dialect) stays out of the page's first load. The pasted text goes to a
//! worker of its own; its answer comes back as an edit, so a refusal is
//! shown at the field like any other.

use crate::pool::Pool;
use crate::protocol::{Request, Response};
use crate::state::{Edit, WorkloadEdit};
use gloo_timers::callback::Timeout;
use serde::de::IgnoredAny;
use std::cell::RefCell;
use std::rc::Rc;
use yew::Callback;

/// Imports a pasted rt-app file; `edit` hears the result as
/// [`WorkloadEdit::RtApp`]. Empty text imports nothing.
pub fn rtapp(text: String, edit: Callback<Edit>) {
    let done = |text: String, imported| WorkloadEdit::RtApp { text, imported }.into();
    if text.trim().is_empty() {
        edit.emit(done(text, Ok(String::new())));
        return;
    }
    let slot: Rc<RefCell<Option<Pool>>> = Rc::new(RefCell::new(None));
    let reply = {
        let (slot, text, edit) = (slot.clone(), text.clone(), edit.clone());
        Rc::new(move |_, resp: Response<IgnoredAny>| {
            let imported = match resp {
                Response::Imported { workload } => Ok(workload),
                Response::Failed { error } => Err(error),
                _ => return,
            };
            edit.emit(done(text.clone(), imported));
            // Its worker goes once this message is handled.
            let slot = slot.clone();
            Timeout::new(0, move || drop(slot.borrow_mut().take())).forget();
        }) as Rc<dyn Fn(usize, Response<IgnoredAny>)>
    };
    match Pool::start(1, reply) {
        Ok(pool) => {
            pool.send(0, &Request::ImportRtapp { text });
            *slot.borrow_mut() = Some(pool);
        }
        Err(error) => edit.emit(done(text, Err(error))),
    }
}

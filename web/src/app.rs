//! The root component.

use crate::protocol::{Json, Request, Response};
use crate::worker::CoreWorker;
use gloo_worker::{Spawnable, WorkerBridge};
use std::rc::Rc;
use yew::prelude::*;

/// Trunk emits the worker next to index.html; a relative path keeps the site
/// working when it is served from a sub-path.
const WORKER_PATH: &str = "worker.js";

#[function_component]
pub fn App() -> Html {
    let answer = use_state(|| None::<Response>);
    let ready = use_state(|| false);

    let bridge: Rc<WorkerBridge<CoreWorker>> = {
        let answer = answer.clone();
        use_memo((), move |_| {
            CoreWorker::spawner()
                .callback(move |resp| answer.set(Some(resp)))
                .encoding::<Json>()
                .spawn(WORKER_PATH)
        })
    };

    let ask = {
        let bridge = bridge.clone();
        Callback::from(move |_| {
            bridge.send(Request::Describe {
                machine: "ivb-ep-2s".into(),
                era: "4.15".into(),
            })
        })
    };

    {
        // One round trip through the worker at start, then mark the app ready.
        let ask = ask.clone();
        let ready = ready.clone();
        use_effect_with((), move |_| {
            ask.emit(());
            ready.set(true);
        });
    }

    let answer_text = match &*answer {
        None => "waiting for the worker…".to_string(),
        Some(Response::Described { summary, levels }) => {
            format!("{summary}; 4.15 domains: {}", levels.join(" > "))
        }
        Some(Response::Failed { error }) => format!("error: {error}"),
    };

    html! {
        <main id="app" data-ready={ready.to_string()}>
            <h1>{ "schedlab" }</h1>
            <p class="tagline">{ "What the Linux scheduler's wakeup and load-balancing policies do to real workloads." }</p>
            <button id="run" onclick={ask.reform(|_| ())}>{ "Run" }</button>
            <p id="worker-answer" data-answered={answer.is_some().to_string()}>{ answer_text }</p>
        </main>
    }
}

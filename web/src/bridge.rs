//! The channel between the page's two wasm modules: the editor (`bin/app.rs`,
//! loaded first) and the runs module (`bin/runs.rs`, loaded by the first
//! Run). Each message is a JSON string in the `detail` of a DOM
//! `CustomEvent` on the window: [`TO_RUNS`] carries [`ToRuns`], [`TO_EDITOR`]
//! carries [`ToEditor`]. The two modules share no memory; both are built
//! from this crate, so both read these types the same way, and the runs
//! module says its [`crate::BUILD_ID`] first ([`ToEditor::Ready`]) so that a
//! cache pairing a new page with an old module is told ("reload").

use serde::{Deserialize, Serialize};

/// The event the editor sends on.
pub const TO_RUNS: &str = "schedlab-to-runs";
/// The event the runs module sends on.
pub const TO_EDITOR: &str = "schedlab-to-editor";
/// The element the runs module draws into: the middle of the page's frame
/// ([`crate::app::frame`]), whose classes the editor sets and whose
/// inside it never touches.
pub const HOST_ID: &str = "results-host";

/// The editor's requests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ToRuns {
    /// Run `experiment` (its JSON, already validated by the editor) as run
    /// number `generation`.
    Start { generation: u64, experiment: String },
    /// Stop the run at once.
    Cancel,
    /// The pinned run to draw the results against (its id in the
    /// history, [`crate::history::Record::id`]), or none.
    Baseline(Option<u64>),
}

/// The runs module's news.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ToEditor {
    /// Loaded, listening, and of this build.
    Ready { build: String },
    /// The run's state, after every change.
    Status(RunStatus),
    /// A finished run was added to the history in localStorage
    /// ([`crate::history`]): the editor reads it again. With what could
    /// not be kept (the storage full or disabled), in words.
    Kept(Option<String>),
}

/// What the editor shows of a run: the status line, the Run button, and
/// whether results are on the page (and dimmed while the next run goes).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunStatus {
    /// Which run this is (0: none yet).
    pub generation: u64,
    pub running: bool,
    /// Points done, of `points`.
    pub done: usize,
    pub points: usize,
    /// Overall progress, 0..=1.
    pub fraction: f64,
    pub workers: usize,
    /// When the run started (ms since the epoch, the page's clock).
    pub started_ms: f64,
    pub error: Option<String>,
    pub cancelled: bool,
    /// This run's results are in.
    pub finished: bool,
    /// Results (this run's, or the last finished run's) are on the page.
    pub shown: bool,
}

impl RunStatus {
    /// "about 12 s left" at the rate so far, `now_ms` on the page's clock.
    pub fn time_left(&self, now_ms: f64) -> Option<String> {
        let elapsed = (now_ms - self.started_ms) / 1000.0;
        schedlab::estimate::time_left(elapsed, self.fraction)
            .map(|s| format!("{} left", schedlab::estimate::about(s)))
    }
}

/// Sends `detail` (a message's JSON) as event `name` on the window.
pub fn send(name: &str, detail: &str) {
    let init = web_sys::CustomEventInit::new();
    init.set_detail(&wasm_bindgen::JsValue::from_str(detail));
    if let (Some(w), Ok(e)) = (
        web_sys::window(),
        web_sys::CustomEvent::new_with_event_init_dict(name, &init),
    ) {
        let _ = w.dispatch_event(&e);
    }
}

/// Sends `msg` to the editor.
pub fn to_editor(msg: &ToEditor) {
    send(
        TO_EDITOR,
        &serde_json::to_string(msg).expect("a message serialises"),
    );
}

/// Calls `on` with the JSON of every event `name` on the window, while the
/// listener returned lives.
pub fn listen(name: &'static str, on: impl Fn(String) + 'static) -> gloo_events::EventListener {
    let window = web_sys::window().expect("a window");
    gloo_events::EventListener::new(&window, name, move |e| {
        use wasm_bindgen::JsCast;
        if let Some(text) = e
            .dyn_ref::<web_sys::CustomEvent>()
            .and_then(|e| e.detail().as_string())
        {
            on(text);
        }
    })
}

/// Whether a runs module of build `theirs` may serve this page; if not,
/// what to say.
pub fn same_build(theirs: &str) -> Result<(), String> {
    if theirs == crate::BUILD_ID {
        Ok(())
    } else {
        Err(format!(
            "this page (build {}) and its runs module (build {theirs}) come from different builds of schedlab, as when a cache keeps an old copy; reload the page",
            crate::BUILD_ID
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip_as_json() {
        let exp = schedlab::presets::get("kvm-pipe-test-pinning").unwrap();
        let msgs = [
            ToEditor::Ready {
                build: crate::BUILD_ID.into(),
            },
            ToEditor::Status(RunStatus {
                generation: 3,
                running: true,
                points: 2,
                fraction: 0.25,
                ..RunStatus::default()
            }),
            ToEditor::Kept(None),
            ToEditor::Kept(Some("full".into())),
        ];
        for m in msgs {
            let text = serde_json::to_string(&m).unwrap();
            assert_eq!(serde_json::from_str::<ToEditor>(&text).unwrap(), m);
        }
        for m in [
            ToRuns::Start {
                generation: 1,
                experiment: exp.to_json(),
            },
            ToRuns::Cancel,
            ToRuns::Baseline(Some(4)),
        ] {
            let text = serde_json::to_string(&m).unwrap();
            assert_eq!(serde_json::from_str::<ToRuns>(&text).unwrap(), m);
        }
    }

    #[test]
    fn a_runs_module_of_another_build_is_refused_with_reload() {
        assert_eq!(same_build(crate::BUILD_ID), Ok(()));
        let err = same_build("0123456789abcdef").unwrap_err();
        assert!(
            err.contains("runs module (build 0123456789abcdef)"),
            "{err}"
        );
        assert!(err.ends_with("reload the page"), "{err}");
    }
}

//! The editor's side of the runs module ([`crate::runs`]), as a hook. The
//! module is fetched (a dynamic `import()` of the hashed glue that
//! index.html names in `<meta name="schedlab-runs">`) by the first Run,
//! never before; requests made while it loads wait in a queue until it
//! says Ready with this page's build. The run's state seen here
//! ([`RunStatus`]) is the module's, mirrored message by message.

use crate::bridge::{self, RunStatus, ToEditor, ToRuns};
use crate::state::Editor;
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use yew::prelude::*;

/// The runs module's glue, named by its content's hash (`tools/hash-assets`).
const RUNS_META: &str = "meta[name=schedlab-runs]";

#[derive(Default)]
enum Load {
    #[default]
    Idle,
    Loading,
    Ready,
    /// Of another build: every Run says so.
    Refused(String),
}

#[derive(Default)]
struct Channel {
    load: Load,
    /// Messages waiting for Ready.
    queue: Vec<String>,
    /// The baseline message, sent again on Ready.
    baseline: Option<String>,
    /// The run's state: what [`Runs::status`] shows, kept here too since
    /// the listener's copy of a state handle would not see later values.
    status: RunStatus,
    /// Runs kept, as [`Runs::kept`].
    kept: u64,
}

/// How many runs the runs module has added to the history, and what it
/// could not keep at the last, in words.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KeptRuns {
    pub count: u64,
    pub trouble: Option<String>,
}

/// The run as the editor sees it, and the way to the runs module.
#[derive(Clone)]
pub struct Runs {
    pub status: UseStateHandle<RunStatus>,
    /// What the runs module has added to the history.
    pub kept: UseStateHandle<KeptRuns>,
    channel: Rc<RefCell<Channel>>,
}

#[hook]
pub fn use_runs() -> Runs {
    let runs = Runs {
        status: use_state(RunStatus::default),
        kept: use_state(KeptRuns::default),
        channel: use_mut_ref(Channel::default),
    };
    {
        let runs = runs.clone();
        use_effect_with((), move |_| {
            let listener =
                bridge::listen(bridge::TO_EDITOR, move |text| {
                    match serde_json::from_str::<ToEditor>(&text) {
                        Ok(msg) => runs.heard(msg),
                        Err(e) => {
                            runs.fail(format!("unreadable message from the runs module: {e}"))
                        }
                    }
                });
            move || drop(listener)
        });
    }
    runs
}

impl Runs {
    /// The run's state now.
    pub fn current(&self) -> RunStatus {
        self.channel.borrow().status.clone()
    }

    pub fn running(&self) -> bool {
        self.channel.borrow().status.running
    }

    fn set_status(&self, s: RunStatus) {
        self.channel.borrow_mut().status = s.clone();
        self.status.set(s);
    }

    /// Whether `editor`'s experiment can be run now: valid, and no run going.
    pub fn can_start(&self, editor: &Editor) -> bool {
        editor.is_valid() && !self.running()
    }

    /// Starts a run of `editor`'s experiment if [`Runs::can_start`];
    /// returns whether it did. The first run fetches the runs module.
    pub fn start(&self, editor: &Editor) -> bool {
        if !self.can_start(editor) {
            return false;
        }
        let now = self.current();
        let generation = now.generation + 1;
        self.set_status(RunStatus {
            generation,
            running: true,
            started_ms: js_sys::Date::now(),
            shown: now.shown,
            ..RunStatus::default()
        });
        self.send(&ToRuns::Start {
            generation,
            experiment: serde_json::to_string(&editor.experiment)
                .expect("an experiment serialises"),
        });
        true
    }

    /// Stops the run at once.
    pub fn cancel(&self) {
        if !self.running() {
            return;
        }
        let loaded = matches!(self.channel.borrow().load, Load::Ready);
        if loaded {
            self.send(&ToRuns::Cancel);
        } else {
            // Not started yet: it never will be.
            self.channel.borrow_mut().queue.clear();
            self.set_status(RunStatus {
                running: false,
                cancelled: true,
                ..self.current()
            });
        }
    }

    /// The pinned run (its id in the history) to draw the results against.
    pub fn set_baseline(&self, id: Option<u64>) {
        let text = serde_json::to_string(&ToRuns::Baseline(id)).expect("serialises");
        let mut ch = self.channel.borrow_mut();
        if ch.baseline.as_ref() == Some(&text) {
            return;
        }
        ch.baseline = Some(text.clone());
        if matches!(ch.load, Load::Ready) {
            drop(ch);
            bridge::send(bridge::TO_RUNS, &text);
        }
    }

    fn send(&self, msg: &ToRuns) {
        let text = serde_json::to_string(msg).expect("a message serialises");
        let mut ch = self.channel.borrow_mut();
        match &ch.load {
            Load::Ready => {
                drop(ch);
                bridge::send(bridge::TO_RUNS, &text);
            }
            Load::Refused(why) => {
                let why = why.clone();
                drop(ch);
                self.fail(why);
            }
            Load::Loading => ch.queue.push(text),
            Load::Idle => {
                ch.queue.push(text);
                ch.load = Load::Loading;
                drop(ch);
                if let Err(e) = self.load() {
                    self.load_failed(e);
                }
            }
        }
    }

    /// Fetches and starts the runs module; it says Ready when it listens.
    fn load(&self) -> Result<(), String> {
        let promise = import_and_start(&module_url()?);
        let runs = self.clone();
        let on_error =
            Closure::<dyn FnMut(JsValue)>::once(move |e: JsValue| runs.load_failed(js_words(&e)));
        let _ = promise.catch(&on_error);
        // Called at most once, by the browser; it may never be.
        on_error.forget();
        Ok(())
    }

    fn load_failed(&self, why: String) {
        {
            let mut ch = self.channel.borrow_mut();
            ch.load = Load::Idle;
            ch.queue.clear();
        }
        self.fail(format!(
            "the page's runs module could not load ({why}); reload the page"
        ));
    }

    /// Ends the run shown with `error`.
    fn fail(&self, error: String) {
        self.set_status(RunStatus {
            running: false,
            error: Some(error),
            ..self.current()
        });
    }

    fn heard(&self, msg: ToEditor) {
        match msg {
            ToEditor::Ready { build } => match bridge::same_build(&build) {
                Ok(()) => {
                    let (baseline, queue) = {
                        let mut ch = self.channel.borrow_mut();
                        ch.load = Load::Ready;
                        (ch.baseline.clone(), std::mem::take(&mut ch.queue))
                    };
                    for text in baseline.into_iter().chain(queue) {
                        bridge::send(bridge::TO_RUNS, &text);
                    }
                }
                // Its requests stay unsent: an old module could give other numbers.
                Err(error) => {
                    {
                        let mut ch = self.channel.borrow_mut();
                        ch.load = Load::Refused(error.clone());
                        ch.queue.clear();
                    }
                    self.fail(error);
                }
            },
            // A late word on an earlier run does not undo a newer one.
            ToEditor::Status(s) if s.generation >= self.current().generation => self.set_status(s),
            ToEditor::Status(_) => {}
            ToEditor::Kept(trouble) => {
                let count = {
                    let mut ch = self.channel.borrow_mut();
                    ch.kept += 1;
                    ch.kept
                };
                self.kept.set(KeptRuns { count, trouble });
            }
        }
    }
}

// A module of its own (wasm-bindgen writes it beside the glue), not a
// Function built from a string: the page's CSP allows no eval.
#[wasm_bindgen::prelude::wasm_bindgen(
    inline_js = "export function import_and_start(url) { return import(url).then((m) => m.default()); }"
)]
extern "C" {
    /// Imports the runs module at `url` and starts it (its default export).
    fn import_and_start(url: &str) -> js_sys::Promise;
}

/// The runs module's glue, resolved against the page (any sub-path works).
fn module_url() -> Result<String, String> {
    let window = web_sys::window().ok_or("no window")?;
    let href = window.location().href().map_err(|e| js_words(&e))?;
    let name = window
        .document()
        .and_then(|d| d.query_selector(RUNS_META).ok().flatten())
        .and_then(|m| m.get_attribute("content"))
        .ok_or("this page does not name its runs module (no <meta name=\"schedlab-runs\">); rebuild the site with scripts/build")?;
    web_sys::Url::new_with_base(&name, &href)
        .map(|u| u.href())
        .map_err(|e| js_words(&e))
}

/// A JavaScript exception's message, not its debug form.
fn js_words(e: &JsValue) -> String {
    e.dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| "the browser refused".to_string())
}

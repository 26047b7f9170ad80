//! The link and the history, kept in step with the editor, as hooks. The
//! page opens the link's experiment ([`use_linked_editor`]); edits rewrite
//! the fragment after [`FRAGMENT_DEBOUNCE_MS`] of quiet and keep the
//! experiment locally; a run freezes its history entry, so the next edit
//! pushes a new one and Back returns to what ran; Back and Forward load the
//! entry's experiment ([`use_link_sync`]).

use crate::link;
use crate::state::{Edit, Editor};
use gloo_events::EventListener;
use gloo_timers::callback::Timeout;
use schedlab::codec;
use yew::prelude::*;

/// How long the fragment waits for typing to pause before it is rewritten.
pub const FRAGMENT_DEBOUNCE_MS: u32 = 300;

/// The editor, opened from the page's link (else the last experiment, else
/// the default), and whether the link asks to run on open.
#[hook]
pub fn use_linked_editor() -> (UseReducerHandle<Editor>, bool) {
    let run_on_open = use_mut_ref(|| false);
    let editor = {
        let run_on_open = run_on_open.clone();
        use_reducer(move || {
            let opened = link::open(&link::hash());
            *run_on_open.borrow_mut() = opened.run;
            opened.editor
        })
    };
    let run = *run_on_open.borrow();
    (editor, run)
}

/// Keeps the link in step with `editor`. `start` starts a run and says
/// whether it did; the callback returned is Run as the page offers it: a
/// run that starts gets its own history entry. Runs on open if `run_on_open`.
#[hook]
pub fn use_link_sync(
    editor: &UseReducerHandle<Editor>,
    run_on_open: bool,
    start: Callback<(), bool>,
) -> Callback<()> {
    // The history entry holds a run's experiment: the next edit gets a new one.
    let frozen = use_mut_ref(|| false);
    let fragment_timer = use_mut_ref(|| None::<Timeout>);
    let on_run = {
        let (editor, frozen, fragment_timer) =
            (editor.clone(), frozen.clone(), fragment_timer.clone());
        Callback::from(move |()| {
            if start.emit(()) {
                fragment_timer.borrow_mut().take();
                let push = *frozen.borrow();
                link::set_fragment(&codec::fragment(&editor.experiment, false), push);
                *frozen.borrow_mut() = true;
            }
        })
    };
    {
        let on_run = on_run.clone();
        use_effect_with((), move |_| {
            if run_on_open {
                on_run.emit(());
            }
        });
    }
    // Edits rewrite the fragment (debounced) and keep the experiment locally.
    {
        let (frozen, fragment_timer) = (frozen.clone(), fragment_timer.clone());
        use_effect_with(editor.experiment.clone(), move |exp| {
            let exp = exp.clone();
            let timer = Timeout::new(FRAGMENT_DEBOUNCE_MS, move || {
                let push = *frozen.borrow();
                if link::set_fragment(&codec::fragment(&exp, false), push) {
                    *frozen.borrow_mut() = false;
                }
                // An embedded copy on a docs page must not replace the
                // user's own last experiment.
                if !link::is_embed() {
                    link::keep_last(&exp);
                }
            });
            *fragment_timer.borrow_mut() = Some(timer);
        });
    }
    // Back and Forward restore the experiment of that history entry.
    {
        let editor = editor.clone();
        use_effect_with((), move |_| {
            let window = web_sys::window().expect("a window");
            let listener = EventListener::new(&window, "popstate", move |_| {
                if let Ok(l) = codec::parse_fragment(&link::hash()) {
                    *frozen.borrow_mut() = true;
                    editor.dispatch(Edit::Load(Box::new(l.experiment)));
                }
            });
            move || drop(listener)
        });
    }
    on_run
}

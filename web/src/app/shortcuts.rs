//! The keyboard shortcuts, as a hook: one keydown listener on the window for
//! the page's life, calling the latest callback the page gave it.

use gloo_events::{EventListener, EventListenerOptions};
use wasm_bindgen::JsCast;
use yew::prelude::*;

/// What a key press asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shortcut {
    /// Ctrl+Enter (or Cmd+Enter), even while typing.
    Run,
    Escape,
    /// `?`, unless typing.
    Help,
    /// `T`, unless typing.
    Theme,
}

fn shortcut(e: &web_sys::KeyboardEvent) -> Option<Shortcut> {
    let typing = e
        .target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .is_some_and(|el| matches!(el.tag_name().as_str(), "INPUT" | "TEXTAREA" | "SELECT"));
    let plain = !(e.ctrl_key() || e.meta_key() || e.alt_key());
    match e.key().as_str() {
        "Enter" if e.ctrl_key() || e.meta_key() => Some(Shortcut::Run),
        "Escape" => Some(Shortcut::Escape),
        "?" if plain && !typing => Some(Shortcut::Help),
        "t" | "T" if plain && !typing => Some(Shortcut::Theme),
        _ => None,
    }
}

/// Calls `on_key` (as given at the latest render) for every shortcut pressed.
#[hook]
pub fn use_shortcuts(on_key: Callback<Shortcut>) {
    let latest = use_mut_ref(Callback::<Shortcut>::noop);
    *latest.borrow_mut() = on_key;
    use_effect_with((), move |_| {
        let window = web_sys::window().expect("a window");
        let options = EventListenerOptions::enable_prevent_default();
        let listener = EventListener::new_with_options(&window, "keydown", options, move |e| {
            let Some(e) = e.dyn_ref::<web_sys::KeyboardEvent>() else {
                return;
            };
            if let Some(s) = shortcut(e) {
                e.prevent_default();
                latest.borrow().emit(s);
            }
        });
        move || drop(listener)
    });
}

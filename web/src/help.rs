//! The theme (following the system unless the user picks light or dark,
//! remembered) and the `?` overlay listing the keyboard shortcuts.

use crate::link::storage;
use yew::prelude::*;

const THEME_KEY: &str = "schedlab.theme";

pub const SHORTCUTS: [(&str, &str); 5] = [
    ("Ctrl+Enter", "run the experiment"),
    ("Escape", "cancel a run, or close this help"),
    ("?", "show or hide this help"),
    (
        "Tab / Shift+Tab",
        "move between fields; Space toggles a flag",
    ),
    ("T", "switch the theme (system, light, dark)"),
];

/// The theme names in toggle order; "system" follows prefers-color-scheme.
pub const THEMES: [&str; 3] = ["system", "light", "dark"];

pub fn saved_theme() -> &'static str {
    let saved = storage().and_then(|s| s.get_item(THEME_KEY).ok().flatten());
    THEMES
        .into_iter()
        .find(|t| Some(*t) == saved.as_deref())
        .unwrap_or("system")
}

/// Applies `theme` to the page (the `data-theme` of <html>) and remembers it.
pub fn apply_theme(theme: &str) {
    if let Some(root) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element())
    {
        let _ = root.set_attribute("data-theme", theme);
    }
    if let Some(s) = storage() {
        let _ = s.set_item(THEME_KEY, theme);
    }
}

pub fn next_theme(theme: &str) -> &'static str {
    let i = THEMES.iter().position(|t| *t == theme).unwrap_or(0);
    THEMES[(i + 1) % THEMES.len()]
}

#[derive(Properties, PartialEq)]
pub struct Props {
    pub on_close: Callback<()>,
}

#[function_component]
pub fn HelpOverlay(props: &Props) -> Html {
    let close = props.on_close.reform(|_| ());
    html! {
        <div class="overlay" id="help" role="dialog" aria-modal="true" aria-labelledby="help-h">
            <div class="overlay-box">
                <h2 id="help-h">{ "Keyboard shortcuts" }</h2>
                <dl>
                    { for SHORTCUTS.iter().map(|(k, v)| html! { <><dt><kbd>{ *k }</kbd></dt><dd>{ *v }</dd></> }) }
                </dl>
                <p class="hint">{ "Every setting lives in the URL: copy the link to share exactly this experiment." }</p>
                <button id="help-close" onclick={close}>{ "Close" }</button>
            </div>
        </div>
    }
}

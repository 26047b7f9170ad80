//! The URL is the experiment: reading the fragment on open (falling back to
//! the last experiment kept in localStorage, then the default, with a
//! message when a link cannot be opened), writing it back as the user edits
//! and runs, and the embed-mode URL.

use crate::state::{default_experiment, Editor};
use schedlab::codec;
use schedlab::experiment::Experiment;
use wasm_bindgen::JsValue;

const LAST_KEY: &str = "schedlab.last";

/// What the page opens with.
pub struct Opened {
    pub editor: Editor,
    pub run: bool,
}

fn window() -> Option<web_sys::Window> {
    web_sys::window()
}

pub fn hash() -> String {
    window()
        .and_then(|w| w.location().hash().ok())
        .unwrap_or_default()
}

/// Whether the page was opened in embed mode (`?embed`).
pub fn is_embed() -> bool {
    window()
        .and_then(|w| w.location().search().ok())
        .and_then(|s| web_sys::UrlSearchParams::new_with_str(&s).ok())
        .is_some_and(|p| p.has("embed"))
}

/// The page's localStorage, if the browser allows it.
pub(crate) fn storage() -> Option<web_sys::Storage> {
    window().and_then(|w| w.local_storage().ok().flatten())
}

/// The experiment the user last had, if one was kept; if it no longer
/// decodes, it is set aside (a later build may read it) and the words
/// say so.
fn last() -> Result<Option<Experiment>, String> {
    let Some(s) = storage() else {
        return Ok(None);
    };
    let Some(code) = s.get_item(LAST_KEY).ok().flatten() else {
        return Ok(None);
    };
    codec::decode(&code).map(Some).map_err(|e| {
        let aside = format!("{LAST_KEY}.unreadable");
        let kept = s.set_item(&aside, &code).is_ok();
        format!(
            "Your last experiment, kept in this browser, could not be read ({e}){}.",
            if kept {
                format!("; it is set aside in localStorage under \"{aside}\"")
            } else {
                String::new()
            }
        )
    })
}

pub fn keep_last(exp: &Experiment) {
    if let Some(s) = storage() {
        // A full or disabled storage only loses the convenience.
        let _ = s.set_item(LAST_KEY, &codec::encode(exp));
    }
}

/// Opens the fragment `hash`, else the last experiment, else the default.
pub fn open(hash: &str) -> Opened {
    // The last experiment, else the default, with a word if the last was lost.
    let fallback = || match last() {
        Ok(last) => (last.unwrap_or_else(default_experiment), None),
        Err(why) => (default_experiment(), Some(why)),
    };
    if hash.trim_start_matches('#').is_empty() {
        let (exp, notice) = fallback();
        let mut editor = Editor::new(exp);
        editor.notice = notice.map(|lost| format!("{lost} Showing the default experiment."));
        return Opened { editor, run: false };
    }
    match codec::parse_fragment(hash) {
        Ok(link) => Opened {
            editor: Editor::new(link.experiment),
            run: link.run,
        },
        Err(e) => {
            let (exp, lost) = fallback();
            let mut editor = Editor::new(exp);
            editor.notice = Some(match lost {
                None => format!(
                    "This link could not be opened: {e}. Showing your last experiment instead."
                ),
                Some(lost) => format!(
                    "This link could not be opened: {e}. {lost} Showing the default experiment."
                ),
            });
            Opened { editor, run: false }
        }
    }
}

/// Sets the fragment: a new history entry when `push`, else in place.
/// Returns whether the URL changed.
pub fn set_fragment(fragment: &str, push: bool) -> bool {
    let Some(history) = window().and_then(|w| w.history().ok()) else {
        return false;
    };
    let url = format!("#{fragment}");
    if hash() == url {
        return false;
    }
    let done = if push {
        history.push_state_with_url(&JsValue::NULL, "", Some(&url))
    } else {
        history.replace_state_with_url(&JsValue::NULL, "", Some(&url))
    };
    // Browsers refuse only absurdly long URLs; the page goes on either way.
    done.is_ok()
}

/// The page's address without query or fragment.
fn base_url() -> String {
    window()
        .and_then(|w| {
            let l = w.location();
            Some(format!("{}{}", l.origin().ok()?, l.pathname().ok()?))
        })
        .unwrap_or_default()
}

/// A link to the full playground with `exp`.
pub fn share_url(exp: &Experiment) -> String {
    format!("{}#{}", base_url(), codec::fragment(exp, false))
}

/// A link to the embed view of `exp`.
pub fn embed_url(exp: &Experiment) -> String {
    format!("{}?embed#{}", base_url(), codec::fragment(exp, false))
}

/// The HTML a docs author pastes to embed `exp`.
pub fn iframe_snippet(exp: &Experiment) -> String {
    format!(
        "<iframe src=\"{}\" width=\"720\" height=\"480\" style=\"border:1px solid #ccc;border-radius:8px\" loading=\"lazy\" title=\"schedlab: {}\"></iframe>",
        embed_url(exp).replace('"', "&quot;"),
        exp.name.replace('"', "&quot;").replace('<', "&lt;")
    )
}

//! The page's frame: `<main id="app">` holding three siblings, the editor's
//! top part, the results host ([`bridge::HOST_ID`]) and the editor's bottom
//! part. The editor is a Yew app rooted at the top part with a portal into
//! the bottom one; the runs module is a second Yew app in the host. Neither
//! root is inside the other, so each app hears only the events of its own
//! elements. (Nested, the outer app would see the inner one's events, and
//! two Yew copies in two wasm modules number their roots alike, so the
//! outer could take the inner's clicks for its own.)
//!
//! The editor dresses the frame's own elements (ready, embed, the results'
//! classes) from an effect, as it renders none of them.

use crate::bridge;
use web_sys::{Document, Element};

/// The frame's outer element; `data-ready="true"` once the editor listens.
pub const FRAME_ID: &str = "app";
/// Where the editor is mounted: everything above the results.
pub const TOP_ID: &str = "editor-top";
/// The editor's portal: everything below the results.
pub const BOTTOM_ID: &str = "editor-bottom";

fn document() -> Option<Document> {
    web_sys::window()?.document()
}

/// The frame's element `id`, if the page has it.
pub fn element(id: &str) -> Option<Element> {
    document()?.get_element_by_id(id)
}

/// Builds the frame in the body (unless there) and returns the editor's root.
pub fn build() -> Option<Element> {
    if let Some(top) = element(TOP_ID) {
        return Some(top);
    }
    let doc = document()?;
    let frame = doc.create_element("main").ok()?;
    frame.set_id(FRAME_ID);
    frame.set_attribute("data-ready", "false").ok()?;
    for id in [TOP_ID, bridge::HOST_ID, BOTTOM_ID] {
        let part = doc.create_element("div").ok()?;
        part.set_id(id);
        if id != bridge::HOST_ID {
            // The parts lay out as if their children were the frame's own.
            part.set_attribute("class", "editor-part").ok()?;
        }
        frame.append_child(&part).ok()?;
    }
    doc.body()?.append_child(&frame).ok()?;
    element(TOP_ID)
}

/// How the frame's own elements look after a render of the editor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dress {
    pub embed: bool,
    /// The results shown are dimmed while the next run goes.
    pub stale: bool,
    pub results_hidden: bool,
}

/// Sets the frame's attributes to `dress`, and says the editor is ready.
pub fn apply(dress: &Dress) {
    if let Some(frame) = element(FRAME_ID) {
        let _ = frame.set_attribute("class", if dress.embed { "embed" } else { "" });
        let _ = frame.set_attribute("data-ready", "true");
    }
    if let Some(host) = element(bridge::HOST_ID) {
        let class = match (dress.embed, dress.stale) {
            (true, true) => "embed-results stale",
            (true, false) => "embed-results",
            (false, true) => "stale",
            (false, false) => "",
        };
        let _ = host.set_attribute("class", class);
        if dress.results_hidden {
            let _ = host.set_attribute("hidden", "");
        } else {
            let _ = host.remove_attribute("hidden");
        }
    }
}

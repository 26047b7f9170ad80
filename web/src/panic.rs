//! What a panic leaves behind: one console line naming it as schedlab's
//! and where (the browser tests and the fuzzer listen for it) and, in the
//! page, a banner saying so, instead of a page that silently stops
//! answering. A worker has no page: its failure reaches the page through
//! the pool's error handler, which says so there.

/// The text every panic's console line starts with.
pub const PANIC_PREFIX: &str = "schedlab panicked";

/// Installs the hook for `part` ("editor", "runs module", "worker").
pub fn install(part: &'static str) {
    std::panic::set_hook(Box::new(move |info| {
        let line = format!("{PANIC_PREFIX} in the {part}: {info}");
        web_sys::console::error_1(&line.as_str().into());
        let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
            return;
        };
        let (Some(body), Ok(banner)) = (doc.body(), doc.create_element("div")) else {
            return;
        };
        banner.set_id("panic");
        let _ = banner.set_attribute("role", "alert");
        banner.set_text_content(Some(&format!(
            "schedlab hit a bug and stopped ({line}). Reload the page to go on; your experiment is in the link. Please report it with the link."
        )));
        let _ = body.prepend_with_node_1(&banner);
    }));
}

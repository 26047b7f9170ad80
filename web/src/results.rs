//! The results of a run: the commit-style table, the tools' own output, the
//! counters, and the exact results JSON to copy or download.

use crate::run::RunResults;
use std::rc::Rc;
use wasm_bindgen::JsCast;
use wasm_bindgen::JsValue;
use web_sys::{Blob, BlobPropertyBag, HtmlAnchorElement, Url};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub results: Rc<RunResults>,
    /// File names start with this (the experiment's name).
    pub name: String,
}

/// Offers `text` as a file download.
pub fn download(file: &str, mime: &str, text: &str) -> Result<(), JsValue> {
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let options = BlobPropertyBag::new();
    options.set_type(mime);
    let blob = Blob::new_with_str_sequence_and_options(&parts, &options)?;
    let url = Url::create_object_url_with_blob(&blob)?;
    let document = web_sys::window()
        .and_then(|w| w.document())
        .ok_or("no document")?;
    let a: HtmlAnchorElement = document.create_element("a")?.dyn_into()?;
    a.set_href(&url);
    a.set_download(file);
    a.click();
    Url::revoke_object_url(&url)
}

pub fn copy_to_clipboard(text: &str) {
    if let Some(w) = web_sys::window() {
        // The promise's outcome is the browser's to report; nothing to do here.
        let _ = w.navigator().clipboard().write_text(text);
    }
}

#[function_component]
pub fn ResultsView(props: &Props) -> Html {
    let r = &props.results;
    let copied = use_state(|| false);
    let copy = {
        let (json, copied) = (r.json.clone(), copied.clone());
        Callback::from(move |_| {
            copy_to_clipboard(&json);
            copied.set(true);
        })
    };
    let save = |ext: &'static str, mime: &'static str, text: String| {
        let file = format!("{}.{ext}", props.name);
        Callback::from(move |_| {
            let _ = download(&file, mime, &text);
        })
    };
    let variants = &r.results.variants;
    let counters: Vec<&String> = {
        let mut names: Vec<&String> = r.results.counters.values().flat_map(|m| m.keys()).collect();
        names.sort_unstable();
        names.dedup();
        names
    };
    html! {
        <section class="panel results" id="results" aria-labelledby="results-h">
            <h2 id="results-h">{ "Results" }</h2>
            <pre id="results-table">{ r.table.clone() }</pre>
            <details>
                <summary>{ "Tool output" }</summary>
                <pre id="results-text">{ r.text.clone() }</pre>
            </details>
            <details>
                <summary>{ format!("Counters ({})", counters.len()) }</summary>
                <div class="table-scroll">
                    <table id="counters" class="counters">
                        <thead><tr><th>{ "counter" }</th>{ for variants.iter().map(|v| html! { <th>{ v }</th> }) }</tr></thead>
                        <tbody>
                            { for counters.iter().map(|c| html! {
                                <tr>
                                    <th scope="row"><code>{ (*c).clone() }</code></th>
                                    { for variants.iter().map(|v| html! {
                                        <td>{ r.results.counters.get(v).and_then(|m| m.get(*c)).copied().unwrap_or(0) }</td>
                                    }) }
                                </tr>
                            }) }
                        </tbody>
                    </table>
                </div>
            </details>
            <details>
                <summary>{ "Results JSON (as schedlab run --format json prints it)" }</summary>
                <div class="actions">
                    <button class="secondary" id="copy-json" onclick={copy}>{ if *copied { "Copied" } else { "Copy JSON" } }</button>
                    <button class="secondary" id="download-json" onclick={save("json", "application/json", r.json.clone())}>{ "Download JSON" }</button>
                    <button class="secondary" id="download-csv" onclick={save("csv", "text/csv", r.csv.clone())}>{ "Download CSV" }</button>
                </div>
                <pre id="results-json">{ r.json.clone() }</pre>
            </details>
        </section>
    }
}

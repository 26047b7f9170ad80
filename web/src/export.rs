//! Files out of the page: downloads (JSON, CSV, SVG, trace), a chart as a
//! PNG rasterised by the browser at the chart's size, and the clipboard.

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{
    Blob, BlobPropertyBag, CanvasRenderingContext2d, HtmlAnchorElement, HtmlCanvasElement,
    HtmlImageElement, Url,
};

fn document() -> Result<web_sys::Document, JsValue> {
    web_sys::window()
        .and_then(|w| w.document())
        .ok_or_else(|| JsValue::from_str("no document"))
}

fn blob(text: &str, mime: &str) -> Result<Blob, JsValue> {
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let options = BlobPropertyBag::new();
    options.set_type(mime);
    Blob::new_with_str_sequence_and_options(&parts, &options)
}

fn save_blob(file: &str, blob: &Blob) -> Result<(), JsValue> {
    let url = Url::create_object_url_with_blob(blob)?;
    let a: HtmlAnchorElement = document()?.create_element("a")?.dyn_into()?;
    a.set_href(&url);
    a.set_download(file);
    a.click();
    Url::revoke_object_url(&url)
}

/// Offers `text` as a file download.
pub fn download(file: &str, mime: &str, text: &str) -> Result<(), JsValue> {
    save_blob(file, &blob(text, mime)?)
}

/// Rasterises `svg` at `width` x `height` and offers it as a PNG.
pub fn download_png(file: &str, svg: &str, width: u32, height: u32) -> Result<(), JsValue> {
    let url = Url::create_object_url_with_blob(&blob(svg, "image/svg+xml")?)?;
    let img = HtmlImageElement::new_with_width_and_height(width, height)?;
    let file = file.to_string();
    let (img2, url2) = (img.clone(), url.clone());
    let on_load = Closure::once(move || -> Result<(), JsValue> {
        let canvas: HtmlCanvasElement = document()?.create_element("canvas")?.dyn_into()?;
        canvas.set_width(width);
        canvas.set_height(height);
        let ctx: CanvasRenderingContext2d = canvas
            .get_context("2d")?
            .ok_or("no 2d context")?
            .dyn_into()?;
        ctx.draw_image_with_html_image_element(&img2, 0.0, 0.0)?;
        Url::revoke_object_url(&url2)?;
        let on_blob = Closure::once_into_js(move |png: Option<Blob>| {
            if let Some(png) = png {
                let _ = save_blob(&file, &png);
            }
        });
        canvas.to_blob_with_type(on_blob.unchecked_ref(), "image/png")
    });
    img.set_onload(Some(on_load.as_ref().unchecked_ref()));
    // The image holds the handler until it fires once.
    on_load.forget();
    img.set_src(&url);
    Ok(())
}

pub fn copy_to_clipboard(text: &str) {
    if let Some(w) = web_sys::window() {
        // The promise's outcome is the browser's to report; nothing to do here.
        let _ = w.navigator().clipboard().write_text(text);
    }
}

//! Form fields bound to the editor: each shows its value (or the text that
//! did not parse), dispatches an [`Edit`] as the user types, and shows the
//! error that belongs to it. `data-field` names the field for tests.

use crate::state::{Edit, Editor};
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

pub type EditorHandle = UseReducerHandle<Editor>;

/// A JSON scalar as a user types it (strings unquoted).
pub fn plain(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn error_of(ed: &Editor, field: &str) -> Html {
    match ed.error_at(field) {
        Some(e) => html! { <small class="field-error" role="alert">{ e.to_string() }</small> },
        None => html! {},
    }
}

/// Dispatches `make(text)` on every keystroke, so the field echoes at once.
fn on_text(ed: &EditorHandle, make: impl Fn(String) -> Edit + 'static) -> Callback<InputEvent> {
    let ed = ed.clone();
    Callback::from(move |e: InputEvent| {
        let input: HtmlInputElement = e.target_unchecked_into();
        ed.dispatch(make(input.value()));
    })
}

/// A text or number input; `make` turns the typed text into an edit.
pub fn text(
    ed: &EditorHandle,
    field: String,
    label: Html,
    value: impl ToString,
    make: impl Fn(String) -> Edit + 'static,
) -> Html {
    let oninput = on_text(ed, make);
    let invalid = ed.error_at(&field).is_some();
    html! {
        <label class={classes!("field", invalid.then_some("invalid"))}>
            <span class="label">{ label }</span>
            <input data-field={field.clone()} value={ed.text_of(&field, value.to_string())}
                aria-invalid={invalid.to_string()} spellcheck="false" {oninput} />
            { error_of(ed, &field) }
        </label>
    }
}

/// A bare input for a table cell (its header is the label).
pub fn cell_input(
    ed: &EditorHandle,
    field: String,
    title: String,
    value: impl ToString,
    disabled: bool,
    make: impl Fn(String) -> Edit + 'static,
) -> Html {
    let oninput = on_text(ed, make);
    let error = ed.error_at(&field).map(str::to_string);
    html! {
        <>
            <input class="cell" data-field={field.clone()} {title} disabled={disabled}
                value={ed.text_of(&field, value.to_string())}
                aria-invalid={error.is_some().to_string()} {oninput} />
            if let Some(e) = error { <small class="field-error" role="alert">{ e }</small> }
        </>
    }
}

pub fn checkbox(
    ed: &EditorHandle,
    field: String,
    title: String,
    checked: bool,
    disabled: bool,
    make: impl Fn(bool) -> Edit + 'static,
) -> Html {
    let onchange = {
        let ed = ed.clone();
        Callback::from(move |e: Event| {
            let input: HtmlInputElement = e.target_unchecked_into();
            ed.dispatch(make(input.checked()));
        })
    };
    html! {
        <input type="checkbox" data-field={field} {title} {checked} {disabled} {onchange} />
    }
}

/// A select of `options` (value, text); `make` turns the chosen value into an edit.
pub fn select(
    ed: &EditorHandle,
    field: String,
    label: Html,
    options: Vec<(String, String)>,
    selected: &str,
    make: impl Fn(String) -> Edit + 'static,
) -> Html {
    let onchange = {
        let ed = ed.clone();
        Callback::from(move |e: Event| {
            let s: HtmlSelectElement = e.target_unchecked_into();
            ed.dispatch(make(s.value()));
        })
    };
    html! {
        <label class="field">
            <span class="label">{ label }</span>
            <select data-field={field.clone()} {onchange}>
                { for options.into_iter().map(|(v, t)| {
                    let is = v == selected;
                    html! { <option selected={is} value={v}>{ t }</option> }
                }) }
            </select>
            { error_of(ed, &field) }
        </label>
    }
}

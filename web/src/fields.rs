//! Form fields bound to the editor: each shows its value (or the text that
//! did not parse), sends an [`Edit`] as the user types, and shows the error
//! that belongs to it.
//!
//! An input's `data-field` is the [`FieldId`] of the edit it sends
//! ([`Edit::field`], the same id the editor files that edit's error under),
//! so an input and its errors cannot name different fields.

use crate::state::{Edit, Editor, FieldId};
use std::rc::Rc;
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

pub type EditorHandle = UseReducerHandle<Editor>;

/// What a panel reads and how it edits: the editor as it is now, and where
/// edits go. A component makes one from its handle; tests make one by hand.
#[derive(Clone)]
pub struct Form<'a> {
    pub editor: &'a Editor,
    pub edit: Callback<Edit>,
}

impl<'a> Form<'a> {
    pub fn of(handle: &'a EditorHandle) -> Form<'a> {
        Form {
            editor: handle,
            edit: handle.dispatcher().to_callback(),
        }
    }

    /// A callback that sends `edit`, whatever the event.
    pub fn on<T>(&self, edit: impl Into<Edit>) -> Callback<T> {
        let edit = edit.into();
        self.edit.reform(move |_| edit.clone())
    }
}

/// A JSON scalar as a user types it (strings unquoted).
pub fn plain(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The error shown under the field, if it has one.
pub fn error_of(ed: &Editor, field: &FieldId) -> Html {
    match ed.error_at(field) {
        Some(e) => html! { <small class="field-error" role="alert">{ e.to_string() }</small> },
        None => html! {},
    }
}

/// Turns a text into an edit. The helpers below are thin generic shims over
/// one non-generic body each, so the page's code does not grow per field.
type Make<T> = Rc<dyn Fn(T) -> Edit>;

/// `make` as an edit maker, and the field its edits are filed under.
fn bind<T: 'static, E: Into<Edit>>(
    make: impl Fn(T) -> E + 'static,
    sample: T,
) -> (FieldId, Make<T>) {
    let make: Make<T> = Rc::new(move |t| make(t).into());
    (make(sample).field(), make)
}

/// Sends `make(text)` on every keystroke, so the field echoes at once.
fn on_text(form: &Form, make: Make<String>) -> Callback<InputEvent> {
    form.edit.reform(move |e: InputEvent| {
        let input: HtmlInputElement = e.target_unchecked_into();
        make(input.value())
    })
}

/// A text or number input; `make` turns the typed text into an edit.
pub fn text<E: Into<Edit>>(
    form: &Form,
    label: Html,
    value: impl ToString,
    make: impl Fn(String) -> E + 'static,
) -> Html {
    let value = value.to_string();
    let (field, make) = bind(make, value.clone());
    text_input(form, field, label, value, make)
}

fn text_input(form: &Form, field: FieldId, label: Html, value: String, make: Make<String>) -> Html {
    let ed = form.editor;
    let oninput = on_text(form, make);
    let invalid = ed.error_at(&field).is_some();
    html! {
        <label class={classes!("field", invalid.then_some("invalid"))}>
            <span class="label">{ label }</span>
            <input data-field={field.to_string()} value={ed.text_of(&field, value)}
                aria-invalid={invalid.to_string()} spellcheck="false" {oninput} />
            { error_of(ed, &field) }
        </label>
    }
}

/// A bare input for a table cell (its header is the label).
pub fn cell_input<E: Into<Edit>>(
    form: &Form,
    title: String,
    value: impl ToString,
    disabled: bool,
    make: impl Fn(String) -> E + 'static,
) -> Html {
    let value = value.to_string();
    let (field, make) = bind(make, value.clone());
    cell(form, field, title, value, disabled, make)
}

fn cell(
    form: &Form,
    field: FieldId,
    title: String,
    value: String,
    disabled: bool,
    make: Make<String>,
) -> Html {
    let ed = form.editor;
    let oninput = on_text(form, make);
    let error = ed.error_at(&field).map(str::to_string);
    html! {
        <>
            <input class="cell" data-field={field.to_string()} aria-label={title.clone()} {title} disabled={disabled}
                value={ed.text_of(&field, value)}
                aria-invalid={error.is_some().to_string()} {oninput} />
            if let Some(e) = error { <small class="field-error" role="alert">{ e }</small> }
        </>
    }
}

/// A checkbox. It shows no error of its own: a switch offers only what the
/// era or benchmark names, so its edits are not refused, and the core's
/// error after one is in the page's summary.
pub fn checkbox<E: Into<Edit>>(
    form: &Form,
    title: String,
    checked: bool,
    disabled: bool,
    make: impl Fn(bool) -> E + 'static,
) -> Html {
    let (field, make) = bind(make, checked);
    check(form, field, title, checked, disabled, make)
}

fn check(
    form: &Form,
    field: FieldId,
    title: String,
    checked: bool,
    disabled: bool,
    make: Make<bool>,
) -> Html {
    let onchange = form.edit.reform(move |e: Event| {
        let input: HtmlInputElement = e.target_unchecked_into();
        make(input.checked())
    });
    html! {
        <input type="checkbox" data-field={field.to_string()} aria-label={title.clone()} {title} {checked} {disabled} {onchange} />
    }
}

/// A select of `options` (value, text); `make` turns the chosen value into an edit.
pub fn select<E: Into<Edit>>(
    form: &Form,
    label: Html,
    options: Vec<(String, String)>,
    selected: &str,
    make: impl Fn(String) -> E + 'static,
) -> Html {
    let (field, make) = bind(make, selected.to_string());
    choice(form, field, label, options, selected, make)
}

/// A select shown as `field` although its edits' errors belong elsewhere
/// (the sweep's parameter, whose errors are the sweep's values').
pub fn select_at<E: Into<Edit>>(
    form: &Form,
    field: FieldId,
    label: Html,
    options: Vec<(String, String)>,
    selected: &str,
    make: impl Fn(String) -> E + 'static,
) -> Html {
    choice(
        form,
        field,
        label,
        options,
        selected,
        Rc::new(move |v| make(v).into()),
    )
}

fn choice(
    form: &Form,
    field: FieldId,
    label: Html,
    options: Vec<(String, String)>,
    selected: &str,
    make: Make<String>,
) -> Html {
    let onchange = form.edit.reform(move |e: Event| {
        let s: HtmlSelectElement = e.target_unchecked_into();
        make(s.value())
    });
    html! {
        <label class="field">
            <span class="label">{ label }</span>
            <select data-field={field.to_string()} {onchange}>
                { for options.into_iter().map(|(v, t)| {
                    let is = v == selected;
                    html! { <option selected={is} value={v}>{ t }</option> }
                }) }
            </select>
            { error_of(form.editor, &field) }
        </label>
    }
}

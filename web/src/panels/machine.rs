//! The Machine panel: a preset, a hand-built shape with distances and costs,
//! or a real machine from `lscpu -p` or `schedlab calibrate` (pasted or loaded).

use super::Props;
use crate::drawing::MachineDrawing;
use crate::fields::{self, Form};
use crate::state::{is_number_list, Editor, FieldId, MachineEdit, ShapeField};
use schedlab::domains::Domains;
use schedlab::experiment::MachineRef;
use schedlab::topology::{self, Layout, MachineSpec, Topology};
use std::rc::Rc;
use web_sys::HtmlTextAreaElement;
use yew::prelude::*;

const CUSTOM: &str = "(custom)";

#[function_component]
pub fn MachinePanel(props: &Props) -> Html {
    // The pasted text is the panel's own until it is imported.
    let lscpu = use_state(String::new);
    let set_lscpu = {
        let lscpu = lscpu.clone();
        Callback::from(move |text| lscpu.set(text))
    };
    view(&Form::of(&props.editor), &lscpu, set_lscpu)
}

/// The panel for the editor in `form`, with `lscpu` pasted so far.
pub fn view(form: &Form, lscpu: &str, set_lscpu: Callback<String>) -> Html {
    let exp = &form.editor.experiment;
    let (preset, spec) = match &exp.machine {
        MachineRef::Preset(name) => (name.clone(), None),
        MachineRef::Spec(spec) => (CUSTOM.to_string(), Some(spec.as_ref())),
    };
    let mut options: Vec<(String, String)> = topology::PRESETS
        .iter()
        .map(|n| (n.to_string(), n.to_string()))
        .collect();
    if let Some(s) = spec {
        options.push((CUSTOM.into(), format!("custom: {}", s.name)));
    }
    let builder = match spec {
        None => html! {
            <button class="secondary" id="machine-edit" onclick={form.on(MachineEdit::Custom)}>
                { "Edit this machine" }
            </button>
        },
        Some(spec) => spec_fields(form, spec),
    };
    html! {
        <section class="panel" id="machine-panel" aria-labelledby="machine-h">
            <h2 id="machine-h">{ "Machine" }</h2>
            { fields::select(form, html! { "Preset" }, options, &preset, |v| {
                if v == CUSTOM { MachineEdit::Custom } else { MachineEdit::Preset(v) }
            }) }
            { summary(form.editor) }
            { builder }
            { lscpu_import(form, lscpu, set_lscpu) }
        </section>
    }
}

/// The machine in words and drawn, with the first variant's domains.
fn summary(ed: &Editor) -> Html {
    // A distance matrix being typed should not make the drawing vanish.
    let drawable = ed.topology().cloned().or_else(|_| {
        let mut spec = ed.experiment.machine.spec()?;
        spec.distances = None;
        Topology::from_spec(&spec)
    });
    let Ok(t) = drawable else {
        return html! {};
    };
    let domains = ed.domains().or_else(|| {
        let p = ed.policy_of(0).resolve(t.ncpus()).ok()?;
        Domains::build(&t, &p).ok().map(Rc::new)
    });
    html! {
        <>
            <p class="summary" id="machine-summary">{ t.summary() }</p>
            <MachineDrawing topology={Rc::new(t)} {domains} />
        </>
    }
}

/// A hand-built or imported machine: its shape, distances and costs.
fn spec_fields(form: &Form, spec: &MachineSpec) -> Html {
    let shape = match &spec.layout {
        Layout::Shape(s) => {
            let field = |f: ShapeField| {
                fields::text(form, html! { f.label() }, f.get(s), move |text| {
                    MachineEdit::Shape { field: f, text }
                })
            };
            html! { <div class="grid-fields">{ for ShapeField::ALL.map(field) }</div> }
        }
        Layout::Cpus(list) => html! {
            <p class="hint">{ format!("{} CPUs from lscpu; import again to change them.", list.len()) }</p>
        },
    };
    html! {
        <>
            { shape }
            { distances(form, spec) }
            <details class="costs">
                <summary>{ "Costs (ns unless named)" }</summary>
                <div class="grid-fields">{ for cost_fields(form, spec) }</div>
            </details>
        </>
    }
}

/// The SLIT rows, a line per node.
fn distances(form: &Form, spec: &MachineSpec) -> Html {
    let ed = form.editor;
    let rows = spec
        .distances
        .as_ref()
        .map(|rows| {
            rows.iter()
                .map(|r| r.iter().map(u32::to_string).collect::<Vec<_>>().join(" "))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default();
    let field = FieldId::Distances;
    let oninput = form.edit.reform(|e: InputEvent| {
        let t: HtmlTextAreaElement = e.target_unchecked_into();
        MachineEdit::Distances(t.value()).into()
    });
    html! {
        <label class={classes!("field", ed.error_at(&field).is_some().then_some("invalid"))}>
            <span class="label">{ "SLIT distances (a row per node; empty: 10 local, 20 remote)" }</span>
            <textarea data-field={field.to_string()} rows="3" spellcheck="false"
                value={ed.text_of(&field, rows)} {oninput} />
            if let Some(e) = ed.error_at(&field) { <small class="field-error">{ e.to_string() }</small> }
        </label>
    }
}

/// Every cost: numbers, lists of numbers ("5, 15, 85"), or JSON.
fn cost_fields<'a>(form: &'a Form, spec: &MachineSpec) -> impl Iterator<Item = Html> + 'a {
    let costs = schedlab::json_path::value_of(&spec.costs);
    let serde_json::Value::Object(costs) = costs else {
        panic!("costs serialise as an object");
    };
    costs.into_iter().filter_map(move |(key, v)| {
        let text = match &v {
            serde_json::Value::Number(n) => n.to_string(),
            serde_json::Value::Array(a) if is_number_list(&v) => a
                .iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            serde_json::Value::Array(_) => v.to_string(),
            _ => return None,
        };
        let label = html! { key.clone() };
        Some(fields::text(form, label, text, move |text| {
            MachineEdit::Cost {
                key: key.clone(),
                text,
            }
        }))
    })
}

/// Paste `lscpu -p` or a calibrated machine JSON, then Import (or load a
/// file, which is read into the text and imported); its error stays open
/// under the text.
fn lscpu_import(form: &Form, lscpu: &str, set_lscpu: Callback<String>) -> Html {
    let ed = form.editor;
    let field = FieldId::Lscpu;
    let oninput = set_lscpu.clone().reform(|e: InputEvent| {
        let t: HtmlTextAreaElement = e.target_unchecked_into();
        t.value()
    });
    let on_import = form.on(MachineEdit::ImportLscpu(lscpu.to_string()));
    let on_file = {
        let edit = form.edit.clone();
        Callback::from(move |e: Event| {
            let input: web_sys::HtmlInputElement = e.target_unchecked_into();
            let Some(file) = input.files().and_then(|f| f.get(0)) else {
                return;
            };
            let (edit, set_lscpu) = (edit.clone(), set_lscpu.clone());
            let done = wasm_bindgen::closure::Closure::once(move |v: wasm_bindgen::JsValue| {
                let text = v.as_string().unwrap_or_default();
                set_lscpu.emit(text.clone());
                edit.emit(MachineEdit::ImportLscpu(text).into());
            });
            let _ = file.text().then(&done);
            done.forget();
        })
    };
    html! {
        <details class="lscpu" open={ed.error_at(&field).is_some()}>
            <summary>{ "Import a real machine (lscpu -p, or schedlab calibrate)" }</summary>
            <textarea id="lscpu-text" data-field={field.to_string()} rows="5" spellcheck="false"
                placeholder="paste the output of: lscpu -p, or the JSON of: schedlab calibrate" value={lscpu.to_string()} {oninput} />
            <button class="secondary" id="lscpu-import" onclick={on_import}>{ "Import" }</button>
            <label class="secondary">{ "or load a file " }
                <input type="file" id="machine-file" accept=".json,.txt,text/plain,application/json" onchange={on_file} />
            </label>
            if let Some(e) = ed.error_at(&field) { <small class="field-error" role="alert">{ e.to_string() }</small> }
        </details>
    }
}

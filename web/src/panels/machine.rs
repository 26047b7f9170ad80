//! The Machine panel: a preset, a hand-built shape with distances and costs,
//! or a real machine from `lscpu -p` or `schedlab calibrate` (pasted or loaded).

use crate::drawing::MachineDrawing;
use crate::fields::{self, EditorHandle};
use crate::state::{is_number_list, Edit};
use schedlab::domains::Domains;
use schedlab::experiment::MachineRef;
use schedlab::topology::{self, Layout, Topology};
use std::rc::Rc;
use web_sys::HtmlTextAreaElement;
use yew::prelude::*;

const CUSTOM: &str = "(custom)";

#[derive(Properties, PartialEq)]
pub struct Props {
    pub editor: EditorHandle,
}

#[function_component]
pub fn MachinePanel(props: &Props) -> Html {
    let ed = &props.editor;
    let lscpu = use_state(String::new);
    let exp = &ed.experiment;
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
    // A distance matrix being typed should not make the drawing vanish.
    let drawable = ed.topology().or_else(|_| {
        let mut spec = exp.machine.spec()?;
        spec.distances = None;
        Topology::from_spec(&spec)
    });
    let summary = match drawable {
        Ok(t) => {
            let domains = ed
                .policy_of(0)
                .resolve(t.ncpus())
                .and_then(|p| Domains::build(&t, &p))
                .ok()
                .map(Rc::new);
            html! {
                <>
                    <p class="summary" id="machine-summary">{ t.summary() }</p>
                    <MachineDrawing topology={Rc::new(t)} {domains} />
                </>
            }
        }
        Err(_) => html! {},
    };
    let builder = match spec {
        None => {
            let ed = ed.clone();
            html! {
                <button class="secondary" id="machine-edit"
                    onclick={Callback::from(move |_| ed.dispatch(Edit::MachineCustom))}>
                    { "Edit this machine" }
                </button>
            }
        }
        Some(spec) => {
            let shape = match &spec.layout {
                Layout::Shape(s) => {
                    let f = |name: &'static str, label: &'static str, v: u32| {
                        fields::text(
                            ed,
                            format!("machine.{name}"),
                            html! { label },
                            v,
                            move |text| Edit::Shape {
                                field: name.into(),
                                text,
                            },
                        )
                    };
                    html! {
                        <div class="grid-fields">
                            { f("nodes", "NUMA nodes", s.nodes) }
                            { f("packages_per_node", "packages / node", s.packages_per_node) }
                            { f("llcs_per_package", "LLCs / package", s.llcs_per_package) }
                            { f("cores_per_llc", "cores / LLC", s.cores_per_llc) }
                            { f("threads_per_core", "threads / core", s.threads_per_core) }
                        </div>
                    }
                }
                Layout::Cpus(list) => html! {
                    <p class="hint">{ format!("{} CPUs from lscpu; import again to change them.", list.len()) }</p>
                },
            };
            let distances = spec
                .distances
                .as_ref()
                .map(|rows| {
                    rows.iter()
                        .map(|r| r.iter().map(u32::to_string).collect::<Vec<_>>().join(" "))
                        .collect::<Vec<_>>()
                        .join("\n")
                })
                .unwrap_or_default();
            let field = "machine.distances".to_string();
            let on_distances = {
                let ed = ed.clone();
                Callback::from(move |e: InputEvent| {
                    let t: HtmlTextAreaElement = e.target_unchecked_into();
                    ed.dispatch(Edit::Distances(t.value()));
                })
            };
            let costs = serde_json::to_value(&spec.costs).expect("costs serialise");
            let cost_fields =
                costs
                    .as_object()
                    .expect("an object")
                    .iter()
                    .filter_map(|(key, v)| {
                        let text = match v {
                            serde_json::Value::Number(n) => n.to_string(),
                            serde_json::Value::Array(a) if is_number_list(v) => a
                                .iter()
                                .map(|x| x.to_string())
                                .collect::<Vec<_>>()
                                .join(", "),
                            serde_json::Value::Array(_) => v.to_string(),
                            _ => return None,
                        };
                        let k = key.clone();
                        Some(fields::text(
                            ed,
                            format!("cost.{key}"),
                            html! { key.clone() },
                            text,
                            move |text| Edit::Cost {
                                key: k.clone(),
                                text,
                            },
                        ))
                    });
            html! {
                <>
                    { shape }
                    <label class={classes!("field", ed.error_at(&field).is_some().then_some("invalid"))}>
                        <span class="label">{ "SLIT distances (a row per node; empty: 10 local, 20 remote)" }</span>
                        <textarea data-field={field.clone()} rows="3" spellcheck="false"
                            value={ed.text_of(&field, distances)} oninput={on_distances} />
                        if let Some(e) = ed.error_at(&field) { <small class="field-error">{ e.to_string() }</small> }
                    </label>
                    <details class="costs">
                        <summary>{ "Costs (ns unless named)" }</summary>
                        <div class="grid-fields">{ for cost_fields }</div>
                    </details>
                </>
            }
        }
    };
    let on_lscpu_input = {
        let lscpu = lscpu.clone();
        Callback::from(move |e: InputEvent| {
            let t: HtmlTextAreaElement = e.target_unchecked_into();
            lscpu.set(t.value());
        })
    };
    let on_import = {
        let (ed, lscpu) = (ed.clone(), lscpu.clone());
        Callback::from(move |_| ed.dispatch(Edit::ImportLscpu((*lscpu).clone())))
    };
    // A file (a calibrated machine JSON or lscpu -p output) is read into the
    // text box and imported.
    let on_file = {
        let (ed, lscpu) = (ed.clone(), lscpu.clone());
        Callback::from(move |e: Event| {
            let input: web_sys::HtmlInputElement = e.target_unchecked_into();
            let Some(file) = input.files().and_then(|f| f.get(0)) else {
                return;
            };
            let (ed, lscpu) = (ed.clone(), lscpu.clone());
            let done = wasm_bindgen::closure::Closure::once(move |v: wasm_bindgen::JsValue| {
                let text = v.as_string().unwrap_or_default();
                lscpu.set(text.clone());
                ed.dispatch(Edit::ImportLscpu(text));
            });
            let _ = file.text().then(&done);
            done.forget();
        })
    };
    let lscpu_field = "machine.lscpu";
    html! {
        <section class="panel" id="machine-panel" aria-labelledby="machine-h">
            <h2 id="machine-h">{ "Machine" }</h2>
            { fields::select(ed, "machine".into(), html! { "Preset" }, options, &preset, |v| {
                if v == CUSTOM { Edit::MachineCustom } else { Edit::MachinePreset(v) }
            }) }
            { summary }
            { builder }
            <details class="lscpu" open={ed.error_at(lscpu_field).is_some()}>
                <summary>{ "Import a real machine (lscpu -p, or schedlab calibrate)" }</summary>
                <textarea id="lscpu-text" data-field={lscpu_field} rows="5" spellcheck="false"
                    placeholder="paste the output of: lscpu -p, or the JSON of: schedlab calibrate" value={(*lscpu).clone()} oninput={on_lscpu_input} />
                <button class="secondary" id="lscpu-import" onclick={on_import}>{ "Import" }</button>
                <label class="secondary">{ "or load a file " }
                    <input type="file" id="machine-file" accept=".json,.txt,text/plain,application/json" onchange={on_file} />
                </label>
                if let Some(e) = ed.error_at(lscpu_field) { <small class="field-error" role="alert">{ e.to_string() }</small> }
            </details>
        </section>
    }
}

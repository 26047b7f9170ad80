//! The Workload panel: the benchmark and its parameters under the real
//! tools' names, each variant's own changes (pinning), a sweep, seed and
//! repeats.

use super::Props;
use crate::fields::{self, plain, Form};
use crate::state::{program_text, starting_value, Edit, FieldId, VariantField, WorkloadEdit};
use schedlab::workload::bench::{Benchmark, ParamInfo, KINDS};
use web_sys::{HtmlInputElement, HtmlSelectElement, HtmlTextAreaElement};
use yew::prelude::*;

#[function_component]
pub fn WorkloadPanel(props: &Props) -> Html {
    // How far a trace's import has got, while a worker reads it.
    let reading = use_state(|| None::<String>);
    let set_reading = {
        let reading = reading.clone();
        Callback::from(move |s| reading.set(s))
    };
    view(&Form::of(&props.editor), reading.as_deref(), set_reading)
}

/// The panel; `reading` says how far a trace's import has got, and
/// `set_reading` is told as it goes.
pub fn view(form: &Form, reading: Option<&str>, set_reading: Callback<Option<String>>) -> Html {
    let exp = &form.editor.experiment;
    let bench = &exp.workload;
    let values = schedlab::json_path::value_of(bench);
    let kinds = KINDS
        .iter()
        .map(|k| (k.to_string(), k.to_string()))
        .collect();
    let params = bench
        .params()
        .iter()
        .map(|p| param(form, p, &values[p.name]));
    let overrides = (0..exp.variants.len()).map(|i| variant_changes(form, i));
    let trace_import = trace_importer(form, &set_reading);
    html! {
        <section class="panel" id="workload-panel" aria-labelledby="workload-h"
            ondragover={Callback::from(|e: DragEvent| e.prevent_default())}
            ondrop={on_drop(trace_import.clone())}>
            <h2 id="workload-h">{ "Workload" }</h2>
            { fields::select(form, html! { "Benchmark" }, kinds, bench.kind(), WorkloadEdit::Kind) }
            <div class="grid-fields">{ for params }</div>
            { program(form, bench) }
            { trace(form, reading, trace_import) }
            <h3>{ "Per variant" }</h3>
            <div class="variant-changes-all">{ for overrides }</div>
            <h3>{ "Sweep" }</h3>
            { sweep(form) }
            <div class="grid-fields">
                { fields::text(form, html! { "seed" }, exp.seed, WorkloadEdit::Seed) }
                { fields::text(form, html! { "repeats" }, exp.repeats, WorkloadEdit::Repeats) }
            </div>
        </section>
    }
}

/// A custom workload's program as JSON text (errors at line and column,
/// or at the JSON path, task and instruction); any other benchmark offers
/// to become the custom workload it builds. Either takes a pasted rt-app
/// file.
fn program(form: &Form, bench: &Benchmark) -> Html {
    let ed = form.editor;
    let rtapp_field = FieldId::RtApp;
    let on_rtapp = {
        let edit = form.edit.clone();
        Callback::from(move |e: Event| {
            let t: HtmlTextAreaElement = e.target_unchecked_into();
            crate::app::import::rtapp(t.value(), edit.clone());
        })
    };
    let rtapp = html! {
        <label class={classes!("field", ed.error_at(&rtapp_field).is_some().then_some("invalid"))}>
            <span class="label">{ "Paste an rt-app file (JSON) to run its tasks" }</span>
            <textarea id="rtapp-text" data-field={rtapp_field.to_string()} rows="3" spellcheck="false"
                value={ed.text_of(&rtapp_field, "")} onchange={on_rtapp} />
            if let Some(e) = ed.error_at(&rtapp_field) { <small class="field-error">{ e.to_string() }</small> }
        </label>
    };
    let Benchmark::Custom(c) = bench else {
        return html! {
            <>
                <div class="actions">
                    <button class="secondary" id="to-custom" onclick={to_custom(form)}>{ "Edit as custom workload" }</button>
                </div>
                { rtapp }
            </>
        };
    };
    let field = FieldId::Program;
    // Applied when the text is left (not per key), so a parse does not
    // reformat it under the cursor.
    let onchange = form.edit.reform(|e: Event| {
        let t: HtmlTextAreaElement = e.target_unchecked_into();
        WorkloadEdit::Program(t.value()).into()
    });
    let text = ed.text_of(&field, program_text(c));
    let rows = text.lines().count().clamp(8, 40).to_string();
    // A check after parsing names a JSON path: say where that is in the text.
    let error = ed
        .error_at(&field)
        .map(|e| schedlab::json_path::with_position(&text, "workload", e));
    html! {
        <>
            <label class={classes!("field", error.is_some().then_some("invalid"))}>
                <span class="label">{ "Program (the task language, docs/workloads.md)" }</span>
                <textarea id="program-text" class="code" data-field={field.to_string()} rows={rows} spellcheck="false"
                    value={text} {onchange} />
                if let Some(e) = error { <small class="field-error">{ e }</small> }
            </label>
            { rtapp }
        </>
    }
}

/// A parameter: a choice, a switch, or typed text.
fn param(form: &Form, p: &ParamInfo, value: &serde_json::Value) -> Html {
    let name = p.name.to_string();
    let label = html! {
        <>
            { p.name }
            if !p.flag.is_empty() { <code class="flag">{ p.flag }</code> }
        </>
    };
    let make = move |text| WorkloadEdit::Param {
        name: name.clone(),
        text,
    };
    if !p.choices.is_empty() {
        let options = p
            .choices
            .iter()
            .map(|c| (c.to_string(), c.to_string()))
            .collect();
        fields::select(form, label, options, &plain(value), make)
    } else if let Some(on) = value.as_bool() {
        let field = FieldId::Param(p.name.to_string());
        let onchange = form.edit.reform(move |e: Event| {
            let i: HtmlInputElement = e.target_unchecked_into();
            make(i.checked().to_string()).into()
        });
        html! {
            <label class="field check" title={p.help}>
                <input type="checkbox" data-field={field.to_string()} checked={on} {onchange} />
                <span class="label">{ label }</span>
            </label>
        }
    } else {
        html! {
            <div title={p.help}>
                { fields::text(form, label, plain(value), make) }
            </div>
        }
    }
}

/// The parameter swept over (or none) and its values.
fn sweep(form: &Form) -> Html {
    let exp = &form.editor.experiment;
    let param = exp
        .sweep
        .as_ref()
        .map(|s| s.param.clone())
        .unwrap_or_default();
    let values = exp
        .sweep
        .as_ref()
        .map(|s| s.values.iter().map(plain).collect::<Vec<_>>().join(", "))
        .unwrap_or_default();
    let mut options = vec![(String::new(), "no sweep".to_string())];
    options.extend(
        exp.workload
            .params()
            .iter()
            .map(|p| (p.name.to_string(), p.name.to_string())),
    );
    let (values_now, param_now) = (values.clone(), param.clone());
    html! {
        <div class="grid-fields">
            { fields::select_at(form, FieldId::SweepParam, html! { "parameter" }, options, &param,
                move |param| WorkloadEdit::Sweep { param, values: values_now.clone() }) }
            { fields::text(form, html! { "values" }, values,
                move |values| WorkloadEdit::Sweep { param: param_now.clone(), values }) }
        </div>
    }
}

/// Variant `i`'s own workload: each changed parameter as a field (typed as
/// the base's; an affinity as `taskset -c` takes it), one to add, and the
/// same as JSON.
fn variant_changes(form: &Form, i: usize) -> Html {
    let exp = &form.editor.experiment;
    let v = &exp.variants[i];
    let params = exp.workload.params();
    let changed = v.workload.iter().map(|(name, value)| {
        let flag = params
            .iter()
            .find(|p| p.name == name)
            .map(|p| p.flag)
            .unwrap_or("");
        let label = html! {
            <>
                { name.clone() }
                if !flag.is_empty() { <code class="flag">{ flag }</code> }
            </>
        };
        let n = name.clone();
        let remove = form.on(WorkloadEdit::VariantParam {
            variant: i,
            name: name.clone(),
            text: None,
        });
        html! {
            <div class="change">
                { fields::text(form, label, plain(value), move |text| WorkloadEdit::VariantParam {
                    variant: i,
                    name: n.clone(),
                    text: Some(text),
                }) }
                <button class="icon" onclick={remove} title={format!("Drop {}'s change to {name}", v.label)}
                    aria-label={format!("Drop {}'s change to {name}", v.label)}>{ "×" }</button>
            </div>
        }
    });
    let addable: Vec<&str> = params
        .iter()
        .map(|p| p.name)
        .filter(|n| !v.workload.contains_key(*n))
        .collect();
    let add = {
        let (edit, bench) = (form.edit.clone(), exp.workload.clone());
        Callback::from(move |e: Event| {
            let s: HtmlSelectElement = e.target_unchecked_into();
            let name = s.value();
            s.set_value("");
            if !name.is_empty() {
                edit.emit(Edit::from(WorkloadEdit::VariantParam {
                    variant: i,
                    text: Some(starting_value(&bench, &name)),
                    name,
                }));
            }
        })
    };
    let json = if v.workload.is_empty() {
        String::new()
    } else {
        serde_json::to_string(&v.workload).expect("serialises")
    };
    let json_field = FieldId::Variant(i, VariantField::Workload);
    let json_open = form.editor.error_at(&json_field).is_some();
    html! {
        <fieldset class="variant-changes" data-changes-of={i.to_string()}>
            <legend>{ format!("{} only", v.label) }</legend>
            if v.workload.is_empty() { <p class="hint">{ "Runs the benchmark as above." }</p> }
            <div class="grid-fields">{ for changed }</div>
            if !addable.is_empty() {
                <label class="add-change">
                    <span class="visually-hidden">{ format!("Change a parameter for {} only", v.label) }</span>
                    <select data-add-change={i.to_string()} onchange={add}>
                        <option value="" selected=true>{ "+ change a parameter…" }</option>
                        { for addable.iter().map(|n| html! { <option value={n.to_string()}>{ *n }</option> }) }
                    </select>
                </label>
            }
            <details open={json_open}>
                <summary>{ "as JSON" }</summary>
                { fields::text(form, html! { format!("{} only (JSON, e.g. {{\"affinity\": \"0\"}})", v.label) }, json,
                    move |text| WorkloadEdit::Variant { variant: i, text }) }
            </details>
        </fieldset>
    }
}

/// What starts a trace file's import in a worker, recorded on the
/// experiment's machine (its switch and wakeup costs come off the runs).
fn trace_importer(form: &Form, set_reading: &Callback<Option<String>>) -> Callback<web_sys::File> {
    let machine = form.editor.experiment.machine.clone();
    let (edit, set_reading) = (form.edit.clone(), set_reading.clone());
    Callback::from(move |file: web_sys::File| {
        set_reading.emit(Some(format!("Reading {}...", file.name())));
        // The worker reads the machine from an experiment: the default one
        // on this machine, not the edited one, which may be large.
        let on_machine = schedlab::experiment::Experiment {
            machine: machine.clone(),
            ..crate::state::default_experiment()
        };
        let json = serde_json::to_string(&on_machine).expect("an experiment serialises");
        crate::app::import::trace(file, json, edit.clone(), set_reading.clone());
    })
}

/// A file dropped anywhere on the panel is read as a trace.
fn on_drop(import: Callback<web_sys::File>) -> Callback<DragEvent> {
    Callback::from(move |e: DragEvent| {
        e.prevent_default();
        if let Some(file) = e
            .data_transfer()
            .and_then(|d| d.files())
            .and_then(|f| f.get(0))
        {
            import.emit(file);
        }
    })
}

/// A scheduler trace to replay: a file input (or a drop on the panel),
/// how far its import has got, and its error.
fn trace(form: &Form, reading: Option<&str>, import: Callback<web_sys::File>) -> Html {
    let field = FieldId::Trace;
    let ed = form.editor;
    let on_file = Callback::from(move |e: Event| {
        let input: HtmlInputElement = e.target_unchecked_into();
        if let Some(file) = input.files().and_then(|f| f.get(0)) {
            import.emit(file);
        }
    });
    html! {
        <label class={classes!("field", ed.error_at(&field).is_some().then_some("invalid"))}>
            <span class="label">{ "Replay a scheduler trace (perf script of perf sched record, .txt or .gz; or drop it on this panel)" }</span>
            <input type="file" id="trace-file" data-field={field.to_string()} accept=".txt,.gz,text/plain,application/gzip" onchange={on_file} />
            if let Some(r) = reading { <small id="trace-reading" role="status">{ r }</small> }
            if let Some(e) = ed.error_at(&field) { <small class="field-error" role="alert">{ e.to_string() }</small> }
        </label>
    }
}

/// "Edit as custom workload": a worker builds the benchmark's workload.
fn to_custom(form: &Form) -> Callback<MouseEvent> {
    let exp = form.editor.experiment.clone();
    let edit = form.edit.clone();
    Callback::from(move |_| {
        let json = serde_json::to_string(&exp).expect("an experiment serialises");
        crate::app::import::to_custom(json, edit.clone());
    })
}

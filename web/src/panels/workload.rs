//! The Workload panel: the benchmark and its parameters under the real
//! tools' names, each variant's own changes (pinning), a sweep, seed and
//! repeats.

use crate::fields::{self, plain, EditorHandle};
use crate::state::Edit;
use schedlab::workload::bench::KINDS;
use web_sys::HtmlInputElement;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub editor: EditorHandle,
}

#[function_component]
pub fn WorkloadPanel(props: &Props) -> Html {
    let ed = &props.editor;
    let exp = &ed.experiment;
    let bench = &exp.workload;
    let values = serde_json::to_value(bench).expect("a benchmark serialises");
    let kinds = KINDS
        .iter()
        .map(|k| (k.to_string(), k.to_string()))
        .collect();
    let params = bench.params().iter().map(|p| {
        let name = p.name.to_string();
        let field = format!("workload.{name}");
        let label = html! {
            <>
                { p.name }
                if !p.flag.is_empty() { <code class="flag">{ p.flag }</code> }
            </>
        };
        let value = &values[p.name];
        if !p.choices.is_empty() {
            let options = p.choices.iter().map(|c| (c.to_string(), c.to_string())).collect();
            fields::select(ed, field, label, options, &plain(value), move |text| Edit::Param { name: name.clone(), text })
        } else if let Some(on) = value.as_bool() {
            let onchange = {
                let ed = ed.clone();
                Callback::from(move |e: Event| {
                    let i: HtmlInputElement = e.target_unchecked_into();
                    ed.dispatch(Edit::Param { name: name.clone(), text: i.checked().to_string() });
                })
            };
            html! {
                <label class="field check" title={p.help}>
                    <input type="checkbox" data-field={field} checked={on} {onchange} />
                    <span class="label">{ label }</span>
                </label>
            }
        } else {
            html! {
                <div title={p.help}>
                    { fields::text(ed, field, label, plain(value), move |text| Edit::Param { name: name.clone(), text }) }
                </div>
            }
        }
    });
    let overrides = exp.variants.iter().enumerate().map(|(i, v)| {
        let text = if v.workload.is_empty() {
            String::new()
        } else {
            serde_json::to_string(&v.workload).expect("serialises")
        };
        fields::text(
            ed,
            format!("v{i}.workload"),
            html! { format!("{} only", v.label) },
            text,
            move |text| Edit::VariantWorkload { variant: i, text },
        )
    });
    let sweep_param = exp
        .sweep
        .as_ref()
        .map(|s| s.param.clone())
        .unwrap_or_default();
    let sweep_values = exp
        .sweep
        .as_ref()
        .map(|s| s.values.iter().map(plain).collect::<Vec<_>>().join(", "))
        .unwrap_or_default();
    let mut sweep_options = vec![(String::new(), "no sweep".to_string())];
    sweep_options.extend(
        bench
            .params()
            .iter()
            .map(|p| (p.name.to_string(), p.name.to_string())),
    );
    let values_now = sweep_values.clone();
    let param_now = sweep_param.clone();
    html! {
        <section class="panel" id="workload-panel" aria-labelledby="workload-h">
            <h2 id="workload-h">{ "Workload" }</h2>
            { fields::select(ed, "workload.kind".into(), html! { "Benchmark" }, kinds, bench.kind(), Edit::WorkloadKind) }
            <div class="grid-fields">{ for params }</div>
            <h3>{ "Per variant (JSON, e.g. {\"affinity\": \"0\"})" }</h3>
            <div class="grid-fields">{ for overrides }</div>
            <h3>{ "Sweep" }</h3>
            <div class="grid-fields">
                { fields::select(ed, "sweep.param".into(), html! { "parameter" }, sweep_options, &sweep_param,
                    move |param| Edit::Sweep { param, values: values_now.clone() }) }
                { fields::text(ed, "sweep".into(), html! { "values" }, sweep_values,
                    move |values| Edit::Sweep { param: param_now.clone(), values }) }
            </div>
            <div class="grid-fields">
                { fields::text(ed, "seed".into(), html! { "seed" }, exp.seed, Edit::Seed) }
                { fields::text(ed, "repeats".into(), html! { "repeats" }, exp.repeats, Edit::Repeats) }
            </div>
        </section>
    }
}

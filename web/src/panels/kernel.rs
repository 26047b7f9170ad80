//! The Kernel panel: each variant's whole policy side by side, as the era
//! names it on this machine: SD flags and parameters per domain level,
//! features and tunables. Values that differ between variants are marked.

use crate::fields::{self, EditorHandle};
use crate::state::{flag_field, Edit};
use schedlab::knobs::PolicyKnobs;
use schedlab::policy::{Era, LevelParam};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub editor: EditorHandle,
}

fn era_options() -> Vec<(String, String)> {
    Era::ALL
        .iter()
        .map(|e| (e.name().to_string(), e.name().to_string()))
        .collect()
}

#[function_component]
pub fn KernelPanel(props: &Props) -> Html {
    let ed = &props.editor;
    let exp = &ed.experiment;
    let knobs: Vec<Option<PolicyKnobs>> = (0..exp.variants.len())
        .map(|i| ed.knobs_of(i).ok())
        .collect();
    let copy = {
        let ed = ed.clone();
        Callback::from(move |_| ed.dispatch(Edit::CopyPolicy { from: 0, to: 1 }))
    };
    let add = {
        let ed = ed.clone();
        Callback::from(move |_| ed.dispatch(Edit::AddVariant))
    };
    let base_era = exp.policy.era.name();
    html! {
        <section class="panel" id="kernel-panel" aria-labelledby="kernel-h">
            <div class="panel-head">
                <h2 id="kernel-h">{ "Kernel" }</h2>
                { fields::select(ed, "era".into(), html! { "Base era" }, era_options(), base_era, |v| {
                    Edit::BaseEra(v.parse().expect("listed eras parse"))
                }) }
                if exp.variants.len() >= 2 {
                    <button class="secondary" id="copy-a-to-b" onclick={copy}>
                        { format!("Copy {} to {}", exp.variants[0].label, exp.variants[1].label) }
                    </button>
                }
                if exp.variants.len() < 4 {
                    <button class="secondary" id="add-variant" onclick={add}>{ "+ variant" }</button>
                }
            </div>
            if !exp.timeline.is_empty() {
                <ol class="timeline-steps">
                    { for exp.timeline.iter().map(|s| html! {
                        <li>{ format!("after {} x {}: {}", s.count, s.mark, s.note) }</li>
                    }) }
                </ol>
            }
            <div class="variants">
                { for (0..exp.variants.len()).map(|i| variant_column(ed, i, &knobs)) }
            </div>
        </section>
    }
}

/// Whether any other variant's value at the same place differs.
fn differs<T: PartialEq>(
    knobs: &[Option<PolicyKnobs>],
    me: usize,
    get: impl Fn(&PolicyKnobs) -> Option<T>,
) -> bool {
    let Some(mine) = knobs[me].as_ref().and_then(&get) else {
        return false;
    };
    knobs
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != me)
        .any(|(_, k)| k.as_ref().and_then(&get).is_some_and(|v| v != mine))
}

fn variant_column(ed: &EditorHandle, i: usize, all: &[Option<PolicyKnobs>]) -> Html {
    let exp = &ed.experiment;
    let variant = &exp.variants[i];
    let remove = {
        let ed = ed.clone();
        Callback::from(move |_| ed.dispatch(Edit::RemoveVariant(i)))
    };
    let head = html! {
        <div class="variant-head">
            { fields::text(ed, format!("v{i}.label"), html! { "Label" }, &variant.label, move |text| Edit::Label { variant: i, text }) }
            { fields::select(ed, format!("v{i}.era"), html! { "Era" }, era_options(), ed.policy_of(i).era.name(), move |v| {
                Edit::Era { variant: i, era: v.parse().expect("listed eras parse") }
            }) }
            if exp.variants.len() > 1 {
                <button class="icon" title={format!("remove variant {}", variant.label)} onclick={remove}>{ "×" }</button>
            }
        </div>
    };
    let Some(k) = &all[i] else {
        return html! {
            <div class="variant" data-variant={i.to_string()}>
                { head }
                <p class="hint">{ "Fix the machine or the policy to see this variant's domains." }</p>
            </div>
        };
    };
    let level_heads = k.levels.iter().map(|l| {
        let title = if l.present {
            format!("{} domain", l.name)
        } else {
            format!("{}: degenerate on this machine (same span as its child, or one CPU), so the kernel drops it", l.name)
        };
        html! { <th class={classes!((!l.present).then_some("degenerate"))} {title}>{ l.name }</th> }
    });
    let flag_rows = k.flag_names.iter().enumerate().map(|(fi, flag)| {
        let cells = k.levels.iter().map(|l| {
            let knob = l.flags[fi];
            let diff = l.present && differs(all, i, |o| o.flag(l.name, flag));
            let (level, flag_name) = (l.name.to_string(), flag.to_string());
            html! {
                <td class={classes!(diff.then_some("diff"), knob.changed().then_some("changed"))}>
                    { fields::checkbox(ed, flag_field(i, l.name, flag), format!("SD_{flag} at {}", l.name),
                        knob.value, !l.present, move |on| Edit::Flag {
                            variant: i, level: level.clone(), flag: flag_name.clone(), on,
                        }) }
                </td>
            }
        });
        html! { <tr><th scope="row">{ format!("SD_{flag}") }</th>{ for cells }</tr> }
    });
    let param_rows = LevelParam::ALL.iter().enumerate().map(|(pi, p)| {
        let cells = k.levels.iter().map(|l| {
            let knob = l.params[pi];
            let diff = l.present && differs(all, i, |o| o.level(l.name).map(|x| x.params[pi].value));
            let (level, param) = (l.name.to_string(), p.name().to_string());
            html! {
                <td class={classes!(diff.then_some("diff"), knob.changed().then_some("changed"))}>
                    { fields::cell_input(ed, format!("v{i}.{}.{}", l.name, p.name()),
                        format!("{} at {}", p.name(), l.name), knob.value, !l.present,
                        move |text| Edit::LevelParam { variant: i, level: level.clone(), param: param.clone(), text }) }
                </td>
            }
        });
        html! { <tr class="param"><th scope="row">{ p.name() }</th>{ for cells }</tr> }
    });
    let features = k.features.iter().map(|(name, knob)| {
        let diff = differs(all, i, |o| o.features.iter().find(|(n, _)| n == name).map(|(_, f)| f.value));
        let n = name.to_string();
        html! {
            <label class={classes!("check", diff.then_some("diff"), knob.changed().then_some("changed"))}>
                { fields::checkbox(ed, format!("v{i}.feature.{name}"), name.to_string(), knob.value, false,
                    move |on| Edit::Feature { variant: i, name: n.clone(), on }) }
                { *name }
            </label>
        }
    });
    let tunables = k.tunables.iter().map(|(name, knob)| {
        let diff = differs(all, i, |o| {
            o.tunables
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, t)| t.value)
        });
        let n = name.to_string();
        html! {
            <div class={classes!(diff.then_some("diff"), knob.changed().then_some("changed"))}>
                { fields::text(ed, format!("v{i}.tunable.{name}"), html! { *name }, knob.value,
                    move |text| Edit::Tunable { variant: i, name: n.clone(), text }) }
            </div>
        }
    });
    html! {
        <div class="variant" data-variant={i.to_string()}>
            { head }
            <div class="table-scroll">
                <table class="flags">
                    <thead><tr><th>{ "level" }</th>{ for level_heads }</tr></thead>
                    <tbody>{ for flag_rows }{ for param_rows }</tbody>
                </table>
            </div>
            <h3>{ "Features" }</h3>
            <div class="features">{ for features }</div>
            <h3>{ "Tunables" }</h3>
            <div class="grid-fields tunables">{ for tunables }</div>
        </div>
    }
}

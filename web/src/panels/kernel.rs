//! The Kernel panel: each variant's whole policy side by side, as the era
//! names it on this machine: SD flags and parameters per domain level,
//! features and tunables. Values that differ between variants are marked.

use super::Props;
use crate::fields::{self, Form};
use crate::state::{Edit, PolicyEdit, VariantEdit};
use schedlab::knobs::{LevelKnobs, PolicyKnobs};
use schedlab::policy::{Era, LevelParam};
use yew::prelude::*;

#[function_component]
pub fn KernelPanel(props: &Props) -> Html {
    view(&Form::of(&props.editor))
}

fn era_options() -> Vec<(String, String)> {
    Era::ALL
        .iter()
        .map(|e| (e.name().to_string(), e.name().to_string()))
        .collect()
}

pub fn view(form: &Form) -> Html {
    let ed = form.editor;
    let exp = &ed.experiment;
    let knobs: Vec<Option<PolicyKnobs>> = (0..exp.variants.len())
        .map(|i| ed.knobs_of(i).ok().cloned())
        .collect();
    html! {
        <section class="panel" id="kernel-panel" aria-labelledby="kernel-h">
            <div class="panel-head">
                <h2 id="kernel-h">{ "Kernel" }</h2>
                { fields::select(form, html! { "Base era" }, era_options(), exp.policy.era.name(), |v| {
                    PolicyEdit::BaseEra(v.parse().expect("listed eras parse"))
                }) }
                if exp.variants.len() >= 2 {
                    <button class="secondary" id="copy-a-to-b" onclick={form.on(PolicyEdit::Copy { from: 0, to: 1 })}>
                        { format!("Copy {} to {}", exp.variants[0].label, exp.variants[1].label) }
                    </button>
                }
                if exp.variants.len() < 4 {
                    <button class="secondary" id="add-variant" onclick={form.on(PolicyEdit::AddVariant)}>{ "+ variant" }</button>
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
                { for (0..exp.variants.len()).map(|i| variant_column(form, i, &knobs)) }
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

/// Variant `i`: its label and era, then its domains, features and tunables.
fn variant_column(form: &Form, i: usize, all: &[Option<PolicyKnobs>]) -> Html {
    let Some(k) = &all[i] else {
        return html! {
            <div class="variant" data-variant={i.to_string()}>
                { variant_head(form, i) }
                <p class="hint">{ "Fix the machine or the policy to see this variant's domains." }</p>
            </div>
        };
    };
    html! {
        <div class="variant" data-variant={i.to_string()}>
            { variant_head(form, i) }
            { domains_table(form, i, k, all) }
            <h3>{ "Features" }</h3>
            <div class="features">{ for features(form, i, k, all) }</div>
            <h3>{ "Tunables" }</h3>
            <div class="grid-fields tunables">{ for tunables(form, i, k, all) }</div>
        </div>
    }
}

fn variant_head(form: &Form, i: usize) -> Html {
    let ed = form.editor;
    let variant = &ed.experiment.variants[i];
    let edit = move |e| Edit::variant(i, e);
    html! {
        <div class="variant-head">
            { fields::text(form, html! { "Label" }, &variant.label, move |text| edit(VariantEdit::Label(text))) }
            { fields::select(form, html! { "Era" }, era_options(), ed.policy_of(i).era.name(), move |v| {
                edit(VariantEdit::Era(v.parse().expect("listed eras parse")))
            }) }
            if ed.experiment.variants.len() > 1 {
                <button class="icon" title={format!("remove variant {}", variant.label)}
                    onclick={form.on(PolicyEdit::RemoveVariant(i))}>{ "×" }</button>
            }
        </div>
    }
}

/// The era's levels on this machine (degenerate ones disabled) by SD flag
/// and parameter.
fn domains_table(form: &Form, i: usize, k: &PolicyKnobs, all: &[Option<PolicyKnobs>]) -> Html {
    let level_heads = k.levels.iter().map(|l| {
        let title = if l.present {
            format!("{} domain", l.name)
        } else {
            format!("{}: degenerate on this machine (same span as its child, or one CPU), so the kernel drops it", l.name)
        };
        html! { <th class={classes!((!l.present).then_some("degenerate"))} {title}>{ l.name }</th> }
    });
    let flag_rows = k.flag_names.iter().enumerate().map(|(fi, flag)| {
        let cells = k
            .levels
            .iter()
            .map(|l| flag_cell(form, i, l, fi, flag, all));
        html! { <tr><th scope="row">{ format!("SD_{flag}") }</th>{ for cells }</tr> }
    });
    let param_rows = LevelParam::ALL.iter().enumerate().map(|(pi, p)| {
        let cells = k.levels.iter().map(|l| param_cell(form, i, l, pi, *p, all));
        html! { <tr class="param"><th scope="row">{ p.name() }</th>{ for cells }</tr> }
    });
    html! {
        <div class="table-scroll">
            <table class="flags">
                <thead><tr><th>{ "level" }</th>{ for level_heads }</tr></thead>
                <tbody>{ for flag_rows }{ for param_rows }</tbody>
            </table>
        </div>
    }
}

fn flag_cell(
    form: &Form,
    i: usize,
    l: &LevelKnobs,
    fi: usize,
    flag: &str,
    all: &[Option<PolicyKnobs>],
) -> Html {
    let knob = l.flags[fi];
    let diff = l.present && differs(all, i, |o| o.flag(l.name, flag));
    let (level, flag_name) = (l.name.to_string(), flag.to_string());
    let make = move |on| {
        let (level, flag) = (level.clone(), flag_name.clone());
        Edit::variant(i, VariantEdit::Flag { level, flag, on })
    };
    html! {
        <td class={classes!(diff.then_some("diff"), knob.changed().then_some("changed"))}>
            { fields::checkbox(form, format!("SD_{flag} at {}", l.name), knob.value, !l.present, make) }
        </td>
    }
}

fn param_cell(
    form: &Form,
    i: usize,
    l: &LevelKnobs,
    pi: usize,
    param: LevelParam,
    all: &[Option<PolicyKnobs>],
) -> Html {
    let knob = l.params[pi];
    let diff = l.present && differs(all, i, |o| o.level(l.name).map(|x| x.params[pi].value));
    let level = l.name.to_string();
    let make = move |text| {
        let level = level.clone();
        Edit::variant(i, VariantEdit::LevelParam { level, param, text })
    };
    html! {
        <td class={classes!(diff.then_some("diff"), knob.changed().then_some("changed"))}>
            { fields::cell_input(form, format!("{} at {}", param.name(), l.name), knob.value, !l.present, make) }
        </td>
    }
}

fn features<'a>(
    form: &'a Form,
    i: usize,
    k: &'a PolicyKnobs,
    all: &'a [Option<PolicyKnobs>],
) -> impl Iterator<Item = Html> + 'a {
    k.features.iter().map(move |(name, knob)| {
        let diff = differs(all, i, |o| {
            o.features
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, f)| f.value)
        });
        let n = name.to_string();
        let make = move |on| Edit::variant(i, VariantEdit::Feature { name: n.clone(), on });
        html! {
            <label class={classes!("check", diff.then_some("diff"), knob.changed().then_some("changed"))}>
                { fields::checkbox(form, name.to_string(), knob.value, false, make) }
                { *name }
            </label>
        }
    })
}

fn tunables<'a>(
    form: &'a Form,
    i: usize,
    k: &'a PolicyKnobs,
    all: &'a [Option<PolicyKnobs>],
) -> impl Iterator<Item = Html> + 'a {
    k.tunables.iter().map(move |(name, knob)| {
        let diff = differs(all, i, |o| {
            o.tunables
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, t)| t.value)
        });
        let n = name.to_string();
        let make = move |text| {
            Edit::variant(
                i,
                VariantEdit::Tunable {
                    name: n.clone(),
                    text,
                },
            )
        };
        html! {
            <div class={classes!(diff.then_some("diff"), knob.changed().then_some("changed"))}>
                { fields::text(form, html! { *name }, knob.value, make) }
            </div>
        }
    })
}

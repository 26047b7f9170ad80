//! The panels rendered natively (their `view` functions give yew's virtual
//! DOM, read here as a browser would show it) against the editor's error
//! lookup: every field an edit's error can be filed under is an input the
//! panels render, once, and an error filed there (either kind) is shown at
//! that input. A panel that built an id by hand, dropped a field, or showed
//! an input's error under another id fails here.

use super::{kernel, machine, workload};
use crate::fields::Form;
use crate::state::{
    Edit, Editor, FieldId, MachineEdit, PolicyEdit, ShapeField, VariantEdit, WorkloadEdit,
};
use schedlab::experiment::MachineRef;
use schedlab::policy::{Era, LevelParam};
use schedlab::presets;
use schedlab::topology::Layout;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use yew::prelude::*;
use yew::virtual_dom::{VNode, VTag};

/// The three panels as the page renders them.
fn render(ed: &Editor) -> VNode {
    let form = Form {
        editor: ed,
        edit: Callback::noop(),
    };
    html! {
        <>
            { machine::view(&form, "", Callback::noop()) }
            { workload::view(&form, None, Callback::noop()) }
            { kernel::view(&form) }
        </>
    }
}

/// Calls `visit(tag, ancestors)` for every element, depth first.
fn walk<'a>(
    node: &'a VNode,
    up: &mut Vec<&'a VTag>,
    visit: &mut impl FnMut(&'a VTag, &[&'a VTag]),
) {
    match node {
        VNode::VTag(tag) => {
            visit(tag, up);
            if let Some(children) = tag.children() {
                up.push(tag);
                walk(children, up, visit);
                up.pop();
            }
        }
        VNode::VList(list) => {
            for child in list.iter() {
                walk(child, up, visit);
            }
        }
        _ => {}
    }
}

fn attr<'a>(tag: &'a VTag, name: &str) -> Option<&'a str> {
    tag.attributes
        .iter()
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// The text a user reads in `node`.
fn text(node: &VNode) -> String {
    match node {
        VNode::VText(t) => t.text.to_string(),
        VNode::VTag(tag) => tag.children().map(text).unwrap_or_default(),
        VNode::VList(list) => list.iter().map(text).collect(),
        _ => String::new(),
    }
}

/// An input bound to a field, and the element around it that shows its
/// error (its label, table cell or details).
struct Rendered {
    is_checkbox: bool,
    around: VNode,
}

/// Every `data-field` the panels render; panics on one rendered twice.
fn rendered_fields(ed: &Editor) -> BTreeMap<String, Rendered> {
    let root = render(ed);
    let mut found = BTreeMap::new();
    walk(&root, &mut Vec::new(), &mut |tag, up| {
        let Some(field) = attr(tag, "data-field") else {
            return;
        };
        let around = up
            .iter()
            .rev()
            .find(|t| matches!(t.tag(), "label" | "td" | "details"))
            .unwrap_or_else(|| panic!("{field} is in no label, cell or details"));
        let r = Rendered {
            is_checkbox: attr(tag, "type") == Some("checkbox"),
            around: VNode::VTag(Rc::new((*around).clone())),
        };
        assert!(
            found.insert(field.to_string(), r).is_none(),
            "{field} is rendered twice"
        );
    });
    found
}

/// Every edit a user can make to `ed` at a field, listed from the core (the
/// machine's spec, each variant's knobs, the benchmark's parameters), not
/// from the panels.
fn user_edits(ed: &Editor) -> Vec<Edit> {
    let exp = &ed.experiment;
    let text = String::new;
    let mut edits: Vec<Edit> = vec![
        MachineEdit::Preset("any".into()).into(),
        MachineEdit::Custom.into(),
        MachineEdit::ImportLscpu(text()).into(),
        PolicyEdit::BaseEra(Era::ALL[0]).into(),
        WorkloadEdit::Kind(exp.workload.kind().into()).into(),
        WorkloadEdit::Sweep {
            param: text(),
            values: text(),
        }
        .into(),
        WorkloadEdit::Seed(text()).into(),
        WorkloadEdit::Repeats(text()).into(),
        WorkloadEdit::RtApp {
            text: text(),
            imported: Ok((text(), text())),
        }
        .into(),
        WorkloadEdit::Trace {
            imported: Err(text()),
        }
        .into(),
    ];
    edits.push(match exp.workload {
        schedlab::workload::bench::Benchmark::Custom(_) => WorkloadEdit::Program(text()).into(),
        _ => WorkloadEdit::ToCustom(Ok(text())).into(),
    });
    if let MachineRef::Spec(spec) = &exp.machine {
        {
            if let Layout::Shape(_) = spec.layout {
                edits.extend(ShapeField::ALL.map(|field| {
                    MachineEdit::Shape {
                        field,
                        text: text(),
                    }
                    .into()
                }));
            }
            edits.push(MachineEdit::Distances(text()).into());
            let costs = serde_json::to_value(&spec.costs).unwrap();
            for (key, v) in costs.as_object().unwrap() {
                if v.is_number() || v.is_array() {
                    edits.push(
                        MachineEdit::Cost {
                            key: key.clone(),
                            text: text(),
                        }
                        .into(),
                    );
                }
            }
        }
    }
    if exp.variants.len() >= 2 {
        edits.push(PolicyEdit::Copy { from: 0, to: 1 }.into());
    }
    for p in exp.workload.params() {
        edits.push(
            WorkloadEdit::Param {
                name: p.name.into(),
                text: text(),
            }
            .into(),
        );
    }
    for i in 0..exp.variants.len() {
        let variant = |e| Edit::variant(i, e);
        edits.push(
            WorkloadEdit::Variant {
                variant: i,
                text: text(),
            }
            .into(),
        );
        for name in exp.variants[i].workload.keys() {
            edits.push(
                WorkloadEdit::VariantParam {
                    variant: i,
                    name: name.clone(),
                    text: Some(text()),
                }
                .into(),
            );
        }
        edits.push(variant(VariantEdit::Label(text())));
        edits.push(variant(VariantEdit::Era(Era::ALL[0])));
        let Ok(k) = ed.knobs_of(i) else {
            continue;
        };
        for l in &k.levels {
            let level = || l.name.to_string();
            for flag in &k.flag_names {
                let flag = flag.to_string();
                edits.push(variant(VariantEdit::Flag {
                    level: level(),
                    flag,
                    on: true,
                }));
            }
            for param in LevelParam::ALL {
                edits.push(variant(VariantEdit::LevelParam {
                    level: level(),
                    param,
                    text: text(),
                }));
            }
        }
        for (name, _) in &k.features {
            edits.push(variant(VariantEdit::Feature {
                name: name.to_string(),
                on: true,
            }));
        }
        for (name, _) in &k.tunables {
            edits.push(variant(VariantEdit::Tunable {
                name: name.to_string(),
                text: text(),
            }));
        }
    }
    edits
}

/// Which kind of edit `e` is. Adding an edit fails to compile here, and
/// then [`KINDS`] (what [`user_edits`] must cover) asks to be updated.
fn kind(e: &Edit) -> &'static str {
    match e {
        // Page-level, from the picker, the gallery or the history: their
        // errors are the summary's above the panels (an experiment file's
        // under its input, outside the panels: web/e2e/fuzz.test.mjs).
        Edit::LoadPreset(_) | Edit::Load(_) | Edit::OpenFile(_) => "load",
        Edit::Policy(PolicyEdit::AddVariant | PolicyEdit::RemoveVariant(_)) => "variants",
        Edit::Machine(e) => match e {
            MachineEdit::Preset(_) => "machine preset",
            MachineEdit::Custom => "machine custom",
            MachineEdit::ImportLscpu(_) => "lscpu",
            MachineEdit::Shape { .. } => "shape",
            MachineEdit::Distances(_) => "distances",
            MachineEdit::Cost { .. } => "cost",
        },
        Edit::Policy(e) => match e {
            PolicyEdit::BaseEra(_) => "base era",
            PolicyEdit::Copy { .. } => "copy",
            PolicyEdit::AddVariant | PolicyEdit::RemoveVariant(_) => unreachable!(),
            PolicyEdit::Variant(_, e) => match e {
                VariantEdit::Label(_) => "label",
                VariantEdit::Era(_) => "era",
                VariantEdit::Flag { .. } => "flag",
                VariantEdit::LevelParam { .. } => "level param",
                VariantEdit::Feature { .. } => "feature",
                VariantEdit::Tunable { .. } => "tunable",
            },
        },
        Edit::Workload(e) => match e {
            WorkloadEdit::Kind(_) => "kind",
            WorkloadEdit::Param { .. } => "param",
            WorkloadEdit::Variant { .. } => "variant workload",
            WorkloadEdit::VariantParam { .. } => "variant param",
            WorkloadEdit::Sweep { .. } => "sweep",
            WorkloadEdit::Seed(_) => "seed",
            WorkloadEdit::Repeats(_) => "repeats",
            WorkloadEdit::Program(_) => "program",
            WorkloadEdit::ToCustom(_) => "to custom",
            WorkloadEdit::RtApp { .. } => "rtapp",
            WorkloadEdit::Trace { .. } => "trace",
        },
    }
}

/// Every kind of edit made at a field of a panel.
const KINDS: [&str; 25] = [
    "machine preset",
    "machine custom",
    "lscpu",
    "shape",
    "distances",
    "cost",
    "base era",
    "copy",
    "label",
    "era",
    "flag",
    "level param",
    "feature",
    "tunable",
    "kind",
    "param",
    "variant workload",
    "variant param",
    "sweep",
    "seed",
    "repeats",
    "program",
    "to custom",
    "rtapp",
    "trace",
];

/// Editors that between them show every kind of field: each preset (every
/// era and benchmark), a hand-built machine, an imported one.
fn editors() -> Vec<Editor> {
    let mut eds: Vec<Editor> = presets::names().map(Editor::preset).collect();
    let lscpu = "0,0,0,0,,0,0,0,0\n1,1,0,0,,1,1,1,0\n2,0,0,0,,0,0,0,0\n3,1,0,0,,1,1,1,0\n";
    let imported = edit(hand_built(), MachineEdit::ImportLscpu(lscpu.into()).into());
    assert!(imported.is_valid(), "{:?}", imported.field_errors);
    let mut exp = Editor::preset("retune-pipe-test").experiment;
    exp.workload = schedlab::workload::bench::Benchmark::Custom(exp.workload.to_custom().unwrap());
    let custom = Editor::new(exp);
    assert!(custom.is_valid(), "{:?}", custom.field_errors);
    eds.extend([hand_built(), imported, custom]);
    eds
}

fn edit(ed: Editor, e: Edit) -> Editor {
    (*Rc::new(ed).reduce(e)).clone()
}

/// A preset's machine made editable: shape, distances and costs.
fn hand_built() -> Editor {
    let ed = edit(
        Editor::preset("retune-pipe-test"),
        MachineEdit::Custom.into(),
    );
    assert!(ed.is_valid(), "{:?}", ed.invalid);
    ed
}

#[test]
fn every_field_an_edit_names_is_rendered_once_and_shows_its_errors() {
    let mut kinds = BTreeSet::new();
    for ed in editors() {
        let name = &ed.experiment.name;
        let edits = user_edits(&ed);
        let fields: BTreeSet<FieldId> = edits.iter().map(Edit::field).collect();
        kinds.extend(edits.iter().map(kind));

        // Both ways: each field an error can be filed under is rendered,
        // and each rendered field is one (or the sweep's parameter).
        let rendered = rendered_fields(&ed);
        for f in &fields {
            assert!(
                rendered.contains_key(&f.to_string()),
                "{name}: {f} is not rendered"
            );
        }
        let named: BTreeSet<String> = fields.iter().map(FieldId::to_string).collect();
        for f in rendered.keys() {
            assert!(
                named.contains(f) || *f == FieldId::SweepParam.to_string(),
                "{name}: {f} is rendered but no edit's error is filed under it"
            );
        }

        // An error that does not parse, filed at every field at once.
        let mut refused = ed.clone();
        for f in &fields {
            let error = format!("refused at {f}");
            refused.field_errors.insert(f.clone(), ("x".into(), error));
        }
        let shown = rendered_fields(&refused);
        for f in &fields {
            let r = &shown[&f.to_string()];
            // A switch offers only what the era or benchmark names, so its
            // edits are not refused; the core's error after one is shown in
            // the page's summary (above the panels) as well as at a field.
            if !r.is_checkbox {
                let around = text(&r.around);
                assert!(
                    around.contains(&format!("refused at {f}")),
                    "{name}: {f} shows {around:?}"
                );
            }
        }
    }
    let missing: Vec<_> = KINDS.iter().filter(|k| !kinds.contains(*k)).collect();
    assert!(missing.is_empty(), "no field rendered for {missing:?}");
}

#[test]
fn the_cores_error_for_the_experiment_is_shown_at_the_field_that_caused_it() {
    // The error at each field of a hand-built machine's editor in turn.
    let ed = hand_built();
    for edit in user_edits(&ed) {
        let f = edit.field();
        let mut invalid = ed.clone();
        invalid.invalid = Some((f.clone(), format!("invalid at {f}")));
        let shown = rendered_fields(&invalid);
        let r = &shown[&f.to_string()];
        if !r.is_checkbox {
            let around = text(&r.around);
            assert!(
                around.contains(&format!("invalid at {f}")),
                "{f} shows {around:?}"
            );
        }
    }
}

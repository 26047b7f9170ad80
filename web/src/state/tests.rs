//! Edits as a user makes them, checked against the core.

use super::*;
use schedlab::policy::{Era, LevelParam};

fn edit(ed: Editor, action: Edit) -> Editor {
    (*Rc::new(ed).reduce(action)).clone()
}

/// The workload's parameter `name` typed as `text`.
fn param(ed: Editor, name: &str, text: &str) -> Editor {
    edit(
        ed,
        WorkloadEdit::Param {
            name: name.into(),
            text: text.into(),
        }
        .into(),
    )
}

#[test]
fn presets_load_valid_and_unedited() {
    for name in presets::names() {
        let ed = Editor::preset(name);
        assert!(ed.is_valid(), "{name}: {:?}", ed.invalid);
        assert_eq!(ed.unedited_preset(), Some(name));
    }
}

#[test]
fn a_flag_in_b_changes_b_only_and_back_to_default_is_no_change() {
    let ed = Editor::preset("waweight-tbench");
    let a_before = ed.policy_of(0);
    let b_knobs = ed.knobs_of(1).unwrap();
    let was = b_knobs.flag("NUMA", "WAKE_AFFINE").unwrap();
    let flip = |ed, on| {
        edit(
            ed,
            Edit::variant(
                1,
                VariantEdit::Flag {
                    level: "NUMA".into(),
                    flag: "WAKE_AFFINE".into(),
                    on,
                },
            ),
        )
    };
    let ed2 = flip(ed.clone(), !was);
    assert!(ed2.is_valid(), "{:?}", ed2.invalid);
    assert_eq!(
        ed2.knobs_of(1).unwrap().flag("NUMA", "WAKE_AFFINE"),
        Some(!was)
    );
    assert_eq!(ed2.policy_of(0), a_before);
    assert_eq!(ed2.unedited_preset(), None);
    let ed3 = flip(ed2, was);
    assert_eq!(ed3.policy_of(1), ed.policy_of(1));
    assert!(ed3.experiment.variants[1].policy.levels.is_empty());
}

#[test]
fn unparsable_text_stays_at_its_field_and_blocks_run() {
    let ed = Editor::preset("retune-pipe-test");
    let bad = edit(
        ed.clone(),
        WorkloadEdit::Param {
            name: "loops".into(),
            text: "lots".into(),
        }
        .into(),
    );
    assert!(!bad.is_valid());
    assert_eq!(bad.experiment, ed.experiment);
    assert_eq!(bad.text_of(&FieldId::Param("loops".into()), 1), "lots");
    assert!(bad
        .error_at(&FieldId::Param("loops".into()))
        .unwrap()
        .contains("not a whole number"));
    let fixed = edit(
        bad,
        WorkloadEdit::Param {
            name: "loops".into(),
            text: "1000".into(),
        }
        .into(),
    );
    assert!(fixed.is_valid());
    assert_eq!(fixed.text_of(&FieldId::Param("loops".into()), 1000), "1000");
}

#[test]
fn an_unset_optional_number_is_typed_as_a_number_and_cleared_by_emptying() {
    let ed = Editor::preset("waweight-hackbench-20");
    let exits = param(ed.clone(), "exit_us", "150");
    assert!(exits.is_valid(), "{:?}", exits.invalid);
    assert_eq!(
        schedlab::json_path::value_of(&exits.experiment.workload)["exit_us"],
        150
    );
    let bad = param(exits.clone(), "exit_us", "soon");
    assert!(!bad.is_valid());
    assert!(bad.error_at(&FieldId::Param("exit_us".into())).is_some());
    let cleared = param(exits, "exit_us", "");
    assert!(cleared.is_valid(), "{:?}", cleared.invalid);
    assert_eq!(cleared.experiment, ed.experiment);
    // An affinity that looks like a number stays the CPU list it is.
    let pinned = param(ed, "affinity", "3");
    assert!(pinned.is_valid(), "{:?}", pinned.invalid);
    assert_eq!(
        schedlab::json_path::value_of(&pinned.experiment.workload)["affinity"],
        "3"
    );
}

#[test]
fn a_limit_between_two_fields_clears_when_either_is_fixed() {
    let ed = Editor::preset("waweight-netperf-tcp-rr");
    let short = param(ed, "duration_ms", "20");
    let err = short
        .error_at(&FieldId::Param("duration_ms".into()))
        .unwrap();
    assert!(err.contains("warmup_ms is 20; it must be 0..=19"), "{err}");
    let fixed = param(short, "warmup_ms", "5");
    assert!(fixed.is_valid(), "{:?}", fixed.invalid);
}

#[test]
fn the_cores_range_errors_show_at_the_edited_field() {
    let ed = Editor::preset("retune-pipe-test");
    let bad = edit(
        ed.clone(),
        Edit::variant(
            0,
            VariantEdit::LevelParam {
                level: "NODE".into(),
                param: LevelParam::ImbalancePct,
                text: "50".into(),
            },
        ),
    );
    let nodes_imbalance = FieldId::Variant(
        0,
        VariantField::LevelParam {
            level: "NODE".into(),
            param: LevelParam::ImbalancePct,
        },
    );
    let err = bad.error_at(&nodes_imbalance).unwrap();
    assert!(err.contains("must be 100..=1000"), "{err}");
    assert!(!bad.is_valid());
    assert_eq!(
        bad.experiment, ed.experiment,
        "a refused edit changes nothing"
    );
    assert_eq!(bad.text_of(&nodes_imbalance, 125), "50");
}

#[test]
fn a_hand_built_machine_and_an_lscpu_import_validate() {
    let mut ed = Editor::preset("retune-pipe-test");
    for (field, text) in [
        (ShapeField::Nodes, "2"),
        (ShapeField::CoresPerLlc, "3"),
        (ShapeField::ThreadsPerCore, "2"),
    ] {
        ed = edit(
            ed,
            MachineEdit::Shape {
                field,
                text: text.into(),
            }
            .into(),
        );
    }
    assert!(ed.is_valid(), "{:?} {:?}", ed.invalid, ed.field_errors);
    assert_eq!(ed.topology().unwrap().nnodes(), 2);
    let bad = edit(
        ed.clone(),
        MachineEdit::Distances("10 20\n20".into()).into(),
    );
    assert!(bad
        .error_at(&FieldId::Distances)
        .unwrap()
        .contains("square"));

    let lscpu = "# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n0,0,0,0,,0,0,0,0\n1,1,0,0,,1,1,1,0\n2,0,0,0,,0,0,0,0\n3,1,0,0,,1,1,1,0\n";
    let imported = edit(ed, MachineEdit::ImportLscpu(lscpu.into()).into());
    assert!(imported.is_valid(), "{:?}", imported.invalid);
    assert_eq!(imported.topology().unwrap().ncpus(), 4);
    let garbage = edit(
        imported.clone(),
        MachineEdit::ImportLscpu("0,x\n".into()).into(),
    );
    assert!(garbage.error_at(&FieldId::Lscpu).unwrap().contains("line"));
    assert_eq!(garbage.experiment, imported.experiment);
}

#[test]
fn era_changes_drop_what_the_era_cannot_name_and_say_so() {
    let ed = edit(
        Editor::preset("retune-pipe-test"),
        Edit::variant(
            0,
            VariantEdit::Flag {
                level: "NODE".into(),
                flag: "WAKE_IDLE".into(),
                on: true,
            },
        ),
    );
    assert!(ed.is_valid(), "{:?}", ed.invalid);
    let modern = edit(ed, PolicyEdit::BaseEra(Era::V4_15).into());
    assert!(modern.is_valid(), "{:?}", modern.invalid);
    assert!(modern
        .experiment
        .variants
        .iter()
        .all(|v| v.policy.era.is_none()));
    let notice = modern.notice.unwrap();
    assert!(notice.contains("NODE WAKE_IDLE"), "{notice}");
}

#[test]
fn going_to_6_12_drops_the_latency_tunables() {
    // 6.12 has sched_base_slice_ns, not sched_latency_ns: a 6.5
    // variant's latency change is dropped when it moves to 6.12.
    let ed = Editor::preset("schbench-desktop");
    let ed = edit(
        ed,
        Edit::variant(
            1,
            VariantEdit::Tunable {
                name: "sched_latency_ns".into(),
                text: "12000000".into(),
            },
        ),
    );
    assert!(ed.is_valid(), "{:?}", ed.invalid);
    let eevdf = edit(ed, Edit::variant(1, VariantEdit::Era(Era::V6_12)));
    assert!(eevdf.is_valid(), "{:?}", eevdf.invalid);
    assert!(eevdf.experiment.variants[1].policy.tunables.is_empty());
    let notice = eevdf.notice.unwrap();
    assert!(notice.contains("sched_latency_ns"), "{notice}");
}

#[test]
fn a_new_benchmark_keeps_what_it_can_and_says_what_it_dropped() {
    let ed = edit(
        Editor::preset("kvm-pipe-test-pinning"),
        WorkloadEdit::Kind("lat_ctx".into()).into(),
    );
    assert!(ed.is_valid(), "{:?}", ed.invalid);
    assert_eq!(ed.experiment.variants[0].workload["affinity"], "0");
    assert_eq!(ed.notice, None);
    let ed = edit(
        Editor::preset("waweight-tbench"),
        WorkloadEdit::Kind("hackbench".into()).into(),
    );
    assert_eq!(ed.experiment.sweep, None);
    assert_eq!(
        ed.notice.as_deref(),
        Some("hackbench has no use for the sweep over clients; dropped.")
    );
}

#[test]
fn copy_a_to_b_makes_their_policies_equal() {
    let ed = Editor::preset("waweight-tbench");
    assert_ne!(ed.policy_of(0), ed.policy_of(1));
    let ed = edit(ed, PolicyEdit::Copy { from: 0, to: 1 }.into());
    assert_eq!(ed.policy_of(0), ed.policy_of(1));
}

#[test]
fn a_sweep_parses_values_of_the_parameters_type() {
    let ed = Editor::preset("retune-pipe-test");
    let ed = edit(
        ed,
        WorkloadEdit::Sweep {
            param: "loops".into(),
            values: "1000, 2000,3000".into(),
        }
        .into(),
    );
    assert!(ed.is_valid(), "{:?}", ed.invalid);
    assert_eq!(
        ed.experiment.points().unwrap().len(),
        3 * ed.experiment.variants.len()
    );
    let bad = edit(
        ed,
        WorkloadEdit::Sweep {
            param: "loops".into(),
            values: "1000, x".into(),
        }
        .into(),
    );
    assert!(bad.error_at(&FieldId::Sweep).unwrap().contains("\"x\""));
}

#[test]
fn costs_edit_as_numbers_lists_or_json_with_the_cores_checks() {
    let cost = |ed, key: &str, text: &str| {
        edit(
            ed,
            MachineEdit::Cost {
                key: key.into(),
                text: text.into(),
            }
            .into(),
        )
    };
    let ed = cost(Editor::preset("kvm-pipe-test-pinning"), "ipi_ns", "900");
    assert!(ed.is_valid(), "{:?}", ed.field_errors);
    let ed = cost(ed, "miss_ns", "5, 20, 90, 150");
    assert!(ed.is_valid(), "{:?}", ed.field_errors);
    let c1 = r#"[{"name":"C1","exit_latency_ns":2000,"target_residency_ns":2000}]"#;
    let ed = cost(ed, "cstates", c1);
    assert!(ed.is_valid(), "{:?}", ed.field_errors);
    let spec = ed.experiment.machine.spec().unwrap();
    assert_eq!(
        (
            spec.costs.ipi_ns,
            spec.costs.miss_ns[1],
            spec.costs.cstates.len()
        ),
        (900, 20, 1)
    );
    let bad = cost(ed.clone(), "cstates", "[{\"name\":");
    assert!(
        bad.error_at(&FieldId::Cost("cstates".into()))
            .unwrap()
            .contains("the text ends where a value should be"),
        "{:?}",
        bad.error_at(&FieldId::Cost("cstates".into()))
    );
    let short = cost(ed, "miss_ns", "5, 20");
    assert!(short
        .error_at(&FieldId::Cost("miss_ns".into()))
        .unwrap()
        .contains("cost miss_ns"));
}

#[test]
fn per_variant_changes_are_fields_checked_like_the_base() {
    let ed = Editor::preset("kvm-pipe-test-pinning");
    let set = |ed, variant, name: &str, text: Option<&str>| {
        edit(
            ed,
            WorkloadEdit::VariantParam {
                variant,
                name: name.into(),
                text: text.map(str::to_string),
            }
            .into(),
        )
    };
    // A taskset -c list for the free variant, and its loops.
    let ed2 = set(ed.clone(), 1, "affinity", Some("0-1"));
    let ed2 = set(ed2, 1, "loops", Some("5000"));
    assert!(ed2.is_valid(), "{:?}", ed2.invalid);
    let free = &ed2.experiment.variants[1].workload;
    assert_eq!(free["affinity"], "0-1");
    assert_eq!(free["loops"], 5000);
    // A CPU the machine does not have, and text that is no number: at the field.
    let field = FieldId::Variant(1, VariantField::WorkloadParam("affinity".into()));
    let bad = set(ed2.clone(), 1, "affinity", Some("0-7"));
    let err = bad.error_at(&field).expect("shown at the field");
    assert!(err.contains("0-7"), "{err}");
    assert!(!bad.is_valid());
    let loops = FieldId::Variant(1, VariantField::WorkloadParam("loops".into()));
    let bad = set(ed2.clone(), 1, "loops", Some("many"));
    assert!(bad
        .error_at(&loops)
        .unwrap()
        .contains("\"many\" is not a whole number"));
    assert_eq!(
        bad.experiment, ed2.experiment,
        "a refused edit changes nothing"
    );
    // Dropped: the variant runs the base again.
    let back = set(set(ed2, 1, "affinity", None), 1, "loops", None);
    assert!(back.experiment.variants[1].workload.is_empty());
    assert_eq!(back.experiment, ed.experiment);
    // A new change starts from the base's value (CPU 0 for an unset affinity).
    assert_eq!(starting_value(&ed.experiment.workload, "loops"), "20000");
    assert_eq!(starting_value(&ed.experiment.workload, "affinity"), "0");
}

#[test]
fn a_benchmark_becomes_a_custom_workload_edited_as_text_or_from_rt_app() {
    use crate::state::{FieldId, WorkloadEdit};
    use schedlab::workload::bench::Benchmark;
    let ed = |e: &Editor, w: WorkloadEdit| (*Rc::new(e.clone()).reduce(w.into())).clone();
    let start = Editor::preset("retune-pipe-test");
    let custom = ed(&start, to_custom_edit(&start));
    assert!(custom.is_valid(), "{:?}", custom.field_errors);
    let Benchmark::Custom(c) = &custom.experiment.workload else {
        panic!("{:?}", custom.experiment.workload)
    };
    assert_eq!(c.spec(), start.experiment.workload.build().unwrap().spec);
    // It travels in the link.
    let link = schedlab::codec::encode(&custom.experiment);
    assert_eq!(schedlab::codec::decode(&link).unwrap(), custom.experiment);

    // Text that is not JSON: the error has its line and column, the text stays.
    let bad = ed(
        &custom,
        WorkloadEdit::Program("{\n  \"tasks\": [\n}".into()),
    );
    let err = bad.error_at(&FieldId::Program).unwrap().to_string();
    assert!(err.starts_with("line 3, column 1"), "{err}");
    assert_eq!(bad.text_of(&FieldId::Program, ""), "{\n  \"tasks\": [\n}");
    assert_eq!(bad.experiment, custom.experiment);
    // A bad instruction: where it is in the text, its path, task and name.
    let bad = ed(
        &custom,
        WorkloadEdit::Program(
            r#"{"kind":"custom","tasks":[{"name":"a","program":[{"spin":1}]}]}"#.into(),
        ),
    );
    let err = bad.error_at(&FieldId::Program).unwrap().to_string();
    assert!(
        err.starts_with("line 1, column 50: workload.tasks[0].program[0] (task \"a\", spin)"),
        "{err}"
    );
    // A good one applies.
    let good = ed(
        &custom,
        WorkloadEdit::Program(
            r#"{"kind":"custom","duration_ms":5,"tasks":[{"name":"a","program":[{"forever":[{"compute":{"ns":1000}},{"sleep":{"ns":1000}}]}]}]}"#.into(),
        ),
    );
    assert!(good.is_valid(), "{:?}", good.field_errors);

    // A pasted rt-app file.
    let rt = ed(
        &start,
        rtapp_edit(
            r#"{"tasks":{"t":{"loop":-1,"run":1000,"timer":{"ref":"unique","period":5000}}},"global":{"duration":1}}"#,
        ),
    );
    assert!(rt.is_valid(), "{:?}", rt.field_errors);
    assert!(matches!(rt.experiment.workload, Benchmark::Custom(_)));
    let rt_bad = ed(&start, rtapp_edit(r#"{"tasks":{"t":{"memrun":100}}}"#));
    let err = rt_bad.error_at(&FieldId::RtApp).unwrap().to_string();
    assert!(
        err.starts_with("tasks.t.memrun (line 1): the memrun event is not modelled"),
        "{err}"
    );
}

/// A keystroke that changes neither the machine nor a policy keeps the
/// topology, knobs and domains already built (the same allocation); a
/// machine change rebuilds them.
#[test]
fn the_drawing_and_knobs_are_rebuilt_only_when_machine_or_policy_change() {
    let ed = Editor::preset("waweight-tbench");
    let seeded = edit(ed.clone(), Edit::Workload(WorkloadEdit::Seed("5".into())));
    assert_eq!(seeded.experiment.seed, 5);
    assert!(Rc::ptr_eq(&ed.derived.0, &seeded.derived.0));
    let moved = edit(seeded, Edit::Machine(MachineEdit::Preset("epyc-2s".into())));
    assert!(!Rc::ptr_eq(&ed.derived.0, &moved.derived.0));
    assert_eq!(moved.topology().unwrap().ncpus(), 256);
    assert_eq!(
        moved.knobs_of(0).unwrap(),
        &PolicyKnobs::of(&topology(&moved.experiment).unwrap(), &moved.policy_of(0)).unwrap()
    );
}

/// "Edit as custom workload" as the page edits with it: the worker builds
/// the benchmark ([`crate::worker::handle`]), its answer made the edit.
fn to_custom_edit(ed: &Editor) -> WorkloadEdit {
    use crate::protocol::{Request, Response};
    let experiment = serde_json::to_string(&ed.experiment).unwrap();
    let resp = crate::worker::handle(
        Request::ToCustom { experiment },
        &mut |_| {},
        &|| 0.0,
        &|url| panic!("fetched {url}"),
    );
    match resp {
        Response::Imported { workload, .. } => WorkloadEdit::ToCustom(Ok(workload)),
        other => panic!("{other:?}"),
    }
}

/// A pasted rt-app file as the page edits with it: imported by the worker
/// ([`crate::worker::handle`]), its answer made the edit.
fn rtapp_edit(text: &str) -> WorkloadEdit {
    use crate::protocol::{Request, Response};
    let resp = crate::worker::handle(
        Request::ImportRtapp { text: text.into() },
        &mut |_| {},
        &|| 0.0,
        &|url| panic!("fetched {url}"),
    );
    let imported = match resp {
        Response::Imported { workload, summary } => Ok((workload, summary)),
        Response::Failed { error } => Err(error),
        other => panic!("{other:?}"),
    };
    WorkloadEdit::RtApp {
        text: text.into(),
        imported,
    }
}

#[test]
fn an_experiment_file_opens_as_downloaded_and_a_bad_one_is_refused_where_it_was_given() {
    let ed = Editor::preset("retune-lat-ctx");
    let other = presets::get("waweight-tbench").unwrap();
    let opened = edit(ed.clone(), Edit::OpenFile(crate::json::experiment(&other)));
    assert_eq!(opened.experiment, other);
    assert!(opened.is_valid(), "{:?}", opened.invalid);

    let truncated = crate::json::experiment(&other);
    let truncated = &truncated[..truncated.len() / 2];
    let refused = edit(opened.clone(), Edit::OpenFile(truncated.into()));
    let error = refused.error_at(&FieldId::ExperimentFile).unwrap();
    assert!(error.contains("line"), "{error}");
    assert_eq!(refused.experiment, other, "a refused file changes nothing");

    // A good file after a bad one clears the error.
    let again = edit(refused, Edit::OpenFile(crate::json::experiment(&other)));
    assert_eq!(again.error_at(&FieldId::ExperimentFile), None);
}

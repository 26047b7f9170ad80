//! The core's layers, enforced: a module may use its own layer and the
//! layers below it, never one above (docs/ARCHITECTURE.md, "Layers").
//!
//! 0 model: machines, policy as data, domains, knobs, counters, task programs
//! 1 scheduler: run queues, load tracking, wakeup placement, balancing
//! 2 engine: event queue, time, segments, the cost model
//! 3 workloads: the benchmark generators and what they report, rt-app import
//! 4 experiments: specs, points, presets
//! 5 outputs: codec, report, explain, trace export, fidelity

use std::path::Path;

/// The layer of a top-level module (or `workload::bench`).
fn layer_of(module: &str) -> usize {
    match module {
        "arith" | "error" | "json_path" | "limits" | "sorted_map" | "cpuset" | "topology"
        | "policy" | "domains" | "knobs" | "counters" | "calibration" | "seed"
        | "workload::program" => 0,
        "sched" => 1,
        "engine" | "cost" => 2,
        "workload::bench" | "workload::rtapp" => 3,
        "experiment" | "presets" | "estimate" | "bench" => 4,
        "codec" | "report" | "explain" | "trace_export" | "fidelity" => 5,
        other => {
            panic!("module {other} has no layer: add it to tests/layers.rs and ARCHITECTURE.md")
        }
    }
}

/// `workload::bench` and `workload::program` are two layers; every other
/// module is its first path segment.
fn module_of(path: &str) -> String {
    let segs: Vec<&str> = path.split("::").collect();
    match segs.as_slice() {
        ["workload", "bench", ..] => "workload::bench".into(),
        ["workload", "program", ..] => "workload::program".into(),
        ["workload", "rtapp", ..] => "workload::rtapp".into(),
        [first, ..] => first.to_string(),
        [] => String::new(),
    }
}

/// Every `crate::a::b` a file names outside comments and `#[cfg(test)]` modules.
fn uses(text: &str) -> Vec<String> {
    let code = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    let mut out = Vec::new();
    for line in code.lines() {
        let line = line.trim_start();
        if line.starts_with("//") {
            continue;
        }
        let mut rest = line;
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            let path: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            out.push(module_of(path.trim_end_matches(':')));
        }
    }
    out
}

fn visit(dir: &Path, src: &Path, found: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            visit(&path, src, found);
            continue;
        }
        let rel = path
            .strip_prefix(src)
            .unwrap()
            .to_string_lossy()
            .to_string();
        if rel == "lib.rs" || rel.ends_with("tests.rs") || rel.ends_with("testenv.rs") {
            continue;
        }
        let module = module_of(&rel.trim_end_matches(".rs").replace('/', "::"));
        let text = std::fs::read_to_string(&path).unwrap();
        for used in uses(&text) {
            found.push((module.clone(), used));
        }
    }
}

#[test]
fn no_module_uses_a_layer_above_its_own() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    visit(&src, &src, &mut found);
    assert!(
        found.len() > 100,
        "the scan found too little: {}",
        found.len()
    );
    let mut upward: Vec<String> = found
        .iter()
        .filter(|(m, used)| layer_of(used) > layer_of(m))
        .map(|(m, used)| {
            format!(
                "{m} (layer {}) uses {used} (layer {})",
                layer_of(m),
                layer_of(used)
            )
        })
        .collect();
    upward.sort();
    upward.dedup();
    assert!(
        upward.is_empty(),
        "upward dependencies:\n{}",
        upward.join("\n")
    );
}

#[test]
fn the_scheduler_never_sees_the_engine_or_the_cost_model() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    visit(&src.join("sched"), &src, &mut found);
    let bad: Vec<_> = found
        .iter()
        .filter(|(_, used)| used == "engine" || used == "cost")
        .collect();
    assert!(bad.is_empty(), "{bad:?}");
}

#[test]
fn the_layer_check_catches_an_upward_use() {
    // The checker itself: a model module naming the engine is flagged.
    let uses = uses("use crate::engine::Sim;\n// crate::experiment in a comment\n");
    assert_eq!(uses, vec!["engine".to_string()]);
    assert!(layer_of("engine") > layer_of("domains"));
}

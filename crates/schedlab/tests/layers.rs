//! The core's layers, enforced: a module may use its own layer and the
//! layers below it, never one above (docs/ARCHITECTURE.md, "Layers").
//!
//! 0 model: machines, policy as data, domains, knobs, counters, task programs
//! 1 scheduler: run queues, load tracking, wakeup placement, balancing
//! 2 engine: event queue, time, segments, the cost model
//! 3 workloads: the benchmark generators and what they report, rt-app and
//!   scheduler-trace import
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
        "workload::bench" | "workload::rtapp" | "recording" => 3,
        "experiment" | "presets" | "estimate" | "bench" | "decisions" => 4,
        "codec" | "report" | "explain" | "trace_export" | "fidelity" | "why_report" => 5,
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

// ---- Import circles ---------------------------------------------------
//
// Each source file is a module (a `mod.rs` is its directory's module). A
// module depends on another when its code (comments and test modules
// aside) names it: `crate::a::b`, `super::x`, `self::x`, or a child module
// by its bare name (`cfs::CfsRq` inside sched/mod.rs). Within a crate the
// graph must have no cycle: two modules that need each other are one room
// with two doors, and the shared part belongs in a module of its own.

use std::collections::{BTreeMap, BTreeSet};

/// The module path of a file under `src`: `sched/wakeup/slow.rs` ->
/// `sched::wakeup::slow`; `sched/mod.rs` -> `sched`.
fn module_path(rel: &str) -> Vec<String> {
    let rel = rel.trim_end_matches(".rs");
    let mut segs: Vec<String> = rel.split('/').map(String::from).collect();
    if segs.last().is_some_and(|s| s == "mod") {
        segs.pop();
    }
    segs
}

fn is_test_file(rel: &str) -> bool {
    rel.ends_with("tests.rs") || rel.ends_with("testenv.rs") || rel.contains("/tests/")
}

/// Every module file of a crate's `src` (crate roots and test files aside).
fn module_files(src: &Path) -> BTreeMap<Vec<String>, String> {
    fn walk(dir: &Path, src: &Path, out: &mut BTreeMap<Vec<String>, String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, src, out);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path
                .strip_prefix(src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            if rel == "lib.rs" || rel == "main.rs" || rel.starts_with("bin/") || is_test_file(&rel)
            {
                continue;
            }
            out.insert(module_path(&rel), std::fs::read_to_string(&path).unwrap());
        }
    }
    let mut out = BTreeMap::new();
    walk(src, src, &mut out);
    out
}

/// The code of a file without comments and `#[cfg(test)] mod tests`.
fn code_text(text: &str) -> String {
    let code = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    code.lines()
        .map(str::trim_start)
        .filter(|l| !l.starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The longest prefix of `path` that is a module; `None` outside the crate.
fn resolve(path: &[String], modules: &BTreeSet<Vec<String>>) -> Option<Vec<String>> {
    (1..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|p| modules.contains(p))
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The paths written at `rest`, relative to the `::` just before it:
/// `a::b::C` is one; a group `{a::B, c::{D, E}, self}` is one per
/// member, each cut at its first nested group.
fn paths_at(rest: &str) -> Vec<Vec<String>> {
    let rest = rest.trim_start();
    if let Some(body) = rest.strip_prefix('{') {
        let (mut depth, mut start, mut out) = (0usize, 0usize, Vec::new());
        for (i, c) in body.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    out.extend(paths_at(&body[start..i]));
                    return out;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    out.extend(paths_at(&body[start..i]));
                    start = i + 1;
                }
                _ => {}
            }
        }
        return out;
    }
    let path: String = rest
        .chars()
        .take_while(|c| is_ident_char(*c) || *c == ':')
        .collect();
    let segs: Vec<String> = path
        .split("::")
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect();
    let after = &rest[path.len()..];
    if path.ends_with("::") && after.starts_with('{') {
        // `a::{...}`: each member of the group under `a`.
        let members = paths_at(after);
        if !members.is_empty() {
            return members
                .into_iter()
                .map(|m| segs.iter().cloned().chain(m).collect())
                .collect();
        }
    }
    if segs.is_empty() {
        vec![]
    } else {
        vec![segs]
    }
}

/// The modules `module` names in `text`.
fn module_deps(
    module: &[String],
    text: &str,
    modules: &BTreeSet<Vec<String>>,
) -> BTreeSet<Vec<String>> {
    let parent: Vec<String> = module[..module.len().saturating_sub(1)].to_vec();
    let children: Vec<&String> = modules
        .iter()
        .filter(|m| m.len() == module.len() + 1 && m.starts_with(module))
        .map(|m| m.last().unwrap())
        .collect();
    let code = code_text(text);
    let mut deps = BTreeSet::new();
    for (i, _) in code.match_indices("::") {
        // The identifier that ends at this `::`; only a path's head counts.
        let start = code[..i]
            .rfind(|c: char| !is_ident_char(c))
            .map_or(0, |j| j + 1);
        if code[..start].ends_with("::") {
            continue;
        }
        let head = &code[start..i];
        let base: Vec<String> = match head {
            "crate" => vec![],
            "super" => parent.clone(),
            "self" => module.to_vec(),
            h if children.iter().any(|c| *c == h) => {
                module.iter().cloned().chain([h.to_string()]).collect()
            }
            _ => continue,
        };
        let tails = paths_at(&code[i + 2..]);
        for tail in if tails.is_empty() {
            vec![vec![]]
        } else {
            tails
        } {
            let full: Vec<String> = base.iter().cloned().chain(tail).collect();
            if let Some(target) = resolve(&full, modules) {
                if target != module {
                    deps.insert(target);
                }
            }
        }
    }
    deps
}

/// The strongly connected components of more than one module (Tarjan).
fn circles(graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        index: BTreeMap<&'a Vec<String>, usize>,
        low: BTreeMap<&'a Vec<String>, usize>,
        stack: Vec<&'a Vec<String>>,
        on_stack: BTreeSet<&'a Vec<String>>,
        found: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a Vec<String>) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in self.graph.get(v).into_iter().flatten() {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let lw = self.low[w];
                    let lv = self.low.get_mut(v).unwrap();
                    *lv = (*lv).min(lw);
                } else if self.on_stack.contains(w) {
                    let iw = self.index[w];
                    let lv = self.low.get_mut(v).unwrap();
                    *lv = (*lv).min(iw);
                }
            }
            if self.low[v] == self.index[v] {
                let mut scc = Vec::new();
                loop {
                    let w = self.stack.pop().unwrap();
                    self.on_stack.remove(w);
                    scc.push(w.join("::"));
                    if w == v {
                        break;
                    }
                }
                if scc.len() > 1 {
                    scc.sort();
                    self.found.push(scc);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v) {
            walk.visit(v);
        }
    }
    walk.found.sort();
    walk.found
}

fn import_graph(src: &Path) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let files = module_files(src);
    let modules: BTreeSet<Vec<String>> = files.keys().cloned().collect();
    files
        .iter()
        .map(|(m, text)| (m.clone(), module_deps(m, text, &modules)))
        .collect()
}

/// Fails unless the crate's circles are exactly `known` (each a sorted
/// list of modules): a new circle fails, and so does one that is gone but
/// still listed, so the list only shrinks.
fn assert_circles(src: &Path, known: &[&[&str]]) {
    let graph = import_graph(src);
    let edges: usize = graph.values().map(BTreeSet::len).sum();
    assert!(
        edges > 50,
        "the scan of {src:?} found too little: {edges} edges"
    );
    let found = circles(&graph);
    let known: Vec<Vec<String>> = known
        .iter()
        .map(|c| c.iter().map(|m| m.to_string()).collect())
        .collect();
    let show = |cs: &[Vec<String>]| {
        cs.iter()
            .map(|c| c.join(" <-> "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(
        found == known,
        "import circles in {src:?} (each line: modules that need each other):\n{}\n\
         expected only:\n{}",
        show(&found),
        show(&known)
    );
}

#[test]
fn no_import_circle_in_the_core() {
    assert_circles(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &[]);
}

#[test]
fn no_import_circle_in_the_page() {
    assert_circles(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../web/src"),
        &[],
    );
}

#[test]
fn the_circle_check_finds_a_circle_and_resolves_paths() {
    let modules: BTreeSet<Vec<String>> = [
        vec!["a".to_string()],
        vec!["a".to_string(), "b".to_string()],
        vec!["c".to_string()],
    ]
    .into_iter()
    .collect();
    let a = vec!["a".to_string()];
    let ab = vec!["a".to_string(), "b".to_string()];
    let c = vec!["c".to_string()];
    // A child by bare name, a sibling through super, an item's path cut
    // back to its module; comments are not code.
    assert_eq!(
        module_deps(&a, "use b::Thing;\n// crate::c::X\n", &modules),
        [ab.clone()].into_iter().collect()
    );
    assert_eq!(
        module_deps(&ab, "fn f() { super::g(); crate::c::h::<u8>(); }", &modules),
        [a.clone(), c.clone()].into_iter().collect()
    );
    // A group, across lines, with a nested group.
    assert_eq!(
        module_deps(&c, "use crate::{\n    a::{b::X, Y},\n};", &modules),
        [a.clone(), ab.clone()].into_iter().collect()
    );
    let graph: BTreeMap<_, BTreeSet<_>> = [
        (a.clone(), [ab.clone()].into_iter().collect()),
        (ab.clone(), [a.clone()].into_iter().collect()),
        (c.clone(), [a.clone()].into_iter().collect()),
    ]
    .into_iter()
    .collect();
    assert_eq!(
        circles(&graph),
        vec![vec!["a".to_string(), "a::b".to_string()]]
    );
}

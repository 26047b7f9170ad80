//! The oracle for refactoring: every preset's results JSON (the bytes
//! `schedlab run PRESET --format json --jobs 1` prints), its explanation, and
//! the fidelity table, committed under tests/golden/. A change that moves
//! any of them either is a named fix that updates them in its own commit
//! (run with SCHEDLAB_BLESS=1 to rewrite them) or is a bug. The book's
//! tables (docs/book/src/generated) are made and checked here too.

use schedlab::experiment::{run_all, Results};
use schedlab::{explain, fidelity, presets};
use std::path::PathBuf;

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/results")
}

/// Every preset's results, run on two threads (the machine has two cores).
fn all_results() -> Vec<(&'static str, Results)> {
    let names: Vec<&'static str> = presets::names().collect();
    let (odd, even): (Vec<_>, Vec<_>) = names.iter().enumerate().partition(|(i, _)| i % 2 == 1);
    let run = |part: Vec<(usize, &&'static str)>| {
        part.into_iter()
            .map(|(i, &name)| {
                let exp = presets::get(name).unwrap();
                (i, name, run_all(&exp, &mut |_, _| true).unwrap())
            })
            .collect::<Vec<_>>()
    };
    let mut all = std::thread::scope(|s| {
        let a = s.spawn(|| run(odd));
        let mut b = run(even);
        b.extend(a.join().unwrap());
        b
    });
    all.sort_by_key(|(i, _, _)| *i);
    all.into_iter().map(|(_, n, r)| (n, r)).collect()
}

/// The tables the book includes (docs/book/src/generated): generated here
/// from the same results, so the book cannot drift from the code.
fn book_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/book/src/generated")
}

/// The presets whose commit-style tables the book's chapters show.
const BOOK_TABLES: &[&str] = &[
    "retune-lat-ctx",
    "retune-pipe-test",
    "retune-sysbench-pgsql",
    "waweight-hackbench-20",
    "waweight-tbench",
    "waweight-netperf-tcp-rr",
    "kvm-pipe-test-pinning",
];

/// Compares `actual` with the golden file `name`, or rewrites it when blessing.
fn check(name: &str, actual: &str, mismatches: &mut Vec<String>) {
    check_in(&golden_dir(), name, actual, mismatches);
}

fn check_in(dir: &std::path::Path, name: &str, actual: &str, mismatches: &mut Vec<String>) {
    let path = dir.join(name);
    if std::env::var_os("SCHEDLAB_BLESS").is_some() {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run with SCHEDLAB_BLESS=1 to write it)",
            path.display()
        )
    });
    if expected != actual {
        let line = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(expected.lines().count().min(actual.lines().count()));
        mismatches.push(format!(
            "{name}: first difference at line {}: expected {:?}, got {:?}",
            line + 1,
            expected.lines().nth(line).unwrap_or("<end>"),
            actual.lines().nth(line).unwrap_or("<end>")
        ));
    }
}

#[test]
fn every_preset_result_explanation_and_the_fidelity_table_match_the_goldens() {
    let results = all_results();
    let mut mismatches = Vec::new();
    let mut explanations = String::new();
    for (name, r) in &results {
        check(
            &format!("{name}.json"),
            &(r.to_json() + "\n"),
            &mut mismatches,
        );
        explanations.push_str(&format!("{name}: {}\n", explain::explain(r)));
    }
    check("explanations.txt", &explanations, &mut mismatches);
    // A preset as shipped has its results above; the fidelity table's
    // checks at other run lengths are run here, once each.
    let mut swept: Vec<(schedlab::experiment::Experiment, Results)> = Vec::new();
    let mut run = |exp: &schedlab::experiment::Experiment| {
        let shipped = presets::get(&exp.name).map_err(|e| e.to_string())?;
        if let Some((_, r)) = results.iter().find(|(n, _)| *n == exp.name) {
            if shipped == *exp {
                return Ok(r.clone());
            }
        }
        if let Some((_, r)) = swept.iter().find(|(e, _)| e == exp) {
            return Ok(r.clone());
        }
        let r = run_all(exp, &mut |_, _| true).map_err(|e| e.to_string())?;
        swept.push((exp.clone(), r.clone()));
        Ok(r)
    };
    let table = fidelity::table(&mut run).unwrap();
    check("fidelity.txt", &table, &mut mismatches);
    for commit in ["retune-", "waweight-", "kvm-"] {
        let table = fidelity::table_for(commit, &mut run).unwrap();
        check_in(
            &book_dir(),
            &format!("{commit}fidelity.txt"),
            &table,
            &mut mismatches,
        );
    }
    for name in BOOK_TABLES {
        let exp = presets::get(name).unwrap();
        let (_, r) = results.iter().find(|(n, _)| n == name).unwrap();
        let param = exp.sweep.as_ref().map(|s| s.param.as_str());
        let table = schedlab::report::table(r, param, exp.sum_row);
        check_in(&book_dir(), &format!("{name}.txt"), &table, &mut mismatches);
    }
    assert!(
        mismatches.is_empty(),
        "results moved (a named fix updates the goldens with SCHEDLAB_BLESS=1 in its own commit):\n{}",
        mismatches.join("\n")
    );
}

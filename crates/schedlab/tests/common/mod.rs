//! Helpers shared by the integration tests.

use schedlab::engine::stats::TraceWindow;
use schedlab::engine::{RunOutput, Sim, SimConfig};
use schedlab::policy::PolicySpec;
use schedlab::topology::{HwCosts, Layout, MachineSpec, Numbering, Shape, Topology};
use schedlab::workload::program::{Workload, WorkloadSpec};

/// A one-package-per-node machine of the given shape and costs.
#[allow(dead_code)]
pub fn machine(nodes: u32, llcs: u32, cores: u32, threads: u32, costs: HwCosts) -> Topology {
    Topology::from_spec(&MachineSpec {
        name: "test".into(),
        description: String::new(),
        layout: Layout::Shape(Shape {
            nodes,
            packages_per_node: 1,
            llcs_per_package: llcs,
            cores_per_llc: cores,
            threads_per_core: threads,
            numbering: Numbering::SiblingsSplit,
        }),
        distances: None,
        costs,
        calibration: None,
    })
    .unwrap()
}

/// A run of the task-language workload `workload_json` under `policy`,
/// traced (up to 100,000 events) and with the invariants checked after
/// every event.
#[allow(dead_code)] // Not every test binary uses every helper.
pub fn run_traced(
    topo: &Topology,
    policy: PolicySpec,
    workload_json: &str,
    seed: u64,
    duration_ns: Option<u64>,
) -> RunOutput {
    let spec: WorkloadSpec = serde_json::from_str(workload_json).unwrap();
    let cfg = SimConfig {
        policy: policy.resolve(topo.ncpus()).unwrap(),
        workload: Workload::compile(&spec, topo.ncpus()).unwrap(),
        topology: topo.clone(),
        seed,
        start_ns: 0,
        duration_ns,
        trace: Some(TraceWindow {
            start_ns: 0,
            end_ns: u64::MAX,
            max_events: 100_000,
            from_first_wakeup: false,
        }),
        measure_from_ns: 0,
        check_invariants: true,
        why: None,
    };
    Sim::new(&cfg).unwrap().run().unwrap()
}

/// The times of a label's marks.
#[allow(dead_code)]
pub fn marks(out: &RunOutput, label: &str) -> Vec<u64> {
    out.marks
        .iter()
        .find(|m| m.label == label)
        .map_or(Vec::new(), |m| m.series.iter().map(|&(t, _)| t).collect())
}

/// A doc's generated blocks, each a ```text fence after `<!-- {kind} NAME -->`,
/// checked against what the code makes now; `SCHEDLAB_BLESS=1` rewrites them.
#[allow(dead_code)]
pub fn doc_blocks_are_current(doc: &str, kind: &str, blocks: &[(&str, String)]) {
    let path = format!("{}/../../{doc}", env!("CARGO_MANIFEST_DIR"));
    let mut text = std::fs::read_to_string(&path).unwrap();
    let mut stale = Vec::new();
    for (name, block) in blocks {
        let marker = format!("<!-- {kind} {name} -->\n```text\n");
        let start = text
            .find(&marker)
            .unwrap_or_else(|| panic!("no {marker:?} in {doc}"));
        let start = start + marker.len();
        let end = start + text[start..].find("```").unwrap();
        if text[start..end] != *block {
            stale.push(*name);
            text.replace_range(start..end, block);
        }
    }
    if std::env::var_os("SCHEDLAB_BLESS").is_some() {
        std::fs::write(&path, text).unwrap();
    } else {
        assert!(
            stale.is_empty(),
            "stale blocks in {doc}: {stale:?} (SCHEDLAB_BLESS=1 rewrites them)"
        );
    }
}

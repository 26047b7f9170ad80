//! Helpers shared by the integration tests.

use schedlab::topology::{HwCosts, Layout, MachineSpec, Numbering, Shape, Topology};

/// A one-package-per-node machine of the given shape and costs.
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

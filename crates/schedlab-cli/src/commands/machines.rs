//! `schedlab machines`: the machine presets.

use crate::failure::Failure;
use schedlab::topology;

pub fn command() -> Result<String, Failure> {
    let mut out = String::new();
    for name in topology::PRESETS {
        let spec = topology::preset(name)?;
        let topo = topology::Topology::from_spec(&spec)?;
        out.push_str(&format!("{}\n    {}\n", topo.summary(), spec.description));
    }
    Ok(out)
}

//! `schedlab machines`: the machine presets.

use schedlab::topology;

pub fn command() -> Result<String, String> {
    let mut out = String::new();
    for name in topology::PRESETS {
        let spec = topology::preset(name).map_err(|e| e.to_string())?;
        let topo = topology::Topology::from_spec(&spec).map_err(|e| e.to_string())?;
        out.push_str(&format!("{}\n    {}\n", topo.summary(), spec.description));
    }
    Ok(out)
}

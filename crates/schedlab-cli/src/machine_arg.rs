//! Turning a command-line machine argument into a topology: a preset name, a
//! machine JSON file, or a file of `lscpu -p` output.

use schedlab::topology::{self, MachineSpec, Topology};
use serde::de::DeserializeOwned;
use std::path::Path;

pub fn load(arg: &str) -> Result<Topology, String> {
    let spec = if topology::PRESETS.contains(&arg) || !Path::new(arg).exists() {
        topology::preset(arg)
            .map_err(|e| format!("{e} (or give a path to a machine JSON or lscpu -p file)"))?
    } else if arg.ends_with(".json") {
        read_json::<MachineSpec>(arg)?
    } else {
        let text = std::fs::read_to_string(arg).map_err(|e| format!("{arg}: {e}"))?;
        let name = Path::new(arg)
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or(arg);
        topology::parse_lscpu(name, &text).map_err(|e| format!("{arg}: {e}"))?
    };
    Topology::from_spec(&spec).map_err(|e| format!("{arg}: {e}"))
}

/// Reads a JSON file; errors name the file, the field, line and column, in words.
pub fn read_json<T: DeserializeOwned>(path: &str) -> Result<T, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    schedlab::error::from_json(path, &text).map_err(|e| e.to_string())
}

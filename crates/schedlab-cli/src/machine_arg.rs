//! Turning a command-line machine argument into a topology: a preset name, a
//! machine JSON file, or a file of `lscpu -p` output.

use crate::failure::Failure;
use schedlab::error::Concern;
use schedlab::topology::{self, MachineSpec, Topology};
use serde::de::DeserializeOwned;
use std::path::Path;

pub fn load(arg: &str) -> Result<Topology, Failure> {
    let spec = if topology::PRESETS.contains(&arg) || !Path::new(arg).exists() {
        topology::preset(arg).map_err(|e| {
            Failure::from(e).hint("(or give a path to a machine JSON or lscpu -p file)")
        })?
    } else if arg.ends_with(".json") {
        read_json::<MachineSpec>(Concern::Machine, arg)?
    } else {
        let text = std::fs::read_to_string(arg).map_err(|e| format!("{arg}: {e}"))?;
        let name = Path::new(arg)
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or(arg);
        topology::parse_lscpu(name, &text).map_err(|e| Failure::from(e).context(arg))?
    };
    Topology::from_spec(&spec).map_err(|e| Failure::from(e).context(arg))
}

/// Reads a JSON file about `concern`; errors name the file, the field,
/// line and column, in words.
pub fn read_json<T: DeserializeOwned>(concern: Concern, path: &str) -> Result<T, Failure> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    Ok(schedlab::error::from_json(concern, path, &text)?)
}

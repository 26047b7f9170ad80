//! wasm-bindgen API for pages that call the schedlab core from JavaScript.
//! Values cross as plain JS objects (serde-wasm-bindgen).

use schedlab::topology::{self, Topology};
use serde::Serialize;
use wasm_bindgen::prelude::*;

#[derive(Serialize)]
struct MachineInfo {
    name: String,
    summary: String,
    description: String,
}

/// The machine presets: `[{name, summary, description}]`.
#[wasm_bindgen(js_name = machinePresets)]
pub fn machine_presets() -> Result<JsValue, JsError> {
    let mut out = Vec::new();
    for name in topology::PRESETS {
        let spec = topology::preset(name)?;
        let topo = Topology::from_spec(&spec)?;
        out.push(MachineInfo {
            name: name.to_string(),
            summary: topo.summary(),
            description: spec.description,
        });
    }
    Ok(serde_wasm_bindgen::to_value(&out)?)
}

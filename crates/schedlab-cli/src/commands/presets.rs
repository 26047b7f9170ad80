//! `schedlab presets`: the shipped experiments.

use schedlab::presets;

pub fn command() -> Result<String, String> {
    let mut out = String::new();
    for name in presets::names() {
        let e = presets::get(name).map_err(|e| e.to_string())?;
        out.push_str(&format!("{name}\n    {}\n", e.description));
    }
    Ok(out)
}

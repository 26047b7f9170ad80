//! `schedlab presets`: the shipped experiments.

use crate::failure::Failure;
use schedlab::presets;

pub fn command() -> Result<String, Failure> {
    let mut out = String::new();
    for name in presets::names() {
        let e = presets::get(name)?;
        out.push_str(&format!("{name}\n    {}\n", e.description));
    }
    Ok(out)
}

//! `schedlab show`: a preset's experiment JSON.

use schedlab::presets;

#[derive(clap::Args)]
pub struct Args {
    name: String,
}

pub fn command(args: Args) -> Result<String, String> {
    Ok(presets::get(&args.name)
        .map_err(|e| e.to_string())?
        .to_json()
        + "\n")
}

//! `schedlab calibrate`: this machine's topology from the kernel and its
//! costs from native probes, as a machine JSON.

use crate::calibrate;
use crate::failure::Failure;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Write the machine JSON here (default: standard output).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// The machine's name.
    #[arg(long, default_value = "calibrated")]
    name: String,
    /// Short probes (a few seconds, noisier): for tests.
    #[arg(long)]
    quick: bool,
}

pub fn command(args: Args) -> Result<String, Failure> {
    let spec = calibrate::calibrate(&calibrate::Options {
        name: args.name,
        quick: args.quick,
    })?;
    let json = serde_json::to_string_pretty(&spec).map_err(|e| e.to_string())? + "\n";
    match args.output {
        Some(file) => {
            std::fs::write(&file, &json).map_err(|e| format!("{}: {e}", file.display()))?;
            eprintln!("calibrate: wrote {}", file.display());
            Ok(String::new())
        }
        None => Ok(json),
    }
}

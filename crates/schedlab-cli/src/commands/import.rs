//! `schedlab import`: another tool's workload file as an experiment.

use crate::failure::Failure;
use std::path::PathBuf;

#[derive(clap::Subcommand)]
pub enum From {
    /// An rt-app file, read as rt-app reads it (comments, trailing commas,
    /// repeated keys): tasks (instance, loop, phases, cpus, priority), its
    /// events, global; anything not modelled is an error naming its key and
    /// line, and notes on standard error say what runs unlike rt-app.
    #[command(name = "rt-app")]
    RtApp {
        file: PathBuf,
        /// The machine preset to run it on.
        #[arg(long, default_value = "desktop-8c")]
        machine: String,
        /// Write the experiment here (default: standard output).
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
}

pub fn command(from: From) -> Result<String, Failure> {
    let From::RtApp {
        file,
        machine,
        output,
    } = from;
    let shown = file.display().to_string();
    let text = std::fs::read_to_string(&file).map_err(|e| format!("{shown}: {e}"))?;
    let name = file
        .file_stem()
        .map_or("rt-app".to_string(), |s| s.to_string_lossy().into_owned());
    let (exp, remarks) = schedlab::experiment::Experiment::from_rtapp(&text, &name, &machine)
        .map_err(|e| Failure::from(e).context(&shown))?;
    for line in remarks.to_string().lines() {
        eprintln!("schedlab: {line}");
    }
    experiment_out(&exp, output)
}

/// An imported experiment's JSON, written to `output` or returned to print.
pub fn experiment_out(
    exp: &schedlab::experiment::Experiment,
    output: Option<PathBuf>,
) -> Result<String, Failure> {
    let json = exp.to_json() + "\n";
    match output {
        Some(path) => {
            std::fs::write(&path, json).map_err(|e| format!("{}: {e}", path.display()))?;
            Ok(String::new())
        }
        None => Ok(json),
    }
}

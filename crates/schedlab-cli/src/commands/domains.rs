//! `schedlab domains`: each CPU's sched domains.

use super::DumpFormat;
use crate::failure::Failure;
use crate::machine_arg;
use schedlab::domains::Domains;
use schedlab::error::Concern;
use schedlab::policy::{Era, PolicySpec};

#[derive(clap::Args)]
pub struct Args {
    /// A machine preset name, a machine JSON file, or a file of `lscpu -p` output.
    machine: String,
    /// Kernel era: 2.6.27, 2.6.28, 4.15, 6.5 or 6.12.
    #[arg(long, default_value = "6.12")]
    era: String,
    /// A policy JSON file (era plus changes); overrides --era.
    #[arg(long)]
    policy: Option<String>,
    /// Only this CPU.
    #[arg(long)]
    cpu: Option<usize>,
    #[arg(long, value_enum, default_value = "text")]
    format: DumpFormat,
}

pub fn command(args: Args) -> Result<String, Failure> {
    let topo = machine_arg::load(&args.machine)?;
    let spec = match args.policy {
        Some(path) => machine_arg::read_json::<PolicySpec>(Concern::Policy, &path)?,
        None => PolicySpec::era(args.era.parse::<Era>()?),
    };
    let policy = spec.resolve(topo.ncpus())?;
    let domains = Domains::build(&topo, &policy)?;
    let cpus: Vec<usize> = match args.cpu {
        Some(c) if c < topo.ncpus() => vec![c],
        Some(c) => {
            return Err(format!(
                "--cpu {c} is not a CPU of {} (it has CPUs 0..={})",
                topo.name,
                topo.ncpus() - 1
            )
            .into())
        }
        None => (0..topo.ncpus()).collect(),
    };
    Ok(match args.format {
        DumpFormat::Text => format!("{}\n{}", topo.summary(), domains.dump_text(&cpus)),
        DumpFormat::Json => format!("{:#}\n", domains.dump_json(&cpus)),
    })
}

//! `schedlab`: the simulator core on the command line.
//!
//! Errors print one line to stderr and exit with code 2; nothing panics on
//! bad input.

mod machine_arg;

use clap::{Parser, Subcommand, ValueEnum};
use schedlab::domains::Domains;
use schedlab::policy::{Era, PolicySpec};
use schedlab::{limits, topology};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "schedlab",
    version,
    about = "Linux scheduler wakeup placement and load balancing, simulated"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Text,
    Json,
}

#[derive(Subcommand)]
enum Command {
    /// List the machine presets.
    Machines,
    /// Print each CPU's sched domains: span, groups, flags (names and bits), parameters.
    Domains {
        /// A machine preset name, a machine JSON file, or a file of `lscpu -p` output.
        machine: String,
        /// Kernel era: 2.6.27, 2.6.28, 4.15 or 6.5.
        #[arg(long, default_value = "6.5")]
        era: String,
        /// A policy JSON file (era plus changes); overrides --era.
        #[arg(long)]
        policy: Option<String>,
        /// Only this CPU.
        #[arg(long)]
        cpu: Option<usize>,
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// List the limits every experiment is checked against.
    Limits,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(out) => {
            print!("{out}");
            ExitCode::SUCCESS
        }
        Err(msg) => {
            eprintln!("schedlab: {msg}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> Result<String, String> {
    match cli.command {
        Command::Machines => {
            let mut out = String::new();
            for name in topology::PRESETS {
                let spec = topology::preset(name).map_err(|e| e.to_string())?;
                let topo = topology::Topology::from_spec(&spec).map_err(|e| e.to_string())?;
                out.push_str(&format!("{}\n    {}\n", topo.summary(), spec.description));
            }
            Ok(out)
        }
        Command::Domains {
            machine,
            era,
            policy,
            cpu,
            format,
        } => {
            let topo = machine_arg::load(&machine)?;
            let spec = match policy {
                Some(path) => machine_arg::read_json::<PolicySpec>(&path)?,
                None => PolicySpec::era(era.parse::<Era>().map_err(|e| e.to_string())?),
            };
            let policy = spec.resolve(topo.ncpus()).map_err(|e| e.to_string())?;
            let domains = Domains::build(&topo, &policy).map_err(|e| e.to_string())?;
            let cpus: Vec<usize> = match cpu {
                Some(c) if c < topo.ncpus() => vec![c],
                Some(c) => {
                    return Err(format!(
                        "--cpu {c} is not a CPU of {} (it has CPUs 0..={})",
                        topo.name,
                        topo.ncpus() - 1
                    ))
                }
                None => (0..topo.ncpus()).collect(),
            };
            Ok(match format {
                Format::Text => format!("{}\n{}", topo.summary(), domains.dump_text(&cpus)),
                Format::Json => format!("{:#}\n", domains.dump_json(&cpus)),
            })
        }
        Command::Limits => Ok(limits::ALL
            .iter()
            .map(|l| format!("{:<28} {}..={}\n", l.name, l.min, l.max))
            .collect()),
    }
}

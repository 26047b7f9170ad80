//! `schedlab`: the simulator core on the command line.
//!
//! Errors print one line to stderr and exit with code 2; nothing panics on
//! bad input.

mod bench;
mod calibrate;
mod fidelity;
mod machine_arg;
mod run;
mod shard;
mod validate;

use clap::{Parser, Subcommand, ValueEnum};
use schedlab::domains::Domains;
use schedlab::policy::{Era, PolicySpec};
use schedlab::{limits, presets, topology};
use std::io::IsTerminal;
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
enum DumpFormat {
    Text,
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum RunFormat {
    /// The tools' own output.
    Text,
    /// The commit-style A/B table.
    Table,
    Csv,
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
    },
    /// List the limits every experiment is checked against.
    Limits,
    /// List the shipped experiments.
    Presets,
    /// Print a preset's experiment JSON.
    Show { name: String },
    /// Run a preset, a playground link, or an experiment JSON file.
    Run {
        /// A preset name, a playground link (or its `#x=...` fragment), or a
        /// path to an experiment JSON file.
        experiment: String,
        #[arg(long, value_enum, default_value = "table")]
        format: RunFormat,
        /// Override the experiment's seed.
        #[arg(long)]
        seed: Option<u64>,
        /// Override the experiment's repeat count.
        #[arg(long)]
        repeats: Option<u32>,
        /// Points run in parallel (default: all cores).
        #[arg(long)]
        jobs: Option<usize>,
        /// Also print a sentence on the largest difference between the variants.
        #[arg(long)]
        explain: bool,
        /// Write each variant's traced window as Chrome trace-event JSON (Perfetto).
        #[arg(long, value_name = "FILE")]
        trace: Option<std::path::PathBuf>,
        /// Run only shard I of N (every N-th point, from point I-1) and print
        /// a part file (JSON) for `schedlab merge` instead of results.
        #[arg(long, value_name = "I/N", conflicts_with_all = ["format", "explain", "trace"])]
        shard: Option<String>,
        /// Only say about how long the run would take (from running the
        /// start of a few of its points for about a second), and stop.
        #[arg(long, conflicts_with_all = ["format", "explain", "trace"])]
        estimate: bool,
    },
    /// Assemble the part files of `schedlab run --shard I/N` (all N of them,
    /// any order) into the results an unsharded run prints.
    Merge {
        /// The part files.
        #[arg(required = true)]
        parts: Vec<String>,
        #[arg(long, value_enum, default_value = "table")]
        format: RunFormat,
        /// Also print a sentence on the largest difference between the variants.
        #[arg(long)]
        explain: bool,
        /// Write each variant's traced window as Chrome trace-event JSON (Perfetto).
        #[arg(long, value_name = "FILE")]
        trace: Option<std::path::PathBuf>,
    },
    /// Turn another tool's workload file into an experiment (JSON on
    /// standard output, or --output).
    Import {
        #[command(subcommand)]
        from: ImportFrom,
    },
    /// Encode a preset or experiment file as a link-safe string.
    Encode { experiment: String },
    /// Decode a link-safe string back to experiment JSON.
    Decode { code: String },
    /// Measure the engine's speed on standard cases.
    Bench {
        /// Presets to time instead of the standard cases (one repeat of
        /// each point, one after another).
        cases: Vec<String>,
    },
    /// Measure this machine: topology from the kernel, costs from native
    /// probes (each with its median, spread and how the cost follows).
    Calibrate {
        /// Write the machine JSON here (default: standard output).
        #[arg(short, long, value_name = "FILE")]
        output: Option<std::path::PathBuf>,
        /// The machine's name.
        #[arg(long, default_value = "calibrated")]
        name: String,
        /// Short probes (a few seconds, noisier): for tests.
        #[arg(long)]
        quick: bool,
    },
    /// Run the real scheduler benchmarks that are installed (perf bench
    /// sched pipe and messaging, hackbench) beside the same workloads
    /// simulated on a calibrated machine, with the era nearest this kernel.
    Validate {
        /// A machine JSON from `schedlab calibrate` (default: calibrate now).
        machine: Option<String>,
        /// Runs of each real benchmark.
        #[arg(long, default_value_t = 5)]
        runs: usize,
        /// Round trips of perf bench sched pipe (-l).
        #[arg(long, default_value_t = 50_000)]
        pipe_loops: u64,
        /// Messages per sender and receiver of hackbench and messaging (-l).
        #[arg(long, default_value_t = 100)]
        loops: u64,
        /// Group counts of hackbench (-g); the middle one also for the
        /// pipes, threads and messaging runs.
        #[arg(long, value_delimiter = ',', default_value = "1,2,4")]
        groups: Vec<u64>,
        /// Simulate this era instead of the one nearest the running kernel.
        #[arg(long)]
        era: Option<String>,
        /// When calibrating now, use short probes.
        #[arg(long)]
        quick: bool,
        #[arg(long, value_enum, default_value = "text")]
        format: DumpFormat,
        /// Simulations run in parallel (default: all cores).
        #[arg(long)]
        jobs: Option<usize>,
    },
    /// Every published number of the seed commits beside the simulated one.
    Fidelity {
        /// Points run in parallel (default: all cores).
        #[arg(long)]
        jobs: Option<usize>,
    },
}

#[derive(Subcommand)]
enum ImportFrom {
    /// An rt-app JSON file: tasks (instance, loop, phases, cpus, priority),
    /// run/runtime/sleep/timer events, global; anything not modelled is an
    /// error naming its key.
    #[command(name = "rt-app")]
    RtApp {
        file: std::path::PathBuf,
        /// The machine preset to run it on.
        #[arg(long, default_value = "desktop-8c")]
        machine: String,
        /// Write the experiment here (default: standard output).
        #[arg(short, long, value_name = "FILE")]
        output: Option<std::path::PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match dispatch(cli) {
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

fn dispatch(cli: Cli) -> Result<String, String> {
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
                DumpFormat::Text => format!("{}\n{}", topo.summary(), domains.dump_text(&cpus)),
                DumpFormat::Json => format!("{:#}\n", domains.dump_json(&cpus)),
            })
        }
        Command::Limits => Ok(limits::ALL
            .iter()
            .map(|l| format!("{:<28} {}..={}\n", l.name, l.min, l.max))
            .collect()),
        Command::Presets => {
            let mut out = String::new();
            for name in presets::names() {
                let e = presets::get(name).map_err(|e| e.to_string())?;
                out.push_str(&format!("{name}\n    {}\n", e.description));
            }
            Ok(out)
        }
        Command::Show { name } => {
            Ok(presets::get(&name).map_err(|e| e.to_string())?.to_json() + "\n")
        }
        Command::Run {
            experiment,
            format,
            seed,
            repeats,
            jobs,
            explain,
            trace,
            shard,
            estimate,
        } => {
            let mut exp = run::load(&experiment)?;
            if let Some(s) = seed {
                exp.seed = s;
            }
            if let Some(r) = repeats {
                exp.repeats = r;
                exp.validate().map_err(|e| e.to_string())?;
            }
            let shard: Option<shard::Shard> = shard.map(|s| s.parse()).transpose()?;
            let points = exp.points().map_err(|e| e.to_string())?;
            let mine: Vec<usize> = match shard {
                Some(s) => s.indices(points.len()),
                None => (0..points.len()).collect(),
            };
            let mut weights = None;
            if estimate || std::io::stderr().is_terminal() {
                // A terminal gets a quick one before the run; --estimate a longer look.
                let budget = if estimate { 1.0 } else { 0.25 };
                let (est, secs, rate) = run::estimate(&points, &mine, jobs, budget)?;
                let line = run::estimate_line(mine.len(), jobs, &est, rate);
                if estimate {
                    return Ok(line + "\n");
                }
                eprintln!("schedlab: {line}");
                weights = Some(secs);
            }
            let outcomes = run::run_points(&points, &mine, jobs, weights.as_deref())?;
            if let Some(shard) = shard {
                let mine: Vec<_> = mine.into_iter().zip(outcomes).collect();
                return shard::write_part(&exp, shard, points.len(), &mine);
            }
            output(
                &exp,
                &run::ran(&exp, &points, &outcomes),
                format,
                explain,
                trace,
            )
        }
        Command::Merge {
            parts,
            format,
            explain,
            trace,
        } => {
            let (exp, outcomes) = shard::merge(&parts)?;
            let points = exp.points().map_err(|e| e.to_string())?;
            output(
                &exp,
                &run::ran(&exp, &points, &outcomes),
                format,
                explain,
                trace,
            )
        }
        Command::Import {
            from:
                ImportFrom::RtApp {
                    file,
                    machine,
                    output,
                },
        } => {
            let shown = file.display().to_string();
            let text = std::fs::read_to_string(&file).map_err(|e| format!("{shown}: {e}"))?;
            let name = file
                .file_stem()
                .map_or("rt-app".to_string(), |s| s.to_string_lossy().into_owned());
            let (exp, ignored) =
                schedlab::experiment::Experiment::from_rtapp(&text, &name, &machine)
                    .map_err(|e| format!("{shown}: {e}"))?;
            if !ignored.is_empty() {
                eprintln!(
                    "schedlab: accepted and ignored (no effect in a simulation): {}",
                    ignored.join(", ")
                );
            }
            let json = exp.to_json() + "\n";
            match output {
                Some(path) => {
                    std::fs::write(&path, json).map_err(|e| format!("{}: {e}", path.display()))?;
                    Ok(String::new())
                }
                None => Ok(json),
            }
        }
        Command::Encode { experiment } => {
            Ok(schedlab::codec::encode(&run::load(&experiment)?) + "\n")
        }
        Command::Decode { code } => Ok(schedlab::codec::decode(&code)
            .map_err(|e| e.to_string())?
            .to_json()
            + "\n"),
        Command::Bench { cases } => bench::run(&cases),
        Command::Fidelity { jobs } => fidelity::run(jobs),
        Command::Validate {
            machine,
            runs,
            pipe_loops,
            loops,
            groups,
            era,
            quick,
            format,
            jobs,
        } => validate::run(&validate::Options {
            machine,
            runs,
            pipe_loops,
            loops,
            groups,
            era,
            quick,
            json: matches!(format, DumpFormat::Json),
            jobs,
        }),
        Command::Calibrate {
            output,
            name,
            quick,
        } => {
            let spec = calibrate::calibrate(&calibrate::Options { name, quick })?;
            let json = serde_json::to_string_pretty(&spec).map_err(|e| e.to_string())? + "\n";
            match output {
                Some(file) => {
                    std::fs::write(&file, &json).map_err(|e| format!("{}: {e}", file.display()))?;
                    eprintln!("calibrate: wrote {}", file.display());
                    Ok(String::new())
                }
                None => Ok(json),
            }
        }
    }
}

/// What `run` and `merge` print (and the trace they write).
fn output(
    exp: &schedlab::experiment::Experiment,
    ran: &run::Ran,
    format: RunFormat,
    explain: bool,
    trace: Option<std::path::PathBuf>,
) -> Result<String, String> {
    if let Some(file) = trace {
        let runs: Vec<(&str, &_)> = ran.traces.iter().map(|(l, t)| (l.as_str(), t)).collect();
        let doc = schedlab::trace_export::chrome_trace(&runs);
        std::fs::write(&file, doc.to_string()).map_err(|e| format!("{}: {e}", file.display()))?;
    }
    let mut out = run::format(exp, &ran.results, format);
    if explain {
        out.push_str(&schedlab::explain::explain(&ran.results));
        out.push('\n');
    }
    Ok(out)
}

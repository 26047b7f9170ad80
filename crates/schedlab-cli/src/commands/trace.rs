//! `schedlab trace`: a real machine's scheduler trace as a workload, and
//! its figures.

use crate::failure::Failure;
use crate::machine_arg;
use schedlab::engine::{Sim, SimConfig};
use schedlab::error::{Concern, Error};
use schedlab::experiment::Experiment;
use schedlab::policy::{Era, PolicySpec};
use schedlab::recording::workload::Overheads;
use schedlab::recording::{self, figures, figures::Figures, Import};
use std::io::BufReader;
use std::path::{Path, PathBuf};

#[derive(clap::Subcommand)]
pub enum Trace {
    /// Turn a scheduler trace (`perf script` text of `perf sched record`,
    /// ftrace's trace, `trace-cmd report -R`) into an experiment that
    /// replays it (JSON on standard output, or --output).
    Import {
        file: PathBuf,
        /// The machine preset to replay it on.
        #[arg(long, default_value = "desktop-8c")]
        machine: String,
        /// The machine it was recorded on (a preset, a machine JSON from
        /// `schedlab calibrate`, or lscpu -p output; default: --machine):
        /// its switch and wakeup costs are taken off the recorded runs, as
        /// the replay charges its own.
        #[arg(long, value_name = "MACHINE")]
        recorded_on: Option<String>,
        /// Write the experiment here (default: standard output).
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// The figures by task group (CPU time, wakeups, switches, migrations,
    /// wakeup latency, preempted waiting, idle per CPU) of a trace, or of a
    /// simulated run: an experiment file or preset, each variant at its
    /// first sweep value, so that a recording and a run read alike.
    Stats { file: PathBuf },
    /// Replay a trace on the machine it was recorded on (a preset, a
    /// machine JSON from `schedlab calibrate`, or lscpu -p output) and print
    /// the recording and the replay side by side, with how far apart.
    Check {
        file: PathBuf,
        #[arg(long, default_value = "desktop-8c")]
        machine: String,
        /// The kernel era to replay under (default: the current one).
        #[arg(long)]
        era: Option<String>,
    },
}

/// Reads a trace, gzipped or not, saying how far it got on stderr.
fn read(file: &Path, recorded_on: Overheads) -> Result<Import, Failure> {
    let shown = file.display().to_string();
    let f = std::fs::File::open(file).map_err(|e| format!("{shown}: {e}"))?;
    let mut shown_progress = false;
    let mut progress = |bytes: u64| {
        if bytes >= 64 << 20 {
            eprint!("\rschedlab: read {} MB", bytes >> 20);
            shown_progress = true;
        }
    };
    let import = if shown.ends_with(".gz") {
        let gz = flate2::read::GzDecoder::new(f);
        recording::import(BufReader::new(gz), recorded_on, &mut progress)
    } else {
        recording::import(BufReader::new(f), recorded_on, &mut progress)
    };
    if shown_progress {
        eprintln!();
    }
    import.map_err(|e: Error| Failure::from(e.about(Concern::Import)).context(&shown))
}

/// The experiment `file` names, if it is a preset or an experiment JSON
/// file (anything else is read as a trace).
fn experiment_at(file: &Path) -> Result<Option<Experiment>, Failure> {
    let shown = file.display().to_string();
    if !file.exists() {
        return Ok(schedlab::presets::get(&shown).ok());
    }
    if !shown.ends_with(".json") {
        return Ok(None);
    }
    let text = std::fs::read_to_string(file).map_err(|e| format!("{shown}: {e}"))?;
    let exp = Experiment::from_json(&text).map_err(|e| Failure::from(e).context(&shown))?;
    Ok(Some(exp))
}

/// Each variant's figures at the first point of its sweep.
fn simulated_stats(exp: &Experiment) -> Result<String, Failure> {
    let mut out = String::new();
    for point in exp.points()?.iter().filter(|p| p.x == 0 && p.repeat == 0) {
        let run = schedlab::experiment::run_point_output(point)?;
        let label = &exp.variants[point.variant].label;
        out += &format!("{} ({label}, simulated)\n", exp.name);
        out += &Figures::of_run(&run).table();
    }
    Ok(out)
}

pub fn command(trace: Trace) -> Result<String, Failure> {
    match trace {
        Trace::Import {
            file,
            machine,
            recorded_on,
            output,
        } => {
            let recorded_on = machine_arg::load(recorded_on.as_deref().unwrap_or(&machine))?;
            let import = read(&file, Overheads::of(&recorded_on.costs))?;
            let s = &import.recording.skipped;
            eprintln!(
                "schedlab: {} events in {} lines, {} tasks; not used: {} events of other kinds, {} lost, {} wakeups of awake tasks; inferred: {} switches the trace did not show, {} handoffs; {} inconsistent switches; {} RT tasks replayed as SCHED_FIFO",
                import.recording.events,
                import.lines,
                import.recording.tasks.len(),
                s.other_events.iter().map(|(_, n)| n).sum::<u64>(),
                s.lost_events,
                s.wakeups_of_awake_tasks,
                s.inferred_switches,
                s.handoffs,
                s.inconsistent_switches,
                s.rt_tasks
            );
            let name = file
                .file_name()
                .map_or("trace".to_string(), |s| s.to_string_lossy().into_owned());
            let name = name
                .trim_end_matches(".gz")
                .trim_end_matches(".txt")
                .to_string();
            let exp =
                schedlab::experiment::Experiment::from_trace(import.workload, &name, &machine)
                    .map_err(|e| Failure::from(e).context(file.display().to_string()))?;
            super::import::experiment_out(&exp, output)
        }
        Trace::Stats { file } => match experiment_at(&file)? {
            Some(exp) => simulated_stats(&exp),
            None => {
                let import = read(&file, Overheads::default())?;
                Ok(Figures::of_recording(&import.recording).table())
            }
        },
        Trace::Check { file, machine, era } => {
            let topology = machine_arg::load(&machine)?;
            let import = read(&file, Overheads::of(&topology.costs))?;
            let era: Era = match era {
                Some(e) => e.parse().map_err(Failure::from)?,
                None => Era::CURRENT,
            };
            let cfg =
                SimConfig::new(topology, &PolicySpec::era(era), &import.workload).map_err(|e| {
                    Failure::from(e.about(Concern::Import)).context(file.display().to_string())
                })?;
            let out = Sim::new(&cfg)?.run()?;
            let recorded = Figures::of_recording(&import.recording);
            Ok(format!(
                "{} replayed on {machine} under {}\n{}",
                file.display(),
                era.name(),
                figures::compare(&recorded, &Figures::of_run(&out))
            ))
        }
    }
}

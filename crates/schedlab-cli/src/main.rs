//! `schedlab`: the simulator core on the command line. Each command is a
//! module of `commands` (its arguments and what it does); this file only
//! dispatches.
//!
//! Errors print one line to stderr and exit with a code that says what
//! kind of input was wrong (`failure`); nothing panics on bad input.

mod calibrate;
mod commands;
mod exits;
mod failure;
mod machine_arg;
mod run;
mod shard;
mod validate;

use clap::{Parser, Subcommand};
use commands as cmd;
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

#[derive(Subcommand)]
enum Command {
    /// List the machine presets.
    Machines,
    /// Print each CPU's sched domains: span, groups, flags (names and bits), parameters.
    Domains(cmd::domains::Args),
    /// List the limits every experiment is checked against.
    Limits,
    /// List the shipped experiments.
    Presets,
    /// Print a preset's experiment JSON.
    Show(cmd::show::Args),
    /// Run a preset, a playground link, or an experiment JSON file.
    Run(cmd::run::Args),
    /// Assemble the part files of `schedlab run --shard I/N` (all N of them,
    /// any order) into the results an unsharded run prints.
    Merge(cmd::merge::Args),
    /// Turn another tool's workload file into an experiment (JSON on
    /// standard output, or --output).
    Import {
        #[command(subcommand)]
        from: cmd::import::From,
    },
    /// A real machine's scheduler trace: import it as a workload, or print
    /// its figures.
    Trace {
        #[command(subcommand)]
        what: cmd::trace::Trace,
    },
    /// Encode a preset or experiment file as a link-safe string.
    Encode(cmd::encode::Args),
    /// Decode a link-safe string back to experiment JSON.
    Decode(cmd::decode::Args),
    /// Measure the engine's speed on standard cases.
    Bench(cmd::bench::Args),
    /// Measure this machine: topology from the kernel, costs from native
    /// probes (each with its median, spread and how the cost follows).
    Calibrate(cmd::calibrate::Args),
    /// Run the real scheduler benchmarks that are installed (perf bench
    /// sched pipe and messaging, hackbench) beside the same workloads
    /// simulated on a calibrated machine, with the era nearest this kernel.
    Validate(cmd::validate::Args),
    /// Every published number of the seed commits beside the simulated one.
    Fidelity(cmd::fidelity::Args),
    /// Why each placement and balance of a run went where it did: the
    /// kernel functions the era went through, with the values compared.
    Why(cmd::why::Args),
    /// The first decision at which two variants part, and when each
    /// counter first differs.
    Diverge(cmd::why::DivergeArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match dispatch(cli) {
        Ok(out) => {
            print!("{out}");
            ExitCode::SUCCESS
        }
        Err(failure) => {
            eprintln!("schedlab: {failure}");
            ExitCode::from(failure.exit_code())
        }
    }
}

fn dispatch(cli: Cli) -> Result<String, failure::Failure> {
    match cli.command {
        Command::Machines => cmd::machines::command(),
        Command::Domains(args) => cmd::domains::command(args),
        Command::Limits => cmd::limits::command(),
        Command::Presets => cmd::presets::command(),
        Command::Show(args) => cmd::show::command(args),
        Command::Run(args) => cmd::run::command(args),
        Command::Merge(args) => cmd::merge::command(args),
        Command::Import { from } => cmd::import::command(from),
        Command::Trace { what } => cmd::trace::command(what),
        Command::Encode(args) => cmd::encode::command(args),
        Command::Decode(args) => cmd::decode::command(args),
        Command::Bench(args) => cmd::bench::command(args),
        Command::Calibrate(args) => cmd::calibrate::command(args),
        Command::Validate(args) => cmd::validate::command(args),
        Command::Fidelity(args) => cmd::fidelity::command(args),
        Command::Why(args) => cmd::why::command(args),
        Command::Diverge(args) => cmd::why::diverge(args),
    }
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::{CommandFactory, Parser};

    /// Every command's --help, as the book's command-line reference
    /// (docs/book/src/generated/cli.md), at a fixed width.
    fn reference() -> String {
        fn walk(cmd: &mut clap::Command, path: &str, out: &mut String) {
            let help = cmd.render_long_help().to_string();
            out.push_str(&format!(
                "## `{path}`\n\n```text\n{}\n```\n\n",
                help.trim_end()
            ));
            for sub in cmd.get_subcommands_mut().filter(|s| s.get_name() != "help") {
                let name = format!("{path} {}", sub.get_name());
                walk(sub, &name, out);
            }
        }
        let mut cmd = Cli::command().term_width(100);
        cmd.build();
        let mut out = String::from(GENERATED);
        walk(&mut cmd, "schedlab", &mut out);
        out
    }

    /// What `schedlab domains` prints for the machines and eras the book's
    /// model chapter shows (docs/book/src/generated/domains.md).
    fn domains() -> String {
        let mut out = String::from(GENERATED);
        for (machine, era) in [
            ("phoenix-2008", "2.6.27"),
            ("phoenix-2008", "2.6.28"),
            ("ivb-ep-2s", "4.15"),
            ("desktop-8c", "6.12"),
        ] {
            let argv = ["schedlab", "domains", machine, "--era", era, "--cpu", "0"];
            let printed = super::dispatch(Cli::try_parse_from(argv).unwrap()).unwrap();
            let command = argv.join(" ");
            out.push_str(&format!(
                "## {machine}, {era}\n\n```text\n$ {command}\n{printed}```\n\n"
            ));
        }
        out
    }

    /// Every record in docs/validate/ (`schedlab validate --record`), as
    /// `schedlab validate --show` prints it, for the book's calibrate chapter
    /// (docs/book/src/generated/validate-records.md).
    fn validate_records() -> String {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/validate");
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        let mut out = String::from(GENERATED);
        for path in files {
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            let argv = ["schedlab", "validate", "--show", path.to_str().unwrap()];
            let printed = super::dispatch(Cli::try_parse_from(argv).unwrap())
                .unwrap_or_else(|e| panic!("docs/validate/{name}: {e}"));
            out.push_str(&format!(
                "## {name}\n\n```text\n$ schedlab validate --show docs/validate/{name}\n{printed}```\n\n"
            ));
        }
        out
    }

    const GENERATED: &str =
        "<!-- Generated from the command line by `cargo test -p schedlab-cli`; \
                             SCHEDLAB_BLESS=1 rewrites it. -->\n\n";

    /// Compares a generated page of the book with `actual`, or rewrites it.
    fn check_page(name: &str, actual: &str) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../docs/book/src/generated")
            .join(name);
        if std::env::var_os("SCHEDLAB_BLESS").is_some() {
            std::fs::write(&path, actual).unwrap();
        }
        let expected = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            expected == actual,
            "{} is stale: run SCHEDLAB_BLESS=1 cargo test -p schedlab-cli",
            path.display()
        );
    }

    #[test]
    fn the_books_command_line_reference_is_current() {
        let actual = reference();
        assert!(actual.contains("## `schedlab run`") && actual.contains("--repeats"));
        check_page("cli.md", &actual);
    }

    #[test]
    fn the_books_validate_records_are_current() {
        let actual = validate_records();
        assert!(
            actual.contains("sim/real") && actual.contains("A/B change"),
            "{actual}"
        );
        check_page("validate-records.md", &actual);
    }

    #[test]
    fn the_books_domain_listings_are_current() {
        let actual = domains();
        assert!(actual.contains("BALANCE_NEWIDLE") && actual.contains("## desktop-8c, 6.12"));
        check_page("domains.md", &actual);
    }
}

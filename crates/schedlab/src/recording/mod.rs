//! A real machine's scheduler trace (`perf sched record` then `perf
//! script`, ftrace's `trace`, `trace-cmd report -R`) read as a stream:
//! [`lines`] reads each line, [`timeline`] cuts each task's life into what
//! it ran, whom it woke and how its sleeps ended, [`workload`] writes that
//! as a workload in the task language, and [`figures`] states the
//! recording's own figures by task group, to hold a replay against.

pub mod figures;
pub mod lines;
pub mod timeline;
pub mod workload;

use crate::error::{Concern, Error, Result};
use crate::workload::program::WorkloadSpec;
use lines::Parsed;
use std::io::BufRead;
use timeline::{Recording, Timeline};

/// An imported trace: the workload it replays as, and the recording.
#[derive(Debug, Clone)]
pub struct Import {
    pub workload: WorkloadSpec,
    pub recording: Recording,
    /// Lines read (blank, comment and header lines included).
    pub lines: u64,
}

/// Reads a trace line by line (never whole), calling `progress` with the
/// bytes read so far every 64 Ki lines. A line that cannot be read stops
/// the import with its number and why. `recorded_on` is the recording
/// machine's switch and wakeup overhead, taken off each run.
pub fn import(
    mut input: impl BufRead,
    recorded_on: workload::Overheads,
    progress: &mut dyn FnMut(u64),
) -> Result<Import> {
    let mut timeline = Timeline::default();
    let mut buf = String::new();
    let (mut n, mut bytes) = (0u64, 0u64);
    loop {
        buf.clear();
        let read = input.read_line(&mut buf).map_err(|e| {
            Error::invalid(Concern::Import, format!("line {}: cannot read: {e}", n + 1))
        })?;
        if read == 0 {
            break;
        }
        n += 1;
        bytes += read as u64;
        if n % 65_536 == 0 {
            progress(bytes);
        }
        let at = |msg: String| Error::invalid(Concern::Import, format!("line {n}: {msg}"));
        match lines::parse(&buf).map_err(|e| at(e.0))? {
            Parsed::Event(line) => timeline.feed(&line).map_err(at)?,
            Parsed::Lost { events, .. } => timeline.lost(events),
            Parsed::Blank => {}
        }
    }
    progress(bytes);
    if timeline.events == 0 {
        return Err(Error::invalid(
            Concern::Import,
            format!(
                "no scheduler events in {n} lines: expected `perf script` output of `perf sched record`, ftrace's trace, or `trace-cmd report -R`"
            ),
        ));
    }
    let recording = timeline.finish();
    Ok(Import {
        workload: workload::workload(&recording, recorded_on),
        recording,
        lines: n,
    })
}

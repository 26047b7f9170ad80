//! tbench N: N client processes, each with one loopback TCP connection to
//! a forked server process: N strict 1:1 pairs. Each client replays an
//! NBENCH-like loadfile; every operation is one request and one response.
//! The mix here cycles ReadX (55-byte request, 4 KiB + 4 reply), a small
//! metadata call, and WriteX (4 KiB + 51 request, 41-byte reply), with the
//! server's work per operation. Prints throughput and the worst single
//! operation's latency. Left out: the real loadfile's hundreds of
//! operations and the file server's disk behaviour.

use super::{
    channel, check, compute, fmt_g, mark, mark_rate, mark_stats, ms_to_ns, read, task, write,
    Built, Report,
};
use crate::engine::RunOutput;
use crate::error::Result;
use crate::workload::program::{ChannelKind, Op, WorkloadSpec};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tbench {
    /// Client (and server) processes.
    #[serde(default = "default_clients")]
    pub clients: u64,
    /// -t: run time, ms (tbench's default is 600 s).
    #[serde(default = "default_duration")]
    pub duration_ms: u64,
    /// Start of the run not counted, ms.
    #[serde(default)]
    pub warmup_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity: Option<String>,
}

fn default_clients() -> u64 {
    1
}
fn default_duration() -> u64 {
    600_000
}

const IO_SIZE: u64 = 4096;
/// (request bytes, reply bytes, server work ns, payload counted, label).
const OPS: [(u64, u64, u64, u64, &str); 3] = [
    (55, IO_SIZE + 4, 2_500, IO_SIZE, "readx"),
    (90, 120, 1_200, 0, "qpathinfo"),
    (IO_SIZE + 51, 41, 3_500, IO_SIZE, "writex"),
];
/// The client's own work per operation (parsing the loadfile line).
const CLIENT_NS: u64 = 1_000;
const SOCKET_BUFFER: u64 = 131_072;

impl Tbench {
    pub fn build(&self) -> Result<Built> {
        check("tbench", "clients", self.clients, 1, 4096)?;
        check("tbench", "duration_ms", self.duration_ms, 1, 600_000)?;
        check(
            "tbench",
            "warmup_ms",
            self.warmup_ms,
            0,
            self.duration_ms.saturating_sub(1),
        )?;
        let mut channels = Vec::new();
        let mut tasks = Vec::new();
        for c in 0..self.clients as usize {
            let (up, down) = (2 * c, 2 * c + 1);
            channels.push(channel(ChannelKind::Tcp, SOCKET_BUFFER));
            channels.push(channel(ChannelKind::Tcp, SOCKET_BUFFER));
            let mut client_ops = Vec::new();
            let mut server_ops = Vec::new();
            for (req, reply, work, _, label) in OPS {
                client_ops.extend([
                    compute(CLIENT_NS, 30),
                    write(up, req),
                    read(down, reply),
                    mark(label),
                    mark("op"),
                ]);
                server_ops.extend([read(up, req), compute(work, 30), write(down, reply)]);
            }
            let server = task(
                format!("server{c}"),
                &self.affinity,
                vec![Op::Forever(server_ops)],
            );
            let program = vec![
                Op::Fork(Box::new(server)),
                mark("op"),
                Op::Forever(client_ops),
            ];
            tasks.push(task(format!("client{c}"), &self.affinity, program));
        }
        Ok(Built {
            spec: WorkloadSpec { channels, tasks },
            duration_ns: Some(ms_to_ns(self.duration_ms)),
            measure_from_ns: ms_to_ns(self.warmup_ms),
        })
    }

    pub fn report(&self, out: &RunOutput) -> Report {
        // Payload per second, each operation's rate read from time.
        let mb_sec: f64 = OPS
            .iter()
            .map(|&(_, _, _, payload, label)| mark_rate(out, label) * payload as f64)
            .sum::<f64>()
            / 1e6;
        let max_latency_ms = mark_stats(out, "op").map_or(0, |m| m.interval_max_ns) as f64 / 1e6;
        let text = format!(
            "Throughput {} MB/sec  {n} clients  {n} procs  max_latency={max_latency_ms:.3} ms\n",
            fmt_g(mb_sec),
            n = self.clients
        );
        Report {
            value: mb_sec,
            series: vec![],
            details: vec![("max_latency_ms", max_latency_ms)],
            text,
        }
    }
}

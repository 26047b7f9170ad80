//! tbench N: N client processes, each with one loopback TCP connection to
//! a server process: N strict 1:1 pairs. As tbench_srv.c does it, one
//! listener accepts each connection and forks that connection's server, so
//! a server starts on the listener's CPU, not its client's. Each client replays an
//! NBENCH-like loadfile; every operation is one request and one response,
//! sized as tbench's sockio.c sends them. The operations follow
//! client.txt's mix (counts from a published dbench run), in a cycle of 200
//! each client replays. The server (tbench_srv) only reads each request and
//! sends back the reply size it names: its work is those system calls and
//! copies. Prints throughput and the worst single operation's latency.
//! Left out: the loadfile's own order and per-line sizes (every ReadX and
//! WriteX moves the run's average), its sleeps, and file names' lengths.

use super::ops::{channel, check, compute, mark, ms_to_ns, read, task, write, Built};
use super::readout::{fmt_g, mark_rate, mark_stats, Report};
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

/// dbench's client.txt operation mix: each operation's count in a
/// published dbench run (`dbench -t 1000 10` on ext4 over md RAID, linux-raid
/// list; the table dbench prints), as (label, count). Deltree sends no
/// packet in tbench; Mkdir, LockX and UnlockX round to none of 200.
const MIX: [(&str, u64); 13] = [
    ("ntcreatex", 9_805_011),
    ("close", 7_202_525),
    ("rename", 415_213),
    ("unlink", 1_980_066),
    ("qpathinfo", 8_887_512),
    ("qfileinfo", 1_557_262),
    ("qfsinfo", 1_629_582),
    ("sfileinfo", 798_756),
    ("find", 3_436_004),
    ("writex", 4_887_239),
    ("readx", 15_370_483),
    ("lockx", 31_934),
    ("flush", 687_205),
];
/// Operations in the cycle each client replays.
const CYCLE: u64 = 200;
/// Bytes per ReadX or WriteX: the same run moved 307.799 MB/s for 1000 s
/// (dbench counts ReadX's and WriteX's data, 1e6 bytes a MB) in 20,257,722
/// of them.
const IO_BYTES: u64 = 15_194;
/// A path in the loadfile ("\\clients\\client1\\~dmtmp\\..."), characters
/// (an estimate), and the entries a FIND_FIRST returns (an estimate).
const NAME: u64 = 40;
const FIND_COUNT: u64 = 10;
/// The client's own work per operation (parsing the loadfile line).
const CLIENT_NS: u64 = 1_000;
const SOCKET_BUFFER: u64 = 131_072;
/// A connection request as the listener receives it: the SYN's IPv4 and
/// TCP headers with the usual options (20 + 40 bytes); the handshake's
/// other two segments are left out.
const CONNECT: u64 = 60;

/// An operation's packets as tbench's sockio.c sends them (do_packets:
/// request bytes, reply bytes), and its payload (counted in MB/sec).
fn packets(label: &str) -> (u64, u64, u64) {
    match label {
        "ntcreatex" => (70 + 2 + NAME * 2 + 2, 39 + 12 * 4, 0),
        "close" => (39 + 8, 39, 0),
        "rename" => (39 + 8 + 2 * NAME + 2 * NAME, 39, 0),
        "unlink" => (39 + 2 + NAME * 2 + 2, 39, 0),
        "qpathinfo" => (39 + 16 + 2 * NAME, 39 + 32, 0),
        "qfileinfo" | "qfsinfo" => (39 + 20, 39 + 32, 0),
        "sfileinfo" => (39 + 32, 39 + 8, 0),
        "find" => (39 + 20 + NAME * 2, 39 + 90 * FIND_COUNT, 0),
        "writex" => (39 + 20 + IO_BYTES, 39 + 16, IO_BYTES),
        "readx" => (39 + 20, 39 + 20 + IO_BYTES, IO_BYTES),
        "lockx" => (39 + 12, 39, 0),
        "flush" => (39 + 2, 39, 0),
        _ => unreachable!("{label} is not in the mix"),
    }
}

/// The cycle's operations: the mix scaled to `CYCLE` (largest remainders),
/// interleaved by smooth weighted round robin so each kind is spread out.
fn cycle() -> Vec<&'static str> {
    let total: u64 = MIX.iter().map(|m| m.1).sum();
    let mut counts: Vec<(u64, u64)> = MIX
        .iter()
        .map(|&(_, n)| (n * CYCLE / total, n * CYCLE % total))
        .collect();
    let short = CYCLE - counts.iter().map(|c| c.0).sum::<u64>();
    let mut by_rem: Vec<usize> = (0..MIX.len()).collect();
    by_rem.sort_by_key(|&i| std::cmp::Reverse(counts[i].1));
    for &i in by_rem.iter().take(short as usize) {
        counts[i].0 += 1;
    }
    let mut current = vec![0i64; MIX.len()];
    let mut out = Vec::new();
    for _ in 0..CYCLE {
        for (c, n) in current.iter_mut().zip(&counts) {
            *c += n.0 as i64;
        }
        let best = (0..MIX.len()).max_by_key(|&i| (current[i], std::cmp::Reverse(i)));
        let best = best.expect("the mix is not empty");
        current[best] -= CYCLE as i64;
        out.push(MIX[best].0);
    }
    out
}

impl Tbench {
    /// The parameters' limits, without building the workload.
    pub fn check(&self) -> Result<()> {
        check("tbench", "clients", self.clients, 1, 4096)?;
        check("tbench", "duration_ms", self.duration_ms, 1, 600_000)?;
        check(
            "tbench",
            "warmup_ms",
            self.warmup_ms,
            0,
            self.duration_ms.saturating_sub(1),
        )?;
        Ok(())
    }

    pub fn build(&self) -> Result<Built> {
        self.check()?;
        let ops = cycle();
        let mut channels = Vec::new();
        let mut tasks = Vec::new();
        // tbench_srv's listening socket: every client's connect lands here.
        let listen = 2 * self.clients as usize;
        let mut listener_ops = Vec::new();
        for c in 0..self.clients as usize {
            let (up, down) = (2 * c, 2 * c + 1);
            channels.push(channel(ChannelKind::Tcp, SOCKET_BUFFER));
            channels.push(channel(ChannelKind::Tcp, SOCKET_BUFFER));
            let mut client_ops = Vec::new();
            let mut server_ops = Vec::new();
            for &label in &ops {
                let (req, reply, payload) = packets(label);
                // do_packets: send, then read the reply (its 4-byte length
                // and the rest, two system calls, as one read: the run
                // stays fast enough for the page).
                client_ops.extend([compute(CLIENT_NS, 30), write(up, req), read(down, reply)]);
                if payload > 0 {
                    client_ops.push(mark(label));
                }
                client_ops.push(mark("op"));
                // tbench_srv: read the request (length and rest, as one
                // read), send back the reply size the header asked for; no
                // other work.
                server_ops.extend([read(up, req), write(down, reply)]);
            }
            let server = task(
                format!("server{c}"),
                &self.affinity,
                vec![Op::Forever(server_ops)],
            );
            // listener(): accept() the next connection, fork its server.
            listener_ops.extend([read(listen, CONNECT), Op::Fork(Box::new(server))]);
            // The client connects (open_socket_out), then replays.
            let program = vec![write(listen, CONNECT), mark("op"), Op::Forever(client_ops)];
            tasks.push(task(format!("client{c}"), &self.affinity, program));
        }
        channels.push(channel(ChannelKind::Tcp, SOCKET_BUFFER));
        // Then accept() waits for connections that never come.
        listener_ops.push(read(listen, CONNECT));
        // tbench_srv runs before tbench starts its clients.
        tasks.insert(0, task("tbench_srv".into(), &self.affinity, listener_ops));
        Ok(Built {
            spec: WorkloadSpec { channels, tasks },
            duration_ns: Some(ms_to_ns(self.duration_ms)),
            measure_from_ns: ms_to_ns(self.warmup_ms),
        })
    }

    pub fn report(&self, out: &RunOutput) -> Report {
        // Payload per second, each operation's rate read from time.
        let mb_sec: f64 = ["readx", "writex"]
            .iter()
            .map(|&label| mark_rate(out, label) * packets(label).2 as f64)
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

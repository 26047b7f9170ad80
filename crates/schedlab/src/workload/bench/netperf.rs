//! netperf with N instances, each a client and a netserver child over
//! loopback. TCP_RR / UDP_RR: one-byte request and response, one
//! outstanding: a strict sync ping-pong (transactions/s). TCP_STREAM /
//! TCP_SENDFILE: the client sends 16 KiB chunks, the server reads; the
//! reader is woken from the sender's softirq and the sender by ACKs freeing
//! window space (not sync): overlapping producer and consumer (10^6 bits/s).
//! UDP_STREAM: a datagram flood that never blocks the sender; datagrams
//! that do not fit the receive buffer are dropped; what was received counts.
//! Left out: netperf's control connection and CPU-utilisation measurement.

use super::{
    channel, check, mark, mark_rate, measured_secs, ms_to_ns, read, task, write, Better, Built,
    Metric, Report,
};
use crate::engine::RunOutput;
use crate::error::Result;
use crate::workload::program::{ChannelKind, Op, WorkloadSpec};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum NetperfTest {
    #[serde(rename = "TCP_RR")]
    TcpRr,
    #[serde(rename = "UDP_RR")]
    UdpRr,
    #[serde(rename = "TCP_STREAM")]
    TcpStream,
    #[serde(rename = "TCP_SENDFILE")]
    TcpSendfile,
    #[serde(rename = "UDP_STREAM")]
    UdpStream,
}

impl NetperfTest {
    fn name(self) -> &'static str {
        match self {
            NetperfTest::TcpRr => "TCP_RR",
            NetperfTest::UdpRr => "UDP_RR",
            NetperfTest::TcpStream => "TCP_STREAM",
            NetperfTest::TcpSendfile => "TCP_SENDFILE",
            NetperfTest::UdpStream => "UDP_STREAM",
        }
    }

    fn is_rr(self) -> bool {
        matches!(self, NetperfTest::TcpRr | NetperfTest::UdpRr)
    }

    fn kind(self) -> ChannelKind {
        match self {
            NetperfTest::UdpRr | NetperfTest::UdpStream => ChannelKind::Udp,
            _ => ChannelKind::Tcp,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Netperf {
    /// -t: the test (netperf's default is TCP_STREAM).
    #[serde(default = "default_test")]
    pub test: NetperfTest,
    /// Concurrent netperf instances.
    #[serde(default = "default_instances")]
    pub instances: u64,
    /// -l: test length, ms (netperf's default is 10 s).
    #[serde(default = "default_duration")]
    pub duration_ms: u64,
    #[serde(default)]
    pub warmup_ms: u64,
    /// -m: send size for the stream tests (UDP: one datagram).
    #[serde(default = "default_send")]
    pub send_size: u64,
    /// -r: request and response size for the RR tests.
    #[serde(default = "default_rr")]
    pub rr_size: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity: Option<String>,
}

fn default_test() -> NetperfTest {
    NetperfTest::TcpStream
}

fn default_instances() -> u64 {
    1
}
fn default_duration() -> u64 {
    10_000
}
fn default_send() -> u64 {
    16_384
}
fn default_rr() -> u64 {
    1
}

const TCP_RCVBUF: u64 = 131_072;
const UDP_RCVBUF: u64 = 212_992;
/// The receiving application's work per read (the benchmark discards data).
const RECV_WORK_NS: u64 = 500;

impl Netperf {
    pub fn metric(&self) -> Metric {
        if self.test.is_rr() {
            Metric {
                name: "transactions",
                unit: "per sec",
                better: Better::Higher,
            }
        } else {
            Metric {
                name: "throughput",
                unit: "10^6bits/sec",
                better: Better::Higher,
            }
        }
    }

    pub fn build(&self) -> Result<Built> {
        check("netperf", "instances", self.instances, 1, 4096)?;
        check("netperf", "duration_ms", self.duration_ms, 1, 600_000)?;
        check(
            "netperf",
            "warmup_ms",
            self.warmup_ms,
            0,
            self.duration_ms.saturating_sub(1),
        )?;
        check("netperf", "rr_size", self.rr_size, 1, 65_536)?;
        let max_send = if self.test.kind() == ChannelKind::Udp {
            65_507
        } else {
            TCP_RCVBUF
        };
        check("netperf", "send_size", self.send_size, 1, max_send)?;
        let kind = self.test.kind();
        let buffer = if kind == ChannelKind::Udp {
            UDP_RCVBUF
        } else {
            TCP_RCVBUF
        };
        let mut channels = Vec::new();
        let mut tasks = Vec::new();
        for i in 0..self.instances as usize {
            let (up, down) = (channels.len(), channels.len() + 1);
            let mut data = channel(kind, buffer);
            data.sendfile = self.test == NetperfTest::TcpSendfile;
            channels.push(data);
            channels.push(channel(kind, buffer));
            let (client, server) = if self.test.is_rr() {
                let r = self.rr_size;
                (
                    vec![write(up, r), read(down, r), mark("trans")],
                    vec![read(up, r), write(down, r)],
                )
            } else {
                (
                    vec![write(up, self.send_size)],
                    vec![read(up, self.send_size), super::compute(RECV_WORK_NS, 20)],
                )
            };
            let netserver = task(
                format!("netserver{i}"),
                &self.affinity,
                vec![Op::Forever(server)],
            );
            let program = vec![Op::Fork(Box::new(netserver)), Op::Forever(client)];
            tasks.push(task(format!("netperf{i}"), &self.affinity, program));
        }
        Ok(Built {
            spec: WorkloadSpec { channels, tasks },
            duration_ns: Some(ms_to_ns(self.duration_ms)),
            measure_from_ns: ms_to_ns(self.warmup_ms),
        })
    }

    pub fn report(&self, out: &RunOutput) -> Report {
        let secs = measured_secs(out);
        let (value, header, line) = if self.test.is_rr() {
            let rate = mark_rate(out, "trans");
            (
                rate,
                "Socket Size   Request  Resp.   Elapsed  Trans.\nSend   Recv   Size     Size    Time     Rate\nbytes  Bytes  bytes    bytes   secs.    per sec\n",
                format!("{:<6} {:<6} {:<8} {:<7} {secs:<8.2} {rate:.2}\n", TCP_RCVBUF, TCP_RCVBUF, self.rr_size, self.rr_size),
            )
        } else {
            let received: u64 = out.channels.iter().step_by(2).map(|c| c.bytes_read).sum();
            let mbits = if secs > 0.0 {
                received as f64 * 8.0 / 1e6 / secs
            } else {
                0.0
            };
            (
                mbits,
                "Recv   Send    Send\nSocket Socket  Message  Elapsed\nSize   Size    Size     Time     Throughput\nbytes  bytes   bytes    secs.    10^6bits/sec\n",
                format!("{:<6} {:<7} {:<8} {secs:<8.2} {mbits:.2}\n", TCP_RCVBUF, TCP_RCVBUF, self.send_size),
            )
        };
        let dropped: u64 = out.channels.iter().map(|c| c.bytes_dropped).sum();
        let text = format!(
            "MIGRATED {} TEST to localhost: {} instance(s), summed\n{header}\n{line}",
            self.test.name(),
            self.instances
        );
        Report {
            value,
            series: vec![],
            details: vec![("bytes_dropped", dropped as f64)],
            text,
        }
    }
}

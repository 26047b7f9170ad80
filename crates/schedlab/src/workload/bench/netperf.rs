//! netperf with N instances, each a client and a netserver child over
//! loopback. TCP_RR / UDP_RR: one-byte request and response, one
//! outstanding: a strict sync ping-pong (transactions/s). TCP_STREAM /
//! TCP_SENDFILE: the client sends 16 KiB chunks, the server reads; the
//! reader is woken from the sender's softirq and the sender by ACKs freeing
//! window space (not sync): overlapping producer and consumer (10^6 bits/s).
//! UDP_STREAM: a datagram flood that never blocks the sender; datagrams
//! that do not fit the receive buffer are dropped; what was received counts.
//! Prints each instance's netperf result line and, as the WA_WEIGHT
//! commit's table does, the average per instance ("TCP_STREAM-10 : Avg:"),
//! which is the reported value. Before the test, netperf's control
//! exchange: netperf sends the test request on the control connection and
//! waits for netserver's response (each a 656-byte message), the sync
//! wakeups that bring the pair together before data flows. Left out: the
//! data connection's handshake and the CPU-utilisation measurement.

use super::ops::{channel, check, mark, ms_to_ns, read, task, write, Built};
use super::readout::{fmt_g, mark_rates, measured_secs, Better, Metric, Report};
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
/// The sender's socket buffer netperf reports (tcp_wmem's default).
const SEND_SOCKET: u64 = 16_384;
/// The receiving application's work per read (the benchmark discards data).
const RECV_WORK_NS: u64 = 500;
/// A control message: netperf's netperf_request_struct and
/// netperf_response_struct (netlib.h) are a request or response type, one
/// more int and MAXSPECDATA (162) ints of test-specific data.
const CONTROL_MSG: u64 = (2 + 162) * 4;
/// Channels per instance: data, the RR tests' responses, and the control
/// connection's two directions.
const CHANNELS_PER_INSTANCE: usize = 4;

impl Netperf {
    pub fn metric(&self) -> Metric {
        if self.test.is_rr() {
            Metric {
                name: "transactions per instance",
                unit: "per sec",
                better: Better::Higher,
            }
        } else {
            Metric {
                name: "throughput per instance",
                unit: "10^6bits/sec",
                better: Better::Higher,
            }
        }
    }

    /// The parameters' limits, without building the workload.
    pub fn check(&self) -> Result<()> {
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
        Ok(())
    }

    pub fn build(&self) -> Result<Built> {
        self.check()?;
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
            let (ctl_up, ctl_down) = (channels.len() + 2, channels.len() + 3);
            let mut data = channel(kind, buffer);
            data.sendfile = self.test == NetperfTest::TcpSendfile;
            channels.push(data);
            channels.push(channel(kind, buffer));
            channels.push(channel(ChannelKind::Tcp, TCP_RCVBUF));
            channels.push(channel(ChannelKind::Tcp, TCP_RCVBUF));
            let (client, server) = if self.test.is_rr() {
                let r = self.rr_size;
                (
                    vec![write(up, r), read(down, r), mark("trans")],
                    vec![read(up, r), write(down, r)],
                )
            } else {
                (
                    vec![write(up, self.send_size)],
                    vec![
                        read(up, self.send_size),
                        super::ops::compute(RECV_WORK_NS, 20),
                    ],
                )
            };
            let netserver = task(
                format!("netserver{i}"),
                &self.affinity,
                vec![
                    read(ctl_up, CONTROL_MSG),
                    write(ctl_down, CONTROL_MSG),
                    Op::Forever(server),
                ],
            );
            let program = vec![
                Op::Fork(Box::new(netserver)),
                write(ctl_up, CONTROL_MSG),
                read(ctl_down, CONTROL_MSG),
                Op::Forever(client),
            ];
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
        let n = self.instances as usize;
        // Each instance's own figure, as each netperf prints it.
        let per_instance: Vec<f64> = if self.test.is_rr() {
            let mut rates = vec![0.0; n];
            // The clients are the first tasks, netperf0.. in order.
            for (task, rate) in mark_rates(out, "trans") {
                if let Some(r) = rates.get_mut(task) {
                    *r = rate;
                }
            }
            rates
        } else {
            (0..n)
                .map(|i| {
                    let received = out
                        .channels
                        .get(CHANNELS_PER_INSTANCE * i)
                        .map_or(0, |c| c.bytes_read);
                    if secs > 0.0 {
                        received as f64 * 8.0 / 1e6 / secs
                    } else {
                        0.0
                    }
                })
                .collect()
        };
        let avg = per_instance.iter().sum::<f64>() / n.max(1) as f64;
        let from = "from 0.0.0.0 (0.0.0.0) port 0 AF_INET to localhost () port 0 AF_INET";
        let mut text = match self.test {
            NetperfTest::TcpRr | NetperfTest::UdpRr => format!(
                "MIGRATED {} REQUEST/RESPONSE TEST {from} : first burst 0\nLocal /Remote\nSocket Size   Request  Resp.   Elapsed  Trans.\nSend   Recv   Size     Size    Time     Rate\nbytes  Bytes  bytes    bytes   secs.    per sec\n\n",
                self.proto()
            ),
            NetperfTest::UdpStream => format!(
                "MIGRATED UDP STREAM TEST {from}\nSocket  Message  Elapsed      Messages\nSize    Size     Time         Okay Errors   Throughput\nbytes   bytes    secs            #      #   10^6bits/sec\n\n"
            ),
            NetperfTest::TcpStream | NetperfTest::TcpSendfile => format!(
                "MIGRATED TCP {} TEST {from}\nRecv   Send    Send\nSocket Socket  Message  Elapsed\nSize   Size    Size     Time     Throughput\nbytes  bytes   bytes    secs.    10^6bits/sec\n\n",
                if self.test == NetperfTest::TcpSendfile { "SENDFILE" } else { "STREAM" }
            ),
        };
        // Each instance's result line (the headers above are printed once).
        for (i, v) in per_instance.iter().enumerate() {
            text.push_str(&match self.test {
                NetperfTest::TcpRr | NetperfTest::UdpRr => format!(
                    "{:<6} {:<6} {:<8} {:<7} {secs:<8.2} {v:.2}\n",
                    SEND_SOCKET, self.buffer(), self.rr_size, self.rr_size
                ),
                NetperfTest::UdpStream => {
                    let c = out.channels.get(CHANNELS_PER_INSTANCE * i);
                    let okay = c.map_or(0, |c| c.bytes_read) / self.send_size;
                    let sent = okay + c.map_or(0, |c| c.bytes_dropped) / self.send_size;
                    let sent_mbits = if secs > 0.0 {
                        (sent * self.send_size) as f64 * 8.0 / 1e6 / secs
                    } else {
                        0.0
                    };
                    format!(
                        "{:>6}  {:>7}   {secs:<5.2}   {sent:>9}      0 {sent_mbits:>10.2}\n{:>6}           {secs:<5.2}   {okay:>9}        {v:>10.2}\n",
                        UDP_RCVBUF, self.send_size, UDP_RCVBUF
                    )
                }
                _ => format!(
                    "{:>6} {:>6} {:>6}    {secs:<8.2} {v:>8.2}\n",
                    TCP_RCVBUF, SEND_SOCKET, self.send_size
                ),
            });
        }
        // The summary line of the commit's table: the average per instance.
        text.push_str(&format!(
            "\n{:<16}: Avg: {}\n",
            format!("{}-{}", self.test.name(), self.instances),
            fmt_g(avg)
        ));
        let dropped: u64 = out.channels.iter().map(|c| c.bytes_dropped).sum();
        Report {
            value: avg,
            series: vec![],
            details: vec![("bytes_dropped", dropped as f64)],
            text,
        }
    }

    fn proto(&self) -> &'static str {
        if self.test.kind() == ChannelKind::Udp {
            "UDP"
        } else {
            "TCP"
        }
    }

    fn buffer(&self) -> u64 {
        if self.test.kind() == ChannelKind::Udp {
            UDP_RCVBUF
        } else {
            TCP_RCVBUF
        }
    }
}

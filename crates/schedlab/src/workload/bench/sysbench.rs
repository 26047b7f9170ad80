//! sysbench OLTP: N client threads (one sysbench process), each with one
//! connection to the database: MySQL runs a thread per connection in one
//! process, PostgreSQL a backend process per connection. A transaction is
//! BEGIN, 10 point selects, 4 range queries, (read-write: 2 updates, a
//! delete, an insert,) COMMIT: each a synchronous round trip with server
//! work. COMMIT also goes through one log writer that wakes every waiting
//! committer when it flushes: one-to-many wakeups. Prints transactions per
//! second and latency. Left out: locks between transactions and the buffer
//! pool's I/O.

use super::{
    channel, check, compute, mark, mark_rate, mark_stats, ms_to_ns, read, task, write, Built,
    Report,
};
use crate::engine::RunOutput;
use crate::error::Result;
use crate::workload::program::{ChannelKind, Op, Time, WorkloadSpec};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Database {
    Mysql,
    Pgsql,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sysbench {
    /// --threads: client threads, one connection each.
    #[serde(default = "default_threads")]
    pub threads: u64,
    /// --db-driver.
    #[serde(default = "default_db")]
    pub db: Database,
    /// oltp_read_only instead of oltp_read_write.
    #[serde(default)]
    pub read_only: bool,
    /// --time, ms (sysbench's default is 10 s).
    #[serde(default = "default_duration")]
    pub duration_ms: u64,
    #[serde(default)]
    pub warmup_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity: Option<String>,
}

fn default_threads() -> u64 {
    1
}
fn default_db() -> Database {
    Database::Mysql
}
fn default_duration() -> u64 {
    10_000
}

/// (server work ns, reply bytes) per statement kind.
const POINT: (u64, u64) = (15_000, 200);
const RANGE: (u64, u64) = (45_000, 2_000);
const WRITE: (u64, u64) = (25_000, 50);
const TRIVIAL: (u64, u64) = (3_000, 20);
const REQUEST_BYTES: u64 = 150;
const CLIENT_NS: u64 = 4_000;
/// The log writer's flush (fsync to a fast device).
const FLUSH_NS: u64 = 60_000;
const SOCKET_BUFFER: u64 = 131_072;
/// Process ids: the sysbench client threads, and the MySQL server.
const SYSBENCH_PROCESS: u32 = 1;
const MYSQL_PROCESS: u32 = 2;

impl Sysbench {
    fn statements(&self) -> Vec<(u64, u64)> {
        let mut s = vec![TRIVIAL];
        s.extend([POINT; 10]);
        s.extend([RANGE; 4]);
        if !self.read_only {
            s.extend([WRITE; 4]);
        }
        s
    }

    pub fn build(&self) -> Result<Built> {
        check("sysbench", "threads", self.threads, 1, 4096)?;
        check("sysbench", "duration_ms", self.duration_ms, 1, 600_000)?;
        check(
            "sysbench",
            "warmup_ms",
            self.warmup_ms,
            0,
            self.duration_ms.saturating_sub(1),
        )?;
        // Channels 0 and 1: committers to the log writer, and its "flushed" notice.
        let mut channels = vec![
            channel(ChannelKind::Unix, 65_536),
            channel(ChannelKind::Unix, 65_536),
        ];
        let mut tasks = Vec::new();
        if !self.read_only {
            let writer = vec![Op::Forever(vec![
                read(0, 1),
                Op::Sleep(Time::fixed(FLUSH_NS)),
                write(1, 1),
            ])];
            let mut w = task("logwriter".into(), &self.affinity, writer);
            w.process = (self.db == Database::Mysql).then_some(MYSQL_PROCESS);
            tasks.push(w);
        }
        for c in 0..self.threads as usize {
            let (up, down) = (channels.len(), channels.len() + 1);
            channels.push(channel(ChannelKind::Tcp, SOCKET_BUFFER));
            channels.push(channel(ChannelKind::Tcp, SOCKET_BUFFER));
            let mut client = Vec::new();
            let mut server = Vec::new();
            for (work, reply) in self.statements() {
                client.extend([
                    compute(CLIENT_NS, 30),
                    write(up, REQUEST_BYTES),
                    read(down, reply),
                ]);
                server.extend([
                    read(up, REQUEST_BYTES),
                    compute(work, 40),
                    write(down, reply),
                ]);
            }
            // COMMIT: one more round trip; read-write transactions wait for the log flush.
            client.extend([write(up, REQUEST_BYTES), read(down, TRIVIAL.1), mark("txn")]);
            server.push(read(up, REQUEST_BYTES));
            if !self.read_only {
                server.extend([write(0, 1), read(1, 1)]);
            }
            server.extend([compute(TRIVIAL.0, 40), write(down, TRIVIAL.1)]);
            let mut backend = task(
                format!("{}{c}", self.server_name()),
                &self.affinity,
                vec![Op::Forever(server)],
            );
            backend.process = (self.db == Database::Mysql).then_some(MYSQL_PROCESS);
            let mut thread = task(
                format!("sysbench{c}"),
                &self.affinity,
                vec![mark("txn"), Op::Forever(client)],
            );
            thread.process = Some(SYSBENCH_PROCESS);
            tasks.push(backend);
            tasks.push(thread);
        }
        Ok(Built {
            spec: WorkloadSpec { channels, tasks },
            duration_ns: Some(ms_to_ns(self.duration_ms)),
            measure_from_ns: ms_to_ns(self.warmup_ms),
        })
    }

    fn server_name(&self) -> &'static str {
        match self.db {
            Database::Mysql => "mysqld-conn",
            Database::Pgsql => "postgres-backend",
        }
    }

    pub fn report(&self, out: &RunOutput) -> Report {
        let m = mark_stats(out, "txn");
        let txns = m.map_or(0, |m| m.count);
        let tps = mark_rate(out, "txn");
        let ms = |ns: u64| ns as f64 / 1e6;
        let (min, avg, max, p95) =
            m.filter(|m| m.intervals > 0)
                .map_or((0.0, 0.0, 0.0, 0.0), |m| {
                    (
                        ms(m.interval_min_ns),
                        ms(m.interval_sum_ns / m.intervals),
                        ms(m.interval_max_ns),
                        ms(m.percentile_ns(95)),
                    )
                });
        let text = format!(
            "SQL statistics:\n    transactions:                        {txns:<6} ({tps:.2} per sec.)\nLatency (ms):\n         min:                              {min:>8.2}\n         avg:                              {avg:>8.2}\n         max:                              {max:>8.2}\n         95th percentile:                  {p95:>8.2}\n"
        );
        Report {
            value: tps,
            series: vec![],
            details: vec![("latency_p95_ms", p95)],
            text,
        }
    }
}

//! sysbench OLTP: N client threads (one sysbench process), each with one
//! connection to the database over loopback TCP: MySQL runs a thread per
//! connection in one process, PostgreSQL a backend process per connection.
//! A transaction is BEGIN, 10 point selects, 4 range queries, (read-write:
//! 2 updates, a delete, an insert; sysbench 0.4 updates the deleted row
//! once more before its delete,) COMMIT: each a synchronous round trip
//! with server work. A PostgreSQL client (libpq) waits for each reply in
//! poll(2); servers and MySQL's client read blocking sockets. Prints
//! transactions per second and latency.
//!
//! The server's contention is structure, each database's own. The hot rows
//! of sysbench's default distribution are row locks, held from the write
//! statement to the end of commit.
//!
//! MySQL: commits group behind one log flush (a log writer drains every
//! queued commit request, flushes once, and releases that many committers
//! at once: one-to-many wakeups); a row lock is a channel of one token, and
//! read-write transactions
//! also go through InnoDB's two global mutexes, which spin before they
//! sleep (`spin_lock` with MySQL's defaults): lock_sys->mutex, taken to
//! create each record lock (lock_rec_lock) and to release them all at
//! commit (lock_trx_release_locks), and trx_sys->mutex, taken to open the
//! read view (MVCC::view_open), to make the transaction read-write at its
//! first write (trx_set_rw_mode) and at commit (trx_commit_in_memory's
//! removal from the read-write list).
//!
//! PostgreSQL 8.3 (one backend process per connection): every statement
//! takes a snapshot, GetSnapshotData scanning every backend's PGPROC under
//! ProcArrayLock held shared; every write inserts its WAL record under
//! WALInsertLock; COMMIT inserts the commit record, flushes the WAL itself
//! (XLogFlush under WALWriteLock: the backends queued behind a flush are
//! woken one by one and find their records flushed), leaves the running
//! set under ProcArrayLock held exclusive, and then releases its row
//! locks. These are LWLocks (`lw_acquire`): a release wakes the queue's
//! head, who competes again. A row lock is the lock manager's: the waiter
//! queues on the tuple lock and the holder's transaction, and the holder's
//! commit grants the next in line (a semaphore with one post, handed over
//! in order, woken by a SysV semaphore: not a sync wakeup). An LWLock's
//! spinlock is waited for as s_lock does (spin, then sleep 1 ms and more)
//! while its holder is preempted inside it.
//!
//! Left out: conflicts on cold rows, deadlock detection (locks are taken
//! in ascending row order instead), the errors a real read-write run
//! meets (a deadlock; on PostgreSQL, a duplicate key when three
//! transactions re-insert one row: sysbench 0.4 stops at the first and
//! prints no result, docs/fidelity.md), the other internal mutexes, rw-locks
//! and LWLocks (buffer pool, index latches, PostgreSQL's buffer mapping
//! and lock manager partitions) and their spinlocks, and the buffer
//! pool's I/O (the table fits in memory).

use super::ops::{
    channel, check, compute, echo, mark, ms_to_ns, poll_read, read, task, write, Built,
};
use super::readout::{mark_rate, mark_stats, Report};
use crate::engine::RunOutput;
use crate::error::Result;
use crate::workload::program::{
    default_pauses_per_delay, default_spin_max_delay, default_spin_rounds, ChannelKind,
    LogFlushSpec, LwSpec, Op, SemSpec, SpinLockSpec, Time, WorkloadSpec,
};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Database {
    Mysql,
    Pgsql,
}

/// Which sysbench runs the OLTP test. 0.4's C test (sb_oltp.c, every 0.4
/// release, 2006 to 2009) writes the row it deletes and re-inserts
/// with one more UPDATE first ("to make PostgreSQL work": a transaction
/// that waited for the row then deletes the copy its predecessor
/// inserted, not nothing); 1.0's oltp_read_write.lua has no such UPDATE.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Version {
    #[serde(rename = "0.4")]
    V0_4,
    #[default]
    #[serde(rename = "1.0")]
    V1_0,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sysbench {
    /// sysbench's version: its OLTP test's statements.
    #[serde(default)]
    pub version: Version,
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

/// (server work ns, reply bytes) per statement kind. The reply is the
/// result set as the protocol sends it: a point select returns one row's
/// `c` (CHAR(120)), simple, ordered and distinct ranges `range_size` (100)
/// rows of it (about 125 bytes a row with its header, plus the column
/// definitions), a sum range one row, writes and BEGIN/COMMIT an OK packet.
const POINT: (u64, u64) = (15_000, 200);
const RANGE_ROWS: (u64, u64) = (45_000, 12_600);
const RANGE_SUM: (u64, u64) = (45_000, 60);
const WRITE: (u64, u64) = (25_000, 50);
const TRIVIAL: (u64, u64) = (3_000, 20);
const REQUEST_BYTES: u64 = 150;
const CLIENT_NS: u64 = 4_000;
/// A log flush's write and sync (fsync to a fast device). An assumption:
/// the seed boxes' storage is not published.
const FLUSH_NS: u64 = 60_000;
const SOCKET_BUFFER: u64 = 131_072;
/// Process ids: the sysbench client threads, and the MySQL server.
const SYSBENCH_PROCESS: u32 = 1;
const MYSQL_PROCESS: u32 = 2;
/// sysbench's default row distribution (`--rand-type=special`,
/// `--rand-spec-pct=1`, `--rand-spec-res=75`, sysbench 0.4 to 1.0): 75% of
/// the rows picked fall in 1% of the table, 100 of `--table-size`'s
/// default 10,000. Those hot rows are the row locks that conflict; the
/// other 25% of picks spread over 9,900 rows and are not modelled.
const HOT_ROWS: usize = 100;
const HOT_PCT: u64 = 75;
/// Row picks of one transaction that take a row lock: index_update,
/// non_index_update, and delete + insert of one row.
const LOCKED_PICKS: usize = 3;
/// Distinct transactions each connection cycles through (their hot rows
/// drawn once, when the workload is built).
const TXN_VARIANTS: usize = 16;
/// The lock channels: a lock is a channel holding one token.
const LOCK_BYTES: u64 = 1;

/// InnoDB's global mutexes' critical sections, ns. Not measured: no
/// published hold time was found, so each is an estimate from the memory
/// it touches, a few cache lines other CPUs wrote (`miss_ns` 85 ns across
/// LLCs), chosen before the curve was run and not fitted to it.
/// lock_rec_lock's fast path creating one record lock (the record hash's
/// cell, the page's lock queue, the lock allocated from the transaction's
/// heap and linked to its list): about 6 lines.
const LOCK_SYS_CREATE_NS: u64 = 500;
/// lock_trx_release_locks at commit: each of the transaction's record
/// locks (four writes) unlinked from its page's queue and the waiters
/// behind it checked for a grant: about 12 lines.
const LOCK_SYS_RELEASE_NS: u64 = 1_000;
/// trx_sys->mutex: a read view's copy of the active read-write ids, or the
/// transaction added to (removed from) the read-write list with its id or
/// serialisation number: about 4 lines.
const TRX_SYS_NS: u64 = 300;

/// PostgreSQL 8.3's LWLock sections, ns: estimates from the memory each
/// touches, like InnoDB's above, not measured and not fitted. The machine
/// is not known when a workload is built, so a line is priced as on the
/// 2008 box the PostgreSQL seed ran on (`phoenix-2008`: 20 ns for a line
/// in the shared L3, 100 across sockets).
/// GetSnapshotData: the fixed part (the snapshot's header and its xmin
/// bookkeeping, a few lines) ...
const SNAPSHOT_BASE_NS: u64 = 200;
/// ... and each backend's PGPROC entry read from the L3 (its xid and xmin
/// share a line; the lines a backend wrote since the last scan are misses
/// across sockets, not modelled).
const SNAPSHOT_PER_BACKEND_NS: u64 = 20;
/// ProcArrayEndTransaction: the backend's xid and xmin cleared and
/// latestCompletedXid advanced, about 3 lines other CPUs read.
const PROC_ARRAY_END_NS: u64 = 300;
/// XLogInsert's section under WALInsertLock: the insert position and the
/// record copied into the WAL buffers, about 5 lines last written by
/// another backend.
const WAL_INSERT_NS: u64 = 500;

/// An InnoDB mutex taken as mutex_enter does: spin with MySQL's defaults,
/// then wait on the sync array's event, which a release sets for every
/// sleeper.
fn innodb_enter(mutex: &str) -> Op {
    Op::SpinLock(Box::new(SpinLockSpec {
        mutex: mutex.into(),
        rounds: default_spin_rounds(),
        max_delay: default_spin_max_delay(),
        pauses_per_delay: default_pauses_per_delay(),
        wake_all: true,
    }))
}

/// A critical section of `ns` under an InnoDB mutex.
fn innodb_section(mutex: &str, ns: u64) -> Vec<Op> {
    vec![
        innodb_enter(mutex),
        Op::Compute(Time::fixed(ns)),
        Op::Unlock(mutex.into()),
    ]
}

/// The channels before MySQL's row locks: the log writer's two.
const MYSQL_ROWS: usize = 2;

/// A MySQL row lock as a channel of one token: acquire reads it, release
/// writes it back.
fn acquire(lock: usize) -> Op {
    read(lock, LOCK_BYTES)
}
fn release(lock: usize) -> Op {
    write(lock, LOCK_BYTES)
}

/// A MySQL statement's server side before its work: the first select opens
/// the read view, the first write makes the transaction read-write, every
/// write creates its record locks and takes its rows.
fn mysql_statement(server: &mut Vec<Op>, i: usize, write_index: Option<usize>, rows: &[usize]) {
    if i == 1 || write_index == Some(0) {
        server.extend(innodb_section("trx_sys", TRX_SYS_NS));
    }
    if write_index.is_some() {
        server.extend(innodb_section("lock_sys", LOCK_SYS_CREATE_NS));
    }
    server.extend(rows.iter().map(|&r| acquire(MYSQL_ROWS + r)));
}

/// InnoDB's commit: trx_commit_in_memory takes the transaction off the
/// read-write list, then lock_trx_release_locks grants (wakes) the row
/// locks' waiters under lock_sys->mutex, before
/// trx_commit_complete_for_mysql waits for the log writer's flush.
fn mysql_commit(server: &mut Vec<Op>, rows: &[usize]) {
    server.extend(innodb_section("trx_sys", TRX_SYS_NS));
    server.extend([
        innodb_enter("lock_sys"),
        Op::Compute(Time::fixed(LOCK_SYS_RELEASE_NS)),
    ]);
    server.extend(rows.iter().rev().map(|&r| release(MYSQL_ROWS + r)));
    server.push(Op::Unlock("lock_sys".into()));
    server.extend([write(0, 1), read(1, 1)]);
}

const PROC_ARRAY: &str = "ProcArrayLock";
const WAL_INSERT: &str = "WALInsertLock";
const WAL_WRITE: &str = "WALWriteLock";
const WAL: &str = "wal";

fn row_lock(row: usize) -> String {
    format!("row{row}")
}

fn sem_post(sem: &str) -> Op {
    Op::SemPost(SemSpec {
        sem: sem.into(),
        sync: false,
        free: false,
    })
}

fn sem_wait(sem: &str) -> Op {
    Op::SemWait(SemSpec {
        sem: sem.into(),
        sync: false,
        free: false,
    })
}

/// A section of `ns` under an LWLock.
fn lw_section(lock: &str, shared: bool, ns: u64) -> [Op; 3] {
    [
        Op::LwAcquire(LwSpec {
            lock: lock.into(),
            shared,
        }),
        Op::Compute(Time::fixed(ns)),
        Op::LwRelease(lock.into()),
    ]
}

/// XLogInsert: a WAL record appended under WALInsertLock.
fn wal_insert(server: &mut Vec<Op>) {
    let [take, work, give] = lw_section(WAL_INSERT, false, WAL_INSERT_NS);
    server.extend([take, work, Op::LogAppend(WAL.into()), give]);
}

/// A PostgreSQL statement's server side before its work: a snapshot for
/// every statement but BEGIN (read committed), and for a write its row
/// locks and its WAL record.
fn pgsql_statement(
    server: &mut Vec<Op>,
    i: usize,
    write_index: Option<usize>,
    rows: &[usize],
    backends: u64,
) {
    if i > 0 {
        let scan = SNAPSHOT_BASE_NS + SNAPSHOT_PER_BACKEND_NS * backends;
        server.extend(lw_section(PROC_ARRAY, true, scan));
    }
    if write_index.is_some() {
        server.extend(rows.iter().map(|&r| sem_wait(&row_lock(r))));
        wal_insert(server);
    }
}

/// CommitTransaction (8.3): RecordTransactionCommit inserts the commit
/// record and flushes the WAL up to it (XLogFlush), ProcArrayEndTransaction
/// takes the transaction out of the running set, and the lock manager then
/// releases its row locks to the next waiters.
fn pgsql_commit(server: &mut Vec<Op>, rows: &[usize]) {
    wal_insert(server);
    server.push(Op::LogFlush(Box::new(LogFlushSpec {
        log: WAL.into(),
        lock: WAL_WRITE.into(),
        io: Time::fixed(FLUSH_NS),
    })));
    server.extend(lw_section(PROC_ARRAY, false, PROC_ARRAY_END_NS));
    server.extend(rows.iter().rev().map(|&r| sem_post(&row_lock(r))));
}

impl Sysbench {
    /// oltp_read_write's statements in order: BEGIN, 10 point selects, the
    /// simple, sum, order and distinct ranges, (index_update,
    /// non_index_update, [0.4: index_update of the row then deleted,] delete,
    /// insert,) without COMMIT.
    fn statements(&self) -> Vec<(u64, u64)> {
        let mut s = vec![TRIVIAL];
        s.extend([POINT; 10]);
        s.extend([RANGE_ROWS, RANGE_SUM, RANGE_ROWS, RANGE_ROWS]);
        if !self.read_only {
            s.extend(vec![WRITE; self.writes()]);
        }
        s
    }

    /// A read-write transaction's write statements.
    fn writes(&self) -> usize {
        match self.version {
            Version::V0_4 => 5,
            Version::V1_0 => 4,
        }
    }

    /// The write statements that take the transaction's row locks, in
    /// order: 1.0's are spread over all four (its insert follows the
    /// delete of its row, already locked); 0.4's over its three UPDATEs,
    /// the third of which locks the row the delete and insert then write.
    fn locking_writes(&self) -> usize {
        match self.version {
            Version::V0_4 => 3,
            Version::V1_0 => 4,
        }
    }

    /// The hot rows transaction `t` of connection `c` locks, ascending
    /// (each row once): its picks that fall on a hot row. Taken in
    /// ascending order, as a deadlock-free schedule; InnoDB and PostgreSQL
    /// instead detect a deadlock and roll one transaction back.
    fn hot_rows(c: usize, t: usize) -> Vec<usize> {
        let mut z = crate::seed::splitmix64(((c as u64) << 20) ^ t as u64 ^ 0x5359_5342);
        let mut rows = Vec::new();
        for _ in 0..LOCKED_PICKS {
            z = crate::seed::splitmix64(z);
            if z % 100 < HOT_PCT {
                rows.push((z >> 32) as usize % HOT_ROWS);
            }
        }
        rows.sort_unstable();
        rows.dedup();
        rows
    }

    /// The parameters' limits, without building the workload.
    pub fn check(&self) -> Result<()> {
        check("sysbench", "threads", self.threads, 1, 4096)?;
        check("sysbench", "duration_ms", self.duration_ms, 1, 600_000)?;
        check(
            "sysbench",
            "warmup_ms",
            self.warmup_ms,
            0,
            self.duration_ms.saturating_sub(1),
        )?;
        Ok(())
    }

    pub fn build(&self) -> Result<Built> {
        self.check()?;
        let read_write = !self.read_only;
        let mut channels = Vec::new();
        let mut tasks = Vec::new();
        match self.db {
            // Channels 0 and 1: commit requests to the log writer, and its
            // "flushed" notices; then the hot rows' locks.
            Database::Mysql => {
                channels.extend([
                    channel(ChannelKind::Unix, 65_536),
                    channel(ChannelKind::Unix, 65_536),
                ]);
                if read_write {
                    channels.extend((0..HOT_ROWS).map(|_| channel(ChannelKind::Pipe, LOCK_BYTES)));
                    // Start-up puts each lock's token in place; then group
                    // commit: take every commit request queued (one byte
                    // each), flush once, release as many committers as the
                    // flush covered.
                    let mut writer: Vec<Op> =
                        (MYSQL_ROWS..MYSQL_ROWS + HOT_ROWS).map(release).collect();
                    writer.push(Op::Forever(vec![
                        read(0, self.threads),
                        Op::Sleep(Time::fixed(FLUSH_NS)),
                        mark("flush"),
                        echo(1, self.threads),
                    ]));
                    let mut w = task("logwriter".into(), &self.affinity, writer);
                    w.process = Some(MYSQL_PROCESS);
                    tasks.push(w);
                }
            }
            // The postmaster starts with every row unlocked (one post
            // each) and leaves.
            Database::Pgsql if read_write => {
                let unlocked = (0..HOT_ROWS).map(|r| sem_post(&row_lock(r))).collect();
                tasks.push(task("postmaster".into(), &self.affinity, unlocked));
            }
            Database::Pgsql => {}
        }
        let statements = self.statements();
        // How a client waits for its reply: libpq waits in poll(2) and
        // then reads without blocking (pqWait, pqSocketPoll, pqReadData);
        // MySQL's client library reads a blocking socket (vio_read).
        let reply = |chan: usize, bytes: u64| match self.db {
            Database::Pgsql => poll_read(chan, bytes),
            Database::Mysql => read(chan, bytes),
        };
        for c in 0..self.threads as usize {
            let (up, down) = (channels.len(), channels.len() + 1);
            channels.push(channel(ChannelKind::Tcp, SOCKET_BUFFER));
            channels.push(channel(ChannelKind::Tcp, SOCKET_BUFFER));
            let variants = if read_write { TXN_VARIANTS } else { 1 };
            // Room for every transaction variant's instructions at once (a
            // statement is 3 for the client, at most about 12 for the server).
            let mut client = Vec::with_capacity(variants * (3 * statements.len() + 3));
            let mut server = Vec::with_capacity(variants * (12 * statements.len() + 24));
            for t in 0..variants {
                let rows = if read_write {
                    Self::hot_rows(c, t)
                } else {
                    vec![]
                };
                for (i, &(work, reply_bytes)) in statements.iter().enumerate() {
                    client.extend([
                        compute(CLIENT_NS, 30),
                        write(up, REQUEST_BYTES),
                        reply(down, reply_bytes),
                    ]);
                    server.push(read(up, REQUEST_BYTES));
                    // The writes lock their rows (two-phase locking: held
                    // to the end of the transaction), spread over the
                    // write statements in ascending order.
                    let write_index = i
                        .checked_sub(statements.len() - self.writes())
                        .filter(|_| read_write);
                    let spread = self.locking_writes();
                    let locked: Vec<usize> = write_index.map_or(vec![], |k| {
                        (0..rows.len())
                            .filter(|&j| j * spread / rows.len() == k)
                            .map(|j| rows[j])
                            .collect()
                    });
                    match self.db {
                        Database::Mysql if read_write => {
                            mysql_statement(&mut server, i, write_index, &locked)
                        }
                        Database::Mysql => {}
                        Database::Pgsql => {
                            pgsql_statement(&mut server, i, write_index, &locked, self.threads)
                        }
                    }
                    server.extend([compute(work, 40), write(down, reply_bytes)]);
                }
                // COMMIT: one more round trip.
                client.extend([
                    write(up, REQUEST_BYTES),
                    reply(down, TRIVIAL.1),
                    mark("txn"),
                ]);
                server.extend([read(up, REQUEST_BYTES), compute(TRIVIAL.0, 40)]);
                if read_write {
                    match self.db {
                        Database::Mysql => mysql_commit(&mut server, &rows),
                        Database::Pgsql => pgsql_commit(&mut server, &rows),
                    }
                }
                server.push(write(down, TRIVIAL.1));
            }
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
        // The server's contention: waits for a row lock per transaction,
        // and commits per log flush.
        let ratio = |n: u64, d: u64| if d > 0 { n as f64 / d as f64 } else { 0.0 };
        let per_txn = |n: u64| ratio(n, txns);
        let (lock_waits_per_txn, commits_per_flush) = match self.db {
            Database::Mysql => {
                let lock_waits: u64 = out
                    .channels
                    .iter()
                    .skip(MYSQL_ROWS)
                    .take(if self.read_only { 0 } else { HOT_ROWS })
                    .map(|c| c.reader_blocks)
                    .sum();
                let flushes = mark_stats(out, "flush").map_or(0, |m| m.count);
                (per_txn(lock_waits), ratio(txns, flushes))
            }
            // Over the whole run, from the counters: every commit's flush
            // either writes or finds its record covered, and the only
            // semaphores are the row locks.
            Database::Pgsql => {
                let counter = |name: &str| out.counters.get(name).copied().unwrap_or(0);
                let flushes = counter("log.flushes");
                let commits = flushes + counter("log.covered");
                (
                    ratio(counter("futex.wait"), commits),
                    ratio(commits, flushes),
                )
            }
        };
        Report {
            value: tps,
            series: vec![],
            details: vec![
                ("latency_p95_ms", p95),
                ("lock_waits_per_txn", lock_waits_per_txn),
                ("commits_per_flush", commits_per_flush),
            ],
            text,
        }
    }
}

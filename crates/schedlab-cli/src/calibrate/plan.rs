//! The probes every calibration runs, as tables: each entry says what it
//! measures and how. Which cost each feeds, and by what formula, is
//! `derive.rs`; the probes themselves are `probes.rs`.

use super::measure::{self, Budget, Stat};
use super::probes::{self, OneWay, Wait};
use super::LOCAL_WAKE_PAUSE_NS;

/// A probe on one CPU (`a`), in nanoseconds.
pub(super) struct OneCpu {
    pub name: &'static str,
    pub what: &'static str,
    pub measure: fn(u32, &Budget) -> Result<Stat, String>,
}

/// System calls, copies, messages, fork, switches and a wakeup's cost to
/// the waker, all on one CPU.
pub(super) const ONE_CPU: [OneCpu; 12] = [
    OneCpu {
        name: "syscall",
        what: "a bare system call (getppid)",
        measure: |a, b| {
            probes::pin(a)?;
            measure::repeat(b, || probes::syscall(2_000))
        },
    },
    OneCpu {
        name: "pipe_op_pair",
        what: "a 4-byte pipe write and its read by one thread, nobody waiting",
        measure: |a, b| {
            probes::pin(a)?;
            let p = probes::Pair::pipe()?;
            measure::repeat(b, || p.batch(4, 500))
        },
    },
    OneCpu {
        name: "pipe_16k_pair",
        what: "a 16 KiB pipe write and its read by one thread",
        measure: |a, b| {
            probes::pin(a)?;
            let p = probes::Pair::pipe()?;
            measure::repeat(b, || p.batch(16_384, 50))
        },
    },
    OneCpu {
        name: "unix_msg_pair",
        what: "a 100-byte AF_UNIX stream write and its read by one thread",
        measure: |a, b| {
            probes::pin(a)?;
            let p = probes::Pair::unix()?;
            measure::repeat(b, || p.batch(100, 500))
        },
    },
    OneCpu {
        name: "tcp_loopback_pair",
        what: "a 1-byte loopback TCP write and its read by one thread",
        measure: |a, b| {
            probes::pin(a)?;
            let mut t = probes::Tcp::new()?;
            measure::repeat(b, || t.batch(200))
        },
    },
    OneCpu {
        name: "udp_loopback_pair",
        what: "a 1-byte loopback UDP datagram sent and received by one thread",
        measure: |a, b| {
            probes::pin(a)?;
            let mut u = probes::Udp::new()?;
            measure::repeat(b, || u.batch(200))
        },
    },
    OneCpu {
        name: "fork",
        what: "fork() until it returns in the parent (the child exits at once)",
        measure: |a, b| {
            probes::pin(a)?;
            measure::repeat(b, || probes::fork(3))
        },
    },
    OneCpu {
        name: "pipe_rt_same_cpu_processes",
        what: "a pipe round trip between two processes on one CPU",
        measure: |a, b| {
            probes::pin(a)?;
            let p = probes::PingPong::processes()?;
            measure::repeat(b, || p.batch(200))
        },
    },
    OneCpu {
        name: "pipe_rt_same_cpu_threads",
        what: "a pipe round trip between two threads of one process on one CPU",
        measure: |a, b| {
            let p = probes::PingPong::threads(a, a)?;
            measure::repeat(b, || p.batch(200))
        },
    },
    OneCpu {
        name: "pipe_write_alone",
        what: "an 8-byte pipe write that wakes nobody, timed call by call",
        measure: |a, b| {
            probes::pin(a)?;
            measure::repeat(b, || probes::lone_write(50, LOCAL_WAKE_PAUSE_NS))
        },
    },
    OneCpu {
        name: "pipe_write_wakes_local",
        what: "an 8-byte pipe write waking a SCHED_IDLE reader blocked on the same CPU (no preemption), timed call by call",
        measure: |a, b| {
            let o = OneWay::new(a, a, Wait::Local, LOCAL_WAKE_PAUSE_NS)?;
            measure::repeat(b, || o.batch(20).map(|x| x.write_ns))
        },
    },
    OneCpu {
        name: "read_after_write_same_cpu",
        what: "an 8-byte pipe read() of what this thread just wrote, timed call by call",
        measure: |a, b| {
            let o = probes::ReadAfter::new(a, None)?;
            measure::repeat(b, || o.batch(50))
        },
    },
];

/// A probe on a pair of CPUs (`a`, `b`) at one distance class, in
/// nanoseconds: named `{prefix}_{class key}`, described with `{class}`
/// replaced by the class's words.
pub(super) struct PerClass {
    pub prefix: &'static str,
    pub what: &'static str,
    pub measure: fn(u32, u32, &Budget) -> Result<Stat, String>,
}

/// Cache-line transfers, round trips, and a read of what another CPU wrote,
/// at each distance the machine has.
pub(super) const PER_CLASS: [PerClass; 3] = [
    PerClass {
        prefix: "line_bounce",
        what: "one transfer of a cache line bounced between {class}",
        measure: |a, b, bud| {
            let l = probes::LineBounce::new(a, b)?;
            measure::repeat(bud, || l.batch(2_000))
        },
    },
    PerClass {
        prefix: "pipe_rt",
        what: "a pipe round trip between two threads on {class}",
        measure: |a, b, bud| {
            let p = probes::PingPong::threads(a, b)?;
            measure::repeat(bud, || p.batch(20))
        },
    },
    PerClass {
        prefix: "read_after_write",
        what: "an 8-byte pipe read() on one of {class} of what the other just wrote, timed call by call",
        measure: |a, b, bud| {
            let o = probes::ReadAfter::new(a, Some(b))?;
            measure::repeat(bud, || o.batch(50))
        },
    },
];

/// The backlogs (KiB of skb truesize queued on the CPU) at which the
/// `unix_backlog` probes run; 0 is the baseline, one message in flight.
/// From a quarter of a small L2 to past most guests' share of an L3.
pub(super) const BACKLOG_KIB: [u64; 8] = [0, 256, 512, 1024, 2048, 4096, 8192, 16_384];

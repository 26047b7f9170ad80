//! The native probes: small loops of system calls, pipe and socket traffic,
//! cache-line ping-pong and copies, pinned to chosen CPUs. Each batch
//! function returns one batch's value (nanoseconds per operation unless
//! said otherwise); `measure::repeat` runs it until the batches agree.

use std::io::{Read, Write};
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Instant;

fn errno(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

/// Monotonic nanoseconds, comparable across CPUs.
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec we pass.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Pins the calling thread to `cpu`.
pub fn pin(cpu: u32) -> Result<(), String> {
    // SAFETY: a zeroed cpu_set_t is empty; CPU_SET and sched_setaffinity only touch it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu as usize, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(errno(&format!("pinning to CPU {cpu} (sched_setaffinity)")));
        }
    }
    Ok(())
}

/// The CPUs this process may run on.
pub fn allowed_cpus() -> Vec<u32> {
    // SAFETY: as in `pin`; CPU_ISSET reads the set the kernel filled.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return vec![];
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .map(|c| c as u32)
            .collect()
    }
}

/// An owned file descriptor closed on drop.
struct Fd(RawFd);

impl Drop for Fd {
    fn drop(&mut self) {
        // SAFETY: we own the descriptor.
        unsafe { libc::close(self.0) };
    }
}

fn pipe() -> Result<(Fd, Fd), String> {
    let mut fds = [0; 2];
    // SAFETY: pipe writes two descriptors into the array.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(errno("pipe"));
    }
    Ok((Fd(fds[0]), Fd(fds[1])))
}

fn socketpair() -> Result<(Fd, Fd), String> {
    let mut fds = [0; 2];
    // SAFETY: socketpair writes two descriptors into the array.
    if unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM, 0, fds.as_mut_ptr()) } != 0 {
        return Err(errno("socketpair"));
    }
    Ok((Fd(fds[0]), Fd(fds[1])))
}

fn set_nonblocking(fd: RawFd) {
    // SAFETY: fcntl on a descriptor we own.
    unsafe {
        let fl = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK);
    }
}

/// Writes all of `buf` (blocking descriptor).
fn write_all(fd: RawFd, buf: &[u8]) -> Result<(), String> {
    let mut off = 0;
    while off < buf.len() {
        // SAFETY: the pointer and length describe the rest of `buf`.
        let n = unsafe { libc::write(fd, buf[off..].as_ptr().cast(), buf.len() - off) };
        if n <= 0 {
            return Err(errno("write"));
        }
        off += n as usize;
    }
    Ok(())
}

/// Reads exactly `buf.len()` bytes; on a non-blocking descriptor it spins.
/// Ok(false) at end of file.
fn read_exact(fd: RawFd, buf: &mut [u8]) -> Result<bool, String> {
    let mut off = 0;
    while off < buf.len() {
        // SAFETY: the pointer and length describe the rest of `buf`.
        let n = unsafe { libc::read(fd, buf[off..].as_mut_ptr().cast(), buf.len() - off) };
        if n == 0 {
            return Ok(false);
        }
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::WouldBlock
                || e.kind() == std::io::ErrorKind::Interrupted
            {
                std::hint::spin_loop();
                continue;
            }
            return Err(format!("read: {e}"));
        }
        off += n as usize;
    }
    Ok(true)
}

fn per_op(start: Instant, ops: u64) -> f64 {
    start.elapsed().as_nanos() as f64 / ops as f64
}

/// A bare system call (getppid).
pub fn syscall(n: u64) -> Result<f64, String> {
    let t = Instant::now();
    for _ in 0..n {
        // SAFETY: getppid has no arguments and no effect.
        unsafe { libc::syscall(libc::SYS_getppid) };
    }
    Ok(per_op(t, n))
}

/// A write and a read of `bytes` on one descriptor pair by one thread, with
/// nobody waiting: the cost of the two calls and the copies, no wakeup.
fn pair_loop(w: RawFd, r: RawFd, bytes: usize, n: u64) -> Result<f64, String> {
    let out = vec![1u8; bytes];
    let mut inb = vec![0u8; bytes];
    let t = Instant::now();
    for _ in 0..n {
        write_all(w, &out)?;
        read_exact(r, &mut inb)?;
    }
    Ok(per_op(t, n))
}

pub struct Pair {
    r: Fd,
    w: Fd,
}

impl Pair {
    pub fn pipe() -> Result<Pair, String> {
        let (r, w) = read_write_pair(Channel::Pipe)?;
        Ok(Pair { r, w })
    }
    pub fn unix() -> Result<Pair, String> {
        let (r, w) = read_write_pair(Channel::Unix)?;
        Ok(Pair { r, w })
    }
    pub fn batch(&self, bytes: usize, n: u64) -> Result<f64, String> {
        pair_loop(self.w.0, self.r.0, bytes, n)
    }
}

/// AF_UNIX stream sockets holding a steady backlog: each has `depth - 1`
/// 100-byte messages queued, and a step writes one message to the next
/// socket in turn and reads that socket's oldest. Every read then finds
/// its message behind all the others written since, on this one CPU.
pub struct Backlog {
    pairs: Vec<(Fd, Fd)>,
}

/// A backlog probe's message, as hackbench's.
const BACKLOG_MSG: usize = 100;
/// Messages queued per socket: 100 x 768 bytes of truesize, well inside
/// the default 212,992-byte send buffer.
const BACKLOG_DEPTH: u64 = 100;

impl Backlog {
    /// Sockets enough to hold `kib` KiB of skbs (768 bytes of truesize per
    /// 100-byte message), or one socket with nothing queued for 0.
    pub fn new(kib: u64) -> Result<Backlog, String> {
        let truesize = schedlab::cost::unix_skb_truesize(BACKLOG_MSG as u64);
        let (sockets, depth) = if kib == 0 {
            (1, 1)
        } else {
            (
                (kib * 1024).div_ceil(truesize * BACKLOG_DEPTH),
                BACKLOG_DEPTH,
            )
        };
        let buf = [1u8; BACKLOG_MSG];
        let mut pairs = Vec::with_capacity(sockets as usize);
        for _ in 0..sockets {
            let (r, w) = socketpair()?;
            // A send buffer smaller than the default would block the
            // prefill for good: fail instead.
            set_nonblocking(w.0);
            for _ in 1..depth {
                write_all(w.0, &buf).map_err(|e| {
                    format!(
                        "{e} (the socket's send buffer holds fewer than {depth} 100-byte messages)"
                    )
                })?;
            }
            pairs.push((r, w));
        }
        Ok(Backlog { pairs })
    }

    /// `steps` writes and reads in turn; ns per step.
    pub fn batch(&self, steps: u64) -> Result<f64, String> {
        let mut buf = [1u8; BACKLOG_MSG];
        let t = Instant::now();
        for (_, (r, w)) in (0..steps).zip(self.pairs.iter().cycle()) {
            write_all(w.0, &buf)?;
            read_exact(r.0, &mut buf)?;
        }
        Ok(per_op(t, steps))
    }
}

/// A loopback TCP connection: a 1-byte write on one end and its read on the other.
pub struct Tcp {
    client: std::net::TcpStream,
    server: std::net::TcpStream,
}

impl Tcp {
    pub fn new() -> Result<Tcp, String> {
        let l =
            std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| format!("loopback TCP: {e}"))?;
        let addr = l.local_addr().map_err(|e| e.to_string())?;
        let client =
            std::net::TcpStream::connect(addr).map_err(|e| format!("loopback TCP: {e}"))?;
        let (server, _) = l.accept().map_err(|e| format!("loopback TCP: {e}"))?;
        client.set_nodelay(true).map_err(|e| e.to_string())?;
        server.set_nodelay(true).map_err(|e| e.to_string())?;
        Ok(Tcp { client, server })
    }
    pub fn batch(&mut self, n: u64) -> Result<f64, String> {
        let mut b = [0u8; 1];
        let t = Instant::now();
        for _ in 0..n {
            self.client.write_all(&[1]).map_err(|e| e.to_string())?;
            self.server.read_exact(&mut b).map_err(|e| e.to_string())?;
        }
        Ok(per_op(t, n))
    }
}

/// A connected pair of loopback UDP sockets: a 1-byte datagram sent on
/// one and received on the other.
pub struct Udp {
    a: std::net::UdpSocket,
    b: std::net::UdpSocket,
}

impl Udp {
    pub fn new() -> Result<Udp, String> {
        let what = |e: std::io::Error| format!("loopback UDP: {e}");
        let a = std::net::UdpSocket::bind("127.0.0.1:0").map_err(what)?;
        let b = std::net::UdpSocket::bind("127.0.0.1:0").map_err(what)?;
        a.connect(b.local_addr().map_err(what)?).map_err(what)?;
        b.connect(a.local_addr().map_err(what)?).map_err(what)?;
        Ok(Udp { a, b })
    }
    pub fn batch(&mut self, n: u64) -> Result<f64, String> {
        let mut buf = [0u8; 1];
        let t = Instant::now();
        for _ in 0..n {
            self.a.send(&[1]).map_err(|e| e.to_string())?;
            self.b.recv(&mut buf).map_err(|e| e.to_string())?;
        }
        Ok(per_op(t, n))
    }
}

/// What a message probe sends its bytes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    Pipe,
    /// An AF_UNIX stream socket pair.
    Unix,
    /// A loopback TCP connection with TCP_NODELAY.
    Tcp,
}

impl Channel {
    /// The probe names' prefix.
    pub fn name(self) -> &'static str {
        match self {
            Channel::Pipe => "pipe",
            Channel::Unix => "unix",
            Channel::Tcp => "tcp",
        }
    }
}

/// A channel's (read, write) ends.
fn read_write_pair(kind: Channel) -> Result<(Fd, Fd), String> {
    match kind {
        Channel::Pipe => pipe(),
        Channel::Unix => {
            let (x, y) = socketpair()?;
            Ok((y, x))
        }
        Channel::Tcp => {
            use std::os::fd::IntoRawFd;
            let what = |e: std::io::Error| format!("a loopback TCP connection: {e}");
            let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(what)?;
            let writer =
                std::net::TcpStream::connect(listener.local_addr().map_err(what)?).map_err(what)?;
            let (reader, _) = listener.accept().map_err(what)?;
            for s in [&writer, &reader] {
                s.set_nodelay(true).map_err(what)?;
            }
            Ok((Fd(reader.into_raw_fd()), Fd(writer.into_raw_fd())))
        }
    }
}

/// 100-byte messages written and read back at once by one thread on one
/// CPU through channel `kind`: the medians of the write() and read() times
/// over `n` messages. Against a pipe's, a unix call's extra time is its
/// side of the socket work.
pub fn local_messages(kind: Channel, n: u64) -> Result<(f64, f64), String> {
    let (r, w) = read_write_pair(kind)?;
    let mut buf = [1u8; 100];
    let (mut writes, mut reads) = (
        Vec::with_capacity(n as usize),
        Vec::with_capacity(n as usize),
    );
    for _ in 0..n {
        let t0 = now_ns();
        write_all(w.0, &buf)?;
        let t1 = now_ns();
        read_exact(r.0, &mut buf)?;
        let t2 = now_ns();
        writes.push((t1 - t0) as f64);
        reads.push((t2 - t1) as f64);
    }
    Ok((
        super::measure::median(&writes),
        super::measure::median(&reads),
    ))
}

/// 100-byte messages from a writer pinned to CPU `a` to a reader pinned to
/// CPU `b` through channel `kind`, one in flight: the writer waits (spinning in user space) until the last
/// message was read before it writes the next, and the reader until a
/// message was written before it reads, so neither call blocks or wakes
/// anyone and each finds the channel last used on the other CPU. The
/// medians of the write() and read() times over `n` messages.
pub fn remote_messages(kind: Channel, a: u32, b: u32, n: u64) -> Result<(f64, f64), String> {
    let (r, w) = read_write_pair(kind)?;
    let written = Arc::new(Line(AtomicU64::new(0)));
    let read = Arc::new(Line(AtomicU64::new(0)));
    let (w2, r2) = (written.clone(), read.clone());
    let reader = std::thread::spawn(move || -> Result<Vec<f64>, String> {
        let r = r;
        pin(b)?;
        let mut buf = [0u8; 100];
        let mut times = Vec::with_capacity(n as usize);
        for i in 0..n {
            let mut seen = w2.0.load(Ordering::Acquire);
            while seen <= i {
                std::hint::spin_loop();
                seen = w2.0.load(Ordering::Acquire);
            }
            if seen == STOP {
                return Err("the writer stopped".into());
            }
            let t0 = now_ns();
            read_exact(r.0, &mut buf)?;
            times.push((now_ns() - t0) as f64);
            r2.0.store(i + 1, Ordering::Release);
        }
        Ok(times)
    });
    let msg = [1u8; 100];
    let mut writes = Vec::with_capacity(n as usize);
    let wrote = pin(a).and_then(|_| {
        for i in 0..n {
            while read.0.load(Ordering::Acquire) < i {
                if reader.is_finished() {
                    return Err("the reader stopped".to_string());
                }
                std::hint::spin_loop();
            }
            let t0 = now_ns();
            write_all(w.0, &msg)?;
            writes.push((now_ns() - t0) as f64);
            written.0.store(i + 1, Ordering::Release);
        }
        Ok(())
    });
    if wrote.is_err() {
        written.0.store(STOP, Ordering::Release);
    }
    let reads = reader
        .join()
        .map_err(|_| "the reader thread panicked".to_string())?;
    wrote?;
    let reads = reads?;
    Ok((
        super::measure::median(&writes),
        super::measure::median(&reads),
    ))
}

/// fork() as the parent sees it (the child exits at once).
pub fn fork(n: u64) -> Result<f64, String> {
    let mut total = 0u64;
    for _ in 0..n {
        let t0 = now_ns();
        // SAFETY: the child only calls _exit, which is async-signal-safe.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            unsafe { libc::_exit(0) };
        }
        total += now_ns() - t0;
        if pid < 0 {
            return Err(errno("fork"));
        }
        let mut status = 0;
        // SAFETY: waiting for the child we forked.
        unsafe { libc::waitpid(pid, &mut status, 0) };
    }
    Ok(total as f64 / n as f64)
}

/// A blocking pipe ping-pong between this side and an echo on the other:
/// two threads pinned to CPUs `a` and `b`, or (with `process`) a forked
/// child, both pinned to `a`.
pub struct PingPong {
    to: Fd,
    from: Fd,
    child: Option<libc::pid_t>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl PingPong {
    pub fn threads(a: u32, b: u32) -> Result<PingPong, String> {
        let (r1, w1) = pipe()?;
        let (r2, w2) = pipe()?;
        let (tx, rx) = mpsc::channel();
        let thread = std::thread::spawn(move || {
            // Own the descriptors (not just their numbers) so they live here.
            let (r1, w2) = (r1, w2);
            if let Err(e) = pin(b) {
                let _ = tx.send(Err(e));
                return;
            }
            let _ = tx.send(Ok(()));
            let mut tok = [0u8; 4];
            while let Ok(true) = read_exact(r1.0, &mut tok) {
                if write_all(w2.0, &tok).is_err() {
                    break;
                }
            }
        });
        rx.recv().map_err(|e| e.to_string())??;
        pin(a)?;
        Ok(PingPong {
            to: w1,
            from: r2,
            child: None,
            thread: Some(thread),
        })
    }

    /// Two processes on CPU `a` (the caller must already be pinned there).
    pub fn processes() -> Result<PingPong, String> {
        let (r1, w1) = pipe()?;
        let (r2, w2) = pipe()?;
        // SAFETY: the child runs only read, write and _exit on descriptors it owns.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(errno("fork"));
        }
        if pid == 0 {
            drop(w1);
            drop(r2);
            let mut tok = [0u8; 4];
            loop {
                // SAFETY: plain reads and writes of a 4-byte buffer.
                let n = unsafe { libc::read(r1.0, tok.as_mut_ptr().cast(), 4) };
                if n <= 0 {
                    break;
                }
                if unsafe { libc::write(w2.0, tok.as_ptr().cast(), 4) } != 4 {
                    break;
                }
            }
            unsafe { libc::_exit(0) };
        }
        Ok(PingPong {
            to: w1,
            from: r2,
            child: Some(pid),
            thread: None,
        })
    }

    /// Nanoseconds per round trip over `n` round trips.
    pub fn batch(&self, n: u64) -> Result<f64, String> {
        let mut tok = [0u8; 4];
        let t = Instant::now();
        for _ in 0..n {
            write_all(self.to.0, &tok)?;
            if !read_exact(self.from.0, &mut tok)? {
                return Err("the echo side ended".into());
            }
        }
        Ok(per_op(t, n))
    }
}

impl Drop for PingPong {
    fn drop(&mut self) {
        // Closing our write end ends the echo loop.
        let to = std::mem::replace(&mut self.to, Fd(-1));
        drop(to);
        if let Some(pid) = self.child {
            let mut status = 0;
            // SAFETY: waiting for our own child.
            unsafe { libc::waitpid(pid, &mut status, 0) };
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// How the reading CPU waits in a one-way latency probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// Spinning on non-blocking reads: no sleep, no wakeup.
    Poll,
    /// Blocked in read while a SCHED_IDLE task keeps its CPU busy: the
    /// wakeup preempts it (an IPI, no idle exit).
    Busy,
    /// Blocked in read on an otherwise idle CPU.
    Idle,
    /// Blocked in read on the writer's own CPU as a SCHED_IDLE task, so the
    /// wakeup never preempts the writer: its write() is a local wakeup. The
    /// writer sleeps for the gap instead of spinning: the reader it woke
    /// last preempted nobody and must run to block in read again, or the
    /// next write finds it runnable and wakes nobody.
    Local,
}

/// One-way latency from a write on CPU `a` to the reader on CPU `b`
/// returning from its read: the writer stamps the token, the reader
/// answers with the difference. Also the writer's own write() time.
pub struct OneWay {
    to: Fd,
    back: Fd,
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
    wait: Wait,
    pub gap_ns: u64,
}

/// One batch of a one-way probe: medians over its samples.
pub struct OneWayBatch {
    pub latency_ns: f64,
    pub write_ns: f64,
}

fn set_idle_policy() -> Result<(), String> {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: changes only the calling thread's policy.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) } != 0 {
        return Err(errno("SCHED_IDLE"));
    }
    Ok(())
}

impl OneWay {
    pub fn new(a: u32, b: u32, wait: Wait, gap_ns: u64) -> Result<OneWay, String> {
        let (r1, w1) = pipe()?;
        let (r2, w2) = pipe()?;
        if wait == Wait::Poll {
            set_nonblocking(r1.0);
        }
        if wait != Wait::Local {
            set_nonblocking(r2.0);
        }
        let stop = Arc::new(AtomicBool::new(false));
        let mut threads = Vec::new();
        let (tx, rx) = mpsc::channel::<Result<(), String>>();
        if wait == Wait::Busy {
            let (stop, tx) = (stop.clone(), tx.clone());
            threads.push(std::thread::spawn(move || {
                if let Err(e) = pin(b).and_then(|_| set_idle_policy()) {
                    let _ = tx.send(Err(e));
                    return;
                }
                let _ = tx.send(Ok(()));
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            }));
            rx.recv().map_err(|e| e.to_string())??;
        }
        threads.push(std::thread::spawn(move || {
            let (r1, w2) = (r1, w2);
            let ready = pin(b).and_then(|_| {
                if wait == Wait::Local {
                    set_idle_policy()
                } else {
                    Ok(())
                }
            });
            if let Err(e) = ready {
                let _ = tx.send(Err(e));
                return;
            }
            let _ = tx.send(Ok(()));
            let mut tok = [0u8; 8];
            while let Ok(true) = read_exact(r1.0, &mut tok) {
                let t1 = now_ns();
                let t0 = u64::from_ne_bytes(tok);
                if write_all(w2.0, &t1.saturating_sub(t0).to_ne_bytes()).is_err() {
                    break;
                }
            }
        }));
        rx.recv().map_err(|e| e.to_string())??;
        pin(a)?;
        Ok(OneWay {
            to: w1,
            back: r2,
            stop,
            threads,
            wait,
            gap_ns,
        })
    }

    pub fn batch(&self, samples: usize) -> Result<OneWayBatch, String> {
        let mut lat = Vec::with_capacity(samples);
        let mut wr = Vec::with_capacity(samples);
        let mut back = [0u8; 8];
        for _ in 0..samples {
            if self.wait == Wait::Local {
                std::thread::sleep(std::time::Duration::from_nanos(self.gap_ns));
            } else {
                let until = now_ns() + self.gap_ns;
                while now_ns() < until {
                    std::hint::spin_loop();
                }
            }
            let t0 = now_ns();
            write_all(self.to.0, &t0.to_ne_bytes())?;
            wr.push((now_ns() - t0) as f64);
            if !read_exact(self.back.0, &mut back)? {
                return Err("the reader ended".into());
            }
            lat.push(u64::from_ne_bytes(back) as f64);
        }
        Ok(OneWayBatch {
            latency_ns: super::measure::median(&lat),
            write_ns: super::measure::median(&wr),
        })
    }
}

impl Drop for OneWay {
    fn drop(&mut self) {
        let to = std::mem::replace(&mut self.to, Fd(-1));
        drop(to);
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// A write() that wakes nobody, timed call by call like `OneWay`'s (the
/// baseline its write times are held against).
pub fn lone_write(samples: usize, pause_ns: u64) -> Result<f64, String> {
    let (r, w) = pipe()?;
    let mut v = Vec::with_capacity(samples);
    let mut b = [0u8; 8];
    for _ in 0..samples {
        std::thread::sleep(std::time::Duration::from_nanos(pause_ns));
        let t0 = now_ns();
        write_all(w.0, &t0.to_ne_bytes())?;
        v.push((now_ns() - t0) as f64);
        read_exact(r.0, &mut b)?;
    }
    Ok(super::measure::median(&v))
}

#[repr(align(128))]
struct Line(AtomicU64);

/// A cache line bounced between CPUs `a` and `b`: nanoseconds per one-way
/// transfer.
pub struct LineBounce {
    line: Arc<Line>,
    go: Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

const STOP: u64 = u64::MAX;

/// A thread pinned to CPU `b` that takes every odd `turn`: it runs `act`
/// (false ends it), then hands the turn back by making it even, until the
/// turn is STOP. Returns once the thread is pinned, or why it could not be.
fn spawn_turn_taker(
    b: u32,
    turn: Arc<AtomicU64>,
    mut act: impl FnMut(u64) -> bool + Send + 'static,
) -> Result<std::thread::JoinHandle<()>, String> {
    let (tx, rx) = mpsc::channel();
    let thread = std::thread::spawn(move || {
        let r = pin(b);
        let ok = r.is_ok();
        let _ = tx.send(r);
        if !ok {
            return;
        }
        loop {
            let t = turn.load(Ordering::Acquire);
            if t == STOP {
                break;
            }
            if t % 2 == 1 {
                if !act(t) {
                    break;
                }
                turn.store(t + 1, Ordering::Release);
            } else {
                std::hint::spin_loop();
            }
        }
    });
    rx.recv().map_err(|e| e.to_string())??;
    Ok(thread)
}

impl LineBounce {
    pub fn new(a: u32, b: u32) -> Result<LineBounce, String> {
        let line = Arc::new(Line(AtomicU64::new(0)));
        let go = Arc::new(AtomicU64::new(0));
        let (tx, rx) = mpsc::channel();
        let (l, g) = (line.clone(), go.clone());
        let thread = std::thread::spawn(move || {
            let r = pin(b);
            let ok = r.is_ok();
            let _ = tx.send(r);
            if !ok {
                return;
            }
            // Answer every odd value with the next even one.
            loop {
                let v = l.0.load(Ordering::Acquire);
                if g.load(Ordering::Relaxed) == STOP {
                    break;
                }
                if v % 2 == 1 {
                    l.0.store(v + 1, Ordering::Release);
                } else {
                    std::hint::spin_loop();
                }
            }
        });
        rx.recv().map_err(|e| e.to_string())??;
        pin(a)?;
        Ok(LineBounce {
            line,
            go,
            thread: Some(thread),
        })
    }

    pub fn batch(&self, n: u64) -> Result<f64, String> {
        let t = Instant::now();
        let mut v = self.line.0.load(Ordering::Acquire);
        for _ in 0..n {
            self.line.0.store(v + 1, Ordering::Release);
            let want = v + 2;
            let mut spins = 0u64;
            loop {
                v = self.line.0.load(Ordering::Acquire);
                if v == want {
                    break;
                }
                std::hint::spin_loop();
                spins += 1;
                if spins & ((1 << 20) - 1) == 0 && t.elapsed().as_secs() > 2 {
                    return Err("the other CPU did not answer within two seconds".into());
                }
            }
        }
        Ok(per_op(t, 2 * n))
    }
}

impl Drop for LineBounce {
    fn drop(&mut self) {
        self.go.store(STOP, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A working set written on CPU `b`, then read on `a` (one load per line,
/// in a shuffled order): nanoseconds per line.
pub struct Refill {
    buf: Arc<Vec<AtomicU64>>,
    /// The lines in a fixed shuffled order, so no prefetcher hides a miss.
    order: Vec<u32>,
    turn: Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

const REFILL_KIB: usize = 256;

impl Refill {
    pub fn new(a: u32, b: u32) -> Result<Refill, String> {
        let words = REFILL_KIB * 1024 / 8;
        let buf: Arc<Vec<AtomicU64>> = Arc::new((0..words).map(|_| AtomicU64::new(0)).collect());
        let turn = Arc::new(AtomicU64::new(0));
        let bb = buf.clone();
        let thread = spawn_turn_taker(b, turn.clone(), move |t| {
            for w in bb.iter().step_by(8) {
                w.store(t, Ordering::Relaxed);
            }
            true
        })?;
        pin(a)?;
        let lines = (words / 8) as u32;
        let mut order: Vec<u32> = (0..lines).collect();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for i in (1..order.len()).rev() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            order.swap(i, (x % (i as u64 + 1)) as usize);
        }
        Ok(Refill {
            buf,
            order,
            turn,
            thread: Some(thread),
        })
    }

    pub fn batch(&self) -> Result<f64, String> {
        let t = self.turn.load(Ordering::Acquire);
        self.turn.store(t + 1, Ordering::Release);
        let start = Instant::now();
        while self.turn.load(Ordering::Acquire) != t + 2 {
            std::hint::spin_loop();
            if start.elapsed().as_secs() > 1 {
                return Err("the other CPU did not write within a second".into());
            }
        }
        let t0 = Instant::now();
        let mut sum = 0u64;
        for &line in &self.order {
            sum = sum.wrapping_add(self.buf[line as usize * 8].load(Ordering::Relaxed));
        }
        let lines = self.order.len();
        std::hint::black_box(sum);
        Ok(per_op(t0, lines as u64))
    }
}

impl Drop for Refill {
    fn drop(&mut self) {
        self.turn.store(STOP, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// memcpy bandwidth in GB/s of one thread per CPU in `cpus`, each copying
/// its own `mib` MiB buffer (first touched on its own CPU).
pub fn copy_bandwidth(cpus: &[u32], kib: usize, reps: usize) -> Result<f64, String> {
    let barrier = Arc::new(std::sync::Barrier::new(cpus.len()));
    let handles: Vec<_> = cpus
        .iter()
        .map(|&c| {
            let barrier = barrier.clone();
            std::thread::spawn(move || -> Result<f64, String> {
                pin(c)?;
                let src = vec![1u8; kib * 1024];
                let mut dst = vec![0u8; kib * 1024];
                dst.copy_from_slice(&src);
                barrier.wait();
                let t = Instant::now();
                for _ in 0..reps {
                    dst.copy_from_slice(std::hint::black_box(&src));
                    std::hint::black_box(&mut dst);
                }
                Ok((kib * 1024 * reps) as f64 / t.elapsed().as_nanos() as f64)
            })
        })
        .collect();
    let mut total = 0.0;
    for h in handles {
        total += h
            .join()
            .map_err(|_| "a copy thread panicked".to_string())??;
    }
    Ok(total)
}

/// Integer work on each CPU of `cpus` at once: nanoseconds for the slowest.
pub fn compute(cpus: &[u32], iters: u64) -> Result<f64, String> {
    let handles: Vec<_> = cpus
        .iter()
        .map(|&c| {
            std::thread::spawn(move || -> Result<f64, String> {
                pin(c)?;
                let t = Instant::now();
                let mut x = 0x9e37_79b9_7f4a_7c15u64;
                for i in 0..iters {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x = x.wrapping_add(i);
                }
                std::hint::black_box(x);
                Ok(t.elapsed().as_nanos() as f64)
            })
        })
        .collect();
    let mut worst: f64 = 0.0;
    for h in handles {
        worst = worst.max(
            h.join()
                .map_err(|_| "a compute thread panicked".to_string())??,
        );
    }
    Ok(worst)
}

/// A read() of 8 bytes that another thread wrote just before, timed call
/// by call: on CPU `a`, the writer on `b` (or `a` itself: the baseline).
pub struct ReadAfter {
    r: Fd,
    w: Option<Fd>,
    turn: Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ReadAfter {
    pub fn new(a: u32, b: Option<u32>) -> Result<ReadAfter, String> {
        let (r, w) = pipe()?;
        let turn = Arc::new(AtomicU64::new(0));
        let (mut wkeep, mut thread) = (Some(w), None);
        if let Some(b) = b {
            let w = wkeep.take().expect("set");
            thread = Some(spawn_turn_taker(b, turn.clone(), move |t| {
                // The whole `Fd` moves in (not only its number), so the
                // write end stays open while the thread uses it.
                let fd = &w;
                write_all(fd.0, &t.to_ne_bytes()).is_ok()
            })?);
        }
        pin(a)?;
        Ok(ReadAfter {
            r,
            w: wkeep,
            turn,
            thread,
        })
    }

    pub fn batch(&self, samples: usize) -> Result<f64, String> {
        let mut v = Vec::with_capacity(samples);
        let mut buf = [0u8; 8];
        for _ in 0..samples {
            match &self.w {
                Some(w) => write_all(w.0, &buf)?,
                None => {
                    let t = self.turn.load(Ordering::Acquire);
                    self.turn.store(t + 1, Ordering::Release);
                    let start = Instant::now();
                    while self.turn.load(Ordering::Acquire) != t + 2 {
                        std::hint::spin_loop();
                        if start.elapsed().as_secs() > 1 {
                            return Err("the other CPU did not write within a second".into());
                        }
                    }
                }
            }
            let t0 = now_ns();
            read_exact(self.r.0, &mut buf)?;
            v.push((now_ns() - t0) as f64);
        }
        Ok(super::measure::median(&v))
    }
}

impl Drop for ReadAfter {
    fn drop(&mut self) {
        self.turn.store(STOP, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

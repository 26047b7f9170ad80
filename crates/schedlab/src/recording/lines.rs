//! One line of a scheduler trace as text: `perf script` (its default
//! fields, or with `-F comm,pid,tid,cpu,time,event,trace`), ftrace's own
//! `trace` file, and `trace-cmd report -R` (raw fields). Each prints a
//! header (the task running where the event fired, its CPU, the time) and
//! the event's fields as `key=value`; a comm may hold spaces, so a field's
//! value runs to the next known key, not to the next space.

use std::fmt;

/// The task in whose context an event fired (the CPU's current task).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Context {
    pub comm: String,
    /// The thread id (0: the CPU's idle task, or a thread the tracer
    /// could not name).
    pub tid: u32,
    /// The process id, when the trace prints it (`pid/tid`).
    pub pid: Option<u32>,
    /// ftrace's flags say the event fired in a hard or soft interrupt.
    pub in_irq: bool,
}

/// How a task left the CPU at a switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Left {
    /// Still runnable: preempted (`R`, `R+`).
    Preempted,
    /// Asleep (`S`, `D`, `I`, ...).
    Slept,
    /// Exiting (`X`, `Z`).
    Exited,
}

/// A task named in an event's fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    pub comm: String,
    pub tid: u32,
    pub prio: Option<i32>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    Switch {
        prev: Named,
        left: Left,
        next: Named,
    },
    /// sched_waking (in the waker's context) or sched_wakeup (`waking`
    /// false; may fire on the target).
    Wake {
        task: Named,
        waking: bool,
    },
    WakeNew {
        task: Named,
    },
    Migrate {
        task: Named,
        from: usize,
        to: usize,
    },
    Fork {
        parent: Named,
        child: Named,
    },
    Exit {
        task: Named,
    },
    /// Another event: counted, not used.
    Other(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub context: Context,
    pub cpu: usize,
    pub time_ns: u64,
    pub event: Event,
}

/// What a line is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    Event(Line),
    /// ftrace's `CPU:N [LOST M EVENTS]`.
    Lost {
        cpu: usize,
        events: u64,
    },
    /// A comment, a header or a blank line.
    Blank,
}

/// Why a line could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineError(pub String);

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn bad(msg: impl Into<String>) -> LineError {
    LineError(msg.into())
}

/// Reads one line.
pub fn parse(line: &str) -> Result<Parsed, LineError> {
    let text = line.trim_end();
    let trimmed = text.trim_start();
    if trimmed.is_empty() || trimmed.starts_with('#') {
        return Ok(Parsed::Blank);
    }
    if let Some(lost) = lost_events(trimmed) {
        return Ok(lost);
    }
    // The CPU in brackets: the first `[digits]` of the line.
    let Some((open, close, cpu)) = cpu_bracket(text) else {
        return Ok(Parsed::Blank);
    };
    let context = context(&text[..open])?;
    let rest = &text[close + 1..];
    // Then, perhaps, ftrace's flags; the time, ending with ':'.
    let mut in_irq = false;
    let mut at = 0;
    let time_ns = loop {
        let word_start = at + rest[at..].len() - rest[at..].trim_start().len();
        if word_start >= rest.len() {
            return Err(bad("no time after the CPU"));
        }
        let word_end = rest[word_start..]
            .find(char::is_whitespace)
            .map_or(rest.len(), |i| word_start + i);
        let w = &rest[word_start..word_end];
        at = word_end;
        if let Some(t) = w.strip_suffix(':') {
            break parse_time(t)?;
        }
        // ftrace's irq-info flags (d..3., dNh2., ...): h or s in the third place.
        let flags = w.as_bytes();
        if flags.len() >= 3 && matches!(flags[2], b'h' | b's' | b'H') {
            in_irq = true;
        }
    };
    // The event's name: `sched:sched_switch:` (perf) or `sched_switch:`.
    let body = rest[at..].trim_start();
    let (name, fields) = match body.find(": ") {
        Some(i) => (&body[..i], body[i + 2..].trim()),
        None => match body.strip_suffix(':') {
            Some(n) => (n, ""),
            None => return Err(bad("no event name after the time")),
        },
    };
    let name = name.trim();
    let name = name.strip_prefix("sched:").unwrap_or(name);
    let event = event(name, fields)?;
    Ok(Parsed::Event(Line {
        context: Context { in_irq, ..context },
        cpu,
        time_ns,
        event,
    }))
}

fn lost_events(s: &str) -> Option<Parsed> {
    // CPU:1 [LOST 123 EVENTS]
    let s = s.strip_prefix("CPU:")?;
    let (cpu, rest) = s.split_once(' ')?;
    let n = rest.strip_prefix("[LOST ")?.strip_suffix(" EVENTS]")?;
    Some(Parsed::Lost {
        cpu: cpu.parse().ok()?,
        events: n.parse().ok()?,
    })
}

fn cpu_bracket(s: &str) -> Option<(usize, usize, usize)> {
    let mut from = 0;
    while let Some(i) = s[from..].find('[') {
        let open = from + i;
        let close = open + s[open..].find(']')?;
        let inside = &s[open + 1..close];
        if !inside.is_empty() && inside.bytes().all(|b| b.is_ascii_digit()) {
            return Some((open, close, inside.parse().ok()?));
        }
        from = close + 1;
    }
    None
}

/// `comm tid`, `comm pid/tid` (perf) or `comm-tid` (ftrace, trace-cmd),
/// perhaps followed by ftrace's `(tgid)`.
fn context(s: &str) -> Result<Context, LineError> {
    let mut s = s.trim();
    if s.ends_with(')') {
        if let Some(i) = s.rfind('(') {
            s = s[..i].trim_end();
        }
    }
    // perf's `:-1 -1/-1`: a thread it could not name (gone by then); the
    // event's own fields still say what happened.
    if s.ends_with(" -1/-1") || s.ends_with(" -1") {
        return Ok(Context {
            comm: String::new(),
            tid: 0,
            pid: None,
            in_irq: false,
        });
    }
    let (comm, id) = match s.rfind(char::is_whitespace) {
        Some(i) if is_id(&s[i + 1..]) => (s[..i].trim(), &s[i + 1..]),
        _ => match s.rfind('-') {
            Some(i) if is_id(&s[i + 1..]) => (&s[..i], &s[i + 1..]),
            _ => return Err(bad(format!("no task id before the CPU in {s:?}"))),
        },
    };
    let (pid, tid) = match id.split_once('/') {
        Some((p, t)) => (Some(number(p, "pid")?), number(t, "tid")?),
        None => (None, number(id, "tid")?),
    };
    Ok(Context {
        comm: comm.to_string(),
        tid,
        pid,
        in_irq: false,
    })
}

fn is_id(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit() || b == b'/')
}

fn number<T: std::str::FromStr>(s: &str, what: &str) -> Result<T, LineError> {
    s.trim()
        .parse()
        .map_err(|_| bad(format!("{what} {s:?} is not a number")))
}

/// Seconds with a fraction (`15089.848717`, or nine digits with `--ns`).
fn parse_time(t: &str) -> Result<u64, LineError> {
    let (secs, frac) = t.split_once('.').unwrap_or((t, ""));
    let secs: u64 = number(secs, "time")?;
    if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad(format!(
            "time {t:?} is not seconds with up to 9 decimals"
        )));
    }
    let frac_ns: u64 = if frac.is_empty() {
        0
    } else {
        number::<u64>(frac, "time")? * 10u64.pow(9 - frac.len() as u32)
    };
    secs.checked_mul(1_000_000_000)
        .and_then(|n| n.checked_add(frac_ns))
        .ok_or_else(|| bad(format!("time {t:?} is too large")))
}

/// The values of `keys` in `fields`: a comm runs to the next key's
/// ` key=` (it may hold spaces), anything else is one word; a key that is
/// absent is None.
fn values<'a, const N: usize>(fields: &'a str, keys: [&str; N]) -> [Option<&'a str>; N] {
    let mut starts = [None; N];
    let bytes = fields.as_bytes();
    for (i, k) in keys.iter().enumerate() {
        // `k=` at the start or after a space (no allocation: a line is hot).
        let mut from = 0;
        while let Some(j) = fields[from..].find(k) {
            let at = from + j;
            let end = at + k.len();
            if (at == 0 || bytes[at - 1] == b' ') && bytes.get(end) == Some(&b'=') {
                starts[i] = Some((at, end + 1));
                break;
            }
            from = end;
        }
    }
    let mut out = [None; N];
    for i in 0..N {
        let Some((_, v)) = starts[i] else { continue };
        let end = starts
            .iter()
            .flatten()
            .map(|&(k, _)| k)
            .filter(|&k| k > v)
            .min()
            .unwrap_or(fields.len());
        let mut value = fields[v..end].trim();
        if !keys[i].ends_with("comm") {
            // Numbers and states are one word (unknown keys may follow).
            value = value.split_whitespace().next().unwrap_or("");
        }
        // perf's `==>` between a switch's two halves.
        value = value.strip_suffix("==>").unwrap_or(value).trim();
        out[i] = Some(value);
    }
    out
}

fn need<'a>(v: Option<&'a str>, event: &str, key: &str) -> Result<&'a str, LineError> {
    v.ok_or_else(|| bad(format!("{event} without {key}=")))
}

fn named(
    event: &str,
    comm: Option<&str>,
    pid: Option<&str>,
    prio: Option<&str>,
    keys: (&str, &str),
) -> Result<Named, LineError> {
    Ok(Named {
        comm: need(comm, event, keys.0)?.to_string(),
        tid: number(need(pid, event, keys.1)?, keys.1)?,
        prio: prio.map(|p| number(p, "prio")).transpose()?,
    })
}

fn event(name: &str, fields: &str) -> Result<Event, LineError> {
    let e = name;
    Ok(match name {
        "sched_switch" => {
            let [pc, pp, ppr, ps, nc, np, npr] = values(
                fields,
                [
                    "prev_comm",
                    "prev_pid",
                    "prev_prio",
                    "prev_state",
                    "next_comm",
                    "next_pid",
                    "next_prio",
                ],
            );
            Event::Switch {
                prev: named(e, pc, pp, ppr, ("prev_comm", "prev_pid"))?,
                left: left(need(ps, e, "prev_state")?)?,
                next: named(e, nc, np, npr, ("next_comm", "next_pid"))?,
            }
        }
        "sched_waking" | "sched_wakeup" | "sched_wakeup_new" => {
            let [c, p, pr] = values(fields, ["comm", "pid", "prio"]);
            let task = named(e, c, p, pr, ("comm", "pid"))?;
            match name {
                "sched_wakeup_new" => Event::WakeNew { task },
                _ => Event::Wake {
                    task,
                    waking: name == "sched_waking",
                },
            }
        }
        "sched_migrate_task" => {
            let [c, p, pr, from, to] =
                values(fields, ["comm", "pid", "prio", "orig_cpu", "dest_cpu"]);
            Event::Migrate {
                task: named(e, c, p, pr, ("comm", "pid"))?,
                from: number(need(from, e, "orig_cpu")?, "orig_cpu")?,
                to: number(need(to, e, "dest_cpu")?, "dest_cpu")?,
            }
        }
        "sched_process_fork" => {
            let [c, p, cc, cp] = values(fields, ["comm", "pid", "child_comm", "child_pid"]);
            Event::Fork {
                parent: named(e, c, p, None, ("comm", "pid"))?,
                child: named(e, cc, cp, None, ("child_comm", "child_pid"))?,
            }
        }
        "sched_process_exit" => {
            let [c, p, pr] = values(fields, ["comm", "pid", "prio"]);
            Event::Exit {
                task: named(e, c, p, pr, ("comm", "pid"))?,
            }
        }
        other => Event::Other(other.to_string()),
    })
}

/// A switch's prev_state: letters (`R`, `R+`, `S`, `D|W`, ...) as perf and
/// ftrace print them, or trace-cmd -R's number (0 runnable; a lone bit at
/// or above 0x100 is the preemption mark; 0x10 and 0x20 are dead and zombie).
fn left(state: &str) -> Result<Left, LineError> {
    let s = state.trim();
    if let Ok(n) = s.parse::<u64>() {
        return Ok(if n == 0 || (n >= 0x100 && n.is_power_of_two()) {
            Left::Preempted
        } else if n & 0x30 != 0 && n < 0x80 {
            Left::Exited
        } else {
            Left::Slept
        });
    }
    match s.chars().next() {
        Some('R') => Ok(Left::Preempted),
        Some('X' | 'Z') => Ok(Left::Exited),
        Some(c) if c.is_ascii_alphabetic() => Ok(Left::Slept),
        _ => Err(bad(format!("prev_state {s:?} is not a task state"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(line: &str) -> Line {
        match parse(line).unwrap() {
            Parsed::Event(l) => l,
            p => panic!("{p:?}"),
        }
    }

    #[test]
    fn perf_script_switch_with_a_spaced_comm() {
        let l = ev("     Web Content 29385 [003] 14828.921520:       sched:sched_switch: prev_comm=Web Content prev_pid=29385 prev_prio=120 prev_state=R+ ==> next_comm=kworker/3:1 next_pid=18 next_prio=120");
        assert_eq!(l.context.comm, "Web Content");
        assert_eq!((l.context.tid, l.cpu), (29385, 3));
        assert_eq!(l.time_ns, 14_828_921_520_000);
        let Event::Switch { prev, left, next } = l.event else {
            panic!()
        };
        assert_eq!(
            (prev.comm.as_str(), prev.tid, left),
            ("Web Content", 29385, Left::Preempted)
        );
        assert_eq!(
            (next.comm.as_str(), next.tid, next.prio),
            ("kworker/3:1", 18, Some(120))
        );
    }

    #[test]
    fn perf_script_with_pid_and_tid_and_nanoseconds() {
        let l = ev("  hackbench 31414/31420 [001] 15089.850476123: sched:sched_waking: comm=hackbench pid=31416 prio=120 target_cpu=001");
        assert_eq!((l.context.pid, l.context.tid), (Some(31414), 31420));
        assert_eq!(l.time_ns, 15_089_850_476_123);
        assert!(matches!(l.event, Event::Wake { waking: true, ref task } if task.tid == 31416));
    }

    #[test]
    fn ftrace_text_with_flags_and_irq_context() {
        let l = ev("          <idle>-0       [001] d.h3.  1234.500000: sched_wakeup: comm=bash pid=1977 prio=120 target_cpu=001");
        assert_eq!((l.context.comm.as_str(), l.context.tid), ("<idle>", 0));
        assert!(l.context.in_irq);
        assert!(matches!(l.event, Event::Wake { waking: false, .. }));
        let l = ev("   kworker/u4:2-1234    (   1234) [000] d..2.  10.000001: sched_switch: prev_comm=kworker/u4:2 prev_pid=1234 prev_prio=120 prev_state=I ==> next_comm=swapper/0 next_pid=0 next_prio=120");
        assert_eq!(l.context.comm, "kworker/u4:2");
        assert!(matches!(
            l.event,
            Event::Switch {
                left: Left::Slept,
                ..
            }
        ));
    }

    #[test]
    fn trace_cmd_raw_states_are_numbers() {
        let l = ev("bash-1977  [000]  5.000000: sched_switch: prev_comm=bash prev_pid=1977 prev_prio=120 prev_state=1 next_comm=swapper/0 next_pid=0 next_prio=120");
        assert!(matches!(
            l.event,
            Event::Switch {
                left: Left::Slept,
                ..
            }
        ));
        assert_eq!(left("0").unwrap(), Left::Preempted);
        assert_eq!(left("256").unwrap(), Left::Preempted);
        assert_eq!(left("32").unwrap(), Left::Exited);
        assert_eq!(left("Z").unwrap(), Left::Exited);
    }

    #[test]
    fn headers_comments_and_lost_events() {
        assert_eq!(parse("# tracer: nop").unwrap(), Parsed::Blank);
        assert_eq!(parse("").unwrap(), Parsed::Blank);
        assert_eq!(
            parse("CPU:1 [LOST 42 EVENTS]").unwrap(),
            Parsed::Lost { cpu: 1, events: 42 }
        );
    }

    #[test]
    fn bad_fields_say_what_is_wrong() {
        let e = parse("x 1 [000] 1.0: sched:sched_switch: prev_comm=x prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=y next_prio=120").unwrap_err();
        assert!(e.0.contains("next_pid"), "{e}");
        let e = parse("x 1 [000] 1.0: sched:sched_waking: comm=y pid=abc prio=120").unwrap_err();
        assert!(e.0.contains("abc"), "{e}");
        let e = parse("x 1 [000] one: sched:sched_waking: comm=y pid=1").unwrap_err();
        assert!(e.0.contains("one"), "{e}");
    }
}

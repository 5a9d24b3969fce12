//! The lines of a tracefs instance's `trace_pipe`, in the kernel's text format, parsed without
//! allocating (the reader thread parses tens of thousands of lines a second). Each event's body
//! is matched against its print format as a template, so a task name (up to 15 bytes, spaces and
//! `=` included) cannot fake the fields that follow it.

pub use crate::loads::sim::{Marker, MARKER_TAG};

/// The longest comm the kernel prints (TASK_COMM_LEN − 1), with room for a lossily decoded
/// byte or two.
pub const COMM_MAX: usize = 24;

/// A short name kept inline: a task's comm, an IRQ's name (cut to its first 31 bytes).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Name {
    bytes: [u8; 31],
    len: u8,
}

impl Name {
    pub fn new(s: &str) -> Name {
        let mut end = s.len().min(31);
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        let mut bytes = [0u8; 31];
        bytes[..end].copy_from_slice(&s.as_bytes()[..end]);
        Name {
            bytes,
            len: end as u8,
        }
    }

    pub fn as_str(&self) -> &str {
        // Cut at a char boundary from a &str: always UTF-8.
        std::str::from_utf8(&self.bytes[..self.len as usize]).unwrap_or("")
    }
}

impl std::fmt::Debug for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

/// Reads a marker line's body (see [`Marker`]).
fn parse_marker(body: &str) -> Option<Marker> {
    let mut f = [""; 8];
    let template = [
        Tok::Lit(MARKER_TAG),
        Tok::Lit(" seq="),
        Tok::Int,
        Tok::Lit(" deadline="),
        Tok::Int,
        Tok::Lit(" fired="),
        Tok::Int,
        Tok::Lit(" ran="),
        Tok::Int,
        Tok::Lit(" tk="),
        Tok::Int,
    ];
    matches(body.trim_end(), &template, &mut f, 0)?;
    Some(Marker {
        seq: f[0].parse().ok()?,
        deadline_ns: f[1].parse().ok()?,
        fired_ns: f[2].parse().ok()?,
        ran_ns: f[3].parse().ok()?,
        timekeeper: f[4].parse().ok()?,
    })
}

/// One event the explanation reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The CPU switched from `prev` to `next`; `prev_runnable`: it was preempted, not asleep.
    Switch {
        prev_pid: i32,
        prev_runnable: bool,
        next_pid: i32,
        next_comm: Name,
        next_prio: i32,
    },
    /// A task was woken (sched_waking: the moment of the wake-up call) to run on `target_cpu`.
    Waking {
        pid: i32,
        target_cpu: u32,
    },
    /// The woken task was put on `target_cpu`'s run queue (sched_wakeup).
    Wakeup {
        pid: i32,
        target_cpu: u32,
    },
    Migrate {
        pid: i32,
        orig_cpu: u32,
        dest_cpu: u32,
    },
    IrqEntry {
        irq: i32,
        name: Name,
    },
    IrqExit {
        irq: i32,
    },
    SoftirqEntry {
        vec: u32,
    },
    SoftirqExit {
        vec: u32,
    },
    /// hostbench's own line, written by the task with thread id `Event::pid`.
    Marker(Marker),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    pub ts_ns: u64,
    pub cpu: u32,
    /// The task current on the CPU when the event was recorded (the writer, for a marker).
    pub pid: i32,
    pub comm: Name,
    pub kind: Kind,
}

/// Parses one line; None for a line of another event, a comment, or one cut short.
///
/// A line looks like this:
///
/// ```text
///           <idle>-0       [001] d..2.   812.345678: sched_switch: prev_comm=swapper/1 prev_pid=0 ...
/// ```
///
/// A field is not found by searching for its key: a comm takes the first length (at most
/// [`COMM_MAX`] bytes) after which the rest of the line still matches the template.
pub fn parse_line(line: &str) -> Option<Event> {
    let (comm, pid, cpu, ts_ns, event, body) = header(line)?;
    let mut f = [""; 8];
    let kind = match event {
        "sched_switch" => {
            matches(body, &SWITCH, &mut f, 0)?;
            Kind::Switch {
                prev_pid: f[1].parse().ok()?,
                prev_runnable: f[3].starts_with('R'),
                next_comm: Name::new(f[4]),
                next_pid: f[5].parse().ok()?,
                next_prio: f[6].parse().ok()?,
            }
        }
        "sched_waking" | "sched_wakeup" => {
            matches(body, &WAKING, &mut f, 0)?;
            let (pid, target_cpu) = (f[1].parse().ok()?, f[3].parse().ok()?);
            if event == "sched_waking" {
                Kind::Waking { pid, target_cpu }
            } else {
                Kind::Wakeup { pid, target_cpu }
            }
        }
        "sched_migrate_task" => {
            matches(body, &MIGRATE, &mut f, 0)?;
            Kind::Migrate {
                pid: f[1].parse().ok()?,
                orig_cpu: f[3].parse().ok()?,
                dest_cpu: f[4].parse().ok()?,
            }
        }
        "irq_handler_entry" => {
            matches(body, &IRQ_ENTRY, &mut f, 0)?;
            Kind::IrqEntry {
                irq: f[0].parse().ok()?,
                name: Name::new(f[1]),
            }
        }
        "irq_handler_exit" => {
            matches(body, &IRQ_EXIT, &mut f, 0)?;
            Kind::IrqExit {
                irq: f[0].parse().ok()?,
            }
        }
        "softirq_entry" | "softirq_exit" => {
            matches(body, &SOFTIRQ, &mut f, 0)?;
            let vec = f[0].parse().ok()?;
            if event == "softirq_entry" {
                Kind::SoftirqEntry { vec }
            } else {
                Kind::SoftirqExit { vec }
            }
        }
        "tracing_mark_write" => Kind::Marker(parse_marker(body)?),
        _ => return None,
    };
    Some(Event {
        ts_ns,
        cpu,
        pid,
        comm: Name::new(comm),
        kind,
    })
}

/// The kernel's name of a softirq vector.
pub fn softirq_name(vec: u32) -> &'static str {
    const NAMES: [&str; 10] = [
        "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER",
        "RCU",
    ];
    NAMES.get(vec as usize).copied().unwrap_or("softirq")
}

/// `COMM-PID [CPU] FLAGS SECONDS.FRACTION: EVENT: BODY` → (comm, pid, cpu, ns, event, body). The
/// header is looked for at each " [", the first place where all of it matches winning, so a
/// comm holding " [" does not move it.
type Header<'a> = (&'a str, i32, u32, u64, &'a str, &'a str);

fn header(line: &str) -> Option<Header<'_>> {
    let mut from = 0;
    while let Some(off) = line[from..].find(" [") {
        let at = from + off;
        if let Some(h) = header_at(line, at) {
            return Some(h);
        }
        from = at + 2;
    }
    None
}

fn header_at(line: &str, at: usize) -> Option<Header<'_>> {
    let rest = &line[at + 2..];
    let close = rest.find("] ")?;
    let cpu: u32 = digits(&rest[..close])?.parse().ok()?;
    let rest = &rest[close + 2..];
    // The flags (irqs-off, need-resched, hardirq/softirq, preempt depth, ...): one word.
    let flags_end = rest.find(' ')?;
    let rest = rest[flags_end..].trim_start();
    let colon = rest.find(": ")?;
    let ts_ns = timestamp_ns(&rest[..colon])?;
    let rest = &rest[colon + 2..];
    let colon = rest.find(": ")?;
    let event = &rest[..colon];
    if event.is_empty()
        || !event
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    {
        return None;
    }
    let body = &rest[colon + 2..];
    let (comm, pid) = task_of(&line[..at])?;
    let pid = pid.trim_end().parse().ok()?;
    Some((comm, pid, cpu, ts_ns, event, body))
}

/// The "comm-pid" before the CPU, less the thread group's "(tgid)" that the trace shows
/// after it where `options/record-tgid` is on (a global option: another tracer may have set
/// it; "(-------)" where the tgid is not known).
fn task_of(head: &str) -> Option<(&str, &str)> {
    let mut head = head.trim();
    if head.ends_with(')') {
        head = head[..head.rfind('(')?].trim_end();
    }
    head.rsplit_once('-')
}

fn digits(s: &str) -> Option<&str> {
    (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())).then_some(s)
}

/// "812.345678" (µs, the text format's usual) or "812.345678901" → ns.
fn timestamp_ns(s: &str) -> Option<u64> {
    let (secs, frac) = s.split_once('.')?;
    let secs: u64 = digits(secs)?.parse().ok()?;
    let frac_digits = digits(frac)?;
    if frac_digits.len() > 9 {
        return None;
    }
    let frac: u64 = frac_digits.parse().ok()?;
    Some(secs * 1_000_000_000 + frac * 10u64.pow(9 - frac_digits.len() as u32))
}

/// A piece of an event's print format.
#[derive(Clone, Copy)]
enum Tok {
    /// These exact bytes.
    Lit(&'static str),
    /// A task name: up to [`COMM_MAX`] bytes of anything (captured).
    Comm,
    /// A decimal number, perhaps negative (captured).
    Int,
    /// A run of bytes without a space (captured).
    Word,
    /// Everything to the end (captured).
    Rest,
}

/// sched_switch's print format.
const SWITCH: [Tok; 14] = [
    Tok::Lit("prev_comm="),
    Tok::Comm,
    Tok::Lit(" prev_pid="),
    Tok::Int,
    Tok::Lit(" prev_prio="),
    Tok::Int,
    Tok::Lit(" prev_state="),
    Tok::Word,
    Tok::Lit(" ==> next_comm="),
    Tok::Comm,
    Tok::Lit(" next_pid="),
    Tok::Int,
    Tok::Lit(" next_prio="),
    Tok::Int,
];

/// sched_waking's and sched_wakeup's print format.
const WAKING: [Tok; 8] = [
    Tok::Lit("comm="),
    Tok::Comm,
    Tok::Lit(" pid="),
    Tok::Int,
    Tok::Lit(" prio="),
    Tok::Int,
    Tok::Lit(" target_cpu="),
    Tok::Int,
];

/// sched_migrate_task's print format.
const MIGRATE: [Tok; 11] = [
    Tok::Lit("comm="),
    Tok::Comm,
    Tok::Lit(" pid="),
    Tok::Int,
    Tok::Lit(" prio="),
    Tok::Int,
    Tok::Lit(" orig_cpu="),
    Tok::Int,
    Tok::Lit(" dest_cpu="),
    Tok::Int,
    Tok::Rest,
];
/// irq_handler_entry's print format.
const IRQ_ENTRY: [Tok; 4] = [Tok::Lit("irq="), Tok::Int, Tok::Lit(" name="), Tok::Rest];
/// irq_handler_exit's print format.
const IRQ_EXIT: [Tok; 3] = [Tok::Lit("irq="), Tok::Int, Tok::Rest];
/// softirq_entry's and softirq_exit's print format.
const SOFTIRQ: [Tok; 3] = [Tok::Lit("vec="), Tok::Int, Tok::Rest];

/// Whether `s` matches `template` to its end; the captured pieces go into `out` from `n` on.
fn matches<'a>(s: &'a str, template: &[Tok], out: &mut [&'a str; 8], n: usize) -> Option<()> {
    let Some((tok, more)) = template.split_first() else {
        return s.is_empty().then_some(());
    };
    match *tok {
        Tok::Lit(lit) => matches(s.strip_prefix(lit)?, more, out, n),
        Tok::Int => {
            let neg = usize::from(s.starts_with('-'));
            let len = neg + s[neg..].bytes().take_while(u8::is_ascii_digit).count();
            if len == neg {
                return None;
            }
            *out.get_mut(n)? = &s[..len];
            matches(&s[len..], more, out, n + 1)
        }
        Tok::Word => {
            let len = s.find(' ').unwrap_or(s.len());
            *out.get_mut(n)? = &s[..len];
            matches(&s[len..], more, out, n + 1)
        }
        Tok::Rest => {
            *out.get_mut(n)? = s;
            matches("", more, out, n + 1)
        }
        Tok::Comm => {
            for len in 0..=COMM_MAX.min(s.len()) {
                if !s.is_char_boundary(len) {
                    continue;
                }
                if matches(&s[len..], more, out, n + 1).is_some() {
                    *out.get_mut(n)? = &s[..len];
                    return Some(());
                }
            }
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SWITCH: &str = "          <idle>-0       [001] d..2.   812.345678: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=hb-bench next_pid=4242 next_prio=120";

    /// A switch's prev pid, prev runnable, next pid, next comm and next prio.
    type SwitchFields = (i32, bool, i32, String, i32);

    /// A switch line's (cpu, current pid, ns) and its fields.
    fn switch(line: &str) -> ((u32, i32, u64), SwitchFields) {
        let e = parse_line(line).unwrap();
        let Kind::Switch {
            prev_pid,
            prev_runnable,
            next_pid,
            next_comm,
            next_prio,
        } = e.kind
        else {
            panic!("{e:?}")
        };
        (
            (e.cpu, e.pid, e.ts_ns),
            (
                prev_pid,
                prev_runnable,
                next_pid,
                next_comm.as_str().to_string(),
                next_prio,
            ),
        )
    }

    #[test]
    fn a_switch_line_is_read_whole() {
        assert_eq!(
            switch(SWITCH),
            (
                (1, 0, 812_345_678_000),
                (0, true, 4242, "hb-bench".to_string(), 120)
            )
        );
    }

    /// With `options/record-tgid` on (global: another tracer on the host may have set it),
    /// each line carries the thread group after the task: read past it, known or not.
    #[test]
    fn a_line_with_the_thread_group_is_read_as_one_without() {
        for tgid in ["(   4240)", "(-------)"] {
            let line = SWITCH.replacen("<idle>-0       ", &format!("<idle>-0       {tgid} "), 1);
            assert_eq!(switch(&line), switch(SWITCH), "{line}");
        }
    }

    #[test]
    fn a_comm_that_looks_like_fields_does_not_move_them() {
        // Tasks named to look like the rest of the line: " prev_pid=7 x", " next_pid=9", and
        // " [009] " before the real header.
        let line = "  x [009] y-77 [000] d..2.     5.000001: sched_switch: prev_comm= prev_pid=7 x prev_pid=77 prev_prio=100 prev_state=S ==> next_comm= next_pid=9 next_pid=31 next_prio=49";
        assert_eq!(
            switch(line),
            (
                (0, 77, 5_000_001_000),
                (77, false, 31, " next_pid=9".to_string(), 49)
            )
        );
    }

    #[test]
    fn wakeups_migrations_irqs_softirqs_and_markers_are_read() {
        let at = |body: &str| {
            parse_line(&format!(
                "   hb-timekeeper-11 [000] d..3.   10.000002: {body}"
            ))
            .map(|e| e.kind)
        };
        assert_eq!(
            at("sched_waking: comm=hb bench pid=12 prio=120 target_cpu=001"),
            Some(Kind::Waking {
                pid: 12,
                target_cpu: 1
            })
        );
        assert_eq!(
            at("sched_migrate_task: comm=x pid=12 prio=120 orig_cpu=1 dest_cpu=0"),
            Some(Kind::Migrate {
                pid: 12,
                orig_cpu: 1,
                dest_cpu: 0
            })
        );
        assert_eq!(
            at("irq_handler_entry: irq=11 name=virtio0-input.0"),
            Some(Kind::IrqEntry {
                irq: 11,
                name: Name::new("virtio0-input.0")
            })
        );
        assert_eq!(
            at("irq_handler_exit: irq=11 ret=handled"),
            Some(Kind::IrqExit { irq: 11 })
        );
        assert_eq!(
            at("softirq_entry: vec=1 [action=TIMER]"),
            Some(Kind::SoftirqEntry { vec: 1 })
        );
        let marker = Marker {
            seq: 3,
            deadline_ns: 10_000_000_000,
            fired_ns: 10_000_001_000,
            ran_ns: 10_000_009_000,
            timekeeper: 11,
        };
        let mut buf = [0u8; 128];
        let n = marker.format(&mut buf);
        let text = std::str::from_utf8(&buf[..n]).unwrap();
        assert!(text.ends_with('\n'));
        assert_eq!(
            at(&format!("tracing_mark_write: {text}")),
            Some(Kind::Marker(marker))
        );
        // Another event, a cut line, a comment: nothing.
        assert_eq!(at("sched_stat_runtime: comm=x pid=1 runtime=5"), None);
        assert_eq!(at("sched_waking: comm=x pid=12 prio="), None);
        assert_eq!(parse_line("# tracer: nop"), None);
    }

    #[test]
    fn nanosecond_timestamps_are_read_too() {
        let line = SWITCH.replace("812.345678:", "812.345678901:");
        assert_eq!(parse_line(&line).unwrap().ts_ns, 812_345_678_901);
    }
}

//! `--explain`: the kernel's scheduling trace of a pair, recorded into hostbench's own tracefs
//! instance and read while the pair runs, so that its worst samples can be explained after it.

pub mod explain;
pub mod parse;

use std::collections::VecDeque;
use std::fs::File;
use std::io::{ErrorKind, Read};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use explain::CpuState;
use parse::{Event, Kind, Marker};

use crate::model::explain::Explained;
use crate::platform::cleanup;
use crate::platform::clock::monotonic_ns;
use crate::platform::rusage::Usage;
use crate::platform::tracefs::{Instance, Setup};

/// Each CPU's ring buffer: a few MB, so a long pair cannot grow it.
pub const BUFFER_KB: u32 = 4096;
/// How much of the past the reader keeps: a window longer than this loses its start.
pub const RETAIN_NS: u64 = 1_000_000_000;
/// The most events the reader keeps (an event is at most 112 bytes: about 110 MB): a storm of
/// switches (Hack's thousands of threads) shortens the retention rather than growing without
/// bound.
const RETAIN_MAX: usize = 1_000_000;
/// How long after a marker the reader waits before taking its window: the per-CPU buffers are
/// merged by time as they are read, and another CPU's event of the window may come late.
const SETTLE_NS: u64 = 5_000_000;
/// Events kept from before the deadline, so the window's start is seen with its context.
const LEAD_NS: u64 = 1_000_000;
/// How often the reader reads the pipe: seldom, as its own wake-ups are a perturbation of the
/// host being measured (the kernel's ring holds seconds of events at these rates).
const READ_EVERY_MS: u64 = 100;

/// One sample's window, as the reader kept it.
#[derive(Debug, Clone)]
pub struct Window {
    pub marker: Marker,
    /// The bench task (the marker's writer).
    pub task_pid: i32,
    /// Each CPU's state at the window's start (index: CPU number).
    pub initial: Vec<CpuState>,
    /// The window's events, in time order.
    pub events: Vec<Event>,
    /// The scheduling policy of each task seen in the window, read from /proc when kept.
    pub policies: Vec<(i32, String)>,
}

/// A pair's trace being recorded.
///
/// The bench task writes a marker line after each sample (its deadline, when its timekeeper's
/// timer fired, when it ran: CLOCK_MONOTONIC, the instance's trace clock). A reader thread in
/// the coordinator reads the instance's `trace_pipe` as it fills, keeps the last
/// [`RETAIN_NS`] of events, and when a marker shows one of the N longest windows so far, copies
/// that window's events (and each CPU's state at its start) aside. Memory stays bounded by the
/// retention and N windows however long the pair runs; the kernel's ring is bounded by
/// [`BUFFER_KB`] a CPU. After the pair, each kept window is explained (`explain`).
///
/// No crate reads the kernel's trace without the trace-cmd C libraries, so the text format is
/// parsed here (`parse`); it needs no clock matching and no event-format files.
pub struct Recorder {
    instance: Instance,
    stop: Arc<AtomicBool>,
    reader: Option<std::thread::JoinHandle<Capture>>,
    worst: u32,
}

/// What the reader hands back.
struct Capture {
    windows: Vec<Window>,
    events: u64,
    cpu_ns: u64,
}

impl Recorder {
    /// Starts tracing `cpus` (empty: all) and reading, to keep the `worst` longest windows; Err
    /// is the one-line reason it cannot.
    pub fn start(cpus: &[usize], worst: u32) -> Result<Recorder, String> {
        let instance = Instance::start(&Setup {
            cpus,
            buffer_kb: BUFFER_KB,
        })?;
        let pipe = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(instance.pipe())
            .map_err(|e| format!("opening {}: {e}", instance.pipe().display()))?;
        cleanup::add_trace_fd(pipe.as_raw_fd());
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let reader = std::thread::Builder::new()
            .name("hb-trace".into())
            .spawn(move || read(pipe, worst as usize, &flag))
            .map_err(|e| format!("starting the trace reader: {e}"))?;
        Ok(Recorder {
            instance,
            stop,
            reader: Some(reader),
            worst,
        })
    }

    /// The instance's marker file, for the bench worker.
    pub fn marker(&self) -> std::path::PathBuf {
        self.instance.marker()
    }

    /// Stops reading (after what the pipe still holds), explains the kept windows, removes the
    /// instance.
    pub fn finish(mut self) -> Explained {
        let started = monotonic_ns();
        // Nothing after the pair is wanted, and a busy host must not keep the last read going.
        self.instance.pause();
        self.stop.store(true, Ordering::Release);
        let capture = self
            .reader
            .take()
            .and_then(|r| r.join().ok())
            .unwrap_or(Capture {
                windows: Vec::new(),
                events: 0,
                cpu_ns: 0,
            });
        let overruns = self.instance.overruns();
        let mut samples: Vec<_> = capture.windows.iter().map(explain::explain).collect();
        samples.sort_by(|a, b| b.window_ns.cmp(&a.window_ns).then(a.seq.cmp(&b.seq)));
        Explained {
            requested: self.worst,
            samples,
            events: capture.events,
            overruns,
            reader_cpu_ns: capture.cpu_ns,
            explain_ns: monotonic_ns() - started,
        }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        // Stopped without finish (an error, a stop): the reader ends, its pipe closes, and the
        // instance can be removed.
        self.stop.store(true, Ordering::Release);
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
    }
}

/// The reader thread: reads the pipe every [`READ_EVERY_MS`] until told to stop, then once
/// more to its end.
fn read(mut pipe: File, worst: usize, stop: &AtomicBool) -> Capture {
    let before = Usage::thread();
    let mut st = Reader::new(worst);
    let mut buf = vec![0u8; 1 << 16];
    let mut partial: Vec<u8> = Vec::new();
    loop {
        let stopping = stop.load(Ordering::Acquire);
        loop {
            match pipe.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    partial.extend_from_slice(&buf[..n]);
                    let complete = partial
                        .iter()
                        .rposition(|&b| b == b'\n')
                        .map_or(0, |i| i + 1);
                    for line in partial[..complete].split(|&b| b == b'\n') {
                        if let Some(e) = parse::parse_line(&String::from_utf8_lossy(line)) {
                            st.push(e);
                        }
                    }
                    partial.drain(..complete);
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
        }
        if stopping {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(READ_EVERY_MS));
    }
    st.settle(u64::MAX);
    cleanup::remove_trace_fd(pipe.as_raw_fd());
    drop(pipe);
    Capture {
        events: st.count,
        windows: st.top,
        cpu_ns: Usage::thread().since(&before).cpu_ns(),
    }
}

/// The reader's state: the retained events, each CPU's state before the oldest of them, the
/// markers not yet settled, and the longest windows so far.
struct Reader {
    worst: usize,
    retained: VecDeque<Event>,
    base: Vec<CpuState>,
    pending: VecDeque<(Event, Marker)>,
    top: Vec<Window>,
    count: u64,
}

impl Reader {
    fn new(worst: usize) -> Reader {
        Reader {
            worst,
            retained: VecDeque::new(),
            base: Vec::new(),
            pending: VecDeque::new(),
            top: Vec::new(),
            count: 0,
        }
    }

    fn push(&mut self, e: Event) {
        self.count += 1;
        let newest = e.ts_ns;
        if let Kind::Marker(m) = e.kind {
            self.pending.push_back((e, m));
        }
        self.retained.push_back(e);
        self.settle(newest);
        // Forget what is older than the retention, but not what a pending window needs.
        let keep_from = self
            .pending
            .front()
            .map_or(u64::MAX, |(_, m)| m.deadline_ns.saturating_sub(LEAD_NS))
            .min(newest.saturating_sub(RETAIN_NS));
        while self
            .retained
            .front()
            .is_some_and(|f| f.ts_ns < keep_from || self.retained.len() > RETAIN_MAX)
        {
            let f = self.retained.pop_front().expect("front exists");
            state_of(&mut self.base, f.cpu).apply(&f);
        }
    }

    /// Takes the windows of the markers at least [`SETTLE_NS`] older than `newest`.
    fn settle(&mut self, newest: u64) {
        while let Some(&(e, m)) = self.pending.front() {
            if e.ts_ns.saturating_add(SETTLE_NS) > newest {
                break;
            }
            self.pending.pop_front();
            self.consider(e.pid, m);
        }
    }

    /// Keeps the marker's window if it is among the `worst` longest so far.
    fn consider(&mut self, task_pid: i32, m: Marker) {
        let len = m.ran_ns.saturating_sub(m.deadline_ns);
        let shortest = self
            .top
            .iter()
            .enumerate()
            .min_by_key(|(_, w)| w.marker.ran_ns.saturating_sub(w.marker.deadline_ns));
        let replace = match shortest {
            _ if self.top.len() < self.worst => None,
            Some((i, w)) if len > w.marker.ran_ns.saturating_sub(w.marker.deadline_ns) => Some(i),
            _ => return,
        };
        let from = m.deadline_ns.saturating_sub(LEAD_NS);
        let to = m.ran_ns.saturating_add(SETTLE_NS);
        let mut initial = self.base.clone();
        let mut events = Vec::new();
        for e in &self.retained {
            if e.ts_ns < from {
                state_of(&mut initial, e.cpu).apply(e);
            } else if e.ts_ns <= to && !matches!(e.kind, Kind::Marker(_)) {
                events.push(*e);
            }
        }
        let mut pids: Vec<i32> = events
            .iter()
            .filter_map(|e| match e.kind {
                Kind::Switch { next_pid, .. } => Some(next_pid),
                _ => None,
            })
            .chain(events.iter().map(|e| e.pid))
            .chain(initial.iter().filter_map(|s| s.running.map(|r| r.pid)))
            .filter(|&p| p > 0)
            .collect();
        pids.sort_unstable();
        pids.dedup();
        let policies = pids
            .into_iter()
            .filter_map(|p| crate::platform::sched::policy_name_of(p).map(|n| (p, n.to_string())))
            .collect();
        let window = Window {
            marker: m,
            task_pid,
            initial,
            events,
            policies,
        };
        match replace {
            Some(i) => self.top[i] = window,
            None => self.top.push(window),
        }
    }
}

fn state_of(states: &mut Vec<CpuState>, cpu: u32) -> &mut CpuState {
    let i = cpu as usize;
    if states.len() <= i {
        states.resize(i + 1, CpuState::default());
    }
    &mut states[i]
}

#[cfg(test)]
mod tests {
    use super::parse::Name;
    use super::*;

    fn marker_event(ts_us: u64, seq: u64, deadline_us: u64, ran_us: u64) -> Event {
        Event {
            ts_ns: ts_us * 1000,
            cpu: 0,
            pid: 12,
            comm: Name::new("hb-bench"),
            kind: Kind::Marker(Marker {
                seq,
                deadline_ns: deadline_us * 1000,
                fired_ns: deadline_us * 1000,
                ran_ns: ran_us * 1000,
                timekeeper: 11,
            }),
        }
    }

    #[test]
    fn an_event_is_small_enough_for_the_retention_bound() {
        assert!(
            std::mem::size_of::<Event>() <= 112,
            "{}",
            std::mem::size_of::<Event>()
        );
    }

    #[test]
    fn the_reader_keeps_the_longest_windows_and_forgets_the_old_past() {
        let mut r = Reader::new(2);
        // Windows of 5, 50, 20 and 30 µs, a period of 100 ms apart, with an IRQ in each.
        for (k, len) in [5u64, 50, 20, 30].into_iter().enumerate() {
            let d = 1_000_000 + k as u64 * 100_000;
            r.push(Event {
                ts_ns: (d + 1) * 1000,
                cpu: 1,
                pid: 0,
                comm: Name::new("swapper/1"),
                kind: Kind::IrqEntry {
                    irq: 4,
                    name: Name::new("ttyS0"),
                },
            });
            r.push(marker_event(d + len + 1, k as u64, d, d + len));
        }
        r.settle(u64::MAX);
        let mut kept: Vec<u64> = r.top.iter().map(|w| w.marker.seq).collect();
        kept.sort_unstable();
        assert_eq!(kept, vec![1, 3]);
        // Each kept window holds its own IRQ and nothing of the others'.
        for w in &r.top {
            assert_eq!(w.events.len(), 1, "{w:?}");
            assert_eq!(w.task_pid, 12);
        }
        // Far past events are dropped, and their effect kept in the base state.
        r.push(marker_event(10_000_000, 9, 9_999_990, 9_999_995));
        assert!(r.retained.iter().all(|e| e.ts_ns >= 9_000_000_000));
        assert_eq!(r.count, 9);
    }
}

//! `--explain`: for a pair's worst samples, what the CPUs did between the deadline and the task
//! running, from the kernel's own scheduling trace of the same window.

use crate::text::Text;
use serde::{Deserialize, Serialize};

/// The explanations of one pair.
///
/// A sample's window, deadline → running, is cut in three phases at the instants the trace and
/// the task's own marker give: the timer (deadline → the timekeeper's timer fired), the hand-off
/// (fired → the task woken, `sched_waking`) and the wait (woken → the task switched in). Each
/// phase is spent on one CPU — the timekeeper's for the first two, the task's for the wait — and
/// every nanosecond of it is given to what that CPU was doing: an IRQ handler, a softirq, a
/// task, or idle. What no event covers (before the first event seen on that CPU) is
/// unaccounted, so the parts always add up to the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Explained {
    /// How many worst samples were asked for (`--explain N`).
    pub requested: u32,
    /// The worst samples by time from deadline to running, worst first.
    pub samples: Vec<ExplainedSample>,
    /// Trace events read over the pair, and those the kernel's ring dropped before they were
    /// read (a sample whose window lost events has unaccounted time).
    pub events: u64,
    pub overruns: u64,
    /// CPU time of the thread that read and sorted the trace, over the pair.
    pub reader_cpu_ns: u64,
    /// Time from the pair's end to its explanations: the reader stopped and drained, the kept
    /// windows explained.
    pub explain_ns: u64,
}

/// One explained sample. Times are ns from the sample's deadline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExplainedSample {
    /// The sample's number in the pair (its period).
    pub seq: u64,
    /// The deadline, CLOCK_MONOTONIC ns (the trace's clock).
    pub deadline_mono_ns: u64,
    /// Deadline → the task running: the window explained.
    pub window_ns: u64,
    /// Deadline → the timekeeper's timer fired (as the timekeeper read the clock).
    pub fired_ns: u64,
    /// Deadline → the task woken (its `sched_waking`); None if the trace did not show it.
    pub woken_ns: Option<u64>,
    /// The task and its timekeeper.
    pub task_pid: i32,
    pub timekeeper_pid: i32,
    /// The CPU the wake-up chose for the task, and the one it ran on.
    pub woken_on_cpu: Option<u32>,
    pub ran_on_cpu: Option<u32>,
    /// Where the time went, by phase, CPU and culprit, largest first within a phase.
    pub parts: Vec<Part>,
    /// Part of the window no event covers.
    pub unaccounted_ns: u64,
    /// Every CPU's activity over the window (for the timeline drawing).
    pub segments: Vec<Segment>,
}

/// The three phases of a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Phase {
    /// Deadline → timer fired: the kernel's timer, and what ran before the timekeeper did.
    Timer,
    /// Timer fired → task woken: the timekeeper's own work.
    HandOff,
    /// Woken → running: runnable, waiting for its CPU.
    Wait,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Timer => "timer",
            Phase::HandOff => "hand-off",
            Phase::Wait => "waiting to run",
        }
    }
}

/// What a CPU was doing.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Culprit {
    Irq {
        irq: i32,
        name: Text,
    },
    Softirq {
        name: Text,
    },
    Task {
        pid: i32,
        comm: Text,
        /// The kernel's priority as the trace gives it: 0-99 real-time (99 − rt priority),
        /// 100-139 normal (120 + nice), −1 deadline; None when only an event's header named
        /// the task (it carries no priority).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        prio: Option<i32>,
        /// The policy, read from /proc while the pair ran; None if the task was gone.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        policy: Option<Text>,
    },
    Idle,
    /// No event showed what the CPU was doing.
    Unknown,
}

impl Culprit {
    /// "IRQ 11 virtio0", "softirq TIMER", "burn [1234] SCHED_OTHER nice 0", "idle". Names come
    /// from the trace as the tasks set them: held as `Text`, escaped where it is shown.
    pub fn describe(&self) -> Text {
        Text::from(match self {
            Culprit::Irq { irq, name } => format!("IRQ {irq} {}", name.raw()),
            Culprit::Softirq { name } => format!("softirq {}", name.raw()),
            Culprit::Task {
                pid,
                comm,
                prio,
                policy,
            } => {
                let level = match *prio {
                    None => String::new(),
                    Some(p) if p < 0 => " deadline".to_string(),
                    Some(p) if p < 100 => format!(" rt priority {}", 99 - p),
                    Some(p) => format!(" nice {}", p - 120),
                };
                match policy {
                    Some(policy) => format!("{} [{pid}] {}{level}", comm.raw(), policy.raw()),
                    None => format!("{} [{pid}]{level}", comm.raw()),
                }
            }
            Culprit::Idle => "idle".into(),
            Culprit::Unknown => "unknown".into(),
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Part {
    pub phase: Phase,
    pub cpu: u32,
    pub culprit: Culprit,
    pub ns: u64,
}

/// A stretch of one CPU's time, ns from the deadline (negative: before it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Segment {
    pub cpu: u32,
    pub start_ns: i64,
    pub end_ns: i64,
    pub culprit: Culprit,
}

impl ExplainedSample {
    /// The parts' total: the window, less what is unaccounted.
    pub fn accounted_ns(&self) -> u64 {
        self.parts.iter().map(|p| p.ns).sum()
    }

    /// The part that held the window longest (a task, IRQ, softirq or idle time on one CPU, in
    /// one phase).
    pub fn main_culprit(&self) -> Option<&Part> {
        self.parts.iter().max_by_key(|p| p.ns)
    }
}

//! `--explain`'s lines for one explained sample, shared by the suites that trace: a line with
//! the window's instants, then a line for each phase with what held the CPU in it, like rtla
//! timerlat's auto-analysis (task names escaped: any task may name itself anything).

use std::fmt::Write;

use crate::model::explain::{Explained, ExplainedSample, Part, Phase};
use crate::units::ms_text;

/// How a suite names a sample and the instants of its window.
pub struct Words {
    /// The sample's name before its number ("sample", "wakeup").
    pub sample: &'static str,
    /// The task that ran ("task", "worker").
    pub task: &'static str,
    /// Whether a timer stands between the window's start and the waker (interactive's
    /// timekeeper); a wakeup's post is made by the waker itself.
    pub timer: bool,
}

/// interbench's simulated tasks: deadline, timekeeper's timer, task woken, task running.
pub const INTERACTIVE: Words = Words {
    sample: "sample",
    task: "task",
    timer: true,
};

/// schbench's workers: posted by the message thread, worker woken, worker running.
pub const WAKEUP: Words = Words {
    sample: "wakeup",
    task: "worker",
    timer: false,
};

/// A traced measurement's explanations: a heading that starts with `lead` (whose samples, how
/// many of how many, from when to when) and says what reading the trace cost, then each
/// sample's lines.
pub fn explained(out: &mut String, lead: std::fmt::Arguments<'_>, x: &Explained, words: &Words) {
    let _ = writeln!(
        out,
        "\n{lead}, from the kernel's trace ({} events read, {} dropped by the ring; reading took {} of CPU, explaining {})",
        x.events,
        x.overruns,
        ms_text(x.reader_cpu_ns as f64),
        ms_text(x.explain_ns as f64),
    );
    if x.samples.is_empty() {
        let _ = writeln!(out, "  no {}'s marker was seen in the trace", words.sample);
    }
    for s in &x.samples {
        sample(out, s, words);
    }
}

/// A sample's lines: its instants, where it was woken and ran, and each phase's culprits.
fn sample(out: &mut String, s: &ExplainedSample, words: &Words) {
    let woken_on = s
        .woken_on_cpu
        .map_or("woken (no wake-up in the trace)".to_string(), |c| {
            format!("woken on CPU {c}")
        });
    let moved = match (s.woken_on_cpu, s.ran_on_cpu) {
        (Some(a), Some(b)) if a != b => format!("{woken_on}, migrated, ran on CPU {b}"),
        (_, Some(b)) => format!("{woken_on}, ran on CPU {b}"),
        (_, None) => format!("{woken_on}; the trace shows no switch to it"),
    };
    let timer = if words.timer {
        format!("timer fired at +{}, ", ms_text(s.fired_ns as f64))
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "  {} {}: {} — {timer}{} woken at +{}, running at +{}; {moved}",
        words.sample,
        s.seq,
        ms_text(s.window_ns as f64),
        words.task,
        s.woken_ns.map_or("?".to_string(), |w| ms_text(w as f64)),
        ms_text(s.window_ns as f64),
    );
    for phase in [Phase::Timer, Phase::HandOff, Phase::Wait] {
        let parts: Vec<&Part> = s.parts.iter().filter(|p| p.phase == phase).collect();
        if parts.is_empty() {
            continue;
        }
        let total: u64 = parts.iter().map(|p| p.ns).sum();
        let shown: Vec<String> = parts
            .iter()
            .take(4)
            .map(|p| {
                format!(
                    "{} {} (CPU {})",
                    p.culprit.describe().cut(60),
                    ms_text(p.ns as f64),
                    p.cpu
                )
            })
            .collect();
        let more = if parts.len() > 4 {
            format!(", {} more", parts.len() - 4)
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "    {:<15} {}: {}{more}",
            phase.name(),
            ms_text(total as f64),
            shown.join(", ")
        );
    }
    if s.unaccounted_ns > 0 {
        let _ = writeln!(
            out,
            "    unaccounted     {} (no trace event showed what the CPU was doing)",
            ms_text(s.unaccounted_ns as f64)
        );
    }
}

/// What held a sample longest, in a few words (a summary line's end).
pub fn mostly(s: &ExplainedSample) -> String {
    s.main_culprit()
        .map_or("nothing the trace showed".to_string(), |p| {
            format!(
                "mostly {} ({}, {} on CPU {})",
                p.culprit.describe().cut(60),
                ms_text(p.ns as f64),
                p.phase.name(),
                p.cpu
            )
        })
}

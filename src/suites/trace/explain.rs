//! A captured window → its explanation: each phase of deadline → running given, nanosecond by
//! nanosecond, to what its CPU was doing (see `model::explain`).

use std::collections::BTreeMap;

use super::parse::{softirq_name, Event, Kind, Name};
use super::Window;
use crate::model::explain::{Culprit, ExplainedSample, Part, Phase, Segment};

/// Who was current on a CPU: pid, comm, the kernel's priority (None when only an event's
/// header named the task, which carries no priority).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Running {
    pub pid: i32,
    pub comm: Name,
    pub prio: Option<i32>,
}

/// A CPU's state as the events leave it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuState {
    pub running: Option<Running>,
    pub irq: Option<(i32, Name)>,
    pub softirq: Option<u32>,
}

impl CpuState {
    /// Moves the state past `e` (an event on this CPU).
    pub fn apply(&mut self, e: &Event) {
        match e.kind {
            Kind::Switch {
                next_pid,
                next_comm,
                next_prio,
                ..
            } => {
                self.running = Some(Running {
                    pid: next_pid,
                    comm: next_comm,
                    prio: Some(next_prio),
                });
                // A switch happens outside any handler.
                self.irq = None;
                self.softirq = None;
            }
            Kind::IrqEntry { irq, name } => self.irq = Some((irq, name)),
            Kind::IrqExit { .. } => self.irq = None,
            Kind::SoftirqEntry { vec } => self.softirq = Some(vec),
            Kind::SoftirqExit { .. } => self.softirq = None,
            _ => {}
        }
        // Any event names the task current on its CPU, which fills in a state not yet known.
        if self.running.is_none() && !matches!(e.kind, Kind::Switch { .. }) {
            self.running = Some(Running {
                pid: e.pid,
                comm: e.comm,
                prio: None,
            });
        }
    }

    fn culprit(&self, policies: &[(i32, String)]) -> Culprit {
        if let Some((irq, name)) = self.irq {
            return Culprit::Irq {
                irq,
                name: name.as_str().into(),
            };
        }
        if let Some(vec) = self.softirq {
            return Culprit::Softirq {
                name: softirq_name(vec).into(),
            };
        }
        match self.running {
            None => Culprit::Unknown,
            Some(r) if r.pid == 0 => Culprit::Idle,
            Some(r) => Culprit::Task {
                pid: r.pid,
                comm: r.comm.as_str().into(),
                prio: r.prio,
                policy: policies
                    .iter()
                    .find(|(p, _)| *p == r.pid)
                    .map(|(_, s)| s.as_str().into()),
            },
        }
    }
}

/// One CPU's time over [from, to): stretches, each with what the CPU was doing.
fn timeline(w: &Window, cpu: u32, from: u64, to: u64) -> Vec<(u64, u64, Culprit)> {
    let mut state = w.initial.get(cpu as usize).copied().unwrap_or_default();
    let on_cpu = || w.events.iter().filter(move |e| e.cpu == cpu);
    // Not known at the start: the first event on the CPU tells who was running before it (a
    // switch's previous task, or any other event's current task), if nothing switched first.
    if state.running.is_none() {
        if let Some(first) = on_cpu().next() {
            state.running = Some(match first.kind {
                Kind::Switch { prev_pid, .. } => Running {
                    pid: prev_pid,
                    comm: first.comm,
                    prio: None,
                },
                _ => Running {
                    pid: first.pid,
                    comm: first.comm,
                    prio: None,
                },
            });
        }
    }
    let mut out: Vec<(u64, u64, Culprit)> = Vec::new();
    let mut push = |a: u64, b: u64, c: Culprit| match out.last_mut() {
        // An event that changed nothing (a wake-up elsewhere, a handler's exit into the same
        // task) does not split the stretch.
        Some(last) if last.2 == c && last.1 == a => last.1 = b,
        _ => out.push((a, b, c)),
    };
    let mut cursor = from;
    for e in on_cpu() {
        if e.ts_ns >= to {
            break;
        }
        if e.ts_ns > cursor {
            push(cursor, e.ts_ns, state.culprit(&w.policies));
            cursor = e.ts_ns;
        }
        state.apply(e);
    }
    if to > cursor {
        push(cursor, to, state.culprit(&w.policies));
    }
    out
}

/// Explains a captured window.
pub fn explain(w: &Window) -> ExplainedSample {
    let m = w.marker;
    let deadline = m.deadline_ns;
    let ran = m.ran_ns.max(deadline);
    let fired = m.fired_ns.clamp(deadline, ran);
    let task = w.task_pid;
    // The task's wake-up: the last sched_waking of it before it ran, recorded on the waker's
    // (the timekeeper's) CPU, naming the CPU it chose for the task.
    let waking = w
        .events
        .iter()
        .rfind(|e| e.ts_ns <= ran && matches!(e.kind, Kind::Waking { pid, .. } if pid == task));
    let woken = waking.map(|e| e.ts_ns.clamp(fired, ran));
    let woken_on_cpu = waking.and_then(|e| match e.kind {
        Kind::Waking { target_cpu, .. } => Some(target_cpu),
        _ => None,
    });
    // Where it ran: the last switch to it (trace times are whole microseconds, so a switch
    // recorded up to 1 µs after the task's own clock read still counts).
    let switched_in = w.events.iter().rfind(|e| {
        e.ts_ns <= ran + 1_000
            && matches!(e.kind, Kind::Switch { next_pid, .. } if next_pid == task)
    });
    let ran_on_cpu = switched_in.map(|e| e.cpu);
    let timekeeper_cpu = waking.map(|e| e.cpu).or_else(|| {
        w.events
            .iter()
            .rfind(|e| {
                e.ts_ns <= fired + 1_000
                    && matches!(e.kind, Kind::Switch { next_pid, .. } if next_pid == m.timekeeper)
            })
            .map(|e| e.cpu)
    });

    let woken_at = woken.unwrap_or(fired);
    let spans = spans(
        w,
        (deadline, fired, woken_at, ran),
        timekeeper_cpu,
        woken_on_cpu.or(ran_on_cpu),
        ran_on_cpu,
    );
    let window_ns = ran - deadline;
    let (parts, unaccounted) = parts(w, &spans, window_ns);
    let segments = segments(w, &spans, deadline, ran);
    ExplainedSample {
        seq: m.seq,
        deadline_mono_ns: deadline,
        window_ns,
        fired_ns: fired - deadline,
        woken_ns: woken.map(|t| t - deadline),
        task_pid: task,
        timekeeper_pid: m.timekeeper,
        woken_on_cpu,
        ran_on_cpu,
        parts,
        unaccounted_ns: unaccounted,
        segments,
    }
}

/// A phase of a late sample on one CPU, from and to (monotonic ns).
type Span = (Phase, u32, u64, u64);

/// Each phase on its CPU: the timer's and the hand-off on the timekeeper's CPU, the wait on
/// the CPU the task was woken on, split where it migrated. `times`: the deadline, when the
/// timer fired, when the task was woken and when it ran.
fn spans(
    w: &Window,
    (deadline, fired, woken_at, ran): (u64, u64, u64, u64),
    timekeeper_cpu: Option<u32>,
    mut wait_cpu: Option<u32>,
    ran_on_cpu: Option<u32>,
) -> Vec<Span> {
    let mut spans = Vec::new();
    if let Some(cpu) = timekeeper_cpu {
        spans.push((Phase::Timer, cpu, deadline, fired));
        spans.push((Phase::HandOff, cpu, fired, woken_at));
    }
    let mut at = woken_at;
    for e in w
        .events
        .iter()
        .filter(|e| e.ts_ns > woken_at && e.ts_ns < ran)
    {
        if let Kind::Migrate {
            pid,
            orig_cpu,
            dest_cpu,
        } = e.kind
        {
            if pid == w.task_pid {
                spans.push((Phase::Wait, wait_cpu.unwrap_or(orig_cpu), at, e.ts_ns));
                wait_cpu = Some(dest_cpu);
                at = e.ts_ns;
            }
        }
    }
    if let Some(cpu) = ran_on_cpu.or(wait_cpu) {
        spans.push((Phase::Wait, cpu, at, ran));
    }
    spans
}

/// What took each phase's time on its CPU, largest first within a phase, and the time no
/// culprit was seen for. A phase with no CPU to look at (no wake-up or switch seen) is
/// unaccounted as a whole.
fn parts(w: &Window, spans: &[Span], window_ns: u64) -> (Vec<Part>, u64) {
    let mut sums: BTreeMap<(Phase, u32, Culprit), u64> = BTreeMap::new();
    let mut covered = 0;
    let mut unaccounted = 0;
    for &(phase, cpu, from, to) in spans {
        for (a, b, culprit) in timeline(w, cpu, from, to) {
            covered += b - a;
            if culprit == Culprit::Unknown {
                unaccounted += b - a;
            } else {
                *sums.entry((phase, cpu, culprit)).or_default() += b - a;
            }
        }
    }
    unaccounted += window_ns.saturating_sub(covered);
    let mut parts: Vec<Part> = sums
        .into_iter()
        .map(|((phase, cpu, culprit), ns)| Part {
            phase,
            cpu,
            culprit,
            ns,
        })
        .collect();
    parts.sort_by(|a, b| a.phase.cmp(&b.phase).then(b.ns.cmp(&a.ns)));
    (parts, unaccounted)
}

/// Every CPU seen in the window, its timeline from the deadline to the run, for the drawing
/// (times from the deadline).
fn segments(w: &Window, spans: &[Span], deadline: u64, ran: u64) -> Vec<Segment> {
    let mut cpus: Vec<u32> = w.events.iter().map(|e| e.cpu).collect();
    cpus.extend(spans.iter().map(|s| s.1));
    cpus.sort_unstable();
    cpus.dedup();
    let rel = |t: u64| t as i64 - deadline as i64;
    cpus.iter()
        .flat_map(|&cpu| {
            timeline(w, cpu, deadline, ran)
                .into_iter()
                .map(move |(a, b, culprit)| Segment {
                    cpu,
                    start_ns: rel(a),
                    end_ns: rel(b),
                    culprit,
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::parse::Marker;
    use super::*;

    fn ev(ts_us: u64, cpu: u32, pid: i32, kind: Kind) -> Event {
        Event {
            ts_ns: ts_us * 1_000,
            cpu,
            pid,
            comm: Name::new("x"),
            kind,
        }
    }

    fn switch(ts_us: u64, cpu: u32, prev: i32, next: i32, comm: &str, prio: i32) -> Event {
        ev(
            ts_us,
            cpu,
            prev,
            Kind::Switch {
                prev_pid: prev,
                prev_runnable: false,
                next_pid: next,
                next_comm: Name::new(comm),
                next_prio: prio,
            },
        )
    }

    /// Deadline at 1000 µs; the timekeeper (11) on CPU 0 fires at 1010 and wakes the task (12)
    /// at 1020 onto CPU 1, where a SCHED_FIFO spinner (99) runs until 5020, with an IRQ of
    /// 30 µs inside; the task runs at 5020 and reads the clock at 5021.
    fn window() -> Window {
        let events = vec![
            switch(1005, 0, 0, 11, "hb-timekeeper", 3),
            ev(
                1020,
                0,
                11,
                Kind::Waking {
                    pid: 12,
                    target_cpu: 1,
                },
            ),
            switch(1025, 0, 11, 0, "swapper/0", 120),
            ev(
                2000,
                1,
                99,
                Kind::IrqEntry {
                    irq: 11,
                    name: Name::new("virtio0"),
                },
            ),
            ev(2030, 1, 99, Kind::IrqExit { irq: 11 }),
            switch(5020, 1, 99, 12, "hb-bench", 120),
        ];
        let mut initial = vec![CpuState::default(); 2];
        initial[0].running = Some(Running {
            pid: 0,
            comm: Name::new("swapper/0"),
            prio: Some(120),
        });
        initial[1].running = Some(Running {
            pid: 99,
            comm: Name::new("spinner"),
            prio: Some(49),
        });
        Window {
            marker: Marker {
                seq: 7,
                deadline_ns: 1_000_000,
                fired_ns: 1_010_000,
                ran_ns: 5_021_000,
                timekeeper: 11,
            },
            task_pid: 12,
            initial,
            events,
            policies: vec![(99, "SCHED_FIFO".into())],
        }
    }

    #[test]
    fn the_parts_add_up_to_the_window_and_name_the_spinner() {
        let x = explain(&window());
        assert_eq!(x.window_ns, 4_021_000);
        assert_eq!(x.fired_ns, 10_000);
        assert_eq!(x.woken_ns, Some(20_000));
        assert_eq!((x.woken_on_cpu, x.ran_on_cpu), (Some(1), Some(1)));
        assert_eq!(x.accounted_ns() + x.unaccounted_ns, x.window_ns);
        assert_eq!(x.unaccounted_ns, 0);
        let of = |phase: Phase, culprit: &Culprit| {
            x.parts
                .iter()
                .filter(|p| p.phase == phase && &p.culprit == culprit)
                .map(|p| p.ns)
                .sum::<u64>()
        };
        let spinner = Culprit::Task {
            pid: 99,
            comm: "spinner".into(),
            prio: Some(49),
            policy: Some("SCHED_FIFO".into()),
        };
        // Waiting: 1020 → 5020 on CPU 1, the spinner's but for the IRQ's 30 µs.
        assert_eq!(of(Phase::Wait, &spinner), 4_000_000 - 30_000);
        let irq = Culprit::Irq {
            irq: 11,
            name: "virtio0".into(),
        };
        assert_eq!(of(Phase::Wait, &irq), 30_000);
        // The timer: CPU 0 idle until the timekeeper ran at 1005, then the timekeeper.
        assert_eq!(of(Phase::Timer, &Culprit::Idle), 5_000);
        assert_eq!(x.main_culprit().unwrap().culprit, spinner);
        assert_eq!(spinner.describe(), "spinner [99] SCHED_FIFO rt priority 50");
    }

    #[test]
    fn a_migration_splits_the_wait_between_two_cpus() {
        let mut w = window();
        w.events.insert(
            4,
            ev(
                3000,
                0,
                0,
                Kind::Migrate {
                    pid: 12,
                    orig_cpu: 1,
                    dest_cpu: 0,
                },
            ),
        );
        // It ran on CPU 0 (idle there) at 5020 instead.
        w.events.pop();
        w.events.push(switch(5020, 0, 0, 12, "hb-bench", 120));
        let x = explain(&w);
        assert_eq!((x.woken_on_cpu, x.ran_on_cpu), (Some(1), Some(0)));
        let on = |cpu| {
            x.parts
                .iter()
                .filter(|p| p.phase == Phase::Wait && p.cpu == cpu)
                .map(|p| p.ns)
                .sum::<u64>()
        };
        assert_eq!(on(1), 3_000_000 - 1_020_000);
        assert_eq!(on(0), 5_021_000 - 3_000_000);
        assert_eq!(x.accounted_ns() + x.unaccounted_ns, x.window_ns);
    }

    #[test]
    fn what_no_event_covers_is_unaccounted() {
        let mut w = window();
        w.initial = vec![CpuState::default(); 2];
        // CPU 1 has no event before its IRQ at 2000 but that one names the spinner as current.
        let x = explain(&w);
        assert_eq!(x.accounted_ns() + x.unaccounted_ns, x.window_ns);
        assert_eq!(x.unaccounted_ns, 0);
        // No trace at all: the whole window is unaccounted.
        w.events.clear();
        let x = explain(&w);
        assert_eq!(x.unaccounted_ns, x.window_ns);
        assert!(x.parts.is_empty());
    }
}

//! interbench's calibration rule (a 1 ms burn within 1%, then within 5% after a rest), on
//! a thread of its own and bounded in time, so that `-l` means what `interbench -b` finds.

use super::*;

/// How the checks of [`measure_like_interbench`] went.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RestedCheck {
    /// The rest before each check, ms.
    pub rest_ms: f64,
    /// Checks made: one 1 ms timing after each rest.
    pub checks: u32,
    /// Checks that did not count because the calibrating thread ran for less than
    /// [`MIN_RAN_PCT`] of their burn: other tasks had its CPU. Left out when 0, as in results
    /// stored before it was counted.
    #[serde(default, skip_serializing_if = "crate::model::is_zero")]
    pub disturbed: u32,
    /// Whether the last check landed within 5% of 1 ms, as interbench requires. When none did
    /// within the time allowed, the figure is the median speed of the checks instead.
    pub accepted: bool,
    /// The policy the calibrating thread ran under: SCHED_FIFO 99 where permitted.
    pub policy: crate::platform::sched::Policy,
    /// The one CPU it ran on, when it could be pinned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<usize>,
    /// A stop (Ctrl-C, SIGTERM, SIGHUP) ended it before a check was accepted. Left out when
    /// false, as in results stored before it was said.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stopped: bool,
}

/// The limits of [`measure_like_interbench`].
#[derive(Debug, Clone, Copy)]
pub struct InterbenchRule {
    /// Burn this long first, "for cpu frequency to hit maximum": interbench burns one second.
    pub warm_ms: f64,
    /// The rest before each check: interbench sleeps one second.
    pub rest_ms: f64,
    /// Give up on the rule after this long, the warm-up included.
    pub budget_ms: f64,
}

/// interbench's one-second warm-up and rest, and checks for up to 20 s: interbench goes on
/// for as long as it takes; a run waits this long at most, and a figure no check confirmed is
/// then marked unsure and never cached.
pub const INTERBENCH_RULE: InterbenchRule = InterbenchRule {
    warm_ms: 1000.0,
    rest_ms: 1000.0,
    budget_ms: 20_000.0,
};

/// A check after a rest that failed, reported while the calibration goes on trying.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CheckMissed {
    /// Which check (1-based).
    pub check: u32,
    /// What the 1 ms burn took, ms.
    pub took_ms: f64,
    /// The share of that time the calibrating thread ran, %: under [`MIN_RAN_PCT`] the check
    /// did not count.
    pub ran_pct: f64,
    /// Time spent so far, and the most the calibration may take, ms.
    pub elapsed_ms: f64,
    pub budget_ms: f64,
}

/// Runs `f` on a thread of its own, as interbench calibrates: pinned to one CPU (the first
/// this process may use; interbench takes CPU 0) at SCHED_FIFO 99 where permitted, so the
/// caller's own affinity and policy are untouched. `f` gets the CPU it was pinned to and a
/// sender for its missed checks, which reach `missed` on the caller's thread as they happen.
pub(super) fn on_calibrating_thread<T: Send>(
    f: impl FnOnce(Option<usize>, &mut dyn FnMut(CheckMissed)) -> T + Send,
    missed: &mut dyn FnMut(CheckMissed),
) -> T {
    use crate::platform::sched;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::scope(|scope| {
        let handle = scope.spawn(move || {
            sched::name_current_thread("hb-calibrate");
            let cpu = sched::first_allowed_cpu().filter(|&c| sched::pin_to_cpu(c).is_ok());
            let _ = sched::set_current_thread_policy(sched::Policy::Fifo { priority: 99 });
            f(cpu, &mut |c| {
                let _ = tx.send(c);
            })
        });
        // Ends when the thread is done and its sender dropped.
        for c in rx {
            missed(c);
        }
        handle
            .join()
            .expect("the calibrating thread does not panic")
    })
}

/// [`measure_like_interbench`] as interbench runs it ([`on_calibrating_thread`]); `missed`
/// hears of each check that failed as it fails.
///
/// interbench's rule is one timing within 1% of its target, re-checked within 5% after a rest;
/// interbench loops for minutes on a virtual machine whose speed drifts by 5–20%, hostbench
/// stops after a bound.
pub fn calibrate_like_interbench(
    rule: InterbenchRule,
    missed: &mut dyn FnMut(CheckMissed),
    stop: &AtomicBool,
) -> RateMeasurement {
    on_calibrating_thread(
        |cpu, missed| {
            let mut m = measure_like_interbench(&mut interbench_loops, rule, missed, stop);
            if let Some(check) = m.rested_check.as_mut() {
                check.cpu = cpu;
            }
            m
        },
        missed,
    )
}

/// One of interbench's checks, on a figure found earlier: rest `rest_ms`, then time
/// `loops_per_ms` loops once, where the calibration runs ([`on_calibrating_thread`]); up to
/// three times while other tasks take the CPU during the timing (as the rule, it counts only
/// a timing in which the thread ran [`MIN_RAN_PCT`] of the time). The loop's speed now, loops
/// per ms, and whether a timing counted.
pub fn rested_speed_like_interbench(loops_per_ms: u64, rest_ms: f64) -> (f64, bool) {
    on_calibrating_thread(
        |_, _| {
            // The code and its data warm, as in the rule, where the check follows timings.
            interbench_loops(loops_per_ms / 100);
            let mut speed = 0.0;
            for _ in 0..3 {
                let cpu0 = thread_cpu_ns();
                std::thread::sleep(std::time::Duration::from_secs_f64(rest_ms / 1e3));
                let took = time_ns(&mut interbench_loops, loops_per_ms);
                let ran_pct = (100.0 * (thread_cpu_ns() - cpu0) as f64 / took as f64).min(100.0);
                speed = loops_per_ms as f64 * 1e6 / took as f64;
                if ran_pct >= MIN_RAN_PCT {
                    return (speed, true);
                }
            }
            (speed, false)
        },
        &mut |_| {},
    )
}

/// Finds a work's speed by interbench v0.31's rule (`calibrate_loop`): burn for `rule.warm_ms`,
/// then time the current guess's worth of a millisecond and rescale the guess until one timing
/// lands within 1% of 1 ms; then
/// rest, time it once more, and accept the guess when that timing lands within 5% of 1 ms,
/// else start over from the guess. On a virtual CPU that runs this loop at about half its
/// steady speed for the first milliseconds after idling, the check after the rest decides the
/// figure: it is the speed of a task that has just woken, which is how interbench's periodic
/// tasks burn (docs/calibration.md). interbench loops until the check passes, for minutes on a
/// noisy host; this gives up after `rule.budget_ms` and then reports the median speed of its
/// checks, saying so (`RestedCheck::accepted`); `missed` hears of each failed check as it
/// fails. It stops early, unaccepted, once `stop` is set (Ctrl-C): at most one rest later.
/// Elapsed time on `CLOCK_MONOTONIC`, where interbench reads `CLOCK_MONOTONIC_RAW` (the same
/// time, without NTP's rate adjustment).
pub fn measure_like_interbench(
    work: &mut dyn FnMut(u64),
    rule: InterbenchRule,
    missed: &mut dyn FnMut(CheckMissed),
    stop: &AtomicBool,
) -> RateMeasurement {
    const MS: u64 = 1_000_000;
    let start = monotonic_ns();
    let deadline = start + (rule.budget_ms * 1e6) as u64;
    let rest = std::time::Duration::from_secs_f64(rule.rest_ms / 1e3);
    let mut guess = 100_000u64;
    let mut run_time = 0u64;
    let mut rates = Vec::new();
    let mut check_rates = Vec::new();
    let mut accepted = false;
    let warm_until = start + (rule.warm_ms * 1e6) as u64;
    while monotonic_ns() < warm_until {
        work(guess);
    }
    let (mut checks, mut disturbed) = (0u32, 0u32);
    let mut disturbed_rates = Vec::new();
    'rule: loop {
        while !(MS * 99 / 100..=MS * 101 / 100).contains(&run_time) {
            if monotonic_ns() > deadline || stop.load(Ordering::Relaxed) {
                break 'rule;
            }
            run_time = time_ns(work, guess);
            rates.push(guess as f64 * 1e6 / run_time as f64);
            guess = (guess as u128 * MS as u128 / run_time as u128).max(1) as u64;
        }
        if monotonic_ns() + rest.as_nanos() as u64 + 2 * MS > deadline
            || stop.load(Ordering::Relaxed)
        {
            break;
        }
        // The thread's CPU time is read before the rest, when it runs no more until it wakes
        // for the check: no clock but the wall clock's is read between the rest and the burn,
        // as in interbench (a system call there changed the loop's speed on this project's
        // AMD VM).
        let cpu0 = thread_cpu_ns();
        std::thread::sleep(rest);
        run_time = time_ns(work, guess);
        let ran_pct = (100.0 * (thread_cpu_ns() - cpu0) as f64 / run_time as f64).min(100.0);
        checks += 1;
        let rate = guess as f64 * 1e6 / run_time as f64;
        if ran_pct >= MIN_RAN_PCT {
            rates.push(rate);
            check_rates.push(rate);
            if (MS * 95 / 100..=MS * 105 / 100).contains(&run_time) {
                accepted = true;
                break;
            }
        } else {
            disturbed += 1;
            disturbed_rates.push(rate);
        }
        missed(CheckMissed {
            check: checks,
            took_ms: run_time as f64 / 1e6,
            ran_pct,
            elapsed_ms: (monotonic_ns() - start) as f64 / 1e6,
            budget_ms: rule.budget_ms,
        });
    }
    let stopped = !accepted && stop.load(Ordering::Relaxed);
    let per_ms = if accepted {
        guess as f64
    } else {
        median(&check_rates)
            .or_else(|| median(&rates))
            .or_else(|| median(&disturbed_rates))
            .unwrap_or(0.0)
    };
    RateMeasurement {
        per_ms,
        wall_per_ms: per_ms,
        samples: rates.len(),
        mad_pct: mad_pct(&rates, per_ms),
        elapsed_ms: (monotonic_ns() - start) as f64 / 1e6,
        rested_check: Some(RestedCheck {
            rest_ms: rule.rest_ms,
            checks,
            disturbed,
            accepted,
            policy: crate::platform::sched::current_thread_policy(),
            cpu: None,
            stopped,
        }),
    }
}

//! The host's speed beside each measured stretch: a fixed amount of work (p1bench's spin loop),
//! timed on the stretch's CPUs just before it starts and just after it ends. On a shared host the
//! host's speed moves by several percent over tens of seconds and most figures move with it; the
//! reference, timed at the same moments, lets `compare` say how much of a change was the host's.

use crate::platform::clock::monotonic_ns;
use crate::platform::sched;

use super::noise::workload::p1bench_spin;

/// The reference's steps: 0.3 ms on a Zen core (one cycle a step), about five times that
/// where a store-to-load forward costs several cycles. Read at both ends of an iteration of
/// about a second on two CPUs, three timings each, that is 0.4% to 2% of the run.
pub const STEPS: u64 = 1_000_000;

/// Timings of the reference in one reading on each CPU: their median is the CPU's (a timing
/// that a tick or an interrupt lengthened is one of three).
pub const TIMINGS: usize = 3;

/// One reading of the host's speed on `cpus`: each CPU's median of [`TIMINGS`] timings of the
/// reference with the calling thread pinned there, and their geometric mean, ns. The thread's
/// CPUs are restored after. None with no CPUs, or where the thread may not run on one of them
/// (a reading on other CPUs would be of other CPUs).
///
/// The work is fixed, not calibrated, so two runs' readings are of the same work and their
/// ratio is the host's change of speed. One timing is noisy (a tick, an interrupt), so a
/// reading is the median of [`TIMINGS`] on each CPU.
pub fn read(cpus: &[usize]) -> Option<f64> {
    if cpus.is_empty() {
        return None;
    }
    let mut log_sum = 0.0;
    for &cpu in cpus {
        let _pinned = sched::pin_until_dropped(cpu).ok()?;
        let mut times = [0u64; TIMINGS];
        for t in &mut times {
            let start = monotonic_ns();
            p1bench_spin(STEPS);
            *t = monotonic_ns().saturating_sub(start).max(1);
        }
        times.sort_unstable();
        log_sum += (times[TIMINGS / 2] as f64).ln();
    }
    Some((log_sum / cpus.len() as f64).exp())
}

/// The reference of a stretch from its readings before and after: their geometric mean, or
/// the one taken where the other is missing.
pub fn around(before: Option<f64>, after: Option<f64>) -> Option<f64> {
    match (before, after) {
        (Some(a), Some(b)) => Some((a * b).sqrt()),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reading_times_the_fixed_work_on_each_cpu_asked_for() {
        let cpus = sched::allowed_cpus();
        let before = sched::allowed_cpus();
        let one = read(&cpus[..1]).expect("a CPU the thread may use");
        // A million steps of a loop through memory: more than 100 µs on any CPU (one step a
        // cycle at 10 GHz), less than a second.
        assert!((1e5..1e9).contains(&one), "{one} ns");
        assert_eq!(read(&[]), None);
        // The thread's CPUs are as they were.
        assert_eq!(sched::allowed_cpus(), before);
    }

    #[test]
    fn a_stretch_is_read_at_both_ends_where_it_can_be() {
        assert_eq!(around(Some(4.0), Some(9.0)), Some(6.0));
        assert_eq!(around(None, Some(9.0)), Some(9.0));
        assert_eq!(around(None, None), None);
    }
}

//! p1bench's calibration (`find_count`): the count of a 100 ms test run, timed five times,
//! scaled so that the fastest would take the target.

use super::*;

/// p1bench's calibration (`find_count`): the work's count in a 100 ms test run, that count
/// timed five times, and the count scaled so that the **fastest** of the five would take the
/// target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct P1benchCalibration {
    pub target_ms: f64,
    /// The count reached in the test run (p1bench's `test_us`, 100 ms).
    pub test_ms: f64,
    pub test_count: u64,
    /// The five timed runs of `test_count`.
    pub runs_ns: Vec<u64>,
    /// `test_count × target / fastest run`.
    pub iterations: u64,
}

/// p1bench's test run and timed runs ([`P1benchCalibration`]).
pub const P1BENCH_TEST_MS: f64 = 100.0;
pub const P1BENCH_TEST_RUNS: usize = 5;

/// Calibrates `work` by p1bench's rule (`find_count`): run it for [`P1BENCH_TEST_MS`] counting
/// its iterations (p1bench counts in a thread it stops after 100 ms; here the work runs in
/// growing batches until 100 ms have passed), time that count [`P1BENCH_TEST_RUNS`] times, and
/// scale it by the target over the fastest of those times. None if `stop` is set first.
pub fn calibrate_like_p1bench(
    work: &mut dyn FnMut(u64),
    target_ns: u64,
    stop: &AtomicBool,
) -> Option<P1benchCalibration> {
    let test_ns = (P1BENCH_TEST_MS * 1e6) as u64;
    let start = monotonic_ns();
    let (mut count, mut batch) = (0u64, 1_000u64);
    while monotonic_ns() - start < test_ns {
        if stop.load(Ordering::Relaxed) {
            return None;
        }
        work(batch);
        count += batch;
        // Batches of about a millisecond at most, so the test run ends near 100 ms.
        let per_ns = count as f64 / (monotonic_ns() - start).max(1) as f64;
        batch = ((per_ns * 1e6) as u64).clamp(1_000, batch.saturating_mul(2));
    }
    let mut runs_ns = Vec::with_capacity(P1BENCH_TEST_RUNS);
    for _ in 0..P1BENCH_TEST_RUNS {
        if stop.load(Ordering::Relaxed) {
            return None;
        }
        runs_ns.push(time_ns(work, count));
    }
    let fastest = *runs_ns.iter().min()?;
    Some(P1benchCalibration {
        target_ms: target_ns as f64 / 1e6,
        test_ms: P1BENCH_TEST_MS,
        test_count: count,
        iterations: ((count as u128 * target_ns as u128 / fastest as u128) as u64).max(1),
        runs_ns,
    })
}

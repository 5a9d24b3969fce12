//! The simulation engine: a periodic task woken by its timekeeper thread, and Gaming's
//! free-running frames. Used by the bench worker (measured) and by the Video, X and Custom
//! loads (not measured). Nothing here allocates once a simulation is running.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use anyhow::{anyhow, Context, Result};
use serde::{Deserialize, Serialize};

use super::benches::Bench;
use super::deadline::{DeadlineCounts, DeadlineTracker};
use crate::calibration::burn_loops;
use crate::platform::clock::{monotonic_ns, sleep_until_ns};
use crate::platform::rusage::Usage;
use crate::platform::sched::{self, Policy};
use crate::platform::sem::Semaphore;
use crate::stats::LatencyHistogram;

const MS: u64 = 1_000_000;

/// `-C` percent of CPU every `-I` microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CustomSpec {
    pub cpu_pct: u32,
    pub interval_us: u64,
}

/// What a periodic task does each period.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Profile {
    pub interval_ns: u64,
    work: Work,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Work {
    Constant(u64),
    /// X: period k has (k mod 101) ms of work in 100 ms, so a cycle steps from 0% to 100%.
    XRamp,
}

impl Profile {
    /// The periodic profile of a bench; None for Gaming, which has no periods. The figures are
    /// interbench's (interbench.c: AUDIO_INTERVAL, VIDEO_INTERVAL, emulate_x).
    pub fn of(bench: Bench, custom: Option<CustomSpec>) -> Option<Profile> {
        match bench {
            Bench::Audio => Some(Profile {
                interval_ns: 50 * MS,
                work: Work::Constant(50 * MS / 20),
            }),
            Bench::Video => {
                let interval_ns = 1_000_000_000 / 60;
                Some(Profile {
                    interval_ns,
                    work: Work::Constant(interval_ns * 40 / 100),
                })
            }
            Bench::X => Some(Profile {
                interval_ns: 100 * MS,
                work: Work::XRamp,
            }),
            Bench::Custom => custom.map(|c| {
                let interval_ns = c.interval_us * 1000;
                Profile {
                    interval_ns,
                    work: Work::Constant(interval_ns * u64::from(c.cpu_pct) / 100),
                }
            }),
            Bench::Gaming => None,
        }
    }

    /// Nominal CPU work of period k, ns.
    #[inline]
    pub fn work_ns(&self, k: u64) -> u64 {
        match self.work {
            Work::Constant(ns) => ns,
            Work::XRamp => (k % 101) * MS,
        }
    }

    /// The fraction of one CPU the task asks for over a whole cycle.
    pub fn cpu_share(&self) -> f64 {
        match self.work {
            Work::Constant(ns) => ns as f64 / self.interval_ns as f64,
            Work::XRamp => 0.5,
        }
    }
}

/// Gaming's frame: 100 ms of CPU, as interbench's GAME_RUN.
pub const GAME_FRAME_NS: u64 = 100 * MS;

/// Burns calibrated CPU time.
#[derive(Debug, Clone, Copy)]
pub struct Burner {
    pub loops_per_ms: u64,
}

impl Burner {
    #[inline]
    pub fn burn_ns(&self, ns: u64) {
        burn_loops((u128::from(self.loops_per_ms) * u128::from(ns) / 1_000_000) as u64);
    }
}

/// Latency samples recorded without allocating: running moments, an HDR histogram, and the raw
/// samples up to a capacity fixed before the run.
pub struct LatencyRecorder {
    hist: LatencyHistogram,
    count: u64,
    mean: f64,
    m2: f64,
    max: u64,
    samples: Vec<u64>,
    truncated: bool,
}

/// The figures of a set of latency samples.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    pub count: u64,
    pub mean_ns: f64,
    /// The true sample standard deviation (see docs/interactive.md on interbench's formula).
    pub sd_ns: f64,
    pub max_ns: u64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
}

impl LatencyRecorder {
    /// `capacity` raw samples are kept; the histogram covers up to `max_ns`.
    pub fn new(capacity: usize, max_ns: u64) -> Result<Self> {
        Ok(LatencyRecorder {
            hist: LatencyHistogram::new(max_ns)?,
            count: 0,
            mean: 0.0,
            m2: 0.0,
            max: 0,
            samples: Vec::with_capacity(capacity),
            truncated: false,
        })
    }

    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.hist.record(ns);
        self.count += 1;
        let x = ns as f64;
        let delta = x - self.mean;
        self.mean += delta / self.count as f64;
        self.m2 += delta * (x - self.mean);
        self.max = self.max.max(ns);
        if self.samples.len() < self.samples.capacity() {
            self.samples.push(ns);
        } else {
            self.truncated = true;
        }
    }

    pub fn summary(&self) -> LatencySummary {
        // The histogram gives a bucket's upper edge, which can lie above the largest sample.
        let p = |q| self.hist.percentile(q).unwrap_or(0).min(self.max);
        LatencySummary {
            count: self.count,
            mean_ns: self.mean,
            sd_ns: if self.count > 1 {
                (self.m2 / (self.count - 1) as f64).sqrt()
            } else {
                0.0
            },
            max_ns: self.max,
            p50_ns: p(50.0),
            p99_ns: p(99.0),
            p999_ns: p(99.9),
        }
    }

    /// The raw samples and whether some were not kept.
    pub fn into_samples(self) -> (Vec<u64>, bool) {
        (self.samples, self.truncated)
    }
}

/// How the timer itself behaved: how late `clock_nanosleep` returned past each deadline. This
/// is kept apart from the task's latency, which starts when the timekeeper woke it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TimerStats {
    pub wakeups: u64,
    pub mean_oversleep_ns: f64,
    pub max_oversleep_ns: u64,
    /// CPU time the timekeeper thread used, ns.
    pub cpu_ns: u64,
    /// The policy the timekeeper actually ran with.
    pub policy: Option<Policy>,
}

/// What a periodic simulation did.
#[derive(Debug, Clone, Copy)]
pub struct PeriodicOutcome {
    pub counts: DeadlineCounts,
    pub timer: TimerStats,
}

struct TimekeeperShared {
    wake_at_ns: AtomicU64,
    woke_at_ns: AtomicU64,
    start: Semaphore,
    done: Semaphore,
    quit: AtomicBool,
}

/// The timekeeper thread: sleeps to each requested deadline with an absolute-time
/// `clock_nanosleep`, notes when it woke, and wakes the task.
fn timekeeper(shared: Arc<TimekeeperShared>, policy: Policy) -> TimerStats {
    sched::name_current_thread("hb-timekeeper");
    let set = sched::set_current_thread_policy(policy);
    let mut stats = TimerStats {
        policy: set.ok().map(|_| sched::current_thread_policy()),
        ..TimerStats::default()
    };
    let before = Usage::thread();
    let mut sum = 0.0;
    loop {
        shared.start.wait();
        if shared.quit.load(Ordering::Acquire) {
            break;
        }
        let target = shared.wake_at_ns.load(Ordering::Acquire);
        sleep_until_ns(target);
        let woke = monotonic_ns();
        shared.woke_at_ns.store(woke, Ordering::Release);
        shared.done.post();
        let over = woke.saturating_sub(target);
        stats.wakeups += 1;
        sum += over as f64;
        stats.max_oversleep_ns = stats.max_oversleep_ns.max(over);
    }
    if stats.wakeups > 0 {
        stats.mean_oversleep_ns = sum / stats.wakeups as f64;
    }
    stats.cpu_ns = Usage::thread().since(&before).cpu_ns();
    stats
}

/// Runs a periodic simulation on the calling thread until `stop` is set, with a timekeeper at
/// `timekeeper_policy`. Each wake-up's latency — from the moment the timekeeper woke to the
/// moment this thread ran — goes to `latencies`.
pub fn run_periodic(
    profile: Profile,
    burner: Burner,
    stop: &AtomicBool,
    timekeeper_policy: Policy,
    latencies: &mut LatencyRecorder,
) -> Result<PeriodicOutcome> {
    let shared = Arc::new(TimekeeperShared {
        wake_at_ns: AtomicU64::new(0),
        woke_at_ns: AtomicU64::new(0),
        start: Semaphore::new(0)?,
        done: Semaphore::new(0)?,
        quit: AtomicBool::new(false),
    });
    let tk_shared = Arc::clone(&shared);
    let tk = std::thread::Builder::new()
        .name("hb-timekeeper".into())
        .stack_size(256 * 1024)
        .spawn(move || timekeeper(tk_shared, timekeeper_policy))
        .context("starting the timekeeper thread")?;

    let mut tracker = DeadlineTracker::new(monotonic_ns(), profile.interval_ns);
    while !stop.load(Ordering::Relaxed) {
        tracker.catch_up(monotonic_ns(), |k| profile.work_ns(k));
        let work = profile.work_ns(tracker.period());
        burner.burn_ns(work);
        let Some(next) = tracker.finish(monotonic_ns(), work) else {
            continue;
        };
        if stop.load(Ordering::Relaxed) {
            break;
        }
        shared.wake_at_ns.store(next, Ordering::Release);
        shared.start.post();
        shared.done.wait();
        let ran = monotonic_ns();
        latencies.record(ran.saturating_sub(shared.woke_at_ns.load(Ordering::Acquire)));
    }
    shared.quit.store(true, Ordering::Release);
    shared.start.post();
    let timer = tk
        .join()
        .map_err(|_| anyhow!("the timekeeper thread panicked"))?;
    Ok(PeriodicOutcome {
        counts: tracker.counts,
        timer,
    })
}

/// Gaming: burns 100 ms frames back to back until `stop`. A frame's latency is how much longer
/// than its 100 ms of CPU it took; % desired CPU = CPU received / (CPU received + overruns), as
/// interbench computed it. There are no deadlines.
pub fn run_gaming(
    burner: Burner,
    stop: &AtomicBool,
    latencies: &mut LatencyRecorder,
) -> DeadlineCounts {
    let mut counts = DeadlineCounts::default();
    while !stop.load(Ordering::Relaxed) {
        let start = monotonic_ns();
        burner.burn_ns(GAME_FRAME_NS);
        let overrun = (monotonic_ns() - start).saturating_sub(GAME_FRAME_NS);
        latencies.record(overrun);
        counts.periods_done += 1;
        counts.work_done_ns += GAME_FRAME_NS;
        counts.work_dropped_ns += overrun;
    }
    counts
}

/// Expected number of latency samples of a bench over `duration_ns`, with room to spare.
pub fn expected_samples(bench: Bench, custom: Option<CustomSpec>, duration_ns: u64) -> usize {
    let interval = Profile::of(bench, custom).map_or(GAME_FRAME_NS / 4, |p| p.interval_ns);
    (duration_ns / interval.max(1)) as usize * 2 + 1024
}

/// The CPU a process used over a window, as % of one CPU.
pub fn cpu_pct(cpu_ns: u64, wall_ns: u64) -> f64 {
    if wall_ns == 0 {
        0.0
    } else {
        100.0 * cpu_ns as f64 / wall_ns as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Summary;

    #[test]
    fn profiles_match_interbench() {
        let a = Profile::of(Bench::Audio, None).unwrap();
        assert_eq!((a.interval_ns, a.work_ns(0)), (50 * MS, 2_500_000));
        let v = Profile::of(Bench::Video, None).unwrap();
        assert_eq!(v.interval_ns, 16_666_666);
        assert!((v.cpu_share() - 0.4).abs() < 1e-6);
        let x = Profile::of(Bench::X, None).unwrap();
        assert_eq!(
            (x.work_ns(0), x.work_ns(37), x.work_ns(100), x.work_ns(101)),
            (0, 37 * MS, 100 * MS, 0)
        );
        assert!(Profile::of(Bench::Gaming, None).is_none());
        assert!(Profile::of(Bench::Custom, None).is_none());
        let c = Profile::of(
            Bench::Custom,
            Some(CustomSpec {
                cpu_pct: 25,
                interval_us: 10_000,
            }),
        )
        .unwrap();
        assert_eq!((c.interval_ns, c.work_ns(5)), (10 * MS, 2_500_000));
    }

    #[test]
    fn recorder_keeps_moments_percentiles_and_bounded_samples() {
        let mut r = LatencyRecorder::new(3, 10 * MS).unwrap();
        for v in [1000, 2000, 3000, 4000] {
            r.record(v);
        }
        let s = r.summary();
        assert_eq!((s.count, s.max_ns), (4, 4000));
        assert!((s.mean_ns - 2500.0).abs() < 1e-9);
        let sd = Summary::of(&[1000.0, 2000.0, 3000.0, 4000.0]).unwrap().sd;
        assert!((s.sd_ns - sd).abs() < 1e-6);
        assert!(s.p50_ns >= 1990 && s.p50_ns <= 2010);
        let (samples, truncated) = r.into_samples();
        assert_eq!(samples, vec![1000, 2000, 3000]);
        assert!(truncated);
    }

    #[test]
    fn a_short_periodic_run_wakes_and_meets_deadlines() {
        // 5 ms periods with 0.5 ms of work for 200 ms, at a loop speed measured here.
        let rate = crate::calibration::measure_rate(
            &mut burn_loops,
            crate::calibration::RateBudget {
                chunk_ms: 1.0,
                budget_ms: 50.0,
                min_samples: 5,
                max_samples: 100,
            },
        );
        let burner = Burner {
            loops_per_ms: rate.per_ms as u64,
        };
        let profile = Profile::of(
            Bench::Custom,
            Some(CustomSpec {
                cpu_pct: 10,
                interval_us: 5000,
            }),
        )
        .unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let s2 = Arc::clone(&stop);
        let timer = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(200));
            s2.store(true, Ordering::Relaxed);
        });
        let mut lat = LatencyRecorder::new(1000, 1_000 * MS).unwrap();
        let out = run_periodic(profile, burner, &stop, Policy::Other, &mut lat).unwrap();
        timer.join().unwrap();
        let c = out.counts;
        // About 40 periods; loose bounds for a shared host.
        assert!(c.periods_done + c.periods_dropped >= 20, "{c:?}");
        assert!(c.deadlines_met > 0);
        assert!(lat.summary().count >= 10);
        assert_eq!(out.timer.wakeups, lat.summary().count);
        assert_eq!(out.timer.policy, Some(Policy::Other));
    }
}

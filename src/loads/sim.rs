//! The simulation engine: a periodic task woken by its timekeeper thread, and Gaming's
//! free-running frames. Used by the bench worker (measured) and by the Video, X and Custom
//! loads (not measured). Nothing here allocates once a simulation is running.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use anyhow::{anyhow, Context, Result};
use serde::{Deserialize, Serialize};

use crate::calibration::Burner;
use crate::model::interactive::deadline::{wake_latency_ns, Begin, DeadlineCounts, Schedule};
use crate::model::interactive::{
    interbench_sd, Bench, CustomSpec, LatencySummary, TimerStats, X_STEPS,
};
use crate::platform::clock::{monotonic_ns, sleep_until_ns};
use crate::platform::rusage::Usage;
use crate::platform::sched::{self, Policy};
use crate::platform::sem::Semaphore;
use crate::stats::LatencyHistogram;

const MS: u64 = 1_000_000;

/// What a periodic task does each period.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Profile {
    kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    /// `run_ns` of CPU every `interval_ns` (Audio, Video, Custom).
    Periodic { run_ns: u64, interval_ns: u64 },
    /// X, as interbench's emulate_x: step i (0 to 100, then again) burns i ms with an interval
    /// of (100 − i) ms, and the next step begins i ms after that interval's end — so each step
    /// spans 100 ms and the CPU asked for ramps from 0% to 100%.
    XRamp,
}

/// One period of a profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// CPU to burn.
    pub run_ns: u64,
    /// The interval passed to the deadline accounting (`periodic_schedule`'s).
    pub interval_ns: u64,
    /// Added to the next period's start after the period (X: its burn).
    pub advance_ns: u64,
    /// The time the period stands for: interval + advance.
    pub span_ns: u64,
}

impl Profile {
    /// The periodic profile of a bench; None for Gaming, which has no periods. The figures are
    /// interbench's (interbench.c: AUDIO_INTERVAL, VIDEO_INTERVAL, emulate_x, CUSTOM_RUN).
    pub fn of(bench: Bench, custom: Option<CustomSpec>) -> Option<Profile> {
        let periodic = |run_ns, interval_ns| Profile {
            kind: Kind::Periodic {
                run_ns,
                interval_ns,
            },
        };
        match bench {
            Bench::Audio => Some(periodic(50 * MS / 20, 50 * MS)),
            // interbench works in µs: 1000000 / 60 = 16666 µs, 40% of it 6666 µs.
            Bench::Video => Some(periodic(6_666_000, 16_666_000)),
            Bench::X => Some(Profile { kind: Kind::XRamp }),
            Bench::Custom => custom.map(|c| {
                let interval_ns = c.interval_us * 1000;
                periodic(interval_ns * u64::from(c.cpu_pct) / 100, interval_ns)
            }),
            Bench::Gaming => None,
        }
    }

    /// Period k.
    #[inline]
    pub fn step(&self, k: u64) -> Step {
        match self.kind {
            Kind::Periodic {
                run_ns,
                interval_ns,
            } => Step {
                run_ns,
                interval_ns,
                advance_ns: 0,
                span_ns: interval_ns,
            },
            Kind::XRamp => {
                let i = k % X_STEPS;
                Step {
                    run_ns: i * MS,
                    interval_ns: (100 - i) * MS,
                    advance_ns: i * MS,
                    span_ns: 100 * MS,
                }
            }
        }
    }

    /// The time one period stands for (X: 100 ms).
    pub fn span_ns(&self) -> u64 {
        self.step(0).span_ns
    }

    /// The fraction of one CPU the task asks for over a whole cycle.
    pub fn cpu_share(&self) -> f64 {
        match self.kind {
            Kind::Periodic {
                run_ns,
                interval_ns,
            } => run_ns as f64 / interval_ns as f64,
            Kind::XRamp => 0.5,
        }
    }

    pub fn is_x(&self) -> bool {
        self.kind == Kind::XRamp
    }
}

/// Gaming's frame: 100 ms of CPU, as interbench's GAME_RUN.
pub const GAME_FRAME_NS: u64 = 100 * MS;

/// Latency samples recorded without allocating: running moments, an HDR histogram, and the raw
/// samples up to a capacity fixed before the run.
pub struct LatencyRecorder {
    hist: LatencyHistogram,
    count: u64,
    mean: f64,
    m2: f64,
    /// Σx², as interbench's `sum_latency_squared`, for its SD.
    sum_sq: f64,
    max: u64,
    samples: Vec<u64>,
    truncated: bool,
}

impl LatencyRecorder {
    /// `capacity` raw samples are kept; the histogram covers up to `max_ns`.
    pub fn new(capacity: usize, max_ns: u64) -> Result<Self> {
        Ok(LatencyRecorder {
            hist: LatencyHistogram::new(max_ns)?,
            count: 0,
            mean: 0.0,
            m2: 0.0,
            sum_sq: 0.0,
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
        self.sum_sq += x * x;
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
            interbench_sd_ns: Some(interbench_sd(self.count, self.mean, self.sum_sq)),
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

/// What a periodic simulation measured.
pub struct PeriodicOutcome {
    pub counts: DeadlineCounts,
    pub timer: TimerStats,
    /// Nominal CPU asked for and the time it was asked over: Σ burns, Σ spans of the periods.
    pub asked_ns: u64,
    pub span_ns: u64,
}

/// Where a periodic simulation's figures go: interbench's latency per period, and beside it
/// the hand-off alone (the timekeeper's timer fired → the task it woke running) and the time
/// from the deadline to the task running (the timer's lateness included).
pub struct PeriodicRecorders<'a> {
    pub latency: &'a mut LatencyRecorder,
    pub wake: &'a mut LatencyRecorder,
    pub from_deadline: &'a mut LatencyRecorder,
    /// `--explain`: the trace instance's marker file, where the task writes each sample's
    /// deadline, timer and running instants (one short write a period, after the sample).
    pub marker: Option<&'a std::fs::File>,
}

/// What the task writes to a trace instance's `trace_marker` after each sample under
/// `--explain`: `hostbench-sample seq=K deadline=NS fired=NS ran=NS tk=TID`, CLOCK_MONOTONIC
/// times (the instance's trace clock), read back by `suites::trace`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marker {
    pub seq: u64,
    pub deadline_ns: u64,
    pub fired_ns: u64,
    pub ran_ns: u64,
    /// The timekeeper thread that woke the task.
    pub timekeeper: i32,
}

pub const MARKER_TAG: &str = "hostbench-sample";

impl Marker {
    /// Writes the marker's line into `buf`; returns its length (no allocation: the task writes
    /// one a period).
    pub fn format(&self, buf: &mut [u8; 128]) -> usize {
        use std::io::Write;
        let mut cursor = std::io::Cursor::new(&mut buf[..]);
        let _ = writeln!(
            cursor,
            "{MARKER_TAG} seq={} deadline={} fired={} ran={} tk={}",
            self.seq, self.deadline_ns, self.fired_ns, self.ran_ns, self.timekeeper
        );
        cursor.position() as usize
    }

    /// Writes the marker to the trace instance's marker file: one write(2) of a stack buffer
    /// (a refused write loses this marker only).
    pub fn write_to(&self, file: &std::fs::File) {
        let mut line = [0u8; 128];
        let n = self.format(&mut line);
        let _ = std::io::Write::write(&mut &*file, &line[..n]);
    }
}

/// How a simulation's timekeeper runs: as interbench v0.31 runs every timekeeper, the loads'
/// too — SCHED_FIFO 96 where permitted, and on the CPUs the run had before `-u` pinned it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Timekeeping {
    /// SCHED_FIFO at [`sched::TIMEKEEPER_PRIORITY`] (false: SCHED_OTHER, where this host
    /// forbids real-time).
    pub fifo: bool,
    /// The CPUs it puts itself on (`-u`: the whole mask, as interbench's timekeepers reset
    /// their affinity); None: it stays where its process is.
    pub cpus: Option<Vec<usize>>,
    /// `--relative-sleep`: sleep as v0.31's timekeeper does — for the time the task asked for,
    /// counted from when the request reached the timekeeper — so the task → timekeeper hand-off
    /// delays the wake-up and lands in the latency (its lateness is counted from the end of
    /// that relative sleep, as v0.31 counts it). False: to the absolute deadline.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub relative: bool,
}

impl Timekeeping {
    fn policy(&self) -> Policy {
        if self.fifo {
            Policy::Fifo {
                priority: sched::TIMEKEEPER_PRIORITY,
            }
        } else {
            Policy::Other
        }
    }
}

struct TimekeeperShared {
    /// The deadline the task sleeps to, and how long that was from when it asked.
    wake_at_ns: AtomicU64,
    sleep_ns: AtomicU64,
    /// When the timekeeper's timer fired, and how late that was for the time it slept to.
    woke_at_ns: AtomicU64,
    late_ns: AtomicU64,
    /// Posted once the timekeeper has set itself up (affinity, policy) and waits for work.
    ready: Semaphore,
    start: Semaphore,
    done: Semaphore,
    quit: AtomicBool,
    delays: HandOffDelays,
    /// The timekeeper's thread id, for the trace markers.
    tid: std::sync::atomic::AtomicI32,
}

/// Waits the timekeeper adds to the hand-offs: none, but for the tests that slow one by a known
/// time (`run_periodic_delayed`).
#[derive(Debug, Clone, Copy, Default)]
struct HandOffDelays {
    /// Between taking the task's request and starting its sleep (task → timekeeper).
    pickup_ns: u64,
    /// Between its timer firing and waking the task (timekeeper → task).
    post_ns: u64,
}

/// The timekeeper thread, as interbench's `timekeeping_thread`: takes each deadline the task
/// hands it, sleeps to it with an absolute-time `clock_nanosleep` at its real-time priority,
/// notes how late its own timer fired, and posts the semaphore that wakes the task.
fn timekeeper(shared: Arc<TimekeeperShared>, how: Timekeeping) -> TimerStats {
    sched::name_current_thread("hb-timekeeper");
    let tid = i32::try_from(sched::current_tid()).unwrap_or(0);
    shared.tid.store(tid, Ordering::Release);
    sched::set_timer_slack_ns(1);
    if let Some(cpus) = &how.cpus {
        // As interbench's: "set affinity back to normal in case it was set on our parent".
        let _ = sched::set_current_thread_cpus(cpus);
    }
    // Refused (no privilege), it runs SCHED_OTHER, and says so: its policy is what it reads.
    let _ = sched::set_current_thread_policy(how.policy());
    let mut stats = TimerStats {
        policy: Some(sched::current_thread_policy()),
        ..TimerStats::default()
    };
    let before = Usage::thread();
    let mut sum = 0.0;
    shared.ready.post();
    loop {
        shared.start.wait();
        if shared.quit.load(Ordering::Acquire) {
            break;
        }
        if shared.delays.pickup_ns > 0 {
            sleep_until_ns(monotonic_ns() + shared.delays.pickup_ns);
        }
        let target = if how.relative {
            monotonic_ns() + shared.sleep_ns.load(Ordering::Acquire)
        } else {
            shared.wake_at_ns.load(Ordering::Acquire)
        };
        sleep_until_ns(target);
        let woke = monotonic_ns();
        let over = woke.saturating_sub(target);
        shared.woke_at_ns.store(woke, Ordering::Release);
        shared.late_ns.store(over, Ordering::Release);
        if shared.delays.post_ns > 0 {
            sleep_until_ns(woke + shared.delays.post_ns);
        }
        shared.done.post();
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

/// Runs a periodic simulation on the calling thread until `stop` is set, with a timekeeper run
/// as `timekeeping` says, accounting each period as interbench's `periodic_schedule()` does
/// (see `deadline.rs`).
///
/// The wake-up is interbench's: the task hands the time it must sleep to to its timekeeper and
/// blocks on a semaphore; the timekeeper sleeps to that time and posts the semaphore. A sample
/// is the time from the deadline to the task running, less the timekeeper's own lateness
/// (its timer is the kernel's, not the scheduler's), plus the missed intervals of the deadline
/// accounting — so it holds the hand-off from one thread to another that interbench's
/// readme measures ("the time from this sleep till the simulated task gets scheduled"). The
/// timers' slack is 1 ns, as a real-time thread's is, so the kernel does not defer a wake-up
/// to batch timers.
///
/// `gate` is called once the timekeeper is made and set up, before the first period: the
/// bench worker's waits there for `start`, as interbench's task and timekeeper are made when
/// its benched process starts and then wait for main's word.
pub fn run_periodic(
    profile: Profile,
    burner: Burner,
    stop: &AtomicBool,
    timekeeping: Timekeeping,
    rec: PeriodicRecorders<'_>,
    gate: &dyn Fn(),
) -> Result<PeriodicOutcome> {
    run_periodic_delayed(
        profile,
        burner,
        stop,
        timekeeping,
        rec,
        HandOffDelays::default(),
        gate,
    )
}

/// [`run_periodic`], the timekeeper's hand-offs slowed by known times, which a test finds in
/// the latency and not in the timer's lateness.
fn run_periodic_delayed(
    profile: Profile,
    burner: Burner,
    stop: &AtomicBool,
    timekeeping: Timekeeping,
    rec: PeriodicRecorders<'_>,
    delays: HandOffDelays,
    gate: &dyn Fn(),
) -> Result<PeriodicOutcome> {
    let shared = Arc::new(TimekeeperShared {
        wake_at_ns: AtomicU64::new(0),
        sleep_ns: AtomicU64::new(0),
        woke_at_ns: AtomicU64::new(0),
        late_ns: AtomicU64::new(0),
        ready: Semaphore::new(0)?,
        start: Semaphore::new(0)?,
        done: Semaphore::new(0)?,
        quit: AtomicBool::new(false),
        delays,
        tid: std::sync::atomic::AtomicI32::new(0),
    });
    let tk_shared = Arc::clone(&shared);
    let tk = std::thread::Builder::new()
        .name("hb-timekeeper".into())
        .stack_size(256 * 1024)
        .spawn(move || timekeeper(tk_shared, timekeeping))
        .context("starting the timekeeper thread")?;
    sched::set_timer_slack_ns(1);
    shared.ready.wait();
    gate();

    let mut schedule = Schedule::new(monotonic_ns());
    // When the task ran after the sleep before the current period (None: it did not sleep),
    // and how late the timer fired on that sleep.
    let mut ran_after_sleep = None;
    let mut oversleep = 0;
    let (mut asked_ns, mut span_ns) = (0u64, 0u64);
    let mut k = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let step = profile.step(k);
        k += 1;
        let now = monotonic_ns();
        let ran = ran_after_sleep.take().unwrap_or(now);
        let wake = wake_latency_ns(ran, schedule.period_start_ns(), oversleep);
        let (missed_ns, sleep_to) = match schedule.begin(now, step.interval_ns) {
            Begin::Skip { missed_ns } => (missed_ns, Some(schedule.sleep_until_ns())),
            Begin::Burn => {
                burner.burn_ns(step.run_ns);
                let end = schedule.end(monotonic_ns(), step.interval_ns);
                (end.missed_ns, end.sleep_until_ns)
            }
        };
        schedule.advance(step.advance_ns);
        asked_ns += step.run_ns;
        span_ns += step.span_ns;
        rec.latency.record(wake + missed_ns);
        oversleep = 0;
        let Some(target) = sleep_to else {
            continue;
        };
        if stop.load(Ordering::Relaxed) {
            break;
        }
        shared.wake_at_ns.store(target, Ordering::Release);
        shared
            .sleep_ns
            .store(target.saturating_sub(monotonic_ns()), Ordering::Release);
        shared.start.post();
        // Woken by the timekeeper, never by a timer of its own.
        shared.done.wait();
        let ran = monotonic_ns();
        let fired = shared.woke_at_ns.load(Ordering::Acquire);
        oversleep = shared.late_ns.load(Ordering::Acquire);
        ran_after_sleep = Some(ran);
        rec.wake.record(ran.saturating_sub(fired));
        rec.from_deadline.record(ran.saturating_sub(target));
        if let Some(file) = rec.marker {
            let marker = Marker {
                seq: k,
                deadline_ns: target,
                fired_ns: fired,
                ran_ns: ran,
                timekeeper: shared.tid.load(Ordering::Acquire),
            };
            marker.write_to(file);
        }
    }
    shared.quit.store(true, Ordering::Release);
    shared.start.post();
    let timer = tk
        .join()
        .map_err(|_| anyhow!("the timekeeper thread panicked"))?;
    Ok(PeriodicOutcome {
        counts: schedule.counts,
        timer,
        asked_ns,
        span_ns,
    })
}

/// Gaming: burns 100 ms frames back to back until `stop`, as interbench's emulate_game. A
/// frame's latency is how much longer than its 100 ms of CPU it took; interbench counted the
/// CPU received and the overruns in µs as its achieved and missed burns, so % desired CPU =
/// CPU received / (CPU received + overruns). There are no deadlines.
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
        counts.periods += 1;
        counts.burns_achieved += GAME_FRAME_NS / 1000;
        counts.burns_missed += overrun / 1000;
    }
    counts
}

/// Expected number of latency samples of a bench over `duration_ns`, with room to spare.
pub fn expected_samples(bench: Bench, custom: Option<CustomSpec>, duration_ns: u64) -> usize {
    let span = Profile::of(bench, custom).map_or(GAME_FRAME_NS / 4, |p| p.span_ns());
    (duration_ns / span.max(1)) as usize * 2 + 1024
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
    use crate::calibration::burn_loops;
    use crate::stats::Summary;

    #[test]
    fn the_recorder_keeps_the_true_sd_and_interbenchs() {
        let mut r = LatencyRecorder::new(4, 1_000_000).unwrap();
        for x in [1, 2, 3, 4] {
            r.record(x);
        }
        let s = r.summary();
        assert!((s.sd_ns - (5.0f64 / 3.0).sqrt()).abs() < 1e-9, "{s:?}");
        assert!(
            (s.interbench_sd_ns.unwrap() - 3.078_826).abs() < 1e-6,
            "{s:?}"
        );
    }

    #[test]
    fn profiles_match_interbench() {
        let a = Profile::of(Bench::Audio, None).unwrap().step(7);
        assert_eq!(
            (a.run_ns, a.interval_ns, a.advance_ns),
            (2_500_000, 50 * MS, 0)
        );
        let v = Profile::of(Bench::Video, None).unwrap();
        assert_eq!(
            (v.step(0).run_ns, v.step(0).interval_ns),
            (6_666_000, 16_666_000)
        );
        // X: step i burns i ms with a (100 − i) ms interval and moves the next start i ms on.
        let x = Profile::of(Bench::X, None).unwrap();
        let s37 = x.step(37);
        assert_eq!(
            (s37.run_ns, s37.interval_ns, s37.advance_ns, s37.span_ns),
            (37 * MS, 63 * MS, 37 * MS, 100 * MS)
        );
        assert_eq!(x.step(100).interval_ns, 0);
        assert_eq!(x.step(101), x.step(0));
        assert!(Profile::of(Bench::Gaming, None).is_none());
        assert!(Profile::of(Bench::Custom, None).is_none());
        let c = Profile::of(
            Bench::Custom,
            Some(CustomSpec {
                cpu_pct: 25,
                interval_us: 10_000,
            }),
        )
        .unwrap()
        .step(5);
        assert_eq!((c.interval_ns, c.run_ns), (10 * MS, 2_500_000));
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

    /// The chain loop at a speed measured here for `budget_ms`.
    fn measured_burner(budget_ms: f64) -> Burner {
        let rate = crate::calibration::measure_rate(
            &mut burn_loops,
            crate::calibration::RateBudget {
                chunk_ms: 1.0,
                budget_ms,
                min_samples: 5,
                max_samples: 100,
                rest_ms: 0.0,
            },
        );
        Burner {
            loops_per_ms: rate.per_ms as u64,
            burn_loop: crate::calibration::BurnLoop::Chain,
        }
    }

    /// A stop flag set after `ms`, and the thread that sets it.
    fn stop_after(ms: u64) -> (Arc<AtomicBool>, std::thread::JoinHandle<()>) {
        let stop = Arc::new(AtomicBool::new(false));
        let s2 = Arc::clone(&stop);
        let timer = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(ms));
            s2.store(true, Ordering::Relaxed);
        });
        (stop, timer)
    }

    #[test]
    fn a_short_periodic_run_wakes_and_meets_deadlines() {
        // 5 ms periods with 0.5 ms of work for 200 ms, at a loop speed measured here.
        let burner = measured_burner(50.0);
        let profile = Profile::of(
            Bench::Custom,
            Some(CustomSpec {
                cpu_pct: 10,
                interval_us: 5000,
            }),
        )
        .unwrap();
        let (stop, timer) = stop_after(200);
        let new = || LatencyRecorder::new(1000, 1_000 * MS).unwrap();
        let (mut lat, mut wake, mut from_deadline) = (new(), new(), new());
        let recorders = PeriodicRecorders {
            latency: &mut lat,
            wake: &mut wake,
            from_deadline: &mut from_deadline,
            marker: None,
        };
        let out = run_periodic(
            profile,
            burner,
            &stop,
            Timekeeping::default(),
            recorders,
            &|| {},
        )
        .unwrap();
        timer.join().unwrap();
        let c = out.counts;
        // About 40 periods; loose bounds for a shared host.
        assert!(c.periods >= 20, "{c:?}");
        assert!(c.deadlines_met > 0);
        assert_eq!(lat.summary().count, c.periods);
        // A wake-up sample for every sleep, which the timekeeper slept too.
        assert_eq!(out.timer.wakeups, wake.summary().count);
        assert_eq!(wake.summary().count, from_deadline.summary().count);
        assert!(wake.summary().count + 1 >= c.periods);
        // Deadline → running includes the timer's lateness: never below the pure wake-up.
        assert!(from_deadline.summary().mean_ns >= wake.summary().mean_ns);
        assert_eq!(out.timer.policy, Some(Policy::Other));
        assert!((sim_pct(out.asked_ns, out.span_ns) - 10.0).abs() < 1e-9);
    }

    /// A Custom task (1 ms every 20 ms) for 400 ms whose timekeeper (sleeping to the deadline,
    /// or relatively as v0.31's with `relative`) is slowed by `delays`, on a thread of its own
    /// (SCHED_FIFO 95 with `realtime`, where permitted): its latency, wake-up and timer
    /// summaries.
    fn handed_off(
        delays: HandOffDelays,
        realtime: bool,
        relative: bool,
    ) -> (LatencySummary, LatencySummary, TimerStats) {
        std::thread::spawn(move || {
            if realtime && sched::can_use_fifo() {
                sched::set_current_thread_policy(Policy::Fifo {
                    priority: sched::RT_BENCH_PRIORITY,
                })
                .unwrap();
            }
            let burner = measured_burner(30.0);
            let profile = Profile::of(
                Bench::Custom,
                Some(CustomSpec {
                    cpu_pct: 5,
                    interval_us: 20_000,
                }),
            )
            .unwrap();
            let (stop, timer) = stop_after(400);
            let new = || LatencyRecorder::new(100, 1_000 * MS).unwrap();
            let (mut lat, mut wake, mut from_deadline) = (new(), new(), new());
            let out = run_periodic_delayed(
                profile,
                burner,
                &stop,
                Timekeeping {
                    fifo: sched::can_use_fifo(),
                    cpus: None,
                    relative,
                },
                PeriodicRecorders {
                    latency: &mut lat,
                    wake: &mut wake,
                    from_deadline: &mut from_deadline,
                    marker: None,
                },
                delays,
                &|| {},
            )
            .unwrap();
            timer.join().unwrap();
            (lat.summary(), wake.summary(), out.timer)
        })
        .join()
        .unwrap()
    }

    /// The timer's mean lateness without its largest: one stall of a busy host must not decide
    /// it.
    fn mean_but_max(timer: &TimerStats) -> f64 {
        let n = timer.wakeups as f64;
        (timer.mean_oversleep_ns * n - timer.max_oversleep_ns as f64) / (n - 1.0)
    }

    #[test]
    fn the_task_is_woken_by_its_timekeeper_and_the_hand_off_is_in_its_latency() {
        const DELAY: u64 = 8 * MS;
        let delays = HandOffDelays {
            pickup_ns: 0,
            post_ns: DELAY,
        };
        for realtime in [false, true] {
            let (lat, wake, timer) = handed_off(delays, realtime, false);
            // Every sleep's wake-up waited for the timekeeper's post: the delay is in every
            // latency sample and every hand-off sample...
            assert!(lat.count >= 10, "{lat:?}");
            assert!(wake.p50_ns >= DELAY, "realtime {realtime}: {wake:?}");
            // (A task that woke itself would show the delay in no latency sample: the delay
            // is far above this host's wake-up latency, whatever else runs.)
            assert!(lat.p50_ns >= DELAY, "realtime {realtime}: {lat:?}");
            // ...and not in the timer's lateness, which ends when the timekeeper's timer fired.
            assert!(
                mean_but_max(&timer) < DELAY as f64 / 2.0,
                "realtime {realtime}: {timer:?}"
            );
        }
    }

    #[test]
    fn a_relative_sleep_puts_the_request_hand_off_into_the_latency_as_v031s() {
        // The timekeeper takes 8 ms to start sleeping after the task asked (of a ~19 ms sleep).
        const DELAY: u64 = 8 * MS;
        let delays = HandOffDelays {
            pickup_ns: DELAY,
            post_ns: 0,
        };
        // To the absolute deadline: the late start costs nothing.
        let (lat, _, timer) = handed_off(delays, true, false);
        assert!(lat.count >= 10, "{lat:?}");
        assert!(lat.p50_ns < DELAY / 2, "absolute: {lat:?}");
        assert!(
            mean_but_max(&timer) < DELAY as f64 / 2.0,
            "absolute: {timer:?}"
        );
        // Relative, as v0.31: the timekeeper wakes the task that much after its deadline, and
        // the timer's lateness (counted from the end of its own sleep) does not hold it.
        let (lat, _, timer) = handed_off(delays, true, true);
        assert!(lat.p50_ns >= DELAY, "relative: {lat:?}");
        assert!(
            mean_but_max(&timer) < DELAY as f64 / 2.0,
            "relative: {timer:?}"
        );
    }

    fn sim_pct(a: u64, b: u64) -> f64 {
        cpu_pct(a, b)
    }
}

//! Deadline accounting of a periodic simulated task, as interbench's `periodic_schedule()`
//! does it (interbench.c, v0.31), kept apart from any clock so it can be tested on synthetic
//! timelines. [`Schedule`] says how a period is counted.

use serde::{Deserialize, Serialize};

/// interbench's counters of one task (its `struct data_table`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeadlineCounts {
    pub deadlines_met: u64,
    pub deadlines_missed: u64,
    /// Burns done and burns missed (Gaming: µs of CPU received and of overrun, as interbench
    /// counted them).
    pub burns_achieved: u64,
    pub burns_missed: u64,
    /// Periods (calls of `periodic_schedule`), one latency sample each.
    pub periods: u64,
}

impl DeadlineCounts {
    /// interbench's `% Desired CPU`: achieved / (achieved + missed) burns; 0 before any burn.
    pub fn desired_cpu_pct(&self) -> f64 {
        if self.burns_achieved == 0 {
            0.0
        } else {
            100.0 * self.burns_achieved as f64 / (self.burns_achieved + self.burns_missed) as f64
        }
    }

    /// interbench's `% Deadlines Met`: met / (met + missed); 0 when none was met.
    pub fn deadlines_met_pct(&self) -> f64 {
        if self.deadlines_met == 0 {
            0.0
        } else {
            100.0 * self.deadlines_met as f64 / (self.deadlines_met + self.deadlines_missed) as f64
        }
    }
}

/// Whether a period's work is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Begin {
    /// Burn the period's CPU, then call [`Schedule::end`].
    Burn,
    /// The period was missed before it could start: no burn; `missed_ns` of missed latency.
    Skip { missed_ns: u64 },
}

/// How a period ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct End {
    /// Whole intervals missed, in ns: added to the period's latency sample.
    pub missed_ns: u64,
    /// Sleep until this time (the next period's start); None: go straight on (interval 0).
    pub sleep_until_ns: Option<u64>,
}

/// One task's schedule.
///
/// The state is one time, `deadline`: on entry to a period, the time the period began (the
/// time the task was to be woken). When the task runs at `now`:
///
/// 1. if it is already later than `deadline + interval`, the period's work is not done at all:
///    the period and every whole interval since are **missed deadlines** and **missed burns**,
///    and each adds one whole interval to the period's latency ("missed latency");
/// 2. otherwise it burns the period's CPU (an **achieved burn**); the deadline moves one
///    interval on; finishing by it is a **deadline met**; finishing after it misses
///    `(now − deadline) / interval + 1` deadlines, each adding one whole interval to the
///    latency, and — when more than one — as many missed burns;
/// 3. the task sleeps until the (moved) deadline, the start of its next period.
///
/// Each period gives one latency sample: the wake-up delay (how late the task ran after its
/// timer fired) plus the missed latency. `% Desired CPU` = achieved / (achieved + missed)
/// burns; `% Deadlines Met` = met / (met + missed). An interval of 0 (X's 100% step) never
/// sleeps and counts neither way.
#[derive(Debug, Clone)]
pub struct Schedule {
    deadline_ns: u64,
    pub counts: DeadlineCounts,
}

impl Schedule {
    /// The first period begins at `start_ns`.
    pub fn new(start_ns: u64) -> Self {
        Schedule {
            deadline_ns: start_ns,
            counts: DeadlineCounts::default(),
        }
    }

    /// When the current period began (interbench's `deadline` on entry).
    pub fn period_start_ns(&self) -> u64 {
        self.deadline_ns
    }

    /// Step 1: the task runs at `now_ns` for a period of `interval_ns`.
    pub fn begin(&mut self, now_ns: u64, interval_ns: u64) -> Begin {
        self.counts.periods += 1;
        if interval_ns > 0 && now_ns > self.deadline_ns + interval_ns {
            self.deadline_ns += interval_ns;
            let intervals = (now_ns - self.deadline_ns) / interval_ns + 1;
            self.counts.deadlines_missed += intervals;
            self.counts.burns_missed += intervals;
            self.deadline_ns += intervals * interval_ns;
            return Begin::Skip {
                missed_ns: intervals * interval_ns,
            };
        }
        Begin::Burn
    }

    /// Step 2: the burn ended at `now_ns`.
    pub fn end(&mut self, now_ns: u64, interval_ns: u64) -> End {
        self.counts.burns_achieved += 1;
        self.deadline_ns += interval_ns;
        if self.deadline_ns >= now_ns {
            self.counts.deadlines_met += 1;
            return End {
                missed_ns: 0,
                sleep_until_ns: Some(self.deadline_ns),
            };
        }
        if interval_ns == 0 {
            self.deadline_ns = now_ns;
            return End {
                missed_ns: 0,
                sleep_until_ns: None,
            };
        }
        let intervals = (now_ns - self.deadline_ns) / interval_ns + 1;
        self.counts.deadlines_missed += intervals;
        if intervals > 1 {
            self.counts.burns_missed += intervals;
        }
        self.deadline_ns += intervals * interval_ns;
        End {
            missed_ns: intervals * interval_ns,
            sleep_until_ns: Some(self.deadline_ns),
        }
    }

    /// After a skipped period: sleep until the next period's start.
    pub fn sleep_until_ns(&self) -> u64 {
        self.deadline_ns
    }

    /// Moves the next period's start on (X adds its burn to the deadline after each period).
    pub fn advance(&mut self, ns: u64) {
        self.deadline_ns += ns;
    }
}

/// The wake-up part of interbench's latency: how late the task ran (`now_ns`) after its
/// period began (`period_start_ns`) and after the timer's own oversleep past the time it was
/// set for; 0 when it ran earlier.
pub fn wake_latency_ns(now_ns: u64, period_start_ns: u64, oversleep_ns: u64) -> u64 {
    now_ns.saturating_sub(period_start_ns + oversleep_ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;
    const AUDIO: u64 = 50 * MS;

    /// Runs one period of Audio (2.5 ms of work) that starts running at `run_at` and burns
    /// until `run_at + burn`; returns the latency sample and where it sleeps to.
    fn audio_period(s: &mut Schedule, run_at: u64, burn: u64) -> (u64, Option<u64>) {
        let wake = wake_latency_ns(run_at, s.period_start_ns(), 0);
        match s.begin(run_at, AUDIO) {
            Begin::Skip { missed_ns } => (wake + missed_ns, Some(s.sleep_until_ns())),
            Begin::Burn => {
                let e = s.end(run_at + burn, AUDIO);
                (wake + e.missed_ns, e.sleep_until_ns)
            }
        }
    }

    #[test]
    fn a_period_on_time_meets_its_deadline_and_samples_its_wake_up() {
        let mut s = Schedule::new(0);
        // Runs 0.1 ms late, burns 2.5 ms: met; sleeps to the next period at 50 ms.
        assert_eq!(
            audio_period(&mut s, MS / 10, 5 * MS / 2),
            (MS / 10, Some(50 * MS))
        );
        // Finishing exactly on the deadline still meets it.
        assert_eq!(audio_period(&mut s, 50 * MS, 50 * MS), (0, Some(100 * MS)));
        let c = s.counts;
        assert_eq!((c.deadlines_met, c.deadlines_missed, c.periods), (2, 0, 2));
        assert_eq!((c.desired_cpu_pct(), c.deadlines_met_pct()), (100.0, 100.0));
    }

    #[test]
    fn a_burn_that_ends_late_misses_whole_intervals_and_adds_them_to_the_latency() {
        let mut s = Schedule::new(0);
        // Ran at 45 ms (45 ms late), finished at 52.5 ms: the 50 ms deadline is missed by one
        // interval, so the sample is 45 ms + 50 ms and the next period starts at 100 ms.
        assert_eq!(
            audio_period(&mut s, 45 * MS, 7_500_000),
            (95 * MS, Some(100 * MS))
        );
        let c = s.counts;
        assert_eq!((c.deadlines_met, c.deadlines_missed), (0, 1));
        // One interval late: the burn was done, no burn missed.
        assert_eq!((c.burns_achieved, c.burns_missed), (1, 0));
        assert_eq!((c.desired_cpu_pct(), c.deadlines_met_pct()), (100.0, 0.0));
    }

    #[test]
    fn a_task_that_runs_after_its_next_deadline_skips_the_burn() {
        let mut s = Schedule::new(0);
        // First ran at 170 ms: past 0 + 50 ms. deadline 50 → (170 − 50)/50 + 1 = 3 intervals
        // missed; 150 ms of missed latency plus 170 ms of wake-up delay.
        assert_eq!(
            audio_period(&mut s, 170 * MS, 0),
            (320 * MS, Some(200 * MS))
        );
        let c = s.counts;
        assert_eq!(
            (c.deadlines_missed, c.burns_missed, c.burns_achieved),
            (3, 3, 0)
        );
        // No burn achieved: interbench's % desired CPU is 0, and so is % deadlines met.
        assert_eq!((c.desired_cpu_pct(), c.deadlines_met_pct()), (0.0, 0.0));
        // The next period, on time, burns and meets its deadline.
        assert_eq!(
            audio_period(&mut s, 200 * MS, 5 * MS / 2),
            (0, Some(250 * MS))
        );
        assert_eq!(s.counts.desired_cpu_pct(), 25.0);
    }

    #[test]
    fn a_burn_longer_than_its_interval_misses_every_period_by_whole_intervals() {
        // A Custom task at 150% of a 10 ms period: each 15 ms burn ends past its deadline by
        // 5 ms, i.e. one interval, and the next period starts 20 ms after the last began.
        let interval = 10 * MS;
        let mut s = Schedule::new(0);
        let mut now = 0;
        for k in 0..10u64 {
            assert_eq!(s.period_start_ns(), 20 * MS * k);
            assert_eq!(s.begin(now, interval), Begin::Burn);
            let e = s.end(now + 15 * MS, interval);
            assert_eq!(e.missed_ns, interval);
            now = e.sleep_until_ns.unwrap();
        }
        let c = s.counts;
        assert_eq!((c.deadlines_met, c.deadlines_missed), (0, 10));
        assert_eq!(c.deadlines_met_pct(), 0.0);
        assert_eq!(c.desired_cpu_pct(), 100.0);
    }

    #[test]
    fn x_steps_follow_emulate_x() {
        // Step i: i ms of burn with a (100 − i) ms interval, then the deadline moves i ms on.
        let mut s = Schedule::new(0);
        // i = 30 on an idle CPU: burns 30 ms by the 70 ms deadline; sleeps to 70, next at 100.
        assert_eq!(s.begin(0, 70 * MS), Begin::Burn);
        let e = s.end(30 * MS, 70 * MS);
        assert_eq!((e.missed_ns, e.sleep_until_ns), (0, Some(70 * MS)));
        s.advance(30 * MS);
        assert_eq!(s.period_start_ns(), 100 * MS);
        // Woken at 70 ms for a period that begins at 100 ms: no wake-up latency counted.
        assert_eq!(wake_latency_ns(70 * MS, s.period_start_ns(), 0), 0);
        // i = 60 from 200 ms: the 40 ms interval ends before the 60 ms burn does.
        let mut s = Schedule::new(200 * MS);
        s.begin(200 * MS, 40 * MS);
        let e = s.end(260 * MS, 40 * MS);
        assert_eq!((e.missed_ns, e.sleep_until_ns), (40 * MS, Some(280 * MS)));
        // i = 100: no interval, no sleep, neither met nor missed.
        let mut s = Schedule::new(0);
        s.begin(0, 0);
        let e = s.end(100 * MS, 0);
        assert_eq!(e.sleep_until_ns, None);
        assert_eq!((s.counts.deadlines_met, s.counts.deadlines_missed), (0, 0));
        s.advance(100 * MS);
        assert_eq!(s.period_start_ns(), 200 * MS);
    }

    #[test]
    fn the_timers_oversleep_is_not_the_tasks_latency() {
        // Period began at 100 ms; the timer fired 0.3 ms late; the task ran 0.05 ms after that.
        assert_eq!(wake_latency_ns(100_350_000, 100 * MS, 300_000), 50_000);
        assert_eq!(wake_latency_ns(99 * MS, 100 * MS, 0), 0);
    }

    #[test]
    fn empty_counts() {
        let c = DeadlineCounts::default();
        assert_eq!((c.desired_cpu_pct(), c.deadlines_met_pct()), (0.0, 0.0));
    }
}

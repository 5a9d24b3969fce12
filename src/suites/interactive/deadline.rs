//! Deadline accounting of a periodic simulated task, kept apart from any clock so it can be
//! tested on synthetic timelines.
//!
//! The rule. Period k starts at `origin + k × interval` and its deadline is the start of period
//! k + 1. The task sleeps until its period starts, is woken, and when it gets the CPU:
//!
//! 1. if one or more deadlines have already passed, those periods' work is **dropped** (each
//!    counts as a missed deadline and as work not done), and the task moves to the period that
//!    is now running — a player that is late drops frames to catch up;
//! 2. it does the period's work (burns the period's CPU share);
//! 3. finishing at or before the period's deadline is a **deadline met**; finishing after it is a
//!    deadline missed (the work itself was done and counts as done);
//! 4. if the next period has not started yet, the task sleeps until it starts; if it has (the
//!    work ran late), the task goes straight on with it, through step 1.
//!
//! % desired CPU = work done / (work done + work dropped), in CPU time; % deadlines met = met /
//! (met + missed). interbench kept the same two ratios but counted burns rather than CPU time
//! (the same thing when every period's work is equal, which is so except for X), skipped the
//! period already under way after a late finish without counting it, and added the missed
//! intervals to the latency figure; hostbench's latency is the wake-up delay alone.

use serde::{Deserialize, Serialize};

/// Counters of a periodic task's deadlines and work.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeadlineCounts {
    pub deadlines_met: u64,
    pub deadlines_missed: u64,
    /// Periods whose work was done, and dropped.
    pub periods_done: u64,
    pub periods_dropped: u64,
    /// CPU work done and dropped, in ns of nominal (calibrated) CPU time.
    pub work_done_ns: u64,
    pub work_dropped_ns: u64,
}

impl DeadlineCounts {
    pub fn desired_cpu_pct(&self) -> f64 {
        let total = self.work_done_ns + self.work_dropped_ns;
        if total == 0 {
            // A task with no work to do (X's 0% steps) had all the CPU it wanted.
            100.0
        } else {
            100.0 * self.work_done_ns as f64 / total as f64
        }
    }

    pub fn deadlines_met_pct(&self) -> f64 {
        let total = self.deadlines_met + self.deadlines_missed;
        if total == 0 {
            0.0
        } else {
            100.0 * self.deadlines_met as f64 / total as f64
        }
    }
}

/// The timeline of one periodic task.
#[derive(Debug, Clone)]
pub struct DeadlineTracker {
    origin_ns: u64,
    interval_ns: u64,
    period: u64,
    pub counts: DeadlineCounts,
}

impl DeadlineTracker {
    /// Period 0 starts at `origin_ns`.
    pub fn new(origin_ns: u64, interval_ns: u64) -> Self {
        DeadlineTracker {
            origin_ns,
            interval_ns: interval_ns.max(1),
            period: 0,
            counts: DeadlineCounts::default(),
        }
    }

    /// The current period's index.
    pub fn period(&self) -> u64 {
        self.period
    }

    pub fn period_start_ns(&self) -> u64 {
        self.origin_ns + self.period * self.interval_ns
    }

    pub fn deadline_ns(&self) -> u64 {
        self.period_start_ns() + self.interval_ns
    }

    /// Step 1: the task got the CPU at `now_ns`. Drops every period whose deadline has passed
    /// and returns how many were dropped. `work_of(k)` is period k's nominal work in ns.
    pub fn catch_up(&mut self, now_ns: u64, work_of: impl Fn(u64) -> u64) -> u64 {
        let deadline = self.deadline_ns();
        if now_ns <= deadline {
            return 0;
        }
        let dropped = (now_ns - deadline) / self.interval_ns + 1;
        for k in self.period..self.period + dropped {
            self.counts.work_dropped_ns += work_of(k);
        }
        self.counts.periods_dropped += dropped;
        self.counts.deadlines_missed += dropped;
        self.period += dropped;
        dropped
    }

    /// Steps 3 and 4: the current period's work (`work_ns`) finished at `end_ns`. Returns the
    /// start of the next period if the task should sleep until then, None if it has begun.
    pub fn finish(&mut self, end_ns: u64, work_ns: u64) -> Option<u64> {
        if end_ns <= self.deadline_ns() {
            self.counts.deadlines_met += 1;
        } else {
            self.counts.deadlines_missed += 1;
        }
        self.counts.periods_done += 1;
        self.counts.work_done_ns += work_ns;
        self.period += 1;
        let next = self.period_start_ns();
        (end_ns < next).then_some(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    /// Audio: 50 ms periods, 2.5 ms of work.
    fn audio() -> DeadlineTracker {
        DeadlineTracker::new(0, 50 * MS)
    }

    #[test]
    fn met_when_work_finishes_in_its_period() {
        let mut t = audio();
        assert_eq!(t.catch_up(MS / 10, |_| 5 * MS / 2), 0);
        assert_eq!(t.finish(3 * MS, 5 * MS / 2), Some(50 * MS));
        // Finishing exactly on the deadline still meets it.
        assert_eq!(t.catch_up(50 * MS, |_| 5 * MS / 2), 0);
        assert_eq!(t.finish(100 * MS, 5 * MS / 2), None);
        let c = t.counts;
        assert_eq!((c.deadlines_met, c.deadlines_missed), (2, 0));
        assert_eq!(c.desired_cpu_pct(), 100.0);
        assert_eq!(c.deadlines_met_pct(), 100.0);
    }

    #[test]
    fn one_missed_deadline_when_work_ends_late() {
        let mut t = audio();
        t.catch_up(45 * MS, |_| 5 * MS / 2);
        // Woke late, work ends 2.5 ms past the 50 ms deadline: done, but missed.
        assert_eq!(t.finish(52_500_000, 5 * MS / 2), None);
        // Period 1 began at 50 ms: it runs at once and meets its 100 ms deadline.
        assert_eq!(t.catch_up(52_500_000, |_| 5 * MS / 2), 0);
        assert_eq!(t.finish(55 * MS, 5 * MS / 2), Some(100 * MS));
        let c = t.counts;
        assert_eq!((c.deadlines_met, c.deadlines_missed), (1, 1));
        assert_eq!((c.periods_done, c.periods_dropped), (2, 0));
        assert_eq!(c.desired_cpu_pct(), 100.0);
        assert_eq!(c.deadlines_met_pct(), 50.0);
    }

    #[test]
    fn several_missed_periods_are_dropped() {
        let mut t = audio();
        // Woken for period 0 but first ran at 170 ms: deadlines at 50, 100 and 150 ms passed.
        assert_eq!(t.catch_up(170 * MS, |_| 5 * MS / 2), 3);
        assert_eq!(t.period(), 3);
        assert_eq!(t.period_start_ns(), 150 * MS);
        assert_eq!(t.finish(172_500_000, 5 * MS / 2), Some(200 * MS));
        let c = t.counts;
        assert_eq!((c.deadlines_met, c.deadlines_missed), (1, 3));
        assert_eq!((c.periods_done, c.periods_dropped), (1, 3));
        assert_eq!(c.desired_cpu_pct(), 25.0);
        assert_eq!(c.deadlines_met_pct(), 25.0);
    }

    #[test]
    fn varying_work_is_weighted_by_cpu_time() {
        // X-like: 100 ms periods with k ms of work in period k.
        let mut t = DeadlineTracker::new(0, 100 * MS);
        let work = |k: u64| k * MS;
        t.catch_up(0, work);
        t.finish(0, work(0));
        // Period 1 is woken at 100 ms but runs at 350 ms: periods 1 and 2 dropped (1 + 2 ms).
        assert_eq!(t.catch_up(350 * MS, work), 2);
        assert_eq!(t.finish(353 * MS, work(3)), Some(400 * MS));
        let c = t.counts;
        assert_eq!(c.work_done_ns, 3 * MS);
        assert_eq!(c.work_dropped_ns, 3 * MS);
        assert_eq!(c.desired_cpu_pct(), 50.0);
    }

    #[test]
    fn empty_counts() {
        let c = DeadlineCounts::default();
        assert_eq!(c.desired_cpu_pct(), 100.0);
        assert_eq!(c.deadlines_met_pct(), 0.0);
    }
}

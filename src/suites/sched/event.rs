//! What the sched suite says while it measures (`Event::Sched`).

use crate::model::sched::{SchedPoint, SchedRun};

/// Something the sched suite did, or measured.
pub enum SchedEvent<'a> {
    /// A run of a point is done (`index` 0-based).
    RunDone {
        threads: usize,
        active_sets: usize,
        index: usize,
        run: &'a SchedRun,
    },
    /// A point is done.
    PointDone(&'a SchedPoint),
}

impl SchedEvent<'_> {
    /// How far the part has come, in a few words (`hostbench run`'s live line), where this
    /// event moves it.
    pub fn progress(&self) -> Option<String> {
        match self {
            SchedEvent::RunDone {
                threads,
                active_sets,
                index,
                run,
            } => Some(format!(
                "{threads} threads, {active_sets} active sets, run {}: {:.2} us/round",
                index + 1,
                run.us_per_round
            )),
            SchedEvent::PointDone(_) => None,
        }
    }
}

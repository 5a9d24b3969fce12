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

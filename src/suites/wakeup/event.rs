//! What the wakeup suite says while it measures (`Event::Wakeup`).

use crate::model::wakeup::WakeupResult;

/// Something the wakeup suite did, or measured.
pub enum WakeupEvent<'a> {
    /// A second of the run has passed: seconds since the start, of how many, and the requests
    /// a second over it (0 in the pipe test, which counts none).
    Second {
        elapsed_s: f64,
        runtime_s: u64,
        rate: f64,
    },
    /// After each second (the workload ticks none in the pipe test, nor on the second the
    /// warm-up's end zeroes the statistics, as schbench): the tables so far, made where asked (schbench's
    /// `-i` prints them every so many seconds).
    Tables {
        elapsed_s: f64,
        build: &'a dyn Fn() -> WakeupResult,
    },
    /// The run is done.
    Done(&'a WakeupResult),
}

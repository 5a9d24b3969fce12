//! What the interactive suite says while it measures (`Event::Interactive`). Its burn loop's
//! calibration is said by the events every suite with one shares (`Event::BurnCalibrated`).

use crate::model::interactive::{Bench, Load, Measurement};

/// Something the interactive suite did, or measured.
pub enum InteractiveEvent<'a> {
    /// The Read load's file of this size is being made.
    PreparingFiles {
        bytes: u64,
    },
    BenchBegins(Bench),
    /// A pair starts (`index` 0-based, of `total`).
    PairBegins {
        bench: Bench,
        load: Load,
        index: usize,
        total: usize,
    },
    /// A pair is measured.
    Measured(&'a Measurement),
}

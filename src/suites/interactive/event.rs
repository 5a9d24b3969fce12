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

impl InteractiveEvent<'_> {
    /// How far the part has come, in a few words (`hostbench run`'s live line), where this
    /// event moves it.
    pub fn progress(&self) -> Option<String> {
        match self {
            InteractiveEvent::PairBegins {
                bench,
                load,
                index,
                total,
            } => Some(format!(
                "{} under {} ({}/{total})",
                bench.name(),
                load.name(),
                index + 1
            )),
            _ => None,
        }
    }
}

//! What the noise suite says while it measures (`Event::Noise`).

use crate::model::noise::{NoiseCalibration, NoiseRun, NoiseSettings};

/// Something the noise suite did, or measured.
pub enum NoiseEvent<'a> {
    /// The job is being calibrated to its target length.
    Calibrating(&'a NoiseSettings),
    Calibrated(&'a NoiseCalibration),
    /// A run is done (`index` 0-based, of `planned`), with the run before it and the fastest
    /// so far.
    RunDone {
        index: usize,
        planned: u64,
        run: &'a NoiseRun,
        previous: Option<&'a NoiseRun>,
        fastest_ns: u64,
    },
}

impl NoiseEvent<'_> {
    /// How far the part has come, in a few words (`hostbench run`'s live line), where this
    /// event moves it.
    pub fn progress(&self) -> Option<String> {
        match self {
            NoiseEvent::Calibrating(_) => Some("calibrating".into()),
            NoiseEvent::RunDone { index, planned, .. } => {
                Some(format!("run {}/{planned}", index + 1))
            }
            NoiseEvent::Calibrated(_) => None,
        }
    }
}

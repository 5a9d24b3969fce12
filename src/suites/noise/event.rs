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

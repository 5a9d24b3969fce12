//! A part of a standard run as its plan shows it: the suite's settings (the same the result
//! stores) and about how long it takes. The run's plan builds these; renderers read them.

use super::index::IndexSettings;
use super::interactive::InteractiveSettings;
use super::noise::NoiseSettings;
use super::sched::SchedSettings;

/// A planned part: what it will measure and about how long that takes.
#[derive(Debug, Clone, Copy)]
pub struct PartPlan<'a> {
    pub settings: PartSettings<'a>,
    pub estimate_s: f64,
}

/// A part's settings, by suite; for index, with the number of tests its selection resolved to.
#[derive(Debug, Clone, Copy)]
pub enum PartSettings<'a> {
    Noise(&'a NoiseSettings),
    Index {
        settings: &'a IndexSettings,
        tests: usize,
    },
    Interactive(&'a InteractiveSettings),
    Sched(&'a SchedSettings),
}

impl PartSettings<'_> {
    /// The suite's name.
    pub fn suite(&self) -> &'static str {
        match self {
            PartSettings::Noise(_) => "noise",
            PartSettings::Index { .. } => "index",
            PartSettings::Interactive(_) => "interactive",
            PartSettings::Sched(_) => "sched",
        }
    }
}

//! A part of a standard run as its plan shows it: its suite, what it measures in a few words,
//! and about how long it takes. The run's plan builds these from its parts; renderers read them.

/// A planned part: what it will measure and about how long that takes.
#[derive(Debug, Clone, PartialEq)]
pub struct PartPlan {
    /// The suite's name.
    pub suite: &'static str,
    /// What it measures, in a few words ("30 runs of a 100 ms CPU job").
    pub measures: String,
    pub estimate_s: f64,
}

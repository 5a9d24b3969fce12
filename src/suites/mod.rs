//! The suites. Each turns a validated config into measurements and returns them in the result
//! model; none prints: progress goes to an observer the caller supplies.

pub mod index;
pub mod interactive;
pub mod noise;
pub mod sched;

//! Pure statistics over samples: summaries, confidence intervals, percentiles and an HDR
//! histogram for latency-like data. Nothing here measures or prints.

pub mod edivisive;
mod histogram;
mod host_speed;
pub mod newest;
pub mod plat;
mod ratio;
mod summary;
mod welch;

pub use histogram::LatencyHistogram;
pub use host_speed::Follows;
pub use ratio::{
    log_ratio_test, runs_to_detect, two_run_bound, Grain, RatioTest, RunBound, RunSpread,
};
pub use summary::{
    batch_means, confidence_interval_95, median, median_absolute_deviation, percentile_p1bench,
    Interval, Summary,
};
pub use welch::{ratio_of_means_test, welch_test, WelchTest};

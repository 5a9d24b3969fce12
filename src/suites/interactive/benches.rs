//! The simulated interactive tasks ("benches"), each listed once: help text, validation and the
//! docs come from this table (the names are the model's, `Bench::name`).

use crate::model::interactive::Bench;

pub struct BenchInfo {
    pub bench: Bench,
    pub about: &'static str,
    /// Part of a default run.
    pub default: bool,
    /// Run under `-r` (as SCHED_FIFO).
    pub realtime: bool,
}

/// interbench's benches and which runs include them (interbench.c's threadlist).
pub const BENCHES: &[BenchInfo] = &[
    BenchInfo { bench: Bench::Audio, about: "wakes every 50 ms and needs 5% CPU", default: true, realtime: true },
    BenchInfo { bench: Bench::Video, about: "wakes 60 times a second and needs 40% CPU", default: true, realtime: true },
    BenchInfo { bench: Bench::X, about: "a window dragged across an idle desktop: 0% to 100% CPU in 1 ms steps of 100 ms periods", default: true, realtime: false },
    BenchInfo { bench: Bench::Gaming, about: "as much CPU as it can get, in 100 ms frames; no deadlines", default: true, realtime: false },
    BenchInfo { bench: Bench::Custom, about: "-C percent CPU every -I microseconds", default: false, realtime: true },
];

/// A bench's line in the table.
pub fn info(bench: Bench) -> &'static BenchInfo {
    BENCHES
        .iter()
        .find(|b| b.bench == bench)
        .expect("every bench is listed")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bench_is_listed_once() {
        for b in Bench::ALL {
            assert_eq!(BENCHES.iter().filter(|i| i.bench == b).count(), 1, "{b:?}");
        }
    }
}

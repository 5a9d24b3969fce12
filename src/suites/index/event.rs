//! What the index suite says while it measures (`Event::Index`).

use crate::model::index::scoring::Pass;
use crate::model::index::{Skipped, TestResult};

/// Something the index suite did, or measured.
pub enum IndexEvent<'a> {
    /// A pass at this many copies starts.
    PassBegins {
        copies: usize,
    },
    /// A test starts (its name, and UnixBench's words for it).
    TestBegins {
        name: &'a str,
        msg: &'a str,
        copies: usize,
        iterations: usize,
    },
    /// A round of `--order rounds` starts (`round` 0-based): every test's next iteration.
    RoundBegins {
        round: usize,
        rounds: usize,
    },
    RoundDone,
    /// An iteration of a test is done (`index` 0-based).
    IterationDone {
        name: &'a str,
        index: usize,
        pass: &'a Pass,
    },
    TestDone(&'a TestResult),
    TestSkipped(&'a Skipped),
    TestFailed(&'a Skipped),
}

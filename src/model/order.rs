//! The order of a part's repetitions: an index test's iterations, a sched point's runs.

use serde::{Deserialize, Serialize};

/// The order of a part's repetitions. What is repeated, and how it is scored, is the same
/// either way; only the order differs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// Each item's repetitions in turn, then the next item: the original's order (UnixBench's
    /// Run, reflex).
    #[default]
    Blocks,
    /// Every item's first repetition, then every item's second, and so on: a slow minute of
    /// the host touches every item alike.
    Rounds,
}

impl Order {
    /// For `skip_serializing_if`: settings in blocks read as they did before rounds were, so
    /// their plan, and the history they belong to, stay.
    pub fn is_blocks(&self) -> bool {
        *self == Order::Blocks
    }
}

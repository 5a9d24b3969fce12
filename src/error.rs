//! The error that means "the user asked for something impossible": `main` prints it on one line
//! and exits with code 2. Every other error exits with 1.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct UsageError(String);

impl UsageError {
    pub fn new(message: impl Into<String>) -> Self {
        UsageError(message.into())
    }
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// `e` said of `what` (a file, a store, a result): still a usage error (exit 2) when it was
/// one, with `what` before its message; otherwise `what` as context.
pub fn said_of(e: anyhow::Error, what: impl fmt::Display) -> anyhow::Error {
    if e.is::<UsageError>() {
        UsageError::new(format!("{what}: {e:#}")).into()
    } else {
        anyhow::anyhow!("{what}: {e:#}")
    }
}

/// The exit code for bad input.
pub const EXIT_USAGE: i32 = 2;

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

/// The exit code for bad input.
pub const EXIT_USAGE: i32 = 2;

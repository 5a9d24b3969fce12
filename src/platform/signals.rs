//! Clean stopping on SIGINT and SIGTERM. The first signal only sets a flag that measuring loops
//! poll between units of work, so what was measured is kept, reported and stored; a second
//! signal of either kind ends the process at once, for a user who will not wait.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use anyhow::{Context, Result};
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::flag;

#[derive(Clone)]
pub struct StopSignal {
    requested: Arc<AtomicBool>,
    signal: Arc<AtomicUsize>,
}

impl StopSignal {
    /// Installs handlers for SIGINT and SIGTERM.
    pub fn install() -> Result<Self> {
        let stop = StopSignal::unarmed();
        for sig in [SIGINT, SIGTERM] {
            // Registered first, so it sees the flag as it was before this signal: a second
            // signal exits with the shell's code for death by that signal.
            flag::register_conditional_shutdown(sig, 128 + sig, Arc::clone(&stop.requested))
                .context("installing signal handler")?;
            flag::register(sig, Arc::clone(&stop.requested))
                .context("installing signal handler")?;
            flag::register_usize(sig, Arc::clone(&stop.signal), sig as usize)
                .context("installing signal handler")?;
        }
        Ok(stop)
    }

    /// A stop flag no signal sets (for tests and for library callers with their own handling).
    pub fn unarmed() -> Self {
        StopSignal {
            requested: Arc::new(AtomicBool::new(false)),
            signal: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// The flag measuring code polls.
    pub fn flag(&self) -> &AtomicBool {
        &self.requested
    }

    pub fn is_requested(&self) -> bool {
        self.requested.load(Ordering::Relaxed)
    }

    /// The signal that asked for the stop, if one did.
    pub fn signal(&self) -> Option<i32> {
        match self.signal.load(Ordering::SeqCst) {
            0 => None,
            s => Some(s as i32),
        }
    }

    /// The exit code a stopped run ends with: 128 + the signal, as a shell reports it.
    pub fn exit_code(&self) -> i32 {
        128 + self.signal().unwrap_or(SIGINT)
    }

    /// A run's exit code: the stop's when stopped, else 1 after a failure, else 0.
    pub fn run_exit_code(&self, failed: bool) -> i32 {
        if self.is_requested() {
            self.exit_code()
        } else if failed {
            1
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_sets_the_flag() {
        let s = StopSignal::unarmed();
        assert!(!s.is_requested());
        s.requested.store(true, Ordering::SeqCst);
        assert!(s.is_requested());
        assert!(s.flag().load(Ordering::Relaxed));
        assert_eq!(s.exit_code(), 130);
    }
}

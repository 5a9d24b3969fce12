//! Clean stopping on SIGINT, SIGTERM and SIGHUP. The first signal only sets a flag that
//! measuring loops poll between units of work, so what was measured is kept, reported and
//! stored; a second signal of any of them ends the process at once, for a user who will not
//! wait, after killing the workers' process groups and removing the private directories
//! ([`cleanup::emergency`]). SIGHUP counts as a stop because it is what an ssh session that
//! drops sends: the run is stored and its files removed, as after Ctrl-C.
//!
//! The signal handler itself only counts and, from the second signal on, writes a byte to a
//! pipe (both async-signal-safe); a thread that waits on that pipe does the clean-up, which
//! needs locks and file system calls a handler may not make.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use anyhow::{Context, Result};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::flag;

use super::cleanup;

/// The signals that stop a run.
pub const STOP_SIGNALS: [i32; 3] = [SIGINT, SIGTERM, SIGHUP];

#[derive(Clone)]
pub struct StopSignal {
    requested: Arc<AtomicBool>,
    signal: Arc<AtomicUsize>,
}

/// The process's one installed stop (handlers are process-wide; installing twice would count
/// every signal twice).
static INSTALLED: OnceLock<StopSignal> = OnceLock::new();

impl StopSignal {
    /// Installs the handlers (once per process; later calls return the same stop).
    pub fn install() -> Result<Self> {
        if let Some(s) = INSTALLED.get() {
            return Ok(s.clone());
        }
        let stop = StopSignal::unarmed();
        let (read_end, write_end) = cleanup_pipe()?;
        let count = Arc::new(AtomicUsize::new(0));
        for sig in STOP_SIGNALS {
            flag::register(sig, Arc::clone(&stop.requested))
                .context("installing signal handler")?;
            flag::register_usize(sig, Arc::clone(&stop.signal), sig as usize)
                .context("installing signal handler")?;
            let count = Arc::clone(&count);
            // SAFETY: the action only touches an atomic and writes one byte to a pipe, both
            // async-signal-safe.
            unsafe {
                signal_hook::low_level::register(sig, move || {
                    if count.fetch_add(1, Ordering::SeqCst) >= 1 {
                        let b = sig as u8;
                        libc::write(write_end, (&b as *const u8).cast(), 1);
                    }
                })
            }
            .context("installing signal handler")?;
        }
        std::thread::Builder::new()
            .name("hb-signals".into())
            .spawn(move || {
                let mut b = 0u8;
                loop {
                    // SAFETY: reads one byte into a local from a pipe this thread owns.
                    let n = unsafe { libc::read(read_end, (&mut b as *mut u8).cast(), 1) };
                    if n == 1 {
                        cleanup::emergency();
                        // SAFETY: ends the process without unwinding other threads' stacks.
                        unsafe { libc::_exit(128 + i32::from(b)) };
                    }
                    if n == 0 {
                        return;
                    }
                }
            })
            .context("starting the signal thread")?;
        Ok(INSTALLED.get_or_init(|| stop).clone())
    }

    /// The process's stop, if the handlers were installed: what a wait deep in a library
    /// (an answer from a database server) checks, so a stop signal is not lost on it.
    pub fn installed() -> Option<StopSignal> {
        INSTALLED.get().cloned()
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

    /// Asks for a stop as a signal would (a worker's failure, a closed terminal).
    pub fn request(&self) {
        self.requested.store(true, Ordering::SeqCst);
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

/// The pipe from the handler to the clean-up thread (close-on-exec: no worker inherits it).
fn cleanup_pipe() -> Result<(i32, i32)> {
    let mut fds = [0; 2];
    // SAFETY: fds is a valid two-element array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error()).context("creating the signal pipe");
    }
    Ok((fds[0], fds[1]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_sets_the_flag() {
        let s = StopSignal::unarmed();
        assert!(!s.is_requested());
        s.request();
        assert!(s.is_requested());
        assert!(s.flag().load(Ordering::Relaxed));
        assert_eq!(s.exit_code(), 130);
        assert_eq!(s.run_exit_code(true), 130);
        let s = StopSignal::unarmed();
        assert_eq!(s.run_exit_code(true), 1);
        assert_eq!(s.run_exit_code(false), 0);
    }
}

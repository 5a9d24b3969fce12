//! What must not outlive this process when it ends abruptly: the private directories it made
//! and the process groups of the workers it started. The orderly ways out remove them through
//! their owners' `Drop`; a second Ctrl-C (or SIGTERM, SIGHUP) ends the process at once, without
//! unwinding, so the signal thread calls [`emergency`] first. Signals are process-wide, so this
//! list is too: one registry, locked briefly by whoever adds or removes an entry.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

#[derive(Default)]
struct Registry {
    dirs: Vec<PathBuf>,
    groups: Vec<libc::pid_t>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    dirs: Vec::new(),
    groups: Vec::new(),
});

/// The registry, also after a thread panicked while holding it (its lists stay valid).
fn registry() -> MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn add_dir(path: &Path) {
    registry().dirs.push(path.to_path_buf());
}

pub fn remove_dir(path: &Path) {
    registry().dirs.retain(|d| d != path);
}

pub fn add_group(pgid: libc::pid_t) {
    registry().groups.push(pgid);
}

pub fn remove_group(pgid: libc::pid_t) {
    registry().groups.retain(|&g| g != pgid);
}

/// Kills every registered worker process group and removes every registered directory. Called
/// just before the process ends without unwinding.
///
/// A SIGKILLed worker dies a moment after the signal, and until then it may still create a
/// file in the directory being removed (a shell pipeline of the index suite does), so that one
/// pass of `remove_dir_all` finds the directory not empty: removal is tried again, every 10 ms,
/// for up to two seconds.
pub fn emergency() {
    let r = registry();
    for &g in &r.groups {
        // SAFETY: signals a worker's own process group.
        unsafe { libc::kill(-g, libc::SIGKILL) };
    }
    for d in &r.dirs {
        for _ in 0..200 {
            match std::fs::remove_dir_all(d) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                _ => break,
            }
        }
    }
}

/// The directories registered now (for tests).
pub fn registered_dirs() -> Vec<PathBuf> {
    registry().dirs.clone()
}

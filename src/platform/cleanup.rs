//! What must not outlive this process when it ends abruptly: the private directories it made
//! and the process groups of the workers it started. The orderly ways out remove them through
//! their owners' `Drop`; a second Ctrl-C (or SIGTERM, SIGHUP) ends the process at once, without
//! unwinding, so the signal thread calls [`emergency`] first. Signals are process-wide, so this
//! list is too: one registry, locked briefly by whoever adds or removes an entry.

use std::ffi::{OsStr, OsString};
use std::os::fd::RawFd;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use super::dir::Dir;

/// A private directory to remove: its work directory and name, and the directory itself, all
/// held by descriptors of their own; the path for messages and tests.
struct HeldDir {
    parent: Dir,
    name: OsString,
    dir: Dir,
    path: PathBuf,
}

#[derive(Default)]
struct Registry {
    dirs: Vec<HeldDir>,
    groups: Vec<libc::pid_t>,
    /// tracefs instances (removed with rmdir: their files cannot be unlinked), each with the
    /// tracefs mount to undo if hostbench mounted it.
    traces: Vec<(PathBuf, Option<PathBuf>)>,
    /// Open files of those instances (a reader's pipe), closed first: the kernel refuses to
    /// remove an instance while a file of it is open.
    trace_fds: Vec<RawFd>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    dirs: Vec::new(),
    groups: Vec::new(),
    traces: Vec::new(),
    trace_fds: Vec::new(),
});

/// The registry, also after a thread panicked while holding it (its lists stay valid).
fn registry() -> MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

/// Registers the private directory `name` of `parent` (held open as `dir`). Descriptors of
/// their own are kept, so the emergency clean-up never goes by path. A directory whose
/// descriptors cannot be duplicated (no descriptor left) is not registered: its owner's drop
/// still removes it.
pub fn add_dir(parent: &Dir, name: &OsStr, dir: &Dir, path: &Path) {
    if let (Ok(parent), Ok(dir)) = (parent.try_clone(), dir.try_clone()) {
        registry().dirs.push(HeldDir {
            parent,
            name: name.to_os_string(),
            dir,
            path: path.to_path_buf(),
        });
    }
}

pub fn remove_dir(path: &Path) {
    registry().dirs.retain(|d| d.path != path);
}

pub fn add_trace_instance(path: &Path, mounted: Option<&Path>) {
    registry()
        .traces
        .push((path.to_path_buf(), mounted.map(Path::to_path_buf)));
}

pub fn remove_trace_instance(path: &Path) {
    registry().traces.retain(|(d, _)| d != path);
}

pub fn add_trace_fd(fd: RawFd) {
    registry().trace_fds.push(fd);
}

pub fn remove_trace_fd(fd: RawFd) {
    registry().trace_fds.retain(|&f| f != fd);
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
/// pass of removal finds the directory not empty: removal is tried again, every 10 ms, for up
/// to two seconds. Removal goes through the directories' descriptors.
pub fn emergency() {
    let r = registry();
    for &g in &r.groups {
        // SAFETY: signals a worker's own process group.
        unsafe { libc::kill(-g, libc::SIGKILL) };
    }
    for d in &r.dirs {
        for _ in 0..200 {
            if super::private_dir::remove(&d.parent, &d.name, &d.dir) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
    for &fd in &r.trace_fds {
        // SAFETY: the fd is a reader's, registered while open; the process ends next.
        unsafe { libc::close(fd) };
    }
    for (dir, mounted) in &r.traces {
        // The killed bench worker's marker file closes when it dies: tried for two seconds.
        crate::platform::tracefs::stop_and_remove(dir, 200);
        if let Some(root) = mounted {
            crate::platform::tracefs::unmount(root);
        }
    }
}

/// The directories registered now (for tests).
pub fn registered_dirs() -> Vec<PathBuf> {
    registry().dirs.iter().map(|d| d.path.clone()).collect()
}

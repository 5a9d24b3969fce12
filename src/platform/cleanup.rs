//! What must not outlive this process when it ends abruptly: its private directories, tracefs
//! instances and workers' process groups. A second Ctrl-C (or SIGTERM, SIGHUP) ends the process
//! without unwinding, so the signal thread calls [`emergency`] first; each owner registers what
//! undoes its thing ([`register`]), so this module knows none of them.

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// What an emergency runs for one registered thing, once.
pub type Undo = Box<dyn FnOnce() + Send>;

/// A registered undo, named for tests and messages.
struct Entry {
    id: u64,
    name: String,
    undo: Undo,
}

/// The ticket of a registered undo: its owner hands it back ([`unregister`]) once it has undone
/// its thing itself.
#[derive(Debug)]
pub struct Registered(u64);

#[derive(Default)]
struct Registry {
    groups: Vec<libc::pid_t>,
    /// Open files of tracefs instances (a reader's pipe), closed first: the kernel refuses to
    /// remove an instance while a file of it is open.
    trace_fds: Vec<RawFd>,
    /// Private directories and tracefs instances, in the order they were made.
    undo: Vec<Entry>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    groups: Vec::new(),
    trace_fds: Vec::new(),
    undo: Vec::new(),
});
static NEXT: AtomicU64 = AtomicU64::new(1);

/// The registry, also after a thread panicked while holding it (its lists stay valid).
fn registry() -> MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

/// Registers what removes a thing (`name`: its path, for tests) if the process ends abruptly.
/// The undo must hold all it needs (descriptors of its own, never a path to look up again).
pub fn register(name: String, undo: Undo) -> Registered {
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    registry().undo.push(Entry { id, name, undo });
    Registered(id)
}

/// Its owner removed the thing itself: nothing left for an emergency to do.
pub fn unregister(r: &Registered) {
    registry().undo.retain(|e| e.id != r.0);
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

/// Kills every registered worker process group, closes the trace readers' files and runs every
/// registered undo. Called just before the process ends without unwinding.
///
/// The orderly ways out remove these things through their owners' `Drop`. Signals are
/// process-wide, so the list is too: one registry, locked briefly by whoever adds or removes
/// an entry.
pub fn emergency() {
    // Take the lists and let the lock go: an undo that registers or unregisters something
    // (or a thread that does so meanwhile) must not deadlock the way out.
    let (groups, trace_fds, undo) = {
        let mut r = registry();
        (
            std::mem::take(&mut r.groups),
            std::mem::take(&mut r.trace_fds),
            std::mem::take(&mut r.undo),
        )
    };
    for g in groups {
        // SAFETY: signals a worker's own process group.
        unsafe { libc::kill(-g, libc::SIGKILL) };
    }
    for fd in trace_fds {
        // SAFETY: the fd is a reader's, registered while open; the process ends next.
        unsafe { libc::close(fd) };
    }
    for e in undo {
        (e.undo)();
    }
}

/// The names of the undos registered now (for tests).
pub fn registered() -> Vec<String> {
    registry().undo.iter().map(|e| e.name.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    const CHILD: &str = "HOSTBENCH_TEST_EMERGENCY_CHILD";

    /// An undo that touches the registry itself (here: reads it) must not hang the way out.
    /// The emergency runs in a child process of this test binary, so it takes no other test's
    /// undos with it.
    #[test]
    fn an_undo_may_use_the_registry_during_an_emergency() {
        if std::env::var_os(CHILD).is_some() {
            let _first = register(
                "first".into(),
                Box::new(|| println!("undo ran; still registered: {:?}", registered())),
            );
            let _second = register("second".into(), Box::new(|| println!("second ran")));
            emergency();
            println!("emergency done; left: {}", registered().len());
            return;
        }
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "platform::cleanup::tests::an_undo_may_use_the_registry_during_an_emergency",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD, "1")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        while child.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                child.kill().unwrap();
                panic!("the emergency hung on its own registry");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let out = child.wait_with_output().unwrap();
        let out = String::from_utf8_lossy(&out.stdout);
        assert!(out.contains("undo ran; still registered: []"), "{out}");
        assert!(out.contains("second ran"), "{out}");
        assert!(out.contains("emergency done; left: 0"), "{out}");
    }
}

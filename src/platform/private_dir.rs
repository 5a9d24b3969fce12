//! A run's private directory for its temporary files, removed with everything in it when
//! dropped: at the end of a run, after an error, and after Ctrl-C (which ends the run normally);
//! a second Ctrl-C removes it through [`cleanup`] before the process ends.

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use rustix::fs::FileType;

use super::cleanup::{self, Registered};
use super::dir::{euid, Dir, Trust};
use super::procfs::process_start_ticks;

const PREFIX: &str = ".hostbench-";

/// A run's private directory, held by its descriptor.
///
/// The work directory it is made in is opened once and checked, with every directory above it
/// ([`Trust::OwnOrSticky`]: this user's or root's, writable by others only with the sticky bit,
/// as /tmp is): in a directory another user may write without that bit, they could rename the
/// private directory away and put one of theirs in its place. The private directory is made in
/// the held work directory with `mkdirat` (which fails on anything already there, a symlink
/// included; tried again under another name), with a random part in its name and mode 0700, and
/// is from then on used only through its descriptor: files are created in it with `openat`,
/// workers `fchdir` into it, and it is removed through descriptors. Its name also says which
/// process made it (`.hostbench-KIND-PID-START-RANDOM`, START the process's start time in clock
/// ticks since boot): a run killed with SIGKILL cannot remove its directory, and
/// [`sweep_stale`] lets a later run find and remove it — which a name of random characters
/// alone would not allow.
pub struct PrivateDir {
    parent: Dir,
    name: OsString,
    dir: Dir,
    path: PathBuf,
    /// Its removal if the process ends abruptly; None where no descriptor was left to hold for
    /// it (its drop still removes it).
    registered: Option<Registered>,
}

impl PrivateDir {
    /// Creates `PARENT/.hostbench-KIND-PID-START-RANDOM`, mode 0700, in the work directory
    /// `parent`, which is refused (saying why) if another user could change it or a
    /// directory above it.
    pub fn create(parent: &Path, kind: &str) -> Result<PrivateDir> {
        let held = Dir::open(parent, Trust::OwnOrSticky)
            .with_context(|| format!("refusing the work directory {}", parent.display()))?;
        Self::create_in(held, kind)
            .with_context(|| format!("creating a directory in {}", parent.display()))
    }

    /// Creates the private directory in the held work directory `parent`.
    pub fn create_in(parent: Dir, kind: &str) -> io::Result<PrivateDir> {
        use rand::distributions::{Alphanumeric, DistString};
        let me = std::process::id();
        let start = process_start_ticks(me).unwrap_or(0);
        loop {
            let random = Alphanumeric.sample_string(&mut rand::thread_rng(), 12);
            let name = OsString::from(format!("{PREFIX}{kind}-{me}-{start}-{random}"));
            match parent.create_dir(&name, 0o700) {
                Ok(dir) => {
                    let path = parent.path().join(&name);
                    let registered = register(&parent, &name, &dir, &path);
                    return Ok(PrivateDir {
                        parent,
                        name,
                        dir,
                        path,
                        registered,
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// The directory, held: everything done in it goes through this.
    pub fn dir(&self) -> &Dir {
        &self.dir
    }

    /// Its path, for messages and reports only.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for PrivateDir {
    /// Removes the directory, and only then takes its emergency removal back: a second Ctrl-C
    /// that ends the process while this runs (a first one began the orderly stop that drops
    /// it) still finds it registered. Taken back first, the directory was left behind when the
    /// process ended between the two steps (seen once in CI, `tests/faults.rs`).
    fn drop(&mut self) {
        remove_retrying(&self.parent, &self.name, &self.dir);
        if let Some(r) = &self.registered {
            cleanup::unregister(r);
        }
    }
}

/// [`remove`], tried again every 10 ms for up to two seconds while something is left: a
/// SIGKILLed worker dies a moment after the signal, and until then it may still create a file
/// in the directory (a shell pipeline of the index suite does).
fn remove_retrying(parent: &Dir, name: &OsStr, dir: &Dir) {
    for _ in 0..200 {
        if remove(parent, name, dir) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Registers the directory's removal for an abrupt end, through descriptors of its own, so the
/// emergency never goes by path.
///
/// Removal is tried again while something is left ([`remove_retrying`]).
fn register(parent: &Dir, name: &OsStr, dir: &Dir, path: &Path) -> Option<Registered> {
    let (parent, dir) = (parent.try_clone().ok()?, dir.try_clone().ok()?);
    let name = name.to_os_string();
    let undo = move || remove_retrying(&parent, &name, &dir);
    Some(cleanup::register(
        path.display().to_string(),
        Box::new(undo),
    ))
}

/// Removes a private directory: its contents through its own descriptor (wherever it is now),
/// then its name from the work directory. False when something was left.
fn remove(parent: &Dir, name: &OsStr, dir: &Dir) -> bool {
    let cleared = dir.clear().is_ok();
    cleared && parent.remove_tree(name).is_ok()
}

/// A private directory left behind by a process that is gone.
#[derive(Debug, Clone, PartialEq)]
pub struct StaleDir {
    pub path: PathBuf,
    pub pid: u32,
    /// Bytes it held.
    pub bytes: u64,
}

/// Whether the process that made a directory of this name is gone: no process with its pid, or
/// one that started at another time. Names without a start time (hostbench before 0.1.1 used
/// `.hostbench-KIND-PID`) are judged by the pid alone.
fn owner_gone(name: &str) -> Option<(u32, bool)> {
    let rest = name.strip_prefix(PREFIX)?;
    let parts: Vec<&str> = rest.rsplitn(4, '-').collect();
    let numeric = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    match parts.as_slice() {
        [_random, start, pid, _kind] if numeric(start) && numeric(pid) => {
            let pid: u32 = pid.parse().ok()?;
            let start: u64 = start.parse().ok()?;
            let gone = match process_start_ticks(pid) {
                None => true,
                Some(now) => start != 0 && now != start,
            };
            Some((pid, gone))
        }
        _ => {
            let (_, pid) = rest.rsplit_once('-')?;
            if !numeric(pid) {
                return None;
            }
            let pid: u32 = pid.parse().ok()?;
            Some((pid, process_start_ticks(pid).is_none()))
        }
    }
}

/// Finds and removes, in the held work directory `parent`, the private directories of
/// hostbench processes that are gone (killed with SIGKILL, or a machine that lost power), and
/// returns what it removed. Only real directories owned by this user are touched, never a
/// symlink or another user's, and only through descriptors.
pub fn sweep_stale(parent: &Dir) -> Vec<StaleDir> {
    let Ok(names) = parent.names() else {
        return Vec::new();
    };
    let me = euid();
    let mut removed = Vec::new();
    for name in names {
        let Some(text) = name.to_str() else { continue };
        let Some((pid, true)) = owner_gone(text) else {
            continue;
        };
        let Ok(st) = parent.stat_at(&name) else {
            continue;
        };
        if FileType::from_raw_mode(st.st_mode) != FileType::Directory || st.st_uid != me {
            continue;
        }
        let Ok(dir) = parent.open_dir(&name, Trust::Reach) else {
            continue;
        };
        let bytes = size_of_tree(&dir);
        if remove(parent, &name, &dir) {
            removed.push(StaleDir {
                path: parent.path().join(&name),
                pid,
                bytes,
            });
        }
    }
    removed
}

/// Bytes held by the regular files under `dir` (symlinks not followed).
fn size_of_tree(dir: &Dir) -> u64 {
    let Ok(names) = dir.names() else {
        return 0;
    };
    names
        .iter()
        .map(|n| match dir.stat_at(n) {
            Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Directory => dir
                .open_dir(n, Trust::Reach)
                .map(|d| size_of_tree(&d))
                .unwrap_or(0),
            Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::RegularFile => {
                st.st_size as u64
            }
            _ => 0,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn held(p: &Path) -> Dir {
        Dir::open(p, Trust::OwnOrSticky).unwrap()
    }

    #[test]
    fn removed_with_its_contents() {
        let parent = tempfile::tempdir().unwrap();
        let d = PrivateDir::create(parent.path(), "test").unwrap();
        std::fs::write(d.path().join("f"), "x").unwrap();
        let p = d.path().to_path_buf();
        let name = p.display().to_string();
        assert!(cleanup::registered().contains(&name));
        drop(d);
        assert!(!p.exists());
        assert!(!cleanup::registered().contains(&name));
    }

    #[test]
    fn mode_0700_and_a_name_nobody_can_predict() {
        // Under umask 000 too: tests/hostile.rs runs the binary so (the umask is the
        // process's: changed here, a directory another test made meanwhile would be open to
        // all, and refused as a work directory).
        let parent = tempfile::tempdir().unwrap();
        let a = PrivateDir::create(parent.path(), "test").unwrap();
        let b = PrivateDir::create(parent.path(), "test").unwrap();
        let mode = std::fs::metadata(a.path()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        assert_ne!(a.path(), b.path());
        let name = a.path().file_name().unwrap().to_str().unwrap().to_string();
        let me = std::process::id();
        assert!(
            name.starts_with(&format!(".hostbench-test-{me}-")),
            "{name}"
        );
    }

    #[test]
    fn an_existing_path_is_never_adopted() {
        // Whatever another user prepared, create() makes a new directory of its own.
        let parent = tempfile::tempdir().unwrap();
        let me = std::process::id();
        let planted = parent.path().join(format!(".hostbench-test-{me}"));
        std::fs::create_dir(&planted).unwrap();
        let d = PrivateDir::create(parent.path(), "test").unwrap();
        assert_ne!(d.path(), planted);
        assert!(std::fs::read_dir(d.path()).unwrap().next().is_none());
    }

    #[test]
    fn stale_directories_of_gone_processes_are_swept_and_live_ones_kept() {
        let parent = tempfile::tempdir().unwrap();
        let live = PrivateDir::create(parent.path(), "index").unwrap();
        // A pid above the kernel's pid_max is never alive.
        let gone_new = parent
            .path()
            .join(".hostbench-index-4194305-123-abcdefabcdef");
        let gone_old = parent.path().join(".hostbench-interactive-4194306");
        // This process's pid with another start time: a previous process that had this pid.
        let me = std::process::id();
        let reused = parent
            .path()
            .join(format!(".hostbench-index-{me}-1-zzzzzzzzzzzz"));
        let unrelated = parent.path().join(".hostbench-notes");
        for d in [&gone_new, &gone_old, &reused, &unrelated] {
            std::fs::create_dir(d).unwrap();
        }
        std::fs::write(gone_new.join("read.dat"), vec![0u8; 4096]).unwrap();
        let mut removed = sweep_stale(&held(parent.path()));
        removed.sort_by_key(|s| s.pid);
        let paths: Vec<&PathBuf> = removed.iter().map(|s| &s.path).collect();
        assert_eq!(paths.len(), 3, "{removed:?}");
        assert!(paths.contains(&&gone_new) && paths.contains(&&gone_old));
        assert!(paths.contains(&&reused));
        assert_eq!(removed.iter().map(|s| s.bytes).sum::<u64>(), 4096);
        assert!(live.path().exists());
        assert!(unrelated.exists());
    }

    #[test]
    fn a_symlink_that_looks_stale_is_not_followed() {
        let parent = tempfile::tempdir().unwrap();
        let target = tempfile::tempdir().unwrap();
        std::fs::write(target.path().join("keep"), "x").unwrap();
        let link = parent
            .path()
            .join(".hostbench-index-4194305-1-abcdefabcdef");
        std::os::unix::fs::symlink(target.path(), &link).unwrap();
        assert!(sweep_stale(&held(parent.path())).is_empty());
        assert!(target.path().join("keep").exists());
    }
}

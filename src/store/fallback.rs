//! Where a result goes when the store cannot take it (locked by another process for longer than
//! the busy timeout, its disk full, its file gone read-only): a JSON file, so the measurement is
//! not lost. `hostbench results import FILE` stores it later, and `compare` and `report` read it
//! as it is.

use std::io::Write;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Result};

use crate::model::RunResult;
use crate::platform::dir::{Dir, Trust};

/// The places tried, in order: beside the database, the current directory, the user's own data
/// directory (`DATA_DIR/hostbench`), the temporary directory. The first is where a user looks
/// for their results; the others are there for a full or read-only disk.
pub fn candidate_dirs(beside_store: Option<&Path>) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(d) = beside_store.filter(|d| !d.as_os_str().is_empty()) {
        dirs.push(d.to_path_buf());
    }
    dirs.push(PathBuf::from("."));
    if let Some(d) = dirs::data_dir().map(|d| d.join("hostbench")) {
        // Made if missing, as the default store would be; trusted only as `save` checks.
        let _ = std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&d);
        dirs.push(d);
    }
    dirs.push(std::env::temp_dir());
    dirs
}

/// Writes `result` as JSON into the first of `dirs` that takes it, under a new name
/// (`hostbench-result-YYYYMMDDTHHMMSS-PID.json`, created exclusively), and returns its path. A
/// place is taken only where no other user can swap the file for one of their own before it is
/// imported: a directory reached without another user's link, this user's or root's and
/// writable by no one else, or sticky as /tmp is (`Trust::OwnOrSticky`). A partly written file
/// is removed before the next place is tried.
pub fn save(result: &RunResult, dirs: &[PathBuf]) -> Result<PathBuf> {
    let json = serde_json::to_string_pretty(result)?;
    let name = format!(
        "hostbench-result-{}-{}.json",
        result.started_at.format("%Y%m%dT%H%M%S"),
        std::process::id()
    );
    let mut errors = Vec::new();
    for dir in dirs {
        let held = match Dir::open(dir, Trust::OwnOrSticky) {
            Ok(held) => held,
            Err(e) => {
                errors.push(format!("{}: {e:#}", dir.display()));
                continue;
            }
        };
        let written = held.create_new(&name, 0o644).and_then(|mut f| {
            f.write_all(json.as_bytes())?;
            f.write_all(b"\n")?;
            f.sync_all()
        });
        match written {
            Ok(()) => return Ok(dir.join(&name)),
            Err(e) => {
                if e.kind() != std::io::ErrorKind::AlreadyExists {
                    let _ = held.remove_file(&name);
                }
                errors.push(format!("{}: {e}", dir.display()));
            }
        }
    }
    Err(anyhow!(
        "no place took the result file ({})",
        errors.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result() -> RunResult {
        RunResult::example("h", false)
    }

    #[test]
    fn the_first_place_that_takes_it_holds_the_whole_result() {
        let good = tempfile::tempdir().unwrap();
        let missing = good.path().join("no/such/dir");
        let path = save(&result(), &[missing, good.path().to_path_buf()]).unwrap();
        assert_eq!(path.parent().unwrap(), good.path());
        let back: RunResult =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(back.tool_version, "test");
    }

    /// A directory another user controls (theirs, or writable by others and not sticky) could
    /// have the file swapped for theirs before it is imported: it is passed over, saying why.
    #[test]
    fn a_place_another_user_could_swap_the_file_in_is_passed_over() {
        use std::os::unix::fs::PermissionsExt;
        let open = tempfile::tempdir().unwrap();
        std::fs::set_permissions(open.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let mine = tempfile::tempdir().unwrap();
        let theirs = tempfile::tempdir().unwrap();
        let mut places = vec![open.path().to_path_buf()];
        // SAFETY: no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            std::os::unix::fs::chown(theirs.path(), Some(54_321), Some(54_321)).unwrap();
            places.push(theirs.path().to_path_buf());
        }
        places.push(mine.path().to_path_buf());
        let path = save(&result(), &places).unwrap();
        assert_eq!(path.parent().unwrap(), mine.path());
        assert_eq!(std::fs::read_dir(open.path()).unwrap().count(), 0);
        assert_eq!(std::fs::read_dir(theirs.path()).unwrap().count(), 0);
    }

    #[test]
    fn no_place_is_an_error_naming_each() {
        let err = save(&result(), &[PathBuf::from("/proc/no")]).unwrap_err();
        assert!(format!("{err:#}").contains("/proc/no"), "{err:#}");
    }
}

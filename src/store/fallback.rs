//! Where a result goes when the store cannot take it (locked by another process for longer than
//! the busy timeout, its disk full, its file gone read-only): a JSON file, so the measurement is
//! not lost. `hostbench results import FILE` stores it later, and `compare` and `report` read it
//! as it is.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Result};

use crate::model::RunResult;
use crate::platform::files::create_new;

/// The places tried, in order: beside the database, the current directory, the temporary
/// directory. The first is where a user looks for their results; the others are there for a
/// full or read-only disk.
pub fn candidate_dirs(beside_store: Option<&Path>) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(d) = beside_store.filter(|d| !d.as_os_str().is_empty()) {
        dirs.push(d.to_path_buf());
    }
    dirs.push(PathBuf::from("."));
    dirs.push(std::env::temp_dir());
    dirs
}

/// Writes `result` as JSON into the first of `dirs` that takes it, under a new name
/// (`hostbench-result-YYYYMMDDTHHMMSS-PID.json`, created exclusively), and returns its path. A
/// partly written file is removed before the next place is tried.
pub fn save(result: &RunResult, dirs: &[PathBuf]) -> Result<PathBuf> {
    let json = serde_json::to_string_pretty(result)?;
    let name = format!(
        "hostbench-result-{}-{}.json",
        result.started_at.format("%Y%m%dT%H%M%S"),
        std::process::id()
    );
    let mut errors = Vec::new();
    for dir in dirs {
        let path = dir.join(&name);
        let written = create_new(&path).and_then(|mut f| {
            f.write_all(json.as_bytes())?;
            f.write_all(b"\n")?;
            f.sync_all()
        });
        match written {
            Ok(()) => return Ok(path),
            Err(e) => {
                if e.kind() != std::io::ErrorKind::AlreadyExists {
                    let _ = std::fs::remove_file(&path);
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

    #[test]
    fn no_place_is_an_error_naming_each() {
        let err = save(&result(), &[PathBuf::from("/proc/no")]).unwrap_err();
        assert!(format!("{err:#}").contains("/proc/no"), "{err:#}");
    }
}

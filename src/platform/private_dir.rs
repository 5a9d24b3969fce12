//! A run's private directory for its temporary files, removed with everything in it when
//! dropped: at the end of a run, after an error, and after Ctrl-C (which ends the run normally).

use std::io;
use std::path::{Path, PathBuf};

pub struct PrivateDir {
    path: PathBuf,
}

impl PrivateDir {
    /// Creates `PARENT/.hostbench-KIND-PID`.
    pub fn create(parent: &Path, kind: &str) -> io::Result<PrivateDir> {
        let path = parent.join(format!(".hostbench-{kind}-{}", std::process::id()));
        std::fs::create_dir_all(&path)?;
        Ok(PrivateDir { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removed_with_its_contents() {
        let parent = tempfile::tempdir().unwrap();
        let d = PrivateDir::create(parent.path(), "test").unwrap();
        std::fs::write(d.path().join("f"), "x").unwrap();
        let p = d.path().to_path_buf();
        drop(d);
        assert!(!p.exists());
    }
}

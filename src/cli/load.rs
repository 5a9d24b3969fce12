//! Results named on a command line — a stored id, or a result JSON file — loaded and checked,
//! the same for `compare`, `report` and the `results` commands.

use std::path::Path;

use anyhow::Result;

use super::args::StoreArgs;
use crate::error::UsageError;
use crate::model::{RunResult, MAX_RESULT_BYTES, SCHEMA_VERSION};
use crate::platform::files;
use crate::store::ResultStore;

/// A command's one read-only handle on the store: opened the first time a result is wanted
/// from it (a command that names only files never opens it), then kept for the command's life.
pub(super) struct Reader<'a> {
    args: &'a StoreArgs,
    opened: std::cell::OnceCell<(String, Option<Box<dyn ResultStore>>)>,
}

impl<'a> Reader<'a> {
    pub(super) fn new(args: &'a StoreArgs) -> Self {
        Reader {
            args,
            opened: std::cell::OnceCell::new(),
        }
    }

    /// The store's name and the store (None where no result was ever stored there).
    pub(super) fn get(&self) -> Result<(&str, Option<&dyn ResultStore>)> {
        if self.opened.get().is_none() {
            let _ = self.opened.set(self.args.open_read_only()?);
        }
        let (name, store) = self.opened.get().expect("set above");
        Ok((name, store.as_deref()))
    }
}

/// A result named by stored id or by the path of a result JSON file (`--json` output or
/// `results export --format json`), with a label for reports. The store is opened only for an
/// id, read-only.
pub(super) fn load_result(reader: &Reader<'_>, arg: &str) -> Result<(String, RunResult)> {
    let path = Path::new(arg);
    if let (Ok(id), false) = (arg.parse::<i64>(), path.exists()) {
        let (db, store) = reader.get()?;
        let r = load_stored(store, db, id)?;
        return Ok((format!("result {id}"), checked(r, &format!("result {id}"))?));
    }
    let r = load_file(arg)?;
    Ok((arg.to_string(), checked(r, arg)?))
}

/// A result JSON file; anything else is the user's mistake (exit 2).
pub(super) fn load_file(arg: &str) -> Result<RunResult> {
    let path = Path::new(arg);
    let bytes = files::read_regular(path, MAX_RESULT_BYTES).map_err(|e| {
        UsageError::new(format!(
            "{arg} is neither a stored result id nor a readable result file: {e}"
        ))
    })?;
    // The version alone first (the rest skipped, nothing kept), then the result itself:
    // never a whole `serde_json::Value` tree, which takes many times the file's size.
    #[derive(serde::Deserialize)]
    struct Version {
        schema_version: Option<serde_json::Value>,
    }
    let version: Version = serde_json::from_slice(&bytes)
        .map_err(|e| UsageError::new(format!("{arg} is not JSON: {e}")))?;
    let version = version
        .schema_version
        .and_then(|v| v.as_u64())
        .ok_or_else(|| {
            UsageError::new(format!(
                "{arg} is not a hostbench result (no schema_version)"
            ))
        })?;
    if version != u64::from(SCHEMA_VERSION) {
        return Err(UsageError::new(format!(
            "{arg} is a result of schema version {version}; this hostbench reads version {SCHEMA_VERSION}"
        ))
        .into());
    }
    let r: RunResult = serde_json::from_slice(&bytes)
        .map_err(|e| UsageError::new(format!("{arg} is not a hostbench result: {e}")))?;
    Ok(r)
}

/// A result whose raw figures are impossible (a run of 0 ns, a rate that is not a number) was
/// edited or damaged: refused rather than compared into nonsense.
pub(super) fn checked(r: RunResult, label: &str) -> Result<RunResult> {
    if let Some(problem) = r.implausible() {
        return Err(UsageError::new(format!(
            "{label} holds an impossible figure ({problem}); was it edited by hand?"
        ))
        .into());
    }
    Ok(r)
}

pub(super) fn load_stored(
    store: Option<&dyn ResultStore>,
    location: &str,
    id: i64,
) -> Result<RunResult> {
    let found = match store {
        Some(s) => s.load(id).map_err(|e| UsageError::new(format!("{e:#}")))?,
        None => None,
    };
    found.ok_or_else(|| {
        UsageError::new(format!("no stored result with id {id} in {location}")).into()
    })
}

use std::path::Path;

use anyhow::Result;
use clap::{Args, ValueEnum};

use super::GlobalArgs;
use crate::compare::compare;
use crate::error::UsageError;
use crate::model::{RunResult, SCHEMA_VERSION};
use crate::render;
use crate::store::{ResultStore, SqliteStore};

/// Exit code of `compare --fail-on-regression` when a significant regression is larger than
/// allowed (2 is taken by usage errors).
pub const EXIT_REGRESSION: i32 = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompareFormat {
    Text,
    Markdown,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The first (older) result: a stored id or a result JSON file
    pub a: String,
    /// The second (newer) result: a stored id or a result JSON file
    pub b: String,
    /// Exit with 3 when a significant regression is larger than PCT percent
    #[arg(long = "fail-on-regression", value_name = "PCT")]
    pub fail_on_regression: Option<f64>,
    /// Text for a terminal, or Markdown (--json prints JSON)
    #[arg(long, value_enum, default_value = "text")]
    pub format: CompareFormat,
}

pub fn exec(args: &CompareArgs, global: &GlobalArgs) -> Result<i32> {
    if let Some(p) = args.fail_on_regression {
        if p.is_nan() || p < 0.0 {
            return Err(
                UsageError::new("--fail-on-regression must be a percentage of 0 or more").into(),
            );
        }
    }
    let store = global.open_store()?;
    let (a_name, a) = load_result(&store, &args.a)?;
    let (b_name, b) = load_result(&store, &args.b)?;
    let c = compare(&a_name, &a, &b_name, &b)?;
    if global.json {
        println!("{}", serde_json::to_string_pretty(&c)?);
    } else {
        match args.format {
            CompareFormat::Text => print!("{}", render::compare::text(&c)),
            CompareFormat::Markdown => print!("{}", render::compare::markdown(&c)),
        }
    }
    if let Some(pct) = args.fail_on_regression {
        let worse = c.regressions_over(pct);
        if !worse.is_empty() {
            let names: Vec<String> = worse
                .iter()
                .map(|r| format!("{} ({:+.1}%)", r.name, r.change_pct))
                .collect();
            eprintln!(
                "hostbench: {} significant regression{} over {pct}%: {}",
                worse.len(),
                if worse.len() == 1 { "" } else { "s" },
                names.join("; ")
            );
            return Ok(EXIT_REGRESSION);
        }
    }
    Ok(0)
}

/// A result named by stored id or by the path of a result JSON file (`--json` output or
/// `results export --format json`), with a label for reports.
pub(super) fn load_result(store: &SqliteStore, arg: &str) -> Result<(String, RunResult)> {
    let path = Path::new(arg);
    if let (Ok(id), false) = (arg.parse::<i64>(), path.exists()) {
        let r = store.load(id)?.ok_or_else(|| {
            UsageError::new(format!(
                "no stored result with id {id} in {}",
                store.path().display()
            ))
        })?;
        return Ok((format!("result {id}"), r));
    }
    let text = std::fs::read_to_string(path).map_err(|e| {
        UsageError::new(format!(
            "{arg} is neither a stored result id nor a readable file: {e}"
        ))
    })?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| UsageError::new(format!("{arg} is not JSON: {e}")))?;
    let version = value
        .get("schema_version")
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
    let r: RunResult = serde_json::from_value(value)
        .map_err(|e| UsageError::new(format!("{arg} is not a hostbench result: {e}")))?;
    Ok((arg.to_string(), r))
}

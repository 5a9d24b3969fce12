use anyhow::Result;

use crate::model::RunResult;

/// The whole result as pretty-printed JSON, as `--json` prints it.
pub fn to_json(result: &RunResult) -> Result<String> {
    Ok(serde_json::to_string_pretty(result)?)
}

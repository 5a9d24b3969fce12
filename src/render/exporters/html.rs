//! HTML: `report`'s self-contained page (see `render::report`) for a report or one result, and
//! the one HTML escape every page and plot uses.

use anyhow::Result;

use crate::compare::Comparison;
use crate::model::RunResult;
use crate::render::report;

pub(super) fn history(h: &crate::history::Histories) -> Result<String> {
    Ok(crate::render::history::html(h))
}

pub(super) fn fleet(fleet: &crate::fleet::Fleet, selection: &str) -> Result<String> {
    Ok(crate::render::fleet::html(fleet, selection))
}

pub(super) fn result(id: i64, result: &RunResult) -> Result<String> {
    Ok(report::html(
        &[(format!("result {id}"), result.clone())],
        &[],
    ))
}

pub(super) fn report(
    results: &[(String, RunResult)],
    comparisons: &[Comparison],
) -> Result<String> {
    Ok(report::html(results, comparisons))
}

/// Escapes text for HTML and XML (SVG): element content and quoted attribute values.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_in_text_stays_text() {
        assert_eq!(
            esc(r#"<b a="1">x & y</b>"#),
            "&lt;b a=&quot;1&quot;&gt;x &amp; y&lt;/b&gt;"
        );
    }
}

//! HTML: `report`'s self-contained page (see `render::report`) for a report or one result, and
//! the one HTML escape every page and plot uses.

use anyhow::Result;

use super::{Exporter, Shown};
use crate::compare::Comparison;
use crate::model::RunResult;
use crate::render::report;

pub struct Html;

impl Exporter for Html {
    fn shows(&self) -> &'static [Shown] {
        &[Shown::Result, Shown::Report, Shown::Fleet, Shown::History]
    }

    fn history(&self, h: &crate::history::Histories) -> Option<Result<String>> {
        Some(Ok(crate::render::history::html(h)))
    }

    fn fleet(&self, fleet: &crate::fleet::Fleet, selection: &str) -> Option<Result<String>> {
        Some(Ok(crate::render::fleet::html(fleet, selection)))
    }

    fn result(&self, id: i64, result: &RunResult) -> Option<Result<String>> {
        Some(Ok(report::html(
            &[(format!("result {id}"), result.clone())],
            &[],
        )))
    }

    fn report(
        &self,
        results: &[(String, RunResult)],
        comparisons: &[Comparison],
    ) -> Option<Result<String>> {
        Some(Ok(report::html(results, comparisons)))
    }
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

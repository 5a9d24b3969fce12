//! Text for a terminal: a result's full report (the environment, then each suite as its
//! original printed it), `compare`'s table, and a report as those one after the other.

use anyhow::Result;

use super::{Exporter, Shown};
use crate::compare::Comparison;
use crate::model::RunResult;
use crate::render;

pub struct Text;

impl Exporter for Text {
    fn shows(&self) -> &'static [Shown] {
        Shown::ALL
    }

    fn fleet(&self, fleet: &crate::fleet::Fleet, selection: &str) -> Option<Result<String>> {
        Some(Ok(crate::render::fleet::text(fleet, selection)))
    }

    fn history(&self, h: &crate::history::Histories) -> Option<Result<String>> {
        Some(Ok(render::history::text(h)))
    }

    fn result(&self, _id: i64, result: &RunResult) -> Option<Result<String>> {
        Some(Ok(render::text_report(result)))
    }

    fn comparison(&self, c: &Comparison) -> Option<Result<String>> {
        Some(Ok(render::compare::text(c)))
    }

    fn report(
        &self,
        results: &[(String, RunResult)],
        comparisons: &[Comparison],
    ) -> Option<Result<String>> {
        Some(Ok(super::one_after_another(
            results,
            comparisons,
            |label, r| format!("=== {label} ===\n{}\n", render::text_report(r)),
            render::compare::text,
        )))
    }
}

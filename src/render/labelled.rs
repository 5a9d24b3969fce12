//! The results a page plots, each suite of one kind with its result's label: what every
//! suite's section of `report`'s page draws its series from.

use crate::model::{RunResult, SuiteResult};

/// Each result's suites of one kind, with the result's label; a suite that measured pinned
/// (`hostbench run`'s second pass over the ping-pongs) is labelled so, a series of its own.
pub fn suites<'a, T>(
    results: &'a [(String, RunResult)],
    pick: impl Fn(&'a SuiteResult) -> Option<&'a T>,
) -> Vec<(String, &'a T)> {
    let mut out = Vec::new();
    for (l, r) in results {
        for s in &r.suites {
            if let Some(t) = pick(s) {
                let label = if pinned(s) {
                    format!("{l}, pinned")
                } else {
                    l.clone()
                };
                out.push((label, t));
            }
        }
    }
    out
}

/// Whether a suite ran with its ping-pongs pinned to one CPU.
fn pinned(s: &SuiteResult) -> bool {
    s.data().pinned()
}

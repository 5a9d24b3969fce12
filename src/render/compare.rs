//! `compare` as a terminal table or Markdown.

use crate::compare::{Comparison, Row, Verdict};

pub(in crate::render) fn number(x: f64) -> String {
    let a = x.abs();
    if a >= 1e5 {
        format!("{x:.0}")
    } else if a >= 100.0 {
        format!("{x:.1}")
    } else if a >= 1.0 {
        format!("{x:.3}")
    } else {
        format!("{x:.4}")
    }
}

pub(in crate::render) fn ci(r: &Row) -> String {
    match r.ci_pct {
        Some([lo, hi]) => format!("[{lo:+.1}%, {hi:+.1}%]"),
        None => "-".into(),
    }
}

pub(in crate::render) fn verdict(r: &Row) -> String {
    match (&r.verdict, &r.why_not_tested, r.floor_pct) {
        (Verdict::NotTested, Some(why), _) => format!("not tested ({why})"),
        (v @ (Verdict::Better | Verdict::Worse | Verdict::WithinNoise), _, Some(f)) => {
            format!("{} (its floor ±{f:.1}%)", v.label())
        }
        (v, _, _) => v.label().to_string(),
    }
}

pub(in crate::render) fn header_lines(c: &Comparison) -> Vec<String> {
    let runs = |n: usize| {
        if n == 1 {
            String::new()
        } else {
            format!(", {n} runs from then")
        }
    };
    let mut lines = vec![
        format!(
            "A: {} ({}, {}{}, hostbench {})",
            c.a.source,
            c.a.hostname,
            c.a.started_at,
            runs(c.a.runs),
            c.a.tool_version
        ),
        format!(
            "B: {} ({}, {}{}, hostbench {})",
            c.b.source,
            c.b.hostname,
            c.b.started_at,
            runs(c.b.runs),
            c.b.tool_version
        ),
        format!("Verdicts from {}.", c.test),
    ];
    if let Some(f) = c.noise_floor_pct {
        lines.push(format!(
            "Host noise floor: ±{f:.1}% (the largest spread the runs' noise parts or noise checks measured, or drift they found); significant changes within that are reported as within the host's noise."
        ));
    }
    if let Some(n) = c.spread_runs {
        lines.push(format!(
            "Each figure's own noise floor: from {n} earlier runs of this host with the same figures, the 95% bound of the change between two of its runs (shown with its verdict)."
        ));
    }
    lines.extend(c.notes.iter().map(|n| format!("Note: {n}")));
    lines
}

pub(in crate::render) fn totals(c: &Comparison) -> String {
    format!(
        "{} measurements: {} better, {} worse, {} within the host's noise, {} no significant difference, {} not tested.",
        c.rows.len(),
        c.count(Verdict::Better),
        c.count(Verdict::Worse),
        c.count(Verdict::WithinNoise),
        c.count(Verdict::NoSignificantDifference),
        c.count(Verdict::NotTested)
    )
}

/// The table's sections, in order: what changed beyond the host's noise, what did not, what
/// could not be tested; each with the reason its rows are there.
const SECTIONS: [(&str, &[Verdict]); 3] = [
    (
        "Changed beyond the host's noise (significant at 95%, larger than the noise floor)",
        &[Verdict::Better, Verdict::Worse],
    ),
    (
        "Within noise (no significant difference, or significant but no larger than the noise floor)",
        &[Verdict::WithinNoise, Verdict::NoSignificantDifference],
    ),
    (
        "Not testable (the reason is beside each)",
        &[Verdict::NotTested],
    ),
];

/// The rows of each section that has any.
pub(in crate::render) fn sections(c: &Comparison) -> Vec<(&'static str, Vec<&Row>)> {
    SECTIONS
        .iter()
        .map(|(title, verdicts)| {
            (
                *title,
                c.rows
                    .iter()
                    .filter(|r| verdicts.contains(&r.verdict))
                    .collect::<Vec<_>>(),
            )
        })
        .filter(|(_, rows)| !rows.is_empty())
        .collect()
}

pub fn text(c: &Comparison) -> String {
    let mut out = header_lines(c).join("\n");
    out.push_str("\n\n");
    let w = c
        .rows
        .iter()
        .map(|r| r.name.len() + r.unit.len() + 3)
        .max()
        .unwrap_or(10)
        .max(11);
    out.push_str(&format!(
        "{:<w$} {:>12} {:>12} {:>9} {:>20}  verdict\n",
        "measurement", "A", "B", "change", "95% CI of change"
    ));
    for (title, rows) in sections(c) {
        out.push_str(&format!("{title}:\n"));
        for r in rows {
            out.push_str(&format!(
                "{:<w$} {:>12} {:>12} {:>8.1}% {:>20}  {}\n",
                format!("{} ({})", r.name, r.unit),
                number(r.a),
                number(r.b),
                r.change_pct,
                ci(r),
                verdict(r)
            ));
        }
    }
    out.push('\n');
    out.push_str(&totals(c));
    out.push('\n');
    out
}

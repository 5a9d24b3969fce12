//! `compare` as a terminal table or Markdown.

use crate::compare::{Basis, Comparison, Row, Verdict};
use crate::model::label::printable;
use crate::stats::RunBound;

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

/// The decimals that show `x` as more than nothing: one from 0.1 on, else enough for two
/// significant digits (a bound of 0.0071% is "±0.0071%", never "±0.0%"), at most six.
fn decimals(x: f64) -> usize {
    let a = x.abs();
    if a >= 0.1 || a == 0.0 || !a.is_finite() {
        1
    } else {
        ((-a.log10()).floor() as usize + 2).min(6)
    }
}

/// A percentage or point change with its sign, to the decimals that show it.
fn signed(x: f64) -> String {
    format!("{x:+.*}", decimals(x))
}

/// A two-run bound on the scale it lives on: "±8.5%" while the figure moves by less than half
/// or the bound is on the difference, else the factors a positive figure may move by between
/// two runs, "×0.08–×12" (a tail latency whose runs differ tenfold is not "±1100%").
pub(in crate::render) fn spread(bound: RunBound) -> String {
    let pct = bound.pct;
    if pct <= 50.0 || !bound.on_ratio {
        return format!("±{pct:.*}%", decimals(pct));
    }
    let hi = 1.0 + pct / 100.0;
    let factor = |x: f64| {
        if x >= 10.0 {
            format!("{x:.0}")
        } else if x >= 0.1 {
            format!("{x:.2}")
        } else {
            format!("{x:.2e}")
        }
    };
    format!("×{}–×{}", factor(1.0 / hi), factor(hi))
}

/// Whether a row is a percentage, whose changes are said in points.
fn in_points(r: &Row) -> bool {
    r.unit == "%"
}

/// A row's change on its scale: points for a percentage (deadlines met 99.0% to 97.5% is
/// "-1.5 pt", not "-1.5%"), else percent of A.
pub(in crate::render) fn change(r: &Row) -> String {
    if in_points(r) {
        format!("{} pt", signed(r.b - r.a))
    } else {
        format!("{}%", signed(r.change_pct))
    }
}

pub(in crate::render) fn ci(r: &Row) -> String {
    match r.ci_pct {
        // A percentage's interval in points, as its change.
        Some([lo, hi]) if in_points(r) => {
            let pt = |x: f64| x / 100.0 * r.a.abs();
            format!("[{:+.1}, {:+.1}] pt", pt(lo), pt(hi))
        }
        Some([lo, hi]) => format!("[{lo:+.1}%, {hi:+.1}%]"),
        None => "-".into(),
    }
}

pub(in crate::render) fn verdict(r: &Row) -> String {
    let floor = r.floor_pct.map(|pct| RunBound {
        pct,
        on_ratio: r.floor_on_ratio,
    });
    if let (Some(h), Some(f)) = (r.host.filter(|h| h.judged), floor) {
        let host = if h.reference_change_pct >= 0.0 {
            format!("{:.1}% slower", h.reference_change_pct)
        } else {
            format!("{:.1}% faster", -h.reference_change_pct)
        };
        return format!(
            "{} (net {}%, the host {host}; against its spread net of the host's speed here, {})",
            r.verdict.label(),
            signed(h.net_change_pct),
            spread(f)
        );
    }
    match (&r.verdict, &r.why_not_tested, floor) {
        (Verdict::NotTested, Some(why), _) => format!("not tested ({why})"),
        (v, _, Some(f)) if r.basis == Basis::History => {
            format!(
                "{} (against its run-to-run spread here, {})",
                v.label(),
                spread(f)
            )
        }
        (v @ (Verdict::Better | Verdict::Worse | Verdict::WithinNoise), _, Some(f)) => {
            format!("{} (its floor {})", v.label(), spread(f))
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
        lines.extend(what_one_run_finds(c));
    }
    lines.extend(c.notes.iter().map(|n| format!("Note: {n}")));
    lines
}

/// What one run a side can see on this host, from its history: the smallest change of each
/// index score it finds nine times in ten, and how many figures would show a 10% change so.
fn what_one_run_finds(c: &Comparison) -> Option<String> {
    let found: Vec<&Row> = c.rows.iter().filter(|r| r.found_pct.is_some()).collect();
    if found.is_empty() {
        return None;
    }
    let scores: Vec<String> = found
        .iter()
        .filter(|r| r.name.starts_with("System Benchmarks Index Score"))
        .map(|r| {
            format!(
                "{} {}",
                printable(&r.name, 80),
                spread(RunBound {
                    pct: r.found_pct.unwrap_or_default(),
                    on_ratio: r.floor_on_ratio,
                })
            )
        })
        .collect();
    let tenth = found
        .iter()
        .filter(|r| r.found_pct.is_some_and(|f| f <= 10.0))
        .count();
    let scores = if scores.is_empty() {
        String::new()
    } else {
        format!("; the smallest change it finds so: {}", scores.join(", "))
    };
    Some(format!(
        "One run a side finds a 10% change 9 times in 10 on this host in {tenth} of these {} figures{scores}.",
        found.len()
    ))
}

/// The rows called better or worse, the largest change first.
pub(in crate::render) fn changed(c: &Comparison) -> Vec<&Row> {
    let mut rows: Vec<&Row> = c
        .rows
        .iter()
        .filter(|r| matches!(r.verdict, Verdict::Better | Verdict::Worse))
        .collect();
    rows.sort_by(|a, b| b.change_pct.abs().total_cmp(&a.change_pct.abs()));
    rows
}

/// The comparison's headline, said first: how many figures changed beyond the host's noise,
/// which way, and the largest change.
pub(in crate::render) fn headline(c: &Comparison) -> String {
    let tested = c.rows.len() - c.count(Verdict::NotTested);
    let changed = changed(c);
    let Some(largest) = changed.first() else {
        return format!(
            "No figure changed beyond the host's noise ({tested} of {} tested).",
            c.rows.len()
        );
    };
    format!(
        "{} of {} figures changed beyond the host's noise: {} worse, {} better; the largest, {}: {}.",
        changed.len(),
        c.rows.len(),
        c.count(Verdict::Worse),
        c.count(Verdict::Better),
        printable(&largest.name, 80),
        change(largest)
    )
}

pub(in crate::render) fn totals(c: &Comparison) -> String {
    let history = c.rows.iter().filter(|r| r.basis == Basis::History).count();
    format!(
        "{} measurements: {} better, {} worse, {} within the host's noise, {} no significant difference, {} not tested{}.{}",
        c.rows.len(),
        c.count(Verdict::Better),
        c.count(Verdict::Worse),
        c.count(Verdict::WithinNoise),
        c.count(Verdict::NoSignificantDifference),
        c.count(Verdict::NotTested),
        not_tested_why(c),
        if history > 0 {
            format!(" {history} judged against their own run-to-run spread on this host (too few samples of their own to test).")
        } else {
            String::new()
        }
    )
}

/// Why the rows not tested were not, counted: " (3 derived: no samples, 2 fewer than two
/// samples on a side)"; empty when every row was tested.
fn not_tested_why(c: &Comparison) -> String {
    let mut why: Vec<(&str, usize)> = Vec::new();
    for r in c.rows.iter().filter(|r| r.verdict == Verdict::NotTested) {
        let w = r.why_not_tested.as_deref().unwrap_or("no reason given");
        match why.iter_mut().find(|(x, _)| *x == w) {
            Some((_, n)) => *n += 1,
            None => why.push((w, 1)),
        }
    }
    if why.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = why.iter().map(|(w, n)| format!("{n} {w}")).collect();
    format!(" ({})", parts.join(", "))
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
    let mut out = format!("{}\n\n", headline(c));
    out.push_str(&header_lines(c).join("\n"));
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
                "{:<w$} {:>12} {:>12} {:>9} {:>20}  {}\n",
                format!("{} ({})", r.name, r.unit),
                number(r.a),
                number(r.b),
                change(r),
                ci(r),
                verdict(r)
            ));
            if let Some(v) = &r.account {
                out.push_str(&format!("    {}\n", super::account::verdicts_text(v)));
            }
        }
    }
    out.push('\n');
    out.push_str(&totals(c));
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spread_is_said_on_its_scale() {
        let ratio = |pct| {
            spread(RunBound {
                pct,
                on_ratio: true,
            })
        };
        assert_eq!(ratio(8.46), "±8.5%");
        assert_eq!(ratio(50.0), "±50.0%");
        // Runs that differ tenfold: the factors, not "±900%".
        assert_eq!(ratio(900.0), "×0.10–×10");
        assert_eq!(ratio(100.0), "×0.50–×2.00");
        // The run summary's "±536191512.3%" of a tail latency.
        assert_eq!(ratio(536_191_512.3), "×1.87e-7–×5361916");
        // A bound on the difference (a history with a zero in it) is never a factor.
        assert_eq!(spread(RunBound::linear(900.0)), "±900.0%");
        // A bound below a tenth is shown, not rounded to nothing.
        assert_eq!(ratio(0.0071), "±0.0071%");
        assert_eq!(ratio(0.049), "±0.049%");
    }

    #[test]
    fn a_small_change_keeps_its_digits() {
        assert_eq!(signed(-0.003), "-0.0030");
        assert_eq!(signed(0.25), "+0.2");
        assert_eq!(signed(-12.34), "-12.3");
        assert_eq!(signed(0.0), "+0.0");
    }
}

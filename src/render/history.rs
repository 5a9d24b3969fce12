//! `hostbench history`'s text: one line a change, newest first, and what was searched.

use std::fmt::Write;

use crate::history::History;
use crate::model::label::printable;

pub fn text(h: &History) -> String {
    let mut out = String::new();
    let least = match (h.min_change_pct, h.noise_floor_pct) {
        (Some(pct), _) => format!("at least {pct:.1}% (--min-change)"),
        (None, Some(_)) => {
            "at least the noise floor of the level each leaves (the median of its results' noise checks)"
                .to_string()
        }
        (None, None) => "of any size (no result had a noise check)".to_string(),
    };
    let _ = writeln!(
        out,
        "History of {}: {} results ({} points), {} figures; changes kept at p <= {} and {least}",
        printable(&h.host, 64),
        h.results,
        h.points,
        h.series,
        h.max_p,
    );
    if h.changes.is_empty() {
        out.push_str("No change found.\n");
        return out;
    }
    let _ = writeln!(
        out,
        "{:<17} {:>7}  {:<48} {:>14} {:>14} {:>9} {:>19}  {:<6} {:>7}  tags",
        "when", "result", "figure", "before", "after", "change", "95% CI", "", "points"
    );
    for c in &h.changes {
        let ci = c.interval_pct.map_or("-".to_string(), |(lo, hi)| {
            format!("[{lo:+.1}%, {hi:+.1}%]")
        });
        let tags: Vec<String> = c
            .tags
            .iter()
            .map(|(k, v)| format!("{}={}", printable(k, 32), printable(v, 64)))
            .collect();
        let _ = writeln!(
            out,
            "{:<17} {:>7}  {:<48} {:>14} {:>14} {:>+8.1}% {:>19}  {:<6} {:>3}/{:<3}  {}",
            c.started_at.format("%Y-%m-%d %H:%M"),
            c.result_id,
            printable(&format!("{} ({})", c.name, c.unit), 48),
            short(c.before),
            short(c.after),
            c.change_pct,
            ci,
            if c.worse { "worse" } else { "better" },
            c.points_before,
            c.points_after,
            tags.join(" ")
        );
    }
    out
}

/// A level with four significant digits.
fn short(v: f64) -> String {
    let a = v.abs();
    if a >= 1e5 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.3}")
    } else {
        format!("{v:.4}")
    }
}

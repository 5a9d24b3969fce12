//! `hostbench history`'s text: one line a change, newest first, and what was searched.

use std::fmt::Write;

use crate::history::gate::Worse;
use crate::history::{in_points, Change, Closest, Drift, Histories, History, Suspect};
use crate::model::label::printable;

/// One host's history.
fn host_text(h: &History) -> String {
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
        "History of {}: {}; changes kept at p <= {} and {least}",
        h.host.cut(64),
        sizes(h),
        h.max_p,
    );
    if h.changes.is_empty() {
        out.push_str("No change found.\n");
        if h.closest.is_empty() {
            let _ = writeln!(out, "{}", no_close_call(h));
        } else {
            let _ = writeln!(out, "{CLOSEST}:");
            for c in &h.closest {
                let _ = writeln!(out, "  {}", closest_line(c));
            }
        }
    } else {
        changes_table(&mut out, h);
    }
    if !h.drifts.is_empty() {
        let _ = writeln!(out, "{DRIFTS}:");
        for d in &h.drifts {
            let _ = writeln!(out, "  {}", drift_line(d));
        }
    }
    if !h.suspected.is_empty() {
        let _ = writeln!(out, "{SUSPECTED}:");
        for x in &h.suspected {
            let _ = writeln!(out, "  {}", suspect_line(x));
        }
    }
    if let Some(line) = reference_moved_line(h) {
        let _ = writeln!(out, "{line}");
    }
    if let Some(gate) = &h.gate {
        if gate.is_empty() {
            let _ = writeln!(out, "{GATE}: no figure is worse.");
        } else {
            let _ = writeln!(out, "{GATE}:");
            for w in gate {
                let _ = writeln!(out, "  {}", gate_line(w));
            }
        }
    }
    out
}

/// The heading of the nightly gate's verdicts.
const GATE: &str = "The newest results against the level before them (--fail-on)";

/// One figure the gate found worse: its size and interval, the newest results against those
/// before, the test, and whether it fails the job tonight (and why not).
pub fn gate_line(w: &Worse) -> String {
    let (lo, hi) = w.interval;
    let unit = if in_points(w.unit.raw()) { " pt" } else { "%" };
    let newest = if w.points_after == 1 {
        "the newest result".to_string()
    } else {
        format!("the newest {}", w.points_after)
    };
    let verdict = match (&w.found_on, &w.host, w.fails) {
        (Some(id), _, _) => match &w.found_with {
            Some(other) => format!(
                "{} was found worse on the night of result {id}: the same event, not again",
                other.cut(200)
            ),
            None => format!("found already on the night of result {id}: not again"),
        },
        (None, Some(why), true) => format!("fails (the host's own: {why})"),
        (None, Some(why), false) => {
            format!("the host's own, not the figure's: {why} (--fail-on-host fails on it)")
        }
        (None, None, _) => "fails".to_string(),
    };
    // What changed with it, by the host's account (not the long list of what did not).
    let cause = match &w.account {
        Some(v) if !v.changed.is_empty() => {
            let only = crate::model::account::ItemVerdicts {
                changed: v.changed.clone(),
                unchanged: Vec::new(),
            };
            format!("; {}", super::account::verdicts_text(&only))
        }
        _ => String::new(),
    };
    let test = match (w.normal, w.named) {
        // The account's own test is the evidence: the figure's t is shown, not judged.
        (_, true) => format!(
            "the account names a cause and decides (the figure's own Student's t: p {} over {} newest counts)",
            p_text(w.p),
            w.tried
        ),
        (true, false) => format!(
            "Student's t p {} over {} newest counts (normal noise assumed)",
            p_text(w.p),
            w.tried
        ),
        (false, false) => format!(
            "shuffled p {} over {} newest counts (no shape of noise assumed)",
            p_text(w.p),
            w.tried
        ),
    };
    format!(
        "{} ({}): worse {:+.1}{unit} [{:+.1}, {:+.1}]{unit} from result {} ({}), {newest} against {} before; {test}, at least {:.1}{unit}{cause}; {verdict}",
        w.name.cut(200),
        w.unit.cut(16),
        w.change,
        lo,
        hi,
        w.result_id,
        w.started_at.format("%Y-%m-%d %H:%M"),
        w.points_before,
        w.least,
    )
}

/// The heading of the drifts, in text and Markdown.
const DRIFTS: &str = "Drifts (a steady change over the whole series, not a step)";

/// One drift: its rate a point and over the series, and which way.
fn drift_line(d: &Drift) -> String {
    let (per, span) = if crate::history::in_points(d.unit.raw()) {
        (
            format!("{:+.3} pt", d.per_point),
            format!("{:+.1} pt", d.over_span),
        )
    } else {
        (
            format!("{:+.3}%", d.per_point),
            format!("{:+.1}%", d.over_span),
        )
    };
    format!(
        "{} ({}): {per} a point, {span} over {} points (results {} to {}), {}",
        d.name.cut(120),
        d.unit.cut(16),
        d.points,
        d.from_result,
        d.to_result,
        if d.worse { "worse" } else { "better" }
    )
}

/// The heading of the closest calls, in text and Markdown.
const CLOSEST: &str = "Closest calls (the best cut of each series, none kept)";

/// Where no series' best cut came near: the line that says so.
fn no_close_call(h: &History) -> String {
    format!(
        "No figure's best cut came within p {} (five times the p changes are kept at).",
        p_text(h.max_p * crate::history::CLOSEST_P)
    )
}

/// One closest call: the figure, the cut's size, where it starts and its p.
fn closest_line(c: &Closest) -> String {
    let size = size_text(&c.unit, c.before, c.after, c.change_pct);
    format!(
        "{} ({}): {size} from result {} ({}), p {}",
        c.name.cut(120),
        c.unit.cut(16),
        c.result_id,
        c.started_at.format("%Y-%m-%d %H:%M"),
        p_text(c.p),
    )
}

/// The heading of the suspected changes, in text and Markdown.
const SUSPECTED: &str = "Suspected in the newest runs, not yet certain (normal noise would call it a change; the test assumes no shape of noise)";

/// One suspected change: the figure, its size, where it starts, both p and how many more runs
/// at the new level would make it certain.
fn suspect_line(x: &Suspect) -> String {
    let size = size_text(&x.unit, x.before, x.after, x.change_pct);
    let more = match x.runs_to_certain {
        Some(1) => "one more run at this level would make it certain".to_string(),
        Some(n) => format!("{n} more runs at this level would make it certain"),
        None => match crate::stats::newest::MAX_NEWEST - x.points_after {
            0 | 1 => "more runs at this level would not make it certain".to_string(),
            n => format!("more than {n} more runs would be needed"),
        },
    };
    let p = match x.p {
        Some(p) => format!("p {p:.3} (normal noise: {:.1e})", x.p_normal),
        None => format!(
            "not tested: Student's t p {:.1e} missed the bar {:.1e} the newest test shuffles at",
            x.p_normal, x.shuffle_bar
        ),
    };
    format!(
        "{} ({}): {} {} from result {} ({}), the newest {} against {} before; {p}; {more}",
        x.name.cut(120),
        x.unit.cut(16),
        if x.worse { "worse" } else { "better" },
        size,
        x.result_id,
        x.started_at.format("%Y-%m-%d %H:%M"),
        x.points_after,
        x.points_before,
    )
}

/// "16 results (16 points), 1 figure": what a history read.
fn sizes(h: &History) -> String {
    let n = |count: usize, one: &str, many: &str| {
        format!("{count} {}", if count == 1 { one } else { many })
    };
    format!(
        "{} ({}), {}",
        n(h.results, "result", "results"),
        n(h.points, "point", "points"),
        n(h.series, "figure", "figures")
    )
}

/// A change's p as its table shows it: the permutation p, to three places where it has them.
fn p_text(p: f64) -> String {
    if p >= 0.001 {
        format!("{p:.3}")
    } else {
        format!("{p:.0e}")
    }
}

/// The changes' table of one host's text.
fn changes_table(out: &mut String, h: &History) {
    let _ = writeln!(
        out,
        "{:<17} {:>7}  {:<48} {:>14} {:>14} {:>9} {:>19}  {:<9} {:>6} {:>7}  tags",
        "when",
        "result",
        "figure",
        "before",
        "after",
        "change",
        "95% CI",
        "direction",
        "p",
        "points"
    );
    for c in &h.changes {
        let ci = ci_text(c);
        let tags: Vec<String> = c
            .tags
            .iter()
            .map(|(k, v)| format!("{}={}", k.cut(32), v.cut(64)))
            .collect();
        let _ = writeln!(
            out,
            "{:<17} {:>7}  {:<48} {:>14} {:>14} {:>9} {:>19}  {:<9} {:>6} {:>3}/{:<3}  {}",
            c.started_at.format("%Y-%m-%d %H:%M"),
            c.result_id,
            printable(&format!("{} ({})", c.name, c.unit), 160),
            short(c.before),
            short(c.after),
            change_text(c),
            ci,
            if c.worse { "worse" } else { "better" },
            p_text(c.p),
            c.points_before,
            c.points_after,
            tags.join(" ")
        );
        if let Some(n) = &c.net {
            let _ = writeln!(out, "    {}", net_line(n));
        }
        if let Some(v) = &c.account {
            let _ = writeln!(out, "    {}", super::account::verdicts_text(v));
        }
    }
}

/// Under a change found net of the host's speed: that it was, and how the figure followed it.
fn net_line(n: &crate::history::NetOfHost) -> String {
    format!(
        "net of the host's speed: the levels are the figure's values over its fixed-work reference's (slope {:+.2}, r {:+.2} over this history); the values as measured are in the series",
        n.slope, n.r
    )
}

/// Where the host's reference itself changed in the history: nothing was judged net of it.
pub(super) fn reference_moved_line(h: &History) -> Option<String> {
    h.reference_moved_at.map(|id| {
        format!(
            "The host's fixed-work reference itself changed from result {id} on: every figure is judged as measured, not net of the host's speed."
        )
    })
}

/// A change on its figure's scale: points for a percentage (a percentile's "% slower" from
/// 3.0 to 11.0 is "+8.0 pt"), else percent of the level before.
fn change_text(c: &Change) -> String {
    size_text(&c.unit, c.before, c.after, c.change_pct)
}

/// A move from `before` to `after` on its unit's scale: points for a percentage, else
/// `change_pct` percent.
fn size_text(unit: &crate::text::Text, before: f64, after: f64, change_pct: f64) -> String {
    if crate::history::in_points(unit.raw()) {
        format!("{:+.1} pt", after - before)
    } else {
        format!("{change_pct:+.1}%")
    }
}

/// A change's 95% interval, on the same scale as [`change_text`]; "-" without one.
fn ci_text(c: &Change) -> String {
    match c.interval_pct {
        Some((lo, hi)) if crate::history::in_points(c.unit.raw()) => {
            let pt = |x: f64| x / 100.0 * c.before.abs();
            format!("[{:+.1}, {:+.1}] pt", pt(lo), pt(hi))
        }
        Some((lo, hi)) => format!("[{lo:+.1}%, {hi:+.1}%]"),
        None => "-".into(),
    }
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

pub fn markdown(hs: &Histories, cell: fn(&str) -> String) -> String {
    let mut out = String::new();
    if hs.fleet {
        out.push_str(&format!(
            "# hostbench history of {} hosts\n\n",
            hs.hosts.len()
        ));
        if !hs.shared.is_empty() {
            out.push_str("Seen on several hosts at one tag:\n\n");
            for line in shared_lines(hs) {
                out.push_str(&format!("- {}\n", cell(&line)));
            }
            out.push('\n');
        }
        if let Some(lines) = fleet_gate_lines(hs) {
            let _ = writeln!(out, "{FLEET_GATE}:\n");
            if lines.is_empty() {
                let _ = writeln!(out, "{FLEET_GATE_NONE}");
            }
            for line in lines {
                let _ = writeln!(out, "- {}", cell(&line));
            }
            out.push('\n');
        }
    }
    if !hs.fleet {
        for h in &hs.hosts {
            out.push_str(&host_markdown(h, cell));
            out.push('\n');
        }
        return out;
    }
    let (quiet, telling) = quiet_hosts(hs);
    for h in telling {
        out.push_str(&host_markdown(h, cell));
        out.push('\n');
    }
    if let Some(line) = quiet_line(&quiet) {
        let _ = writeln!(out, "{}", cell(&line));
    }
    out
}

fn host_markdown(h: &History, cell: fn(&str) -> String) -> String {
    let mut out = format!(
        "## hostbench history: {}\n\n{}; p <= {}\n\n",
        cell(&h.host.to_string()),
        sizes(h),
        h.max_p
    );
    if !h.drifts.is_empty() {
        let _ = writeln!(out, "{DRIFTS}:\n");
        for d in &h.drifts {
            let _ = writeln!(out, "- {}", cell(&drift_line(d)));
        }
        out.push('\n');
    }
    if !h.suspected.is_empty() {
        let _ = writeln!(out, "{SUSPECTED}:\n");
        for x in &h.suspected {
            let _ = writeln!(out, "- {}", cell(&suspect_line(x)));
        }
        out.push('\n');
    }
    if h.changes.is_empty() {
        out.push_str("No change found.\n");
        if h.closest.is_empty() {
            let _ = writeln!(out, "\n{}", no_close_call(h));
        } else {
            let _ = writeln!(out, "\n{CLOSEST}:\n");
            for c in &h.closest {
                let _ = writeln!(out, "- {}", cell(&closest_line(c)));
            }
        }
        return out;
    }
    out.push_str(
        "| when | result | figure | before | after | change | 95% CI | direction | p | points before / after | tags |\n",
    );
    out.push_str("| --- | ---: | --- | ---: | ---: | ---: | --- | --- | ---: | ---: | --- |\n");
    for c in &h.changes {
        let ci = ci_text(c);
        let tags: Vec<String> = c.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} / {} | {} |",
            c.started_at.format("%Y-%m-%d %H:%M"),
            c.result_id,
            cell(&format!(
                "{} ({}){}",
                c.name,
                c.unit,
                if c.net.is_some() {
                    ", net of the host's speed"
                } else {
                    ""
                }
            )),
            short(c.before),
            short(c.after),
            change_text(c),
            ci,
            if c.worse { "worse" } else { "better" },
            p_text(c.p),
            c.points_before,
            c.points_after,
            cell(&tags.join(" "))
        );
    }
    if let Some(line) = reference_moved_line(h) {
        let _ = writeln!(out, "\n{}", cell(&line));
    }
    // What the host's account says beside each change, under the table.
    let explained: Vec<_> = h.changes.iter().filter(|c| c.account.is_some()).collect();
    if !explained.is_empty() {
        out.push('\n');
    }
    for c in explained {
        if let Some(v) = &c.account {
            let _ = writeln!(
                out,
                "- {} at result {}: {}",
                cell(&c.name.to_string()),
                c.result_id,
                cell(&super::account::verdicts_text(v))
            );
        }
    }
    out
}

/// A page: the changes' table, then each changed series drawn with its levels, a section a host.
pub fn html(hs: &Histories) -> String {
    use super::svg::esc;
    let title = match hs.hosts.as_slice() {
        [h] if !hs.fleet => h.host.to_string(),
        hosts => format!("{} hosts", hosts.len()),
    };
    let mut out = format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\
<title>hostbench history: {t}</title><style>{style}</style></head><body><h1>hostbench history: {t}</h1>",
        t = esc(&title),
        style = super::report::STYLE,
    );
    if hs.fleet && !hs.shared.is_empty() {
        out.push_str("<h2>Seen on several hosts at one tag</h2><ul>");
        for line in shared_lines(hs) {
            out.push_str(&format!("<li>{}</li>", esc(&line)));
        }
        out.push_str("</ul>");
    }
    if let Some(lines) = fleet_gate_lines(hs).filter(|_| hs.fleet) {
        let _ = write!(out, "<h2>{}</h2>", esc(FLEET_GATE));
        if lines.is_empty() {
            let _ = write!(out, "<p>{}</p>", esc(FLEET_GATE_NONE));
        } else {
            out.push_str("<ul>");
            for line in lines {
                let _ = write!(out, "<li>{}</li>", esc(&line));
            }
            out.push_str("</ul>");
        }
    }
    for h in &hs.hosts {
        host_html(&mut out, h);
    }
    out.push_str("</body></html>\n");
    out
}

fn host_html(out: &mut String, h: &History) {
    use super::svg::{esc, line_chart, Series, XScale};
    let _ = write!(
        out,
        "<h2>{}</h2><p>{}; changes kept at p &lt;= {}.</p><pre>{}</pre>",
        esc(&h.host.to_string()),
        esc(&sizes(h)),
        h.max_p,
        esc(&host_text(h))
    );
    // Every series asked for (the changed ones first), each point at its result's number, as
    // the table names results.
    for s in h.changed.iter().chain(&h.unchanged) {
        let at: Vec<usize> = {
            let mut v: Vec<usize> = h
                .changes
                .iter()
                .filter(|c| c.key == s.key)
                .map(|c| c.point)
                .collect();
            v.sort_unstable();
            v
        };
        let x = |i: usize| s.points[i].ids[0] as f64;
        let values: Vec<(f64, f64)> = (0..s.points.len())
            .map(|i| (x(i), s.points[i].value))
            .collect();
        // The level of each stretch between changes, drawn as a step.
        let mut levels = Vec::new();
        let mut bounds = vec![0];
        bounds.extend(&at);
        bounds.push(s.points.len());
        for w in bounds.windows(2) {
            let (a, b) = (w[0], w[1]);
            if b > a {
                let mean = s.points[a..b].iter().map(|p| p.value).sum::<f64>() / (b - a) as f64;
                levels.push((x(a), mean));
                levels.push((x(b - 1), mean));
            }
        }
        let title = if at.is_empty() {
            format!("{} — no change", s.name)
        } else {
            let results: Vec<String> = at.iter().map(|&i| s.points[i].ids[0].to_string()).collect();
            format!("{} — changes at result {}", s.name, results.join(", "))
        };
        out.push_str(&line_chart(
            "history",
            &title,
            "result (oldest first)",
            &s.unit.to_string(),
            &[
                Series {
                    name: "runs".into(),
                    points: values,
                },
                Series {
                    name: "levels".into(),
                    points: levels,
                },
            ],
            XScale::Linear,
        ));
    }
}

/// The whole text: one host's history; with `--fleet`, the changes several hosts share, then
/// each host's.
pub fn text(hs: &Histories) -> String {
    if !hs.fleet {
        return hs.hosts.iter().map(host_text).collect();
    }
    let mut out = format!("History of {} hosts.\n", hs.hosts.len());
    if hs.shared.is_empty() {
        out.push_str("No change is seen on two hosts at one tag.\n");
    } else {
        out.push_str("Seen on several hosts at one tag:\n");
        for line in shared_lines(hs) {
            let _ = writeln!(out, "  {line}");
        }
    }
    if let Some(lines) = fleet_gate_lines(hs) {
        let _ = writeln!(out, "\n{FLEET_GATE}:");
        if lines.is_empty() {
            let _ = writeln!(out, "  {FLEET_GATE_NONE}");
        }
        for line in lines {
            let _ = writeln!(out, "  {line}");
        }
    }
    let (quiet, telling) = quiet_hosts(hs);
    for h in telling {
        out.push('\n');
        out.push_str(&host_text(h));
    }
    if let Some(line) = quiet_line(&quiet) {
        let _ = write!(out, "\n{line}\n");
    }
    out
}

/// `--fleet`: the hosts where nothing was found (no change, drift or suspect), and the others.
/// The quiet ones are said in one line, not a section each: 1,000 hosts of which three changed
/// read as three sections.
fn quiet_hosts(hs: &Histories) -> (Vec<&History>, Vec<&History>) {
    hs.hosts
        .iter()
        .partition(|h| h.changes.is_empty() && h.drifts.is_empty() && h.suspected.is_empty())
}

/// The one line of the quiet hosts (the first 20 named), or None where there are none.
fn quiet_line(quiet: &[&History]) -> Option<String> {
    const NAMED: usize = 20;
    if quiet.is_empty() {
        return None;
    }
    let names: Vec<String> = quiet
        .iter()
        .take(NAMED)
        .map(|h| h.host.cut(64).to_string())
        .collect();
    Some(format!(
        "No change found on {} host{}: {}{} (`history --host HOST` shows one's closest calls).",
        quiet.len(),
        if quiet.len() == 1 { "" } else { "s" },
        names.join(", "),
        if quiet.len() > NAMED {
            format!(" and {} more", quiet.len() - NAMED)
        } else {
            String::new()
        }
    ))
}

/// The heading of the fleet's gate section, in every format.
const FLEET_GATE: &str =
    "Worse in the newest results than before them (the nightly gate), by figure";

/// `--fleet --fail-on`: what got worse and on which hosts, a line a figure, the figures on
/// most hosts first; each host's change, and whether tonight is its first night (it fails the
/// gate), an earlier night found it, or the host's own speed moved it. None where no host was
/// judged by the gate.
fn fleet_gate_lines(hs: &Histories) -> Option<Vec<String>> {
    let mut by_key: std::collections::BTreeMap<&str, Vec<(&History, &Worse)>> = Default::default();
    let mut judged = false;
    for h in &hs.hosts {
        let Some(gate) = &h.gate else { continue };
        judged = true;
        for w in gate {
            by_key.entry(w.key.raw()).or_default().push((h, w));
        }
    }
    if !judged {
        return None;
    }
    let mut figures: Vec<_> = by_key.into_values().collect();
    figures.sort_by_key(|hosts| {
        let new = hosts.iter().filter(|(_, w)| w.fails).count();
        (std::cmp::Reverse(new), std::cmp::Reverse(hosts.len()))
    });
    Some(figures.iter().map(|hosts| fleet_gate_line(hosts)).collect())
}

/// One figure's line of [`fleet_gate_lines`].
fn fleet_gate_line(hosts: &[(&History, &Worse)]) -> String {
    let (_, first) = hosts[0];
    let new = hosts.iter().filter(|(_, w)| w.fails).count();
    // The new ones first, then the rest; at most NAMED named (a kernel can slow 300 hosts).
    const NAMED: usize = 20;
    let mut order: Vec<&(&History, &Worse)> = hosts.iter().collect();
    order.sort_by_key(|(_, w)| !w.fails);
    let mut each: Vec<String> = order
        .iter()
        .take(NAMED)
        .map(|(h, w)| {
            let unit = if in_points(w.unit.raw()) { " pt" } else { "%" };
            let when = match (w.fails, &w.host) {
                (true, _) => "new tonight".to_string(),
                (false, Some(_)) => "the host's own speed".to_string(),
                (false, None) => format!("since {}", w.started_at.format("%Y-%m-%d")),
            };
            format!("{} {:+.1}{unit} ({when})", h.host.cut(64), w.change)
        })
        .collect();
    if hosts.len() > NAMED {
        each.push(format!("and {} more", hosts.len() - NAMED));
    }
    format!(
        "{} ({}): worse on {} host{}, {new} new tonight: {}",
        first.name.cut(120),
        first.unit.cut(16),
        hosts.len(),
        if hosts.len() == 1 { "" } else { "s" },
        each.join(", ")
    )
}

/// The line said where the gate found nothing on any host.
const FLEET_GATE_NONE: &str = "No figure of any host is worse in its newest results.";

/// A line a shared change: "... worse at kernel=6.19 on 4 hosts: a -9.8%, b -10.1%, ...".
fn shared_lines(hs: &Histories) -> Vec<String> {
    hs.shared
        .iter()
        .map(|s| {
            let hosts: Vec<String> = s
                .hosts
                .iter()
                .map(|(h, pct)| format!("{} {pct:+.1}%", h.cut(64)))
                .collect();
            format!(
                "{} {} at {} on {} hosts: {}",
                s.name.cut(120),
                if s.worse { "worse" } else { "better" },
                printable(&s.tag, 120),
                s.hosts.len(),
                hosts.join(", ")
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn history_of(n: usize) -> History {
        History::quiet("h", n)
    }

    fn change(unit: &str, before: f64, after: f64) -> Change {
        Change {
            key: "k".into(),
            name: "n".into(),
            unit: unit.into(),
            point: 3,
            result_id: 4,
            started_at: chrono::DateTime::UNIX_EPOCH,
            tags: Default::default(),
            tags_changed: Default::default(),
            before,
            after,
            change_pct: (after / before - 1.0) * 100.0,
            interval_pct: Some((100.0, 400.0)),
            worse: true,
            p: 0.01,
            min_change_pct: 1.0,
            points_before: 3,
            points_after: 3,
            newest_runs: false,
            account: None,
            net: None,
        }
    }

    #[test]
    fn a_percentage_is_said_in_points_and_the_rest_in_percent() {
        // A p90 from 3% to 11% slower: +8.0 points, its interval as points of the level.
        let p = change("%", 3.0, 11.0);
        assert_eq!(change_text(&p), "+8.0 pt");
        assert_eq!(ci_text(&p), "[+3.0, +12.0] pt");
        let ms = change("ms", 10.0, 12.0);
        assert_eq!(change_text(&ms), "+20.0%");
        assert_eq!(ci_text(&ms), "[+100.0%, +400.0%]");
    }

    fn suspect(unit: &str, before: f64, after: f64, more: Option<usize>) -> Suspect {
        Suspect {
            key: "k".into(),
            name: "n".into(),
            unit: unit.into(),
            result_id: 16,
            started_at: chrono::DateTime::UNIX_EPOCH,
            points_after: 1,
            points_before: 15,
            before,
            after,
            change_pct: (after / before - 1.0) * 100.0,
            worse: true,
            p: Some(0.0625),
            p_normal: 4e-5,
            shuffle_bar: 0.002,
            runs_to_certain: more,
        }
    }

    #[test]
    fn a_suspicion_says_its_size_both_p_and_how_many_more_runs() {
        let line = suspect_line(&suspect("ms", 10.0, 20.0, Some(2)));
        assert_eq!(
            line,
            "n (ms): worse +100.0% from result 16 (1970-01-01 00:00), the newest 1 against 15 \
             before; p 0.062 (normal noise: 4.0e-5); 2 more runs at this level would make it \
             certain"
        );
        assert!(suspect_line(&suspect("ms", 10.0, 20.0, Some(1)))
            .ends_with("one more run at this level would make it certain"));
        assert!(suspect_line(&suspect("ms", 10.0, 20.0, None))
            .ends_with("more than 4 more runs would be needed"));
        let mut four = suspect("ms", 10.0, 20.0, None);
        four.points_after = 4;
        assert!(suspect_line(&four).ends_with("more runs at this level would not make it certain"));
        assert!(suspect_line(&suspect("%", 3.0, 11.0, None)).contains("worse +8.0 pt"));
        // Listed under its heading when nothing is certain yet, and in Markdown too.
        let mut h = History {
            suspected: vec![suspect("ms", 10.0, 20.0, Some(2))],
            ..history_of(16)
        };
        let text = host_text(&h);
        assert!(
            text.contains("No change found.\nNo figure's best cut came within p 0.050")
                && text.contains("\nSuspected in the newest runs"),
            "{text}"
        );
        let md = host_markdown(&h, |s| s.to_string());
        assert!(md.contains("- n (ms): worse +100.0%"), "{md}");
        // A suspicion the shuffles never tested says so, never "p 1.000".
        h.suspected[0].p = None;
        let untested = suspect_line(&h.suspected[0]);
        assert!(
            untested.contains("not tested: Student's t p 4.0e-5 missed the bar 2.0e-3")
                && !untested.contains("p 1.000"),
            "{untested}"
        );
    }

    #[test]
    fn a_drift_is_said_once_with_its_rate_and_span() {
        let d = Drift {
            key: "k".into(),
            name: "n".into(),
            unit: "ms".into(),
            from_result: 1,
            to_result: 200,
            points: 200,
            per_point: 0.025,
            over_span: 5.0,
            worse: true,
        };
        assert_eq!(
            drift_line(&d),
            "n (ms): +0.025% a point, +5.0% over 200 points (results 1 to 200), worse"
        );
        let pt = Drift {
            unit: "%".into(),
            ..d.clone()
        };
        assert!(drift_line(&pt).contains("+0.025 pt a point, +5.0 pt over"));
        let h = History {
            drifts: vec![d],
            ..history_of(200)
        };
        let text = host_text(&h);
        assert!(text.contains("\nDrifts (a steady change"), "{text}");
        assert!(host_markdown(&h, |s| s.to_string()).contains("- n (ms): +0.025% a point"));
    }

    #[test]
    fn a_figures_whole_name_is_in_the_table() {
        // p1bench's spread figures differ only at their end: the job's name must stay.
        let mut c = change("%", 3.0, 11.0);
        c.name = "noise: p90 run, % slower than the fastest, cpu 20 ms job".into();
        let h = History {
            changes: vec![c],
            ..history_of(6)
        };
        let mut out = String::new();
        changes_table(&mut out, &h);
        assert!(
            out.contains("noise: p90 run, % slower than the fastest, cpu 20 ms job (%)"),
            "{out}"
        );
    }

    #[test]
    fn the_fleets_gate_says_what_got_worse_and_where_new_first() {
        let mut old = Worse::first_night("index/1 copy/dhry2reg", -4.0);
        old.unit = "index".into();
        old.fails = false;
        old.found_on = Some(15);
        let tonight = Worse::first_night("noise/run time", 30.0);
        let hs = Histories {
            fleet: true,
            hosts: vec![
                History {
                    gate: Some(vec![old.clone()]),
                    ..History::quiet("a", 17)
                },
                History {
                    gate: Some(vec![old, tonight]),
                    ..History::quiet("b", 17)
                },
                History {
                    gate: Some(Vec::new()),
                    ..History::quiet("c", 17)
                },
            ],
            shared: Vec::new(),
        };
        let lines = fleet_gate_lines(&hs).unwrap();
        assert_eq!(
            lines,
            [
                "noise/run time (ms): worse on 1 host, 1 new tonight: b +30.0% (new tonight)",
                "index/1 copy/dhry2reg (index): worse on 2 hosts, 0 new tonight: a -4.0% (since 2023-11-14), b -4.0% (since 2023-11-14)",
            ]
        );
        let text = text(&hs);
        assert!(
            text.contains(&format!("\n{FLEET_GATE}:\n  noise/run time")),
            "{text}"
        );
        assert!(markdown(&hs, |s| s.to_string())
            .contains(&format!("{FLEET_GATE}:\n\n- noise/run time")));
        assert!(html(&hs).contains(&format!("<h2>{FLEET_GATE}</h2><ul><li>noise/run time")));
        // Judged and nothing found is said; not judged (no --fail-on) says nothing.
        let quiet = Histories {
            hosts: vec![History {
                gate: Some(Vec::new()),
                ..History::quiet("c", 17)
            }],
            ..hs.clone()
        };
        assert!(text_has(&quiet, FLEET_GATE_NONE));
        let unjudged = Histories {
            hosts: vec![History::quiet("c", 17)],
            ..hs
        };
        assert!(!text_has(&unjudged, FLEET_GATE));
    }

    #[test]
    fn a_figure_worse_on_many_hosts_names_twenty_the_new_first() {
        let hs: Vec<History> = (0..25)
            .map(|i| {
                let mut w = Worse::first_night("noise/run time", 10.0);
                w.fails = i == 24;
                History {
                    gate: Some(vec![w]),
                    ..History::quiet(&format!("h{i}"), 17)
                }
            })
            .collect();
        let refs: Vec<(&History, &Worse)> = hs
            .iter()
            .map(|h| (h, &h.gate.as_ref().unwrap()[0]))
            .collect();
        let line = fleet_gate_line(&refs);
        assert!(
            line.starts_with("noise/run time (ms): worse on 25 hosts, 1 new tonight: h24 +10.0% (new tonight), h0 ")
                && line.ends_with(", and 5 more"),
            "{line}"
        );
    }

    fn text_has(hs: &Histories, what: &str) -> bool {
        text(hs).contains(what)
    }
}

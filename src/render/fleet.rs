//! `hostbench report --fleet`: the fleet's page (a sortable table with a row per host, its
//! ranges, a plot of each headline figure across hosts and across tags) and its text table
//! (the CSV is in `exporters/csv.rs`). The page is self-contained; its one script sorts the table (click a heading, or
//! open it as `fleet.html#sort=KEY` or `#sort=KEY-desc`), and its Content-Security-Policy
//! forbids every request.

use std::fmt::Write;

use crate::fleet::{Cell, Column, Fleet, Outside};
use crate::model::figures::Better;
use crate::render::report::STYLE;
use crate::render::svg::{bar_chart, esc, BarRow};

/// The page's own rules, after the report's (`report::STYLE`).
const FLEET_STYLE: &str = "body{max-width:80em}td,th{vertical-align:top}th[data-key]{cursor:pointer}\
th[aria-sort=ascending]::after{content:' \\25B2'}th[aria-sort=descending]::after{content:' \\25BC'}\
td.worse{background:#fbd5d5;color:inherit}td.better{background:#d5e3fb;color:inherit}small{color:#555}";

/// Sorts the table by a heading's column: numbers by their `data-v` (cells without one last),
/// text by its words; a second click reverses. `#sort=KEY[-desc]` sorts on opening.
const SORT_SCRIPT: &str = "(function(){var t=document.getElementById('fleet');if(!t)return;\
var hs=t.tHead.rows[0].cells;function sort(i,desc){var b=t.tBodies[0];\
var rs=Array.prototype.slice.call(b.rows);rs.sort(function(x,y){var a=x.cells[i],c=y.cells[i];\
var va=a.getAttribute('data-v'),vc=c.getAttribute('data-v');\
if(hs[i].getAttribute('data-type')==='num'){if(va===null&&vc===null)return 0;if(va===null)return 1;\
if(vc===null)return -1;var d=parseFloat(va)-parseFloat(vc);return desc?-d:d;}\
var s=a.textContent.localeCompare(c.textContent);return desc?-s:s;});\
rs.forEach(function(r){b.appendChild(r);});for(var j=0;j<hs.length;j++)hs[j].removeAttribute('aria-sort');\
hs[i].setAttribute('aria-sort',desc?'descending':'ascending');}\
Array.prototype.forEach.call(hs,function(h,i){h.addEventListener('click',function(){\
sort(i,h.getAttribute('aria-sort')==='ascending');});});\
var m=/^#sort=([a-z_]+)(-desc)?$/.exec(location.hash);if(m){Array.prototype.forEach.call(hs,\
function(h,i){if(h.getAttribute('data-key')===m[1])sort(i,!!m[2]);});}})();";

/// The key of a column in the page (`#sort=`), the CSV and the JSON.
pub fn key(c: Column) -> &'static str {
    match c {
        Column::IndexOne => "index_one",
        Column::IndexMany => "index_many",
        Column::InteractiveWorst => "interactive_worst",
        Column::Sched => "sched",
        Column::Noise => "noise",
    }
}

fn better_text(c: Column) -> &'static str {
    match c.better() {
        Better::Higher => "higher is better",
        Better::Lower => "lower is better",
    }
}

/// A figure with as many digits as it deserves.
fn num(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else if v.abs() >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

fn tags_text(tags: &std::collections::BTreeMap<String, String>) -> String {
    tags.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn off_median(c: &Cell) -> String {
    c.from_median_pct
        .map(|p| format!(" ({p:+.1}%)"))
        .unwrap_or_default()
}

/// The whole page; `selection` says which results it is of.
pub fn html(f: &Fleet, selection: &str) -> String {
    let mut out = String::new();
    let title = format!(
        "hostbench fleet: {} host{}",
        f.rows.len(),
        if f.rows.len() == 1 { "" } else { "s" }
    );
    let _ = write!(
        out,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\
<title>{0}</title><style>{STYLE}{FLEET_STYLE}</style></head><body><h1>{0}</h1><p>Of {1}. Each figure is the host's \
latest complete result that has it; a host is its --host-label, else its hostname. Click a heading to sort.</p>\
<p>Highlighted: a figure outside its range, <span style=\"background:#fbd5d5\">on the worse side</span> \
(the host may be sick) or <span style=\"background:#d5e3fb\">on the better side</span>. The range: {2}.</p>",
        esc(&title),
        esc(selection),
        esc(&f.rule)
    );
    for n in &f.notes {
        let _ = write!(out, "<p>Note: {}.</p>", esc(n));
    }
    let sick = f.sick();
    let _ = write!(
        out,
        "<p id=\"sick\">{}</p>",
        if sick.is_empty() {
            "No host lies outside a range on the worse side.".to_string()
        } else {
            format!("Outside on the worse side: {}.", esc(&sick.join(", ")))
        }
    );
    out.push_str(
        "<table id=\"fleet\"><thead><tr><th data-key=\"host\" data-type=\"text\">host</th>\
<th data-key=\"tags\" data-type=\"text\">tags</th><th data-key=\"results\" data-type=\"num\">results</th>",
    );
    for &c in &f.columns {
        let _ = write!(
            out,
            "<th data-key=\"{}\" data-type=\"num\">{} <small>{}, {}</small></th>",
            key(c),
            esc(c.name()),
            esc(c.unit()),
            better_text(c)
        );
    }
    out.push_str("</tr></thead><tbody>");
    for row in &f.rows {
        let _ = write!(
            out,
            "<tr data-host=\"{0}\"><td title=\"hostname {1}\">{0}</td><td>{2}</td><td class=\"n\" data-v=\"{3}\">{3}</td>",
            esc(&row.host),
            esc(&row.hostname),
            esc(&tags_text(&row.tags)),
            row.results
        );
        for cell in &row.cells {
            match cell {
                None => out.push_str("<td class=\"n\">–</td>"),
                Some(c) => {
                    let class = match c.outside {
                        Some(Outside::Worse) => " outside worse",
                        Some(Outside::Better) => " outside better",
                        None => "",
                    };
                    let _ = write!(
                        out,
                        "<td class=\"n{class}\" data-v=\"{}\" title=\"{}, started {} UTC\">{}{} <small>{}</small></td>",
                        c.value,
                        esc(&c.source),
                        c.started_at.format("%Y-%m-%d %H:%M"),
                        num(c.value),
                        off_median(c),
                        esc(&c.note)
                    );
                }
            }
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table><h2>Ranges</h2>");
    if f.ranges.is_empty() {
        let _ = write!(
            out,
            "<p>No figure was measured alike by {} hosts or more: no range is drawn.</p>",
            crate::fleet::MIN_HOSTS
        );
    } else {
        out.push_str(
            "<table><tr><th>figure</th><th>measured as</th><th>hosts</th><th>median</th>\
<th>robust spread</th><th>hosts' own noise</th><th>tolerance</th><th>range</th></tr>",
        );
        for r in &f.ranges {
            let _ = write!(
                out,
                "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{:.2}%</td><td class=\"n\">{}</td><td class=\"n\">±{:.2}%</td><td class=\"n\">{} – {}</td></tr>",
                esc(r.column.name()),
                esc(&r.kind),
                r.hosts,
                num(r.median),
                r.spread_pct,
                match (r.noise_pct, r.column) {
                    (Some(n), _) => format!("{n:.2}%"),
                    (None, Column::Noise) => "not applied (a spread)".into(),
                    (None, _) => "not measured".into(),
                },
                r.tolerance_pct,
                num(r.low),
                num(r.high)
            );
        }
        out.push_str("</table>");
    }
    out.push_str("<h2>Across hosts</h2>");
    let series = ["within range".to_string(), "outside range".to_string()];
    for (i, &c) in f.columns.iter().enumerate() {
        let rows: Vec<BarRow> = f
            .rows
            .iter()
            .filter_map(|r| {
                let cell = r.cells[i].as_ref()?;
                let out = cell.outside.is_some();
                Some(BarRow {
                    label: format!("{} ({})", r.host, cell.note),
                    values: vec![(!out).then_some(cell.value), out.then_some(cell.value)],
                })
            })
            .collect();
        if rows.is_empty() {
            continue;
        }
        let median = f.ranges.iter().find(|r| r.column == c).map(|r| r.median);
        out.push_str(&bar_chart(
            "fleet-hosts",
            &format!("{} across hosts ({})", c.name(), better_text(c)),
            c.unit(),
            &series,
            &rows,
            median.map(|m| (m, "median")),
        ));
    }
    if !f.tags.is_empty() {
        out.push_str("<h2>Across tags</h2><p>Each bar: the median over the hosts with a result of that tag (each host's latest such result).</p>");
        for (i, &c) in f.columns.iter().enumerate() {
            let rows: Vec<BarRow> = f
                .tags
                .iter()
                .filter_map(|t| {
                    Some(BarRow {
                        label: format!(
                            "{}={} ({} host{})",
                            t.key,
                            t.value,
                            t.hosts,
                            if t.hosts == 1 { "" } else { "s" }
                        ),
                        values: vec![Some(t.medians[i]?)],
                    })
                })
                .collect();
            if rows.is_empty() {
                continue;
            }
            out.push_str(&bar_chart(
                "fleet-tags",
                &format!("{} across tags ({})", c.name(), better_text(c)),
                c.unit(),
                &["median over hosts".to_string()],
                &rows,
                None,
            ));
        }
    }
    let _ = writeln!(out, "<script>{SORT_SCRIPT}</script></body></html>");
    out
}

/// The table for a terminal: a row per host, `!` after a figure outside its range on the
/// worse side, `+` on the better side; then the ranges.
pub fn text(f: &Fleet, selection: &str) -> String {
    let mut out = format!("Fleet: {} hosts, of {selection}.\n\n", f.rows.len());
    let mut header = vec!["HOST".to_string(), "RESULTS".to_string()];
    header.extend(
        f.columns
            .iter()
            .map(|c| format!("{} ({})", c.name(), c.unit())),
    );
    let mut lines = vec![header];
    for row in &f.rows {
        let mut line = vec![row.host.clone(), row.results.to_string()];
        line.extend(row.cells.iter().map(|c| match c {
            None => "-".to_string(),
            Some(c) => format!(
                "{}{}{}",
                num(c.value),
                match c.outside {
                    Some(Outside::Worse) => " !",
                    Some(Outside::Better) => " +",
                    None => "",
                },
                off_median(c)
            ),
        }));
        lines.push(line);
    }
    let widths: Vec<usize> = (0..lines[0].len())
        .map(|i| {
            lines
                .iter()
                .map(|l| l[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for l in &lines {
        let cells: Vec<String> = l
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out.push_str("\n! outside the range on the worse side, + on the better side.\n");
    for r in &f.ranges {
        let _ = writeln!(
            out,
            "{} ({}): {} hosts, median {}, range {} .. {} (±{:.2}%)",
            r.column.name(),
            r.kind,
            r.hosts,
            num(r.median),
            num(r.low),
            num(r.high),
            r.tolerance_pct
        );
    }
    let _ = writeln!(out, "The range: {}.", f.rule);
    for n in &f.notes {
        let _ = writeln!(out, "Note: {n}.");
    }
    out
}

//! `hostbench report --fleet`: the fleet's page and its text table (the CSV is in
//! `exporters/csv.rs`). The page is made for a thousand hosts: who is sick, then one compact
//! strip plot per headline figure (a point a host, on an axis that keeps to the figure, the
//! outliers named and linked to their rows), then a table with a row per host that its one
//! script sorts, filters by tag and pages, then the ranges and the figures by tag. It is
//! self-contained, and its Content-Security-Policy forbids every request.

use std::fmt::Write;

use std::collections::BTreeMap;

use crate::fleet::{Cell, Column, Fleet, HostRow, Outside, TagGroup};
use crate::model::figures::Better;
use crate::render::report::STYLE;
use crate::render::svg::{esc, strip_plot, Axis, Mark, StripPoint};
use crate::text::Text;

/// The page's own rules, after the report's (`report::STYLE`).
const FLEET_STYLE: &str = "body{max-width:80em}td,th{vertical-align:top}th[data-key]{cursor:pointer}\
th[aria-sort=ascending]::after{content:' \\25B2'}th[aria-sort=descending]::after{content:' \\25BC'}\
td.worse{background:#fbd5d5;color:inherit}td.better{background:#d5e3fb;color:inherit}small{color:#555}\
figure.strip{margin:.6em 0}figcaption{margin-bottom:.2em}.strip .range{fill:#e2f0e2}\
.strip .median{stroke:#2a7a2a;stroke-width:1.5}.point.within{fill:#666;fill-opacity:.5}\
.point.worse{fill:#c00}.point.better{fill:#1f5fbf}.strip .name{font-size:10px;fill:#900}\
.off{opacity:.07}tr:target td{outline:2px solid #c00}#controls{margin:.5em 0}";

/// Table rows a page shows.
pub const PAGE_ROWS: usize = 50;
/// Hosts named in a line (the sick, a figure's outliers) before "and N more".
pub const NAMED: usize = 12;
/// Outliers a plot writes the name of beside their point: the farthest on the worse side.
pub const NAMED_IN_PLOT: usize = 3;
/// Tag values offered as filters, and shown across tags: those of the most hosts.
pub const MAX_TAGS_SHOWN: usize = 200;

/// Sorts, filters and pages the table. A heading's click sorts by its column: numbers by their
/// `data-v` (cells without one last), text by its words; a second click reverses. The tag
/// filter keeps the rows whose `data-t` holds the option's number and dims the other hosts'
/// points. A link to a row (`#h-N`, from a plot or a list) shows the page that holds it.
/// Opening `fleet.html#sort=KEY[-desc]&tag=K=V&page=N` sorts, filters and pages at once.
const SCRIPT: &str = r#"(function(){var t=document.getElementById('fleet');if(!t)return;
var b=t.tBodies[0],hs=t.tHead.rows[0].cells,per=+t.getAttribute('data-page-rows'),page=0,tag='';
var sel=document.getElementById('tag'),each=Array.prototype.forEach;
function rows(){return Array.prototype.slice.call(b.rows);}
function has(r){return tag===''||r.getAttribute('data-t').indexOf(' '+tag+' ')>=0;}
function draw(){var on={},m=rows().filter(has),pages=Math.max(1,Math.ceil(m.length/per));
page=Math.min(Math.max(page,0),pages-1);
m.forEach(function(r,i){on[r.id]=1;});
rows().forEach(function(r){r.hidden=true;});
m.slice(page*per,(page+1)*per).forEach(function(r){r.hidden=false;});
each.call(document.querySelectorAll('[data-h]'),function(p){p.classList.toggle('off',!on[p.getAttribute('data-h')]);});
document.getElementById('shown').textContent=m.length?('hosts '+(page*per+1)+'\u2013'+Math.min(m.length,(page+1)*per)+' of '+m.length):'no host';
document.getElementById('prev').disabled=page===0;document.getElementById('next').disabled=page>=pages-1;}
function sort(i,desc){var rs=rows();rs.sort(function(x,y){var a=x.cells[i],c=y.cells[i];
var va=a.getAttribute('data-v'),vc=c.getAttribute('data-v');
if(hs[i].getAttribute('data-type')==='num'){if(va===null&&vc===null)return 0;if(va===null)return 1;
if(vc===null)return -1;var d=parseFloat(va)-parseFloat(vc);return desc?-d:d;}
var s=a.textContent.localeCompare(c.textContent);return desc?-s:s;});
rs.forEach(function(r){b.appendChild(r);});each.call(hs,function(h){h.removeAttribute('aria-sort');});
hs[i].setAttribute('aria-sort',desc?'descending':'ascending');}
function show(id){var r=document.getElementById(id);if(!r||r.parentNode!==b)return;
if(!has(r)){tag='';sel.value='';}page=Math.floor(rows().filter(has).indexOf(r)/per);draw();r.scrollIntoView();}
each.call(hs,function(h,i){h.addEventListener('click',function(){sort(i,h.getAttribute('aria-sort')==='ascending');page=0;draw();});});
sel.addEventListener('change',function(){tag=sel.value;page=0;draw();});
document.getElementById('prev').addEventListener('click',function(){page--;draw();});
document.getElementById('next').addEventListener('click',function(){page++;draw();});
document.addEventListener('click',function(e){var a=e.target.closest&&e.target.closest('a[data-h],a.row');
if(a)show(a.getAttribute('href').slice(1));});
window.addEventListener('hashchange',function(){if(/^#h-\d+$/.test(location.hash))show(location.hash.slice(1));});
document.getElementById('controls').hidden=false;
var h=decodeURIComponent(location.hash.slice(1));
if(/^h-\d+$/.test(h)){draw();show(h);return;}
h.split('&').forEach(function(p){var k=p.split('=')[0],v=p.slice(k.length+1);
if(k==='sort'){var m=/^([a-z_]+)(-desc)?$/.exec(v);if(m)each.call(hs,function(c,i){if(c.getAttribute('data-key')===m[1])sort(i,!!m[2]);});}
else if(k==='tag'){each.call(sel.options,function(o){if(o.getAttribute('data-tag')===v){tag=o.value;sel.value=o.value;}});}
else if(k==='page'){page=(parseInt(v,10)||1)-1;}});
draw();})();"#;

fn better_text(c: &Column) -> &'static str {
    match c.better {
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

fn tags_text(tags: &std::collections::BTreeMap<Text, Text>) -> String {
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

/// "1 host", "2 hosts".
pub(crate) fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

/// Links to the rows of `hosts` (row index, name), the first [`NAMED`], then how many more.
fn row_links(hosts: &[(usize, &Text)]) -> String {
    let mut out = hosts
        .iter()
        .take(NAMED)
        .map(|(i, h)| {
            format!(
                "<a class=\"row\" href=\"#h-{i}\">{}</a>",
                esc(&h.to_string())
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    if hosts.len() > NAMED {
        let _ = write!(out, " and {} more", hosts.len() - NAMED);
    }
    out
}

/// The tag values the page offers as filters: the [`MAX_TAGS_SHOWN`] of the most hosts (by
/// each host's latest result), in key and value order, with their host counts.
fn tag_options(f: &Fleet) -> Vec<((&Text, &Text), usize)> {
    let mut counts: BTreeMap<(&Text, &Text), usize> = BTreeMap::new();
    for row in &f.rows {
        for (k, v) in &row.tags {
            *counts.entry((k, v)).or_default() += 1;
        }
    }
    let mut options: Vec<_> = counts.into_iter().collect();
    if options.len() > MAX_TAGS_SHOWN {
        options.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        options.truncate(MAX_TAGS_SHOWN);
        options.sort();
    }
    options
}

/// A strip's caption after its name: the range, the hosts outside it on the worse side (the
/// farthest first, linked to their rows) and how many on the better side; or why it has none.
fn strip_caption(
    out: &mut String,
    f: &Fleet,
    range: Option<&crate::fleet::Range>,
    worse: &[(usize, &str, f64)],
    better: usize,
) {
    let Some(r) = range else {
        let _ = write!(
            out,
            ". No range: fewer than {} hosts measured it alike.",
            crate::fleet::MIN_HOSTS
        );
        return;
    };
    let _ = write!(
        out,
        ", median {}, range {} – {} (±{:.1}%, the band). ",
        num(r.median),
        num(r.low),
        num(r.high),
        r.tolerance_pct
    );
    if worse.is_empty() {
        out.push_str("None outside on the worse side");
    } else {
        let named: Vec<(usize, &Text)> = worse.iter().map(|w| (w.0, &f.rows[w.0].host)).collect();
        let _ = write!(out, "Outside on the worse side: {}", row_links(&named));
    }
    if better > 0 {
        let _ = write!(out, "; {} on the better side", better);
    }
    out.push('.');
}

/// One figure's strip plot and its caption: the hosts that measured what its range measured
/// (all hosts with the figure when there is no range), the range, the median and the hosts
/// outside, named and linked.
fn figure_strip(out: &mut String, f: &Fleet, i: usize, c: &Column) {
    let range = f.ranges.iter().find(|r| r.column == c);
    // The hosts as they are shown (escaped), a row each.
    let shown: Vec<String> = f.rows.iter().map(|r| r.host.to_string()).collect();
    let cells: Vec<(usize, &str, &Cell)> = f
        .rows
        .iter()
        .enumerate()
        .filter_map(|(n, r)| Some((n, shown[n].as_str(), r.cells[i].as_ref()?)))
        .collect();
    if cells.is_empty() {
        return;
    }
    let (drawn, other): (Vec<_>, Vec<_>) = cells
        .into_iter()
        .partition(|(_, _, cell)| range.is_none_or(|r| r.kind == cell.kind));
    let worse: Vec<(usize, &str, f64)> = {
        let mut w: Vec<_> = drawn
            .iter()
            .filter(|(_, _, cell)| cell.outside == Some(Outside::Worse))
            .map(|&(n, h, cell)| (n, h, cell.from_median_pct.unwrap_or(0.0).abs()))
            .collect();
        w.sort_by(|a, b| b.2.total_cmp(&a.2));
        w
    };
    let better = drawn
        .iter()
        .filter(|(_, _, cell)| cell.outside == Some(Outside::Better))
        .count();
    let mut values: Vec<f64> = drawn.iter().map(|(_, _, cell)| cell.value).collect();
    if let Some(r) = range {
        values.extend([r.low, r.high]);
    }
    let axis = Axis::over(&values, c.bounds);
    let points: Vec<StripPoint> = drawn
        .iter()
        .map(|&(n, host, cell)| StripPoint {
            value: cell.value,
            title: format!("{host}: {}{}", num(cell.value), off_median(cell)),
            row: format!("h-{n}"),
            mark: match cell.outside {
                Some(Outside::Worse) => Mark::Worse,
                Some(Outside::Better) => Mark::Better,
                None => Mark::Within,
            },
            name: worse
                .iter()
                .take(NAMED_IN_PLOT)
                .any(|w| w.0 == n)
                .then(|| host.to_string()),
        })
        .collect();
    let _ = write!(
        out,
        "<figure class=\"strip\" data-key=\"{}\"><figcaption><b>{}</b> <small>{}, {}</small>: {}",
        c.key,
        esc(c.name),
        esc(c.unit),
        better_text(c),
        plural(drawn.len(), "host")
    );
    strip_caption(out, f, range, &worse, better);
    if axis.is_log() {
        out.push_str(" Logarithmic axis: the largest is over 20 times the smallest.");
    }
    if !other.is_empty() {
        let _ = write!(
            out,
            " Not drawn: {} that measured it otherwise (see the table).",
            plural(other.len(), "host")
        );
    }
    out.push_str("</figcaption>");
    out.push_str(&strip_plot(
        "fleet-strip",
        &format!("{} across hosts ({})", c.name, better_text(c)),
        axis,
        &points,
        range.map(|r| (r.low, r.high)),
        range.map(|r| r.median),
    ));
    out.push_str("</figure>");
}

/// The whole page; `selection` says which results it is of. Before the table: a line of who
/// is sick and a compact strip plot per figure, so that at a thousand hosts the table starts
/// within a few screens; the table is paged ([`PAGE_ROWS`] rows) by its script, which without
/// scripts shows every row.
pub fn html(f: &Fleet, selection: &str) -> String {
    let mut out = String::new();
    header(&mut out, f, selection);
    figures(&mut out, f);
    hosts_table(&mut out, f);
    ranges_table(&mut out, f);
    tags_table(&mut out, f);
    let _ = writeln!(out, "<script>{SCRIPT}</script></body></html>");
    out
}

/// The page's head, title and opening lines, its notes, and who is sick.
fn header(out: &mut String, f: &Fleet, selection: &str) {
    let title = format!("hostbench fleet: {}", plural(f.rows.len(), "host"));
    let _ = write!(
        out,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\
<title>{0}</title><style>{STYLE}{FLEET_STYLE}</style></head><body><h1>{0}</h1><p>Of {1}. Each figure is the host's \
latest complete result that has it; a host is its --host-label, else its hostname. \
<a href=\"#hosts\">The table</a> sorts by any heading; <a href=\"#ranges\">the ranges</a> and \
<a href=\"#tags\">the figures by tag</a> follow it.</p>",
        esc(&title),
        esc(selection)
    );
    for n in &f.notes {
        let _ = write!(out, "<p>Note: {}.</p>", esc(n));
    }
    let sick = f.sick_rows();
    if sick.is_empty() {
        out.push_str("<p id=\"sick\">No host lies outside a range on the worse side.</p>");
    } else {
        let _ = write!(
            out,
            "<p id=\"sick\">Outside a range on the worse side (the host may be sick): {}: {}.</p>",
            plural(sick.len(), "host"),
            row_links(&sick)
        );
    }
}

/// A compact strip plot per figure, each point a host.
fn figures(out: &mut String, f: &Fleet) {
    let _ = write!(
        out,
        "<h2>Figures</h2><p><small>Each point a host (hover: its figure; click: its row). The band is the \
figure's range, the line its median; <span class=\"worse\">red</span>: outside on the worse side, \
<span style=\"color:#1f5fbf\">blue</span>: on the better side. The range: {}.</small></p>",
        esc(&f.rule)
    );
    for (i, &c) in f.columns.iter().enumerate() {
        figure_strip(out, f, i, c);
    }
}

/// The hosts' table: its tag filter and pager, its headings, and a row a host.
fn hosts_table(out: &mut String, f: &Fleet) {
    let options = tag_options(f);
    let index: BTreeMap<(&Text, &Text), usize> = options
        .iter()
        .enumerate()
        .map(|(n, (kv, _))| (*kv, n))
        .collect();
    out.push_str(
        "<h2 id=\"hosts\">Hosts</h2><div id=\"controls\" hidden><label>Only the hosts tagged \
<select id=\"tag\"><option value=\"\">(any tag)</option>",
    );
    for (n, ((k, v), hosts)) in options.iter().enumerate() {
        let _ = write!(
            out,
            "<option value=\"{n}\" data-tag=\"{0}={1}\">{0}={1} ({2})</option>",
            esc(&k.to_string()),
            esc(&v.to_string()),
            plural(*hosts, "host")
        );
    }
    let _ = write!(
        out,
        "</select></label> <button type=\"button\" id=\"prev\">‹ previous</button> <span id=\"shown\"></span> \
<button type=\"button\" id=\"next\">next ›</button></div><table id=\"fleet\" data-page-rows=\"{PAGE_ROWS}\"><thead><tr>\
<th data-key=\"host\" data-type=\"text\">host</th><th data-key=\"tags\" data-type=\"text\">tags</th>\
<th data-key=\"results\" data-type=\"num\">results</th>"
    );
    for &c in &f.columns {
        let _ = write!(
            out,
            "<th data-key=\"{}\" data-type=\"num\">{} <small>{}, {}</small></th>",
            c.key,
            esc(c.name),
            esc(c.unit),
            better_text(c)
        );
    }
    out.push_str("</tr></thead><tbody>");
    for (n, row) in f.rows.iter().enumerate() {
        host_row(out, n, row, &index);
    }
    out.push_str("</tbody></table>");
}

/// A host's row: its name, tags (by their number in the tag filter), results and cells.
fn host_row(out: &mut String, n: usize, row: &HostRow, index: &BTreeMap<(&Text, &Text), usize>) {
    let t: String = row
        .tags
        .iter()
        .filter_map(|(k, v)| index.get(&(k, v)))
        .map(|i| format!("{i} "))
        .collect();
    let _ = write!(
        out,
        "<tr id=\"h-{n}\" data-host=\"{0}\" data-t=\" {4}\"><td title=\"hostname {1}\">{0}</td><td>{2}</td><td class=\"n\" data-v=\"{3}\">{3}</td>",
        esc(&row.host.to_string()),
        esc(&row.hostname.to_string()),
        esc(&tags_text(&row.tags)),
        row.results,
        t
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
                    esc(&c.note.to_string())
                );
            }
        }
    }
    out.push_str("</tr>");
}

/// The ranges: each figure measured alike by enough hosts, with how its range was drawn.
fn ranges_table(out: &mut String, f: &Fleet) {
    out.push_str("<h2 id=\"ranges\">Ranges</h2>");
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
                esc(r.column.name),
                esc(&r.kind.to_string()),
                r.hosts,
                num(r.median),
                r.spread_pct,
                match (r.noise_pct, r.column) {
                    (Some(n), _) => format!("{n:.2}%"),
                    (None, c) if c.is_spread => "not applied (a spread)".into(),
                    (None, _) => "not measured".into(),
                },
                r.tolerance_pct,
                num(r.low),
                num(r.high)
            );
        }
        out.push_str("</table>");
    }
}

/// The figures by tag: a row per tag value (the [`MAX_TAGS_SHOWN`] of the most hosts), the
/// median of each figure over the hosts with a result of that tag, and how far it lies from
/// the fleet's median.
fn tags_table(out: &mut String, f: &Fleet) {
    out.push_str("<h2 id=\"tags\">Across tags</h2>");
    if f.tags.is_empty() {
        out.push_str("<p>No result carries a tag.</p>");
        return;
    }
    let mut groups: Vec<&TagGroup> = f.tags.iter().collect();
    if groups.len() > MAX_TAGS_SHOWN {
        groups.sort_by_key(|g| std::cmp::Reverse(g.hosts));
        groups.truncate(MAX_TAGS_SHOWN);
        let _ = write!(
            out,
            "<p>The {MAX_TAGS_SHOWN} tag values of the most hosts, of {}.</p>",
            f.tags.len()
        );
        groups.sort_by(|a, b| (&a.key, &a.value).cmp(&(&b.key, &b.value)));
    }
    out.push_str(
        "<p>Each figure: the median over the hosts with a result of that tag (each host's latest \
such result), and how far it lies from the fleet's median.</p><table id=\"by-tag\"><tr><th>tag</th><th>hosts</th>",
    );
    for &c in &f.columns {
        let _ = write!(
            out,
            "<th>{} <small>{}</small></th>",
            esc(c.name),
            esc(c.unit)
        );
    }
    out.push_str("</tr>");
    for g in groups {
        let _ = write!(
            out,
            "<tr class=\"tag\"><td>{}={}</td><td class=\"n\">{}</td>",
            esc(&g.key.to_string()),
            esc(&g.value.to_string()),
            g.hosts
        );
        for (i, &c) in f.columns.iter().enumerate() {
            let fleet_median = f.ranges.iter().find(|r| r.column == c).map(|r| r.median);
            match g.medians[i] {
                None => out.push_str("<td class=\"n\">–</td>"),
                Some(m) => {
                    let _ = write!(out, "<td class=\"n\" data-v=\"{m}\">{}", num(m));
                    if let Some(fm) = fleet_median.filter(|fm| *fm != 0.0) {
                        let _ = write!(out, " <small>({:+.1}%)</small>", (m - fm) / fm * 100.0);
                    }
                    out.push_str("</td>");
                }
            }
        }
        out.push_str("</tr>");
    }
    out.push_str("</table>");
}

/// The table for a terminal: a row per host, `!` after a figure outside its range on the
/// worse side, `+` on the better side; then the ranges.
/// A host's cell in the text and Markdown tables: its value, `!` or `+` where it lies outside
/// the range, and how far from the median.
fn cell_text(c: &Option<Cell>) -> String {
    match c {
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
    }
}

const OUTSIDE_KEY: &str = "\n! outside the range on the worse side, + on the better side.\n";

/// The fleet as Markdown (`report --fleet --format markdown`): the hosts' table, then each
/// range. `cell` makes a string safe in a table cell; stored words are escaped first.
pub fn markdown(f: &Fleet, selection: &str, cell: fn(&str) -> String) -> String {
    let mut out = format!(
        "## hostbench fleet\n\n{} hosts, of {}.\n\n| host | results |",
        f.rows.len(),
        cell(selection)
    );
    for c in &f.columns {
        let _ = write!(out, " {} ({}) |", c.name, c.unit);
    }
    out.push_str("\n|---|---:|");
    out.push_str(&"---:|".repeat(f.columns.len()));
    out.push('\n');
    for row in &f.rows {
        let _ = write!(out, "| {} | {} |", cell(&row.host.to_string()), row.results);
        for c in &row.cells {
            let _ = write!(out, " {} |", cell_text(c));
        }
        out.push('\n');
    }
    out.push_str(OUTSIDE_KEY);
    if !f.ranges.is_empty() {
        out.push_str("\n| figure | measured as | hosts | median | range | tolerance |\n|---|---|---:|---:|---|---:|\n");
        for r in &f.ranges {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} .. {} | ±{:.2}% |",
                r.column.name,
                cell(&r.kind.to_string()),
                r.hosts,
                num(r.median),
                num(r.low),
                num(r.high),
                r.tolerance_pct
            );
        }
    }
    let _ = writeln!(out, "\nThe range: {}.", f.rule);
    for n in &f.notes {
        let _ = writeln!(out, "\nNote: {}.", cell(n));
    }
    out
}

pub fn text(f: &Fleet, selection: &str) -> String {
    let mut out = format!("Fleet: {} hosts, of {selection}.\n\n", f.rows.len());
    let mut header = vec!["HOST".to_string(), "RESULTS".to_string()];
    header.extend(f.columns.iter().map(|c| format!("{} ({})", c.name, c.unit)));
    let mut lines = vec![header];
    for row in &f.rows {
        let mut line = vec![row.host.to_string(), row.results.to_string()];
        line.extend(row.cells.iter().map(cell_text));
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
    out.push_str(OUTSIDE_KEY);
    for r in &f.ranges {
        let _ = writeln!(
            out,
            "{} ({}): {} hosts, median {}, range {} .. {} (±{:.2}%)",
            r.column.name,
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

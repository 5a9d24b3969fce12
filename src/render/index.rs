//! UnixBench's reports: per pass, each test's score with its unit, time and samples, then the
//! index table (baseline, result, index) and the index score; with two or more passes, the gain
//! from one copy to N; and the same as HTML. hostbench adds each test's spread (CV, min–max).

use std::fmt::Write;

use crate::model::index::Category;
use crate::model::index::{IndexPass, IndexResult, Order, TestResult};
use crate::model::{Environment, RunResult, SuiteResult};
use crate::render::labelled::suites;
use crate::render::svg::{bar_chart, esc, BarRow};
use crate::text::Text;

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `index --list`: every test with its title, whether the BYTE index counts it, and whether it
/// runs on this host or why not.
pub fn test_list(rows: &[TestRow]) -> String {
    let width = rows.iter().map(|t| t.name.len()).max().unwrap_or(0);
    let mut out = String::new();
    for t in rows {
        let _ = writeln!(
            out,
            "{:width$}  {:<44}  {:<8}  {}",
            t.name,
            t.msg,
            if t.in_index { "index" } else { "" },
            super::runs_here(&t.here)
        );
    }
    out
}

/// One line of `index --list`: a test, its title, whether the BYTE index counts it, and
/// whether it runs here (or why not). `--json` writes the rows as they are, `why_not_here`
/// null where the test runs here.
#[derive(serde::Serialize)]
pub struct TestRow {
    pub name: &'static str,
    #[serde(rename = "title")]
    pub msg: &'static str,
    pub in_index: bool,
    #[serde(rename = "why_not_here", serialize_with = "super::why_not_here")]
    pub here: Result<(), String>,
}

/// The system block at the top of a report.
pub fn system_header(env: &Environment, r: &IndexResult) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "   System: {}: GNU/Linux",
        env.host.hostname.cut(crate::model::label::MAX_HOST_LABEL)
    );
    let _ = writeln!(
        out,
        "   OS: GNU/Linux -- {} -- {}",
        env.host.kernel_release, env.host.kernel_version
    );
    let _ = writeln!(out, "   Machine: {}", env.host.arch);
    let _ = writeln!(out, "   Language: {}", r.language);
    let _ = writeln!(
        out,
        "   CPU: {} ({} online, {} usable{})",
        env.host.cpu_model,
        env.host.cpus_online,
        env.host.cpus_allowed,
        super::environment::cgroup_limit_note(env)
    );
    let _ = writeln!(out, "   {}", programs_line(env, r));
    let s = &r.settings;
    let mode = match (s.quick, s.seconds, s.adaptive_pct) {
        (_, Some(sec), _) => format!("every test run for {sec} s (not UnixBench's durations)"),
        (true, None, _) => {
            "quick: a tenth of each duration, 3 and 1 iterations (not comparable with full runs)"
                .into()
        }
        (false, None, Some(p)) => {
            format!("adaptive: iterations stop once the 95% CI is within {p}%")
        }
        _ => format!(
            "UnixBench's durations, {} iterations ({} for slow tests)",
            s.iterations,
            crate::model::index::scoring::iterations(s.iterations, true)
        ),
    };
    let order = match s.order {
        Order::Blocks => "",
        Order::Rounds => "; in rounds (each test's iteration 1, then each test's iteration 2, …)",
    };
    let _ = writeln!(
        out,
        "   Mode: {mode}{order}; copies {}",
        if s.pin {
            "pinned to CPUs (--pin)"
        } else {
            "not pinned"
        }
    );
    out
}

/// Which programs ran: the C tests as the host's compiler built them (its name, version and
/// flags, as UnixBench reports its compiler), or the built-in versions and why.
pub fn programs_line(env: &Environment, r: &IndexResult) -> String {
    let rest = format!(
        "the other tests written in Rust for hostbench, built by {} ({}); shell, C, dc and grep tests use the host's programs",
        env.compiler, env.build_profile
    );
    match (&r.native, &r.native_note) {
        (Some(n), _) => format!(
            "Compiler: {} ({}) {} for dhry2reg, whetstone-double, the arithmetic tests, hanoi, spawn and execl{}; {rest}",
            n.compiler,
            n.version,
            n.flags,
            n.untrusted_cache
                .as_ref()
                .map(|why| format!(", built for this run alone (the cache was not trusted: {why})"))
                .unwrap_or_default()
        ),
        (None, Some(why)) => format!(
            "Programs: the built-in versions of the compiled tests ({why}): Dhrystone, Whetstone, arithmetic and hanoi in Rust, spawn and execl in hostbench's small program; {rest}"
        ),
        (None, None) => format!("Programs: {rest}"),
    }
}

/// Where a default run's copies differ from those UnixBench's Run would start (the CPUs
/// online, `getCpuInfo`'s count): one line naming both, or None where they agree.
pub fn copies_note(usable: usize, online: usize) -> Option<String> {
    let ours = if usable > 1 {
        format!("1 and {usable} copies, {usable} being the CPUs")
    } else {
        "1 copy, 1 being the CPUs".to_string()
    };
    let theirs = if online > 1 {
        format!("1 and {online} copies, {online} being")
    } else {
        "1 copy, 1 being".to_string()
    };
    (usable != online).then(|| {
        format!(
            "Copies: {ours} this process may use (its affinity and cgroup quota); UnixBench's Run would start {theirs} the CPUs online.\n"
        )
    })
}

/// One pass, as UnixBench's text report prints it.
pub fn pass_text(p: &IndexPass, cpus: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "------------------------------------------------------------------------"
    );
    let _ = writeln!(
        out,
        "Benchmark Run: {} - {}",
        p.started_at.format("%a %b %d %Y %H:%M:%S"),
        p.finished_at.format("%H:%M:%S")
    );
    let _ = writeln!(
        out,
        "{} in system; running {} of tests\n",
        plural(cpus, "CPU", "CPUs"),
        plural(p.copies, "parallel copy", "parallel copies")
    );
    for t in &p.tests {
        let _ = writeln!(out, "{}", test_line(t));
    }
    for s in &p.skipped {
        let _ = writeln!(out, "{:<40} skipped: {}", s.name, s.reason);
    }
    for s in &p.failed {
        let _ = writeln!(out, "{:<40} FAILED: {}", s.name, s.reason);
    }
    out.push('\n');
    for cat in [Category::System, Category::TwoD, Category::ThreeD] {
        out.push_str(&index_table(p, cat));
    }
    out.push_str(&index_table(p, Category::Misc));
    out
}

fn test_line(t: &TestResult) -> String {
    match &t.score {
        Some(s) => {
            // UnixBench's "(10.0 s, 7 samples)" counts the samples its score keeps; the spread
            // hostbench adds is of the same samples.
            let spread = t
                .spread
                .map(|sp| format!("; CV {:.1}%, {:.1}-{:.1}", sp.cv_pct, sp.min, sp.max))
                .unwrap_or_default();
            let dropped = if s.dropped > 0 {
                format!(", {} dropped", s.dropped)
            } else {
                String::new()
            };
            format!(
                "{:<40} {:12.1} {:<5} ({:.1} s, {} samples{spread}{dropped}{}{})",
                t.msg,
                s.score,
                t.unit,
                s.time_s,
                s.iterations,
                if t.adaptive_stop {
                    ", adaptive stop"
                } else {
                    ""
                },
                built_in_mark(t)
            ) + &differs_mark(t)
        }
        None => format!(
            "{:<40} {:>12} {:<5} (stopped before a pass completed)",
            t.msg, "---", t.unit
        ),
    }
}

/// Beside a test whose workload is not quite UnixBench's: what differs; and beside a test that
/// times something other than its title says: what it times (as its run stored them).
/// The longest note shown beside a test (the notes this build writes are under 200 characters).
const MAX_NOTE: usize = 400;

fn differs_mark(t: &TestResult) -> String {
    // Stored text: a result from a shared store may hold anything.
    let shown = |s: &crate::text::Text| s.cut(MAX_NOTE).to_string();
    let differs = t
        .differs
        .as_ref()
        .map(|d| format!(" [not UnixBench's: {}]", shown(d)));
    let note = t.timing_note.as_ref().map(|n| format!(" [{}]", shown(n)));
    differs.unwrap_or_default() + &note.unwrap_or_default()
}

/// Beside a test that has a C version but ran its built-in one.
fn built_in_mark(t: &TestResult) -> &'static str {
    if t.has_native && !t.native {
        ", built-in version"
    } else {
        ""
    }
}

/// The index table of one category, as Run's logIndexCat prints it: when any of the category's
/// tests has a baseline, every test of the category that ran, those without a baseline with
/// "---" for it and for their index.
fn index_table(p: &IndexPass, cat: Category) -> String {
    let tests: Vec<&TestResult> = p.tests.iter().filter(|t| t.category == cat).collect();
    if !tests.iter().any(|t| t.baseline.is_some()) {
        return String::new();
    }
    let mut out = String::new();
    let score = p.category_index(cat);
    let partial = score.is_none_or(|(_, indexed, of)| indexed < of);
    let head = format!(
        "{}{}",
        cat.title(),
        if partial {
            " Partial Index"
        } else {
            " Index Values"
        }
    );
    let _ = writeln!(
        out,
        "{head:<40} {:>12} {:>12} {:>8}",
        "BASELINE", "RESULT", "INDEX"
    );
    for t in &tests {
        match (t.baseline, t.score, t.index) {
            (Some(b), Some(s), Some(i)) => {
                let _ = writeln!(out, "{:<40} {:12.1} {:12.1} {:8.1}", t.msg, b, s.score, i);
            }
            (None, Some(s), _) => {
                let _ = writeln!(
                    out,
                    "{:<40} {:>12} {:12.1} {:>8}",
                    t.msg, "---", s.score, "---"
                );
            }
            _ => {
                let _ = writeln!(
                    out,
                    "{:<40} {:>12} {:>12} {:>8}",
                    t.msg, "---", "---", "---"
                );
            }
        }
    }
    if let Some((idx, _, _)) = score {
        let _ = writeln!(out, "{:<40} {:>12} {:>12} {:>8}", "", "", "", "========");
        let title = format!(
            "{} Index Score{}",
            cat.title(),
            if partial { " (Partial Only)" } else { "" }
        );
        let _ = writeln!(out, "{title:<66} {idx:8.1}");
    }
    out.push('\n');
    out
}

/// The gain from the first pass to each later one, per index test (UnixBench's usage document
/// shows this table for one and two copies).
pub fn gain_table(r: &IndexResult) -> String {
    if r.passes.len() < 2 {
        return String::new();
    }
    let first = &r.passes[0];
    let mut out = String::new();
    for later in &r.passes[1..] {
        let shared = first
            .tests
            .iter()
            .any(|t| t.index.is_some() && later.tests.iter().any(|u| u.name == t.name));
        if !shared {
            continue;
        }
        let _ = writeln!(
            out,
            "{:<40} {:>10} {:>10} {:>7}",
            "Test",
            format!("{} copy", first.copies),
            format!("{} copies", later.copies),
            "Gain"
        );
        let _ = writeln!(
            out,
            "{:<40} {:>10} {:>10} {:>7}",
            "-".repeat(20),
            "------",
            "------",
            "----"
        );
        for t in first.tests.iter().filter(|t| t.index.is_some()) {
            if let (Some(a), Some(b)) = (
                t.index,
                later
                    .tests
                    .iter()
                    .find(|u| u.name == t.name)
                    .and_then(|u| u.index),
            ) {
                let _ = writeln!(
                    out,
                    "{:<40} {a:>10.1} {b:>10.1} {:>6.0}%",
                    t.msg,
                    100.0 * (b / a - 1.0)
                );
            }
        }
        if let (Some(a), Some(b)) = (first.system_index, later.system_index) {
            let _ = writeln!(
                out,
                "{:<40} {a:>10.1} {b:>10.1} {:>6.0}%",
                "Index Score:",
                100.0 * (b / a - 1.0)
            );
        }
        out.push('\n');
    }
    out
}

/// `run`'s summary line of an index part.
pub fn index_line(i: &IndexResult) -> String {
    let mode = if i.settings.quick {
        " (quick mode)"
    } else {
        ""
    };
    let pinned = if i.settings.pin { ", pinned" } else { "" };
    format!("Index{mode}{pinned}: {}", headline(i))
}

/// An index part: each pass's System Benchmarks index.
pub fn headline(i: &IndexResult) -> String {
    let parts: Vec<String> = i
        .passes
        .iter()
        .map(|p| match p.system_index {
            Some(i) => format!(
                "{} cop{}: {:.1}{}",
                p.copies,
                if p.copies == 1 { "y" } else { "ies" },
                i,
                if p.indexed < p.index_tests {
                    " (partial)"
                } else {
                    ""
                }
            ),
            None => format!(
                "{} cop{}: no index",
                p.copies,
                if p.copies == 1 { "y" } else { "ies" }
            ),
        })
        .collect();
    format!("index {}", parts.join(", "))
}

impl super::SuiteView for IndexResult {
    fn report(&self, run: &RunResult) -> String {
        report(run, self)
    }

    fn headline(&self) -> String {
        headline(self)
    }

    fn summary_line(&self) -> String {
        index_line(self)
    }

    fn failed(&self) -> Vec<String> {
        let copies = |n: usize| format!("{n} cop{}", if n == 1 { "y" } else { "ies" });
        self.passes
            .iter()
            .flat_map(|p| {
                p.failed
                    .iter()
                    .map(move |s| format!("index: {} ({}): {}", s.name, copies(p.copies), s.reason))
            })
            .collect()
    }

    fn skipped(&self) -> Vec<String> {
        let first = self.passes.first().map(|p| p.skipped.as_slice());
        first
            .unwrap_or_default()
            .iter()
            .map(|s| format!("index: {} ({})", s.name, s.reason))
            .collect()
    }
}

/// The whole text report.
pub fn report(result: &RunResult, r: &IndexResult) -> String {
    let mut out = system_header(&result.environment, r);
    out.push('\n');
    for p in &r.passes {
        out.push_str(&pass_text(p, result.environment.host.cpus_allowed));
    }
    out.push_str(&gain_table(r));
    out
}

/// The HTML report: the same tables, self-contained.
pub fn html(result: &RunResult, r: &IndexResult) -> String {
    let env = &result.environment;
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Benchmark of {host} on {date}</title>\n<style>table{{margin:1em 1em 1em 0;background:#f9f9f9;border:1px #aaa solid;border-collapse:collapse}}th,td{{border:1px #aaa solid;padding:.2em}}th{{background:#f2f2f2}}td.n{{text-align:right;font-family:monospace}}</style></head><body>\n<h2>Benchmark of {host} on {date}</h2>\n<p><b>hostbench {ver}: the BYTE UNIX Benchmarks' tests</b></p>\n<h3>Test System Information</h3>\n<pre>{sys}</pre>\n",
        host = esc(&env.host.hostname.to_string()),
        date = result.started_at.format("%a %b %d %Y"),
        ver = esc(&result.tool_version.to_string()),
        sys = esc(&system_header(env, r)),
    );
    for p in &r.passes {
        let _ = writeln!(
            out,
            "<hr><h3>Benchmark Run: {}; {}</h3>\n<p>Time: {} - {}</p>",
            plural(env.host.cpus_allowed, "CPU", "CPUs"),
            plural(p.copies, "parallel process", "parallel processes"),
            p.started_at.format("%H:%M:%S"),
            p.finished_at.format("%H:%M:%S")
        );
        for cat in [
            Category::System,
            Category::TwoD,
            Category::ThreeD,
            Category::Misc,
        ] {
            let tests: Vec<&TestResult> = p.tests.iter().filter(|t| t.category == cat).collect();
            if tests.is_empty() {
                continue;
            }
            let _ = writeln!(out, "<h4>{}</h4>\n<table><tr><th>Test</th><th>Score</th><th>Unit</th><th>Time</th><th>Iters.</th><th>CV</th><th>Baseline</th><th>Index</th></tr>", cat.title());
            for t in tests {
                let (score, time, iters) =
                    t.score
                        .map_or(("---".into(), "---".into(), "0".into()), |s| {
                            (
                                format!("{:.1}", s.score),
                                format!("{:.1} s", s.time_s),
                                s.iterations.to_string(),
                            )
                        });
                let _ = writeln!(
                    out,
                    "<tr><td><b>{}</b>{}</td><td class=n>{score}</td><td>{}</td><td class=n>{time}</td><td class=n>{iters}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td></tr>",
                    esc(&t.msg.to_string()),
                    esc(&format!(
                        "{}{}",
                        built_in_mark(t),
                        differs_mark(t)
                    )),
                    esc(&t.unit.to_string()),
                    t.spread.map_or(String::new(), |s| format!("{:.1}%", s.cv_pct)),
                    t.baseline.map_or(String::new(), |b| format!("{b:.1}")),
                    t.index.map_or(String::new(), |i| format!("{i:.1}"))
                );
            }
            if let Some((i, indexed, of)) = p.category_index(cat) {
                let _ = writeln!(out, "<tr><td colspan=7><b>{} Index Score{}:</b></td><td class=n><b>{i:.1}</b></td></tr>", cat.title(), if indexed < of { " (Partial Only)" } else { "" });
            }
            let _ = writeln!(out, "</table>");
        }
    }
    let _ = writeln!(out, "</body></html>");
    out
}

/// Its section of `report`'s HTML page: the index plots across `results`.
pub fn report_section(out: &mut String, results: &[(String, RunResult)]) {
    let all = suites(results, |s| match s {
        SuiteResult::Index(i) => Some(i),
        _ => None,
    });
    if all.is_empty() {
        return;
    }
    out.push_str("<h2>index (UnixBench)</h2><p>Index value per test: 10 × score / the baseline machine's score, so the baseline (George, a SPARCstation 20-61) scores 10.</p>");
    let series: Vec<String> = all.iter().map(|(l, _)| l.to_string()).collect();
    let mut copies: Vec<usize> = all
        .iter()
        .flat_map(|(_, i)| i.passes.iter().map(|p| p.copies))
        .collect();
    copies.sort();
    copies.dedup();
    for c in copies {
        let mut names: Vec<(Text, Text)> = Vec::new();
        for (_, i) in &all {
            for p in i.passes.iter().filter(|p| p.copies == c) {
                for t in p.tests.iter().filter(|t| t.index.is_some()) {
                    if !names.iter().any(|(n, _)| n == &t.name) {
                        names.push((t.name.clone(), t.msg.clone()));
                    }
                }
            }
        }
        let rows: Vec<BarRow> = names
            .iter()
            .map(|(name, msg)| BarRow {
                label: msg.to_string(),
                values: all
                    .iter()
                    .map(|(_, i)| {
                        i.passes
                            .iter()
                            .filter(|p| p.copies == c)
                            .flat_map(|p| p.tests.iter())
                            .find(|t| &t.name == name)
                            .and_then(|t| t.index)
                    })
                    .collect(),
            })
            .collect();
        let scores: Vec<String> = all
            .iter()
            .filter_map(|(l, i)| {
                i.passes
                    .iter()
                    .find(|p| p.copies == c)
                    .and_then(|p| p.system_index)
                    .map(|s| format!("{l}: {s:.1}"))
            })
            .collect();
        out.push_str(&bar_chart(
            "index",
            &format!(
                "Index per test, {c} cop{} (overall {})",
                if c == 1 { "y" } else { "ies" },
                scores.join(", ")
            ),
            "index value (baseline = 10)",
            &series,
            &rows,
            Some((10.0, "baseline 10")),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_copies_are_named_where_they_differ_from_unixbenchs() {
        assert_eq!(copies_note(4, 4), None);
        let note = copies_note(1, 2).unwrap();
        assert!(
            note.contains("1 copy, 1 being the CPUs this process may use")
                && note.contains("Run would start 1 and 2 copies, 2 being the CPUs online"),
            "{note}"
        );
        let note = copies_note(8, 64).unwrap();
        assert!(note.contains("1 and 8 copies") && note.contains("1 and 64 copies"));
    }
}

//! `hostbench report`: one self-contained HTML page (inline CSS and SVG, no script, and a
//! Content-Security-Policy that forbids every request) with the environment of each result,
//! a plot per suite, and, for two or more results, the comparison of the first with each other.

use std::fmt::Write;

use crate::compare::Comparison;
use crate::model::RunResult;
use crate::render::environment::host_lines;
use crate::render::noise::check_line;
use crate::render::svg::esc;

/// The report pages' rules (the fleet page adds its own).
pub(crate) const STYLE: &str = "body{font-family:sans-serif;margin:2em;color:#222;max-width:70em}\
h1{font-size:1.6em}h2{font-size:1.3em;border-bottom:1px solid #ccc;margin-top:2em}\
h3{font-size:1.1em}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;\
padding:2px 8px;text-align:left}td.n{text-align:right}figure{margin:1em 0}\
svg{background:#fff;border:1px solid #eee;font-size:11px}.title{text-anchor:middle;font-size:13px;\
font-weight:bold}.tick{text-anchor:middle;fill:#444}.ytick{text-anchor:end}.label{text-anchor:middle;\
fill:#222}.axis{stroke:#222}.grid{stroke:#eee}.reference{stroke:#000;stroke-dasharray:4 3}\
.reftext{text-anchor:start;font-size:11px}.legend{fill:#222}.better{color:#070}.worse{color:#b00}\
pre{background:#f6f6f6;padding:.5em}";

/// A suite's section of `report`'s HTML page: written to `out` from the labelled results.
pub type ReportSection = fn(out: &mut String, results: &[(String, RunResult)]);

/// The whole page. `results` are (label, result) pairs in the order given.
pub fn html(results: &[(String, RunResult)], comparisons: &[Comparison]) -> String {
    let mut out = String::new();
    let labels: Vec<String> = results.iter().map(|(l, _)| l.clone()).collect();
    let _ = write!(
        out,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\
<title>hostbench report: {}</title><style>{STYLE}</style></head><body><h1>hostbench report: {}</h1>",
        esc(&labels.join(", ")),
        esc(&labels.join(", "))
    );
    out.push_str("<h2>Environment</h2>");
    for (label, r) in results {
        let _ = write!(
            out,
            "<h3>{}: {}{}</h3><p>hostbench {}, started {} UTC. Command: <code>{}</code></p><pre>{}</pre><p>{}</p>",
            esc(label),
            esc(&r.suite_names()),
            if r.incomplete { " (incomplete)" } else { "" },
            esc(&r.tool_version.to_string()),
            r.started_at.format("%Y-%m-%d %H:%M:%S"),
            esc(&r.shown_command_line()),
            esc(&host_lines(&r.environment)),
            esc(&check_line(r).unwrap_or_else(|| "No noise check (--no-noise-check).".into()))
        );
        // What was not quiet while it was measured, by the host's account.
        let busy = super::account::not_quiet_rows(r);
        if !busy.is_empty() {
            out.push_str("<table><tr><th>measured</th><th>not quiet, by the host's account (medians)</th></tr>");
            for (what, items) in busy {
                let _ = write!(
                    out,
                    "<tr><td>{}</td><td>{}</td></tr>",
                    esc(&what),
                    esc(&items)
                );
            }
            out.push_str("</table>");
        }
        if let Some(line) = super::account::no_pmu_line(r) {
            let _ = write!(out, "<p>{}</p>", esc(line));
        }
    }
    if !comparisons.is_empty() {
        out.push_str("<h2>Comparison</h2>");
        for c in comparisons {
            out.push_str(&comparison_table(c));
        }
    }
    // Each suite's section: its plots across the results.
    for section in super::REPORT_SECTIONS {
        section(&mut out, results);
    }
    out.push_str("</body></html>\n");
    out
}

/// One comparison on the page: its headline, a forest plot of every change beyond the host's
/// noise, the table, and then how the verdicts were made.
fn comparison_table(c: &Comparison) -> String {
    let mut out = format!(
        "<h3>{} → {}</h3><p class=\"headline\"><strong>{}</strong></p>",
        esc(&c.a.source),
        esc(&c.b.source),
        esc(&crate::render::compare::headline(c))
    );
    out.push_str(&changes_plot(c));
    out.push_str(
        "<table><tr><th>measurement</th><th>unit</th><th>A</th><th>B</th><th>change</th><th>95% CI of change</th><th>verdict</th></tr>",
    );
    for r in &c.rows {
        let class = match r.verdict {
            crate::compare::Verdict::Better => "better",
            crate::compare::Verdict::Worse => "worse",
            _ => "",
        };
        let _ = write!(
            out,
            "<tr class=\"{class}\"><td>{}</td><td>{}</td><td class=\"n\">{:.4}</td><td class=\"n\">{:.4}</td><td class=\"n\">{}</td><td>{}</td><td class=\"{class}\">{}</td></tr>",
            esc(&r.name),
            esc(&r.unit),
            r.a,
            r.b,
            esc(&crate::render::compare::change(r)),
            esc(&crate::render::compare::ci(r)),
            esc(&crate::render::compare::verdict(r))
        );
    }
    out.push_str("</table>");
    let _ = write!(
        out,
        "<p class=\"method\">Verdicts from {}. {} The method: docs/run.md, “hostbench compare”.</p>",
        esc(&c.test),
        esc(&c.notes.join("; "))
    );
    out
}

/// The forest plot of the changes beyond the host's noise (none: nothing to draw). A
/// percentage's change is drawn in points, as the table gives it.
fn changes_plot(c: &Comparison) -> String {
    use crate::compare::Verdict;
    use crate::render::svg::{forest, ForestRow, Mark};
    let changed = crate::render::compare::changed(c);
    if changed.is_empty() {
        return String::new();
    }
    let rows: Vec<ForestRow> = changed
        .iter()
        .map(|r| {
            let points = r.unit == "%";
            let scale = |x: f64| if points { x / 100.0 * r.a.abs() } else { x };
            ForestRow {
                label: format!("{} ({})", r.name, r.unit),
                value: if points { r.b - r.a } else { r.change_pct },
                interval: r.ci_pct.map(|[lo, hi]| (scale(lo), scale(hi))),
                mark: if r.verdict == Verdict::Worse {
                    Mark::Worse
                } else {
                    Mark::Better
                },
                title: format!(
                    "{}: {} {}",
                    r.name,
                    crate::render::compare::change(r),
                    crate::render::compare::ci(r)
                ),
            }
        })
        .collect();
    forest(
        "compare-forest",
        "Changes beyond the host's noise, with their 95% intervals",
        "change, % (points for a percentage)",
        &rows,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::explain::{Culprit, Explained, ExplainedSample, Part, Phase, Segment};
    use crate::model::interactive::{Bench, InteractiveResult, Measurement};
    use crate::model::SuiteResult;

    /// A Video under Burn pair whose worst sample waited 4 ms behind a task that named itself
    /// with markup and a terminal escape.
    fn explained_result() -> RunResult {
        let hostile = Culprit::Task {
            pid: 77,
            comm: "<b>\u{1b}]0;x".into(),
            prio: Some(120),
            policy: Some("SCHED_OTHER".into()),
        };
        let mut m = Measurement::example(Bench::Video);
        m.explained = Some(Explained {
            requested: 1,
            samples: vec![ExplainedSample {
                seq: 9,
                deadline_mono_ns: 1_000_000_000,
                window_ns: 4_050_000,
                fired_ns: 20_000,
                woken_ns: Some(50_000),
                task_pid: 12,
                timekeeper_pid: 13,
                woken_on_cpu: Some(1),
                ran_on_cpu: Some(1),
                parts: vec![
                    Part {
                        phase: Phase::Timer,
                        cpu: 0,
                        culprit: Culprit::Idle,
                        ns: 20_000,
                    },
                    Part {
                        phase: Phase::Wait,
                        cpu: 1,
                        culprit: hostile.clone(),
                        ns: 4_000_000,
                    },
                ],
                unaccounted_ns: 30_000,
                segments: vec![
                    Segment {
                        cpu: 0,
                        start_ns: 0,
                        end_ns: 4_050_000,
                        culprit: Culprit::Idle,
                    },
                    Segment {
                        cpu: 1,
                        start_ns: 0,
                        end_ns: 4_050_000,
                        culprit: hostile,
                    },
                ],
            }],
            events: 1000,
            overruns: 0,
            reader_cpu_ns: 1_000_000,
            explain_ns: 2_000_000,
        });
        let mut i = InteractiveResult::example();
        i.measurements = vec![m];
        let mut r = RunResult::example("host", false);
        r.suites = vec![SuiteResult::Interactive(i)];
        r
    }

    #[test]
    fn an_explained_sample_is_drawn_as_a_timeline_with_its_parts_and_names_escaped() {
        let page = html(&[("result 1".into(), explained_result())], &[]);
        assert!(
            page.contains(r#"data-plot="explain-timeline" data-points="2""#),
            "one bar per segment"
        );
        assert!(page.contains("sample 9: 4.050 ms from deadline to running"));
        for mark in ["deadline", "timer", "woken", "running"] {
            assert!(
                page.contains(&format!(r#"class="tick">{mark}</text>"#)),
                "{mark}"
            );
        }
        assert!(page.contains("<td>waiting to run</td><td class=\"n\">1</td>"));
        assert!(page.contains("unaccounted (no trace event)"));
        assert!(!page.contains("<b>"), "a task's name is text, not markup");
        assert!(page.contains("&lt;b&gt;"));
    }

    /// A noise result whose runs took about `ms` each, tight.
    fn noise_run(ms: f64) -> RunResult {
        use crate::model::noise::{summarize, NoiseMode, NoiseResult, NoiseRun, NoiseSettings};
        let runs: Vec<NoiseRun> = [ms * 0.999, ms, ms * 1.001, ms * 0.9995, ms * 1.0005]
            .iter()
            .map(|ms| NoiseRun {
                time_ns: (ms * 1e6) as u64,
                ..NoiseRun::default()
            })
            .collect();
        let mut r = RunResult::example("host", false);
        r.suites = vec![SuiteResult::Noise(NoiseResult {
            settings: NoiseSettings {
                mode: NoiseMode::Cpu,
                target_ms: 10,
                runs_requested: runs.len() as u64,
            },
            calibration: None,
            summary: summarize(&runs, 1000),
            runs,
        })];
        r
    }

    #[test]
    fn a_comparison_opens_with_its_headline_and_a_forest_of_its_changes() {
        let (a, b) = (noise_run(10.0), noise_run(14.0));
        let c = crate::compare::compare_runs(
            "A",
            std::slice::from_ref(&a),
            "B",
            std::slice::from_ref(&b),
            None,
        )
        .unwrap();
        let changed = crate::render::compare::changed(&c).len();
        assert!(changed > 0, "{c:?}");
        let page = html(&[("A".into(), a), ("B".into(), b)], &[c]);
        let at = |needle: &str| {
            page.find(needle)
                .unwrap_or_else(|| panic!("{needle} not on the page"))
        };
        let headline = at("changed beyond the host's noise:");
        let forest = at(&format!(
            r#"data-plot="compare-forest" data-points="{}""#,
            changed
        ));
        let table = at("<table><tr><th>measurement</th>");
        let method = at("The method: docs/run.md");
        assert!(headline < forest && forest < table && table < method);
        assert!(page[headline..forest].contains("worse"));
        // The run time is 40% longer: a point at +40 with its interval.
        assert!(page.contains("run time"), "the row is labelled");
    }

    #[test]
    fn a_comparison_without_changes_says_so_and_draws_no_forest() {
        let (a, b) = (noise_run(10.0), noise_run(10.0));
        let c = crate::compare::compare_runs(
            "A",
            std::slice::from_ref(&a),
            "B",
            std::slice::from_ref(&b),
            None,
        )
        .unwrap();
        let page = html(&[("A".into(), a), ("B".into(), b)], &[c]);
        assert!(page.contains("No figure changed beyond the host's noise"));
        assert!(!page.contains("compare-forest"));
    }

    #[test]
    fn the_text_report_gives_each_phase_and_escapes_task_names() {
        let SuiteResult::Interactive(i) = &explained_result().suites[0] else {
            unreachable!()
        };
        let text = crate::render::interactive::explanations(i);
        assert!(
            text.contains("Why Video under Burn was late: its 1 worst"),
            "{text}"
        );
        assert!(text.contains("sample 9: 4.050 ms"), "{text}");
        assert!(text.contains("woken on CPU 1, ran on CPU 1"), "{text}");
        assert!(
            text.contains(
                "waiting to run  4.000 ms: <b>\\e]0;x [77] SCHED_OTHER nice 0 4.000 ms (CPU 1)"
            ),
            "{text}"
        );
        assert!(text.contains("unaccounted     0.030 ms"), "{text}");
        assert!(!text.contains('\u{1b}'), "no raw escape reaches a terminal");
    }
}

//! schbench's tables (`hostbench wakeup`), as schbench prints them at the end of a run, and the
//! suite's part of the report page: the wakeup and request latency CDFs and the rate over time.

use std::fmt::Write;

use crate::model::wakeup::{mode, Table, WakeupResult};
use crate::model::{RunResult, SuiteResult};
use crate::render::labelled::suites;
use crate::render::svg::{line_chart, Series, XScale};

/// One of schbench's tables: its title line, a line a percentile (the starred one marked), and
/// min and max.
pub fn table(out: &mut String, label: &str, units: &str, runtime_s: u64, t: &Table, star: f64) {
    let _ = writeln!(
        out,
        "{label} percentiles ({units}) runtime {runtime_s} (s) ({} total samples)",
        t.samples
    );
    for r in &t.rows {
        let mark = if r.pct == star { "* " } else { "  " };
        let _ = writeln!(
            out,
            "\t{mark}{:.1}th: {:<10} ({} samples)",
            r.pct, r.value, r.samples
        );
    }
    let _ = writeln!(out, "\t  min={}, max={}", t.min, t.max);
}

/// A byte rate in schbench's units (B, KB, MB, ..., each 1024 of the one before).
fn pretty_size(mut n: f64) -> (f64, &'static str) {
    const UNITS: [&str; 7] = ["B", "KB", "MB", "GB", "TB", "PB", "EB"];
    let mut i = 0;
    while n >= 1024.0 && i + 1 < UNITS.len() {
        n /= 1024.0;
        i += 1;
    }
    (n, UNITS[i])
}

/// schbench's end-of-run lines.
pub fn report(r: &WakeupResult) -> String {
    let s = &r.settings;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "schbench: {}, runtime {} s, warm-up {} s{}",
        mode(s),
        s.runtime_s,
        s.warmup_s,
        if r.stopped { " (stopped early)" } else { "" }
    );
    if let (Some(p), Some(shared)) = (s.split_pct, s.shared_side()) {
        // schbench's two lines as it starts.
        let (own_kb, shared_kb) = crate::model::wakeup::split_kb(s.footprint_kb, s.split_pct);
        let _ = writeln!(
            out,
            "split mode: {p}% private ({own_kb} KB per thread), {}% shared ({shared_kb} KB total)",
            100 - p
        );
        let _ = writeln!(
            out,
            "matrix sizes: private={}, shared={shared}",
            s.matrix_side()
        );
    }
    table(
        &mut out,
        "Wakeup Latencies",
        "usec",
        s.runtime_s,
        &r.wakeup,
        99.0,
    );
    if let Some(t) = &r.request {
        table(&mut out, "Request Latencies", "usec", s.runtime_s, t, 99.0);
    }
    if let Some(t) = &r.rps {
        table(&mut out, "RPS", "requests", s.runtime_s, t, 50.0);
    }
    if let Some(avg) = r.average_rps {
        let _ = writeln!(out, "average rps: {avg:.2}");
    }
    if let Some(goal) = r.final_rps_goal {
        let _ = writeln!(out, "final rps goal was {goal}");
    }
    if let Some(d) = r.sched_delay {
        let _ = writeln!(
            out,
            "sched delay: message {} (usec) worker {} (usec)",
            d.message_us, d.worker_us
        );
    }
    explanations(&mut out, r);
    if let (Some(ops), Some(bytes)) = (r.pipe_ops_per_s, r.pipe_bytes_per_s) {
        let (n, unit) = pretty_size(bytes);
        let _ = writeln!(out, "avg worker transfer: {ops:.2} ops/sec {n:.2}{unit}/s");
    }
    out
}

/// The tables schbench prints every `-i` seconds while it runs: the three tables so far with
/// the seconds since the start, the sched delay and the latest second's rate.
pub fn interval(r: &WakeupResult, elapsed_s: u64) -> String {
    let mut out = String::new();
    table(
        &mut out,
        "Wakeup Latencies",
        "usec",
        elapsed_s,
        &r.wakeup,
        99.0,
    );
    if let Some(t) = &r.request {
        table(&mut out, "Request Latencies", "usec", elapsed_s, t, 99.0);
    }
    if let Some(t) = &r.rps {
        table(&mut out, "RPS", "requests", elapsed_s, t, 50.0);
    }
    if let Some(d) = r.sched_delay {
        let _ = writeln!(
            out,
            "sched delay: message {} (usec) worker {} (usec)",
            d.message_us, d.worker_us
        );
    }
    if let Some(&(_, rate)) = r.per_second.last() {
        let _ = writeln!(out, "current rps: {rate:.2}");
    }
    out
}

/// `--explain`: the run's worst wakeups, post to running, a few lines each.
fn explanations(out: &mut String, r: &WakeupResult) {
    let Some(x) = &r.explained else { return };
    super::explain::explained(
        out,
        format_args!(
            "Why the worst wakeups were late: the {} worst of {} wakeups, post to running",
            x.samples.len(),
            r.wakeup.samples
        ),
        x,
        &super::explain::WAKEUP,
    );
}

/// One short figure: the p99 wakeup latency and the rate.
pub fn headline(r: &WakeupResult) -> String {
    let p99 = r
        .wakeup
        .at(99.0)
        .map_or("no wakeups".to_string(), |v| format!("wakeup p99 {v} us"));
    match (r.average_rps, r.pipe_ops_per_s) {
        (Some(rps), _) => format!("{p99}, {rps:.1} rps"),
        (None, Some(ops)) => format!("{p99}, {ops:.0} transfers/s"),
        _ => p99,
    }
}

impl super::SuiteView for WakeupResult {
    fn report(&self, _run: &RunResult) -> String {
        report(self)
    }

    fn headline(&self) -> String {
        headline(self)
    }

    fn summary_notes(&self) -> Vec<String> {
        let worst = self.explained.as_ref().and_then(|x| x.samples.first());
        worst
            .map(|s| {
                format!(
                    "  wakeup: worst {} from post to running, {}",
                    crate::units::ms_text(s.window_ns as f64),
                    super::explain::mostly(s)
                )
            })
            .into_iter()
            .collect()
    }

    fn summary_line(&self) -> String {
        let request = self
            .request
            .as_ref()
            .and_then(|t| t.at(50.0))
            .map_or(String::new(), |v| format!(", request p50 {v} us"));
        format!(
            "wakeup (schbench, {}): {}{request}",
            mode(&self.settings),
            headline(self)
        )
    }
}

/// The share of samples at or below each bucket's value, %, against the value.
fn cdf(t: &Table) -> Vec<(f64, f64)> {
    let total: u64 = t.buckets.iter().map(|b| b.1).sum();
    let mut running = 0;
    t.buckets
        .iter()
        .map(|&(v, c)| {
            running += c;
            (f64::from(v), running as f64 * 100.0 / total as f64)
        })
        .collect()
}

/// The points of one series of a plot, from a result (None: it has none).
type Pick = dyn Fn(&WakeupResult) -> Option<Vec<(f64, f64)>>;

/// Its section of `report`'s HTML page.
pub fn report_section(out: &mut String, results: &[(String, RunResult)]) {
    let all = suites(results, |s| match s {
        SuiteResult::Wakeup(x) => Some(x),
        _ => None,
    });
    if all.is_empty() {
        return;
    }
    out.push_str("<h2>wakeup (schbench)</h2><p>The share of wakeups and requests that took at most so long (further left is better), and the requests a second through each run.</p>");
    let series = |pick: &Pick| -> Vec<Series> {
        all.iter()
            .filter_map(|(l, w)| {
                Some(Series {
                    name: l.to_string(),
                    points: pick(w)?,
                })
            })
            .collect()
    };
    out.push_str(&line_chart(
        "wakeup",
        "Wakeup latency, cumulative",
        "us",
        "% of wakeups",
        &series(&|w| Some(cdf(&w.wakeup))),
        XScale::Log10,
    ));
    let requests = series(&|w| w.request.as_ref().map(cdf));
    if !requests.is_empty() {
        out.push_str(&line_chart(
            "wakeup",
            "Request latency, cumulative",
            "us",
            "% of requests",
            &requests,
            XScale::Log10,
        ));
    }
    let rates = series(&|w| (!w.per_second.is_empty()).then(|| w.per_second.clone()));
    if !rates.is_empty() {
        out.push_str(&line_chart(
            "wakeup",
            "Requests a second",
            "s",
            "requests/s",
            &rates,
            XScale::Linear,
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::wakeup::Row;

    #[test]
    fn a_table_as_schbench_prints_it() {
        let t = Table {
            samples: 2087,
            rows: vec![
                Row {
                    pct: 50.0,
                    value: 4,
                    samples: 562,
                },
                Row {
                    pct: 99.0,
                    value: 25,
                    samples: 113,
                },
            ],
            min: 1,
            max: 57,
            buckets: vec![],
        };
        let mut out = String::new();
        table(&mut out, "Wakeup Latencies", "usec", 5, &t, 99.0);
        assert_eq!(
            out,
            "Wakeup Latencies percentiles (usec) runtime 5 (s) (2087 total samples)\n\
             \t  50.0th: 4          (562 samples)\n\
             \t* 99.0th: 25         (113 samples)\n\
             \t  min=1, max=57\n"
        );
        assert_eq!(pretty_size(1.34 * 1024.0 * 1024.0 * 1024.0).1, "GB");
    }
}

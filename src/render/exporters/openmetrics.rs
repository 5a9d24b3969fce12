//! Results and run states as OpenMetrics text for Prometheus: one result, each host's latest
//! result and last run (`--fleet`), and the files of `--textfile-dir`. Names and labels follow
//! Prometheus' conventions (a `hostbench_` prefix, base units in the name, gauges, a `host`
//! label), and every label value from a result or a store is written escaped, so a row another
//! host wrote cannot break a line or forge a series.

use std::collections::BTreeMap;
use std::fmt::Write;

use anyhow::Result;

use crate::model::headline::{Column, HeadlineFigures};
use crate::model::label;
use crate::model::run_state::{Outcome, RunState};
use crate::model::RunResult;
use crate::text::Text;

/// The longest label value written: a host's name whole (a label is at most 128 characters,
/// a hostname at most 256 in a store, layout 12), so two hosts are never one series.
const MAX_LABEL: usize = 256;

/// One host's latest result as the metrics show it.
pub struct ResultMetrics<'a> {
    pub started_at: chrono::DateTime<chrono::Utc>,
    pub incomplete: bool,
    /// The headline figures exported, from complete results only, as the fleet page ranges
    /// them (None: the host has none, or only a cut-short result): a cut-short run is in no
    /// range and fires no range alert.
    pub figures: Option<&'a HeadlineFigures>,
    /// What the latest result ran on and with, for `hostbench_result_info` (None: not read).
    pub info: Option<ResultInfo>,
}

/// The latest result's hostbench version, kernel, CPU and tags: the labels of
/// `hostbench_result_info`, so that a dashboard or an alert can say which kernel a host runs.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultInfo {
    pub version: String,
    pub kernel: String,
    pub cpu: String,
    /// `key=value` pairs, sorted, joined with commas.
    pub tags: String,
}

impl ResultInfo {
    pub fn of(r: &RunResult) -> ResultInfo {
        let host = &r.environment.host;
        let tags: Vec<String> = r.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
        ResultInfo {
            version: r.tool_version.raw().to_string(),
            kernel: host.kernel_release.raw().to_string(),
            cpu: host.cpu_model.raw().to_string(),
            tags: tags.join(","),
        }
    }
}

/// One host: its name, its latest result, its last run (either may be missing).
pub struct HostMetrics<'a> {
    pub host: &'a Text,
    pub result: Option<ResultMetrics<'a>>,
    pub run: Option<&'a RunState>,
    /// When an operator retired it (`results retire`): its other metrics are left out.
    pub retired_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// How a headline column is exported: the metric's name (its unit in it), its help, what its
/// value is divided by to reach the base unit (a power of ten: the quotient is the nearest
/// number to the exact one, 57 µs is 0.000057 s), and labels of its own.
struct Metric {
    name: &'static str,
    help: &'static str,
    unit: &'static str,
    divisor: f64,
    labels: &'static [(&'static str, &'static str)],
}

/// The metric of each headline column, by the column's key; a column without one is not
/// exported (a unit test holds every column to having one).
fn metric_of(column: &Column) -> Option<Metric> {
    Some(match column.key {
        "index_one" | "index_many" => Metric {
            name: "hostbench_index_score",
            help: "UnixBench's BYTE index of the latest result (System Benchmarks Index Score)",
            unit: "",
            divisor: 1.0,
            labels: if column.key == "index_one" {
                &[("copies", "1")]
            } else {
                &[("copies", "n")]
            },
        },
        "interactive_worst" => Metric {
            name: "hostbench_interactive_deadlines_met_ratio",
            help: "interbench: the share of deadlines met in the worst benchmark and load pair",
            unit: "ratio",
            divisor: 100.0,
            labels: &[],
        },
        "sched" => Metric {
            name: "hostbench_sched_round_seconds",
            help: "reflex: the scheduler's cost of one round",
            unit: "seconds",
            divisor: 1e6,
            labels: &[],
        },
        "noise" => Metric {
            name: "hostbench_noise_spread_ratio",
            help: "p1bench: how much the fixed job's time spread from run to run",
            unit: "ratio",
            divisor: 100.0,
            labels: &[],
        },
        "wakeup" => Metric {
            name: "hostbench_wakeup_p99_seconds",
            help: "schbench: the 99th percentile of the wake-up latency",
            unit: "seconds",
            divisor: 1e6,
            labels: &[],
        },
        _ => return None,
    })
}

/// A label value as written: printable (hidden characters shown as escapes), bounded, and
/// escaped as OpenMetrics asks.
fn label_value(text: &str) -> String {
    let shown = label::printable(text, MAX_LABEL);
    let mut out = String::with_capacity(shown.len());
    for c in shown.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// A number as the format writes it.
fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        format!("{v}")
    }
}

/// The families being written: by name, their type line, help, unit and samples, in the order
/// first seen (OpenMetrics wants each family's samples together).
#[derive(Default)]
struct Families {
    order: Vec<&'static str>,
    by_name: BTreeMap<&'static str, Family>,
}

struct Family {
    help: &'static str,
    unit: &'static str,
    samples: Vec<String>,
}

impl Families {
    fn add(
        &mut self,
        name: &'static str,
        help: &'static str,
        unit: &'static str,
        labels: &[(&str, String)],
        value: f64,
    ) {
        let family = self.by_name.entry(name).or_insert_with(|| Family {
            help,
            unit,
            samples: Vec::new(),
        });
        if family.samples.is_empty() && !self.order.contains(&name) {
            self.order.push(name);
        }
        let labels: Vec<String> = labels.iter().map(|(k, v)| format!("{k}=\"{v}\"")).collect();
        family
            .samples
            .push(format!("{name}{{{}}} {}", labels.join(","), number(value)));
    }

    fn text(&self) -> String {
        let mut out = String::new();
        for name in &self.order {
            let f = &self.by_name[name];
            let _ = writeln!(out, "# TYPE {name} gauge");
            if !f.unit.is_empty() {
                let _ = writeln!(out, "# UNIT {name} {}", f.unit);
            }
            let _ = writeln!(out, "# HELP {name} {}", f.help);
            for s in &f.samples {
                let _ = writeln!(out, "{s}");
            }
        }
        out.push_str("# EOF\n");
        out
    }
}

/// Seconds since the epoch, with the fraction.
fn seconds(t: chrono::DateTime<chrono::Utc>) -> f64 {
    t.timestamp_micros() as f64 / 1e6
}

/// The metrics of these hosts, as OpenMetrics text.
pub fn hosts(hosts: &[HostMetrics]) -> String {
    let mut f = Families::default();
    for h in hosts {
        let host = ("host", label_value(h.host.raw()));
        if let Some(r) = &h.result {
            results(&mut f, &host, r);
        }
        if let Some(run) = h.run {
            run_state(&mut f, &host, run);
        }
        if let Some(at) = h.retired_at {
            f.add(
                "hostbench_host_retired_timestamp_seconds",
                "When an operator retired the host (results retire): its absence is no alert",
                "seconds",
                std::slice::from_ref(&host),
                seconds(at),
            );
        }
    }
    f.text()
}

fn results(f: &mut Families, host: &(&str, String), r: &ResultMetrics) {
    f.add(
        "hostbench_result_timestamp_seconds",
        "When the latest stored result's run started",
        "seconds",
        std::slice::from_ref(host),
        seconds(r.started_at),
    );
    f.add(
        "hostbench_result_incomplete",
        "1 when the latest result was cut short (a stop, a failed test)",
        "",
        std::slice::from_ref(host),
        if r.incomplete { 1.0 } else { 0.0 },
    );
    if let Some(info) = &r.info {
        f.add(
            "hostbench_result_info",
            "The latest result's hostbench version, kernel, CPU model and tags (always 1)",
            "",
            &[
                host.clone(),
                ("version", label_value(&info.version)),
                ("kernel", label_value(&info.kernel)),
                ("cpu", label_value(&info.cpu)),
                ("tags", label_value(&info.tags)),
            ],
            1.0,
        );
    }
    let Some(figures) = r.figures else {
        return;
    };
    if let Some(floor) = figures.noise_floor_pct {
        f.add(
            "hostbench_noise_floor_ratio",
            "The latest result's own noise: differences within it are noise",
            "ratio",
            std::slice::from_ref(host),
            floor / 100.0,
        );
    }
    for (column, figure) in Column::all().iter().zip(&figures.values) {
        let (Some(metric), Some(figure)) = (metric_of(column), figure) else {
            continue;
        };
        // The fleet page's rule: a figure no run can produce (1e300, −5, a row written by
        // hand) is not exported either.
        if !crate::fleet::possible(figure.value) {
            continue;
        }
        let mut labels = vec![host.clone()];
        labels.extend(metric.labels.iter().map(|&(k, v)| (k, v.to_string())));
        // What it measured: hosts are compared only with those that measured the same.
        labels.push(("measured", label_value(figure.kind.raw())));
        f.add(
            metric.name,
            metric.help,
            metric.unit,
            &labels,
            figure.value / metric.divisor,
        );
    }
}

fn run_state(f: &mut Families, host: &(&str, String), run: &RunState) {
    f.add(
        "hostbench_last_run_start_timestamp_seconds",
        "When the host's last run started",
        "seconds",
        std::slice::from_ref(host),
        seconds(run.started_at),
    );
    if let Some(ended) = run.ended_at {
        f.add(
            "hostbench_last_run_end_timestamp_seconds",
            "When the host's last run ended (none while it runs)",
            "seconds",
            std::slice::from_ref(host),
            seconds(ended),
        );
        let ok = matches!(run.outcome, Outcome::Finished | Outcome::Incomplete);
        f.add(
            "hostbench_last_run_success",
            "1 when the host's last run stored its result where asked, 0 when it failed or was stopped",
            "",
            std::slice::from_ref(host),
            if ok { 1.0 } else { 0.0 },
        );
    }
    // A state set: 1 for the outcome it has, 0 for the others.
    for o in Outcome::ALL {
        f.add(
            "hostbench_last_run_outcome",
            "How the host's last run ended (running: not yet, or killed before it could say)",
            "",
            &[host.clone(), ("outcome", o.name().to_string())],
            if o == run.outcome { 1.0 } else { 0.0 },
        );
    }
}

/// `results export ID --format openmetrics`: the result's headline figures (its host's latest
/// result, as far as the export knows); none for a cut-short result.
///
/// A label value is shown as `label::printable` shows it (no hidden character), then `\`,
/// `"` and a newline escaped as the format asks. The text is also valid Prometheus text format
/// 0.0.4 (which reads `# UNIT` and `# EOF` as comments): node_exporter's textfile collector
/// reads it as it is.
pub fn result(_id: i64, r: &RunResult) -> Result<String> {
    let figures = HeadlineFigures::of(r);
    Ok(hosts(&[HostMetrics {
        host: r.host_name(),
        result: Some(ResultMetrics {
            started_at: r.started_at,
            incomplete: r.incomplete,
            figures: (!r.incomplete).then_some(&figures),
            info: Some(ResultInfo::of(r)),
        }),
        run: None,
        retired_at: None,
    }]))
}

/// `history --fail-on … --format openmetrics`: each host's nightly gate. Per host, when its
/// newest judged result started and how many figures are worse and fail tonight; per figure
/// the gate found worse in the newest results (a series only for those), its signed change,
/// its p, since when, how many results the new level holds, and whether it fails tonight
/// (the first night of the level) or was found before. `cause` says whose it is: `figure`, or
/// `host` where the host's own speed moved it.
pub fn history(h: &crate::history::Histories) -> Result<String> {
    let mut f = Families::default();
    for one in &h.hosts {
        let Some(gate) = &one.gate else {
            anyhow::bail!("the metrics of a history are its nightly gate's: give --fail-on");
        };
        let host = ("host", label_value(one.host.raw()));
        if let Some(at) = one.newest_at {
            f.add(
                "hostbench_gate_newest_result_timestamp_seconds",
                "When the newest result the nightly gate judged started",
                "seconds",
                std::slice::from_ref(&host),
                seconds(at),
            );
        }
        let failing = gate.iter().filter(|w| w.fails).count();
        f.add(
            "hostbench_gate_worse_figures",
            "How many figures the nightly gate finds worse in the newest results than before them",
            "",
            std::slice::from_ref(&host),
            gate.len() as f64,
        );
        f.add(
            "hostbench_gate_failing_figures",
            "How many of them fail the gate tonight (the first night of their new level)",
            "",
            std::slice::from_ref(&host),
            failing as f64,
        );
        for w in gate {
            gate_figure(&mut f, &host, w);
        }
    }
    Ok(f.text())
}

/// One figure the gate found worse.
fn gate_figure(f: &mut Families, host: &(&str, String), w: &crate::history::gate::Worse) {
    let labels = [
        host.clone(),
        ("figure", label_value(w.key.raw())),
        ("better", super::csv::better(w.better).to_string()),
        (
            "cause",
            if w.host.is_some() { "host" } else { "figure" }.to_string(),
        ),
    ];
    let gauges: [(&'static str, &'static str, &'static str, f64); 5] = [
        (
            "hostbench_gate_change_ratio",
            "The figure's change from the level before to the newest results, signed as its values moved (a share of the level before; points of a percentage as a ratio)",
            "ratio",
            w.change / 100.0,
        ),
        (
            "hostbench_gate_p_value",
            "The change's p (Student's t times the newest counts tried, or the shuffles' where the noise is heavy-tailed)",
            "",
            w.p,
        ),
        (
            "hostbench_gate_since_timestamp_seconds",
            "When the first result of the figure's new level started",
            "seconds",
            seconds(w.started_at),
        ),
        (
            "hostbench_gate_level_results",
            "How many of the newest results the new level holds",
            "",
            w.points_after as f64,
        ),
        (
            "hostbench_gate_failing",
            "1 when the figure fails the gate tonight, 0 when an earlier night found it or the host's own speed moved it",
            "",
            if w.fails { 1.0 } else { 0.0 },
        ),
    ];
    for (name, help, unit, value) in gauges {
        f.add(name, help, unit, &labels, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::headline::Figure;

    #[test]
    fn every_headline_column_has_a_metric_in_base_units() {
        for c in Column::all() {
            let m = metric_of(c).unwrap_or_else(|| panic!("{} has no metric", c.key));
            assert!(m.name.starts_with("hostbench_"));
            if !m.unit.is_empty() {
                assert!(m.name.ends_with(&format!("_{}", m.unit)), "{}", m.name);
            }
        }
    }

    fn state(outcome: Outcome, host: &str) -> RunState {
        RunState {
            uuid: "u".into(),
            host: host.into(),
            host_label: None,
            command: "hostbench run".into(),
            started_at: chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap(),
            ended_at: (outcome != Outcome::Running)
                .then(|| chrono::DateTime::from_timestamp(1_700_000_600, 500_000_000).unwrap()),
            outcome,
            why: None,
            stored: None,
            tags: BTreeMap::new(),
            owner: None,
        }
    }

    #[test]
    fn a_run_is_a_state_set_and_its_times_and_a_label_cannot_forge_a_series() {
        let forged = "n1\"} 1\nhostbench_index_score{host=\"victim";
        let text = hosts(&[HostMetrics {
            host: &Text::new(forged),
            result: None,
            run: Some(&state(Outcome::Failed, forged)),
            retired_at: None,
        }]);
        // One line per sample, none starting with the forged name.
        assert!(
            !text.lines().any(|l| l.starts_with("hostbench_index_score")),
            "{text}"
        );
        assert!(
            text.contains(r#"host="n1\"} 1\\nhostbench_index_score{host=\"victim""#),
            "{text}"
        );
        assert!(text.contains("hostbench_last_run_start_timestamp_seconds{host="));
        assert!(text.contains("} 1700000600.5\n"), "{text}");
        assert!(text.contains(r#",outcome="failed"} 1"#), "{text}");
        assert!(text.contains(r#",outcome="finished"} 0"#), "{text}");
        assert!(text.contains("hostbench_last_run_success{") && text.contains("} 0\n"));
        assert!(text.ends_with("# EOF\n"));
        // While running: no end, no success, the state "running".
        let text = hosts(&[HostMetrics {
            host: &Text::new("n1"),
            result: None,
            run: Some(&state(Outcome::Running, "n1")),
            retired_at: None,
        }]);
        assert!(
            !text.contains("end_timestamp") && !text.contains("run_success"),
            "{text}"
        );
        assert!(
            text.contains(r#"{host="n1",outcome="running"} 1"#),
            "{text}"
        );
    }

    #[test]
    fn figures_are_in_base_units_with_what_they_measured() {
        let mut values = vec![None; Column::all().len()];
        let at = |key: &str| Column::all().iter().position(|c| c.key == key).unwrap();
        let fig = |value: f64, kind: &str| {
            Some(Figure {
                value,
                kind: kind.into(),
                note: "".into(),
            })
        };
        values[at("index_one")] = fig(1234.5, "12 tests");
        values[at("wakeup")] = fig(57.0, "pipe");
        values[at("interactive_worst")] = fig(97.5, "Video under Burn");
        let figures = HeadlineFigures {
            noise_floor_pct: Some(0.5),
            values,
        };
        let text = hosts(&[HostMetrics {
            host: &Text::new("n1"),
            result: Some(ResultMetrics {
                started_at: chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap(),
                incomplete: false,
                figures: Some(&figures),
                info: Some(ResultInfo {
                    version: "0.1.0".into(),
                    kernel: "6.19.0".into(),
                    cpu: "AMD EPYC".into(),
                    tags: "rack=r\"1,x=\ny".into(),
                }),
            }),
            run: None,
            retired_at: None,
        }]);
        for line in [
            r#"hostbench_result_info{host="n1",version="0.1.0",kernel="6.19.0",cpu="AMD EPYC",tags="rack=r\"1,x=\\ny"} 1"#,
            "# TYPE hostbench_index_score gauge\n",
            r#"hostbench_index_score{host="n1",copies="1",measured="12 tests"} 1234.5"#,
            r#"hostbench_wakeup_p99_seconds{host="n1",measured="pipe"} 0.000057"#,
            r#"hostbench_interactive_deadlines_met_ratio{host="n1",measured="Video under Burn"} 0.975"#,
            r#"hostbench_noise_floor_ratio{host="n1"} 0.005"#,
            r#"hostbench_result_timestamp_seconds{host="n1"} 1700000000"#,
            "# UNIT hostbench_wakeup_p99_seconds seconds\n",
        ] {
            assert!(text.contains(line), "{line} in {text}");
        }
        assert!(!text.contains("hostbench_sched_round_seconds"), "{text}");
    }

    /// A cut-short result exports its time and that it was cut short, and no figure: it is in
    /// no range and fires no range alert (the fleet page leaves it out too).
    #[test]
    fn a_cut_short_result_exports_no_figure() {
        let mut r: RunResult =
            serde_json::from_str(include_str!("../../../tests/fixtures/smoke-a.json")).unwrap();
        let whole = result(1, &r).unwrap();
        assert!(whole.contains("hostbench_index_score{"), "{whole}");
        r.incomplete = true;
        let cut = result(1, &r).unwrap();
        assert!(cut.contains("hostbench_result_incomplete{host="), "{cut}");
        assert!(
            cut.lines()
                .any(|l| l.starts_with("hostbench_result_incomplete{") && l.ends_with(" 1")),
            "{cut}"
        );
        assert!(!cut.contains("measured="), "{cut}");
    }

    /// The fleet page's rule holds here too: 1e300 and −5 are no measurements, and two hosts
    /// whose names share their first 200 characters stay two series.
    #[test]
    fn impossible_figures_are_not_exported_and_long_names_stay_apart() {
        let at = |key: &str| Column::all().iter().position(|c| c.key == key).unwrap();
        let mut values = vec![None; Column::all().len()];
        for (key, value) in [("index_one", 1e300), ("wakeup", -5.0), ("sched", 3.5)] {
            values[at(key)] = Some(Figure {
                value,
                kind: "k".into(),
                note: "".into(),
            });
        }
        let figures = HeadlineFigures {
            noise_floor_pct: None,
            values,
        };
        let names = [
            format!("{}a", "h".repeat(200)),
            format!("{}b", "h".repeat(200)),
        ];
        let hosts_named: Vec<Text> = names.iter().map(|n| Text::new(n.as_str())).collect();
        let metrics: Vec<HostMetrics<'_>> = hosts_named
            .iter()
            .map(|host| HostMetrics {
                host,
                result: Some(ResultMetrics {
                    started_at: chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap(),
                    incomplete: false,
                    figures: Some(&figures),
                    info: None,
                }),
                run: None,
                retired_at: None,
            })
            .collect();
        let text = hosts(&metrics);
        assert!(!text.contains("hostbench_index_score{"), "{text}");
        assert!(!text.contains("hostbench_wakeup_p99_seconds{"), "{text}");
        for n in &names {
            assert!(
                text.contains(&format!("hostbench_sched_round_seconds{{host=\"{n}\"")),
                "{text}"
            );
        }
    }

    #[test]
    fn a_gate_exports_each_hosts_worse_figures_signed_and_whose() {
        use crate::history::gate::Worse;
        use crate::history::{Histories, History};
        let mut tonight = Worse::first_night("noise/cpu 5 ms/run time", 30.0);
        tonight.key = "noise/x\"} 1\nhostbench_gate_failing{host=\"y".into();
        let mut before = Worse::first_night("index/1 copy/dhry2reg", -4.0);
        before.better = crate::model::figures::Better::Higher;
        before.fails = false;
        before.found_on = Some(15);
        before.points_after = 2;
        let mut own = Worse::first_night("sched/round", 10.0);
        own.fails = false;
        own.host = Some("the reference moved with it".into());
        let h = Histories {
            fleet: true,
            hosts: vec![
                History {
                    newest_at: chrono::DateTime::from_timestamp(1_700_086_400, 0),
                    gate: Some(vec![tonight, before, own]),
                    ..History::quiet("a", 17)
                },
                History {
                    gate: Some(Vec::new()),
                    ..History::quiet("b", 3)
                },
            ],
            shared: Vec::new(),
        };
        let text = history(&h).unwrap();
        // Per host: the newest night judged and the counts; a quiet host has counts of 0.
        assert!(
            text.contains(
                "hostbench_gate_newest_result_timestamp_seconds{host=\"a\"} 1700086400\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("hostbench_gate_worse_figures{host=\"a\"} 3\n"),
            "{text}"
        );
        assert!(
            text.contains("hostbench_gate_failing_figures{host=\"a\"} 1\n"),
            "{text}"
        );
        assert!(
            text.contains("hostbench_gate_worse_figures{host=\"b\"} 0\n"),
            "{text}"
        );
        // Signed as the values moved, with which side is better and whose it is.
        assert!(text.contains(r#"hostbench_gate_change_ratio{host="a",figure="index/1 copy/dhry2reg",better="higher",cause="figure"} -0.04"#), "{text}");
        assert!(text.contains(r#"hostbench_gate_failing{host="a",figure="index/1 copy/dhry2reg",better="higher",cause="figure"} 0"#), "{text}");
        assert!(text.contains(r#"hostbench_gate_level_results{host="a",figure="index/1 copy/dhry2reg",better="higher",cause="figure"} 2"#), "{text}");
        assert!(text.contains(r#"hostbench_gate_change_ratio{host="a",figure="sched/round",better="lower",cause="host"} 0.1"#), "{text}");
        assert!(text.contains(r#"hostbench_gate_since_timestamp_seconds{host="a",figure="sched/round",better="lower",cause="host"} 1700000000"#), "{text}");
        assert!(text.contains(r#"hostbench_gate_p_value{host="a",figure="sched/round",better="lower",cause="host"} 0.001"#), "{text}");
        // A figure's key cannot forge a series.
        assert_eq!(
            text.lines()
                .filter(|l| l.starts_with("hostbench_gate_failing{"))
                .count(),
            3,
            "{text}"
        );
        assert!(text.ends_with("# EOF\n"));
        // A history without the gate has no metrics to give.
        let plain = Histories {
            fleet: false,
            hosts: vec![History::quiet("a", 3)],
            shared: Vec::new(),
        };
        assert!(history(&plain).is_err());
    }
}

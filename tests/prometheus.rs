//! hostbench's metrics in a real Prometheus stack (Debian's `prometheus` and
//! `prometheus-node-exporter`, which scripts/install-test-deps.sh installs): runs write their
//! files with `--textfile-dir`, node_exporter's textfile collector serves them, a Prometheus on
//! a loopback port scrapes it and evaluates deploy/prometheus's rules, and the series, an
//! alert and every expression of the Grafana dashboard are read back through its HTTP API.
//! `promtool` checks the files, the rules, and the rules' own tests.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{skip_without, Sandbox};
use serde_json::Value;

const DEPLOY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/prometheus");

/// A server the test started, killed when the test ends however it ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A loopback port nothing listens on now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn promtool(args: &[&str], stdin: Option<&Path>) -> std::process::Output {
    let mut cmd = Command::new("promtool");
    cmd.args(args).current_dir(DEPLOY);
    if let Some(file) = stdin {
        cmd.stdin(std::fs::File::open(file).unwrap());
    }
    cmd.output().unwrap()
}

/// An instant query through Prometheus' HTTP API: its `data.result`, or why not (the server's
/// answer when it was no JSON of an accepted query).
fn try_query(port: u16, expr: &str) -> Result<Vec<Value>, String> {
    let out = Command::new("curl")
        .args(["-sS", "--max-time", "10", "-G"])
        .arg(format!("http://127.0.0.1:{port}/api/v1/query"))
        .arg("--data-urlencode")
        .arg(format!("query={expr}"))
        .output()
        .unwrap();
    let answer: Value = serde_json::from_slice(&out.stdout).map_err(|_| format!("{out:?}"))?;
    if answer["status"] != "success" {
        return Err(answer.to_string());
    }
    Ok(answer["data"]["result"]
        .as_array()
        .cloned()
        .unwrap_or_default())
}

/// [`try_query`], which must be accepted.
fn query(port: u16, expr: &str) -> Vec<Value> {
    try_query(port, expr).unwrap_or_else(|why| panic!("{expr}: {why}"))
}

/// Waits (at most 60 s) until `expr` has a series, and returns them. A server still starting
/// (503, "Service Unavailable") is waited for too.
fn wait_for(port: u16, expr: &str) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let last = match try_query(port, expr) {
            Ok(found) if !found.is_empty() => return found,
            Ok(_) => "no series yet".to_string(),
            Err(why) => why,
        };
        assert!(
            Instant::now() < deadline,
            "no series for {expr} within 60 s: {last}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

fn value(series: &Value) -> f64 {
    series["value"][1].as_str().unwrap().parse().unwrap()
}

#[test]
fn a_run_reaches_prometheus_through_node_exporter_and_the_rules_and_dashboard_hold() {
    if skip_without(
        "the Prometheus stack",
        &["prometheus", "prometheus-node-exporter", "promtool", "curl"],
    ) {
        return;
    }
    // The rules are valid, and their own tests pass (each alert fires where it should).
    let out = promtool(&["check", "rules", "hostbench.rules.yml"], None);
    assert!(out.status.success(), "{out:?}");
    let out = promtool(&["test", "rules", "hostbench.rules.test.yml"], None);
    assert!(out.status.success(), "{out:?}");
    runbook_links_lead_to_their_sections();
    alertmanager_example_routes_and_inhibits();

    let sb = Sandbox::new();
    let textfiles = sb.dir.path().join("textfile");
    std::fs::create_dir(&textfiles).unwrap();
    // A run that stores its result: both files. Then one that fails before measuring (its
    // work directory refused): the run file says so, the figures stay.
    sb.cmd()
        .args(["noise", "--no-noise-check", "--host-label", "n1", "5", "3"])
        .arg("--textfile-dir")
        .arg(&textfiles)
        .assert()
        .success();
    let figures = std::fs::read_to_string(textfiles.join("hostbench.prom")).unwrap();
    assert!(
        figures.contains("hostbench_noise_spread_ratio{host=\"n1\",measured="),
        "{figures}"
    );
    // The info line: which hostbench and kernel made the latest result.
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    assert!(
        figures.contains(&format!(
            "hostbench_result_info{{host=\"n1\",version=\"{}\",kernel=\"{}\",",
            env!("CARGO_PKG_VERSION"),
            kernel.trim()
        )),
        "{figures}"
    );
    sb.refused_run(&[
        "--host-label",
        "n1",
        "--textfile-dir",
        textfiles.to_str().unwrap(),
    ]);
    let run = std::fs::read_to_string(textfiles.join("hostbench-run.prom")).unwrap();
    assert!(
        run.contains("hostbench_last_run_outcome{host=\"n1\",outcome=\"failed\"} 1"),
        "{run}"
    );
    assert_eq!(
        std::fs::read_to_string(textfiles.join("hostbench.prom")).unwrap(),
        figures
    );
    // Nothing but the two files: no temporary one left.
    let mut names: Vec<String> = std::fs::read_dir(&textfiles)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["hostbench-run.prom", "hostbench.prom"]);
    // Both pass Prometheus' own linter, as does the fleet store's export.
    let fleet = sb.dir.path().join("fleet.prom");
    sb.cmd()
        .args([
            "results",
            "export",
            "--fleet",
            "--format",
            "openmetrics",
            "-o",
        ])
        .arg(&fleet)
        .assert()
        .success();
    let exported = std::fs::read_to_string(&fleet).unwrap();
    assert!(
        exported.contains("hostbench_last_run_outcome{host=\"n1\",outcome=\"failed\"} 1")
            && exported.contains("hostbench_noise_spread_ratio{host=\"n1\""),
        "{exported}"
    );
    // The nightly gate, as hostbench-gate.service writes it into the same directory.
    let gate = textfiles.join("hostbench-gate.prom");
    sb.cmd()
        .args([
            "history",
            "--fleet",
            "--fail-on",
            "worse",
            "--format",
            "openmetrics",
            "-o",
        ])
        .arg(&gate)
        .assert()
        .success();
    for file in [
        textfiles.join("hostbench.prom"),
        textfiles.join("hostbench-run.prom"),
        fleet.clone(),
        gate.clone(),
    ] {
        let out = promtool(&["check", "metrics"], Some(&file));
        assert!(out.status.success(), "{}: {out:?}", file.display());
    }

    // node_exporter serves the directory; Prometheus scrapes it every second and evaluates the
    // rules.
    let exporter_port = free_port();
    let _exporter = Server(
        Command::new("prometheus-node-exporter")
            .arg(format!("--web.listen-address=127.0.0.1:{exporter_port}"))
            .args(["--collector.disable-defaults", "--collector.textfile"])
            .arg(format!(
                "--collector.textfile.directory={}",
                textfiles.display()
            ))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let prometheus_port = free_port();
    let config = sb.dir.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - {DEPLOY}/hostbench.rules.yml
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ['127.0.0.1:{exporter_port}']
"
        ),
    )
    .unwrap();
    let data: PathBuf = sb.dir.path().join("tsdb");
    let _prometheus = Server(
        Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!("--storage.tsdb.path={}", data.display()))
            .arg(format!("--web.listen-address=127.0.0.1:{prometheus_port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let failed = wait_for(
        prometheus_port,
        r#"hostbench_last_run_outcome{outcome="failed"} == 1"#,
    );
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0]["metric"]["host"], "n1");
    let spread = wait_for(
        prometheus_port,
        r#"hostbench_noise_spread_ratio{host="n1"}"#,
    );
    assert!(
        (0.0..1.0).contains(&value(&spread[0])),
        "a ratio: {spread:?}"
    );
    let started = wait_for(
        prometheus_port,
        "hostbench_last_run_start_timestamp_seconds",
    );
    let age = chrono::Utc::now().timestamp() as f64 - value(&started[0]);
    assert!((0.0..600.0).contains(&age), "started {age} s ago");
    // The gate judged the host's one result: nothing worse, said as 0.
    let judged = wait_for(
        prometheus_port,
        r#"hostbench_gate_worse_figures{host="n1"}"#,
    );
    assert_eq!(value(&judged[0]), 0.0, "{judged:?}");
    // The failed run's alert fires (it has no `for`).
    let alert = wait_for(
        prometheus_port,
        r#"ALERTS{alertname="HostbenchRunFailed",alertstate="firing"}"#,
    );
    assert_eq!(alert[0]["metric"]["host"], "n1", "{alert:?}");

    // Every expression of the dashboard is one Prometheus accepts, with its host variable at
    // "All"; the last-run table finds the host.
    let dashboard: Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{DEPLOY}/hostbench-dashboard.json")).unwrap(),
    )
    .unwrap();
    let mut exprs = Vec::new();
    for panel in dashboard["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().unwrap() {
            let expr = target["expr"].as_str().unwrap().replace("$host", ".*");
            exprs.push((panel["title"].as_str().unwrap().to_string(), expr));
        }
    }
    // Each table's host cell leads to the dashboard of that host alone (the drill-down).
    for panel in dashboard["panels"].as_array().unwrap() {
        if panel["type"] == "table" {
            let links = panel["fieldConfig"]["overrides"].to_string();
            assert!(links.contains("var-host=${__value.raw}"), "{panel}");
        }
    }
    // The annotations' queries too (changes marked on every panel).
    for a in dashboard["annotations"]["list"].as_array().unwrap() {
        let expr = a["expr"].as_str().unwrap().replace("$host", ".*");
        exprs.push((a["name"].as_str().unwrap().to_string(), expr));
    }
    assert!(exprs.len() >= 18, "{exprs:?}");
    for (title, expr) in &exprs {
        let found = query(prometheus_port, expr);
        if title == "Last run of each host" {
            assert_eq!(found.len(), 1, "{title}: {found:?}");
            assert_eq!(found[0]["metric"]["outcome"], "failed");
        }
    }
    // The host variable's query (Grafana's label_values) is Prometheus' label values API.
    let variable = dashboard["templating"]["list"][0]["definition"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(variable, "label_values(hostbench_last_run_outcome, host)");
    let out = Command::new("curl")
        .args(["-sS", "--max-time", "10", "-G"])
        .arg(format!(
            "http://127.0.0.1:{prometheus_port}/api/v1/label/host/values"
        ))
        .arg("--data-urlencode")
        .arg("match[]=hostbench_last_run_outcome")
        .output()
        .unwrap();
    let values: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(values["data"], serde_json::json!(["n1"]), "{values}");
}

/// Every alert has a `runbook_url` that leads to a section of docs/prometheus.md named after it.
fn runbook_links_lead_to_their_sections() {
    let rules = std::fs::read_to_string(format!("{DEPLOY}/hostbench.rules.yml")).unwrap();
    let page = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/prometheus.md"))
        .unwrap();
    let alerts: Vec<&str> = rules
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- alert: "))
        .collect();
    let links: Vec<&str> = rules
        .lines()
        .filter_map(|l| l.trim().strip_prefix("runbook_url: \""))
        .filter_map(|l| l.strip_suffix('"'))
        .collect();
    assert_eq!(alerts.len(), links.len(), "{links:?}");
    for (alert, link) in alerts.iter().zip(&links) {
        assert_eq!(
            *link,
            format!(
                "file:///usr/share/doc/hostbench/docs/prometheus.md#{}",
                alert.to_lowercase()
            )
        );
        assert!(page.contains(&format!("\n### {alert}\n")), "{alert}");
    }
}

/// The example Alertmanager file is valid, routes by severity, and a host whose metrics are
/// gone is one page (amtool, from Debian's prometheus-alertmanager).
fn alertmanager_example_routes_and_inhibits() {
    if skip_without("Alertmanager's amtool", &["amtool"]) {
        return;
    }
    let file = format!("{DEPLOY}/alertmanager.example.yml");
    let out = Command::new("amtool")
        .args(["check-config", &file])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    for (labels, receiver) in [
        (
            ["alertname=HostbenchRunFailed", "severity=warning"],
            "benchmarks-team",
        ),
        (
            ["alertname=HostbenchGateBehind", "severity=info"],
            "benchmarks-digest",
        ),
    ] {
        let out = Command::new("amtool")
            .args(["config", "routes", "test", "--config.file", &file])
            .args(labels)
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            receiver,
            "{labels:?}: {out:?}"
        );
    }
    let config = std::fs::read_to_string(&file).unwrap();
    assert!(config.contains("source_matchers: ['alertname=\"HostbenchMetricsGone\"']"));
}

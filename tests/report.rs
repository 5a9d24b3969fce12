//! `hostbench report`: the page renders in real headless Chromium, every expected plot is there
//! with data points, and the page makes no request. Needs Debian's `chromium` (scripts/install-test-deps.sh
//! installs it).

mod common;

use std::io::Read;
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::Sandbox;

/// Hosts Chromium itself contacts (component updates, clock, accounts), not the page.
const BROWSER_OWN_HOSTS: [&str; 3] = [
    "clients2.google.com",
    "update.googleapis.com",
    "accounts.google.com",
];

/// A proxy that accepts every connection Chromium makes and records its request line.
fn recording_proxy() -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut c) = conn else { continue };
            let _ = c.set_read_timeout(Some(Duration::from_secs(2)));
            let mut buf = [0u8; 512];
            let n = c.read(&mut buf).unwrap_or(0);
            let line = String::from_utf8_lossy(&buf[..n])
                .lines()
                .next()
                .unwrap_or("")
                .to_string();
            log.lock().unwrap().push(line);
        }
    });
    (port, seen)
}

/// The page's DOM after Chromium has loaded it, and the requests the page made.
fn render(page: &Path, profile: &Path) -> (String, Vec<String>) {
    render_url(&format!("file://{}", page.display()), profile)
}

/// [`render`] of a URL (a page with a `#fragment`).
fn render_url(url: &str, profile: &Path) -> (String, Vec<String>) {
    render_with(url, profile, &[])
}

/// [`render_url`] with more of Chromium's options (a window size).
fn render_with(url: &str, profile: &Path, options: &[&str]) -> (String, Vec<String>) {
    let (port, seen) = recording_proxy();
    let out = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--proxy-server=http://127.0.0.1:{port}"))
        .arg("--proxy-bypass-list=<-loopback>")
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(options)
        .arg("--dump-dom")
        .arg(url)
        .output()
        .expect("chromium must be installed (scripts/install-test-deps.sh installs it on Debian)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Requests still in flight when the page was dumped reach the proxy shortly after.
    std::thread::sleep(Duration::from_millis(300));
    let requests = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|l| !BROWSER_OWN_HOSTS.iter().any(|h| l.contains(h)))
        .cloned()
        .collect();
    (String::from_utf8(out.stdout).unwrap(), requests)
}

/// The `data-points` of every plot of `kind` in the DOM.
fn plots(dom: &str, kind: &str) -> Vec<usize> {
    let tag = format!("data-plot=\"{kind}\" data-points=\"");
    dom.match_indices(&tag)
        .map(|(i, _)| {
            let rest = &dom[i + tag.len()..];
            rest[..rest.find('"').unwrap()].parse().unwrap()
        })
        .collect()
}

#[test]
fn the_report_renders_in_chromium_with_every_plot_and_no_request() {
    if common::skip_without("the report in a browser", &["chromium"]) {
        return;
    }
    let sb = Sandbox::new();
    let work = sb.dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let run = sb
        .cmd()
        .args(["run", "--profile", "smoke", "-q", "--workdir"])
        .arg(&work)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    sb.json(&[
        "index",
        "dhry2reg",
        "syscall",
        "spawn",
        "--seconds",
        "0.2",
        "-i",
        "2",
        "--workdir",
        work.to_str().unwrap(),
        "--results-dir",
        work.to_str().unwrap(),
    ]);
    let page = sb.dir.path().join("report.html");
    let out = sb
        .cmd()
        .args(["report", "1", "2", "-o"])
        .arg(&page)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    // Self-contained: nothing on the page names another place to load from.
    assert!(!html.contains("http:") && !html.contains("https:"));
    assert!(!html.contains("<script"));

    let (dom, requests) = render(&page, &sb.dir.path().join("chromium"));
    assert!(requests.is_empty(), "the page made requests: {requests:?}");
    assert!(dom.contains("hostbench report: result 1, result 2"));
    // Index: one chart a pass (1 and 2 copies), both results side by side with the baseline.
    let index = plots(&dom, "index");
    assert_eq!(index.len(), 2, "{index:?}");
    assert!(index.iter().all(|&n| n >= 6), "{index:?}");
    assert!(dom.contains("baseline 10"));
    // Interactive: a latency CDF for each bench (Audio, Video), free and pinned (under Ring),
    // and the deadlines bars.
    let cdfs = plots(&dom, "interactive-latency");
    assert_eq!(cdfs.len(), 4, "{cdfs:?}");
    assert!(dom.contains("result 1, pinned: Audio wake-up latency"));
    assert!(cdfs.iter().all(|&n| n >= 4), "{cdfs:?}");
    // Four free pairs and two pinned (Audio and Video under Ring).
    assert_eq!(plots(&dom, "interactive-deadlines"), vec![6]);
    // Sched: µs/round against threads, two points free and one pinned, a line each. Noise:
    // the histogram.
    assert_eq!(plots(&dom, "sched"), vec![3]);
    assert!(dom.contains("result 1, pinned"));
    let noise = plots(&dom, "noise");
    assert_eq!(noise.len(), 1);
    assert!(noise[0] >= 1);
    // Wakeup (the run's fixed-rate part): the wakeup and request latency CDFs and the rate.
    let wakeup = plots(&dom, "wakeup");
    assert_eq!(wakeup.len(), 3, "{wakeup:?}");
    assert!(wakeup.iter().all(|&n| n >= 1), "{wakeup:?}");
    // The marks are really in the DOM, as many as each plot says.
    let marks = dom.matches("class=\"point\"").count() + dom.matches("class=\"bar\"").count();
    let said: usize = [
        "index",
        "interactive-latency",
        "interactive-deadlines",
        "sched",
        "noise",
        "wakeup",
    ]
    .iter()
    .flat_map(|k| plots(&dom, k))
    .sum();
    assert_eq!(marks, said);
    // Units on the axes, and the comparison table of the two results.
    for label in [
        "latency (ms, log scale)",
        "us per round",
        "index value (baseline = 10)",
        "deadlines met (%)",
    ] {
        assert!(dom.contains(label), "{label}");
    }
    assert!(dom.contains("result 1 → result 2"));
    assert!(dom.contains("Welch"));

    // The request detector works: a page that loads an image from elsewhere is caught.
    let control = sb.dir.path().join("control.html");
    std::fs::write(
        &control,
        "<html><body><img src=\"http://hostbench-test.invalid/x.png\"></body></html>",
    )
    .unwrap();
    let (_, requests) = render(&control, &sb.dir.path().join("chromium2"));
    assert!(
        requests
            .iter()
            .any(|r| r.contains("hostbench-test.invalid")),
        "{requests:?}"
    );
}

/// Multiplies every index pass's system index of the result `r` by `scale`.
fn scale_index(r: &mut serde_json::Value, scale: f64) {
    for s in r["suites"].as_array_mut().unwrap() {
        if s["suite"] != "index" {
            continue;
        }
        for p in s["passes"].as_array_mut().unwrap() {
            if let Some(x) = p["system_index"].as_f64() {
                p["system_index"] = (x * scale).into();
            }
        }
    }
}

/// Four hosts from the smoke fixtures, the last with its index 40% down (a sick host); two
/// tagged kernel=A and two kernel=B. Stored in the sandbox's store.
fn store_fleet(sb: &Sandbox) {
    let fixture = |name: &str| -> serde_json::Value {
        let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    let hosts = [
        ("n1", 1.0, "A", "smoke-a.json"),
        ("n2", 1.02, "A", "smoke-b.json"),
        ("n3", 0.98, "B", "smoke-a.json"),
        ("n4", 0.6, "B", "smoke-b.json"),
    ];
    for (i, (host, scale, kernel, file)) in hosts.into_iter().enumerate() {
        let mut r = fixture(file);
        r["uuid"] = format!("00000000-0000-4000-8000-{i:012}").into();
        r["host_label"] = host.into();
        r["tags"] = serde_json::json!({"kernel": kernel, "fleet": "ci"});
        scale_index(&mut r, scale);
        let path = sb.dir.path().join(format!("{host}.json"));
        std::fs::write(&path, r.to_string()).unwrap();
        sb.cmd()
            .args(["results", "import"])
            .arg(&path)
            .assert()
            .success();
    }
}

/// `report --fleet` of the sandbox's store, written to fleet.html there: its path.
fn fleet_page(sb: &Sandbox) -> std::path::PathBuf {
    let page = sb.dir.path().join("fleet.html");
    sb.cmd()
        .args(["report", "--fleet", "-o"])
        .arg(&page)
        .assert()
        .success();
    page
}

/// The data-host of each table row, in the order of the DOM.
fn host_rows(dom: &str) -> Vec<String> {
    row_tags(dom)
        .into_iter()
        .map(|r| {
            let rest = &r[r.find("data-host=\"").unwrap() + "data-host=\"".len()..];
            rest[..rest.find('"').unwrap()].to_string()
        })
        .collect()
}

#[test]
fn the_fleet_report_has_a_row_per_host_its_plots_and_the_sick_host_marked() {
    if common::skip_without("the fleet report in a browser", &["chromium"]) {
        return;
    }
    let sb = Sandbox::new();
    store_fleet(&sb);
    let page = fleet_page(&sb);
    let (dom, requests) = render(&page, &sb.dir.path().join("chromium"));
    assert!(requests.is_empty(), "the page made requests: {requests:?}");
    assert!(dom.contains("hostbench fleet: 4 hosts"));
    assert_eq!(host_rows(&dom), ["n1", "n2", "n3", "n4"]);
    // n4's index figures are outside the range on the worse side, and said so, with a link
    // to its row.
    assert!(
        dom.contains(
            "Outside a range on the worse side (the host may be sick): 1 host: \
             <a class=\"row\" href=\"#h-3\">n4</a>."
        ),
        "{dom}"
    );
    let n4 = &dom[dom.find("<tr id=\"h-3\" data-host=\"n4\"").unwrap()..];
    let n4 = &n4[..n4.find("</tr>").unwrap()];
    assert_eq!(n4.matches("outside worse").count(), 2, "{n4}");
    for other in ["n1", "n2", "n3"] {
        let row = &dom[dom.find(&format!("data-host=\"{other}\"")).unwrap()..];
        let row = &row[..row.find("</tr>").unwrap()];
        assert!(!row.contains("outside worse"), "{row}");
    }
    // A strip of each headline figure across the four hosts, n4 red in the two index ones and
    // named beside its point; and a row per tag value (fleet=ci, kernel=A, kernel=B).
    assert_eq!(plots(&dom, "fleet-strip"), vec![4; 5]);
    assert_eq!(dom.matches("class=\"point worse\"").count(), 2, "{dom}");
    assert_eq!(dom.matches("class=\"name\"").count(), 2);
    assert_eq!(dom.matches("<tr class=\"tag\">").count(), 3);
    // Sortable: the script sorts by a column on opening with #sort=KEY, lowest first, or
    // highest first with -desc.
    let url = format!("file://{}", page.display());
    let (sorted, _) = render_url(
        &format!("{url}#sort=index_one"),
        &sb.dir.path().join("chromium2"),
    );
    assert_eq!(host_rows(&sorted), ["n4", "n3", "n1", "n2"]);
    assert!(sorted.contains("aria-sort=\"ascending\""));
    let (sorted, _) = render_url(
        &format!("{url}#sort=host-desc"),
        &sb.dir.path().join("chromium3"),
    );
    assert_eq!(host_rows(&sorted), ["n4", "n3", "n2", "n1"]);
    // Filters pick the hosts: kernel=A's two, as text.
    let text = sb
        .cmd()
        .args(["report", "--tag", "kernel=A", "--fleet", "--format", "text"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&text.get_output().stdout).into_owned();
    assert!(
        text.starts_with("Fleet: 2 hosts, of the 2 stored results"),
        "{text}"
    );
    assert!(
        text.contains("\nn1 ") && text.contains("\nn2 ") && !text.contains("\nn4 "),
        "{text}"
    );
}

/// The smoke fixture as `hosts` hosts, `node-0000`…: each host's index a little off the others
/// (±1.5%), every 53rd 40% down (sick), every 211th 50% up; tagged `rack=rN` (ten racks).
/// Imported in one command.
fn store_big_fleet(sb: &Sandbox, hosts: usize) {
    let path = format!("{}/tests/fixtures/smoke-a.json", env!("CARGO_MANIFEST_DIR"));
    let base: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let dir = sb.dir.path().join("fleet");
    std::fs::create_dir(&dir).unwrap();
    let mut files = Vec::new();
    for i in 0..hosts {
        let mut r = base.clone();
        r["uuid"] = format!("00000000-0000-4000-8000-{i:012}").into();
        r["host_label"] = format!("node-{i:04}").into();
        r["tags"] = serde_json::json!({ "rack": format!("r{}", i % 10) });
        let scale = match i {
            _ if i % 53 == 5 => 0.6,
            _ if i % 211 == 7 => 1.5,
            _ => 1.0 + 0.03 * (((i * 37) % 100) as f64 / 100.0 - 0.5),
        };
        scale_index(&mut r, scale);
        let file = dir.join(format!("{i}.json"));
        std::fs::write(&file, r.to_string()).unwrap();
        files.push(file);
    }
    sb.cmd()
        .args(["results", "import"])
        .args(&files)
        .assert()
        .success();
}

/// The opening tags of the table's rows, in the order of the DOM.
fn row_tags(dom: &str) -> Vec<&str> {
    dom.match_indices("<tr id=\"h-")
        .map(|(i, _)| &dom[i..i + dom[i..].find('>').unwrap()])
        .collect()
}

/// Instruments a copy of the page: after its own script has run, the page writes where the
/// table starts (px from the top) and when its parsing and script were done and when it had
/// loaded (ms since navigation began) into attributes of `<html>`.
fn instrumented(page: &Path, copy: &Path) {
    let html = std::fs::read_to_string(page).unwrap();
    let probe = "<script>(function(){var d=document.documentElement;\
d.setAttribute('data-table-top',Math.round(document.getElementById('fleet').getBoundingClientRect().top+window.scrollY));\
d.setAttribute('data-script-ms',Math.round(performance.now()));\
window.addEventListener('load',function(){d.setAttribute('data-load-ms',Math.round(performance.now()));});})();</script></body>";
    std::fs::write(copy, html.replacen("</body>", probe, 1)).unwrap();
}

fn html_attribute(dom: &str, name: &str) -> f64 {
    let tag = format!("{name}=\"");
    let rest = &dom[dom.find(&tag).unwrap_or_else(|| panic!("no {name}")) + tag.len()..];
    rest[..rest.find('"').unwrap()].parse().unwrap()
}

#[test]
fn the_fleet_page_for_a_thousand_hosts_is_compact_paged_filtered_and_linked() {
    if common::skip_without("the fleet page in a browser", &["chromium"]) {
        return;
    }
    const HOSTS: usize = 1000;
    const WINDOW_H: f64 = 800.0;
    let sb = Sandbox::new();
    store_big_fleet(&sb, HOSTS);
    let page = fleet_page(&sb);
    let probe = sb.dir.path().join("probe.html");
    instrumented(&page, &probe);
    let window = ["--window-size=1280,800"];
    let url = format!("file://{}", probe.display());
    let started = std::time::Instant::now();
    let (dom, requests) = render_with(&url, &sb.dir.path().join("c1"), &window);
    let page_s = started.elapsed().as_secs_f64();
    assert!(requests.is_empty(), "the page made requests: {requests:?}");
    // What opening it costs, beside what opening an empty page costs (Chromium's own start):
    // reported, not asserted (timings belong in the notes, not in tests).
    let empty = sb.dir.path().join("empty.html");
    std::fs::write(&empty, "<!DOCTYPE html><html><body></body></html>").unwrap();
    let started = std::time::Instant::now();
    render_with(
        &format!("file://{}", empty.display()),
        &sb.dir.path().join("c0"),
        &window,
    );
    let empty_s = started.elapsed().as_secs_f64();
    let table_top = html_attribute(&dom, "data-table-top");
    eprintln!(
        "fleet page of {HOSTS} hosts: {} bytes; Chromium: {page_s:.2} s for it, {empty_s:.2} s for \
         an empty page; in the page: script done at {} ms, loaded at {} ms; the table starts at \
         {table_top} px ({:.1} screens of {WINDOW_H} px)",
        std::fs::metadata(&page).unwrap().len(),
        html_attribute(&dom, "data-script-ms"),
        html_attribute(&dom, "data-load-ms"),
        table_top / WINDOW_H
    );
    // Everything before the table fits in three screens.
    assert!(
        table_top < 3.0 * WINDOW_H,
        "the table starts at {table_top} px"
    );
    // A strip per figure with every host in it, on an axis around the figure (not from 0).
    assert_eq!(plots(&dom, "fleet-strip"), vec![HOSTS; 5]);
    // The sick hosts — 0.6 × the index: every 53rd from node-0005 — named first in the
    // list and in the index strips, and linked to their rows.
    let sick: Vec<usize> = (0..HOSTS).filter(|i| i % 53 == 5).collect();
    assert!(dom.contains(&format!(
        "(the host may be sick): {} hosts: <a class=\"row\" href=\"#h-5\">node-0005</a>",
        sick.len()
    )));
    assert!(
        dom.contains(&format!("and {} more.", sick.len() - 12)),
        "{dom}"
    );
    assert_eq!(
        dom.matches("class=\"point worse\"").count(),
        2 * sick.len(),
        "both index strips mark every sick host"
    );
    assert_eq!(dom.matches("class=\"name\"").count(), 2 * 3);
    // The table is paged: fifty rows shown, all a thousand there.
    let rows = row_tags(&dom);
    assert_eq!(rows.len(), HOSTS);
    let shown: Vec<&&str> = rows.iter().filter(|r| !r.contains(" hidden")).collect();
    assert_eq!(shown.len(), 50);
    assert!(shown[0].contains("data-host=\"node-0000\""), "{}", shown[0]);
    assert!(dom.contains("hosts 1–50 of 1000"));

    // A link to a row shows the page that holds it.
    let (dom, _) = render_with(&format!("{url}#h-977"), &sb.dir.path().join("c2"), &window);
    let shown: Vec<&str> = row_tags(&dom)
        .into_iter()
        .filter(|r| !r.contains(" hidden"))
        .collect();
    assert_eq!(shown.len(), 50);
    assert!(shown.iter().any(|r| r.contains("data-host=\"node-0977\"")));
    assert!(dom.contains("hosts 951–1000 of 1000"), "{dom}");

    // Filtered by a tag, sorted and paged from the address: rack r3's hundred hosts, the second
    // page of them by the one-copy index, lowest first; the other hosts' points dimmed.
    let (dom, _) = render_with(
        &format!("{url}#tag=rack=r3&sort=index_one&page=2"),
        &sb.dir.path().join("c3"),
        &window,
    );
    assert!(dom.contains("hosts 51–100 of 100"), "{dom}");
    let rows = row_tags(&dom);
    let shown: Vec<usize> = rows
        .iter()
        .filter(|r| !r.contains(" hidden"))
        .map(|r| {
            let h = &r[r.find("data-host=\"node-").unwrap() + 16..];
            h[..4].parse().unwrap()
        })
        .collect();
    assert_eq!(shown.len(), 50);
    assert!(shown.iter().all(|i| i % 10 == 3), "{shown:?}");
    assert_eq!(
        dom.matches("<a class=\"off\"").count() + dom.matches("class=\"off\" ").count(),
        0,
        "sanity: dimmed points carry the class after their link"
    );
    let dimmed = dom.matches(" class=\"off\"").count();
    assert_eq!(
        dimmed,
        5 * (HOSTS - 100),
        "every other rack's points dimmed"
    );
}

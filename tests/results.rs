//! `hostbench results`: what a run stored can be listed and shown again.

mod common;

use common::{noise, Sandbox};

#[test]
fn list_and_show_find_what_was_stored() {
    let sb = Sandbox::new();
    let empty = sb.cmd().args(["results", "list"]).output().unwrap();
    assert!(empty.status.success());
    assert!(String::from_utf8_lossy(&empty.stdout).contains("No stored results"));

    let first = sb.json(&["noise", "10", "3"]);
    sb.json(&["noise", "-m", "16", "10", "3"]);

    let out = sb.cmd().args(["results", "list"]).output().unwrap();
    let list = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<&str> = list.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{list}");
    assert!(rows[0].trim_start().starts_with("1 ") && rows[0].contains("noise"));
    assert!(rows[0].contains("10 ms CPU"), "{list}");
    assert!(rows[1].contains("mem 16 MB"), "{list}");
    assert!(!list.contains("[incomplete]"));

    let shown = sb.json(&["results", "show", "1"]);
    assert_eq!(noise(&shown)["runs"], noise(&first)["runs"]);
    assert_eq!(shown["started_at"], first["started_at"]);

    let text = sb.cmd().args(["results", "show", "2"]).output().unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("Host: "), "{text}");
    assert!(
        text.contains("memory read loop, 16 Mbyte working set"),
        "{text}"
    );
    assert!(text.contains("Percentiles:"));
}

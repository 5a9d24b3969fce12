//! Dependencies point down: a module of the library may use only modules of lower layers (and
//! its own). The layers, bottom first, are those of docs/architecture.md; this test reads every
//! `crate::…` path in src/ and fails on one that points up, naming the file and the line.

use std::fs;
use std::path::{Path, PathBuf};

/// Each top-level module of src/ and its layer: a module may use only modules of a lower
/// number, or its own.
const LAYERS: &[(&str, u32)] = &[
    ("error", 0),
    ("platform", 0),
    ("units", 0),
    ("stats", 1),
    ("calibration", 2),
    ("model", 3),
    ("loads", 4),
    ("workers", 4),
    ("store", 4),
    ("suites", 5),
    ("standard", 6),
    ("compare", 6),
    ("fleet", 6),
    ("render", 7),
    ("cli", 8),
];

fn layer(module: &str) -> Option<u32> {
    LAYERS.iter().find(|(m, _)| *m == module).map(|&(_, l)| l)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file of src/ belongs to (`src/model/noise/mod.rs` → `model`).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

/// Every top-level module named by a `crate::` path in `line` (`use crate::{a, b::c}` too).
fn used_modules(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // `crate::{a::x, b}`: the first name of each comma-separated item.
            let body = group.split('}').next().unwrap_or("");
            for item in body.split(',') {
                let name: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    out.push(name);
                }
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            out.push(name);
        }
    }
    out
}

/// (file:line, from, to) of every use of a higher layer; tests of a module (below
/// `#[cfg(test)]`) count too.
fn upward_edges(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut bad = Vec::new();
    for file in files {
        let from = module_of(src, &file);
        // main.rs and lib.rs sit above every layer.
        let Some(from_layer) = layer(&from) else {
            assert!(
                from == "main" || from == "lib",
                "{} is in no layer: add its module to LAYERS and to docs/architecture.md",
                file.display()
            );
            continue;
        };
        let text = fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            for to in used_modules(line) {
                let to_layer = layer(&to).unwrap_or_else(|| {
                    panic!("{}:{}: crate::{to} is in no layer", file.display(), n + 1)
                });
                if to != from && to_layer >= from_layer {
                    bad.push(format!(
                        "{}:{}: {from} (layer {from_layer}) uses {to} (layer {to_layer})",
                        file.display(),
                        n + 1
                    ));
                }
            }
        }
    }
    bad
}

#[test]
fn dependencies_point_down() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let bad = upward_edges(&src);
    assert!(
        bad.is_empty(),
        "{} use(s) of a module of the same or a higher layer:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn the_check_sees_an_upward_use() {
    // The reader itself: a model file that used a suite, and a grouped use, are caught.
    assert_eq!(
        used_modules("use crate::suites::noise::NoiseResult;"),
        ["suites"]
    );
    assert_eq!(
        used_modules("use crate::{model::RunResult, render};"),
        ["model", "render"]
    );
    assert_eq!(
        used_modules("let x = crate::platform::clock::monotonic_ns() + crate::stats::f();"),
        ["platform", "stats"]
    );
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    fs::create_dir_all(src.join("model")).unwrap();
    fs::write(
        src.join("model/mod.rs"),
        "use crate::suites::noise::NoiseResult;\n",
    )
    .unwrap();
    fs::write(src.join("stats.rs"), "// crate::cli in a comment is fine\n").unwrap();
    let bad = upward_edges(src);
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert!(
        bad[0].contains("model (layer 3) uses suites (layer 5)"),
        "{}",
        bad[0]
    );
}

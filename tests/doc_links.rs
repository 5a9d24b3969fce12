//! Every relative link in the README and the docs names a file or folder that exists, and every
//! `#anchor` into a Markdown file names one of its headings: the pages cannot point at nothing.

use std::path::{Path, PathBuf};

/// The Markdown files to check: README.md, CHANGELOG.md and everything under docs/.
fn pages(root: &Path) -> Vec<PathBuf> {
    let mut out = vec![root.join("README.md"), root.join("CHANGELOG.md")];
    let mut dirs = vec![root.join("docs")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    out
}

/// The targets of `[text](target)` links, outside code spans and blocks.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_block = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if in_block {
            continue;
        }
        // Code spans hold examples, not links.
        let plain: String = line.split('`').step_by(2).collect::<Vec<_>>().join("");
        let mut rest = plain.as_str();
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            let Some(end) = after.find(')') else { break };
            out.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    out
}

/// GitHub's anchor of a heading: lower case, spaces to hyphens, other punctuation dropped.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

fn anchors(text: &str) -> Vec<String> {
    let mut in_block = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
        } else if !in_block && line.starts_with('#') {
            out.push(anchor(line.trim_start_matches('#')));
        }
    }
    out
}

/// What is wrong with one link of `page`, if anything.
fn problem(page: &Path, target: &str) -> Option<String> {
    if target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    let (file, fragment) = match target.split_once('#') {
        Some((f, a)) => (f, Some(a)),
        None => (target, None),
    };
    let path = if file.is_empty() {
        page.to_path_buf()
    } else {
        page.parent().unwrap().join(file)
    };
    if !path.exists() {
        return Some(format!("{}: {target}: no such file", page.display()));
    }
    let fragment = fragment?;
    if path.extension().is_some_and(|e| e == "md") {
        let text = std::fs::read_to_string(&path).unwrap();
        if !anchors(&text).iter().any(|a| a == fragment) {
            return Some(format!("{}: {target}: no such heading", page.display()));
        }
    }
    None
}

#[test]
fn every_relative_link_in_the_docs_leads_somewhere() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut problems = Vec::new();
    let mut seen = 0;
    for page in pages(root) {
        let text = std::fs::read_to_string(&page).unwrap();
        for target in links(&text) {
            seen += 1;
            problems.extend(problem(&page, &target));
        }
    }
    assert!(seen > 20, "only {seen} links found: the reader is broken");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_broken_link_and_a_missing_heading_are_seen() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = root.join("README.md");
    assert!(problem(&readme, "docs/fleet.md").is_none());
    assert!(problem(&readme, "docs/no-such-page.md").is_some());
    assert!(problem(&root.join("docs/README.md"), "history.md#the-nightly-gate").is_none());
    assert!(problem(&root.join("docs/README.md"), "history.md#no-such-heading").is_some());
    assert_eq!(
        anchor(" Why a sample was late: `--explain`"),
        "why-a-sample-was-late---explain"
    );
    assert_eq!(links("see [a](b.md) and `[c](d.md)`"), ["b.md"]);
}

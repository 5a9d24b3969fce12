//! The pages a user reads (README.md, CHANGELOG.md, docs/ but its evidence/) keep to the house
//! style: no sentence over 40 words, no commit hashes and no "this VM". Measurements with their
//! machine and commit belong on the evidence pages, which this test leaves alone.

use std::path::{Path, PathBuf};

const MAX_WORDS: usize = 40;

/// The user pages: README.md, CHANGELOG.md and docs/*.md (not docs/evidence/).
fn user_pages(root: &Path) -> Vec<PathBuf> {
    let mut out = vec![root.join("README.md"), root.join("CHANGELOG.md")];
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// The page's running text as paragraphs: code blocks, tables, headings and indented code left
/// out; a list item starts a paragraph of its own.
fn paragraphs(text: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut block = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            block = !block;
            out.push(String::new());
            continue;
        }
        let skipped = ["|", "#", "    "].iter().any(|p| line.starts_with(p));
        if block || skipped || line.trim().is_empty() {
            out.push(String::new());
            continue;
        }
        if is_list_item(line) {
            out.push(String::new());
        }
        let last = out.last_mut().unwrap();
        last.push(' ');
        last.push_str(line.trim());
    }
    out.retain(|p| !p.trim().is_empty());
    out
}

fn is_list_item(line: &str) -> bool {
    let t = line.trim_start();
    let digits = t.chars().take_while(|c| c.is_ascii_digit()).count();
    t.starts_with("- ") || t.starts_with("* ") || (digits > 0 && t[digits..].starts_with(". "))
}

/// A paragraph's sentences: it is cut after `.`, `!` or `?` where white space follows and the
/// next word starts with a capital, a backtick, a bracket or an asterisk.
fn sentences(paragraph: &str) -> Vec<String> {
    let chars: Vec<char> = paragraph.chars().collect();
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..chars.len() {
        let ends = matches!(chars[i - 1], '.' | '!' | '?') && chars[i].is_whitespace();
        let next = chars[i..].iter().find(|c| !c.is_whitespace());
        let opens = next.is_some_and(|c| c.is_ascii_uppercase() || "`([*".contains(*c));
        if ends && opens {
            out.push(chars[start..i].iter().collect::<String>());
            start = i;
        }
    }
    out.push(chars[start..].iter().collect());
    out
}

/// Words of 7 to 12 hexadecimal digits holding a letter and a digit: a commit's short hash.
fn commit_hashes(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| (7..=12).contains(&w.len()))
        .filter(|w| {
            w.chars()
                .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
        })
        .filter(|w| w.chars().any(|c| c.is_ascii_digit()) && w.chars().any(|c| c.is_alphabetic()))
        .map(str::to_string)
        .collect()
}

#[test]
fn the_sentence_splitter_cuts_where_a_reader_would() {
    let p = "One short sentence. `Code` starts one. Then e.g. this does not cut. (A bracket) does.";
    let s = sentences(p);
    assert_eq!(s.len(), 4, "{s:?}");
    assert!(s[2].contains("e.g. this does not cut."));
    let page = "A paragraph\nwrapped.\n\n```\nA code. Block.\n```\n| a | table. Row. |\n- an item\n- another";
    assert_eq!(paragraphs(page).len(), 3, "{:?}", paragraphs(page));
    assert_eq!(
        commit_hashes("at commit b3cc48a, not 1234567 or deadbeef"),
        ["b3cc48a"]
    );
}

#[test]
fn user_pages_keep_sentences_short_and_no_commit_or_vm() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut problems = Vec::new();
    for page in user_pages(root) {
        let text = std::fs::read_to_string(&page).unwrap();
        let name = page.strip_prefix(root).unwrap().display().to_string();
        for p in paragraphs(&text) {
            for s in sentences(&p) {
                let words = s.split_whitespace().count();
                if words > MAX_WORDS {
                    problems.push(format!("{name}: a sentence of {words} words: {}", s.trim()));
                }
            }
        }
        for h in commit_hashes(&text) {
            problems.push(format!(
                "{name}: a commit hash {h} (evidence pages keep those)"
            ));
        }
        if text.contains("this VM") || text.contains("this 2-CPU VM") {
            problems.push(format!(
                "{name}: \"this VM\" (name the machine kind, on an evidence page)"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

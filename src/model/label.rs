//! The words a user gives a result — `--host-label`, `--tag KEY=VALUE` — and any text a store
//! or a result file may hold, made safe to keep and to show. What enters is checked where it
//! enters (options, import, push, pull): bounded in length and free of control characters, so
//! a label can neither break a table nor drive a terminal. What an older store already holds
//! goes through `printable` before it is shown.

use std::fmt::Write;

/// The longest `--host-label`, in characters: a fleet's inventory names are far shorter.
pub const MAX_HOST_LABEL: usize = 128;
/// The longest tag key and tag value, in characters.
pub const MAX_TAG_KEY: usize = 64;
pub const MAX_TAG_VALUE: usize = 256;
/// The most tags a result may carry.
pub const MAX_TAGS: usize = 64;

/// Why `text`, given as `what`, cannot be a label of at most `max` characters: empty, too
/// long, or holding a control character (an escape sequence, a carriage return, a newline).
pub fn check(what: &str, text: &str, max: usize) -> Result<(), String> {
    let len = text.chars().count();
    if len > max {
        return Err(format!(
            "{what} is {len} characters long; at most {max} are allowed"
        ));
    }
    if let Some(c) = text.chars().find(|c| c.is_control()) {
        return Err(format!(
            "{what} {} holds the control character {c:?}; labels are plain text",
            printable(text, 40)
        ));
    }
    Ok(())
}

/// The checks of a tag: its key (not empty, no space or `=`) and its value.
pub fn check_tag(key: &str, value: &str) -> Result<(), String> {
    if key.is_empty() || key.contains(|c: char| c.is_whitespace() || c == '=') {
        return Err(format!(
            "the tag key {} must be a word (no space, no '=')",
            printable(key, 40)
        ));
    }
    check("the tag key", key, MAX_TAG_KEY)?;
    check(&format!("the value of tag {key}"), value, MAX_TAG_VALUE)
}

/// A result's host label and tags, as a result file or another store gives them.
pub fn check_result(host_label: Option<&str>, tags: &[(&str, &str)]) -> Result<(), String> {
    if let Some(l) = host_label {
        check("the host label", l, MAX_HOST_LABEL)?;
    }
    if tags.len() > MAX_TAGS {
        return Err(format!(
            "it has {} tags; at most {MAX_TAGS} are allowed",
            tags.len()
        ));
    }
    tags.iter().try_for_each(|(k, v)| check_tag(k, v))
}

/// `text` as it may be shown on a terminal or in a table cell: at most `max` characters (cut
/// with `…`), every control character written as an escape (`\e`, `\r`, `\n`, `\u{9b}`), so
/// stored text can neither move the cursor, retitle a window, nor split a row.
pub fn printable(text: &str, max: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max * 4));
    for (shown, c) in text.chars().enumerate() {
        if shown == max {
            out.push('…');
            break;
        }
        match c {
            '\u{1b}' => out.push_str("\\e"),
            '\r' => out.push_str("\\r"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_escapes_controls_and_cuts_long_text() {
        assert_eq!(printable("rack12", 10), "rack12");
        assert_eq!(
            printable("\u{1b}]0;owned\u{7}x\r\ny\u{9b}", 40),
            "\\e]0;owned\\u{7}x\\r\\ny\\u{9b}"
        );
        let long = "a".repeat(70_000);
        let shown = printable(&long, 64);
        assert_eq!(shown.chars().count(), 65);
        assert!(shown.ends_with('…'));
        // Nothing shown holds a control character.
        assert!(!printable("\u{0}\u{1b}[31m", 9).contains(|c: char| c.is_control()));
    }

    #[test]
    fn labels_are_bounded_and_plain() {
        assert!(check("the host label", "node-a.rack12", MAX_HOST_LABEL).is_ok());
        let err = check("the host label", &"x".repeat(65_536), MAX_HOST_LABEL).unwrap_err();
        assert!(err.contains("65536 characters long; at most 128"), "{err}");
        let err = check("the host label", "a\u{1b}[31mb", MAX_HOST_LABEL).unwrap_err();
        assert!(err.contains("control character '\\u{1b}'"), "{err}");
        assert!(err.contains("a\\e[31mb"), "{err}");
        assert!(check_tag("kernel", "6.18-rc3").is_ok());
        assert!(check_tag("ker nel", "x").is_err());
        assert!(check_tag("kernel", "a\nb").is_err());
        assert!(check_tag("kernel", &"v".repeat(MAX_TAG_VALUE + 1)).is_err());
        let many: Vec<(String, String)> = (0..=MAX_TAGS)
            .map(|i| (format!("k{i}"), "v".into()))
            .collect();
        let refs: Vec<(&str, &str)> = many.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert!(check_result(None, &refs)
            .unwrap_err()
            .contains("at most 64"));
    }
}

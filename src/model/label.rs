//! The words a user gives a result — `--host-label`, `--tag KEY=VALUE` — made safe to keep and
//! to show. What enters is checked where it enters (options, import, push, pull): bounded in
//! length, not empty or blank, free of every character `text::is_hidden` names (controls,
//! bidirectional and zero-width characters, line separators), so a label can neither break a
//! table, drive a terminal, nor pass for another; and kept in Unicode's NFKC form, so two
//! labels that look the same are the same (`ｎｏｄｅ１` is `node1`). What an older store
//! already holds is shown through `crate::text`.

use unicode_normalization::{is_nfkc, UnicodeNormalization};

use crate::text::is_hidden;

/// The longest `--host-label`, in characters: a fleet's inventory names are far shorter.
pub const MAX_HOST_LABEL: usize = 128;
/// The longest tag key and tag value, in characters.
pub const MAX_TAG_KEY: usize = 64;
pub const MAX_TAG_VALUE: usize = 256;
/// The most tags a result may carry.
pub const MAX_TAGS: usize = 64;

/// A label as it is kept: in NFKC form.
pub fn normalized(text: &str) -> String {
    text.nfkc().collect()
}

/// What a label is taken to name when labels are grouped or compared: its NFKC form without
/// hidden characters, so a label an older store holds with a zero-width space or in
/// full-width letters is the same host as the plain one (and two logins storing under the
/// two are seen as two logins of one host).
pub fn identity(text: &str) -> String {
    text.nfkc().filter(|&c| !is_hidden(c)).collect()
}

/// Why `text`, given as `what`, cannot be a label of at most `max` characters: empty or blank,
/// too long, holding a hidden character (a control, an escape sequence, a carriage return, a
/// newline, a bidirectional or zero-width character), or not in NFKC form (a result from
/// elsewhere; what a user types is put in that form first, [`normalized`]).
pub fn check(what: &str, text: &str, max: usize) -> Result<(), String> {
    if text.trim().is_empty() {
        return Err(format!(
            "{what} is {}; a label must say something",
            if text.is_empty() { "empty" } else { "blank" }
        ));
    }
    let len = text.chars().count();
    if len > max {
        return Err(format!(
            "{what} is {len} characters long; at most {max} are allowed"
        ));
    }
    if let Some(c) = text.chars().find(|&c| is_hidden(c)) {
        return Err(format!(
            "{what} {} holds the hidden character U+{:04X}; labels are plain text",
            printable(text, 40),
            c as u32
        ));
    }
    if !is_nfkc(text) {
        return Err(format!(
            "{what} {} is not in Unicode's NFKC form ({}); labels are kept in that form",
            printable(text, 40),
            printable(&normalized(text), 40)
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
/// with `…`), every hidden character written as an escape (`\e`, `\r`, `\n`, `\u{9b}`,
/// `\u{202e}`), so text that is not held as a `Text` (an argument an error quotes) can neither
/// move the cursor, retitle a window, reorder a line nor split a row. The same rule as
/// `Text`'s display.
pub fn printable(text: &str, max: usize) -> String {
    crate::text::escaped(text, max)
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
        assert!(err.contains("hidden character U+001B"), "{err}");
        assert!(err.contains("a\\e[31mb"), "{err}");
        // Nothing, blanks, a zero-width space, a right-to-left override, a line separator.
        for bad in ["", "  ", "node1\u{200b}", "\u{202e}1edon", "a\u{2028}b"] {
            assert!(
                check("the host label", bad, MAX_HOST_LABEL).is_err(),
                "{bad:?}"
            );
        }
        // Another form of the same letters: refused as given, kept in NFKC form when typed.
        let err = check("the host label", "ｎｏｄｅ１", MAX_HOST_LABEL).unwrap_err();
        assert!(err.contains("NFKC form (node1)"), "{err}");
        assert_eq!(normalized("ｎｏｄｅ１"), "node1");
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

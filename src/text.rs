//! Text that came from outside hostbench's own code (a result file, a store, the host, the
//! command line), held as [`Text`], which can be shown only escaped. A forged result or another
//! host's row may hold escape sequences, line breaks, bidirectional overrides or zero-width
//! characters; `Display` writes every one of them visibly.

use std::fmt::{self, Write};

use serde::{Deserialize, Serialize};

/// A string from outside, shown only escaped. Serialized as the plain string, so stored
/// results and JSON keep their shape.
///
/// `ESC ]0;…` retitles a window and `ESC [2J` clears the screen; a carriage return or a
/// newline splits a table row; a right-to-left override makes `exe.txt` read as `txt.exe`; a
/// zero-width character makes two labels look the same. There is no way from a `Text` to a
/// `&str` but [`Text::raw`], for what is not display (matching, storing, hashing): a renderer
/// that prints a stored string does so escaped unless it asks for the raw one by name. (No
/// `Deref`, `AsRef<str>` or `Borrow<str>` either: `[Text]::join` would otherwise build the raw
/// string unasked.)
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Text(String);

impl Text {
    pub fn new(s: impl Into<String>) -> Text {
        Text(s.into())
    }

    /// The string as it is, unescaped: for comparing, storing and hashing, never for showing.
    pub fn raw(&self) -> &str {
        &self.0
    }

    pub fn into_raw(self) -> String {
        self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The text cut to at most `max` characters (with `…`), still a `Text`: for a view that
    /// must stay bounded however long what a store holds is (a label of 65,536 characters).
    pub fn truncated(&self, max: usize) -> Text {
        match self.0.char_indices().nth(max) {
            Some((at, _)) => Text(format!("{}…", &self.0[..at])),
            None => self.clone(),
        }
    }

    /// Shown escaped and cut to at most `max` characters (with `…`), for a table cell or a
    /// line that must stay short.
    pub fn cut(&self, max: usize) -> Cut<'_> {
        Cut(&self.0, max)
    }
}

/// Whether `c` must not reach a terminal or a cell as itself: a control character (C0, DEL,
/// C1), a bidirectional control, a zero-width or other format character (Unicode's Cf), or a
/// line or paragraph separator.
pub fn is_hidden(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') || is_format(c)
}

/// Unicode's general category Cf (format): bidirectional marks, embeddings, overrides and
/// isolates, zero-width spaces and joiners, the byte order mark, soft hyphen, invisible
/// operators, tags.
fn is_format(c: char) -> bool {
    use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};
    c.general_category() == GeneralCategory::Format
}

/// Writes `text` escaped: `\e`, `\r`, `\n`, `\t` for the usual controls, `\u{…}` for every
/// other hidden character; at most `max` characters of it, then `…`. What it writes holds no
/// hidden character, so escaping twice (a message that quotes an escaped label) changes
/// nothing more.
fn write_escaped(f: &mut impl Write, text: &str, max: usize) -> fmt::Result {
    for (shown, c) in text.chars().enumerate() {
        if shown == max {
            return f.write_char('…');
        }
        match c {
            '\u{1b}' => f.write_str("\\e")?,
            '\r' => f.write_str("\\r")?,
            '\n' => f.write_str("\\n")?,
            '\t' => f.write_str("\\t")?,
            c if is_hidden(c) => write!(f, "\\u{{{:x}}}", c as u32)?,
            c => f.write_char(c)?,
        }
    }
    Ok(())
}

/// `text` escaped as [`Text`] shows it, cut to `max` characters: for text that is not held as
/// a `Text` (an argument quoted in an error).
pub fn escaped(text: &str, max: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max.saturating_mul(4)));
    let _ = write_escaped(&mut out, text, max);
    out
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut escaped = String::with_capacity(self.0.len());
        write_escaped(&mut escaped, &self.0, usize::MAX)?;
        f.pad(&escaped)
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

/// A [`Text`] shown escaped and cut (see [`Text::cut`]).
pub struct Cut<'a>(&'a str, usize);

impl fmt::Display for Cut<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&escaped(self.0, self.1))
    }
}

/// An optional text shown escaped, or `none` (a word of hostbench's own) where there is none.
pub fn or<'a>(text: Option<&'a Text>, none: &'a str) -> Or<'a> {
    Or(text, none)
}

/// See [`or`].
pub struct Or<'a>(Option<&'a Text>, &'a str);

impl fmt::Display for Or<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(t) => fmt::Display::fmt(t, f),
            None => f.pad(self.1),
        }
    }
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        Text(s)
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Text {
        Text(s.to_string())
    }
}

impl From<&String> for Text {
    fn from(s: &String) -> Text {
        Text(s.clone())
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl PartialEq<String> for Text {
    fn eq(&self, other: &String) -> bool {
        &self.0 == other
    }
}

impl PartialEq<Text> for str {
    fn eq(&self, other: &Text) -> bool {
        self == other.0
    }
}

impl PartialEq<Text> for &str {
    fn eq(&self, other: &Text) -> bool {
        *self == other.0
    }
}

// ---- Secrets: a password in a URL is never kept or shown. ----

/// `text` (an error or other running text that may quote a URL) with every password in it
/// replaced by `***`. Nothing hostbench stores or prints keeps a password
/// (`RunResult::command_line`, messages). A URL is read as the PostgreSQL client reads it, so
/// that whatever the password holds it is found: its credentials run from `://` to the first
/// `@` after it (a password may hold `/`, `?`, `#` or spaces), and every query key is
/// percent-decoded before it is judged (`pass%77ord=` is `password=`); a key that names a
/// password (`password`, `sslpassword`, any spelling in any case) has its value replaced. In
/// running text a URL's query ends at a space; see [`redact_argument`] for one argument. Any
/// `password=VALUE` outside a URL (a libpq connection string) is replaced too.
pub fn redact(text: &str) -> String {
    redact_in(text, false)
}

/// One command-line argument (`--db=postgres://…`, a URL) with every password replaced, as
/// [`redact`] does; the URL runs to the argument's end, so a password holding a space is
/// replaced whole.
pub fn redact_argument(argument: &str) -> String {
    redact_in(argument, true)
}

fn redact_in(text: &str, whole: bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (head, tail) = rest.split_at(at + 3);
        out.push_str(head);
        // The credentials, as the client takes them: everything up to the first '@'.
        let mut url = tail;
        if let Some(end) = tail.find('@') {
            if let Some(colon) = tail[..end].find(':') {
                out.push_str(&tail[..colon]);
                out.push_str(":***");
                url = &tail[end..];
            }
        }
        let end = if whole {
            url.len()
        } else {
            url.find(char::is_whitespace).unwrap_or(url.len())
        };
        out.push_str(&redact_query(&url[..end]));
        rest = &url[end..];
    }
    out.push_str(rest);
    redact_pairs(&out)
}

/// The rest of a URL after its credentials, with the value of every query parameter whose
/// percent-decoded key names a password replaced.
fn redact_query(url: &str) -> String {
    let Some(q) = url.find('?') else {
        return url.to_string();
    };
    let params = url[q + 1..]
        .split('&')
        .map(|p| match p.split_once('=') {
            Some((key, _)) if names_a_password(key) => format!("{key}=***"),
            _ => p.to_string(),
        })
        .collect::<Vec<_>>()
        .join("&");
    format!("{}?{params}", &url[..q])
}

/// Whether a URL's query key, percent-decoded and in any case, names a password.
fn names_a_password(key: &str) -> bool {
    let bytes = key.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(&h), Some(&l)) if hex(h).is_some() && hex(l).is_some() => {
                decoded.push((hex(h).unwrap_or(0) * 16 + hex(l).unwrap_or(0)) as u8);
                i += 3;
            }
            (b, _, _) => {
                decoded.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&decoded)
        .to_ascii_lowercase()
        .contains("password")
}

/// Every `password=VALUE` (any case, `sslpassword=` too) up to the next '&', space, quote or
/// end, its value replaced: a libpq connection string, or a query already judged.
fn redact_pairs(text: &str) -> String {
    let mut redacted = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.to_ascii_lowercase().find("password=") {
        let (head, tail) = rest.split_at(at + "password=".len());
        redacted.push_str(head);
        redacted.push_str("***");
        let end = tail.find(['&', ' ', '\'', '"']).unwrap_or(tail.len());
        rest = &tail[end..];
    }
    redacted.push_str(rest);
    redacted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_password_survives_redaction() {
        for (given, said) in [
            (
                "postgres://bench:s3cret@db.example/hb",
                "postgres://bench:***@db.example/hb",
            ),
            (
                "--db=postgresql://u:p%40ss@h:5432/d?sslmode=disable",
                "--db=postgresql://u:***@h:5432/d?sslmode=disable",
            ),
            (
                "postgresql:///hb?host=/run/postgresql&password=s3cret&user=x",
                "postgresql:///hb?host=/run/postgresql&password=***&user=x",
            ),
            (
                "host=db PASSWORD=s3cret user=x",
                "host=db PASSWORD=*** user=x",
            ),
            (
                "postgres://bench@db.example/hb",
                "postgres://bench@db.example/hb",
            ),
            ("/home/me/results.sqlite", "/home/me/results.sqlite"),
            (
                "a postgres://x:y@h/d and postgres://z:w@k/e",
                "a postgres://x:***@h/d and postgres://z:***@k/e",
            ),
            // A password holding what ends a URL's user part elsewhere: the client reads the
            // credentials to the first '@', and so does redaction.
            (
                "--db=postgres://bench:s3/c?r#et@db.example/hb",
                "--db=postgres://bench:***@db.example/hb",
            ),
            // A key spelled with a percent escape, or in capitals, is still the password.
            (
                "postgresql://bench@h/hb?pass%77ord=s3cret&sslmode=disable",
                "postgresql://bench@h/hb?pass%77ord=***&sslmode=disable",
            ),
            (
                "postgresql://bench@h/hb?PASS%57ORD=s3cret",
                "postgresql://bench@h/hb?PASS%57ORD=***",
            ),
            (
                "postgresql://bench@h/hb?sslpassword=s3cret",
                "postgresql://bench@h/hb?sslpassword=***",
            ),
        ] {
            assert_eq!(redact(given), said, "{given}");
            assert!(!redact(given).contains("s3cret"));
        }
        // One argument is a URL to its end: a password with a space is replaced whole.
        assert_eq!(
            redact_argument("postgres://bench@h/hb?password=s3 cret"),
            "postgres://bench@h/hb?password=***"
        );
        assert_eq!(
            redact_argument("postgres://bench:s3 cret@h/hb"),
            "postgres://bench:***@h/hb"
        );
    }

    #[test]
    fn every_hidden_character_is_shown_escaped() {
        let t = Text::from(
            "a\u{1b}]0;owned\u{7}\r\n\t\u{9b}b\u{202e}txt.exe\u{200b}\u{2066}\u{feff}\u{2028}",
        );
        let shown = t.to_string();
        assert_eq!(
            shown,
            "a\\e]0;owned\\u{7}\\r\\n\\t\\u{9b}b\\u{202e}txt.exe\\u{200b}\\u{2066}\\u{feff}\\u{2028}"
        );
        assert!(!shown.chars().any(is_hidden));
        // Escaping what is escaped changes nothing.
        assert_eq!(escaped(&shown, usize::MAX), shown);
        // The raw string is kept whole for what is not display.
        assert_eq!(t.raw().chars().filter(|&c| c == '\u{202e}').count(), 1);
        // Plain text, accents and other scripts pass as they are.
        assert_eq!(
            Text::from("rack-12 café 東京").to_string(),
            "rack-12 café 東京"
        );
    }

    #[test]
    fn cut_shows_at_most_max_characters_escaped() {
        let t = Text::from("x".repeat(70_000));
        let shown = t.cut(64).to_string();
        assert_eq!(shown.chars().count(), 65);
        assert!(shown.ends_with('…'));
        assert_eq!(Text::from("a\u{1b}b").cut(2).to_string(), "a\\e…");
        // Truncated: the raw text cut, still shown escaped.
        let t = Text::from("\u{1b}".repeat(70_000)).truncated(3);
        assert_eq!(t.raw().chars().count(), 4);
        assert_eq!(t.to_string(), "\\e\\e\\e…");
        assert_eq!(Text::from("short").truncated(10), "short");
        // Padding works as for a str, on the escaped text.
        assert_eq!(format!("{:<6}|", Text::from("ab")), "ab    |");
    }

    #[test]
    fn serialized_as_the_plain_string() {
        let t = Text::from("k\u{1b}");
        let json = serde_json::to_string(&t).unwrap();
        assert_eq!(json, "\"k\\u001b\"");
        let back: Text = serde_json::from_str(&json).unwrap();
        assert_eq!(back, t);
    }
}

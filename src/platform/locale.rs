//! The language setting a test process runs under. UnixBench sets `LANG=en_US.utf8` for its
//! tests (since 5.1.1) and reports the character map and collation really in effect, since the
//! named locale may not be installed; text-handling tests (sort, grep, the shell) run at very
//! different speeds under ASCII and UTF-8.

use std::ffi::{CStr, CString};

/// UnixBench's `$language`.
pub const UNIXBENCH_LANG: &str = "en_US.utf8";

/// What a process started with `LANG=lang` (and this process's other locale variables) gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Language {
    pub lang: String,
    pub charmap: String,
    pub collate: String,
    /// The locale the character map comes from exists here (else the C library fell back to
    /// "C").
    pub installed: bool,
}

impl Language {
    /// As UnixBench's report line: `en_US.utf8 (charmap="UTF-8", collate="en_US.utf8")`, and
    /// what is missing.
    pub fn describe(&self) -> String {
        format!(
            "{} (charmap=\"{}\", collate=\"{}\"){}",
            self.lang,
            self.charmap,
            self.collate,
            if self.installed {
                ""
            } else {
                "; that locale is not installed here, so the C library uses \"C\""
            }
        )
    }
}

/// The locale a category gets under `LANG=lang`: LC_ALL, then the category's own variable,
/// then LANG, as the C library chooses.
fn chosen(category_var: &str, lang: &str) -> String {
    for var in ["LC_ALL", category_var] {
        if let Some(v) = std::env::var(var).ok().filter(|v| !v.is_empty()) {
            return v;
        }
    }
    lang.to_string()
}

/// The character map and collation a process started with `LANG=lang` runs under. Call it while
/// this process has no other thread that uses the locale (setlocale is process-wide); the
/// process's own locale is restored to "C".
pub fn language(lang: &str) -> Language {
    let ctype = chosen("LC_CTYPE", lang);
    let collate_name = chosen("LC_COLLATE", lang);
    let read = |p: *const libc::c_char| {
        if p.is_null() {
            None
        } else {
            // SAFETY: a NUL-terminated string owned by the C library.
            Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
        }
    };
    let c = |s: &str| CString::new(s).unwrap_or_else(|_| CString::new("C").expect("no NUL"));
    // SAFETY: setlocale and nl_langinfo with valid C strings; pointers read at once.
    unsafe {
        let installed = !libc::setlocale(libc::LC_CTYPE, c(&ctype).as_ptr()).is_null();
        let charmap = read(libc::nl_langinfo(libc::CODESET)).unwrap_or_else(|| "?".into());
        let collate_ok = !libc::setlocale(libc::LC_COLLATE, c(&collate_name).as_ptr()).is_null();
        let collate =
            read(libc::setlocale(libc::LC_COLLATE, std::ptr::null())).unwrap_or_else(|| "?".into());
        libc::setlocale(libc::LC_ALL, c"C".as_ptr());
        Language {
            lang: lang.to_string(),
            charmap,
            collate,
            installed: installed && collate_ok,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_c_locale_is_always_there_and_an_unknown_one_is_not() {
        if std::env::var_os("LC_ALL").is_some() {
            eprintln!("skipped: LC_ALL overrides LANG here");
            return;
        }
        let c = language("C");
        assert!(c.installed);
        assert_eq!(c.charmap, "ANSI_X3.4-1968");
        let none = language("xx_NOWHERE.utf8");
        assert!(!none.installed);
        assert!(
            none.describe().contains("not installed"),
            "{}",
            none.describe()
        );
        assert!(none.describe().starts_with("xx_NOWHERE.utf8 (charmap="));
    }
}

//! The input files of UnixBench's shell and grep tests, generated rather than copied. Each has
//! the size, line count and matching lines of the file it stands for, and text of the same kind.
//! A line is fixed text and one stretch of filler whose length is tuned to the exact byte count,
//! and the filler can never spell the searched word.

/// The numbers a generated file must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub bytes: usize,
    pub lines: usize,
    /// Lines that hold `needle`.
    pub matching: usize,
    pub needle: &'static str,
}

/// UnixBench's testdir/sort.src. The files, UnixBench's and here:
///
/// | file | UnixBench's | read by | generated here |
/// | --- | --- | --- | --- |
/// | sort.src | 8,546 bytes, 362 lines, 35 holding "the" ("then" among them; a Bourne shell script) | tst.sh: `sort`, `od`, `grep the` | shell-script lines (filler: a name) |
/// | large.txt | 708,495 bytes, 10,000 lines, 1,032 holding "gimp" (an strace log) | `grep -c gimp` | strace-log lines (filler: hexadecimal digits) |
pub const SORT_SRC: Shape = Shape {
    bytes: 8_546,
    lines: 362,
    matching: 35,
    needle: "the",
};

/// UnixBench's testdir/large.txt.
pub const LARGE_TXT: Shape = Shape {
    bytes: 708_495,
    lines: 10_000,
    matching: 1_032,
    needle: "gimp",
};

/// A line before tuning: `head`, `filler` characters of filler, `tail`.
struct Line {
    head: String,
    filler: usize,
    tail: String,
}

/// The longest and shortest filler a line may get while the file's size is tuned.
const FILLER: std::ops::RangeInclusive<usize> = 1..=48;

/// A small deterministic generator (an LCG): the same file on every host and every run.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, words: &[&'a str]) -> &'a str {
        words[self.below(words.len())]
    }
}

/// Which of `lines` lines hold the needle: `matching` of them, spread over the file.
fn matching_lines(shape: Shape) -> Vec<bool> {
    let mut holds = vec![false; shape.lines];
    for k in 0..shape.matching {
        holds[k * shape.lines / shape.matching + shape.lines / (2 * shape.matching)] = true;
    }
    holds
}

/// Tunes the lines' filler to make the file exactly `shape.bytes` long and writes it out, the
/// filler drawn from `alphabet` (which must not be able to spell the needle with the text
/// around it). None if the lines cannot reach that size within the filler's range.
fn fit(mut lines: Vec<Line>, shape: Shape, alphabet: &[u8]) -> Option<String> {
    let fixed: usize = lines.iter().map(|l| l.head.len() + l.tail.len() + 1).sum();
    let mut filler_total = shape.bytes.checked_sub(fixed)?;
    let n = lines.len();
    if filler_total < n * FILLER.start() || filler_total > n * FILLER.end() {
        return None;
    }
    // Keep each line's own filler length as drawn where the sum allows, and spread what is
    // left over or missing over the lines, a character at a time.
    let mut have: usize = lines.iter().map(|l| l.filler).sum();
    let mut i = 0;
    while have != filler_total {
        let l = &mut lines[i % n];
        if have < filler_total && l.filler < *FILLER.end() {
            l.filler += 1;
            have += 1;
        } else if have > filler_total && l.filler > *FILLER.start() {
            l.filler -= 1;
            have -= 1;
        }
        i += 1;
    }
    let mut out = String::with_capacity(shape.bytes);
    let mut state = 0usize;
    for l in &lines {
        out.push_str(&l.head);
        for _ in 0..l.filler {
            out.push(alphabet[state % alphabet.len()] as char);
            state = state.wrapping_mul(31).wrapping_add(7) % 9_973;
        }
        out.push_str(&l.tail);
        out.push('\n');
        filler_total -= l.filler;
    }
    debug_assert_eq!(filler_total, 0);
    Some(out)
}

/// sort.src: a Bourne shell script of UnixBench's size and lines, 35 of which hold "the" (in
/// comments and messages, as in a real script).
pub fn sort_src() -> String {
    const CMDS: &[&str] = &[
        "cd", "echo", "test", "export", "umask", "chmod", "mkdir", "rm -f", "cat", "sleep",
    ];
    const WORDS: &[&str] = &[
        "results",
        "log",
        "dir",
        "bin",
        "run",
        "files",
        "copy",
        "pass",
        "count",
        "iterations",
        "options",
        "value",
        "list",
        "unix",
        "index",
        "load",
        "shell",
        "system",
        "misc",
        "word",
    ];
    let mut rng = Lcg(1991);
    let holds = matching_lines(SORT_SRC);
    let lines: Vec<Line> = holds
        .iter()
        .map(|&the| {
            let (head, tail) = if the {
                // "then" holds "the" too, as in UnixBench's script.
                match rng.below(4) {
                    0 => (format!("# {} the ", rng.pick(WORDS)), String::new()),
                    1 => (
                        format!("echo \"{} for the ", rng.pick(WORDS)),
                        "\"".to_string(),
                    ),
                    2 => ("if [ -d $".to_string(), " ]; then".to_string()),
                    _ => ("# set the ".to_string(), format!(" {}", rng.pick(WORDS))),
                }
            } else {
                match rng.below(8) {
                    0 => (String::new(), "=".to_string() + rng.pick(WORDS)),
                    1 => (
                        format!("{} $", rng.pick(CMDS)),
                        "/".to_string() + rng.pick(WORDS),
                    ),
                    2 => ("[ -d $".to_string(), " ] || mkdir -p $dir".to_string()),
                    3 => ("\tfi # ".to_string(), String::new()),
                    4 => ("for ".to_string(), " in $list; do".to_string()),
                    5 => ("\tdone # ".to_string(), String::new()),
                    6 => (
                        format!("{}=${{", rng.pick(WORDS).to_uppercase()),
                        ":-.}".to_string(),
                    ),
                    _ => ("\tcase $".to_string(), " in".to_string()),
                }
            };
            Line {
                head,
                filler: 3 + rng.below(10),
                tail,
            }
        })
        .collect();
    // A name's letters without t, h or e: no "the" can form across the filler's edges.
    fit(lines, SORT_SRC, b"abcdfgiklmnopqrsuvwxyz").expect("sort.src's lines reach its size")
}

/// large.txt: an strace log of UnixBench's size and lines, 1,032 of which hold "gimp" (the
/// program being traced is named in some paths, as in UnixBench's file).
pub fn large_txt() -> String {
    const DIRS: &[&str] = &[
        "/usr/lib",
        "/lib",
        "/usr/share/locale",
        "/etc",
        "/usr/lib/x86_64",
        "/home/user/.cache",
    ];
    const LIBS: &[&str] = &[
        "libc.so.6",
        "libm.so.6",
        "libX11.so.6",
        "libglib-2.0.so.0",
        "libpng12.so.0",
        "libfontconfig.so.1",
        "libz.so.1",
        "libpthread.so.0",
    ];
    const CALLS: &[&str] = &["open", "stat64", "access", "lstat64"];
    let mut rng = Lcg(2007);
    let holds = matching_lines(LARGE_TXT);
    let lines: Vec<Line> = holds
        .iter()
        .map(|&gimp| {
            let path = if gimp {
                match rng.below(3) {
                    0 => format!("/usr/lib/gimp/2.0/modules/{}", rng.pick(LIBS)),
                    1 => format!("{}/libgimpwidgets-2.0.so.0", rng.pick(DIRS)),
                    _ => format!("/home/user/.gimp-2.4/{}", rng.pick(LIBS)),
                }
            } else {
                format!("{}/{}", rng.pick(DIRS), rng.pick(LIBS))
            };
            // A line that names the program traced holds its path; the others may be any call.
            let (head, tail) = match rng.below(if gimp { 3 } else { 6 }) {
                0 | 1 => (
                    format!("{}(\"{path}\", 0xbf", rng.pick(CALLS)),
                    ") = -1 ENOENT (No such file or directory)".to_string(),
                ),
                2 => (
                    format!("readlink(\"{path}\", 0xbf"),
                    ", 4096) = -1 EINVAL (Invalid argument)".to_string(),
                ),
                3 => (
                    "mmap2(NULL, 4096, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0xb7"
                        .to_string(),
                    String::new(),
                ),
                4 => (
                    format!("read({}, 0xbf", 3 + rng.below(5)),
                    ", 512) = 512".to_string(),
                ),
                _ => ("brk(0x".to_string(), ") = 0x8360000".to_string()),
            };
            Line {
                head,
                filler: 4 + rng.below(8),
                tail,
            }
        })
        .collect();
    // Hexadecimal digits: no g, i, m or p, so no "gimp" forms across the filler's edges.
    fit(lines, LARGE_TXT, b"0123456789abcdef").expect("large.txt's lines reach its size")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, shape: Shape) {
        assert_eq!(text.len(), shape.bytes);
        assert_eq!(text.lines().count(), shape.lines);
        assert!(text.ends_with('\n'));
        let matching = text.lines().filter(|l| l.contains(shape.needle)).count();
        assert_eq!(matching, shape.matching, "lines holding {:?}", shape.needle);
    }

    #[test]
    fn sort_src_has_unixbenchs_bytes_lines_and_matches() {
        let text = sort_src();
        check(&text, SORT_SRC);
        // Shell-script lines: assignments, tests, loops, comments.
        assert!(text.lines().filter(|l| l.starts_with('#')).count() > 10);
        assert!(text.contains("; then") && text.contains("; do"));
        assert_eq!(text, sort_src(), "the same file every time");
    }

    #[test]
    fn large_txt_has_unixbenchs_bytes_lines_and_matches() {
        let text = large_txt();
        check(&text, LARGE_TXT);
        assert!(text.lines().all(|l| l.contains('(') && l.contains(" = ")));
    }

    #[test]
    fn a_size_the_lines_cannot_reach_is_refused() {
        let line = || Line {
            head: "x".repeat(10),
            filler: 2,
            tail: String::new(),
        };
        let shape = Shape {
            bytes: 5,
            lines: 2,
            matching: 0,
            needle: "the",
        };
        assert!(fit(vec![line(), line()], shape, b"ab").is_none());
    }
}

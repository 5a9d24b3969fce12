//! docs/commands.md's synopsis of each command names every option the command's `--help`
//! lists, and no option the command does not have: the usage a user reads cannot drift from
//! the program.

use std::collections::BTreeSet;
use std::path::Path;

use assert_cmd::Command;

/// `hostbench ARGS --help`'s text.
fn help(args: &[&str]) -> String {
    let out = Command::cargo_bin("hostbench")
        .unwrap()
        .args(args)
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?} --help failed");
    String::from_utf8(out.stdout).unwrap()
}

/// The options a command's `--help` lists, (short, long) each, without -h/-V: under its
/// "Options:" heading (`own`), or under the headings of the option groups it shares with other
/// commands ("Store options:", "Selection options:" …).
fn help_options_under(args: &[&str], own: bool) -> Vec<(Option<String>, Option<String>)> {
    let text = help(args);
    let mut options = Vec::new();
    let mut heading = "";
    for line in text.lines() {
        if !line.starts_with(' ') && line.ends_with(':') {
            heading = line;
        }
        let wanted = if own {
            heading == "Options:"
        } else {
            heading.ends_with(" options:")
        };
        // Options are listed indented; the command's about text, wrapped at 100 columns, is
        // not (and may put "--host, --tag …" at the start of a line).
        if !wanted || !line.starts_with(' ') {
            continue;
        }
        // An option's line is indented by 2 (6 without a short name); a description's
        // continuation lies further in (and may start "-i), on standard error").
        let indent = line.len() - line.trim_start().len();
        if indent > 6 {
            continue;
        }
        let line = line.trim_start();
        // An option's line, not a value's ("- text: For a terminal").
        if !line.starts_with('-')
            || !line[1..].starts_with(|c: char| c == '-' || c.is_ascii_alphabetic())
        {
            continue;
        }
        // "-L, --load-threads <N>  …", "--file-size <MB>  …", "-c, --console-only  …"
        let head: Vec<&str> = line.split_whitespace().take(2).collect();
        let short = head
            .first()
            .filter(|t| !t.starts_with("--"))
            .map(|t| t.trim_end_matches(',').to_string());
        let long = head
            .iter()
            .find(|t| t.starts_with("--"))
            .map(|t| t.to_string());
        if matches!(long.as_deref(), Some("--help" | "--version")) {
            continue;
        }
        options.push((short, long));
    }
    options
}

/// A command's own options as its `--help` lists them.
fn help_options(args: &[&str]) -> Vec<(Option<String>, Option<String>)> {
    help_options_under(args, true)
}

/// docs/commands.md, where each command's synopsis is.
fn commands_doc() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/commands.md")).unwrap()
}

/// docs/commands.md's synopsis lines of `hostbench COMMAND [SUB]` (and their continuation lines) in
/// the code blocks of its section `### \`hostbench COMMAND\``, comments left out.
fn synopsis(command: &str, sub: Option<&str>) -> Vec<String> {
    let doc = commands_doc();
    let heading = format!("### `hostbench {command}");
    let start = doc
        .find(&heading)
        .unwrap_or_else(|| panic!("docs/commands.md has no section {heading}`"));
    let section = &doc[start..];
    let section = &section[..section[4..].find("\n### ").map_or(section.len(), |e| e + 4)];
    let shown = match sub {
        Some(sub) => format!("hostbench {command} {sub}"),
        None => format!("hostbench {command}"),
    };
    let mut lines = Vec::new();
    for (i, block) in section.split("```").enumerate() {
        if i % 2 == 0 {
            continue;
        }
        let mut in_synopsis = false;
        for line in block.lines() {
            if line.starts_with("hostbench ") {
                in_synopsis = line == shown
                    || line.starts_with(&format!("{shown} "))
                    || line.starts_with(&format!("{shown}\t"));
            } else if !line.starts_with(' ') {
                in_synopsis = false;
            }
            if in_synopsis {
                lines.push(line.split(" #").next().unwrap().to_string());
            }
        }
    }
    lines
}

/// Every option named in docs/commands.md's synopsis of `hostbench COMMAND [SUB]`.
fn doc_options(command: &str, sub: Option<&str>) -> BTreeSet<String> {
    let mut options = BTreeSet::new();
    for code in synopsis(command, sub) {
        for token in code.split(|c: char| c.is_whitespace() || "[]|(),".contains(c)) {
            let name: String = token
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '-')
                .collect();
            let bare = name.trim_start_matches('-');
            if name.starts_with('-') && bare.starts_with(|c: char| c.is_ascii_alphabetic()) {
                options.insert(name);
            }
        }
    }
    options
}

/// The values docs/commands.md's synopses of `hostbench COMMAND [SUB]` give `option`
/// (`--format text|json|csv`), all its synopses together.
fn doc_values(command: &str, sub: Option<&str>, option: &str) -> BTreeSet<String> {
    let mut values = BTreeSet::new();
    for code in synopsis(command, sub) {
        let mut tokens = code.split(|c: char| c.is_whitespace() || "[]".contains(c));
        while let Some(t) = tokens.next() {
            if t == option {
                let list = tokens.next().unwrap_or_default();
                values.extend(list.split('|').map(String::from));
            }
        }
    }
    values
}

/// The values `--help` lists under `option` (its "- text: For a terminal" lines).
fn help_values(args: &[&str], option: &str) -> BTreeSet<String> {
    let text = help(args);
    let mut values = BTreeSet::new();
    let mut under = false;
    for line in text.lines() {
        let line = line.trim_start();
        if let Some(value) = line.strip_prefix("- ") {
            if under {
                values.insert(value.split(':').next().unwrap().trim().to_string());
            }
        } else if line.starts_with('-') {
            under = line.split_whitespace().any(|t| t == option);
        }
    }
    values
}

/// The options docs/commands.md's synopsis (`documented`) of `shown` lacks, and those it names that the
/// command (whose `--help` gave `help`) does not have; the global options may be named anywhere.
fn drift(
    shown: &str,
    help: &[(Option<String>, Option<String>)],
    documented: &BTreeSet<String>,
    globals: &BTreeSet<String>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (short, long) in help {
        if ![short, long]
            .into_iter()
            .flatten()
            .any(|o| documented.contains(o))
        {
            let name = long.as_ref().or(short.as_ref()).unwrap();
            out.push(format!(
                "docs/commands.md's `hostbench {shown}` lacks {name}"
            ));
        }
    }
    for o in documented {
        let known = help
            .iter()
            .any(|(s, l)| s.as_ref() == Some(o) || l.as_ref() == Some(o));
        if !known && !globals.contains(o) {
            out.push(format!(
                "docs/commands.md's `hostbench {shown}` names {o}, which it does not have"
            ));
        }
    }
    out
}

fn check(args: &[&str], globals: &BTreeSet<String>) -> Vec<String> {
    drift(
        &args.join(" "),
        &help_options(args),
        &doc_options(args[0], args.get(1).copied()),
        globals,
    )
}

/// The options of the groups commands share (store, output, measuring, selection), short and
/// long, from every command's `--help`: docs/commands.md names them once, in its Usage table.
fn group_options() -> BTreeSet<String> {
    COMMANDS
        .iter()
        .map(|c| vec![*c])
        .chain(RESULTS_COMMANDS.iter().map(|s| vec!["results", *s]))
        .flat_map(|args| help_options_under(&args, false))
        .flat_map(|(s, l)| [s, l])
        .flatten()
        .collect()
}

/// The commands with a synopsis in docs/commands.md, and `results`' subcommands.
const COMMANDS: [&str; 9] = [
    "run",
    "compare",
    "report",
    "history",
    "noise",
    "interactive",
    "sched",
    "wakeup",
    "index",
];
const RESULTS_COMMANDS: [&str; 8] = [
    "list", "hosts", "show", "export", "import", "push", "pull", "delete",
];

#[test]
fn the_synopses_name_every_option_of_each_command_and_no_other() {
    let globals = group_options();
    let mut problems = Vec::new();
    for command in COMMANDS {
        problems.extend(check(&[command], &globals));
    }
    for sub in RESULTS_COMMANDS {
        problems.extend(check(&["results", sub], &globals));
    }
    // The shared options are told once, in the Usage section's table.
    let doc = commands_doc();
    let usage = &doc[doc.find("## Usage").unwrap()..doc.find("\n### ").unwrap()];
    for o in &globals {
        if !usage.contains(&format!("`{o}")) {
            problems.push(format!(
                "docs/commands.md's Usage table lacks the shared option {o}"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_check_sees_a_missing_and_an_unknown_option() {
    let globals = group_options();
    assert!(globals.contains("--db") && globals.contains("-q") && !globals.contains("-m"));
    // docs/commands.md's own synopses are read: interactive's names -l and --page-cache.
    let interactive = doc_options("interactive", None);
    assert!(interactive.contains("-l") && interactive.contains("--page-cache"));
    // noise's options against a synopsis that forgot -l and made up --bogus; -q is a group's.
    let noise = help_options(&["noise"]);
    let documented: BTreeSet<String> = ["-v", "-m", "--bogus", "-q"].map(String::from).into();
    let problems = drift("noise", &noise, &documented, &globals);
    assert_eq!(
        problems,
        [
            "docs/commands.md's `hostbench noise` lacks --loops-per-ms",
            "docs/commands.md's `hostbench noise` names --bogus, which it does not have",
        ],
        "{noise:?}"
    );
}

#[test]
fn the_synopses_give_each_command_the_format_values_its_help_lists() {
    for args in [
        &["compare"][..],
        &["report"],
        &["history"],
        &["results", "show"],
        &["results", "export"],
    ] {
        let help = help_values(args, "--format");
        assert!(
            help.contains("text") && help.contains("json"),
            "{args:?}: {help:?}"
        );
        assert_eq!(
            doc_values(args[0], args.get(1).copied(), "--format"),
            help,
            "the docs/commands.md's `hostbench {}` --format values and its --help's",
            args.join(" ")
        );
    }
    // compare cannot show html, and says so by not offering it.
    assert!(!help_values(&["compare"], "--format").contains("html"));
}

/// Every command's `--help` fits a terminal of 100 columns: clap wraps each description at
/// 100 (`max_term_width`), also when standard output is not a terminal.
#[test]
fn every_help_fits_100_columns() {
    let mut commands: Vec<Vec<&str>> = COMMANDS
        .iter()
        .chain(&["completions", "man"])
        .map(|c| vec![*c])
        .collect();
    commands.push(Vec::new());
    for sub in RESULTS_COMMANDS {
        commands.push(vec!["results", sub]);
    }
    let mut long = Vec::new();
    for args in &commands {
        for line in help(args).lines() {
            if line.chars().count() > 100 {
                long.push(format!("{args:?}: {line}"));
            }
        }
    }
    assert!(
        long.is_empty(),
        "{} lines over 100 columns:\n{}",
        long.len(),
        long.join("\n")
    );
}

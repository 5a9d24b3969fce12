//! docs/reference.md is every command's `--help` as Markdown, written from the parser's own
//! definitions (clap-markdown), so the reference cannot drift from the program. The test fails
//! when the file differs; `scripts/gen-reference.sh` writes it anew.

use std::path::Path;

use clap::CommandFactory;
use hostbench::cli::Cli;

/// The reference as the parser defines it today.
fn generated() -> String {
    let options = clap_markdown::MarkdownOptions::new()
        .title("Command reference".to_string())
        .show_footer(false);
    let body = clap_markdown::help_markdown_command_custom(&Cli::command(), &options);
    // A note for the reader, then the generated text as it is.
    let note = "Every command and option, generated from hostbench's parser by \
                `scripts/gen-reference.sh`: do not edit by hand. What each command is for, \
                with examples: [commands.md](commands.md).\n\n";
    match body.split_once('\n') {
        Some((title, rest)) => format!("{title}\n\n{note}{}", rest.trim_start()),
        None => body,
    }
}

#[test]
fn the_reference_is_what_the_parser_defines() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/reference.md");
    let want = generated();
    if std::env::var_os("HOSTBENCH_WRITE_REFERENCE").is_some() {
        std::fs::write(&path, &want).unwrap();
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "docs/reference.md differs from the parser's definitions: run scripts/gen-reference.sh"
    );
    // The generated text has every command and one of its options.
    for needle in [
        "## `hostbench wakeup`",
        "## `hostbench results push`",
        "--page-cache",
    ] {
        assert!(want.contains(needle), "the reference lacks {needle}");
    }
}

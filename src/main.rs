use std::io::Write;
use std::process::ExitCode;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::Parser;

use hostbench::cli::{self, Cli};
use hostbench::error::{UsageError, EXIT_USAGE};
use hostbench::model::label::printable;

fn main() -> ExitCode {
    hostbench::platform::files::close_inherited_on_exec();
    // Arguments as the kernel gave them: a name that is not UTF-8 is still a valid path.
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if argv
        .get(1)
        .is_some_and(|a| a == cli::worker::WORKER_SUBCOMMAND)
    {
        let spec = argv.get(2).map(|s| s.to_string_lossy()).unwrap_or_default();
        return match cli::worker::exec(&spec) {
            Ok(code) => ExitCode::from(code as u8),
            Err(e) => {
                let _ = writeln!(std::io::stderr(), "hostbench: error: {}", one_line(&e));
                ExitCode::FAILURE
            }
        };
    }
    let cli = match Cli::try_parse_from(&argv) {
        Ok(cli) => cli,
        Err(e) => return clap_exit(e, &argv),
    };
    let argv = argv
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    match cli::exec(cli, argv) {
        Ok(code) => ExitCode::from(code as u8),
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "hostbench: error: {}", one_line(&e));
            if e.downcast_ref::<UsageError>().is_some() {
                ExitCode::from(EXIT_USAGE as u8)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

/// An error and its causes on one line.
/// Whatever it quotes (a path, a label, a store's text) is shown with its control characters
/// escaped, so an error cannot drive the terminal it is printed on, and without any password
/// a URL in it held.
fn one_line(e: &anyhow::Error) -> String {
    printable(
        &hostbench::store::redact(&format!("{e:#}").replace('\n', " ")),
        MAX_MESSAGE,
    )
}

/// The longest error line, in characters (a message quoting a 65,536-character value is cut).
const MAX_MESSAGE: usize = 2000;

/// Help and version go to standard output with success; a usage mistake is one line on
/// standard error and exit code 2.
fn clap_exit(e: clap::Error, argv: &[std::ffi::OsString]) -> ExitCode {
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            ExitCode::SUCCESS
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand | ErrorKind::MissingSubcommand => {
            let _ = writeln!(
                std::io::stderr(),
                "hostbench: error: {}",
                missing_subcommand(argv)
            );
            ExitCode::from(EXIT_USAGE as u8)
        }
        _ => {
            let _ = writeln!(
                std::io::stderr(),
                "hostbench: error: {}",
                printable(
                    &hostbench::store::redact(&clap_message(&quoting_safely(&e))),
                    MAX_MESSAGE
                )
            );
            ExitCode::from(EXIT_USAGE as u8)
        }
    }
}

/// `hostbench` or `hostbench results` without a subcommand, said in one line: the command as
/// far as it was given, and the subcommands it takes.
fn missing_subcommand(argv: &[std::ffi::OsString]) -> String {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    let mut path = vec!["hostbench".to_string()];
    for arg in argv.iter().skip(1) {
        let word = arg.to_string_lossy();
        let Some(sub) = cmd.find_subcommand(word.as_ref()).cloned() else {
            continue;
        };
        path.push(word.into_owned());
        cmd = sub;
    }
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .filter(|n| n != "help")
        .collect();
    let path = path.join(" ");
    format!(
        "{path} needs a command: {} (see {path} --help)",
        names.join(", ")
    )
}

/// clap's message, but where the value it refused is long or holds a control character, said
/// from the error's parts with the value cut and escaped: clap quotes it whole (65,536
/// characters on one line), a newline in it would split the message, and its own rendering
/// drops escape sequences silently, so the value shown would not be the one given.
fn quoting_safely(e: &clap::Error) -> String {
    let (Some(ContextValue::String(v)), Some(ContextValue::String(arg))) = (
        e.get(ContextKind::InvalidValue),
        e.get(ContextKind::InvalidArg),
    ) else {
        return e.render().to_string();
    };
    if v.chars().count() <= 40 && !v.contains(char::is_control) {
        return e.render().to_string();
    }
    let why = match (e.kind(), e.get(ContextKind::ValidValue)) {
        (ErrorKind::InvalidValue, Some(ContextValue::Strings(valid))) => {
            format!(" (possible values: {})", valid.join(", "))
        }
        _ => std::error::Error::source(e)
            .map(|s| format!(": {s}"))
            .unwrap_or_default(),
    };
    format!("invalid value '{}' for '{arg}'{why}", printable(v, 40))
}

/// clap's message on one line: its first line with the lines that complete it (the names of
/// missing arguments, indented beneath), and its "tip:" if it gives one; the usage and help
/// lines are left out.
fn clap_message(text: &str) -> String {
    let mut parts: Vec<String> = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        if trimmed.starts_with("Usage:") || trimmed.starts_with("For more information") {
            break;
        }
        if parts.is_empty() {
            parts.push(trimmed.trim_start_matches("error: ").to_string());
        } else {
            // "[possible values: …]" is bracketed already; it goes in the parentheses below.
            let bare = trimmed
                .strip_prefix('[')
                .and_then(|t| t.strip_suffix(']'))
                .unwrap_or(trimmed);
            parts.push(bare.to_string());
        }
    }
    if parts.is_empty() {
        return "invalid arguments".into();
    }
    let first = parts.remove(0);
    if parts.is_empty() {
        first
    } else if first.ends_with(':') {
        format!("{first} {}", parts.join(", "))
    } else {
        format!("{first} ({})", parts.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn possible_values_are_listed_once_bracketed() {
        let text = "error: invalid value 'fast' for '--profile <PROFILE>'\n  [possible values: quick, standard, full]\n\nFor more information, try '--help'.\n";
        assert_eq!(
            clap_message(text),
            "invalid value 'fast' for '--profile <PROFILE>' (possible values: quick, standard, full)"
        );
    }

    #[test]
    fn missing_arguments_are_named() {
        let text = "error: the following required arguments were not provided:\n  <A>\n  <B>\n\nUsage: hostbench compare <A> <B>\n\nFor more information, try '--help'.\n";
        assert_eq!(
            clap_message(text),
            "the following required arguments were not provided: <A>, <B>"
        );
    }

    #[test]
    fn tips_are_kept_and_usage_dropped() {
        let text = "error: unexpected argument '--foo' found\n\n  tip: to pass '--foo' as a value, use '-- --foo'\n\nUsage: hostbench noise\n";
        assert_eq!(
            clap_message(text),
            "unexpected argument '--foo' found (tip: to pass '--foo' as a value, use '-- --foo')"
        );
    }
}

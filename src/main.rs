use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::Parser;

use hostbench::cli::{self, Cli};
use hostbench::error::{UsageError, EXIT_USAGE};

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().collect();
    let cli = match Cli::try_parse_from(&argv) {
        Ok(cli) => cli,
        Err(e) => return clap_exit(e),
    };
    match cli::exec(cli, argv) {
        Ok(code) => ExitCode::from(code as u8),
        Err(e) => {
            eprintln!("hostbench: error: {e:#}");
            if e.downcast_ref::<UsageError>().is_some() {
                ExitCode::from(EXIT_USAGE as u8)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

/// Help and version go to standard output with success; a usage mistake is one line on
/// standard error and exit code 2.
fn clap_exit(e: clap::Error) -> ExitCode {
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            ExitCode::SUCCESS
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            ExitCode::from(EXIT_USAGE as u8)
        }
        _ => {
            let text = e.render().to_string();
            let first = text
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("invalid arguments");
            eprintln!(
                "hostbench: error: {}",
                first.trim_start_matches("error: ").trim()
            );
            ExitCode::from(EXIT_USAGE as u8)
        }
    }
}

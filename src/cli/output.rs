//! Everything the command line writes goes through here, as fallible writes: `print!` panics
//! when standard output is a closed pipe (`hostbench … | head -1`) or a full disk, and a panic
//! mid-run would lose the measurement. A write that fails closes that stream for the rest of
//! the run; measuring and storing go on. A closed pipe is the reader's choice and ends quietly;
//! any other failure (`> /dev/full`) is reported at the end and makes the exit code 1.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::error::UsageError;
use crate::platform::files;
use crate::render::exporters::{self, Format, Shown, Subject};

/// Standard output and standard error, shared by a command and its progress observers.
#[derive(Clone)]
pub struct Output {
    state: Arc<Mutex<State>>,
    /// `--json`: standard output carries the JSON document only; text goes to standard error.
    pub json: bool,
    /// `-q`: no chatter (progress, calibration lines).
    pub quiet: bool,
}

#[derive(Default)]
struct State {
    stdout_closed: bool,
    /// The first write error on standard output other than a closed pipe.
    stdout_error: Option<String>,
    stderr_closed: bool,
}

impl Output {
    pub fn new(json: bool, quiet: bool) -> Self {
        Output {
            state: Arc::new(Mutex::new(State::default())),
            json,
            quiet,
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Writes to standard output (flushed).
    pub fn out(&self, text: &str) {
        let mut st = self.state();
        if st.stdout_closed {
            return;
        }
        let mut stdout = io::stdout().lock();
        if let Err(e) = stdout
            .write_all(text.as_bytes())
            .and_then(|_| stdout.flush())
        {
            st.stdout_closed = true;
            if e.kind() != io::ErrorKind::BrokenPipe {
                st.stdout_error = Some(e.to_string());
            }
        }
    }

    /// Writes to standard error; a failure there has nowhere to be reported.
    pub fn err(&self, text: &str) {
        let mut st = self.state();
        if st.stderr_closed {
            return;
        }
        let mut stderr = io::stderr().lock();
        if stderr
            .write_all(text.as_bytes())
            .and_then(|_| stderr.flush())
            .is_err()
        {
            st.stderr_closed = true;
        }
    }

    /// Text that belongs on standard output unless it carries JSON (then standard error).
    pub fn text(&self, text: &str) {
        if self.json {
            self.err(text);
        } else {
            self.out(text);
        }
    }

    /// Chatter: progress and calibration lines, left out with `-q`.
    pub fn chatter(&self, text: &str) {
        if !self.quiet {
            self.text(text);
        }
    }

    /// Chatter about the work itself (not its output, which standard output may carry in any
    /// format): standard error, left out with `-q`.
    pub fn aside(&self, text: &str) {
        if !self.quiet {
            self.err(text);
        }
    }

    /// `warning: …` on standard error.
    pub fn warn(&self, message: &str) {
        self.err(&format!("warning: {message}\n"));
    }

    /// An error on standard output other than a closed pipe, if one happened.
    pub fn stdout_error(&self) -> Option<String> {
        self.state().stdout_error.clone()
    }
}

/// `--format` and `-o`, the same on `results show`, `results export`, `compare` and `report`.
/// Each command narrows `--format`'s values to the formats that show what it shows, with
/// `#[command(mut_arg("format", |a| a.value_parser(format_values(&[...]))))]`.
#[derive(Debug, Clone, clap::Args)]
pub struct FormatArgs {
    /// The output format [default: text]
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<Format>,
    /// Write to FILE instead of standard output
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// `--format`'s values on a command that shows `shown`: the formats that show one of them
/// (`exporters::formats`), each with its help, parsed to the one `Format`.
pub fn format_values(shown: &[Shown]) -> impl clap::builder::TypedValueParser<Value = Format> {
    use clap::builder::TypedValueParser;
    use clap::ValueEnum;
    clap::builder::PossibleValuesParser::new(exporters::formats(shown))
        .map(|name| Format::from_str(&name, false).expect("a listed format is a format"))
}

impl FormatArgs {
    /// The format asked for: `--format`, or JSON with `--json`, else `default`.
    /// The two disagreeing is a usage error.
    pub fn format(&self, json: bool, default: Format) -> Result<Format, UsageError> {
        match (self.format, json) {
            (Some(f), true) if f != Format::Json => Err(UsageError::new(format!(
                "--json and --format {} ask for two formats: give one",
                f.name()
            ))),
            (Some(f), _) => Ok(f),
            (None, true) => Ok(Format::Json),
            (None, false) => Ok(default),
        }
    }

    /// Renders `subject` as `format` and writes it to `-o FILE` (by `files::write_output`'s
    /// rules: a file replaced, a device or FIFO written into; "-" is standard output), else to `default_file`, else to standard output; the
    /// file written, if any. A format that cannot show the subject, or a file that cannot be
    /// written, is the user's to fix (exit 2).
    pub fn emit(
        &self,
        out: &Output,
        format: Format,
        subject: Subject,
        default_file: Option<&Path>,
    ) -> anyhow::Result<Option<PathBuf>> {
        let text =
            exporters::render(format, subject).map_err(|e| UsageError::new(e.to_string()))??;
        self.write(out, &text, default_file)
    }

    /// Writes rendered `text` where -o says, else to `default_file`, else standard output.
    pub fn write(
        &self,
        out: &Output,
        text: &str,
        default_file: Option<&Path>,
    ) -> anyhow::Result<Option<PathBuf>> {
        match self.output.as_deref().or(default_file) {
            Some(path) if path != Path::new("-") => {
                files::write_output(path, text.as_bytes()).map_err(|e| {
                    UsageError::new(format!("cannot write {}: {e:#}", path.display()))
                })?;
                Ok(Some(path.to_path_buf()))
            }
            _ => {
                out.out(text);
                Ok(None)
            }
        }
    }
}

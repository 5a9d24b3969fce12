//! The consumers of the suites' one event stream (`suites::event`), for a measuring command:
//! - the store checkpoint: the result so far, stored as it goes (`Session::checkpoint`);
//! - the original tool's lines, on the report stream (see `Output`): the command's
//!   [`Reporter`] (p1bench's, UnixBench's, interbench's, reflex's, `hostbench run`'s);
//! - the live progress line, whose words the reporter gives.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::output::Output;
use super::session::Session;
use crate::model::SuiteResult;
use crate::suites::event::{Event, Events, Progress, EVERY_UNIT};

/// Where a reporter writes: the command's streams, with the live line taken off the screen
/// while a line is printed.
pub struct Terminal {
    pub out: Output,
    /// Hidden until the first status: a line printed before then (p1bench's "Calibrating..."
    /// ends without a newline) is not wiped by an empty bar.
    bar: ProgressBar,
    live: bool,
}

impl Terminal {
    /// `live`: draw the progress line (see `GlobalArgs::shows_progress`).
    pub fn new(out: Output, live: bool) -> Self {
        let bar = ProgressBar::hidden();
        bar.set_style(
            ProgressStyle::with_template("{wide_msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        Terminal { out, bar, live }
    }

    /// Chatter (left out with `-q`).
    pub fn chatter(&self, text: &str) {
        self.bar.suspend(|| self.out.chatter(text));
    }

    /// Chatter that always goes to standard error (left out with `-q`).
    pub fn chatter_err(&self, text: &str) {
        if !self.out.quiet {
            self.err(text);
        }
    }

    /// Text of the report stream (standard output, or standard error with `--json`).
    pub fn text(&self, text: &str) {
        self.bar.suspend(|| self.out.text(text));
    }

    /// Standard output.
    pub fn out(&self, text: &str) {
        self.bar.suspend(|| self.out.out(text));
    }

    pub fn warn(&self, text: &str) {
        self.bar.suspend(|| self.out.warn(text));
    }

    pub fn err(&self, text: &str) {
        self.bar.suspend(|| self.out.err(text));
    }

    /// Redraws the live line with `status` (nothing when it is not shown).
    fn status(&self, status: String) {
        if !self.live {
            return;
        }
        if self.bar.is_hidden() {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
        }
        self.bar.set_message(status);
    }

    /// Takes the live line off the screen for good.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// A command's view of the events: the original tool's lines, and the live line's words.
pub trait Reporter {
    /// Prints what `event` means to the command's user.
    fn on(&mut self, event: &Event<'_>, term: &Terminal);
    /// The live line's words after `event`, where it changes them.
    fn status(&self, _event: &Event<'_>) -> Option<String> {
        None
    }
}

/// The live line's words for a part's progress, the same for every suite: what it is at, and
/// its units done.
pub fn progress_words(p: &Progress<'_>) -> String {
    format!("{} ({}/{} done)", p.now, p.done, p.of)
}

/// The one consumer a suite is given: each event goes to the store checkpoint, the command's
/// reporter and the live line.
///
/// The live line is an indicatif bar on standard error, drawn only when standard error is a
/// terminal that can rewrite a line (not `TERM=dumb`) and not `-q`. It has no steady tick: no
/// thread wakes while a suite measures; it is redrawn when the suite reports something, and
/// taken off the screen while a line is printed.
pub struct Console<'s, R> {
    pub term: Terminal,
    pub reporter: R,
    /// Stores the result as it goes.
    session: &'s mut Session,
    /// `hostbench run`: the parts done, stored with the part in progress.
    done: Vec<SuiteResult>,
}

impl<'s, R: Reporter> Console<'s, R> {
    pub fn new(session: &'s mut Session, reporter: R, live: bool) -> Self {
        Console {
            term: Terminal::new(session.out.clone(), live),
            reporter,
            session,
            done: Vec::new(),
        }
    }

    /// Stores the parts done and the part in progress, marked incomplete, when one is due.
    fn checkpoint(&mut self, event: &Event<'_>) {
        match event {
            Event::Partial { every, build } => {
                let done = &self.done;
                self.session.checkpoint(*every, || {
                    let mut suites = done.clone();
                    suites.push(build());
                    suites
                });
            }
            Event::PartDone { result, .. } => {
                self.done.push((*result).clone());
                let done = &self.done;
                self.session.checkpoint(EVERY_UNIT, || done.clone());
            }
            _ => {}
        }
    }
}

impl<R: Reporter> Events for Console<'_, R> {
    fn event(&mut self, event: Event<'_>) {
        self.checkpoint(&event);
        self.reporter.on(&event, &self.term);
        if let Some(status) = self.reporter.status(&event) {
            self.term.status(status);
        }
    }
}

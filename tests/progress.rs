//! The live progress line: an indicatif bar on standard error, drawn only when standard error
//! is a terminal (here, a real pseudo-terminal made by `script`) and TERM is not `dumb`, and
//! redrawn only when the suite reports something.

mod common;

use common::{skip_without, Sandbox};

/// Runs `hostbench ARGS` on a pseudo-terminal with `TERM=term`; what the terminal received.
fn on_a_terminal(sandbox: &Sandbox, term: &str, args: &str) -> String {
    let exe = assert_cmd::cargo::cargo_bin("hostbench");
    let typescript = sandbox.dir.path().join("typescript");
    let status = std::process::Command::new("script")
        .arg("-qec")
        .arg(format!("{} {args}", exe.display()))
        .arg(&typescript)
        .env("TERM", term)
        .env("HOSTBENCH_DB", sandbox.db())
        .env("HOSTBENCH_CACHE_DIR", sandbox.cache_dir())
        .current_dir(sandbox.dir.path())
        .stdout(std::process::Stdio::null())
        .status()
        .expect("script runs");
    assert!(status.success(), "{status}");
    std::fs::read_to_string(typescript).unwrap()
}

const ERASE_LINE: &str = "\x1b[2K";

#[test]
fn the_live_line_is_drawn_on_a_terminal_and_only_there() {
    if skip_without(
        "the_live_line_is_drawn_on_a_terminal_and_only_there",
        &["script"],
    ) {
        return;
    }
    let sandbox = Sandbox::new();
    let shown = on_a_terminal(&sandbox, "xterm", "noise --no-noise-check 5 8");
    // The first run draws the line; each later one redraws it in place: erased, then the run's
    // progress.
    assert!(shown.contains("\r\nRun 1/8, Ctrl-C to stop"), "{shown:?}");
    for run in 2..=8 {
        assert!(
            shown.contains(&format!("{ERASE_LINE}Run {run}/8, Ctrl-C to stop")),
            "run {run} not drawn: {shown:?}"
        );
    }
    // The calibration line, printed before the first draw, is not wiped by an empty bar.
    assert!(
        shown.contains("Calibrating for 5 ms... (target iteration count:"),
        "{shown:?}"
    );
    // The line is taken off the screen before the report.
    let report = shown.find("Perturbation percent").expect("the report");
    assert!(
        shown[..report].ends_with(&format!("\r{ERASE_LINE}\r\n")),
        "{shown:?}"
    );

    let dumb = on_a_terminal(&sandbox, "dumb", "noise --no-noise-check 5 8");
    assert!(!dumb.contains(ERASE_LINE), "TERM=dumb drew: {dumb:?}");
    assert!(!dumb.contains("Run 1/8"), "{dumb:?}");
    let quiet = on_a_terminal(&sandbox, "xterm", "noise -q --no-noise-check 5 8");
    assert!(!quiet.contains("Run 1/8"), "-q drew: {quiet:?}");

    // Standard error not a terminal (a pipe): no live line.
    let piped = sandbox
        .cmd()
        .env("TERM", "xterm")
        .args(["noise", "--no-noise-check", "5", "8"])
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&piped.get_output().stderr).into_owned();
    assert!(
        !stderr.contains("Run 1/8") && !stderr.contains(ERASE_LINE),
        "{stderr:?}"
    );
}

#[test]
fn the_live_line_of_a_run_follows_each_part_in_its_units() {
    if skip_without(
        "the_live_line_of_a_run_follows_each_part_in_its_units",
        &["script"],
    ) {
        return;
    }
    let sandbox = Sandbox::new();
    let shown = on_a_terminal(&sandbox, "xterm", "run --profile smoke --no-noise-check");
    // Each part's progress after the part's place in the run: what it is at, in its suite's
    // words, and its units done, on one line for every suite.
    for words in [
        "[1/8] noise: calibrating (0/6 done)",
        "[1/8] noise: timing runs (2/6 done)",
        "[2/8] index: 1 x dhry2reg (1/",
        "[3/8] interactive: Audio under None (1/",
        "[4/8] sched: 2 threads, run 1: ",
        "[5/8] wakeup: ",
    ] {
        assert!(shown.contains(words), "{words:?} not drawn: {shown:?}");
    }
    // Once a unit is done, the time a unit takes, and the time left at that pace.
    assert!(shown.contains(" s a unit | part about "), "{shown:?}");
}

//! UnixBench's graphics tests: the 2D tests run a selection of the host's x11perf tests and
//! combine their rates into one score; ubgears counts the frames of the host's glxgears after
//! a warm-up. Both draw on the display they are given (the user's, or a private Xvfb).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::suites::index::scoring::CopyReport;

/// The x11perf tests behind each 2D test. The score is the geometric mean of the rates x11perf
/// reports for them (the window tests report one rate per number of child windows), in
/// thousands of operations a second (see docs/index.md).
pub fn x11perf_tests(test: &str) -> Option<&'static [&'static str]> {
    Some(match test {
        "2d-rects" => &["-rect10", "-rect100", "-rect500"],
        "2d-lines" => &["-seg10", "-seg100", "-line10", "-line100"],
        "2d-circle" => &["-circle10", "-circle100", "-circle500"],
        "2d-ellipse" => &["-ellipse10", "-ellipse100", "-ellipse500"],
        "2d-shapes" => &["-triangle10", "-triangle100", "-trap10", "-trap100"],
        "2d-aashapes" => &[
            "-aatrap10",
            "-aatrap100",
            "-aatrapezoid10",
            "-aatrapezoid100",
        ],
        "2d-polys" => &["-complex10", "-complex100"],
        "2d-text" => &["-ftext", "-aa10text", "-aa24text", "-rgb10text"],
        "2d-blit" => &[
            "-copywinwin100",
            "-copypixwin100",
            "-putimage100",
            "-shmput100",
        ],
        "2d-window" => &["-create", "-map", "-unmap", "-destroy"],
        _ => return None,
    })
}

/// The rates (per second) of x11perf's result lines: `N reps @ T msec (RATE/sec): what`.
pub fn x11perf_rates(output: &str) -> Vec<f64> {
    output
        .lines()
        .filter(|l| l.contains(" reps @ "))
        .filter_map(|l| {
            let open = l.find('(')?;
            let end = l[open..].find("/sec)")? + open;
            l[open + 1..end].trim().parse().ok()
        })
        .collect()
}

/// Kills `child` if it runs past `limit`; returns its standard output.
fn wait_output(mut child: Child, limit: Duration, what: &str) -> Result<String> {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait()? {
            let mut out = String::new();
            let mut err = String::new();
            if let Some(mut o) = child.stdout.take() {
                std::io::Read::read_to_string(&mut o, &mut out)?;
            }
            if let Some(mut e) = child.stderr.take() {
                std::io::Read::read_to_string(&mut e, &mut err)?;
            }
            if !status.success() {
                bail!(
                    "{what} ended with {status}: {}",
                    err.lines().next().unwrap_or("")
                );
            }
            return Ok(out);
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            bail!("{what} did not finish in {} s", limit.as_secs());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Runs `test`'s x11perf tests on `display`, `seconds` in all. x11perf's output goes to a
/// pipe read only at the end: it prints a few lines per test, far below a pipe's capacity.
pub fn run_x11perf(test: &str, seconds: f64, display: &str) -> Result<CopyReport> {
    let Some(tests) = x11perf_tests(test) else {
        bail!("{test} is not a 2D test");
    };
    // x11perf times each test for -time seconds (whole seconds, at least 1), after a
    // calibration pass of its own.
    let each = (seconds / tests.len() as f64).round().max(1.0) as u64;
    let started = Instant::now();
    let child = Command::new("x11perf")
        .args([
            "-display",
            display,
            "-repeat",
            "1",
            "-time",
            &each.to_string(),
        ])
        .args(tests)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("starting x11perf")?;
    let limit = Duration::from_secs(30 + 4 * each * tests.len() as u64);
    let out = wait_output(child, limit, "x11perf")?;
    let rates = x11perf_rates(&out);
    if rates.len() < tests.len() || rates.iter().any(|r| *r <= 0.0) {
        bail!(
            "x11perf reported {} rates for {} tests ({})",
            rates.len(),
            tests.len(),
            tests.join(" ")
        );
    }
    let log_mean = rates.iter().map(|r| (r / 1000.0).ln()).sum::<f64>() / rates.len() as f64;
    Ok(CopyReport {
        count: log_mean.exp(),
        timebase: 0.0,
        time_s: started.elapsed().as_secs_f64(),
    })
}

/// glxgears' report lines: `N frames in S seconds = F FPS`.
pub fn gears_report(line: &str) -> Option<(f64, f64)> {
    let (frames, rest) = line.trim().split_once(" frames in ")?;
    let (secs, _) = rest.split_once(" seconds")?;
    Some((frames.trim().parse().ok()?, secs.trim().parse().ok()?))
}

/// Seconds glxgears draws before its frames count (UnixBench's ubgears warms up for 5 s).
const GEARS_WARM_UP_S: f64 = 5.0;

/// Draws gears on `display` with the host's glxgears: its first report (the first 5 s) is the
/// warm-up, then frames and seconds of its reports are summed until `seconds` are covered (at
/// least one report; glxgears reports every 5 s). Vertical sync is turned off (Mesa's
/// `vblank_mode=0`, NVIDIA's `__GL_SYNC_TO_VBLANK=0`) so the rate is the drawing rate, not the
/// monitor's.
pub fn run_gears(seconds: f64, display: &str) -> Result<CopyReport> {
    let started = Instant::now();
    let mut child = Command::new("glxgears")
        .args(["-display", display])
        .env("vblank_mode", "0")
        .env("__GL_SYNC_TO_VBLANK", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("starting glxgears")?;
    let stdout = child.stdout.take().expect("piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(r) = gears_report(&line) {
                if tx.send(r).is_err() {
                    break;
                }
            }
        }
    });
    let limit = Duration::from_secs_f64(GEARS_WARM_UP_S + seconds.max(5.0) + 15.0);
    let (mut frames, mut secs, mut reports) = (0.0, 0.0, 0);
    let outcome = loop {
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok((f, s)) => {
                reports += 1;
                if reports > 1 {
                    frames += f;
                    secs += s;
                    if secs >= seconds - 0.5 {
                        break Ok(());
                    }
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                if let Ok(Some(status)) = child.try_wait() {
                    break Err(anyhow::anyhow!(
                        "glxgears ended with {status} after {reports} report(s) (is there a GLX-capable display?)"
                    ));
                }
                if started.elapsed() > limit {
                    break Err(anyhow::anyhow!(
                        "glxgears gave {reports} report(s) in {} s",
                        limit.as_secs()
                    ));
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                break Err(anyhow::anyhow!("glxgears closed its output"));
            }
        }
    };
    let _ = child.kill();
    let _ = child.wait();
    outcome?;
    Ok(CopyReport {
        count: frames / secs,
        timebase: 0.0,
        time_s: secs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_x11perf_and_glxgears_output() {
        let out = "Sync time adjustment is 0.0257 msecs.\n\n    7000000 reps @   0.0001 msec (6870000.0/sec): 10x10 rectangle\n\n     720000 reps @   0.0023 msec (426000.0/sec): 100x100 rectangle\n   12000000 trep @   0.0002 msec (5400000.0/sec): 10x10 rectangle\n";
        assert_eq!(x11perf_rates(out), vec![6_870_000.0, 426_000.0]);
        assert_eq!(
            gears_report("3102 frames in 5.0 seconds = 620.382 FPS"),
            Some((3102.0, 5.0))
        );
        assert_eq!(gears_report("GL_RENDERER = llvmpipe"), None);
    }

    #[test]
    fn every_2d_test_has_its_x11perf_selection() {
        for t in crate::suites::index::registry::TESTS
            .iter()
            .filter(|t| t.category == crate::suites::index::registry::Category::TwoD)
        {
            assert!(x11perf_tests(t.name).is_some(), "{}", t.name);
        }
    }
}

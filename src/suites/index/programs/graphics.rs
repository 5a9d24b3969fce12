//! UnixBench's graphics tests, scored as its gfx-x11 scores them: each 2D test is a group of
//! four of the host's x11perf tests; each test's rate is divided by its rate on gfx-x11's
//! reference machine and multiplied by 1000, and the group's score is the arithmetic mean of
//! the four. ubgears counts the frames of the host's glxgears after a warm-up. Both draw on the
//! display they are given (the user's, or a private Xvfb).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::model::index::scoring::CopyReport;

/// gfx-x11's groups: the x11perf tests behind each 2D test (UnixBench pgms/gfx-x11,
/// `$testGroups`).
pub fn x11perf_tests(test: &str) -> Option<[&'static str; 4]> {
    Some(match test {
        "2d-rects" => ["rect10", "rect100", "oddtilerect10", "eschertilerect100"],
        "2d-lines" => ["seg100c3", "wvseg100", "ddline100", "worect500"],
        "2d-circle" => ["circle500", "wddcircle100", "wpcircle100", "fspcircle100"],
        "2d-ellipse" => [
            "ddellipse100",
            "wddellipse100",
            "pellipse10",
            "fspellipse100",
        ],
        "2d-shapes" => ["triangle10", "trap300", "oddostrap300", "eschertiletrap300"],
        "2d-aashapes" => [
            "aa4trap300",
            "aa1trap10",
            "aatrap2x300",
            "addaatrapezoid300",
        ],
        "2d-polys" => [
            "complex10",
            "64poly100convex",
            "64poly10complex",
            "64poly100complex",
        ],
        "2d-text" => ["polytext16", "rgb24text", "caa10text", "ca24text"],
        "2d-blit" => [
            "scroll100",
            "copypixwin10",
            "deepcopyplane10",
            "putimagexy500",
        ],
        "2d-window" => ["popup", "move", "movetree", "resize"],
        _ => return None,
    })
}

/// The rates of those x11perf tests on gfx-x11's reference machine (an HP Compaq nc8430 with an
/// ATI Mobility Radeon X1600; UnixBench pgms/gfx-x11, `$testData`), per second. Where
/// `$testData` names a test twice (rgb24text), the later entry is the one Perl keeps.
pub fn reference_rate(x11perf_test: &str) -> Option<f64> {
    Some(match x11perf_test {
        "rect10" => 7_180_000.0,
        "rect100" => 110_000.0,
        "oddtilerect10" => 1_430_000.0,
        "eschertilerect100" => 18_000.0,
        "seg100c3" => 421_000.0,
        "wvseg100" => 584_000.0,
        "ddline100" => 453_000.0,
        "worect500" => 9_790.0,
        "circle500" => 28_900.0,
        "wddcircle100" => 8_300.0,
        "wpcircle100" => 39_000.0,
        "fspcircle100" => 187_000.0,
        "ddellipse100" => 88_900.0,
        "wddellipse100" => 6_680.0,
        "pellipse10" => 1_350_000.0,
        "fspellipse100" => 269_000.0,
        "triangle10" => 969_000.0,
        "trap300" => 11_600.0,
        "oddostrap300" => 2_080.0,
        "eschertiletrap300" => 2_450.0,
        "aa4trap300" => 1_460.0,
        "aa1trap10" => 357_000.0,
        "aatrap2x300" => 5_710.0,
        "addaatrapezoid300" => 4_460.0,
        "complex10" => 655_000.0,
        "64poly100convex" => 105_000.0,
        "64poly10complex" => 353_000.0,
        "64poly100complex" => 105_000.0,
        "polytext16" => 369_000.0,
        "rgb24text" => 2_510.0,
        "caa10text" => 15_300.0,
        "ca24text" => 2_540.0,
        "scroll100" => 52_000.0,
        "copypixwin10" => 502_000.0,
        "deepcopyplane10" => 151_000.0,
        "putimagexy500" => 0.1,
        "popup" => 660_000.0,
        "move" => 120_000.0,
        "movetree" => 877_000.0,
        "resize" => 136_000.0,
        _ => return None,
    })
}

/// The rate of an x11perf run: its last `(RATE/sec)` line, the average over its repeats, as
/// gfx-x11 takes it.
pub fn x11perf_rate(output: &str) -> Option<f64> {
    output.lines().rev().find_map(|l| {
        let open = l.find('(')?;
        let end = l[open..].find("/sec)")? + open;
        l[open + 1..end].trim().parse().ok()
    })
}

/// A group's score: the mean of its tests' rates over their reference rates, × 1000.
pub fn group_score(rates: &[(f64, f64)]) -> f64 {
    rates
        .iter()
        .map(|(rate, reference)| rate / reference * 1000.0)
        .sum::<f64>()
        / rates.len().max(1) as f64
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

/// Runs `test`'s four x11perf tests on `display` as gfx-x11 runs them — `x11perf -repeat 3
/// -subs 25 -time 2 -TEST`, UnixBench's "3 2", at its 30 s; one repeat of fewer seconds for a
/// shorter run — and scores the group. An x11perf test that fails fails the 2D test, naming it.
pub fn run_x11perf(test: &str, seconds: f64, display: &str) -> Result<CopyReport> {
    let Some(tests) = x11perf_tests(test) else {
        bail!("{test} is not a 2D test");
    };
    let (repeat, time) = if seconds >= 30.0 {
        (3, 2)
    } else {
        (1, (seconds / 4.0).round().max(1.0) as u64)
    };
    let started = Instant::now();
    let mut rates = Vec::with_capacity(tests.len());
    for name in tests {
        let reference = reference_rate(name).expect("every grouped test has a reference rate");
        let child = Command::new("x11perf")
            .args(["-display", display, "-repeat", &repeat.to_string()])
            .args(["-subs", "25", "-time", &time.to_string()])
            .arg(format!("-{name}"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .context("starting x11perf")?;
        // x11perf calibrates before its repeats; its output is a few lines.
        let limit = Duration::from_secs(30 + 4 * repeat * time);
        let out = wait_output(child, limit, &format!("x11perf -{name}"))?;
        let Some(rate) = x11perf_rate(&out).filter(|r| *r > 0.0) else {
            bail!("x11perf -{name} reported no rate (is the test supported by this X server?)");
        };
        rates.push((rate, reference));
    }
    Ok(CopyReport {
        count: group_score(&rates),
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
        let out = "Sync time adjustment is 0.0257 msecs.\n\n    7000000 reps @   0.0001 msec (6870000.0/sec): 10x10 rectangle\n    7000000 reps @   0.0001 msec (6910000.0/sec): 10x10 rectangle\n   14000000 trep @   0.0001 msec (6890000.0/sec): 10x10 rectangle\n";
        // The last line is x11perf's average over its repeats: gfx-x11's rate.
        assert_eq!(x11perf_rate(out), Some(6_890_000.0));
        assert_eq!(x11perf_rate("no rates here"), None);
        assert_eq!(
            gears_report("3102 frames in 5.0 seconds = 620.382 FPS"),
            Some((3102.0, 5.0))
        );
        assert_eq!(gears_report("GL_RENDERER = llvmpipe"), None);
    }

    #[test]
    fn a_group_scores_as_gfx_x11_does() {
        // 2d-rects on a host twice as fast as the reference at rect10 and rect100, as fast at
        // oddtilerect10 and half as fast at eschertilerect100: (2000 + 2000 + 1000 + 500) / 4.
        let tests = x11perf_tests("2d-rects").unwrap();
        let rates: Vec<(f64, f64)> = tests
            .iter()
            .zip([2.0, 2.0, 1.0, 0.5])
            .map(|(t, f)| {
                let r = reference_rate(t).unwrap();
                (r * f, r)
            })
            .collect();
        assert_eq!(rates[0], (14_360_000.0, 7_180_000.0));
        assert!((group_score(&rates) - 1375.0).abs() < 1e-9);
    }

    #[test]
    fn a_group_scored_from_captured_x11perf_output() {
        // Real output of `x11perf -repeat 2 -subs 25 -time 1 -TEST` for 2d-rects' four tests,
        // captured under Xvfb on the development VM, one run after the other. Each run's last
        // rate (its `trep` line, the mean of its repeats) over the reference rate, × 1000:
        // 10100000/7180000, 791000/110000, 8520000/1430000, 348000/18000 → 1406.69, 7190.91,
        // 5958.04, 19333.33; their mean 8472.24.
        let captured = include_str!("testdata/x11perf-2d-rects.txt");
        let runs: Vec<&str> = captured
            .split("x11perf - X11 performance program")
            .skip(1)
            .collect();
        let tests = x11perf_tests("2d-rects").unwrap();
        assert_eq!(runs.len(), tests.len());
        let rates: Vec<(f64, f64)> = runs
            .iter()
            .zip(tests)
            .map(|(out, t)| (x11perf_rate(out).unwrap(), reference_rate(t).unwrap()))
            .collect();
        assert_eq!(
            rates.iter().map(|r| r.0).collect::<Vec<_>>(),
            [10_100_000.0, 791_000.0, 8_520_000.0, 348_000.0]
        );
        assert!((group_score(&rates) - 8472.24).abs() < 0.01, "{rates:?}");
    }

    #[test]
    fn every_2d_test_has_its_group_and_every_grouped_test_its_reference() {
        for t in crate::suites::index::registry::TESTS
            .iter()
            .filter(|t| t.category == crate::model::index::Category::TwoD)
        {
            let group = x11perf_tests(t.name).unwrap_or_else(|| panic!("{}", t.name));
            for x in group {
                assert!(reference_rate(x).is_some(), "{x}");
            }
        }
    }

    #[test]
    fn the_aa_shapes_group_is_gfx_x11s_with_the_4_bit_alpha_trapezoid() {
        // gfx-x11's aashapes group starts with aa4trap300 ("Fill 300x300 aa trap with 4 bit
        // alpha"), rated 1460 a second on its reference machine, not aatrap300 (4450).
        assert_eq!(
            x11perf_tests("2d-aashapes").unwrap(),
            [
                "aa4trap300",
                "aa1trap10",
                "aatrap2x300",
                "addaatrapezoid300"
            ]
        );
        assert_eq!(reference_rate("aa4trap300"), Some(1_460.0));
        // Half the reference rate at aa4trap300 alone moves the group's score by an eighth.
        let score = group_score(&[
            (730.0, 1_460.0),
            (357_000.0, 357_000.0),
            (5_710.0, 5_710.0),
            (4_460.0, 4_460.0),
        ]);
        assert!((score - 875.0).abs() < 1e-9, "{score}");
    }
}

//! Worker processes: hostbench re-executes itself with the `__worker` argument and a JSON spec,
//! so a load's memory and I/O live in a process of their own, as interbench's did. A worker
//! never outlives the coordinator, even one killed with SIGKILL.

use std::io::{BufRead, BufReader, Lines, PipeWriter, StdinLock, StdoutLock, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{anyhow, bail, Context, Result};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::platform::clock::monotonic_ns;
use crate::platform::signals::{self, Woke};

/// The first argument a worker is started with.
pub const WORKER_SUBCOMMAND: &str = "__worker";

/// A worker's spec as its `__worker` argument: the spec's fields and its `role`, which the
/// binary's dispatcher (`cli::worker`) reads to know what to run. Each suite names its roles.
pub fn spec_json<T: Serialize>(role: &str, spec: &T) -> Result<String> {
    let mut value = serde_json::to_value(spec)?;
    let fields = value
        .as_object_mut()
        .ok_or_else(|| anyhow!("a worker spec must be a struct"))?;
    fields.insert("role".into(), role.into());
    Ok(value.to_string())
}

/// The worker's side: lines to the coordinator on standard output, commands from it on
/// standard input.
pub struct Channel {
    input: Lines<StdinLock<'static>>,
    output: StdoutLock<'static>,
}

impl Channel {
    pub fn stdio() -> Channel {
        Channel {
            input: std::io::stdin().lock().lines(),
            output: std::io::stdout().lock(),
        }
    }

    pub fn say(&mut self, line: &str) -> Result<()> {
        writeln!(self.output, "{line}")?;
        self.output.flush().context("writing to the coordinator")
    }

    pub fn report<T: Serialize>(&mut self, report: &T) -> Result<()> {
        self.say(&format!("report {}", serde_json::to_string(report)?))
    }

    /// Waits for the next command; false if it is not `word` or the coordinator is gone.
    pub fn wait_for(&mut self, word: &str) -> bool {
        matches!(self.input.next(), Some(Ok(line)) if line == word)
    }
}

/// A worker process, as the coordinator sees it. `__worker` is not a subcommand: `main`
/// dispatches it before parsing. Each worker is started in its own process group with a
/// parent-death signal (SIGKILL). The coordinator talks to it by lines on its standard input
/// and output: it sends `start` and `stop`; the worker answers `ready`, `started` and finally
/// `report <json>`. A `Worker` that is dropped before it was reaped kills the worker's process
/// group and reaps it, on every path out, errors included.
pub struct Worker {
    label: String,
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    reaped: bool,
}

impl Worker {
    /// Starts `exe __worker SPEC_JSON`. `label` names the worker in error messages.
    pub fn spawn(exe: &Path, spec_json: &str, label: &str) -> Result<Worker> {
        Worker::spawn_with(exe, spec_json, label, &[], &[])
    }

    /// As [`spawn`](Self::spawn), and the worker inherits the open descriptors `fds` under the
    /// same numbers (every other descriptor is close-on-exec) — a file the coordinator opened
    /// and then unlinked, so that the kernel frees it however the run ends — and runs with the
    /// environment variables `env` set.
    pub fn spawn_with(
        exe: &Path,
        spec_json: &str,
        label: &str,
        fds: &[RawFd],
        env: &[(&str, &str)],
    ) -> Result<Worker> {
        let mut cmd = Command::new(exe);
        cmd.arg(WORKER_SUBCOMMAND).arg(spec_json);
        cmd.envs(env.iter().copied());
        let fds = fds.to_vec();
        // SAFETY: fcntl is async-signal-safe; it changes the child's copy of the descriptor.
        unsafe {
            cmd.pre_exec(move || {
                for &fd in &fds {
                    if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
        Worker::spawn_command(cmd, label)
    }

    /// Starts any command as a worker: piped input and output, its own process group and a
    /// parent-death signal.
    pub fn spawn_command(mut cmd: Command, label: &str) -> Result<Worker> {
        // SAFETY: getpid is async-signal-safe; read before fork for the child's check below.
        let parent = unsafe { libc::getpid() };
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            // Its own process group: a terminal's Ctrl-C reaches the coordinator alone, which
            // stops workers in order instead of having them die mid-measurement.
            .process_group(0);
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(
                    libc::PR_SET_PDEATHSIG,
                    libc::SIGKILL as libc::c_ulong,
                    0,
                    0,
                    0,
                ) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                // The coordinator may have died before the death signal was armed.
                if libc::getppid() != parent {
                    libc::_exit(1);
                }
                Ok(())
            });
        }
        let mut child = cmd
            .spawn()
            .with_context(|| format!("starting the {label} worker"))?;
        // Its group is killed should this process end at once (a second Ctrl-C).
        crate::platform::cleanup::add_group(child.id() as libc::pid_t);
        let stdin = child.stdin.take();
        let stdout = BufReader::new(
            child
                .stdout
                .take()
                .ok_or_else(|| anyhow!("worker has no stdout"))?,
        );
        Ok(Worker {
            label: label.to_string(),
            child,
            stdin,
            stdout,
            reaped: false,
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    fn mark_reaped(&mut self) {
        self.reaped = true;
        crate::platform::cleanup::remove_group(self.child.id() as libc::pid_t);
    }

    /// Sends one command line.
    pub fn send(&mut self, command: &str) -> Result<()> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| anyhow!("{} worker: input closed", self.label))?;
        writeln!(stdin, "{command}")
            .and_then(|_| stdin.flush())
            .map_err(|e| self.died(&format!("could not be sent '{command}': {e}")))
    }

    /// Reads the next line and checks it is `expected`.
    pub fn expect(&mut self, expected: &str) -> Result<()> {
        let line = self.read_line()?;
        if line != expected {
            bail!(
                "{} worker said {line:?} where {expected:?} was expected",
                self.label
            );
        }
        Ok(())
    }

    /// Reads the `report <json>` line; an `error <message>` line is returned as an error.
    pub fn read_report<T: DeserializeOwned>(&mut self) -> Result<T> {
        let line = self.read_line()?;
        if let Some(message) = line.strip_prefix("error ") {
            bail!("{}: {message}", self.label);
        }
        let json = line.strip_prefix("report ").ok_or_else(|| {
            anyhow!(
                "{} worker said {line:?} where its report was expected",
                self.label
            )
        })?;
        serde_json::from_str(json)
            .with_context(|| format!("{} worker sent a malformed report", self.label))
    }

    fn read_line(&mut self) -> Result<String> {
        let mut line = String::new();
        let n = self.stdout.read_line(&mut line).unwrap_or(0);
        if n == 0 {
            return Err(self.died("ended without a word"));
        }
        Ok(line.trim_end().to_string())
    }

    /// An error naming how the worker ended (reaping it when it has).
    fn died(&mut self, what: &str) -> anyhow::Error {
        let status = self.child.wait().ok();
        if status.is_some() {
            self.mark_reaped();
        }
        anyhow!(
            "the {} worker (pid {}) {what}: {}",
            self.label,
            self.child.id(),
            describe(status)
        )
    }

    /// Closes its input and waits for it to exit; an exit other than 0 is an error.
    pub fn finish(mut self) -> Result<()> {
        drop(self.stdin.take());
        let status = self
            .child
            .wait()
            .with_context(|| format!("waiting for the {} worker", self.label))?;
        self.mark_reaped();
        if status.success() {
            Ok(())
        } else {
            bail!(
                "the {} worker (pid {}) ended: {}",
                self.label,
                self.child.id(),
                describe(Some(status))
            )
        }
    }
}

/// Runs `work` while a watcher kills the process groups `pgids` (SIGKILL) as soon as `stop` is
/// set: a worker's line may be a minute away (an index test) or its orderly stop may take long
/// (thousands of load threads to join), and a user who pressed Ctrl-C is not kept waiting. The
/// work then sees its workers end and returns; its caller checks `stop` to tell that apart
/// from a failure.
pub fn killing_on_stop<T>(pgids: &[i32], stop: &AtomicBool, work: impl FnOnce() -> T) -> T {
    // The watcher sleeps until the stop or the work's end, waking for nothing else while the
    // workers measure (signals::wait). The work's end closes `done`'s writing end; without a
    // descriptor for the pipe the watcher looks at `finished` every 20 ms instead.
    let (reader, writer) = std::io::pipe().ok().unzip();
    let finished = AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| loop {
            let step = reader.is_none().then(|| monotonic_ns() + 20_000_000);
            match signals::wait(stop, step, reader.as_ref().map(|r| r.as_raw_fd())) {
                Woke::Stop => {
                    for &pgid in pgids {
                        // SAFETY: each worker leads its own process group.
                        unsafe { libc::kill(-pgid, libc::SIGKILL) };
                    }
                    return;
                }
                Woke::Ready => return,
                Woke::Deadline if finished.load(Ordering::SeqCst) => return,
                Woke::Deadline => {}
            }
        });
        // Set and closed however the work ends, a panic included (the scope joins the
        // watcher before it unwinds further).
        let _end = WorkEnded(&finished, writer);
        work()
    })
}

/// The end of [`killing_on_stop`]'s work: sets its flag, then closes the pipe's writing end.
struct WorkEnded<'a>(&'a AtomicBool, Option<PipeWriter>);

impl Drop for WorkEnded<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
        drop(self.1.take());
    }
}

fn describe(status: Option<ExitStatus>) -> String {
    match status {
        Some(s) => match (s.code(), s.signal()) {
            (Some(code), _) => format!("exit code {code}"),
            (None, Some(sig)) => format!("killed by signal {sig}"),
            _ => "unknown status".into(),
        },
        None => "status unknown".into(),
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        if self.reaped {
            return;
        }
        drop(self.stdin.take());
        let pgid = self.child.id() as libc::pid_t;
        // SAFETY: signals the worker's own process group, which holds nothing else.
        unsafe { libc::kill(-pgid, libc::SIGKILL) };
        let _ = self.child.wait();
        self.mark_reaped();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `sh -c SCRIPT` stands in for a worker: these tests exercise the process mechanics.
    fn sh(script: &str) -> Worker {
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c").arg(script);
        Worker::spawn_command(cmd, "test").unwrap()
    }

    #[test]
    fn a_stop_kills_the_workers_and_the_work_sees_them_end() {
        let mut w = sh("echo ready; exec sleep 30");
        w.expect("ready").unwrap();
        let stop = AtomicBool::new(false);
        let start = monotonic_ns();
        let line = killing_on_stop(&[w.pid() as i32], &stop, || {
            stop.store(true, Ordering::SeqCst);
            w.read_line()
        });
        assert!(line.is_err(), "the worker was not killed");
        assert!(monotonic_ns() - start < 5_000_000_000);
    }

    #[test]
    fn the_watcher_ends_with_the_work() {
        let stop = AtomicBool::new(false);
        let start = monotonic_ns();
        assert_eq!(killing_on_stop(&[], &stop, || 7), 7);
        assert!(monotonic_ns() - start < 1_000_000_000);
        // A work that panics still ends the watcher (else the scope would never return).
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            killing_on_stop(&[], &stop, || panic!("the work failed"))
        }));
        assert!(caught.is_err());
    }

    #[test]
    fn protocol_lines_and_report() {
        let mut w = sh("echo ready; read cmd; echo started; read cmd; echo 'report {\"n\": 3}'");
        w.expect("ready").unwrap();
        w.send("start").unwrap();
        w.expect("started").unwrap();
        w.send("stop").unwrap();
        let v: serde_json::Value = w.read_report().unwrap();
        assert_eq!(v["n"], 3);
        w.finish().unwrap();
    }

    #[test]
    fn a_dead_worker_is_an_error_that_names_it() {
        let mut w = sh("kill -9 $$");
        let err = w.expect("ready").unwrap_err().to_string();
        assert!(err.contains("killed by signal 9"), "{err}");
    }

    #[test]
    fn dropping_an_unreaped_worker_kills_its_process_group() {
        // The shell starts a grandchild; both are in the worker's group and both must go.
        let mut w = sh("sleep 30 & echo $!; wait");
        let grandchild: i32 = {
            let mut line = String::new();
            w.stdout.read_line(&mut line).unwrap();
            line.trim().parse().unwrap()
        };
        let pid = w.pid();
        let start = std::time::Instant::now();
        drop(w);
        assert!(start.elapsed() < std::time::Duration::from_secs(5));
        assert!(!Path::new(&format!("/proc/{pid}")).exists());
        // The orphaned grandchild is reaped by init; wait for it to vanish (a loaded machine
        // may take a while), or to be a zombie, dead and not yet reaped.
        for _ in 0..500 {
            match std::fs::read_to_string(format!("/proc/{grandchild}/stat")) {
                Err(_) => return,
                Ok(stat) if stat.contains(") Z ") => return,
                Ok(_) => std::thread::sleep(std::time::Duration::from_millis(10)),
            }
        }
        panic!("grandchild {grandchild} still running 5 s after the worker was dropped");
    }
}

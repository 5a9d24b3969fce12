//! A private Xvfb server for the graphics tests: started on a display number it picks itself,
//! ended (SIGTERM, so it removes its lock file and socket) when dropped, and killed by the
//! kernel should hostbench die first.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};

pub struct Xvfb {
    child: Child,
    /// `:N`
    pub display: String,
}

impl Xvfb {
    /// Starts `Xvfb -displayfd 1` with one 1280x1024x24 screen, no TCP, and waits for the
    /// display number it prints.
    pub fn start() -> Result<Xvfb> {
        let mut cmd = Command::new("Xvfb");
        cmd.args([
            "-displayfd",
            "1",
            "-screen",
            "0",
            "1280x1024x24",
            "-nolisten",
            "tcp",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
        // SAFETY: prctl is async-signal-safe; it only sets this child's parent-death signal.
        unsafe {
            cmd.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut child = cmd.spawn().context("starting Xvfb")?;
        let stdout = child.stdout.take().expect("piped");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let mut xvfb = Xvfb {
            child,
            display: String::new(),
        };
        let started = Instant::now();
        let line = rx
            .recv_timeout(Duration::from_secs(20))
            .map_err(|_| anyhow!("Xvfb gave no display number in 20 s"))?;
        let n: u32 = line.trim().parse().map_err(|_| {
            anyhow!(
                "Xvfb did not start (it printed {:?} after {:.1} s)",
                line.trim(),
                started.elapsed().as_secs_f64()
            )
        })?;
        if let Some(status) = xvfb.child.try_wait()? {
            bail!("Xvfb ended at once with {status}");
        }
        xvfb.display = format!(":{n}");
        Ok(xvfb)
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        // SAFETY: signalling our own child.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

//! A real PostgreSQL server for the store tests: `initdb` into a temporary directory, started
//! on a Unix socket there (no TCP port), stopped and removed when dropped. As root, the server
//! runs as the `postgres` user (PostgreSQL refuses to run as root).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use tempfile::TempDir;

pub struct PgServer {
    dir: TempDir,
    bin: PathBuf,
    /// `postgresql://hostbench@localhost/postgres?host=DIR`
    pub url: String,
}

/// The directory of `initdb` and `pg_ctl`: on PATH, or Debian's /usr/lib/postgresql/N/bin.
pub fn bin_dir() -> Option<PathBuf> {
    if let Some(p) = super::on_path("initdb") {
        return p.parent().map(Path::to_path_buf);
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|b| b.join("initdb").is_file())
        .collect();
    found.sort();
    found.pop()
}

fn is_root() -> bool {
    // SAFETY: no preconditions.
    unsafe { libc::geteuid() == 0 }
}

impl PgServer {
    /// Starts a server; None (the test skips, saying so) where PostgreSQL is not installed,
    /// unless HOSTBENCH_REQUIRE_TEST_DEPS=1.
    pub fn start(test: &str) -> Option<PgServer> {
        Self::start_with(test, None)
    }

    /// The socket directory (PGHOST).
    pub fn socket_dir(&self) -> &Path {
        self.dir.path()
    }

    /// A server whose user `hostbench` needs `password` (SCRAM), where `Some`.
    pub fn start_with(test: &str, password: Option<&str>) -> Option<PgServer> {
        let server = Self::init(test, password)?;
        server.launch("");
        Some(server)
    }

    /// A server that also listens on 127.0.0.1 with TLS on (`ssl=on`), its certificate for
    /// `localhost` signed by a CA of its own: TCP connections without TLS are rejected
    /// (`hostnossl … reject`), so a connection that works used TLS. Returns the server, its
    /// port and its CA's certificate file; None where PostgreSQL or openssl is missing.
    pub fn start_tls(test: &str) -> Option<(PgServer, u16, PathBuf)> {
        if super::skip_without(test, &["openssl"]) {
            return None;
        }
        let server = Self::init(test, None)?;
        let dir = server.dir.path();
        let ca = make_certificates(dir);
        let hba = dir.join("data/pg_hba.conf");
        std::fs::write(
            &hba,
            "local all all trust\nhostssl all all 127.0.0.1/32 trust\nhostnossl all all 127.0.0.1/32 reject\n",
        )
        .unwrap();
        for file in ["server.key", "server.crt", "data/pg_hba.conf"] {
            let path = dir.join(file);
            if is_root() {
                let _ = Command::new("chown").arg("postgres").arg(&path).status();
            }
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        server.launch(&format!(
            "-c listen_addresses=127.0.0.1 -p {port} -c ssl=on -c ssl_cert_file={0}/server.crt -c ssl_key_file={0}/server.key",
            dir.display()
        ));
        Some((server, port, ca))
    }

    /// initdb into a temporary directory, as `hostbench` (trust, or `password` by SCRAM).
    fn init(test: &str, password: Option<&str>) -> Option<PgServer> {
        let Some(bin) = bin_dir() else {
            let why = format!(
                "{test}: needs PostgreSQL's initdb (scripts/install-test-deps.sh installs postgresql)"
            );
            assert!(!super::deps_required(), "{why}");
            eprintln!("skipped: {why}");
            return None;
        };
        let dir = tempfile::tempdir().expect("temporary directory");
        if is_root() {
            let status = Command::new("chown")
                .args(["-R", "postgres"])
                .arg(dir.path())
                .status()
                .expect("chown runs");
            assert!(status.success(), "chown postgres {}", dir.path().display());
        }
        let server = PgServer {
            url: format!(
                "postgresql://hostbench@localhost/postgres?host={}",
                dir.path().display()
            ),
            dir,
            bin,
        };
        let data = server.dir.path().join("data");
        let pwfile = server.dir.path().join("pw");
        let mut args: Vec<&std::ffi::OsStr> = vec![
            "-D".as_ref(),
            data.as_os_str(),
            "-U".as_ref(),
            "hostbench".as_ref(),
        ];
        match password {
            None => args.extend([OsStr::new("-A"), OsStr::new("trust")]),
            Some(p) => {
                std::fs::write(&pwfile, p).unwrap();
                if is_root() {
                    let _ = Command::new("chown").arg("postgres").arg(&pwfile).status();
                }
                args.extend([
                    OsStr::new("-A"),
                    OsStr::new("scram-sha-256"),
                    OsStr::new("--pwfile"),
                    pwfile.as_os_str(),
                ]);
            }
        }
        server.run("initdb", &args);
        Some(server)
    }

    /// Starts the server made by `init`, on its Unix socket and with `extra` options.
    fn launch(&self, extra: &str) {
        let server = self;
        let data = server.dir.path().join("data");
        let options = format!(
            "-k {} -c listen_addresses='' -c fsync=off -c max_connections=40 {extra}",
            server.dir.path().display()
        );
        let log = server.dir.path().join("log");
        server.run(
            "pg_ctl",
            &[
                "-D".as_ref(),
                data.as_os_str(),
                "-o".as_ref(),
                options.as_ref(),
                "-l".as_ref(),
                log.as_os_str(),
                "-w".as_ref(),
                "start".as_ref(),
            ],
        );
    }

    /// One of PostgreSQL's programs, to run as `postgres` when this is root.
    fn command(&self, program: &str) -> Command {
        let exe = self.bin.join(program);
        if is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&exe);
            c
        } else {
            Command::new(&exe)
        }
    }

    /// Runs one of PostgreSQL's programs; it must succeed.
    fn run(&self, program: &str, args: &[&std::ffi::OsStr]) {
        let out = self
            .command(program)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("{program}: {e}"));
        assert!(
            out.status.success(),
            "{program} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl PgServer {
    /// The server's processes: the postmaster (from postmaster.pid) and its children.
    fn processes(&self) -> Vec<i32> {
        let pid_file = self.dir.path().join("data/postmaster.pid");
        let Some(main) = std::fs::read_to_string(pid_file)
            .ok()
            .and_then(|t| t.lines().next().and_then(|l| l.trim().parse::<i32>().ok()))
        else {
            return Vec::new();
        };
        let mut pids = vec![main];
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
                continue;
            };
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            // The parent pid is the second field after the command's closing parenthesis.
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|p| p.parse::<i32>().ok());
            if ppid == Some(main) {
                pids.push(pid);
            }
        }
        pids
    }

    /// Stops (SIGSTOP) every process of the server, as a hung or frozen server would be:
    /// connections stay open, nothing answers. `resume` continues them.
    pub fn freeze(&self) {
        for pid in self.processes() {
            // SAFETY: a signal to a process of this test's server.
            unsafe { libc::kill(pid, libc::SIGSTOP) };
        }
    }

    pub fn resume(&self) {
        for pid in self.processes() {
            // SAFETY: as above.
            unsafe { libc::kill(pid, libc::SIGCONT) };
        }
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        // A frozen server would not stop.
        self.resume();
        let data = self.dir.path().join("data");
        let _ = self
            .command("pg_ctl")
            .arg("-D")
            .arg(&data)
            .args(["-m", "immediate", "stop"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// A CA of the test's own, and a server certificate for `localhost` it signed, in `dir`
/// (server.key, server.crt); returns the CA's certificate. Also other-ca.crt: a CA that
/// signed nothing here.
fn make_certificates(dir: &Path) -> PathBuf {
    let openssl = |args: &[&str]| {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("openssl runs");
        assert!(out.status.success(), "openssl {args:?}: {out:?}");
    };
    let key = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    for ca in ["ca", "other-ca"] {
        let (k, c, subj) = (
            format!("{ca}.key"),
            format!("{ca}.crt"),
            format!("/CN=hostbench test {ca}"),
        );
        let mut args = vec!["req", "-x509", "-days", "2", "-subj", &subj];
        args.extend(key);
        args.extend(["-keyout", &k, "-out", &c]);
        openssl(&args);
    }
    let mut args = vec![
        "req",
        "-subj",
        "/CN=localhost",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
    ];
    args.extend(key);
    openssl(&args);
    std::fs::write(dir.join("san.ext"), "subjectAltName=DNS:localhost\n").unwrap();
    openssl(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "san.ext",
        "-out",
        "server.crt",
    ]);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        dir.join("server.key"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    dir.join("ca.crt")
}

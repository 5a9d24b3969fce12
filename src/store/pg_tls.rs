//! TLS to a PostgreSQL server as libpq's `sslmode` and `sslrootcert` ask for it, through the
//! platform's OpenSSL (`postgres-openssl`, the connector maintained beside tokio-postgres).
//! tokio-postgres reads only `disable`, `prefer` and `require`, so [`split`] takes the URL's TLS
//! parameters out first, and [`Tls::connector`] checks what each mode checks (`Mode`).

use std::path::{Path, PathBuf};

use openssl::ssl::{SslConnector, SslMethod, SslVerifyMode};
use openssl::x509::X509;
use postgres_openssl::MakeTlsConnector;
use tokio_postgres::config::SslMode;

/// The largest root certificate file read: far more than a bundle of every public CA.
const MAX_ROOT_BYTES: u64 = 4 << 20;

/// libpq's `sslmode`. `require` encrypts and checks the chain only where root certificates
/// are at hand; `verify-ca` checks the chain; `verify-full` the chain and that the certificate
/// names the host connected to. The roots are `sslrootcert` (`system`: the platform's), else
/// `PGSSLROOTCERT`, else `~/.postgresql/root.crt`. A Unix socket never uses TLS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Disable,
    Allow,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl Mode {
    const ALL: [(&'static str, Mode); 6] = [
        ("disable", Mode::Disable),
        ("allow", Mode::Allow),
        ("prefer", Mode::Prefer),
        ("require", Mode::Require),
        ("verify-ca", Mode::VerifyCa),
        ("verify-full", Mode::VerifyFull),
    ];

    fn parse(value: &str) -> Result<Mode, String> {
        Mode::ALL
            .iter()
            .find(|(name, _)| *name == value)
            .map(|&(_, m)| m)
            .ok_or_else(|| {
                let names: Vec<&str> = Mode::ALL.iter().map(|(n, _)| *n).collect();
                format!("sslmode {value:?} is none of {}", names.join(", "))
            })
    }

    fn verifies(self) -> bool {
        matches!(self, Mode::VerifyCa | Mode::VerifyFull)
    }
}

/// Where the root certificates come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Roots {
    /// None given, and none at `~/.postgresql/root.crt`.
    None,
    /// A PEM file.
    File(PathBuf),
    /// `sslrootcert=system`: the platform's trusted roots (and `verify-full`, as libpq).
    System,
}

/// What the connection's TLS is to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tls {
    pub mode: Mode,
    pub roots: Roots,
}

impl Tls {
    /// tokio-postgres' own mode: whether to ask the server for TLS and whether it must be.
    pub fn ssl_mode(&self) -> SslMode {
        match self.mode {
            Mode::Disable => SslMode::Disable,
            Mode::Allow | Mode::Prefer => SslMode::Prefer,
            Mode::Require | Mode::VerifyCa | Mode::VerifyFull => SslMode::Require,
        }
    }

    /// Whether the server's certificate chain is checked against the roots.
    fn checks_chain(&self) -> bool {
        self.mode.verifies() || (self.mode != Mode::Disable && self.roots != Roots::None)
    }

    /// The connector that does what the mode asks.
    pub fn connector(&self) -> Result<MakeTlsConnector, String> {
        let failed = |e: openssl::error::ErrorStack| format!("setting up TLS: {e}");
        let mut builder = SslConnector::builder(SslMethod::tls_client()).map_err(failed)?;
        if self.checks_chain() {
            match &self.roots {
                Roots::None => {
                    return Err(format!(
                        "sslmode {} needs root certificates: give sslrootcert=FILE (or \
                         sslrootcert=system) in the URL, or PGSSLROOTCERT, or put them in \
                         ~/.postgresql/root.crt",
                        self.mode_name()
                    ))
                }
                Roots::System => builder.set_default_verify_paths().map_err(failed)?,
                Roots::File(path) => {
                    for cert in read_roots(path)? {
                        builder.cert_store_mut().add_cert(cert).map_err(failed)?;
                    }
                }
            }
            builder.set_verify(SslVerifyMode::PEER);
        } else {
            builder.set_verify(SslVerifyMode::NONE);
        }
        let mut connector = MakeTlsConnector::new(builder.build());
        let (chain, name) = (self.checks_chain(), self.mode == Mode::VerifyFull);
        connector.set_callback(move |config, _host| {
            config.set_verify_hostname(chain && name);
            if !chain {
                config.set_verify(SslVerifyMode::NONE);
            }
            Ok(())
        });
        Ok(connector)
    }

    fn mode_name(&self) -> &'static str {
        Mode::ALL
            .iter()
            .find(|(_, m)| *m == self.mode)
            .map_or("?", |(n, _)| n)
    }
}

/// The PEM certificates of `path`, read once, at most [`MAX_ROOT_BYTES`].
fn read_roots(path: &Path) -> Result<Vec<X509>, String> {
    use std::io::Read;
    let shown = path.display();
    let file = std::fs::File::open(path).map_err(|e| format!("sslrootcert {shown}: {e}"))?;
    let mut pem = Vec::new();
    file.take(MAX_ROOT_BYTES + 1)
        .read_to_end(&mut pem)
        .map_err(|e| format!("sslrootcert {shown}: {e}"))?;
    if pem.len() as u64 > MAX_ROOT_BYTES {
        return Err(format!(
            "sslrootcert {shown}: over {} MiB, no certificate file",
            MAX_ROOT_BYTES >> 20
        ));
    }
    let certs = X509::stack_from_pem(&pem)
        .map_err(|e| format!("sslrootcert {shown}: not PEM certificates ({e})"))?;
    if certs.is_empty() {
        return Err(format!("sslrootcert {shown}: holds no certificate"));
    }
    Ok(certs)
}

/// The URL without its TLS parameters, and what they ask: `sslmode` (else `PGSSLMODE`, else
/// `prefer`) and `sslrootcert` (else `PGSSLROOTCERT`, else `~/.postgresql/root.crt` where that
/// file is).
pub fn split(url: &str, env: impl Fn(&str) -> Option<String>) -> Result<(String, Tls), String> {
    let (rest, params) = take_params(url, &["sslmode", "sslrootcert"]);
    let param = |k: &str| params.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    let mode = match param("sslmode").or_else(|| env("PGSSLMODE")) {
        Some(m) => Mode::parse(&m)?,
        None => Mode::Prefer,
    };
    let roots = match param("sslrootcert").or_else(|| env("PGSSLROOTCERT")) {
        Some(r) if r == "system" => Roots::System,
        Some(r) => Roots::File(PathBuf::from(r)),
        None => env("HOME")
            .map(|h| Path::new(&h).join(".postgresql/root.crt"))
            .filter(|p| p.is_file())
            .map_or(Roots::None, Roots::File),
    };
    // libpq: sslrootcert=system is only safe with the host's name checked.
    let mode = if roots == Roots::System && mode != Mode::Disable {
        Mode::VerifyFull
    } else {
        mode
    };
    Ok((rest, Tls { mode, roots }))
}

/// `url` without the query parameters named in `names`, and their values (percent-decoded).
fn take_params(url: &str, names: &[&str]) -> (String, Vec<(String, String)>) {
    let Some((base, query)) = url.split_once('?') else {
        return (url.to_string(), Vec::new());
    };
    let mut kept = Vec::new();
    let mut taken = Vec::new();
    for pair in query.split('&') {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        if names.contains(&k) {
            let v = percent_encoding::percent_decode_str(v)
                .decode_utf8_lossy()
                .into_owned();
            taken.push((k.to_string(), v));
        } else {
            kept.push(pair);
        }
    }
    let rest = if kept.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    (rest, taken)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn the_tls_parameters_are_taken_out_of_the_url_and_read_as_libpq_reads_them() {
        let (rest, tls) = split(
            "postgresql://u@db.example/hb?sslmode=verify-full&sslrootcert=%2Fetc%2Fca.pem&connect_timeout=5",
            no_env,
        )
        .unwrap();
        assert_eq!(rest, "postgresql://u@db.example/hb?connect_timeout=5");
        assert_eq!(tls.mode, Mode::VerifyFull);
        assert_eq!(tls.roots, Roots::File("/etc/ca.pem".into()));
        assert_eq!(tls.ssl_mode(), SslMode::Require);
        let (rest, tls) = split("postgresql://u@db/hb", no_env).unwrap();
        assert_eq!(
            (rest.as_str(), tls.mode),
            ("postgresql://u@db/hb", Mode::Prefer)
        );
        assert_eq!(tls.ssl_mode(), SslMode::Prefer);
        // The environment where the URL says nothing; system roots check the name.
        let env = |k: &str| match k {
            "PGSSLMODE" => Some("require".to_string()),
            "PGSSLROOTCERT" => Some("system".to_string()),
            _ => None,
        };
        let (_, tls) = split("postgresql://u@db/hb?sslmode=verify-ca", env).unwrap();
        assert_eq!((tls.mode, tls.roots), (Mode::VerifyFull, Roots::System));
        let (_, tls) = split("postgresql://u@db/hb?sslrootcert=/ca", env).unwrap();
        assert_eq!(tls.mode, Mode::Require);
        assert!(tls.checks_chain(), "require with roots checks the chain");
        let e = split("postgresql://u@db/hb?sslmode=verify", no_env).unwrap_err();
        assert!(e.contains("sslmode \"verify\" is none of disable"), "{e}");
    }

    #[test]
    fn a_verifying_mode_without_roots_is_refused_and_a_bad_roots_file_is_named() {
        let tls = Tls {
            mode: Mode::VerifyFull,
            roots: Roots::None,
        };
        assert!(tls
            .connector()
            .err()
            .unwrap()
            .contains("needs root certificates"));
        let dir = tempfile::tempdir().unwrap();
        let junk = dir.path().join("junk.pem");
        std::fs::write(&junk, "not a certificate").unwrap();
        let tls = Tls {
            mode: Mode::VerifyCa,
            roots: Roots::File(junk),
        };
        let e = tls.connector().err().unwrap();
        assert!(e.contains("junk.pem") && e.contains("certificate"), "{e}");
        let plain = Tls {
            mode: Mode::Require,
            roots: Roots::None,
        };
        assert!(plain.connector().is_ok() && !plain.checks_chain());
    }
}

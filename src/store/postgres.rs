//! Results in a PostgreSQL database shared by many hosts: the same `results` table as the
//! SQLite store (see `migrations`), reached by URL (`postgres://user@host/db`, or
//! `postgresql:///db?host=/run/postgresql` for a Unix socket). Each statement is a transaction
//! of its own, so a result arrives whole or not at all, and any number of hosts can store at
//! once.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::{anyhow, bail, Result};
use chrono::{DateTime, Utc};
use tokio_postgres::types::ToSql;
use tokio_postgres::Client;

use super::pg_tls;
use super::sql;
use super::{
    migrations, Filter, Identity, IdentityOf, ResultStore, Runs, StoredEntry, StoredFigures,
    FIGURE_COLUMNS, IDENTITY_COLUMNS,
};
use crate::error::{said_of, UsageError};
use crate::model::figures::Kept;
use crate::model::headline::HeadlineFigures;
use crate::model::run_state::RunState;
use crate::model::{RunResult, SCHEMA_VERSION};
use crate::platform::signals::StopSignal;
use crate::text::Text;

/// A lock number of hostbench's own, held while the layout is checked and migrated, so that
/// hosts opening a new store at once migrate it once.
const LAYOUT_LOCK: i64 = 0x686f_7374_6265_6e63;

/// How long a connection may take, handshake and authentication included, unless the URL
/// says (`connect_timeout=S`, as libpq reads it).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// TCP keepalives, unless the URL says (`keepalives_idle`, `keepalives_interval`,
/// `keepalives_retries`): a server whose host vanished is noticed within about a minute.
const KEEPALIVE_IDLE: Duration = Duration::from_secs(30);
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(10);
const KEEPALIVE_RETRIES: u32 = 3;
/// `--db-timeout`'s default: the server's `statement_timeout`, and (plus `ANSWER_GRACE`) the
/// longest hostbench waits for any one answer from the server.
pub const STATEMENT_TIMEOUT: Duration = Duration::from_secs(30);
const ANSWER_GRACE: Duration = Duration::from_secs(5);
/// The longest wait for an answer once a stop was asked for (the stopped run's last store):
/// the result then goes to its JSON file instead.
const STOPPING_WAIT: Duration = Duration::from_secs(5);

/// The server is driven by a runtime of its own (one thread, this one) so that every wait on
/// it is bounded: a server that accepts and never answers, or one stopped (SIGSTOP) mid-run,
/// costs at most the timeout, and a stop signal during the wait cuts it short. A connection
/// that once timed out is not used again (its state is unknown).
pub struct PgStore {
    runtime: tokio::runtime::Runtime,
    client: Client,
    /// Why the connection was given up, once it was.
    broken: std::cell::RefCell<Option<String>>,
    answer_timeout: Duration,
    /// The URL without its password, for messages.
    location: String,
    /// The layout this open found and the one it left, where it made or migrated it.
    migrated: Option<(i64, i64)>,
}

impl PgStore {
    /// Connects, creates or migrates the layout where it is not the latest (a host with the
    /// writer role, which may not create tables, stores into a migrated database), and tries
    /// one write, rolled back, so a role that may not insert is refused before a run.
    pub fn open(url: &str, statement_timeout: Duration) -> Result<PgStore> {
        let mut store = Self::connect(url, statement_timeout)?;
        match store.layout_version().map_err(|e| store.explain(e))? {
            Some(v) if v > migrations::latest() => {
                return Err(store.explain(anyhow!(migrations::too_new(v))))
            }
            Some(v) if v == migrations::latest() => {}
            v => store.prepare_layout().map_err(|e| {
                // A host's login may not migrate: say whose job it is.
                let e = if e.is::<UsageError>() {
                    UsageError::new(format!(
                        "the store is at layout {}, this hostbench writes layout {}: the database's owner applies the migrations first (docs/fleet.md, \"Upgrading\"); this login may not ({e:#})",
                        v.unwrap_or(0),
                        migrations::latest()
                    ))
                    .into()
                } else {
                    e
                };
                store.explain(e)
            })?,
        }
        store.probe_write().map_err(|e| store.explain(e))?;
        Ok(store)
    }

    /// Connects for reading only: None when the database has no hostbench layout yet.
    pub fn open_read_only(url: &str, statement_timeout: Duration) -> Result<Option<PgStore>> {
        let store = Self::connect(url, statement_timeout)?;
        let version = store.layout_version().map_err(|e| store.explain(e))?;
        match version {
            None => Ok(None),
            Some(v) if v > migrations::latest() => {
                Err(store.explain(anyhow!(migrations::too_new(v))))
            }
            Some(_) => Ok(Some(store)),
        }
    }

    fn connect(url: &str, statement_timeout: Duration) -> Result<PgStore> {
        let location = without_password(url);
        let (parsed, tls) = pg_tls::split(url, |k| std::env::var(k).ok())
            .map_err(|e| UsageError::new(format!("{location}: {e}")))?;
        let mut config: tokio_postgres::Config = parsed
            .parse()
            .map_err(|e| anyhow!("{location}: not a PostgreSQL URL ({e})"))?;
        with_environment(&mut config, |k| std::env::var(k).ok());
        with_timeouts(&mut config, url);
        let tls = on_sockets(&config, tls);
        config.ssl_mode(tls.ssl_mode());
        let connector = tls
            .connector()
            .map_err(|e| UsageError::new(format!("{location}: {e}")))?;
        let connect_limit = *config.get_connect_timeout().unwrap_or(&CONNECT_TIMEOUT);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .map_err(|e| anyhow!("{location}: starting the client: {e}"))?;
        let connected = bounded(&runtime, connect_limit, config.connect(connector)).and_then(|r| {
            r.map_err(|e| {
                anyhow!(
                    "{}",
                    connect_failure(&e, &config, |k| std::env::var(k).ok())
                )
            })
        });
        let (client, connection) =
            connected.map_err(|e| anyhow!("{location}: cannot connect ({e:#})"))?;
        runtime.spawn(connection);
        let store = PgStore {
            runtime,
            client,
            broken: std::cell::RefCell::new(None),
            answer_timeout: statement_timeout + ANSWER_GRACE,
            location,
            migrated: None,
        };
        let ms = statement_timeout.as_millis().max(1);
        store
            .answer(|c| async move {
                c.batch_execute(&format!("SET statement_timeout = {ms}"))
                    .await
            })
            .map_err(|e| store.explain(e))?;
        Ok(store)
    }

    /// `e` said of this store; still the user's to fix (exit 2) when it was.
    fn explain(&self, e: anyhow::Error) -> anyhow::Error {
        said_of(e, &self.location)
    }

    /// The server's answer to what `ask` sends, waited for at most the answer timeout (less
    /// once a stop was asked for, and no longer once one is asked for during the wait).
    fn answer<'a, T, F>(&'a self, ask: impl FnOnce(&'a Client) -> F) -> Result<T>
    where
        F: Future<Output = Result<T, tokio_postgres::Error>> + 'a,
    {
        given_up(&self.broken)?;
        let answered = bounded(&self.runtime, self.answer_timeout, ask(&self.client));
        settle(&self.broken, answered)
    }

    /// As `answer`, for what needs the client to itself (a transaction).
    fn answer_mut<'a, T, F>(&'a mut self, ask: impl FnOnce(&'a mut Client) -> F) -> Result<T>
    where
        F: Future<Output = Result<T, tokio_postgres::Error>> + 'a,
    {
        given_up(&self.broken)?;
        let answered = bounded(&self.runtime, self.answer_timeout, ask(&mut self.client));
        settle(&self.broken, answered)
    }

    /// The hostname and headline figures of the results `sql` selects (id, host, figures).
    fn figures_by(&self, sql: &str, params: &[String]) -> Result<HashMap<i64, StoredFigures>> {
        let rows = self.select(sql, params)?;
        Ok(rows
            .iter()
            .map(|r| {
                let figures: Option<String> = r.get(2);
                (
                    r.get(0),
                    StoredFigures {
                        hostname: r.get(1),
                        figures: figures.as_deref().and_then(HeadlineFigures::parse),
                    },
                )
            })
            .collect())
    }

    /// The rows a statement of `Filter`'s making (`sql`, its text `params`) selects.
    fn select(&self, sql: &str, params: &[String]) -> Result<Vec<tokio_postgres::Row>> {
        let params: Vec<&(dyn ToSql + Sync)> =
            params.iter().map(|p| p as &(dyn ToSql + Sync)).collect();
        let params = &params;
        self.answer(|c| async move { c.query(sql, params).await })
            .map_err(|e| self.explain(e))
    }

    /// The layout version recorded in the database; None before hostbench's first use of it.
    fn layout_version(&self) -> Result<Option<i64>> {
        self.answer(|c| async move {
            let exists: bool = c
                .query_one("SELECT to_regclass('hostbench_layout') IS NOT NULL", &[])
                .await?
                .get(0);
            if !exists {
                return Ok(None);
            }
            let v: Option<i64> = c
                .query_one("SELECT max(version)::BIGINT FROM hostbench_layout", &[])
                .await?
                .get(0);
            Ok(Some(v.unwrap_or(0)))
        })
    }

    /// Applies the migrations after the recorded version in one transaction, under
    /// hostbench's advisory lock; a newer layout is refused.
    fn prepare_layout(&mut self) -> Result<()> {
        let version = self.answer_mut(|c| async move {
            let tx = c.transaction().await?;
            tx.execute("SELECT pg_advisory_xact_lock($1)", &[&LAYOUT_LOCK])
                .await?;
            tx.batch_execute(
                "CREATE TABLE IF NOT EXISTS hostbench_layout (version BIGINT NOT NULL)",
            )
            .await?;
            let version: i64 = tx
                .query_one(
                    "SELECT coalesce(max(version), 0)::BIGINT FROM hostbench_layout",
                    &[],
                )
                .await?
                .get(0);
            if version > migrations::latest() {
                return Ok(Err(migrations::too_new(version)));
            }
            for m in migrations::after(version) {
                // The UUIDs stored before are respelled before the checks that hold new rows
                // to the one spelling exist (an update is checked even under NOT VALID).
                if m.version == migrations::UUIDS && version > 0 {
                    respell_uuids(&tx).await?;
                }
                if let Err(e) = tx.batch_execute(m.postgres).await {
                    return Ok(Err(format!(
                        "migration {} ({}): {}",
                        m.version,
                        m.what,
                        reason(&e)
                    )));
                }
                if m.version == migrations::REFIGURES && version > 0 {
                    fill_within(
                        &tx,
                        &migrations::FILL_REFIGURES,
                        migrations::figures_of_stored,
                    )
                    .await?;
                }
                tx.execute(
                    "INSERT INTO hostbench_layout (version) VALUES ($1)",
                    &[&m.version],
                )
                .await?;
            }
            tx.commit().await?;
            Ok(Ok(version))
        })?;
        let before = version.map_err(|why| anyhow!(why))?;
        self.migrated = (before < migrations::latest()).then_some((before, migrations::latest()));
        if before > 0 && before < migrations::FIGURES {
            self.fill(&migrations::FILL_FIGURES, migrations::figures_of_stored)?;
        }
        if before > 0 && before < migrations::KEPT {
            self.fill(&migrations::FILL_KEPT, migrations::kept_of_stored)?;
        }
        Ok(())
    }

    /// What a migration adds to the rows stored before it (`migrations::Fill`), each row read
    /// once, a batch a transaction so that every wait stays bounded however many rows there
    /// are. Run by the table's owner (who alone migrates), whom the row-level security does
    /// not bind. A batch cut short leaves its rows without: they are read whole when needed,
    /// as before.
    fn fill(
        &mut self,
        what: &migrations::Fill,
        of_stored: fn(i64, &str) -> Option<String>,
    ) -> Result<()> {
        const BATCH: i64 = 200;
        let mut after = 0i64;
        let select = format!(
            "SELECT id, schema_version, result_json FROM results
             WHERE ({}) AND id > $1 ORDER BY id LIMIT $2",
            what.missing
        );
        let (select, write) = (&select, what.write);
        loop {
            let last = self.answer_mut(|c| async move {
                let tx = c.transaction().await?;
                let rows = tx.query(select, &[&after, &BATCH]).await?;
                for row in &rows {
                    let (id, schema, json): (i64, i32, String) =
                        (row.get(0), row.get(1), row.get(2));
                    if let Some(value) = of_stored(schema.into(), &json) {
                        tx.execute(write, &[&id, &value]).await?;
                    }
                }
                tx.commit().await?;
                Ok(rows.last().map(|r| r.get::<_, i64>(0)))
            })?;
            match last {
                Some(id) => after = id,
                None => return Ok(()),
            }
        }
    }

    /// The login's rights, asked of the server: a role that may not write, a database in
    /// read-only mode, says so before a run is measured rather than at its end. (Which hosts
    /// the login may write for, the row-level security decides row by row: a run's first
    /// state is its first write, `Session::start`.)
    fn probe_write(&mut self) -> Result<()> {
        let (tables, read_only) = self.answer(|c| async move {
            let row = c
                .query_one(
                    "SELECT array_remove(ARRAY[
                         CASE WHEN has_table_privilege('results', 'INSERT') THEN NULL ELSE 'results' END,
                         CASE WHEN has_table_privilege('runs', 'INSERT') THEN NULL ELSE 'runs' END,
                         CASE WHEN has_table_privilege('result_tags', 'INSERT') THEN NULL ELSE 'result_tags' END,
                         CASE WHEN has_table_privilege('result_figures', 'INSERT') THEN NULL ELSE 'result_figures' END
                     ], NULL),
                     pg_is_in_recovery() OR current_setting('transaction_read_only') = 'on'",
                    &[],
                )
                .await?;
            Ok((row.get::<_, Vec<String>>(0), row.get::<_, bool>(1)))
        })?;
        if let Some(table) = tables.first() {
            bail!("it cannot be written: permission denied for table {table}");
        }
        if read_only {
            bail!("it cannot be written: the database is read only");
        }
        Ok(())
    }

    /// Whether result `id` is there, as this login sees it.
    fn find_id(&self, id: i64) -> Result<Option<i64>> {
        let row = self
            .answer(|c| async move {
                c.query_opt("SELECT id FROM results WHERE id = $1", &[&id])
                    .await
            })
            .map_err(|e| self.explain(e))?;
        Ok(row.map(|r| r.get(0)))
    }

    /// Another login's result is refused, naming its login, unless this login owns the table
    /// (the database's owner deletes any): row-level security would delete nothing, silently.
    /// Runs `statements` (each `… = ANY($1)`) over `keys`, [`super::DELETE_CHUNK`] at a time,
    /// in one transaction; says how many rows the last one removed (row-level security may
    /// leave another login's).
    fn delete_chunked<T>(
        &mut self,
        statements: &'static [&'static str],
        keys: &[T],
    ) -> Result<usize>
    where
        T: Clone,
        Vec<T>: ToSql + Sync,
    {
        let chunks: Vec<Vec<T>> = keys
            .chunks(super::DELETE_CHUNK)
            .map(<[T]>::to_vec)
            .collect();
        let gone = self
            .answer_mut(|c| async move {
                let tx = c.transaction().await?;
                let mut gone = 0;
                for chunk in &chunks {
                    for (i, sql) in statements.iter().enumerate() {
                        let n = tx.execute(*sql, &[chunk]).await?;
                        if i + 1 == statements.len() {
                            gone += n;
                        }
                    }
                }
                tx.commit().await?;
                Ok(gone)
            })
            .map_err(|e| self.explain(e))?;
        Ok(gone as usize)
    }

    fn refuse_another(&self, id: i64) -> Result<()> {
        if let Some(owner) = self.stored_by_another(id)? {
            // Row-level security would delete nothing, silently: say whose it is.
            let owns_table = self
                .answer(|c| async move {
                    c.query_one(
                        "SELECT tableowner = current_user FROM pg_tables WHERE tablename = 'results' AND schemaname = current_schema()",
                        &[],
                    )
                    .await
                })
                .map_err(|e| self.explain(e))?
                .get::<_, bool>(0);
            if !owns_table {
                return Err(UsageError::new(format!(
                    "{}: result {id} belongs to the login {}; a login may delete only the results it stored",
                    self.location,
                    crate::model::label::printable(&owner, 64)
                ))
                .into());
            }
        }
        Ok(())
    }
}

/// An error at once when the connection was given up (it once timed out: its state is
/// unknown).
fn given_up(broken: &std::cell::RefCell<Option<String>>) -> Result<()> {
    match broken.borrow().as_ref() {
        Some(why) => bail!("the connection was given up earlier ({why})"),
        None => Ok(()),
    }
}

/// The server's answer, or why there is none; a wait that ran out gives the connection up.
fn settle<T>(
    broken: &std::cell::RefCell<Option<String>>,
    answered: Result<Result<T, tokio_postgres::Error>>,
) -> Result<T> {
    match answered {
        Ok(r) => r.map_err(|e| refusal(&e)),
        Err(e) => {
            *broken.borrow_mut() = Some(format!("{e:#}"));
            Err(e)
        }
    }
}

/// Runs `work` on `runtime` for at most `limit`; if a stop was already asked for, at most
/// `STOPPING_WAIT`; and only until a stop is asked for while it waits.
fn bounded<T>(
    runtime: &tokio::runtime::Runtime,
    limit: Duration,
    work: impl Future<Output = T>,
) -> Result<T> {
    let stop = StopSignal::installed();
    let stopping = stop.as_ref().is_some_and(|s| s.is_requested());
    let limit = if stopping {
        limit.min(STOPPING_WAIT)
    } else {
        limit
    };
    runtime.block_on(async {
        let asked = async {
            match &stop {
                Some(s) if !stopping => {
                    while !s.flag().load(Ordering::Relaxed) {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                }
                _ => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            done = tokio::time::timeout(limit, work) => done.map_err(|_| {
                anyhow!("the server did not answer within {} s", limit.as_secs_f64())
            }),
            () = asked => Err(anyhow!("stopped while waiting for the server")),
        }
    })
}

/// What a row-level security refusal means on a fleet store (layout 12).
const NOT_BOUND: &str = "this login writes only for the hosts the database's owner bound to it \
     (table hostbench_hosts, docs/fleet.md \"A host is its login\"), and no run another login \
     recorded first";

/// An error from the server as hostbench reports it: a privilege the login lacks is the
/// user's to fix (the roles, docs/fleet.md: exit 2); anything else is the store failing.
fn refusal(e: &tokio_postgres::Error) -> anyhow::Error {
    if e.code() == Some(&tokio_postgres::error::SqlState::INSUFFICIENT_PRIVILEGE) {
        let why = reason(e);
        if why.contains("row-level security") {
            return UsageError::new(format!("{why}: {NOT_BOUND}")).into();
        }
        return UsageError::new(why).into();
    }
    anyhow!("{}", reason(e))
}

/// The server's own reason for an error (`password authentication failed for user "x"`),
/// which the client's message alone (`db error`) leaves out.
fn reason(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => match db.detail() {
            Some(d) => format!("{} ({d})", db.message()),
            None => db.message().to_string(),
        },
        None => {
            let mut text = e.to_string();
            let mut source = std::error::Error::source(e);
            while let Some(s) = source {
                text.push_str(&format!(": {s}"));
                source = s.source();
            }
            text
        }
    }
}

/// Why a connection failed, said so the user knows what to fix: the server's own reason
/// (authentication failed, no such database or role), no password found and where one was
/// looked for, or no server where the URL points.
fn connect_failure(
    e: &tokio_postgres::Error,
    config: &tokio_postgres::Config,
    env: impl Fn(&str) -> Option<String>,
) -> String {
    let user = config.get_user().unwrap_or("?");
    if e.as_db_error().is_none() && reason(e).contains("password missing") {
        let file = password_file(&env).unwrap_or_else(|| "~/.pgpass".into());
        let state = match read_password_file(&file) {
            Ok(_) => "no line matches".to_string(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => "not there".to_string(),
            Err(e) => e.to_string(),
        };
        return format!(
            "the server wants a password for user {user} and none was found: not in the URL, not in PGPASSWORD, and the password file {file} ({state}; PGPASSFILE names another)"
        );
    }
    let io = std::error::Error::source(e).and_then(|s| s.downcast_ref::<std::io::Error>());
    if let Some(io) = io {
        let port = config.get_ports().first().copied().unwrap_or(5432);
        let at: Vec<String> = config
            .get_hosts()
            .iter()
            .map(|h| match h {
                tokio_postgres::config::Host::Tcp(h) => format!("{h}:{port}"),
                tokio_postgres::config::Host::Unix(d) => {
                    format!("the socket {}/.s.PGSQL.{port}", d.display())
                }
            })
            .collect();
        return format!("no server answers at {} ({io})", at.join(", "));
    }
    reason(e)
}

/// The most of a password file read: far more than any fleet's lines.
const MAX_PASSWORD_FILE: u64 = 1 << 20;

/// A password file's text, under libpq's rules (`files::read_private`): a regular file of
/// mode 0600 or less, read bounded.
fn read_password_file(file: &str) -> std::io::Result<Vec<u8>> {
    crate::platform::files::read_private(std::path::Path::new(file), MAX_PASSWORD_FILE)
}

/// The password file libpq reads: PGPASSFILE, else ~/.pgpass.
fn password_file(env: &impl Fn(&str) -> Option<String>) -> Option<String> {
    env("PGPASSFILE").or_else(|| env("HOME").map(|h| format!("{h}/.pgpass")))
}

/// The connection's timeouts and keepalives where the URL does not set its own.
/// No TLS where every host is a Unix socket: the server offers none there, and libpq asks for
/// none whatever `sslmode` says.
fn on_sockets(config: &tokio_postgres::Config, tls: pg_tls::Tls) -> pg_tls::Tls {
    let sockets = !config.get_hosts().is_empty()
        && config
            .get_hosts()
            .iter()
            .all(|h| !matches!(h, tokio_postgres::config::Host::Tcp(_)));
    if sockets {
        pg_tls::Tls {
            mode: pg_tls::Mode::Disable,
            roots: pg_tls::Roots::None,
        }
    } else {
        tls
    }
}

fn with_timeouts(config: &mut tokio_postgres::Config, url: &str) {
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    if !url.contains("keepalives_idle=") {
        config.keepalives_idle(KEEPALIVE_IDLE);
    }
    if config.get_keepalives_interval().is_none() {
        config.keepalives_interval(KEEPALIVE_INTERVAL);
    }
    if config.get_keepalives_retries().is_none() {
        config.keepalives_retries(KEEPALIVE_RETRIES);
    }
}

/// Fills what the URL leaves out as libpq does: the host, port, user and database from
/// `PGHOST`, `PGPORT`, `PGUSER` (else the login name) and `PGDATABASE` (else the user), and
/// the password from `PGPASSWORD` or the password file (`PGPASSFILE`, else `~/.pgpass`), so
/// that no password need be written on a command line.
fn with_environment(config: &mut tokio_postgres::Config, env: impl Fn(&str) -> Option<String>) {
    if config.get_hosts().is_empty() {
        let host = env("PGHOST").unwrap_or_else(|| "/var/run/postgresql".into());
        for h in host.split(',') {
            if h.starts_with('/') {
                config.host_path(h);
            } else {
                config.host(h);
            }
        }
    }
    if config.get_ports().is_empty() {
        if let Some(p) = env("PGPORT").and_then(|p| p.parse().ok()) {
            config.port(p);
        }
    }
    if config.get_user().is_none() {
        if let Some(u) = env("PGUSER").or_else(|| env("USER")) {
            config.user(&u);
        }
    }
    if config.get_dbname().is_none() {
        if let Some(d) = env("PGDATABASE").or_else(|| config.get_user().map(str::to_string)) {
            config.dbname(&d);
        }
    }
    if config.get_password().is_none() {
        let from_file = || {
            let file = password_file(&env)?;
            let text = String::from_utf8(read_password_file(&file).ok()?).ok()?;
            let host = match config.get_hosts().first() {
                Some(tokio_postgres::config::Host::Tcp(h)) => h.clone(),
                _ => "localhost".to_string(),
            };
            let port = config
                .get_ports()
                .first()
                .copied()
                .unwrap_or(5432)
                .to_string();
            password_from_file(
                &text,
                [
                    host.as_str(),
                    &port,
                    config.get_dbname().unwrap_or_default(),
                    config.get_user().unwrap_or_default(),
                ],
            )
        };
        if let Some(p) = env("PGPASSWORD").or_else(from_file) {
            config.password(p);
        }
    }
}

/// The password of the first line of a password file (`host:port:database:user:password`,
/// `*` for any, `\:` a colon) that matches; a Unix socket counts as `localhost`, as in libpq.
fn password_from_file(text: &str, wanted: [&str; 4]) -> Option<String> {
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let mut fields = Vec::new();
        let mut field = String::new();
        let mut chars = line.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => field.extend(chars.next()),
                ':' if fields.len() < 4 => fields.push(std::mem::take(&mut field)),
                _ => field.push(c),
            }
        }
        if fields.len() != 4 {
            continue;
        }
        if fields.iter().zip(wanted).all(|(f, w)| f == "*" || f == w) {
            return Some(field);
        }
    }
    None
}

/// A result's tags and its `result_figures` row (`kept`, layout 9), in place of those it had.
async fn write_beside(
    tx: &tokio_postgres::Transaction<'_>,
    id: i64,
    result: &RunResult,
    kept: &str,
) -> Result<(), tokio_postgres::Error> {
    tx.execute(&sql::DELETE_FIGURES.postgres(), &[&id]).await?;
    tx.execute(&sql::INSERT_FIGURES.postgres(), &[&id, &kept])
        .await?;
    tx.execute(&sql::DELETE_TAGS.postgres(), &[&id]).await?;
    for (k, v) in &result.tags {
        tx.execute(&sql::INSERT_TAG.postgres(), &[&id, &k.raw(), &v.raw()])
            .await?;
    }
    Ok(())
}

/// `postgres://user:secret@host/db?password=secret` said without `secret`.
pub(super) fn without_password(url: &str) -> String {
    super::redact_argument(url)
}

/// What a migration adds to the rows stored before it, in the migration's own transaction
/// (all or nothing: [`migrations::REFIGURES`]), read a batch at a time so that no more than a
/// batch of results is held at once.
async fn fill_within(
    tx: &tokio_postgres::Transaction<'_>,
    what: &migrations::Fill,
    of_stored: fn(i64, &str) -> Option<String>,
) -> Result<(), tokio_postgres::Error> {
    const BATCH: i64 = 200;
    let select = format!(
        "SELECT id, schema_version, result_json FROM results
         WHERE ({}) AND id > $1 ORDER BY id LIMIT $2",
        what.missing
    );
    let mut after = 0i64;
    loop {
        let rows = tx.query(&select, &[&after, &BATCH]).await?;
        let Some(last) = rows.last() else {
            return Ok(());
        };
        after = last.get(0);
        for row in &rows {
            let (id, schema, json): (i64, i32, String) = (row.get(0), row.get(1), row.get(2));
            if let Some(value) = of_stored(schema.into(), &json) {
                tx.execute(what.write, &[&id, &value]).await?;
            }
        }
    }
}

/// Layout [`migrations::UUIDS`]: every stored UUID put in its one spelling
/// ([`migrations::respelled`]), in the migration's transaction, by the store's owner (whom the
/// row-level security does not bind): renamed, or — another spelling of a run stored already —
/// dropped with its tags and figures.
async fn respell_uuids(tx: &tokio_postgres::Transaction<'_>) -> Result<(), tokio_postgres::Error> {
    let rows = tx
        .query(
            "SELECT id, coalesce(uuid, ''), result_json, started_at, host, machine_id FROM results
             WHERE uuid IS NULL
                OR uuid !~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
                OR uuid IN ('00000000-0000-0000-0000-000000000000',
                            'ffffffff-ffff-ffff-ffff-ffffffffffff')",
            &[],
        )
        .await?;
    for row in &rows {
        let (id, uuid, json): (i64, String, String) = (row.get(0), row.get(1), row.get(2));
        let (started, host, machine): (String, String, Option<String>) =
            (row.get(3), row.get(4), row.get(5));
        let holder = |target: String| {
            let (started, host, machine) = (&started, &host, &machine);
            async move {
                let held = tx
                    .query_opt(&sql::SAME_UUID.postgres(), &[&target, &id])
                    .await?;
                Ok::<_, tokio_postgres::Error>(held.map(|r| {
                    r.get::<_, String>(0) == *started
                        && r.get::<_, String>(1) == *host
                        && r.get::<_, Option<String>>(2) == *machine
                }))
            }
        };
        let held = match crate::model::canonical_uuid(&uuid) {
            Some(c) => holder(c).await?,
            None => None,
        };
        let respelling = match migrations::respelled(&uuid, &json, held) {
            migrations::Respelling::Rename { uuid: new, .. }
                if holder(new.clone()).await?.is_some() =>
            {
                migrations::Respelling::Drop
            }
            other => other,
        };
        match respelling {
            migrations::Respelling::Drop => {
                tx.execute(&sql::DELETE_RESULT.postgres(), &[&id]).await?;
            }
            migrations::Respelling::Rename { uuid: new, json } => {
                tx.execute(&sql::SET_UUID.postgres(), &[&new, &json, &id])
                    .await?;
            }
        }
    }
    Ok(())
}

/// A result's columns after `id`, in table order (the order of the statements' placeholders).
struct Row {
    started_at: String,
    suites: String,
    host: String,
    headline: String,
    incomplete: bool,
    schema_version: i32,
    json: String,
    host_label: Option<String>,
    machine_id: Option<String>,
    uuid: String,
    repeat_group: Option<i64>,
    figures: String,
    /// Not a column of `results`: the `result_figures` row.
    kept: String,
}

impl Row {
    fn of(result: &RunResult, headline: &str) -> Result<Row> {
        let json = serde_json::to_string(result)?;
        Ok(Row {
            // A result of an earlier version is named after its JSON.
            uuid: result
                .uuid
                .clone()
                .unwrap_or_else(|| crate::model::derived_uuid(&json)),
            started_at: result.started_at.to_rfc3339(),
            suites: result.suite_names(),
            host: result.environment.host.hostname.raw().to_string(),
            headline: headline.to_string(),
            incomplete: result.incomplete,
            schema_version: result.schema_version as i32,
            json,
            host_label: result.host_label.as_ref().map(|t| t.raw().to_string()),
            machine_id: result
                .environment
                .host
                .machine_id
                .as_ref()
                .map(|t| t.raw().to_string()),
            repeat_group: result.repeat.map(|r| r.group),
            figures: serde_json::to_string(&HeadlineFigures::of(result))?,
            kept: serde_json::to_string(&Kept::of(result))?,
        })
    }

    fn params(&self) -> [&(dyn ToSql + Sync); 12] {
        [
            &self.started_at,
            &self.suites,
            &self.host,
            &self.headline,
            &self.incomplete,
            &self.schema_version,
            &self.json,
            &self.host_label,
            &self.machine_id,
            &self.uuid,
            &self.repeat_group,
            &self.figures,
        ]
    }
}

impl ResultStore for PgStore {
    fn migrated(&self) -> Option<(i64, i64)> {
        self.migrated
    }

    /// The row and its tags in one transaction: a result is stored whole or not at all.
    fn save(&mut self, result: &RunResult, headline: &str) -> Result<i64> {
        let row = Row::of(result, headline)?;
        let row = &row;
        self.answer_mut(|c| async move {
            let tx = c.transaction().await?;
            let id: i64 = tx
                .query_one(&sql::INSERT_RESULT.postgres(), &row.params())
                .await?
                .get(0);
            write_beside(&tx, id, result, &row.kept).await?;
            tx.commit().await?;
            Ok(id)
        })
        .map_err(|e| self.explain(e))
    }

    fn replace(&mut self, id: i64, result: &RunResult, headline: &str) -> Result<()> {
        let row = Row::of(result, headline)?;
        let mut params: Vec<&(dyn ToSql + Sync)> = vec![&id];
        params.extend(row.params());
        let (params, row) = (&params, &row);
        let replaced = self
            .answer_mut(|c| async move {
                let tx = c.transaction().await?;
                let changed = tx.execute(&sql::UPDATE_RESULT.postgres(), params).await?;
                if changed == 1 {
                    write_beside(&tx, id, result, &row.kept).await?;
                    tx.commit().await?;
                }
                Ok(changed)
            })
            .map_err(|e| self.explain(e))?;
        if replaced != 1 {
            // Row-level security hides another login's row from UPDATE: say whose it is.
            let owner = self.answer(|c| async move {
                let row = c
                    .query_opt(
                        "SELECT owner, owner = current_user FROM results WHERE id = $1",
                        &[&id],
                    )
                    .await?;
                Ok(row.map(|r| (r.get::<_, String>(0), r.get::<_, bool>(1))))
            })?;
            return Err(match owner {
                Some((owner, false)) => UsageError::new(format!(
                    "{}: result {id} belongs to the login {owner}; a login may change only the results it stored",
                    self.location
                ))
                .into(),
                _ => anyhow!("result {id} is no longer in {}", self.location),
            });
        }
        Ok(())
    }

    fn list(&self, filter: &Filter) -> Result<Vec<StoredEntry>> {
        let (clause, params) = filter.sql(|n| format!("${n}"));
        let rows = self.select(
            &format!(
                "SELECT id, started_at, suites, coalesce(host_label, host), headline, incomplete, owner FROM results {clause} ORDER BY id"
            ),
            &params,
        )?;
        Ok(rows
            .iter()
            .map(|r| {
                let started: String = r.get(1);
                let started_at = DateTime::parse_from_rfc3339(&started)
                    .ok()
                    .map(|t| t.with_timezone(&Utc));
                StoredEntry {
                    id: r.get(0),
                    problem: started_at
                        .is_none()
                        .then(|| format!("started_at {started:?} is not a time").into()),
                    started_at,
                    suites: Text::new(r.get::<_, String>(2)),
                    host: Text::new(r.get::<_, String>(3)),
                    headline: Text::new(r.get::<_, String>(4)),
                    incomplete: r.get(5),
                    owner: Some(Text::new(r.get::<_, String>(6))),
                }
            })
            .collect())
    }

    fn load(&self, id: i64) -> Result<Option<RunResult>> {
        let row = self
            .answer(|c| async move { c.query_opt(&sql::RESULT_JSON.postgres(), &[&id]).await })
            .map_err(|e| self.explain(e))?;
        let Some(row) = row else { return Ok(None) };
        let schema: i32 = row.get(0);
        if schema != SCHEMA_VERSION as i32 {
            bail!("result {id} has schema version {schema}; this hostbench reads version {SCHEMA_VERSION}");
        }
        let json: String = row.get(1);
        let mut result: RunResult = serde_json::from_str(&json)
            .map_err(|e| anyhow!("result {id} is malformed in the store: {e}"))?;
        // A result stored before it had a UUID has the one the store gave it.
        result.uuid = result.uuid.or(row.get(2));
        Ok(Some(result))
    }

    fn stored_by_another(&self, id: i64) -> Result<Option<String>> {
        let row = self
            .answer(|c| async move {
                c.query_opt(
                    "SELECT owner FROM results WHERE id = $1 AND owner <> current_user",
                    &[&id],
                )
                .await
            })
            .map_err(|e| self.explain(e))?;
        Ok(row.map(|r| r.get(0)))
    }

    fn identity(&self, of: IdentityOf<'_>) -> Result<Option<Identity>> {
        let sql = format!(
            "SELECT {IDENTITY_COLUMNS}, owner <> current_user FROM results WHERE {}",
            of.condition("$1")
        );
        let sql = &sql;
        let row = match of {
            IdentityOf::Id(id) => self.answer(|c| async move { c.query_opt(sql, &[&id]).await }),
            IdentityOf::Uuid(u) => self.answer(|c| async move { c.query_opt(sql, &[&u]).await }),
        };
        Ok(match row {
            Ok(Some(r)) => Identity::of(
                r.get(0),
                r.get(1),
                &r.get::<_, String>(2),
                r.get(3),
                r.get(4),
                r.get(5),
                r.get(6),
                r.get(7),
            ),
            _ => None,
        })
    }

    fn record_run(&mut self, state: &RunState) -> Result<bool> {
        let time = |t: Option<DateTime<Utc>>| t.map(|t| t.to_rfc3339());
        let (started, ended, tags) = (
            state.started_at.to_rfc3339(),
            time(state.ended_at),
            state.tags_json(),
        );
        let params: [&(dyn ToSql + Sync); 10] = [
            &state.uuid,
            &state.host.raw(),
            &state.host_label.as_ref().map(Text::raw),
            &state.command.raw(),
            &started,
            &ended,
            &state.outcome.name(),
            &state.why.as_ref().map(Text::raw),
            &state.stored.as_ref().map(Text::raw),
            &tags,
        ];
        let params = &params;
        // Another login's run (the same UUID) is not changed: row-level security refuses it.
        let written = self.answer(|c| async move {
            c.execute(
                "INSERT INTO runs (uuid, host, host_label, command, started_at, ended_at, outcome, why, stored, tags)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
                 ON CONFLICT (uuid) DO UPDATE SET ended_at = excluded.ended_at,
                     outcome = excluded.outcome, why = excluded.why, stored = excluded.stored
                 WHERE runs.ended_at IS NULL",
                params,
            )
            .await
        })
        .map_err(|e| self.explain(e))?;
        Ok(written > 0)
    }

    fn runs(&self, filter: &Filter, which: Runs) -> Result<Vec<RunState>> {
        // A store of a layout before 11 (read by a reader, who does not migrate) has no runs.
        let row = self
            .answer(|c| async move {
                c.query_one(
                    "SELECT to_regclass('runs') IS NOT NULL,
                            to_regprocedure('hostbench_time(text)') IS NOT NULL",
                    &[],
                )
                .await
            })
            .map_err(|e| self.explain(e))?;
        let (has_runs, parses_times): (bool, bool) = (row.get(0), row.get(1));
        if !has_runs {
            return Ok(Vec::new());
        }
        // The tags column is a JSON object: a check on the table holds every writer to it.
        let placeholder = |n| format!("${n}");
        let tag = |k: &str, v: &str| format!("(tags::jsonb ->> {k}) = {v}");
        // Layout 12's parse of a time; before it, the text (which hostbench writes in one form).
        let time = if parses_times {
            "hostbench_time(started_at)"
        } else {
            "started_at"
        };
        let (sql, params) = filter.runs_sql(which, placeholder, tag, time);
        let rows = self.select(&sql, &params)?;
        Ok(rows
            .iter()
            .filter_map(|r| {
                super::RunColumns {
                    uuid: r.get(0),
                    host: r.get(1),
                    host_label: r.get(2),
                    command: r.get(3),
                    started_at: r.get(4),
                    ended_at: r.get(5),
                    outcome: r.get(6),
                    why: r.get(7),
                    stored: r.get(8),
                    tags: r.get(9),
                    owner: r.get(10),
                }
                .state()
            })
            .collect())
    }

    fn deletable(&self, id: i64) -> Result<()> {
        if self.find_id(id)?.is_none() {
            return Err(UsageError::new(format!(
                "no stored result with id {id} in {}",
                self.location
            ))
            .into());
        }
        self.refuse_another(id)
    }

    fn delete_many(&mut self, ids: &[i64]) -> Result<usize> {
        self.delete_chunked(
            &[
                "DELETE FROM result_tags WHERE result_id = ANY($1)",
                "DELETE FROM result_figures WHERE result_id = ANY($1)",
                "DELETE FROM results WHERE id = ANY($1)",
            ],
            ids,
        )
    }

    fn delete_runs(&mut self, uuids: &[String]) -> Result<usize> {
        self.delete_chunked(&["DELETE FROM runs WHERE uuid = ANY($1)"], uuids)
    }

    fn retired(&self) -> Result<Vec<(crate::text::Text, DateTime<Utc>)>> {
        // A store of a layout before 14 (read by a reader, who does not migrate) retired none.
        let has: bool = self
            .answer(|c| async move {
                c.query_one("SELECT to_regclass('retired_hosts') IS NOT NULL", &[])
                    .await
            })
            .map_err(|e| self.explain(e))?
            .get(0);
        if !has {
            return Ok(Vec::new());
        }
        let rows = self.select(super::RETIRED, &[])?;
        Ok(rows
            .iter()
            .filter_map(|r| {
                let name: Option<String> = r.try_get(0).ok()?;
                let at: Option<String> = r.try_get(1).ok()?;
                super::retired_row(name?, &at?)
            })
            .collect())
    }

    fn set_retired(&mut self, host: &str, at: Option<DateTime<Utc>>) -> Result<bool> {
        let (host, at) = (host.to_string(), at.map(|t| t.to_rfc3339()));
        let changed = self
            .answer(|c| async move {
                match &at {
                    Some(at) => c.execute(&sql::RETIRE.postgres(), &[&host, at]).await,
                    None => c.execute(&sql::UNRETIRE.postgres(), &[&host]).await,
                }
            })
            .map_err(|e| {
                // A privilege the login lacks is the one refusal said as the user's to fix.
                let owner_only = e.downcast_ref::<UsageError>().is_some();
                let e = self.explain(e);
                if owner_only {
                    UsageError::new(format!(
                        "{e:#}: only the store's owner retires a host or brings one back"
                    ))
                    .into()
                } else {
                    e
                }
            })?;
        Ok(changed > 0)
    }

    fn delete(&mut self, id: i64) -> Result<()> {
        self.refuse_another(id)?;
        let gone = self
            .answer_mut(|c| async move {
                let tx = c.transaction().await?;
                tx.execute(&sql::DELETE_TAGS.postgres(), &[&id]).await?;
                tx.execute(&sql::DELETE_FIGURES.postgres(), &[&id]).await?;
                let gone = tx.execute(&sql::DELETE_RESULT.postgres(), &[&id]).await?;
                tx.commit().await?;
                Ok(gone)
            })
            .map_err(|e| self.explain(e))?;
        if gone != 1 {
            return Err(UsageError::new(format!(
                "no stored result with id {id} in {}",
                self.location
            ))
            .into());
        }
        Ok(())
    }

    fn find(&self, uuid: &str) -> Result<Option<i64>> {
        let row = self
            .answer(|c| async move { c.query_opt(&sql::ID_OF_UUID.postgres(), &[&uuid]).await })
            .map_err(|e| self.explain(e))?;
        Ok(row.map(|r| r.get(0)))
    }

    fn hosts(&self, filter: &Filter) -> Result<Vec<Text>> {
        let (sql, params) = filter.hosts_sql(|n| format!("${n}"));
        // Sorted here, not by the server's collation: the same order as SQLite's.
        let mut hosts: Vec<Text> = self
            .select(&sql, &params)?
            .iter()
            .map(|r| Text::new(r.get::<_, String>(0)))
            .collect();
        hosts.sort_unstable();
        Ok(hosts)
    }

    fn figures(&self, filter: &Filter) -> Result<HashMap<i64, StoredFigures>> {
        let (sql, params) = filter.figures_sql(|n| format!("${n}"));
        self.figures_by(&sql, &params)
    }

    fn figures_of(&self, id: i64) -> Result<Option<StoredFigures>> {
        // The parameters are text: cast here, so the id's index is used.
        let sql = format!("SELECT {FIGURE_COLUMNS} FROM results WHERE id = ($1::text)::bigint");
        Ok(self.figures_by(&sql, &[id.to_string()])?.remove(&id))
    }

    fn kept(&self, filter: &Filter) -> Result<HashMap<i64, Kept>> {
        // A store of an earlier layout, opened to be read only, has no table yet.
        let version = self.layout_version().map_err(|e| self.explain(e))?;
        if version.unwrap_or(0) < migrations::KEPT {
            return Ok(HashMap::new());
        }
        let (sql, params) = filter.kept_sql(|n| format!("${n}"));
        let rows = self.select(&sql, &params)?;
        Ok(rows
            .iter()
            .filter_map(|r| Some((r.get(0), Kept::parse(r.get(1))?)))
            .collect())
    }

    fn tags(&self, filter: &Filter) -> Result<HashMap<i64, BTreeMap<String, String>>> {
        let (sql, params) = filter.tags_sql(|n| format!("${n}"));
        let rows = self.select(&sql, &params)?;
        let mut tags: HashMap<i64, BTreeMap<String, String>> = HashMap::new();
        for r in &rows {
            tags.entry(r.get(0)).or_default().insert(r.get(1), r.get(2));
        }
        Ok(tags)
    }

    fn group(&self, group: i64) -> Result<Vec<i64>> {
        let rows = self
            .answer(|c| async move { c.query(&sql::GROUP_IDS.postgres(), &[&group]).await })
            .map_err(|e| self.explain(e))?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    fn location(&self) -> String {
        self.location.clone()
    }

    fn set_busy_timeout(&self, timeout: Duration) -> Result<()> {
        // The one wait a statement can have here: a row lock another host holds.
        let ms = timeout.as_millis().max(1);
        let sql = format!("SET lock_timeout = {ms}");
        let sql = &sql;
        self.answer(|c| async move { c.batch_execute(sql).await })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_file_is_read_as_libpq_reads_it() {
        let file = "# host:port:database:user:password\n\
                    db.example:5432:hb:bench:first\n\
                    *:*:hb:bench:second\n\
                    localhost:*:*:*:with\\:colon\n";
        let find = |w| password_from_file(file, w);
        assert_eq!(
            find(["db.example", "5432", "hb", "bench"]).as_deref(),
            Some("first")
        );
        assert_eq!(
            find(["other", "5433", "hb", "bench"]).as_deref(),
            Some("second")
        );
        assert_eq!(
            find(["localhost", "5432", "x", "y"]).as_deref(),
            Some("with:colon")
        );
        assert_eq!(find(["other", "5432", "x", "y"]), None);
    }

    #[test]
    fn what_the_url_leaves_out_comes_from_the_environment() {
        let env = |k: &str| match k {
            "PGHOST" => Some("/run/pg".to_string()),
            "PGPORT" => Some("5433".to_string()),
            "PGUSER" => Some("bench".to_string()),
            _ => None,
        };
        let mut c: tokio_postgres::Config = "postgresql://".parse().unwrap();
        with_environment(&mut c, env);
        assert_eq!(
            c.get_hosts(),
            [tokio_postgres::config::Host::Unix("/run/pg".into())]
        );
        assert_eq!(c.get_ports(), [5433]);
        assert_eq!(c.get_user(), Some("bench"));
        assert_eq!(c.get_dbname(), Some("bench"));
        // What the URL says wins.
        let mut c: tokio_postgres::Config = "postgresql://me@db.example/hb".parse().unwrap();
        with_environment(&mut c, env);
        assert_eq!(c.get_user(), Some("me"));
        assert_eq!(c.get_dbname(), Some("hb"));
    }

    #[test]
    fn timeouts_and_keepalives_have_defaults_the_url_can_override() {
        let url = "postgresql://me@db.example/hb";
        let mut c: tokio_postgres::Config = url.parse().unwrap();
        with_timeouts(&mut c, url);
        assert_eq!(c.get_connect_timeout(), Some(&CONNECT_TIMEOUT));
        assert!(c.get_keepalives());
        assert_eq!(c.get_keepalives_idle(), KEEPALIVE_IDLE);
        assert_eq!(c.get_keepalives_interval(), Some(KEEPALIVE_INTERVAL));
        assert_eq!(c.get_keepalives_retries(), Some(KEEPALIVE_RETRIES));
        let url = "postgresql://me@db.example/hb?connect_timeout=3&keepalives_idle=7";
        let mut c: tokio_postgres::Config = url.parse().unwrap();
        with_timeouts(&mut c, url);
        assert_eq!(c.get_connect_timeout(), Some(&Duration::from_secs(3)));
        assert_eq!(c.get_keepalives_idle(), Duration::from_secs(7));
    }

    #[test]
    fn a_password_is_never_said() {
        assert_eq!(
            without_password("postgres://bench:s3cret@db.example/hb"),
            "postgres://bench:***@db.example/hb"
        );
        assert_eq!(
            without_password("postgresql:///hb?host=/run/postgresql"),
            "postgresql:///hb?host=/run/postgresql"
        );
    }
}

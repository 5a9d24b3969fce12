use std::path::PathBuf;

use anyhow::Result;
use chrono::Utc;
use clap::{Args, Subcommand};

use super::args::{JsonArg, QuietArg, Selection, StoreArgs};
use super::load::{load_file, load_stored};
use super::output::{format_values, FormatArgs, Output};
use crate::error::{said_of, UsageError};
use crate::fleet::status;
use crate::model::RunResult;
use crate::render;
use crate::render::exporters::{self, Format, Shown, Subject};
use crate::store::{Copied, Put, ResultStore, Runs, StoreLocation};

/// `hostbench results …`: the store and `-q`, for every one of its commands (`--json` only
/// where the output has a JSON form).
#[derive(Debug, Args)]
pub struct ResultsArgs {
    #[command(subcommand)]
    pub command: ResultsCommand,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub quiet: QuietArg,
}

impl ResultsCommand {
    /// The selection of a command that takes one.
    pub fn selection(&self) -> Option<&Selection> {
        match self {
            ResultsCommand::List { select, .. }
            | ResultsCommand::Hosts { select, .. }
            | ResultsCommand::Push { select, .. }
            | ResultsCommand::Pull { select, .. }
            | ResultsCommand::Delete { select, .. } => Some(select),
            ResultsCommand::Export { select, .. } => Some(select),
            ResultsCommand::Show { .. }
            | ResultsCommand::Import { .. }
            | ResultsCommand::Retire { .. } => None,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum ResultsCommand {
    /// One line per stored result: id, time, suite, host, headline figure (--tag KEY=VALUE
    /// selects by tag); --json for a JSON array
    List {
        #[command(flatten)]
        select: Selection,
        #[command(flatten)]
        json: JsonArg,
    },
    /// One row per host: its latest result, how old it is, and whether that is older than
    /// --stale-hours (which hosts of a fleet are reporting); --json for a JSON array
    Hosts {
        /// A host whose latest result started longer ago than this is marked stale (fractions
        /// of an hour too: 0.5)
        #[arg(long, value_name = "HOURS", default_value_t = status::STALE_HOURS, value_parser = parse_hours)]
        stale_hours: f64,
        /// A host whose last run has said "running" for longer than this is marked hung (the
        /// service stops a run at 6 h; the HostbenchRunHung rule's 8 h)
        #[arg(long, value_name = "HOURS", default_value_t = status::HUNG_HOURS, value_parser = parse_hours)]
        hung_hours: f64,
        #[command(flatten)]
        select: Selection,
        #[command(flatten)]
        json: JsonArg,
    },
    /// One stored result in full: text, or --format json, csv (a row per measurement),
    /// markdown or html
    #[command(mut_arg("format", formats))]
    Show {
        /// The result's id, as `results list` shows it
        id: i64,
        #[command(flatten)]
        output: FormatArgs,
        #[command(flatten)]
        json: JsonArg,
    },
    /// One stored result for another program: as `results show`, the format required; or,
    /// with --fleet --format openmetrics, each host's latest result and last run for Prometheus
    #[command(mut_arg("format", export_formats))]
    Export {
        /// The result's id, as `results list` shows it
        #[arg(required_unless_present = "fleet", conflicts_with = "fleet")]
        id: Option<i64>,
        /// Every host the selection takes (--host, --tag, --since): its latest result's headline
        /// figures and its last run's state, as OpenMetrics (--format openmetrics)
        #[arg(long)]
        fleet: bool,
        /// With --format csv: each figure's host's account too, the median of each item over
        /// its measured stretches (run-queue wait ms/s, steal %, …)
        #[arg(long)]
        account: bool,
        #[command(flatten)]
        output: FormatArgs,
        #[command(flatten)]
        json: JsonArg,
        // Last: its heading would otherwise hold the options after it.
        #[command(flatten)]
        select: Selection,
    },
    /// Store results from JSON files (`--json` output, `results export --format json`, or the
    /// file a run saved when the store failed); a result already stored is stored once
    Import {
        /// The result files
        #[arg(value_name = "FILE", required = true)]
        files: Vec<PathBuf>,
    },
    /// Copy stored results to another store (a shared PostgreSQL server): the given ids, or
    /// all those --host, --tag and --since select; a result already there is stored once
    Push {
        /// The store to copy to: a PostgreSQL URL or an SQLite file [default: the environment's
        /// HOSTBENCH_DB, so a URL need not be on the command line]
        #[arg(long, value_name = "URL|PATH", env = "HOSTBENCH_PUSH_TO")]
        to: Option<PathBuf>,
        /// Ids of the results to copy, as `results list` shows them [default: all selected]
        #[arg(value_name = "ID")]
        ids: Vec<i64>,
        #[command(flatten)]
        select: Selection,
    },
    /// Copy results from another store into this one (--db): as `results push`, the other way
    Pull {
        /// The store to copy from: a PostgreSQL URL or an SQLite file
        #[arg(long, value_name = "URL|PATH")]
        from: PathBuf,
        /// Ids of the results to copy, as that store lists them [default: all selected]
        #[arg(value_name = "ID")]
        ids: Vec<i64>,
        #[command(flatten)]
        select: Selection,
    },
    /// Remove stored results with their tags and figures: by id, or by age and count (--before,
    /// --keep) with the hosts' run states. On a shared PostgreSQL store, only what this login
    /// stored (the database's owner may remove any)
    Delete {
        /// Ids of the results to remove, as `results list` shows them
        #[arg(
            value_name = "ID",
            required_unless_present_any = ["before", "keep"],
            conflicts_with_all = ["before", "keep", "dry_run", "host", "since", "tags"]
        )]
        ids: Vec<i64>,
        /// Remove the results and run states started before this day (YYYY-MM-DD: its first
        /// moment, UTC) or time (RFC 3339)
        #[arg(long, value_name = "DATE", value_parser = super::args::parse_since)]
        before: Option<chrono::DateTime<Utc>>,
        /// Keep each host's newest N results and run states, whatever their age; with --before,
        /// remove only what is both older and beyond them
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=crate::store::retention::MAX_KEEP))]
        keep: Option<u64>,
        /// Say what --before and --keep would remove, and remove nothing
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        select: Selection,
    },
    /// Retire a host that is gone. The fleet's views leave it out until it stores a run or
    /// result again (on a shared PostgreSQL store, only the database's owner may retire)
    Retire {
        /// The host's name, as `results hosts` shows it (its --host-label, else its hostname)
        #[arg(value_name = "HOST")]
        host: String,
        /// Bring the host back instead
        #[arg(long)]
        undo: bool,
    },
}

/// `--format`'s values on `show` and `export` (`mut_arg`): the formats that show a result.
fn formats(format: clap::Arg) -> clap::Arg {
    format.value_parser(format_values(&[Shown::Result]))
}

/// `export`'s: the same values, and no default (a program reading it names its format).
fn export_formats(format: clap::Arg) -> clap::Arg {
    formats(format).help("The output format (required; --json is --format json)")
}

pub fn exec(args: &ResultsArgs) -> Result<i32> {
    let (cmd, store_args) = (&args.command, &args.store);
    let json = match cmd {
        ResultsCommand::Hosts { json, .. }
        | ResultsCommand::List { json, .. }
        | ResultsCommand::Show { json, .. }
        | ResultsCommand::Export { json, .. } => json.on,
        _ => false,
    };
    let out = Output::new(json, args.quiet.on);
    match cmd {
        ResultsCommand::Import { files } => import(&out, store_args, files)?,
        ResultsCommand::Push { to, ids, select } => push(&out, store_args, to, ids, select)?,
        ResultsCommand::Pull { from, ids, select } => pull(&out, store_args, from, ids, select)?,
        ResultsCommand::Retire { host, undo } => retire(&out, store_args, host, *undo)?,
        ResultsCommand::Delete {
            ids,
            before,
            keep,
            dry_run,
            select,
        } => {
            if ids.is_empty() {
                let retention = crate::store::retention::Retention {
                    before: *before,
                    keep: keep.map(|n| n as usize),
                };
                delete_old(&out, store_args, &retention, select, *dry_run)?
            } else {
                delete(&out, store_args, ids)?
            }
        }
        ResultsCommand::List { select, .. } => list(&out, store_args, select, json)?,
        ResultsCommand::Hosts {
            select,
            stale_hours,
            hung_hours,
            ..
        } => {
            let bounds = status::Thresholds {
                stale_hours: *stale_hours,
                hung_hours: *hung_hours,
            };
            hosts(&out, store_args, select, bounds, json)?
        }
        ResultsCommand::Export {
            fleet: true,
            output,
            account,
            select,
            ..
        } => export_fleet(&out, store_args, output, *account, select, json)?,
        ResultsCommand::Export { id: None, .. } => {
            return Err(UsageError::new("results export needs a result's id, or --fleet").into());
        }
        ResultsCommand::Export { select, .. } if select.narrows() => {
            return Err(UsageError::new(
                "--host, --tag and --since select hosts for results export --fleet; give an id or --fleet",
            )
            .into());
        }
        ResultsCommand::Show { id, output, .. } => {
            show(&out, store_args, *id, output, false, json)?
        }
        ResultsCommand::Export {
            id: Some(id),
            output,
            account,
            ..
        } => export(&out, store_args, *id, output, *account, json)?,
    }
    match out.stdout_error() {
        Some(e) => Err(anyhow::anyhow!("writing to standard output: {e}")),
        None => Ok(0),
    }
}

/// `results import FILE …`: every file is read before anything is stored, so a bad one stores
/// none.
fn import(out: &Output, store_args: &StoreArgs, files: &[PathBuf]) -> Result<()> {
    let results = files
        .iter()
        .map(|f| load_file(&f.to_string_lossy()))
        .collect::<Result<Vec<RunResult>>>()?;
    let mut store = store_args.open()?;
    for (file, result) in files.iter().zip(&results) {
        store
            .judge(result)
            .map_err(|e| said_of(e, file.display()))?;
    }
    let stored = crate::store::import(&mut *store, &results, &render::headline::run)?;
    for (i, id, put) in stored {
        let what = match put {
            Put::Added => "Imported",
            Put::Updated => "Imported (in place of an earlier copy)",
            Put::AlreadyThere => "Already stored:",
        };
        out.out(&format!(
            "{what} {} as result {id} in {}.\n",
            files[i].display(),
            store.location()
        ));
    }
    Ok(())
}

/// `results push`: this store's results to another (`--to`, else the environment's).
fn push(
    out: &Output,
    store_args: &StoreArgs,
    to: &Option<PathBuf>,
    ids: &[i64],
    select: &Selection,
) -> Result<()> {
    let location = StoreLocation::parse(&push_target(to.as_deref())?)?;
    // A scheduled run pushes its fallback store to its store first; where they are one file
    // (an SQLite store), there is nothing to send.
    if let (StoreLocation::Sqlite(a), StoreLocation::Sqlite(b)) =
        (&store_args.location()?, &location)
    {
        let same = |p: &std::path::Path| std::fs::canonicalize(p).ok();
        if a == b || same(a).is_some_and(|c| Some(c) == same(b)) {
            out.chatter(&format!(
                "Nothing to push: the store to push to (--to, else HOSTBENCH_PUSH_TO or HOSTBENCH_DB) is this store ({}).\n",
                location.display()
            ));
            return Ok(());
        }
    }
    let (from_name, from) = store_args.open_read_only()?;
    let to = location.open().map_err(refused)?;
    let from = (from_name.as_str(), from.as_deref());
    copy(out, from, (location.display(), to), ids, select)
}

/// `results pull --from STORE`: another store's results into this one.
fn pull(
    out: &Output,
    store_args: &StoreArgs,
    from: &std::path::Path,
    ids: &[i64],
    select: &Selection,
) -> Result<()> {
    let location = StoreLocation::parse(from)?;
    let source = location.open_read_only().map_err(refused)?;
    let name = location.display();
    // Nothing there is a mistyped name, not an empty store to copy nothing from.
    if source.is_none() {
        return Err(UsageError::new(format!(
            "there is no store at {} to pull from",
            crate::model::label::printable(&name, 200)
        ))
        .into());
    }
    let to = store_args.open()?;
    copy(
        out,
        (&name, source.as_deref()),
        (to.location(), to),
        ids,
        select,
    )
}

/// `results delete ID …`: every id is judged before any is deleted.
fn delete(out: &Output, store_args: &StoreArgs, ids: &[i64]) -> Result<()> {
    // Only an existing store: a mistyped --db must not create one to delete nothing from.
    let (name, existing) = store_args.open_read_only()?;
    if existing.is_none() {
        return Err(UsageError::new(format!("no stored results in {name}")).into());
    }
    drop(existing);
    let mut store = store_args.open()?;
    for id in ids {
        store.deletable(*id)?;
    }
    for id in ids {
        store.delete(*id)?;
        out.out(&format!("Deleted result {id} from {}.\n", store.location()));
    }
    Ok(())
}

/// `results retire HOST [--undo]`: a host the store knows, retired as of now or brought back.
fn retire(out: &Output, store_args: &StoreArgs, host: &str, undo: bool) -> Result<()> {
    crate::model::label::check("the host", host, 256).map_err(UsageError::new)?;
    let (name, existing) = store_args.open_read_only()?;
    let Some(existing) = existing else {
        return Err(UsageError::new(format!("no stored results in {name}")).into());
    };
    let one = crate::store::Filter {
        host: Some(host.to_string()),
        ..Default::default()
    };
    let known = !existing.hosts(&one)?.is_empty()
        || !existing.runs(&one, Runs::LatestPerHost)?.is_empty()
        || existing.retired()?.iter().any(|(h, _)| h.raw() == host);
    if !known {
        return Err(UsageError::new(format!(
            "{name} holds no result or run of a host {}",
            crate::text::Text::new(host).cut(64)
        ))
        .into());
    }
    drop(existing);
    let mut store = store_args.open()?;
    let shown = crate::text::Text::new(host);
    let said = match (undo, store.set_retired(host, (!undo).then(Utc::now))?) {
        (false, _) => format!(
            "Retired {}: the fleet's views leave it out until it stores a run again.\n",
            shown.cut(64)
        ),
        (true, true) => format!("Brought {} back into the fleet's views.\n", shown.cut(64)),
        (true, false) => format!("{} was not retired.\n", shown.cut(64)),
    };
    out.out(&said);
    Ok(())
}

use render::fleet::plural as count;

/// `results delete --before DATE --keep N`: the results and run states the retention
/// chooses, each host's alike; with `--dry-run` only said. What row-level security keeps
/// (another login's) is said too.
fn delete_old(
    out: &Output,
    store_args: &StoreArgs,
    retention: &crate::store::retention::Retention,
    select: &Selection,
    dry_run: bool,
) -> Result<()> {
    let (name, existing) = store_args.open_read_only()?;
    if existing.is_none() {
        return Err(UsageError::new(format!("no stored results in {name}")).into());
    }
    drop(existing);
    let mut store = store_args.open()?;
    let filter = select.filter();
    let entries = store.list(&filter)?;
    let ids: Vec<i64> = retention
        .chosen(entries.iter().map(|e| (e.host.raw(), e.started_at)))
        .into_iter()
        .map(|i| entries[i].id)
        .collect();
    let runs = store.runs(&filter, Runs::All)?;
    let chosen_runs = retention.chosen(
        runs.iter()
            .map(|r| (r.host_name().raw(), Some(r.started_at))),
    );
    let uuids: Vec<String> = chosen_runs.iter().map(|&i| runs[i].uuid.clone()).collect();
    if dry_run {
        let chosen: std::collections::HashSet<i64> = ids.iter().copied().collect();
        let mut by_host: std::collections::BTreeMap<&str, (usize, usize)> = Default::default();
        for e in entries.iter().filter(|e| chosen.contains(&e.id)) {
            by_host.entry(e.host.raw()).or_default().0 += 1;
        }
        for &i in &chosen_runs {
            by_host.entry(runs[i].host_name().raw()).or_default().1 += 1;
        }
        out.out(&format!(
            "Would delete {} and {} of {} from {}.\n",
            count(ids.len(), "result"),
            count(uuids.len(), "run state"),
            count(by_host.len(), "host"),
            store.location()
        ));
        for (host, (results, states)) in by_host {
            out.out(&format!(
                "  {}: {}, {}\n",
                crate::text::Text::new(host).cut(64),
                count(results, "result"),
                count(states, "run state")
            ));
        }
        return Ok(());
    }
    let gone = store.delete_many(&ids)?;
    let gone_runs = store.delete_runs(&uuids)?;
    out.out(&format!(
        "Deleted {} and {} from {}.\n",
        count(gone, "result"),
        count(gone_runs, "run state"),
        store.location()
    ));
    if gone < ids.len() || gone_runs < uuids.len() {
        out.err(&format!(
            "hostbench: {} and {} stay: another login stored them, and a login deletes only its own\n",
            count(ids.len() - gone, "result"),
            count(uuids.len() - gone_runs, "run state"),
        ));
    }
    Ok(())
}

/// `results list`: a line a stored result, or a JSON array.
fn list(out: &Output, store_args: &StoreArgs, select: &Selection, json: bool) -> Result<()> {
    let (path, store) = store_args.open_read_only()?;
    let entries = match &store {
        Some(store) => store.list(&select.filter())?,
        None => Vec::new(),
    };
    if json {
        out.out(&format!("{}\n", serde_json::to_string_pretty(&entries)?));
    } else if store.is_some() {
        out.out(&render::results::list_table(&entries));
    } else {
        out.out(&format!("No stored results in {path}.\n"));
    }
    Ok(())
}

/// `results hosts`: a row a host, its latest result and last run, the ones to look at first.
fn hosts(
    out: &Output,
    store_args: &StoreArgs,
    select: &Selection,
    bounds: status::Thresholds,
    json: bool,
) -> Result<()> {
    let (path, store) = store_args.open_read_only()?;
    let now = Utc::now();
    let (rows, retired) = match store {
        Some(store) => host_rows(&*store, &select.filter(), now, bounds)?,
        None => Default::default(),
    };
    if json {
        out.out(&format!("{}\n", serde_json::to_string_pretty(&rows)?));
    } else if rows.is_empty() && retired.is_empty() {
        out.out(&format!("No stored results in {path}.\n"));
    } else {
        out.out(&render::results::hosts_table(&rows, &bounds, now));
    }
    if let Some(line) = render::results::retired_line(&retired) {
        out.err(&line);
    }
    Ok(())
}

/// `results export --fleet --format openmetrics`: each host's latest figures and last run.
fn export_fleet(
    out: &Output,
    store_args: &StoreArgs,
    output: &FormatArgs,
    account: bool,
    select: &Selection,
    json: bool,
) -> Result<()> {
    if account || output.format(json, Format::Text)? != Format::Openmetrics {
        return Err(UsageError::new(
            "results export --fleet writes --format openmetrics (and takes no --account)",
        )
        .into());
    }
    let text = fleet_metrics(store_args, &select.filter())?;
    if let Some(path) = output.write(out, &text, None)? {
        out.chatter(&format!("Written: {}\n", path.display()));
    }
    Ok(())
}

/// `results export ID`: `results show` with the format required, and `--account` for CSV.
fn export(
    out: &Output,
    store_args: &StoreArgs,
    id: i64,
    output: &FormatArgs,
    account: bool,
    json: bool,
) -> Result<()> {
    if output.format.is_none() && !json {
        return Err(UsageError::new(format!(
            "results export needs --format: {}",
            exporters::supported(Shown::Result).join(", ")
        ))
        .into());
    }
    show(out, store_args, id, output, account, json)
}

/// One stored result in the format asked for; with `account`, CSV with the host's account.
fn show(
    out: &Output,
    store_args: &StoreArgs,
    id: i64,
    output: &FormatArgs,
    account: bool,
    json: bool,
) -> Result<()> {
    let format = output.format(json, Format::Text)?;
    if account && format != Format::Csv {
        return Err(UsageError::new(format!(
            "--account adds columns to --format csv, not to --format {}",
            format.name()
        ))
        .into());
    }
    let result = load(store_args, id)?;
    let written = if account {
        let text = render::exporters::csv::result_with_account(id, &result)?;
        output.write(out, &text, None)?
    } else {
        let subject = Subject::Result {
            id,
            result: &result,
        };
        output.emit(out, format, subject, None)?
    };
    if let Some(path) = written {
        out.chatter(&format!("Written: {}\n", path.display()));
    }
    Ok(())
}

use crate::fleet::retired::Retired;

/// A row per host of the results and runs `filter` selects (`results hosts`): the hosts first,
/// then one host's list rows at a time, so that memory grows with the hosts, not the results.
/// A retired host has no row: it is in the second list.
fn host_rows(
    store: &dyn ResultStore,
    filter: &crate::store::Filter,
    now: chrono::DateTime<Utc>,
    bounds: status::Thresholds,
) -> Result<(Vec<crate::fleet::status::HostStatus>, Retired)> {
    use crate::fleet::retired;
    let (hosts, gone) = retired::serving(store, filter)?;
    let mut seen = crate::fleet::status::Seen::default();
    for host in hosts {
        seen.results(&store.list_of_host(filter, &host)?.1);
    }
    let mut runs = store.runs(filter, Runs::LatestPerHost)?;
    runs.retain(|r| !retired::is_retired(&gone, r.host_name()));
    Ok((seen.rows(&runs, now, bounds), gone))
}

/// `results export --fleet --format openmetrics`: each host the filter selects, with the
/// headline figures the fleet page gives it (each from its latest complete result that has it,
/// as stored beside it) and its latest result's time and its last run's state.
fn fleet_metrics(store_args: &StoreArgs, filter: &crate::store::Filter) -> Result<String> {
    use crate::model::label;
    use render::exporters::openmetrics::{hosts, HostMetrics, ResultInfo, ResultMetrics};
    let (db, store) = store_args.open_read_only()?;
    let Some(store) = store else {
        return Ok(hosts(&[]));
    };
    // Staleness plays no part here (the rules judge the timestamps): the defaults are as good
    // as any.
    let (rows, retired) = host_rows(&*store, filter, Utc::now(), status::Thresholds::default())?;
    let (fleet, _) = super::report::fleet_in(&*store, filter, &db)?;
    // The fleet's rows by identity: lookalike spellings of one name are one host there.
    let figures: std::collections::HashMap<String, _> = fleet
        .rows
        .iter()
        .map(|r| (label::identity(r.host.raw()), r.figures()))
        .collect();
    // Each host's latest result, read whole one at a time, for its version, kernel and tags;
    // one that does not read back has no info line.
    let info: Vec<Option<ResultInfo>> = rows
        .iter()
        .map(|row| {
            let id = row.last_id?;
            Some(ResultInfo::of(&load_stored(Some(&*store), &db, id).ok()?))
        })
        .collect();
    let metrics: Vec<HostMetrics> = rows
        .iter()
        .zip(info)
        .map(|(row, info)| HostMetrics {
            host: &row.host,
            result: row.last_started_at.map(|started_at| ResultMetrics {
                started_at,
                incomplete: row.last_incomplete,
                figures: figures.get(&label::identity(row.host.raw())),
                info,
            }),
            run: row.last_run.as_ref(),
            retired_at: None,
        })
        .chain(retired.iter().map(|(host, at)| HostMetrics {
            host,
            result: None,
            run: None,
            retired_at: Some(*at),
        }))
        .collect();
    Ok(hosts(&metrics))
}

/// The other store of `push` or `pull` could not be opened: the user's to fix (exit 2).
fn refused(e: anyhow::Error) -> anyhow::Error {
    UsageError::new(format!("cannot open the store {e:#}")).into()
}

/// Copies the chosen results (`ids`, or all the selection takes) oldest first from one store
/// to the other, each stored once, and says what became of them. A run of a `--repeat` group
/// keeps its group there: named after the id the group's first run has in that store.
fn copy(
    out: &Output,
    (from_name, from): (&str, Option<&dyn ResultStore>),
    (to_name, mut to): (String, Box<dyn ResultStore>),
    ids: &[i64],
    select: &Selection,
) -> Result<()> {
    if !ids.is_empty() && select.narrows() {
        return Err(UsageError::new("give result ids or --host/--tag/--since, not both").into());
    }
    let chosen: Vec<i64> = match (from, ids.is_empty()) {
        (Some(s), true) => s.list(&select.filter())?.iter().map(|e| e.id).collect(),
        (_, false) => ids.to_vec(),
        (None, true) => Vec::new(),
    };
    let mut tally = Tally::default();
    match from {
        Some(from) => crate::store::copy(
            from,
            from_name,
            &mut *to,
            &chosen,
            ids.is_empty(),
            &render::headline::run,
            &mut |c| tally.count(out, from_name, c),
        )?,
        // Nothing stored here: an id named is not here.
        None => {
            if let Some(id) = chosen.first() {
                return Err(UsageError::new(format!(
                    "no stored result with id {id} in {from_name}"
                ))
                .into());
            }
        }
    }
    // The selection's run states go with its results (not with ids: a run is named by its
    // host and time), so the runs a host kept while its store was down — those that stored
    // nothing too — are seen there. One that ended there already is left as it is.
    let runs = match (from, ids.is_empty()) {
        (Some(from), true) => send_runs(out, from, &mut *to, &to_name, select)?,
        _ => RunsSent::default(),
    };
    if let Some(line) = to.migrated().map(|m| layout_line(m, &to_name)) {
        out.out(&line);
    }
    tally.say(out, chosen.len(), from_name, &to_name, &runs);
    // What could not be read is left out quietly, as `results list` does; what the store
    // copied to refused (another login's, another run's) is the user's to hear in the exit
    // code, after the rest is copied.
    if tally.refused > 0 {
        return Err(UsageError::new(format!(
            "{} result{} refused by {to_name} (said above)",
            tally.refused,
            if tally.refused == 1 { " was" } else { "s were" }
        ))
        .into());
    }
    if runs.refused > 0 {
        return Err(UsageError::new(format!(
            "{} run state{} refused by {to_name} (said above)",
            runs.refused,
            if runs.refused == 1 { " was" } else { "s were" }
        ))
        .into());
    }
    Ok(())
}

/// What the open of the store copied to did to its layout, in a line.
fn layout_line((found, left): (i64, i64), to_name: &str) -> String {
    if found == 0 {
        format!("Made hostbench's layout (layout {left}) in {to_name}.\n")
    } else {
        format!("Migrated {to_name} from layout {found} to layout {left}.\n")
    }
}

/// What a copy did with each result: added, updated, already there, left out, and of those
/// left out, refused by the store copied to.
#[derive(Default)]
struct Tally {
    added: usize,
    updated: usize,
    already: usize,
    left_out: usize,
    refused: usize,
}

impl Tally {
    /// Counts a result. A row of the selection that cannot be read or stored (another host's,
    /// malformed) is left out with a line naming it: one bad row never stops a copy of the
    /// rest. One named by id is an error (the store's copy says so).
    fn count(&mut self, out: &Output, from_name: &str, c: Copied) {
        match c {
            Copied::Stored { from: id, to, put } => match put {
                Put::Added => self.added += 1,
                Put::Updated => {
                    out.chatter(&format!(
                        "result {id} is {to} there, updated: it had finished since it was copied\n"
                    ));
                    self.updated += 1;
                }
                Put::AlreadyThere => self.already += 1,
            },
            Copied::LeftOut {
                from: id,
                why,
                refused,
            } => {
                out.err(&format!(
                    "hostbench: result {id} of {from_name} left out: {why:#}\n"
                ));
                self.left_out += 1;
                self.refused += usize::from(refused);
            }
        }
    }

    /// The copy's line, and the run states' where the selection has any.
    fn say(&self, out: &Output, chosen: usize, from_name: &str, to_name: &str, runs: &RunsSent) {
        let copied = chosen - self.left_out;
        out.out(&format!(
            "Copied {copied} result{} from {from_name} to {to_name}: {} added, {} updated, {} already there{}.\n",
            if copied == 1 { "" } else { "s" },
            self.added,
            self.updated,
            self.already,
            if self.left_out > 0 {
                format!("; {} left out (said above)", self.left_out)
            } else {
                String::new()
            }
        ));
        if runs.sent + runs.already + runs.refused > 0 {
            let refused = if runs.refused > 0 {
                format!(", {} refused (said above)", runs.refused)
            } else {
                String::new()
            };
            out.chatter(&format!(
                "Run states: {} sent, {} ended there already{refused}.\n",
                runs.sent, runs.already
            ));
        }
    }
}

/// What became of the selection's run states: sent, ended there already, refused.
#[derive(Default)]
struct RunsSent {
    sent: usize,
    already: usize,
    refused: usize,
}

/// Sends the selection's run states, each refusal said with its reason.
fn send_runs(
    out: &Output,
    from: &dyn ResultStore,
    to: &mut dyn ResultStore,
    to_name: &str,
    select: &Selection,
) -> Result<RunsSent> {
    let mut runs = RunsSent::default();
    for state in from.runs(&select.filter(), Runs::All)? {
        match to.record_run(&state) {
            Ok(true) => runs.sent += 1,
            Ok(false) => runs.already += 1,
            Err(e) => {
                runs.refused += 1;
                out.err(&format!(
                    "hostbench: the state of run {} ({}) refused by {to_name}: {}\n",
                    state.uuid,
                    state.outcome.name(),
                    crate::model::label::printable(&crate::text::redact(&format!("{e:#}")), 300)
                ));
            }
        }
    }
    Ok(runs)
}

/// Where `results push` sends: `--to` (or HOSTBENCH_PUSH_TO), else the environment's
/// HOSTBENCH_DB. A scheduled run pushes its fallback store (`--db FILE`) to its server this
/// way, with no URL in its argv, which every local user can read in /proc.
fn push_target(to: Option<&std::path::Path>) -> Result<PathBuf> {
    if let Some(to) = to {
        return Ok(to.to_path_buf());
    }
    match std::env::var_os("HOSTBENCH_DB") {
        Some(db) if !db.is_empty() => Ok(PathBuf::from(db)),
        _ => Err(UsageError::new(
            "results push needs --to URL|PATH (or HOSTBENCH_PUSH_TO, or HOSTBENCH_DB in the environment)",
        )
        .into()),
    }
}

/// The stored result `id`; an id that is not there is the user's mistake (exit 2).
fn load(store_args: &StoreArgs, id: i64) -> Result<RunResult> {
    let (path, store) = store_args.open_read_only()?;
    load_stored(store.as_deref(), &path, id)
}

/// Hours for `--stale-hours` and `--hung-hours`: a number above 0, at most ten years.
fn parse_hours(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(h) if h.is_finite() && h > 0.0 && h <= 87_600.0 => Ok(h),
        _ => Err(format!(
            "{s} is not a number of hours above 0 and at most 87600"
        )),
    }
}

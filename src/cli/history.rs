//! `hostbench history`: where each figure changed across one host's stored results.

use anyhow::Result;
use chrono::{DateTime, Utc};
use clap::Args;

use super::args::{parse_since, PrintArgs, Selection, StoreArgs};
use super::output::{format_values, FormatArgs, Output};
use crate::error::UsageError;
use std::collections::HashMap;

use crate::history::memo::{self, Memo};
use crate::history::{
    gate, history_recalled, shared, stored_runs, Ask, Histories, History, Run, NEWEST_SHARE,
};
use crate::render;
use crate::render::exporters::{Format, Shown, Subject};
use crate::stats::edivisive::Settings;
use crate::store::{Filter, ResultStore};
use crate::text::Text;

#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// Figures to follow: those whose key contains one of these (as `results export --format
    /// csv` names them, e.g. "index/1 copy/dhry2reg" or "latency mean") [default: every figure]
    #[arg(value_name = "FIGURE")]
    pub figures: Vec<String>,
    /// Only the results started on or before this day (YYYY-MM-DD, UTC: the whole day) or time
    /// (RFC 3339)
    #[arg(long, value_name = "DATE", value_parser = parse_until)]
    pub until: Option<DateTime<Utc>>,
    /// A change is kept when its permutation test's p is at most this
    #[arg(long = "p", value_name = "P", default_value_t = 0.01, value_parser = parse_p)]
    pub max_p: f64,
    /// A change is kept when it is at least this many percent [default: the noise floor of
    /// the level it leaves, the median of those results' own noise checks]
    #[arg(long = "min-change", value_name = "PCT", value_parser = parse_pct)]
    pub min_change: Option<f64>,
    /// The nightly gate: exit with 3 when the newest results (at most --window of them) are
    /// worse than the level before them beyond this host's noise. It fails on the night that
    /// first becomes true; `worse` at Student's p <= --p / 5, `suspected` at p <= --p
    #[arg(long = "fail-on", value_name = "WHAT", value_parser = ["worse", "suspected"])]
    pub fail_on: Option<String>,
    /// With --fail-on: a new level of at most this many newest results fails the job; an
    /// older change does not
    #[arg(long, value_name = "N", default_value_t = gate::MAX_WINDOW as u64, value_parser = clap::value_parser!(u64).range(1..=gate::MAX_WINDOW as u64), requires = "fail_on")]
    pub window: u64,
    /// With --fail-on: fail also where the host's own speed moved the figure (its fixed-work
    /// reference moved with it, or its account shows more steal time)
    #[arg(long, requires = "fail_on")]
    pub fail_on_host: bool,
    /// Every host of the selection, each its own history, and the changes seen on several
    /// hosts at one tag (a kernel that slowed the fleet, not one host)
    #[arg(long)]
    pub fleet: bool,
    /// Keep each series' search in FILE, and take it again next time: the next run searches
    /// again only what the newest results can change. The newest test and the gate run on
    /// every series; each series is searched whole one run in 7, and whenever its earlier
    /// results differ. A nightly job's way through a large fleet's history
    #[arg(long, value_name = "FILE", conflicts_with = "series")]
    pub state: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub output: FormatArgs,
    /// Find the change points of the series in this CSV file (rows `series,value`, or
    /// `series,value,floor` with each value's noise floor in %, each series' values in order)
    /// instead of the store's, and print them as JSON. Changes are kept as a store's are: at
    /// least --min-change, or the floor of the level they leave. How the method is checked
    /// against synthetic series and other tools (docs/history.md)
    #[arg(long, value_name = "FILE", conflicts_with_all = ["figures", "host", "tags", "since", "until", "fail_on", "format", "output", "fleet"])]
    pub series: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub select: Selection,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub print: PrintArgs,
}

/// `--format`'s values here (`mut_arg` on the subcommand): the formats that show a history.
pub fn formats(format: clap::Arg) -> clap::Arg {
    format.value_parser(format_values(&[Shown::History]))
}

fn parse_until(s: &str) -> Result<DateTime<Utc>, String> {
    // A day means the whole of it.
    if let Ok(day) = chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        return Ok(day.and_hms_opt(23, 59, 59).expect("a valid time").and_utc());
    }
    parse_since(s)
}

fn parse_p(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(p) if p > 0.0 && p < 1.0 => Ok(p),
        _ => Err(format!("{s} is not a p-value between 0 and 1")),
    }
}

fn parse_pct(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(p) if p.is_finite() && p >= 0.0 => Ok(p),
        _ => Err(format!("{s} is not a percentage of 0 or more")),
    }
}

pub fn exec(args: &HistoryArgs) -> Result<i32> {
    let format = args.output.format(args.print.json(), Format::Text)?;
    if format == Format::Openmetrics && args.fail_on.is_none() {
        return Err(UsageError::new(
            "--format openmetrics exports the nightly gate: give --fail-on worse (or suspected)",
        )
        .into());
    }
    let out = args.print.output();
    if let Some(path) = &args.series {
        let settings = Settings {
            max_p: args.max_p,
            ..Settings::default()
        };
        let found = series_file(path, &settings, args.min_change)?;
        out.out(&format!("{}\n", serde_json::to_string(&found)?));
        return Ok(0);
    }
    let filter = Filter {
        until: args.until,
        ..args.select.filter()
    };
    // The hosts first, then one host's results at a time: memory grows with the hosts and the
    // largest host's history, not with the store.
    let (db, store) = args.store.open_read_only()?;
    let no_result = || {
        UsageError::new(format!(
            "no stored result{} in {db}",
            if filter == Default::default() {
                String::new()
            } else {
                " of that selection".to_string()
            }
        ))
    };
    // A fleet leaves out the hosts an operator retired (`results retire`).
    let hosts = match &store {
        Some(store) if args.fleet => {
            crate::fleet::retired::serving(&**store, &filter)
                .map_err(|e| UsageError::new(format!("{e:#}")))?
                .0
        }
        Some(store) => store
            .hosts(&filter)
            .map_err(|e| UsageError::new(format!("{e:#}")))?,
        None => Vec::new(),
    };
    if hosts.is_empty() {
        if !args.fleet {
            return Err(no_result().into());
        }
        // A fleet with no result yet is an empty fleet, as `results hosts` and `report
        // --fleet` show it: said, and not an error (a nightly gate's first night).
        out.err(&format!("hostbench: {}\n", no_result()));
    }
    if hosts.len() > 1 && !args.fleet {
        return Err(UsageError::new(format!(
            "the selection holds results of {} hosts ({}): a history is one host's, name it with --host (or take each with --fleet)",
            hosts.len(),
            hosts
                .iter()
                .take(5)
                .map(|h| h.cut(64).to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ))
        .into());
    }
    let each = match &store {
        Some(store) => histories_of(
            args,
            &**store,
            &filter,
            &hosts,
            format == Format::Html,
            &out,
        )?,
        None => Vec::new(),
    };
    let h = Histories {
        fleet: args.fleet,
        shared: if args.fleet {
            shared(&each)
        } else {
            Vec::new()
        },
        hosts: each,
    };
    if let Some(path) = args.output.emit(&out, format, Subject::History(&h), None)? {
        out.chatter(&format!("Written: {}\n", path.display()));
    }
    if let Some(e) = out.stdout_error() {
        anyhow::bail!("writing to standard output: {e}");
    }
    if args.fail_on.is_some() {
        if let Some(line) = gate_line(&h) {
            out.err(&format!("hostbench: {line}\n"));
            return Ok(super::compare::EXIT_REGRESSION);
        }
    }
    Ok(0)
}

/// Each host's history, one host's results read at a time. One host's page draws every series
/// asked for; a fleet's, the changed ones.
fn histories_of(
    args: &HistoryArgs,
    store: &dyn ResultStore,
    filter: &Filter,
    hosts: &[Text],
    html: bool,
    out: &Output,
) -> Result<Vec<History>> {
    let settings = Settings {
        max_p: args.max_p,
        ..Settings::default()
    };
    let asked_gate = args.fail_on.as_deref().map(|what| gate::Gate {
        window: args.window as usize,
        max_p: if what == "suspected" {
            args.max_p
        } else {
            args.max_p * NEWEST_SHARE
        },
        host_shifts: args.fail_on_host,
    });
    let mut left_out = |id: i64, why: anyhow::Error| {
        out.err(&format!("hostbench: result {id} left out: {why:#}\n"));
    };
    let ask = Ask {
        patterns: &args.figures,
        settings: &settings,
        min_change_pct: args.min_change,
        every_series: html && !args.fleet,
        gate: asked_gate.as_ref(),
    };
    let mut memo = match &args.state {
        Some(path) => Some(Memo::read(path).map_err(|e| {
            UsageError::new(format!("--state {}: cannot read it: {e}", path.display()))
        })?),
        None => None,
    };
    let analyse = |host: &Text, runs: &[Run], kept: Option<HashMap<String, memo::Kept>>| {
        history_recalled(host, runs, &ask, kept.as_ref())
    };
    let mut read = |host: &Text| -> Result<Vec<Run>> {
        let (one, entries) = store
            .list_of_host(filter, host)
            .map_err(|e| UsageError::new(format!("{e:#}")))?;
        Ok(stored_runs(store, &one, &entries, &[host], &mut left_out)
            .map_err(|e| UsageError::new(format!("{e:#}")))?
            .pop()
            .unwrap_or_default())
    };
    // The store is read here, one host at a time (a connection is one thread's); each host's
    // search runs on a worker while the next host is read, a worker a CPU. At most two hosts
    // a worker wait, so memory grows with the workers and the largest host, not the store.
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    type Work<'h> = (
        usize,
        &'h Text,
        Vec<Run>,
        Option<HashMap<String, memo::Kept>>,
    );
    let (to_work, work) = std::sync::mpsc::sync_channel::<Work>(2 * workers);
    let work = std::sync::Mutex::new(work);
    let (to_done, done) = std::sync::mpsc::channel::<(usize, Analysed)>();
    std::thread::scope(|scope| -> Result<()> {
        for _ in 0..workers {
            let (work, to_done, analyse) = (&work, to_done.clone(), &analyse);
            scope.spawn(move || loop {
                // The lock is held only to take the next host.
                let next = work.lock().map(|w| w.recv());
                let Ok(Ok((i, host, runs, kept))) = next else {
                    return;
                };
                if to_done.send((i, analyse(host, &runs, kept))).is_err() {
                    return;
                }
            });
        }
        drop(to_done);
        for (i, host) in hosts.iter().enumerate() {
            let runs = read(host)?;
            let kept = memo.as_mut().map(|m| m.take_host(host.raw()));
            if to_work.send((i, host, runs, kept)).is_err() {
                break;
            }
        }
        drop(to_work);
        Ok(())
    })?;
    let mut each: Vec<(usize, Analysed)> = done.into_iter().collect();
    each.sort_by_key(|(i, _)| *i);
    let mut tally = memo::Tally::default();
    let mut histories = Vec::with_capacity(each.len());
    for (_, (h, kept)) in each {
        if let (Some(m), Some((kept, t))) = (memo.as_mut(), kept) {
            m.put_host(h.host.raw(), kept);
            tally.sum(t);
        }
        histories.push(h);
    }
    if let (Some(path), Some(m)) = (&args.state, &memo) {
        crate::platform::files::write_output(path, &m.to_json())
            .map_err(|e| UsageError::new(format!("--state {}: {e:#}", path.display())))?;
        out.aside(&format!(
            "Searched whole: {} series; taken from {}: {} with no new result, {} with the newest results the newest test's.\n",
            tally.searched,
            path.display(),
            tally.same,
            tally.stood
        ));
    }
    Ok(histories)
}

/// One host's history, and what `--state` keeps of its searches.
type Analysed = (History, Option<memo::HostKept>);

/// Each host's figures that fail tonight, in one line: any fails the job.
fn gate_line(h: &Histories) -> Option<String> {
    let worse: Vec<String> = h
        .hosts
        .iter()
        .filter_map(|one| {
            let line = gate_failure(one)?;
            Some(if h.fleet {
                format!("{}: {line}", one.host.cut(64))
            } else {
                line
            })
        })
        .collect();
    (!worse.is_empty()).then(|| worse.join("; "))
}

/// The line of a host whose gate fails tonight: its first failing figure, and how many more.
fn gate_failure(h: &History) -> Option<String> {
    let failing: Vec<_> = h.gate.iter().flatten().filter(|w| w.fails).collect();
    let first = failing.first()?;
    let more = match failing.len() - 1 {
        0 => String::new(),
        1 => ", and 1 more figure".to_string(),
        n => format!(", and {n} more figures"),
    };
    Some(format!("{}{more}", render::history::gate_line(first)))
}

/// `--series FILE`: each series' change points (indices of the first point of a new level).
fn series_file(
    path: &std::path::Path,
    settings: &Settings,
    min_change: Option<f64>,
) -> Result<std::collections::BTreeMap<String, Vec<usize>>> {
    let bytes = crate::platform::files::read_regular(path, crate::model::MAX_RESULT_BYTES)
        .map_err(|e| UsageError::new(format!("cannot read {}: {e}", path.display())))?;
    crate::history::series_change_points(&bytes, settings, min_change)
        .map_err(|why| UsageError::new(format!("{}: {why}", path.display())).into())
}

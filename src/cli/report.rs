use std::path::Path;

use anyhow::Result;
use clap::{Arg, Args};

use super::args::{PrintArgs, Selection, StoreArgs};
use super::load::{load_result, load_stored, Reader};
use super::output::{format_values, FormatArgs};
use crate::compare::compare;
use crate::error::UsageError;
use crate::fleet::{Fleet, StoredHost};
use crate::model::RunResult;
use crate::render::exporters::{self, Format, Shown, Subject};
use crate::store::{Filter, ResultStore, StoredEntry};
use crate::text::Text;

/// Where `report` writes its page when -o is not given.
const DEFAULT_FILE: &str = "hostbench-report.html";
/// Where `report --fleet` writes its page when -o is not given.
const DEFAULT_FLEET_FILE: &str = "hostbench-fleet.html";

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Results: stored ids or result JSON files (with two or more, the first is compared with
    /// each other); none: the stored results --host, --tag and --since select
    #[arg(value_name = "ID")]
    pub results: Vec<String>,
    /// Many hosts on one page: a strip plot of each headline figure across hosts, then a row
    /// per host (--host-label, else hostname) with the figures of its latest result. The
    /// table is paged, sortable and filtered by tag; the hosts outside the group's noise-aware
    /// range are named and highlighted. All stored results unless ids or filters say which
    #[arg(long)]
    pub fleet: bool,
    #[command(flatten)]
    pub output: FormatArgs,
    #[command(flatten)]
    pub select: Selection,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub print: PrintArgs,
}

/// `--format`'s values here (`mut_arg` on the subcommand): the formats that show a report or
/// a fleet. Each shows both (the table's rows), so none is refused when run.
pub fn formats(format: Arg) -> Arg {
    format
        .value_parser(format_values(&[Shown::Report, Shown::Fleet]))
        .help("The output format [default: html]")
}

/// `-o`'s help here: the page goes to a file of its own by default.
pub fn output(output: Arg) -> Arg {
    output.help(format!(
        "Write to FILE (\"-\": standard output) [default: html to {DEFAULT_FILE}, or {DEFAULT_FLEET_FILE} with --fleet; other formats to standard output]"
    ))
}

pub fn exec(args: &ReportArgs) -> Result<i32> {
    let narrows = args.select.narrows();
    if !args.results.is_empty() && narrows {
        return Err(UsageError::new(
            "give report results (ids, files) or --host/--tag/--since, not both",
        )
        .into());
    }
    if args.results.is_empty() && !narrows && !args.fleet {
        return Err(UsageError::new(
            "report needs results: stored ids, result files, or --host/--tag/--since to select stored ones (or --fleet)",
        )
        .into());
    }
    // A format that cannot show what was asked is said before anything is loaded.
    let format = args.output.format(args.print.json(), Format::Html)?;
    let shown = if args.fleet {
        Shown::Fleet
    } else {
        Shown::Report
    };
    exporters::check(format, shown).map_err(|e| UsageError::new(e.to_string()))?;
    // A fleet of stored results is drawn from their stored figures (fleet_of_stored).
    let stored_fleet = if args.fleet && args.results.is_empty() {
        Some(stored_fleet(args)?)
    } else {
        None
    };
    let (results, selection) = if stored_fleet.is_some() {
        (Vec::new(), String::new())
    } else if args.results.is_empty() {
        selected(args)?
    } else {
        let reader = Reader::new(&args.store);
        let results = args
            .results
            .iter()
            .map(|a| load_result(&reader, a))
            .collect::<Result<Vec<_>>>()?;
        (results, args.results.join(", "))
    };
    let out = args.print.output();
    let fleet;
    let mut comparisons = Vec::new();
    let fleet_selection;
    let (subject, default_file) = if args.fleet {
        (fleet, fleet_selection) = match stored_fleet {
            Some(made) => made,
            None => (crate::fleet::fleet(&results), selection.clone()),
        };
        let subject = Subject::Fleet {
            fleet: &fleet,
            selection: &fleet_selection,
        };
        (subject, DEFAULT_FLEET_FILE)
    } else {
        if let Some(((a_label, a), rest)) = results.split_first() {
            for (b_label, b) in rest {
                // Results that share nothing are still shown; they have no table.
                if let Ok(c) = compare(a_label, a, b_label, b) {
                    comparisons.push(c);
                }
            }
        }
        let subject = Subject::Report {
            results: &results,
            comparisons: &comparisons,
        };
        (subject, DEFAULT_FILE)
    };
    // The page goes to a file unless -o says otherwise; other formats to standard output.
    let default_file = (format == Format::Html).then(|| Path::new(default_file));
    if let Some(path) = args.output.emit(&out, format, subject, default_file)? {
        out.chatter(&format!("Report: {}\n", path.display()));
    }
    match out.stdout_error() {
        Some(e) => Err(anyhow::anyhow!("writing to standard output: {e}")),
        None => Ok(0),
    }
}

/// The stored results a selection takes: their list rows, the store and its name, and the
/// selection in words.
struct Listed {
    entries: Vec<StoredEntry>,
    store: Box<dyn ResultStore>,
    db: String,
    selection: String,
}

/// The stored results the selection takes; none is an error.
fn listed(args: &ReportArgs) -> Result<Listed> {
    let filter = args.select.filter();
    let (db, store, entries) = args.store.stored(&filter)?;
    let selection = described(&filter, entries.len(), &db);
    match store {
        Some(store) if !entries.is_empty() => Ok(Listed {
            entries,
            store,
            db,
            selection,
        }),
        _ => Err(UsageError::new(format!("no stored result to report: {selection}")).into()),
    }
}

/// `report --fleet` of stored results: the fleet, drawn from their stored headline figures one
/// host at a time — the hosts first, then each host's results — so that memory grows with the
/// hosts and the largest host's results, not with the store.
fn stored_fleet(args: &ReportArgs) -> Result<(Fleet, String)> {
    let filter = args.select.filter();
    let (db, store) = args.store.open_read_only()?;
    let (fleet, taken) = match &store {
        None => (None, 0),
        Some(store) => {
            let (fleet, taken) = fleet_in(store.as_ref(), &filter, &db)?;
            (Some(fleet), taken)
        }
    };
    let selection = described(&filter, taken, &db);
    // A fleet with no result yet is an empty fleet, as `results hosts` and `results export
    // --fleet` show it (exit 0).
    Ok((fleet.unwrap_or_else(|| crate::fleet::fleet(&[])), selection))
}

/// The fleet of the results `filter` selects in `store` (at `db`), as `report --fleet` draws
/// it, and how many stored results it was drawn from.
pub(super) fn fleet_in(
    store: &dyn ResultStore,
    filter: &Filter,
    db: &str,
) -> Result<(Fleet, usize)> {
    let asked = |e: anyhow::Error| UsageError::new(format!("{e:#}"));
    let (hosts, _) = crate::fleet::retired::serving(store, filter).map_err(asked)?;
    let read = |host: &Text| -> Result<StoredHost> {
        let (one, entries) = store.list_of_host(filter, host).map_err(asked)?;
        Ok(StoredHost {
            entries,
            tags: store.tags(&one).map_err(asked)?,
            figures: store.figures(&one).map_err(asked)?,
        })
    };
    crate::fleet::fleet_of_stored(&hosts, read, |id| load_stored(Some(store), db, id))
}

/// The selection in words: how many stored results it took, from where, of what.
fn described(filter: &Filter, n: usize, db: &str) -> String {
    if *filter == Filter::default() {
        format!("all {n} stored results in {db}")
    } else {
        format!("the {n} stored results in {db} of {}", filter.describe())
    }
}

/// The stored results the selection takes, labelled `result ID`, and what it was.
fn selected(args: &ReportArgs) -> Result<(Vec<(String, RunResult)>, String)> {
    let Listed {
        entries,
        store,
        db,
        selection,
    } = listed(args)?;
    let results = entries
        .iter()
        .map(|e| {
            let r = load_stored(Some(store.as_ref()), &db, e.id)?;
            Ok((format!("result {}", e.id), r))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((results, selection))
}

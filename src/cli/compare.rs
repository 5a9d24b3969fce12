use std::path::Path;

use anyhow::Result;
use clap::{Arg, Args};

use super::args::{PrintArgs, Selection, StoreArgs};
use super::load::{checked, load_result, load_stored, Reader};
use super::output::{format_values, FormatArgs, Output};
use crate::compare::{compare_runs, host_of, host_spread, HostSpread, SideArg};
use crate::error::UsageError;
use crate::model::RunResult;
use crate::render::exporters::{Format, Shown, Subject};
use crate::store::Filter;

/// Exit code of `compare --fail-on-regression` and `history --fail-on worse` when they find
/// what they were asked to fail on (1 is a failure of the tool or host, 2 a usage error).
pub const EXIT_REGRESSION: i32 = 3;

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The first (older) side: a stored id or a result JSON file, several runs as A1,A2,A3,
    /// gID (the runs of a --repeat), tag:KEY=VALUE or host:NAME (the stored results of a tag
    /// or a host)
    pub a: String,
    /// The second (newer) side: as A
    pub b: String,
    /// Exit with 3 when a significant regression is larger than PCT percent
    #[arg(long = "fail-on-regression", value_name = "PCT")]
    pub fail_on_regression: Option<f64>,
    #[command(flatten)]
    pub output: FormatArgs,
    /// With tag: and host: sides, --host, --tag and --since narrow both (tag:kernel=A
    /// tag:kernel=B --tag fleet=rack12 --since 2026-11-01)
    #[command(flatten)]
    pub select: Selection,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub print: PrintArgs,
}

/// `--format`'s values here (`mut_arg` on the subcommand): the formats that show a comparison.
pub fn formats(format: Arg) -> Arg {
    format.value_parser(format_values(&[Shown::Comparison]))
}

pub fn exec(args: &CompareArgs) -> Result<i32> {
    if let Some(p) = args.fail_on_regression {
        if !p.is_finite() || p < 0.0 {
            return Err(UsageError::new(
                "--fail-on-regression must be a finite percentage of 0 or more (the gate could never fire)",
            )
            .into());
        }
    }
    let format = args.output.format(args.print.json(), Format::Text)?;
    let out = args.print.output();
    let narrow = args.select.filter();
    let narrowed = narrow != Filter::default();
    let selects = |arg: &str| -> Result<bool> {
        Ok(matches!(
            SideArg::parse(arg, |p| Path::new(p).exists())?,
            SideArg::Selection(_)
        ))
    };
    if narrowed && !(selects(&args.a)? && selects(&args.b)?) {
        return Err(UsageError::new(
            "--host, --tag and --since narrow tag:KEY=VALUE and host:NAME sides; give both sides so",
        )
        .into());
    }
    let reader = Reader::new(&args.store);
    let (a_name, a) = load_side(&reader, &out, &args.a, &narrow)?;
    let (b_name, b) = load_side(&reader, &out, &args.b, &narrow)?;
    each_run_once(&a_name, &a, &b_name, &b)?;
    let spread = match (a.as_slice(), b.as_slice()) {
        ([one_a], [one_b]) => spread_for(&reader, one_a, one_b)?,
        _ => None,
    };
    let c = compare_runs(&a_name, &a, &b_name, &b, spread.as_ref())?;
    if let Some(path) = args
        .output
        .emit(&out, format, Subject::Comparison(&c), None)?
    {
        out.chatter(&format!("Written: {}\n", path.display()));
    }
    if let Some(e) = out.stdout_error() {
        anyhow::bail!("writing to standard output: {e}");
    }
    if let Some(pct) = args.fail_on_regression {
        let worse = c.regressions_over(pct);
        if !worse.is_empty() {
            let names: Vec<String> = worse
                .iter()
                .map(|r| format!("{} ({:+.1}%)", r.name, r.change_pct))
                .collect();
            out.err(&format!(
                "hostbench: {} significant regression{} over {pct}%: {}\n",
                worse.len(),
                if worse.len() == 1 { "" } else { "s" },
                names.join("; ")
            ));
            return Ok(EXIT_REGRESSION);
        }
    }
    Ok(0)
}

/// For one run a side on one host: the run-to-run spread of each figure over that host's
/// earlier stored runs of the same plan (`host_spread`). None without a store, or for
/// two hosts.
fn spread_for(reader: &Reader<'_>, a: &RunResult, b: &RunResult) -> Result<Option<HostSpread>> {
    if host_of(a) != host_of(b) {
        return Ok(None);
    }
    let (_, store) = reader.get()?;
    let Some(store) = store else {
        return Ok(None);
    };
    // A and B themselves, where they are stored, are not their own history.
    let mut own: Vec<i64> = Vec::new();
    for uuid in [a, b]
        .iter()
        .filter_map(|r| r.uuid.as_deref().and_then(crate::model::canonical_uuid))
    {
        own.extend(
            store
                .find(&uuid)
                .map_err(|e| UsageError::new(format!("{e:#}")))?,
        );
    }
    Ok(Some(
        host_spread(store, a, b.started_at, &own).map_err(|e| UsageError::new(format!("{e:#}")))?,
    ))
}

/// One side of a comparison, loaded: what its argument names ([`SideArg`]) and a label for it.
/// `narrow` adds to a tag or host side what the filter options say.
fn load_side(
    reader: &Reader<'_>,
    out: &Output,
    arg: &str,
    narrow: &Filter,
) -> Result<(String, Vec<RunResult>)> {
    match SideArg::parse(arg, |p| Path::new(p).exists())? {
        SideArg::Selection(filter) => {
            let (filter, label) = SideArg::narrowed(filter, arg, narrow)?;
            Ok((label.clone(), load_selection(reader, out, &filter, &label)?))
        }
        SideArg::Group(g) => Ok((format!("group g{g}"), load_group(reader, g)?)),
        SideArg::One(name) => {
            let (name, r) = load_result(reader, &name)?;
            Ok((name, vec![r]))
        }
        SideArg::List(parts) => {
            let runs = parts
                .iter()
                .map(|p| load_result(reader, p).map(|(_, r)| r))
                .collect::<Result<Vec<_>>>()?;
            Ok((SideArg::list_label(&parts), runs))
        }
    }
}

/// The stored results `filter` selects. A row that cannot be read or holds impossible figures
/// (another host's, malformed) is left out, said in one line: it never breaks the comparison.
fn load_selection(
    reader: &Reader<'_>,
    out: &Output,
    filter: &Filter,
    label: &str,
) -> Result<Vec<RunResult>> {
    let (db, store) = reader.get()?;
    let ids: Vec<i64> = match store {
        Some(s) => s
            .list(filter)
            .map_err(|e| UsageError::new(format!("{e:#}")))?
            .iter()
            .map(|e| e.id)
            .collect(),
        None => Vec::new(),
    };
    if ids.is_empty() {
        return Err(UsageError::new(format!("no stored result of {label} in {db}")).into());
    }
    let runs: Vec<RunResult> = ids
        .iter()
        .filter_map(|id| {
            let loaded =
                load_stored(store, db, *id).and_then(|r| checked(r, &format!("result {id}")));
            match loaded {
                Ok(r) => Some(r),
                Err(why) => {
                    out.err(&format!("hostbench: result {id} left out: {why:#}\n"));
                    None
                }
            }
        })
        .collect();
    if runs.is_empty() {
        return Err(
            UsageError::new(format!("no readable stored result of {label} in {db}")).into(),
        );
    }
    Ok(runs)
}

/// The runs of the `--repeat` group `g`.
fn load_group(reader: &Reader<'_>, g: i64) -> Result<Vec<RunResult>> {
    let (db, store) = reader.get()?;
    let ids = match store {
        Some(s) => s.group(g).map_err(|e| UsageError::new(format!("{e:#}")))?,
        None => Vec::new(),
    };
    if ids.is_empty() {
        return Err(UsageError::new(format!(
            "no group g{g} in {db} (a group of --repeat runs is named after its first run's id)"
        ))
        .into());
    }
    ids.iter()
        .map(|id| checked(load_stored(store, db, *id)?, &format!("result {id}")))
        .collect()
}

/// Refuses a run named twice on one side (`1,1,1`, or one run by id and again by file) or on
/// both: counted twice it would seem more certain than it is, and against itself a run is
/// "no change" by construction. A run is known by its UUID in one spelling (a result from
/// before UUIDs, by the one its JSON gives it).
fn each_run_once(a_name: &str, a: &[RunResult], b_name: &str, b: &[RunResult]) -> Result<()> {
    let identity = |r: &RunResult| -> String {
        match r.uuid.as_deref().map(uuid::Uuid::parse_str) {
            Some(Ok(u)) => u.hyphenated().to_string(),
            Some(Err(_)) => r.uuid.clone().unwrap_or_default(),
            None => crate::model::derived_uuid(&serde_json::to_string(r).unwrap_or_default()),
        }
    };
    let names = [a_name, b_name];
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (side, runs) in [a, b].into_iter().enumerate() {
        for r in runs {
            let id = identity(r);
            if let Some(first) = seen.insert(id.clone(), side) {
                let said = crate::model::label::printable(&id, 40);
                return Err(UsageError::new(if first == side {
                    format!(
                        "{} names the run {said} twice; each run counts once (a run named twice would look more certain than it is)",
                        crate::model::label::printable(names[side], 80)
                    )
                } else {
                    format!(
                        "the run {said} is on both sides ({} and {}); compare other runs",
                        crate::model::label::printable(names[0], 80),
                        crate::model::label::printable(names[1], 80)
                    )
                })
                .into());
            }
        }
    }
    Ok(())
}

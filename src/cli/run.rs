use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use super::console::{Console, RunView, View};
use super::output::Output;
use super::session::{prepare_workdir, Session};
use super::{CalibrationArgs, GlobalArgs};
use crate::error::UsageError;
use crate::render;
use crate::standard::{self, Profile, StandardPlan};
use crate::suites::HostLimits;

#[derive(Debug, Args)]
pub struct RunArgs {
    /// How long the run takes, and how precise it is
    #[arg(long, value_name = "PROFILE", value_enum, default_value = "standard")]
    pub profile: Profile,
    /// Where the index tests' and the interactive loads' files go [default: the current directory]
    #[arg(long, value_name = "DIR")]
    pub workdir: Option<PathBuf>,
    /// Show the plan (the parts, what each runs, about how long) and stop: nothing is measured
    /// or stored
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub calibration: CalibrationArgs,
}

pub fn exec(args: &RunArgs, global: &GlobalArgs, argv: Vec<String>) -> Result<i32> {
    let environment = crate::model::Environment::collect();
    let workdir = args.workdir.clone().unwrap_or_else(|| PathBuf::from("."));
    if !workdir.is_dir() {
        return Err(UsageError::new(format!(
            "--workdir {} is not a directory",
            workdir.display()
        ))
        .into());
    }
    let host = HostLimits::of(&environment, &workdir);
    let cpus = host.usable_cpus;
    let plan = StandardPlan::new(
        args.profile,
        &host,
        args.calibration.options(global)?,
        &workdir,
    )?;
    if args.dry_run {
        let out = Output::new(false, false);
        out.out(&render::standard::plan(
            plan.profile.name(),
            cpus,
            &plan.units().map(|p| p.planned()),
            &plan.skipped,
        ));
        return Ok(out.stdout_error().map_or(0, |_| 1));
    }
    let exe = std::env::current_exe().context("finding the hostbench binary for its workers")?;
    let mut session = Session::start(global, argv, environment)?;
    // The workdir is checked before the first part: a bad one must not cost the noise part.
    prepare_workdir(&workdir, &session.out)?;
    session.check_noise();
    let stop = session.stop.clone();
    let parts = plan.units().map(|p| p.planned());
    let view = View::Run(RunView::new(&parts));
    let mut console = Console::new(&mut session, view, global.shows_progress());
    console.chatter(&render::standard::plan(
        plan.profile.name(),
        cpus,
        &parts,
        &plan.skipped,
    ));

    let outcome = standard::run(&plan, &exe, stop.flag(), &mut console);
    console.finish();
    let notes = match console.view {
        View::Run(run) => run.notes,
        _ => Vec::new(),
    };
    let cut_short = outcome.failure.is_some() || outcome.suites.len() < parts.len();
    let done = session.finish(outcome.suites, cut_short);
    let mut skipped = plan.skipped.clone();
    skipped.extend(render::standard::skipped_in(&done.result));
    skipped.extend(notes);
    if global.json {
        done.print_json();
    } else {
        done.out.out(&render::standard::summary(
            &done.result,
            done.id(),
            done.store_location(),
            &skipped,
            outcome.failure.as_deref(),
        ));
    }
    // The summary says where a stored result went; a failed store is said on its own.
    if done.id().is_none() {
        done.say_where_stored();
    }
    if let Some(f) = &outcome.failure {
        done.out.err(&format!("hostbench: error: {f}\n"));
    }
    let failed_tests = render::standard::failed_in(&done.result);
    if !failed_tests.is_empty() {
        done.out.err(&format!(
            "hostbench: error: failed: {}; the result is marked incomplete\n",
            failed_tests.join("; ")
        ));
    }
    Ok(done.exit_code(outcome.failure.is_some() || !failed_tests.is_empty()))
}

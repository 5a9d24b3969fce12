//! Results brought into a store from elsewhere: files (`results import`) or another store
//! (`results push`, `results pull`). Each is stored once per UUID (`ResultStore::put`), and a
//! run of a `--repeat` group keeps its group: a group is named after its first run's id, which
//! differs from one store to the next, so the name is given again where the copy lands.

use std::collections::HashMap;

use anyhow::Result;

use super::{IdentityOf, Put, ResultStore};
use crate::error::{said_of, UsageError};
use crate::model::{canonical_uuid, Repeat, RunResult};

/// What a store is handed with a result: its headline, which the store does not render.
pub type Headline<'a> = &'a dyn Fn(&RunResult) -> String;

/// Stores `results` (read from files) in `store`, in the order given but with a group's first
/// run brought forward to just before the first of its runs, so that the others find it. A
/// run keeps its group only where the group's first run is among them (found by UUID): the
/// group in a file is the id of that first run in the store it came from, which here names
/// nothing, or another run. Returns, in the order stored, each result's index in `results`,
/// its id here and what `put` did.
pub fn import(
    store: &mut dyn ResultStore,
    results: &[RunResult],
    headline: Headline<'_>,
) -> Result<Vec<(usize, i64, Put)>> {
    // A group is its number in the store it came from, its size, and the host that ran it (its
    // machine and label): files of two stores (two hosts' `g1`) are two groups.
    let group_of = |r: &RunResult| {
        r.repeat.map(|rep| {
            (
                (rep.group, rep.of),
                r.environment.host.hostname.raw().to_string(),
                r.environment
                    .host
                    .machine_id
                    .as_ref()
                    .map(|m| m.raw().to_string()),
                r.host_label.as_ref().map(|l| l.raw().to_string()),
            )
        })
    };
    let firsts: HashMap<_, String> = results
        .iter()
        .filter(|r| r.repeat.is_some_and(|rep| rep.run == 1))
        .filter_map(|r| Some((group_of(r)?, canonical_uuid(r.uuid.as_deref()?)?)))
        .collect();
    let first_at = |r: &RunResult| {
        let group = group_of(r)?;
        results.iter().position(|f| {
            f.repeat.is_some_and(|p| p.run == 1) && group_of(f).as_ref() == Some(&group)
        })
    };
    let mut order: Vec<usize> = Vec::with_capacity(results.len());
    for (i, result) in results.iter().enumerate() {
        let first = first_at(result);
        for j in first.into_iter().chain([i]) {
            if !order.contains(&j) {
                order.push(j);
            }
        }
    }
    let mut done = Vec::with_capacity(order.len());
    for i in order {
        let mut result = results[i].clone();
        if let Some(rep) = result.repeat {
            let first = match group_of(&result).and_then(|g| firsts.get(&g)) {
                Some(u) => store.find(u)?,
                None => None,
            };
            match first {
                Some(id) => result.repeat = Some(Repeat { group: id, ..rep }),
                None if rep.run == 1 => {}
                None => result.repeat = None,
            }
        }
        let (id, put) = store.put(&result, &headline(&result))?;
        // A first run names its group after its own id here.
        if let Some(rep) = result.repeat.filter(|r| r.run == 1 && r.group != id) {
            result.repeat = Some(Repeat { group: id, ..rep });
            if put != Put::AlreadyThere {
                store.replace(id, &result, &headline(&result))?;
            }
        }
        done.push((i, id, put));
    }
    Ok(done)
}

/// What became of one result of a copy between stores.
pub enum Copied {
    /// Stored there (`put` says how) under id `to`.
    Stored { from: i64, to: i64, put: Put },
    /// Left out: it could not be read here, or the store copied to refused it (`refused`).
    LeftOut {
        from: i64,
        why: anyhow::Error,
        refused: bool,
    },
}

/// Copies the results `ids` of `from` (named `from_name` in messages) to `to`, oldest first,
/// telling `each` what became of each. Where `listed` (the ids are a selection, not named one
/// by one), a row that cannot be read or that `to` refuses is left out and the copy goes on:
/// one bad row never stops a copy of the rest. A result named by id that cannot be copied is
/// an error. A run of a `--repeat` group keeps its group there, named after the id the
/// group's first run has in `to`.
pub fn copy(
    from: &dyn ResultStore,
    from_name: &str,
    to: &mut dyn ResultStore,
    ids: &[i64],
    listed: bool,
    headline: Headline<'_>,
    each: &mut dyn FnMut(Copied),
) -> Result<()> {
    let mut groups: HashMap<i64, i64> = HashMap::new();
    for &id in ids {
        // Already there, as far as this copy got or further, in its group there, and this
        // login's: nothing to read whole or store.
        if let Some(there) = already_there(from, &*to, id, &mut groups) {
            each(Copied::Stored {
                from: id,
                to: there,
                put: Put::AlreadyThere,
            });
            continue;
        }
        let read = match from.load(id) {
            Ok(Some(r)) => Ok(r),
            Ok(None) => {
                Err(UsageError::new(format!("no stored result with id {id} in {from_name}")).into())
            }
            Err(e) => Err(UsageError::new(format!("{e:#}")).into()),
        };
        let mut result = match read {
            Ok(r) => r,
            Err(why) if listed => {
                each(Copied::LeftOut {
                    from: id,
                    why,
                    refused: false,
                });
                continue;
            }
            Err(e) => return Err(e),
        };
        let group = result.repeat.map(|r| r.group);
        if let Some(g) = group {
            let there = match groups.get(&g) {
                Some(t) => Some(*t),
                None => first_run_there(from, &*to, g)?,
            };
            if let (Some(t), Some(r)) = (there, &mut result.repeat) {
                r.group = t;
            }
        }
        let (new_id, put) = match to.put(&result, &headline(&result)) {
            Ok(done) => done,
            Err(why) if listed && why.downcast_ref::<UsageError>().is_some() => {
                each(Copied::LeftOut {
                    from: id,
                    why,
                    refused: true,
                });
                continue;
            }
            Err(e) => return Err(said_of(e, format!("result {id} of {from_name}"))),
        };
        if let Some(g) = group {
            let name = *groups.entry(g).or_insert(new_id);
            // The copy there as it is now: the one just stored, or the one that was there (a
            // copy cut short between storing a group's first run and naming its group left it
            // under the other store's number).
            let mut there = match put {
                Put::AlreadyThere => to.load(new_id)?.unwrap_or(result),
                Put::Added | Put::Updated => result,
            };
            if let Some(r) = there.repeat.as_mut().filter(|r| r.group != name) {
                r.group = name;
                to.replace(new_id, &there, &headline(&there))?;
            }
        }
        each(Copied::Stored {
            from: id,
            to: new_id,
            put,
        });
    }
    Ok(())
}

/// The id in `to` of result `id` of `from`, where `put` would leave it as it is and its group
/// there is named: the same run, stored there as far as it got here or further, not another
/// login's row, and — a run of a `--repeat` group — in the group named after the id its first
/// run has there (`groups`, filled as found). None when anything says otherwise or cannot be
/// read: the result is then read whole and judged.
fn already_there(
    from: &dyn ResultStore,
    to: &dyn ResultStore,
    id: i64,
    groups: &mut HashMap<i64, i64>,
) -> Option<i64> {
    let mut here = from.identity(IdentityOf::Id(id)).ok()??;
    // Compared in its one spelling, as `put` stores it.
    here.uuid = canonical_uuid(&here.uuid)?;
    let there = to.identity(IdentityOf::Uuid(&here.uuid)).ok()??;
    if let Some(g) = here.repeat_group {
        let name = match groups.get(&g) {
            Some(n) => *n,
            None => {
                let first = from.identity(IdentityOf::Id(g)).ok()??;
                let uuid = canonical_uuid(&first.uuid)?;
                to.identity(IdentityOf::Uuid(&uuid)).ok()??.id
            }
        };
        if there.repeat_group != Some(name) {
            return None;
        }
        groups.insert(g, name);
    }
    here.already_in(&there).then_some(there.id)
}

/// The id, in the store copied to, of the first run of group `group` of the store copied from,
/// where it is there.
fn first_run_there(
    from: &dyn ResultStore,
    to: &dyn ResultStore,
    group: i64,
) -> Result<Option<i64>> {
    let Some(first) = from.load(group)? else {
        return Ok(None);
    };
    match first.uuid.as_deref().and_then(canonical_uuid) {
        Some(c) => to.find(&c),
        None => Ok(None),
    }
}

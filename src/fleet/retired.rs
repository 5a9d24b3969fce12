//! Retired hosts (`results retire`): an operator says a host is gone, and the fleet's views
//! (`results hosts`, `report --fleet`, `history --fleet`, `results export --fleet`) leave it
//! out, until it stores a run or a result again after its retirement. A selection that names
//! the host (`--host`) still shows it.

use anyhow::Result;
use chrono::{DateTime, Utc};

use crate::store::{Filter, ResultStore, Runs};
use crate::text::Text;

/// Retired hosts, each with when it was retired.
pub type Retired = Vec<(Text, DateTime<Utc>)>;

/// The hosts of `filter`'s fleet that are retired now, each with when.
pub fn retired_now(store: &dyn ResultStore, filter: &Filter) -> Result<Retired> {
    if filter.host.is_some() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for (host, at) in store.retired()? {
        // Anything of the host's started since: it is back.
        let since = Filter {
            host: Some(host.raw().to_string()),
            since: Some(at),
            ..Filter::default()
        };
        if store.list(&since)?.is_empty() && store.runs(&since, Runs::LatestPerHost)?.is_empty() {
            out.push((host, at));
        }
    }
    Ok(out)
}

/// The hosts of `filter` (as `ResultStore::hosts` names them) less those retired now, and
/// the retired ones.
pub fn serving(store: &dyn ResultStore, filter: &Filter) -> Result<(Vec<Text>, Retired)> {
    let retired = retired_now(store, filter)?;
    let mut hosts = store.hosts(filter)?;
    hosts.retain(|h| !is_retired(&retired, h));
    Ok((hosts, retired))
}

/// Whether `host` is one of `retired`.
pub fn is_retired(retired: &[(Text, DateTime<Utc>)], host: &Text) -> bool {
    retired.iter().any(|(name, _)| name.raw() == host.raw())
}

//! `history --state FILE`: each series' searches kept from one run to the next, so a nightly
//! run searches again only what the newest results can change.
//!
//! A search of a series (`find::levels`: the splits and stretches of E-divisive) is kept under
//! the series' key, the number of points it searched and a hash of those points' result ids.
//! The next run takes a kept search again wherever it searches the same points (the same
//! results): the levels before a change (`find::search` asks for them) are such a prefix. The
//! whole series is the one search the newest results enter. There a kept search of the series
//! as it was, at most [`MAX_NEW`] points ago, stands for the search of the whole: its changes
//! lie among the points it saw, and the newest points are the newest test's to judge
//! (`stats::newest`), which is run again every time, as is the nightly gate. So a series is
//! searched whole once every [`REFRESH`] runs, each series on a night of its own (by its hash),
//! and when its earlier results are not those the kept search saw (a result removed, a host's
//! series started again).

use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::stats::edivisive::ChangePoint;

/// The most new points a kept search of a series stands for the whole series' search.
pub const MAX_NEW: usize = 3;

/// A series is searched whole at least once in this many runs.
pub const REFRESH: u64 = 7;

/// The largest state file read (a fleet of 1,000 hosts of 150 series keeps about 20 MB).
pub const MAX_STATE_BYTES: u64 = 512 << 20;

/// The format of the state file; another is read as none (searched whole again).
const VERSION: u32 = 1;

/// What `--state FILE` holds: each host's series' searches.
#[derive(Debug, Serialize, Deserialize)]
pub struct Memo {
    version: u32,
    hosts: BTreeMap<String, HashMap<String, Kept>>,
}

/// What a host's run keeps for the next: each series' searches by key, and how its searches
/// were answered.
pub type HostKept = (HashMap<String, Kept>, Tally);

/// One series' searches, by the points they searched.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct Kept {
    searches: Vec<Search>,
}

/// One search: `len` points whose result ids hash to `ids`, its change points (index, Q̂, p),
/// whether it was a search of those points (else a kept one that stood for it), and whether it
/// was the search of the closest call (`find::closest`) rather than of the levels.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Search {
    len: usize,
    ids: u64,
    points: Vec<(usize, f64, f64)>,
    searched: bool,
    #[serde(default)]
    closest: bool,
}

impl Default for Memo {
    /// No search kept, in this build's format.
    fn default() -> Memo {
        Memo {
            version: VERSION,
            hosts: BTreeMap::new(),
        }
    }
}

impl Memo {
    /// The state file's memo; an empty one where the file does not exist, is of another
    /// version, or does not parse (everything is then searched whole, and kept anew). A file
    /// another user could have written is refused: what it holds decides what is searched.
    pub fn read(path: &std::path::Path) -> std::io::Result<Memo> {
        let bytes = match crate::platform::files::read_own(path, MAX_STATE_BYTES) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Memo::default()),
            Err(e) => return Err(e),
        };
        Ok(serde_json::from_slice::<Memo>(&bytes)
            .ok()
            .filter(|m| m.version == VERSION)
            .unwrap_or_default())
    }

    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a memo serializes")
    }

    /// One host's kept searches, taken out to be used and replaced.
    pub fn take_host(&mut self, host: &str) -> HashMap<String, Kept> {
        self.hosts.remove(host).unwrap_or_default()
    }

    pub fn put_host(&mut self, host: &str, series: HashMap<String, Kept>) {
        self.hosts.insert(host.to_string(), series);
    }
}

/// How the search of each series' whole was answered in one run.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Tally {
    /// Searched.
    pub searched: usize,
    /// A kept search of the same results (nothing new since).
    pub same: usize,
    /// A kept search of fewer results (the newest are the newest test's).
    pub stood: usize,
}

/// How one series' whole was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Whole {
    Searched,
    Same,
    Stood,
}

impl Tally {
    pub fn add(&mut self, w: Whole) {
        match w {
            Whole::Searched => self.searched += 1,
            Whole::Same => self.same += 1,
            Whole::Stood => self.stood += 1,
        }
    }

    pub fn sum(&mut self, t: Tally) {
        self.searched += t.searched;
        self.same += t.same;
        self.stood += t.stood;
    }
}

/// One series' searches in this run: the kept ones it may take, the hashes of its points'
/// result ids, and the searches made or taken, to keep for the next run.
pub struct Recall<'k> {
    before: Option<&'k Kept>,
    /// The hash of the first `i` points' first result ids, at `i`.
    prefix: Vec<u64>,
    /// Whether the whole series may be a kept search of fewer points.
    may_stand: bool,
    now: Mutex<Vec<Search>>,
    /// The whole's search was taken: as it was (`same`), or of fewer points (`stood`).
    same: AtomicBool,
    stood: AtomicBool,
}

impl<'k> Recall<'k> {
    /// `ids`: each point's first result id, in order; `key` names the series for the night it
    /// is searched whole.
    pub fn new(before: Option<&'k Kept>, ids: &[i64], key: &str) -> Recall<'k> {
        let mut prefix = Vec::with_capacity(ids.len() + 1);
        let mut h = std::collections::hash_map::DefaultHasher::new();
        prefix.push(h.finish());
        for id in ids {
            id.hash(&mut h);
            prefix.push(h.finish());
        }
        let mut night = std::collections::hash_map::DefaultHasher::new();
        key.hash(&mut night);
        let may_stand = !(ids.len() as u64 + night.finish() % REFRESH).is_multiple_of(REFRESH);
        Recall {
            before,
            prefix,
            may_stand,
            now: Mutex::new(Vec::new()),
            same: AtomicBool::new(false),
            stood: AtomicBool::new(false),
        }
    }

    /// The search of the first `len` points, where one is kept: the same points', else (for
    /// the whole series, on a night it is not searched whole) that of the series as it was at
    /// most [`MAX_NEW`] points ago. None: search them.
    pub fn recall(&self, len: usize) -> Option<Vec<ChangePoint>> {
        let (points, fewer) = self.recall_of(len, false)?;
        if len + 1 == self.prefix.len() {
            let taken = if fewer { &self.stood } else { &self.same };
            taken.store(true, Ordering::Relaxed);
        }
        Some(points)
    }

    /// The closest call's search of the whole series (its best cut and p), as [`Self::recall`]
    /// takes a search of the levels.
    pub fn recall_closest(&self) -> Option<Option<ChangePoint>> {
        let (points, _) = self.recall_of(self.prefix.len() - 1, true)?;
        Some(points.into_iter().next())
    }

    /// A kept search of the first `len` points (`closest`: the closest call's), and whether
    /// it is of fewer points.
    fn recall_of(&self, len: usize, closest: bool) -> Option<(Vec<ChangePoint>, bool)> {
        let before = self.before?;
        let ids = *self.prefix.get(len)?;
        let kept = before.searches.iter().filter(|s| s.closest == closest);
        if let Some(s) = kept.clone().find(|s| s.len == len && s.ids == ids) {
            self.keep(s.clone());
            return Some((points(s), false));
        }
        let whole = len + 1 == self.prefix.len();
        if !whole || !self.may_stand {
            return None;
        }
        let s = kept
            .filter(|s| s.len < len && len - s.len <= MAX_NEW)
            .filter(|s| self.prefix.get(s.len) == Some(&s.ids))
            .max_by_key(|s| s.len)?;
        self.keep(Search {
            len,
            ids,
            points: s.points.clone(),
            searched: false,
            closest,
        });
        Some((points(s), true))
    }

    fn keep(&self, s: Search) {
        self.now.lock().expect("one series a thread").push(s);
    }

    /// Keeps the search of the first `len` points for the next run.
    pub fn searched(&self, len: usize, found: &[ChangePoint]) {
        self.searched_of(len, found, false);
    }

    /// Keeps the closest call's search of the whole series for the next run.
    pub fn closest_searched(&self, found: Option<ChangePoint>) {
        self.searched_of(self.prefix.len() - 1, found.as_slice(), true);
    }

    fn searched_of(&self, len: usize, found: &[ChangePoint], closest: bool) {
        let Some(&ids) = self.prefix.get(len) else {
            return;
        };
        self.keep(Search {
            len,
            ids,
            points: found.iter().map(|c| (c.index, c.q, c.p)).collect(),
            searched: true,
            closest,
        });
    }

    /// What to keep of this series for the next run, and how its whole was answered.
    pub fn into_kept(self) -> (Kept, Whole) {
        let mut searches = self.now.into_inner().expect("one series a thread");
        searches.sort_by_key(|s| (s.closest, s.len));
        searches.dedup_by_key(|s| (s.closest, s.len, s.ids));
        let whole = if self.stood.into_inner() {
            Whole::Stood
        } else if self.same.into_inner() {
            Whole::Same
        } else {
            Whole::Searched
        };
        (Kept { searches }, whole)
    }
}

fn points(s: &Search) -> Vec<ChangePoint> {
    s.points
        .iter()
        .map(|&(index, q, p)| ChangePoint {
            index,
            q,
            p,
            newest: false,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(index: usize) -> ChangePoint {
        ChangePoint {
            index,
            q: 1.0,
            p: 0.001,
            newest: false,
        }
    }

    /// The key whose series, at `n` points, may stand on a kept search.
    fn standing_key(n: usize) -> String {
        (0..)
            .map(|i| format!("k{i}"))
            .find(|k| Recall::new(None, &vec![0; n], k).may_stand)
            .unwrap()
    }

    #[test]
    fn a_kept_search_of_the_same_results_is_taken_and_a_few_new_points_stand_on_it() {
        let key = standing_key(12);
        let ids: Vec<i64> = (1..=12).collect();
        let first = Recall::new(None, &ids[..10], &key);
        assert!(first.recall(10).is_none());
        first.searched(10, &[cut(4)]);
        first.searched(4, &[]);
        let (kept, whole) = first.into_kept();
        assert_eq!(whole, Whole::Searched);
        // The next run, two results more: the prefix of 4 is the same search; the whole
        // stands on the search of 10.
        let next = Recall::new(Some(&kept), &ids, &key);
        assert_eq!(next.recall(4).unwrap(), vec![]);
        assert_eq!(next.recall(12).unwrap()[0].index, 4);
        assert!(
            next.recall(11).is_none(),
            "only the whole stands on fewer points"
        );
        let (kept2, whole) = next.into_kept();
        assert_eq!(whole, Whole::Stood);
        assert!(kept2.searches.iter().any(|s| s.len == 12 && !s.searched));
    }

    #[test]
    fn other_results_or_too_many_new_ones_are_searched_again() {
        let key = standing_key(14);
        let ids: Vec<i64> = (1..=14).collect();
        let first = Recall::new(None, &ids[..10], &key);
        first.searched(10, &[cut(4)]);
        let (kept, _) = first.into_kept();
        // Four new points: more than MAX_NEW.
        assert!(Recall::new(Some(&kept), &ids, &key).recall(14).is_none());
        // A result of the first ten removed: not the points searched.
        let other: Vec<i64> = (2..=13).collect();
        assert!(Recall::new(Some(&kept), &other, &key).recall(12).is_none());
    }

    #[test]
    fn each_series_is_searched_whole_once_in_refresh_runs() {
        let whole = (20..20 + REFRESH as usize)
            .filter(|&n| !Recall::new(None, &vec![0; n], "a series").may_stand)
            .count();
        assert_eq!(whole, 1);
    }

    #[test]
    fn the_state_file_reads_back_and_another_version_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        assert!(Memo::read(&path).unwrap().hosts.is_empty());
        let mut m = Memo::default();
        let r = Recall::new(None, &[1, 2, 3, 4, 5, 6], "k");
        r.searched(6, &[cut(3)]);
        m.put_host("h", HashMap::from([("k".to_string(), r.into_kept().0)]));
        std::fs::write(&path, m.to_json()).unwrap();
        let back = Memo::read(&path).unwrap();
        assert_eq!(
            back.hosts["h"]["k"].searches[0].points,
            vec![(3, 1.0, 0.001)]
        );
        std::fs::write(&path, br#"{"version":0,"hosts":{}}"#).unwrap();
        assert!(Memo::read(&path).unwrap().hosts.is_empty());
        // One that others may write is refused: it decides what is searched.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        let why = Memo::read(&path).unwrap_err().to_string();
        assert!(why.contains("others may write it"), "{why}");
    }
}

//! What became of a run, kept apart from its result: a measuring command records "running" as
//! it starts and its outcome as it ends (finished, incomplete, failed and why, interrupted), and
//! where the result went. So a run that stored nothing (it failed, was killed, or could not
//! reach its store) is still seen: `results hosts` shows each host's last run beside its latest
//! result, and "which host failed last night" is one command.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::text::Text;

/// The longest `why` and `stored` kept (a store bounds them too): a reason, not a log.
pub const MAX_STATE_TEXT: usize = 512;
/// The longest command line kept.
pub const MAX_COMMAND: usize = 1024;

/// How a run ended, or that it has not (yet).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Started and not ended: still measuring, or killed (SIGKILL, power) before it could say.
    Running,
    /// Measured everything it planned, and its result was stored.
    Finished,
    /// Its result was stored, marked incomplete (a test failed, a part was skipped).
    Incomplete,
    /// It failed: its result could not be stored where it was asked to, or it stopped on an
    /// error before or while measuring.
    Failed,
    /// A signal stopped it (Ctrl-C, SIGTERM); what it measured was stored, marked incomplete.
    Interrupted,
}

impl Outcome {
    pub const ALL: [Outcome; 5] = [
        Outcome::Running,
        Outcome::Finished,
        Outcome::Incomplete,
        Outcome::Failed,
        Outcome::Interrupted,
    ];

    /// The word stored and shown.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Running => "running",
            Outcome::Finished => "finished",
            Outcome::Incomplete => "incomplete",
            Outcome::Failed => "failed",
            Outcome::Interrupted => "interrupted",
        }
    }

    /// The outcome a stored word names; None for anything else (a row another program wrote).
    pub fn parse(word: &str) -> Option<Outcome> {
        Outcome::ALL.into_iter().find(|o| o.name() == word)
    }

    /// Whether it needs a look: it failed or was stopped.
    pub fn is_bad(self) -> bool {
        matches!(self, Outcome::Failed | Outcome::Interrupted)
    }
}

/// One run's state, as stored (one row per run, by its UUID: the same as its result's).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunState {
    pub uuid: String,
    /// The host's name (its hostname) and its `--host-label`.
    pub host: Text,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_label: Option<Text>,
    /// The command line, passwords replaced (as the result keeps it).
    pub command: Text,
    pub started_at: DateTime<Utc>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<DateTime<Utc>>,
    pub outcome: Outcome,
    /// Why it failed or was stopped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<Text>,
    /// Where its result went ("result 12 in URL", a file, or a store it fell back to).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stored: Option<Text>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub tags: BTreeMap<Text, Text>,
    /// The login that recorded it (PostgreSQL; None in SQLite).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner: Option<Text>,
}

impl RunState {
    /// The name its host goes by: its `--host-label`, else its hostname.
    pub fn host_name(&self) -> &Text {
        self.host_label.as_ref().unwrap_or(&self.host)
    }

    /// The tags as a JSON object, as a store keeps them.
    pub fn tags_json(&self) -> String {
        let raw: BTreeMap<&str, &str> = self.tags.iter().map(|(k, v)| (k.raw(), v.raw())).collect();
        serde_json::to_string(&raw).unwrap_or_else(|_| "{}".into())
    }

    /// The tags a store kept as JSON, bounded as a command line bounds them (the first 64,
    /// each cut to its longest); none where it does not read as an object of strings.
    pub fn tags_from_json(json: &str) -> BTreeMap<Text, Text> {
        use crate::model::label::{MAX_TAGS, MAX_TAG_KEY, MAX_TAG_VALUE};
        serde_json::from_str::<BTreeMap<String, String>>(json)
            .map(|m| {
                m.into_iter()
                    .take(MAX_TAGS)
                    .map(|(k, v)| {
                        (
                            Text::new(k).truncated(MAX_TAG_KEY),
                            Text::new(v).truncated(MAX_TAG_VALUE),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Ended with `outcome` now, `why` and `stored` bounded as a store keeps them.
    pub fn ended(&mut self, outcome: Outcome, why: Option<&str>, stored: Option<&str>) {
        self.ended_at = Some(Utc::now());
        self.outcome = outcome;
        self.why = why.map(|w| Text::new(w).truncated(MAX_STATE_TEXT));
        self.stored = stored.map(|s| Text::new(s).truncated(MAX_STATE_TEXT));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_outcome_reads_back_from_its_word_and_nothing_else_does() {
        for o in Outcome::ALL {
            assert_eq!(Outcome::parse(o.name()), Some(o));
        }
        assert_eq!(Outcome::parse("Finished"), None);
        assert_eq!(Outcome::parse(""), None);
        assert!(Outcome::Failed.is_bad() && Outcome::Interrupted.is_bad());
        assert!(!Outcome::Running.is_bad() && !Outcome::Incomplete.is_bad());
    }

    #[test]
    fn tags_round_trip_and_a_bad_json_reads_as_none() {
        let mut tags = BTreeMap::new();
        tags.insert(Text::new("fleet"), Text::new("lab \"a\""));
        let state = RunState {
            uuid: "u".into(),
            host: Text::new("h"),
            host_label: None,
            command: Text::new("hostbench run"),
            started_at: Utc::now(),
            ended_at: None,
            outcome: Outcome::Running,
            why: None,
            stored: None,
            tags: tags.clone(),
            owner: None,
        };
        assert_eq!(RunState::tags_from_json(&state.tags_json()), tags);
        assert!(RunState::tags_from_json("[1]").is_empty());
        assert!(RunState::tags_from_json("{\"a\": 1}").is_empty());
    }

    #[test]
    fn a_long_reason_is_bounded() {
        let mut state = RunState {
            uuid: "u".into(),
            host: Text::new("h"),
            host_label: None,
            command: Text::new("c"),
            started_at: Utc::now(),
            ended_at: None,
            outcome: Outcome::Running,
            why: None,
            stored: None,
            tags: BTreeMap::new(),
            owner: None,
        };
        state.ended(Outcome::Failed, Some(&"x".repeat(10_000)), None);
        assert_eq!(state.why.unwrap().raw().chars().count(), MAX_STATE_TEXT + 1);
        assert!(state.ended_at.is_some());
    }
}

//! One message to the people who are not watching: what happened to which run, how much it
//! matters, and what it has cost so far. Every target (Slack, a webhook, ntfy, a terminal)
//! is sent the same [`Event`], each in its own format; the outbox keeps it as it is here.

use serde::{Deserialize, Serialize};

use crate::engine::notice::Severity;

/// What a message is about; a target's `events` list names the kinds it wants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EventKind {
    /// An attempt ended: it succeeded, failed, or was deleted.
    AttemptEnded,
    /// A run was recovered: restarted after a preemption, or moved to on-demand nodes.
    Recovered,
    /// A training metric went NaN or infinite, or a loss jumped.
    Alert,
    /// A run stopped making progress.
    Stalled,
    /// A run's pods wait (for capacity, an image, a node) longer than they should.
    Waiting,
    /// The cluster runs with nothing on it.
    Idle,
    /// A run's cost crossed a threshold.
    Budget,
    /// The cluster changed: created, in ERROR, deleted.
    Cluster,
}

impl EventKind {
    pub const ALL: [EventKind; 8] = [
        EventKind::AttemptEnded,
        EventKind::Recovered,
        EventKind::Alert,
        EventKind::Stalled,
        EventKind::Waiting,
        EventKind::Idle,
        EventKind::Budget,
        EventKind::Cluster,
    ];

    /// The stable name, as the config and the webhook's `event` field write it.
    pub fn name(self) -> &'static str {
        match self {
            EventKind::AttemptEnded => "attempt-ended",
            EventKind::Recovered => "recovered",
            EventKind::Alert => "alert",
            EventKind::Stalled => "stalled",
            EventKind::Waiting => "waiting",
            EventKind::Idle => "idle",
            EventKind::Budget => "budget",
            EventKind::Cluster => "cluster",
        }
    }

    /// A heading for people (a Slack header, an ntfy title).
    pub fn title(self) -> &'static str {
        match self {
            EventKind::AttemptEnded => "Attempt ended",
            EventKind::Recovered => "Run recovered",
            EventKind::Alert => "Training alert",
            EventKind::Stalled => "Run stalled",
            EventKind::Waiting => "Pods waiting",
            EventKind::Idle => "Cluster idle",
            EventKind::Budget => "Budget",
            EventKind::Cluster => "Cluster",
        }
    }
}

/// A message for the targets. `text` is one line of plain text (the sender makes it so again);
/// `detail` holds what a target may show beside it, by name: `class`, `pod`, `metric`, `step`,
/// `cause`, `eta`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub kind: EventKind,
    #[serde(with = "severity_name")]
    pub severity: Severity,
    pub cluster: String,
    pub job: Option<String>,
    /// The run the message is about (every attempt of one launch).
    pub run: Option<String>,
    pub attempt: Option<u32>,
    pub text: String,
    #[serde(default)]
    pub detail: serde_json::Map<String, serde_json::Value>,
    /// What the run has cost so far, in US dollars.
    pub cost_so_far: Option<f64>,
    pub at: jiff::Timestamp,
    /// What makes it the same message however often it is told, across restarts too: the run,
    /// the event and what crossed (`run-abc/budget/80`). A target is sent a key once: a message
    /// whose key was sent to it (or waits for it) in the last day is not sent again. It is the
    /// webhook's `Idempotency-Key`.
    pub key: String,
    /// The command that watches it, when `gantry serve` runs (`ssh -t -p 2222 host`).
    pub watch: Option<String>,
    /// A page about it (a console link), when there is one: ntfy's click action.
    pub link: Option<String>,
}

impl Event {
    /// A message about `cluster`, told now; the other fields are unknown until set.
    pub fn new(
        kind: EventKind,
        severity: Severity,
        cluster: impl Into<String>,
        text: impl Into<String>,
        key: impl Into<String>,
    ) -> Event {
        Event {
            kind,
            severity,
            cluster: cluster.into(),
            job: None,
            run: None,
            attempt: None,
            text: text.into(),
            detail: serde_json::Map::new(),
            cost_so_far: None,
            at: jiff::Timestamp::now(),
            key: key.into(),
            watch: None,
            link: None,
        }
    }

    /// The text on one line, free of anything a terminal or a chat would act on.
    pub fn plain_text(&self) -> String {
        plain(&self.text)
    }

    /// A detail's value as text, when there is one (`"eta"` → `"2h 10m"`).
    pub fn detail_text(&self, name: &str) -> Option<String> {
        match self.detail.get(name)? {
            serde_json::Value::Null => None,
            serde_json::Value::String(s) => Some(plain(s)),
            other => Some(plain(&other.to_string())),
        }
    }

    /// Where the message came from and is about, for a title: `ml-training-job #3 on
    /// ml-gke-cluster`, or the cluster alone.
    pub fn subject(&self) -> String {
        let cluster = plain(&self.cluster);
        match (&self.job, self.attempt) {
            (Some(job), Some(n)) => format!("{} #{n} on {cluster}", plain(job)),
            (Some(job), None) => format!("{} on {cluster}", plain(job)),
            (None, _) => cluster,
        }
    }
}

/// Text made one line of printable characters: no control, no bidirectional override.
pub(crate) fn plain(text: &str) -> String {
    crate::sanitize::one_line(text)
        .chars()
        .filter(|&c| !c.is_control() && !crate::sanitize::is_bidi_override(c))
        .collect()
}

/// The first `max` characters of `text`, with `…` when it was longer.
pub(crate) fn bounded(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// [`Severity`] by its name (`info`, `warning`, `critical`), for the config and the outbox.
pub(crate) mod severity_name {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::engine::notice::Severity;

    pub fn serialize<S: Serializer>(severity: &Severity, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(severity.name())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Severity, D::Error> {
        let name = String::deserialize(deserializer)?;
        parse(&name).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown severity \"{name}\": write \"info\", \"warning\" or \"critical\""
            ))
        })
    }

    pub fn parse(name: &str) -> Option<Severity> {
        [Severity::Info, Severity::Warning, Severity::Critical]
            .into_iter()
            .find(|s| s.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_kind_has_the_name_serde_gives_it() {
        for kind in EventKind::ALL {
            assert_eq!(
                serde_json::to_string(&kind).unwrap(),
                format!("\"{}\"", kind.name())
            );
        }
    }

    #[test]
    fn an_event_survives_the_outbox_as_it_was() {
        let mut e = Event::new(
            EventKind::Budget,
            Severity::Warning,
            "c",
            "80% of the budget",
            "r/budget/80",
        );
        e.detail.insert("cause".into(), "spot".into());
        e.cost_so_far = Some(12.5);
        let back: Event = serde_json::from_str(&serde_json::to_string(&e).unwrap()).unwrap();
        assert_eq!(back, e);
    }

    #[test]
    fn plain_text_is_one_line_with_no_control_left() {
        let e = Event::new(
            EventKind::Alert,
            Severity::Critical,
            "c",
            "loss\n\x1b]0;owned\x07 NaN\u{202e}\u{9c}",
            "k",
        );
        let text = e.plain_text();
        assert!(crate::sanitize::is_inert(&text), "{text:?}");
        assert!(text.contains("loss") && text.contains("NaN"), "{text:?}");
    }

    #[test]
    fn bounded_text_keeps_whole_characters() {
        assert_eq!(bounded("héllo", 10), "héllo");
        assert_eq!(bounded("héllo wörld", 5), "héll…");
    }
}

//! One message to the people who are not watching: what happened to which run, how much it
//! matters, and what it has cost so far. It is the one shape from the engine's notice to the
//! target's request: every target (Slack, a webhook, ntfy, a terminal) is sent the same
//! [`Message`], each in its own format, and the outbox keeps it as it is here.

use serde::{Deserialize, Serialize};

use crate::vocabulary::{Kind, Severity};

/// A message for the targets. `text` is one line of plain text (the sender makes it so again);
/// `detail` holds what a target may show beside it, by name: `class`, `pod`, `metric`, `step`,
/// `cause`, `eta`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// What it is sent as (one of `Kind::SENT`).
    pub kind: Kind,
    pub severity: Severity,
    pub cluster: String,
    pub job: Option<String>,
    /// The run the message is about (every attempt of one launch).
    pub run: Option<String>,
    /// The attempt's number, as the TUI, `gantry status` and `gantry watch` show it (`#3`); the
    /// attempt within its run is `detail.runAttempt`.
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

impl Message {
    /// A message about `cluster`, told now; the other fields are unknown until set.
    pub fn new(
        kind: Kind,
        severity: Severity,
        cluster: impl Into<String>,
        text: impl Into<String>,
        key: impl Into<String>,
    ) -> Message {
        Message {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_survives_the_outbox_as_it_was() {
        let mut e = Message::new(
            Kind::Budget,
            Severity::Warning,
            "c",
            "80% of the budget",
            "r/budget/80",
        );
        e.detail.insert("cause".into(), "spot".into());
        e.cost_so_far = Some(12.5);
        let back: Message = serde_json::from_str(&serde_json::to_string(&e).unwrap()).unwrap();
        assert_eq!(back, e);
    }

    #[test]
    fn plain_text_is_one_line_with_no_control_left() {
        let e = Message::new(
            Kind::Alert,
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

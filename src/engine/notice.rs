//! What the operator is told, in one vocabulary: a kind (what it is about, with a stable name
//! for scripts and notifications), a severity, a subject (the cluster, attempt, pod, command or
//! metric it names) and the text. The engine tells every change worth a line this way; the
//! status line shows those that answer or need the operator, `gantry watch` prints them all,
//! Gantry's log keeps them, and a viewer tells its own operator its own (a search that found
//! nothing, a refused key) the same way.

use std::fmt;

/// How much it matters: `critical` wants someone now (a failed attempt, a cluster in ERROR, a
/// metric gone NaN), `warning` soon, `info` is for the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Info,
    Warning,
    Critical,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Critical => "critical",
        }
    }
}

/// What a notice is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// The cluster's status changed (subject: the cluster).
    Cluster,
    /// An attempt was seen, changed phase, ended or was deleted (subject: the attempt).
    Attempt,
    /// A pod of the attempt failed, and why (subject: the pod).
    PodFailed,
    /// Kubernetes took a pod away — its spot node was reclaimed, it was evicted — and the Job
    /// replaces it without counting a failure (subject: the pod).
    Preempted,
    /// The recoverer restarted or ended a run, or this engine became or stopped being the
    /// recoverer (subject: the attempt, or `recoverer`).
    Recovery,
    /// Why a pod is not running changed, or it runs at last (subject: the pod).
    Waiting,
    /// A pod's log stream ended, or its lines could not be read or saved (subject: the pod).
    Log,
    /// A change someone asked for: asked, refused, done or failed (subject: what it does).
    Command,
    /// Something Gantry keeps retrying began to fail: a watch, a poll, a log stream (subject:
    /// where it comes from). It is shown while it lasts; this is its beginning.
    Trouble,
    /// A training metric went NaN or infinite, or a loss jumped (subject: the metric).
    Alert,
    /// A viewer's answer to its own operator: a search that found nothing, a refused key.
    Viewer,
    /// The newest attempt stopped making progress: no new log line while a pod runs, or no new
    /// step while lines flow (subject: the attempt).
    Stalled,
    /// The cluster costs money with nothing running (subject: the cluster).
    Idle,
    /// The run's cost reached a share of its budget (subject: the run).
    Budget,
}

impl Kind {
    /// The stable name (`gantry watch`, notifications).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Cluster => "cluster",
            Kind::Attempt => "attempt",
            Kind::PodFailed => "pod-failed",
            Kind::Preempted => "preempted",
            Kind::Recovery => "recovery",
            Kind::Waiting => "waiting",
            Kind::Log => "log",
            Kind::Command => "command",
            Kind::Trouble => "trouble",
            Kind::Alert => "alert",
            Kind::Viewer => "viewer",
            Kind::Stalled => "stalled",
            Kind::Idle => "idle",
            Kind::Budget => "budget",
        }
    }
}

/// What a notice is to someone who is not looking: the events notifications are sent for
/// (`[[notify]] events`). A notice that is none of them is for the screens and the record only.
pub use crate::notify::EventKind;

/// A notice as news for those not looking: which event, what makes this occurrence itself (the
/// same words after a restart, so it is sent once), and the facts a message shows beside the
/// text (class, pod, metric, step, cause).
#[derive(Debug, Clone, PartialEq)]
pub struct News {
    pub event: EventKind,
    /// Unique within the run (or the cluster, outside a run) for this occurrence.
    pub occurrence: String,
    pub detail: serde_json::Map<String, serde_json::Value>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Notice {
    pub kind: Kind,
    pub severity: Severity,
    pub subject: String,
    pub text: String,
    /// What it is to those not looking; None: for the screens and the record only.
    pub news: Option<Box<News>>,
}

impl Notice {
    pub fn new(
        kind: Kind,
        severity: Severity,
        subject: impl Into<String>,
        text: impl Into<String>,
    ) -> Notice {
        Notice {
            kind,
            severity,
            subject: subject.into(),
            text: text.into(),
            news: None,
        }
    }

    /// The same notice, also news for those not looking.
    pub fn as_news(mut self, event: EventKind, occurrence: impl Into<String>) -> Notice {
        self.news = Some(Box::new(News {
            event,
            occurrence: occurrence.into(),
            detail: serde_json::Map::new(),
        }));
        self
    }

    /// A fact the news shows beside its text (nothing when the notice is not news).
    pub fn with_detail(mut self, key: &str, value: impl Into<serde_json::Value>) -> Notice {
        if let Some(news) = self.news.as_mut() {
            news.detail.insert(key.to_string(), value.into());
        }
        self
    }

    /// A viewer's own answer to its operator.
    pub fn viewer(severity: Severity, text: impl Into<String>) -> Notice {
        Notice::new(Kind::Viewer, severity, "", text)
    }

    /// Whether the status line shows it: what answers the operator (commands, a viewer's own
    /// answers) and what needs them (alerts, a log that could not be read or saved). The panes
    /// already show the cluster's, the attempts' and the pods' states, and troubles have the
    /// status line while they last.
    pub fn on_status_line(&self) -> bool {
        match self.kind {
            Kind::Command | Kind::Alert | Kind::Viewer | Kind::Stalled | Kind::Budget => true,
            // The idle reminder has the status line while it lasts.
            Kind::Idle => false,
            Kind::Recovery => self.subject != "recoverer",
            Kind::Log | Kind::Waiting => self.severity >= Severity::Warning,
            Kind::Cluster | Kind::Attempt | Kind::PodFailed | Kind::Preempted | Kind::Trouble => {
                false
            }
        }
    }
}

/// The text, on one line.
impl fmt::Display for Notice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::sanitize::one_line(&self.text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn severities_order_from_info_to_critical() {
        assert!(Severity::Info < Severity::Warning && Severity::Warning < Severity::Critical);
    }

    #[test]
    fn the_status_line_shows_answers_and_what_needs_the_operator_not_what_the_panes_show() {
        let shown = |kind, severity| Notice::new(kind, severity, "s", "t").on_status_line();
        assert!(shown(Kind::Command, Severity::Info));
        assert!(shown(Kind::Alert, Severity::Warning));
        assert!(shown(Kind::Viewer, Severity::Info));
        assert!(shown(Kind::Log, Severity::Warning));
        assert!(!shown(Kind::Log, Severity::Info));
        assert!(!shown(Kind::Cluster, Severity::Critical));
        assert!(!shown(Kind::Attempt, Severity::Critical));
        assert!(!shown(Kind::Trouble, Severity::Warning));
    }
}

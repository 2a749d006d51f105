//! What the operator is told, in one vocabulary: a kind (what it is about, with a stable name
//! for scripts and notifications, and whether it is sent: `vocabulary::Kind`), a severity, a
//! subject (the cluster, attempt, pod, command or metric it names) and the text. The engine
//! tells every change worth a line this way; the status line shows those that answer or need
//! the operator, `gantry watch` prints them all, Gantry's log keeps them, and a viewer tells
//! its own operator its own (a search that found nothing, a refused key) the same way.

use std::fmt;

use crate::vocabulary::{Kind, Severity};

/// A notice as news for those not looking (its kind says whether it is sent, and as what): what
/// makes this occurrence itself (the same words after a restart, so it is sent once), and the
/// facts a message shows beside the text (class, pod, metric, step, cause).
#[derive(Debug, Clone, PartialEq)]
pub struct News {
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
    /// What makes it news for those not looking, when its kind is sent; None: for the screens
    /// and the record only.
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

    /// The same notice as news for those not looking, this occurrence of it (only a kind that
    /// is sent is ever news: `Kind::sent_as`).
    pub fn as_news(mut self, occurrence: impl Into<String>) -> Notice {
        if self.kind.sent_as().is_some() {
            self.news = Some(Box::new(News {
                occurrence: occurrence.into(),
                detail: serde_json::Map::new(),
            }));
        }
        self
    }

    /// What it is sent as, if it is news.
    pub fn sent_as(&self) -> Option<Kind> {
        self.news.as_ref().and(self.kind.sent_as())
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

    /// Whether the status line shows it (`Kind::on_status_line`).
    pub fn on_status_line(&self) -> bool {
        self.kind.on_status_line(self.severity)
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
    fn only_a_kind_that_is_sent_is_ever_news() {
        let sent = Notice::new(Kind::Stalled, Severity::Warning, "a", "t").as_news("a/1");
        assert_eq!(sent.sent_as(), Some(Kind::Stalled));
        let preempted = Notice::new(Kind::Preempted, Severity::Warning, "p", "t").as_news("p");
        assert_eq!(preempted.sent_as(), Some(Kind::Recovered));
        let shown = Notice::new(Kind::Attempt, Severity::Critical, "a", "t").as_news("a");
        assert!(shown.news.is_none() && shown.sent_as().is_none());
    }
}

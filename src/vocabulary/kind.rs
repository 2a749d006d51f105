//! What a notice is about, in one vocabulary: the kind names what is told on the screens, in
//! `gantry watch` and in Gantry's log, and says whether it is also sent to the people who are
//! not looking, and as what. The kinds that are sent are the names a `[[notify]]` target lists
//! in `events` and a webhook reads in `event`; the others are for the screens and the record.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// Sent: an attempt ended, succeeded or failed, recently enough to be news (subject: the
    /// attempt).
    AttemptEnded,
    /// Sent: the recoverer restarted a run, moved it to on-demand or ended it (subject: the
    /// attempt).
    Recovered,
    /// Sent: a training metric went NaN or infinite, a loss jumped, a pod ran out of memory
    /// (subject: the metric, or the pod).
    Alert,
    /// Sent: the newest attempt stopped making progress (subject: the attempt).
    Stalled,
    /// Sent: a pod has not run for longer than `waiting-after` (subject: the pod).
    Waiting,
    /// Sent: the cluster costs money with nothing running (subject: the cluster).
    Idle,
    /// Sent: the run's cost reached a share of its budget (subject: the run).
    Budget,
    /// Sent: the cluster is in ERROR or DEGRADED, or its API out of reach (subject: the
    /// cluster).
    Cluster,
    /// Sent: a GPU of a running training pod has done next to nothing for `gpu-idle-after`
    /// (subject: the pod).
    GpuIdle,
    /// Sent as `recovered`: Kubernetes took a pod away — its spot node reclaimed, evicted — and
    /// the Job replaces it without counting a failure (subject: the pod).
    Preempted,
    /// Kubernetes took a rank of a gang away: the recoverer's restart of the run is what is
    /// sent (`recovered`), not this (subject: the pod).
    RankPreempted,
    /// The cluster's status changed, or it can be reached again (subject: the cluster).
    ClusterStatus,
    /// An attempt was seen, changed phase, was deleted, or ended long ago or by a recovery
    /// (subject: the attempt).
    Attempt,
    /// A pod of the attempt failed, and why (subject: the pod).
    PodFailed,
    /// This engine took, lost or handed over the recoverer's Lease (subject: `recoverer`).
    Recoverer,
    /// Why a pod is not running changed, or it runs at last (subject: the pod).
    Pending,
    /// A stalled attempt makes progress again (subject: the attempt).
    Resumed,
    /// A pod's log stream ended, or its lines could not be read or saved (subject: the pod).
    Log,
    /// A change someone asked for: asked, refused, done or failed (subject: what it does).
    Command,
    /// Something Gantry keeps retrying began to fail: a watch, a poll, a log stream (subject:
    /// where it comes from). It is shown while it lasts; this is its beginning.
    Trouble,
    /// A guard cannot do its work here (subject: the run).
    Guard,
    /// A viewer's answer to its own operator: a search that found nothing, a refused key.
    Viewer,
    /// The GPUs' metrics cannot be read (no DCGM exporter, a permission missing), or can be
    /// again (subject: `gpu-metrics`).
    GpuMetrics,
}

impl Kind {
    /// The kinds that are sent, each under its own name.
    pub const SENT: [Kind; 9] = [
        Kind::AttemptEnded,
        Kind::Recovered,
        Kind::Alert,
        Kind::Stalled,
        Kind::Waiting,
        Kind::Idle,
        Kind::Budget,
        Kind::Cluster,
        Kind::GpuIdle,
    ];

    /// Every kind, for the tests that hold names and meanings together.
    pub const ALL: [Kind; 23] = [
        Kind::AttemptEnded,
        Kind::Recovered,
        Kind::Alert,
        Kind::Stalled,
        Kind::Waiting,
        Kind::Idle,
        Kind::Budget,
        Kind::Cluster,
        Kind::GpuIdle,
        Kind::Preempted,
        Kind::RankPreempted,
        Kind::ClusterStatus,
        Kind::Attempt,
        Kind::PodFailed,
        Kind::Recoverer,
        Kind::Pending,
        Kind::Resumed,
        Kind::Log,
        Kind::Command,
        Kind::Trouble,
        Kind::Guard,
        Kind::Viewer,
        Kind::GpuMetrics,
    ];

    /// The stable name: `gantry watch`, the log, a target's `events`, a webhook's `event`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::AttemptEnded => "attempt-ended",
            Kind::Recovered => "recovered",
            Kind::Alert => "alert",
            Kind::Stalled => "stalled",
            Kind::Waiting => "waiting",
            Kind::Idle => "idle",
            Kind::Budget => "budget",
            Kind::Cluster => "cluster",
            Kind::GpuIdle => "gpu-idle",
            Kind::Preempted => "preempted",
            Kind::RankPreempted => "rank-preempted",
            Kind::ClusterStatus => "cluster-status",
            Kind::Attempt => "attempt",
            Kind::PodFailed => "pod-failed",
            Kind::Recoverer => "recoverer",
            Kind::Pending => "pending",
            Kind::Resumed => "resumed",
            Kind::Log => "log",
            Kind::Command => "command",
            Kind::Trouble => "trouble",
            Kind::Guard => "guard",
            Kind::Viewer => "viewer",
            Kind::GpuMetrics => "gpu-metrics",
        }
    }

    /// What it is sent as to the people who are not looking; None: it is not sent.
    pub fn sent_as(self) -> Option<Kind> {
        match self {
            Kind::AttemptEnded
            | Kind::Recovered
            | Kind::Alert
            | Kind::Stalled
            | Kind::Waiting
            | Kind::Idle
            | Kind::Budget
            | Kind::Cluster
            | Kind::GpuIdle => Some(self),
            Kind::Preempted => Some(Kind::Recovered),
            Kind::RankPreempted
            | Kind::ClusterStatus
            | Kind::Attempt
            | Kind::PodFailed
            | Kind::Recoverer
            | Kind::Pending
            | Kind::Resumed
            | Kind::Log
            | Kind::Command
            | Kind::Trouble
            | Kind::Guard
            | Kind::Viewer
            | Kind::GpuMetrics => None,
        }
    }

    /// A heading for people (a Slack header, an ntfy title).
    pub fn title(self) -> &'static str {
        match self.sent_as().unwrap_or(self) {
            Kind::AttemptEnded => "Attempt ended",
            Kind::Recovered => "Run recovered",
            Kind::Alert => "Training alert",
            Kind::Stalled => "Run stalled",
            Kind::Waiting => "Pods waiting",
            Kind::Idle => "Cluster idle",
            Kind::Budget => "Budget",
            Kind::Cluster => "Cluster",
            Kind::GpuIdle => "GPU idle",
            _ => "Gantry",
        }
    }

    /// A kind that is sent, by its name; the error lists the names.
    pub fn sent_by_name(name: &str) -> Result<Kind, String> {
        Kind::SENT
            .into_iter()
            .find(|k| k.name() == name)
            .ok_or_else(|| format!("unknown event \"{name}\": write one of {}", sent_names()))
    }

    /// Whether the status line shows it: what answers the operator (commands, a viewer's own
    /// answers) and what needs them (alerts, a stall, a budget, the recoverer's acts, a log
    /// that could not be read or saved — the warnings of `log` and `pending`). The panes
    /// already show the cluster's, the attempts' and the pods' states, troubles have the status
    /// line while they last, and so does the idle reminder.
    pub fn on_status_line(self, severity: super::Severity) -> bool {
        match self {
            Kind::Command
            | Kind::Alert
            | Kind::Viewer
            | Kind::Stalled
            | Kind::Budget
            | Kind::Guard
            | Kind::Recovered => true,
            Kind::Log | Kind::Pending | Kind::Waiting | Kind::GpuIdle | Kind::GpuMetrics => {
                severity >= super::Severity::Warning
            }
            Kind::Idle
            | Kind::Cluster
            | Kind::ClusterStatus
            | Kind::Attempt
            | Kind::AttemptEnded
            | Kind::PodFailed
            | Kind::Preempted
            | Kind::RankPreempted
            | Kind::Recoverer
            | Kind::Resumed
            | Kind::Trouble => false,
        }
    }
}

/// The names of the kinds that are sent, for a message.
pub fn sent_names() -> String {
    Kind::SENT
        .iter()
        .map(|k| k.name())
        .collect::<Vec<_>>()
        .join(", ")
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// By its name (the outbox, a webhook's `event`).
impl Serialize for Kind {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

/// Only the kinds that are sent are read (a config's `events`, the outbox).
impl<'de> Deserialize<'de> for Kind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Kind, D::Error> {
        let name = String::deserialize(deserializer)?;
        Kind::sent_by_name(&name).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocabulary::Severity;

    #[test]
    fn every_kind_has_a_name_of_its_own() {
        let mut names: Vec<&str> = Kind::ALL.iter().map(|k| k.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), Kind::ALL.len());
    }

    #[test]
    fn a_kind_is_sent_as_one_of_the_sent_kinds_or_not_at_all() {
        for kind in Kind::ALL {
            if let Some(as_) = kind.sent_as() {
                assert!(Kind::SENT.contains(&as_), "{kind} is sent as {as_}");
            }
        }
        for kind in Kind::SENT {
            assert_eq!(kind.sent_as(), Some(kind));
        }
        assert_eq!(Kind::Preempted.sent_as(), Some(Kind::Recovered));
        assert_eq!(Kind::Attempt.sent_as(), None);
    }

    #[test]
    fn only_sent_kinds_are_read_by_name_and_a_wrong_one_lists_them() {
        for kind in Kind::SENT {
            let text = serde_json::to_string(&kind).unwrap_or_default();
            assert_eq!(serde_json::from_str::<Kind>(&text).ok(), Some(kind));
        }
        let wrong = serde_json::from_str::<Kind>("\"pod-failed\"").unwrap_err();
        assert!(
            wrong.to_string().contains("attempt-ended, recovered"),
            "{wrong}"
        );
    }

    #[test]
    fn the_status_line_shows_answers_and_what_needs_the_operator_not_what_the_panes_show() {
        assert!(Kind::Command.on_status_line(Severity::Info));
        assert!(Kind::Alert.on_status_line(Severity::Warning));
        assert!(Kind::Viewer.on_status_line(Severity::Info));
        assert!(Kind::Log.on_status_line(Severity::Warning));
        assert!(!Kind::Log.on_status_line(Severity::Info));
        assert!(!Kind::ClusterStatus.on_status_line(Severity::Critical));
        assert!(!Kind::Attempt.on_status_line(Severity::Critical));
        assert!(!Kind::Trouble.on_status_line(Severity::Warning));
        assert!(!Kind::Recoverer.on_status_line(Severity::Info));
    }
}

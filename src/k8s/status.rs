//! What a Job attempt and its pods look like to an operator: small summaries derived from the
//! API objects, without state. The watchers send them, `gantry status --json` prints them.

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Event;
use serde::Serialize;

use super::labels::{attempt_of, deleted_by};
pub use super::pod_summary::PodSummary;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum AttemptPhase {
    Pending,
    Running,
    Succeeded,
    Failed,
    /// Ended by a recovery or a spot fallback (suspended, its record kept): the next attempt
    /// of its run goes on.
    Recovered,
}

impl AttemptPhase {
    pub fn is_finished(self) -> bool {
        matches!(self, Self::Succeeded | Self::Failed | Self::Recovered)
    }

    /// As the panes and `gantry status` say it.
    pub fn word(self) -> &'static str {
        match self {
            AttemptPhase::Pending => "Pending",
            AttemptPhase::Running => "Running",
            AttemptPhase::Succeeded => "Succeeded",
            AttemptPhase::Failed => "Failed",
            AttemptPhase::Recovered => "Recovered",
        }
    }
}

/// One attempt (one Job object).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AttemptSummary {
    pub name: String,
    pub namespace: String,
    /// Gantry's attempt number; None for a Job Gantry did not make.
    pub attempt: Option<u32>,
    pub status: AttemptPhase,
    /// Why it finished (`BackoffLimitExceeded`, `DeadlineExceeded`, `CompletionsReached`).
    pub reason: Option<String>,
    pub message: Option<String>,
    pub active: i32,
    pub ready: i32,
    pub succeeded: i32,
    pub failed: i32,
    pub completions: Option<i32>,
    pub created: Option<jiff::Timestamp>,
    pub start_time: Option<jiff::Timestamp>,
    pub completion_time: Option<jiff::Timestamp>,
    /// When it finished, succeeded or failed: Kubernetes sets `completionTime` only on success,
    /// so a failure's time is its condition's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<jiff::Timestamp>,
    pub deleting: bool,
    /// Why Gantry ended it, when Gantry did (`preempted`, `stall`, `spot-fallback`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended_by: Option<crate::vocabulary::attempt::EndedBy>,
    /// The attempt a recovery replaced it with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovered_into: Option<String>,
    /// The ends of its pods recorded on it by an engine (`ends::ledger`), oldest first.
    #[serde(skip)]
    pub recorded_ends: Vec<crate::vocabulary::ends::PodEnd>,
    /// Its run's cost as an engine recorded it on it (`meter::ledger`).
    #[serde(skip)]
    pub recorded_cost: Option<crate::vocabulary::cost::Recorded>,
    /// Its `podFailurePolicy` ignores pods Kubernetes disrupted: a preemption is not a failure.
    #[serde(skip)]
    pub ignores_disruptions: bool,
    /// Who deleted it through Gantry.
    #[serde(skip)]
    pub deleted_by: Option<String>,
    /// The run it belongs to, and its place in it.
    #[serde(skip)]
    pub run: Option<super::run::Run>,
    /// The node pool its pods are sent to (their `cloud.google.com/gke-nodepool` selector):
    /// what keeps a spot pool's on-demand fallback in use.
    #[serde(skip)]
    pub node_pool: Option<String>,
    /// The code it ran, when it ran code without an image (`gantry.dev/code`); boxed, as
    /// most attempts have none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<Box<crate::code::CodeRecord>>,
}

impl AttemptSummary {
    /// The attempt's number, as `#N` shows it: a Job Gantry did not make counts as the first.
    pub fn number(&self) -> u32 {
        self.attempt.unwrap_or(1)
    }

    pub fn of(job: &Job) -> Self {
        let status = job.status.clone().unwrap_or_default();
        let finished = status
            .conditions
            .iter()
            .flatten()
            .find(|c| c.status == "True" && (c.type_ == "Failed" || c.type_ == "Complete"));
        let active = status.active.unwrap_or(0);
        let ready = status.ready.unwrap_or(0);
        let succeeded = status.succeeded.unwrap_or(0);
        let phase = match finished {
            Some(c) if c.type_ == "Failed" => AttemptPhase::Failed,
            Some(_) => AttemptPhase::Succeeded,
            None if ready > 0 || succeeded > 0 => AttemptPhase::Running,
            None => AttemptPhase::Pending,
        };
        // A run Gantry ended (out of recoveries): failed, whatever the suspended Job says.
        let run_ended = job
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(super::labels::RUN_ENDED))
            .map(|why| crate::sanitize::one_line(why));
        // A recovery ended it: finished, whatever the suspended Job says.
        let recovered = annotation(job, super::labels::RECOVERED)
            .and_then(crate::vocabulary::attempt::Recovered::parse);
        let phase = match (&recovered, &run_ended) {
            (Some(_), _) => AttemptPhase::Recovered,
            (None, Some(_)) => AttemptPhase::Failed,
            (None, None) => phase,
        };
        Self {
            name: job.metadata.name.clone().unwrap_or_default(),
            namespace: job.metadata.namespace.clone().unwrap_or_default(),
            attempt: attempt_of(&job.metadata),
            status: phase,
            reason: match (&recovered, &run_ended) {
                (Some(_), _) => Some("Recovered".into()),
                (None, Some(_)) => Some("RunEnded".into()),
                (None, None) => finished.and_then(|c| c.reason.clone()),
            },
            message: recovered
                .as_ref()
                .map(|r| crate::sanitize::one_line(&r.why))
                .or(run_ended)
                .or_else(|| finished.and_then(|c| c.message.clone()))
                .or_else(|| {
                    crate::code::mount::awaiting(job).then(|| "waiting for its code".to_string())
                }),
            active,
            ready,
            succeeded,
            failed: status.failed.unwrap_or(0),
            completions: job.spec.as_ref().and_then(|s| s.completions),
            created: job.metadata.creation_timestamp.as_ref().map(|t| t.0),
            start_time: status.start_time.map(|t| t.0),
            completion_time: status.completion_time.as_ref().map(|t| t.0),
            finished_at: recovered.as_ref().map(|r| r.at).or_else(|| {
                status
                    .completion_time
                    .as_ref()
                    .map(|t| t.0)
                    .or_else(|| finished.and_then(|c| c.last_transition_time.as_ref().map(|t| t.0)))
            }),
            deleting: job.metadata.deletion_timestamp.is_some(),
            ended_by: annotation(job, super::labels::ENDED_BY)
                .and_then(crate::vocabulary::attempt::EndedBy::parse),
            recovered_into: recovered.map(|r| crate::sanitize::one_line(&r.into)),
            recorded_ends: annotation(job, super::labels::POD_ENDS)
                .map(crate::vocabulary::ends::PodEnd::parse_recorded)
                .unwrap_or_default(),
            recorded_cost: annotation(job, super::labels::COST)
                .and_then(crate::vocabulary::cost::Recorded::parse),
            ignores_disruptions: crate::k8s::manifest::ignores_disruptions(
                job.spec
                    .as_ref()
                    .and_then(|s| s.pod_failure_policy.as_ref()),
            ),
            deleted_by: deleted_by(&job.metadata),
            run: super::run::Run::of(&job.metadata),
            node_pool: job
                .spec
                .as_ref()
                .and_then(|s| s.template.spec.as_ref())
                .and_then(|p| p.node_selector.as_ref())
                .and_then(|s| s.get(super::labels::POOL_LABEL))
                .cloned(),
            code: crate::code::mount::record_of(job).map(Box::new),
        }
    }

    /// With the pods in view: an attempt whose pods run is Running even before any is Ready.
    pub fn phase_with_pods(&self, pods: &[PodSummary]) -> AttemptPhase {
        if self.status == AttemptPhase::Pending
            && pods
                .iter()
                .any(|p| p.job == self.name && p.phase == "Running")
        {
            AttemptPhase::Running
        } else {
            self.status
        }
    }
}

/// The text of one of a Job's annotations.
fn annotation<'a>(job: &'a Job, name: &str) -> Option<&'a str> {
    job.metadata
        .annotations
        .as_ref()?
        .get(name)
        .map(String::as_str)
}

/// A Kubernetes Event about an attempt or one of its pods.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EventSummary {
    pub name: String,
    /// `Job` or `Pod`.
    pub kind: String,
    pub object: String,
    /// `Normal` or `Warning`.
    pub type_: String,
    pub reason: String,
    pub message: String,
    pub count: i32,
    pub last_seen: Option<jiff::Timestamp>,
}

impl EventSummary {
    pub fn of(event: &Event) -> Self {
        let last_seen = event
            .last_timestamp
            .as_ref()
            .map(|t| t.0)
            .or_else(|| event.event_time.as_ref().map(|t| t.0))
            .or_else(|| event.first_timestamp.as_ref().map(|t| t.0));
        Self {
            name: event.metadata.name.clone().unwrap_or_default(),
            kind: event.involved_object.kind.clone().unwrap_or_default(),
            object: event.involved_object.name.clone().unwrap_or_default(),
            type_: event.type_.clone().unwrap_or_else(|| "Normal".into()),
            reason: event.reason.clone().unwrap_or_default(),
            message: event.message.clone().unwrap_or_default(),
            count: event.count.unwrap_or(1),
            last_seen,
        }
    }

    /// Whether an event is about the training Job `base` (any attempt) or one of its pods.
    pub fn concerns(event: &Event, base: &str) -> bool {
        let name = event.involved_object.name.as_deref().unwrap_or_default();
        let Some(rest) = name.strip_prefix(base) else {
            return false;
        };
        match event.involved_object.kind.as_deref() {
            // `<base>` or `<base>-N`
            Some("Job") => {
                rest.is_empty()
                    || rest
                        .strip_prefix('-')
                        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            }
            Some("Pod") => rest.starts_with('-'),
            _ => false,
        }
    }
}

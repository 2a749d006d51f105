//! What a Job attempt and its pods look like to an operator: small summaries derived from the
//! API objects, without state. The watchers send them, `gantry status --json` prints them.

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Event, Pod};
use serde::Serialize;

use super::labels::{ATTEMPT_LABEL, COMPLETION_INDEX, POD_JOB_NAME_LABEL};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum AttemptPhase {
    Pending,
    Running,
    Succeeded,
    Failed,
}

impl AttemptPhase {
    pub fn is_finished(self) -> bool {
        matches!(self, Self::Succeeded | Self::Failed)
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
    /// The ends of its pods recorded on it by an engine (`ends::ledger`), oldest first.
    #[serde(skip)]
    pub recorded_ends: Vec<crate::ends::PodEnd>,
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
            .and_then(|a| a.get(super::recover::RUN_ENDED))
            .map(|why| crate::sanitize::one_line(why));
        let phase = if run_ended.is_some() {
            AttemptPhase::Failed
        } else {
            phase
        };
        Self {
            name: job.metadata.name.clone().unwrap_or_default(),
            namespace: job.metadata.namespace.clone().unwrap_or_default(),
            attempt: attempt_of(&job.metadata),
            status: phase,
            reason: match &run_ended {
                Some(_) => Some("MaxRecoveries".into()),
                None => finished.and_then(|c| c.reason.clone()),
            },
            message: run_ended.or_else(|| finished.and_then(|c| c.message.clone())),
            active,
            ready,
            succeeded,
            failed: status.failed.unwrap_or(0),
            completions: job.spec.as_ref().and_then(|s| s.completions),
            created: job.metadata.creation_timestamp.as_ref().map(|t| t.0),
            start_time: status.start_time.map(|t| t.0),
            completion_time: status.completion_time.as_ref().map(|t| t.0),
            finished_at: status
                .completion_time
                .as_ref()
                .map(|t| t.0)
                .or_else(|| finished.and_then(|c| c.last_transition_time.as_ref().map(|t| t.0))),
            deleting: job.metadata.deletion_timestamp.is_some(),
            recorded_ends: crate::ends::ledger::read(job.metadata.annotations.as_ref()),
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
                .and_then(|s| s.get(crate::gke::fallback::POOL_LABEL))
                .cloned(),
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

/// Who deleted an object through Gantry (the `gantry.dev/deleted-by` annotation it wrote first).
pub fn deleted_by(meta: &kube::api::ObjectMeta) -> Option<String> {
    meta.annotations
        .as_ref()?
        .get(super::labels::DELETED_BY)
        .map(|by| crate::sanitize::one_line(by))
}

pub fn attempt_of(meta: &kube::api::ObjectMeta) -> Option<u32> {
    meta.labels.as_ref()?.get(ATTEMPT_LABEL)?.parse().ok()
}

/// One pod of an attempt.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodSummary {
    pub name: String,
    pub namespace: String,
    /// The Job (attempt) it belongs to.
    pub job: String,
    pub attempt: Option<u32>,
    /// The completion index of an Indexed Job's pod (its rank).
    pub index: Option<u32>,
    /// Pending, Running, Succeeded, Failed, Unknown.
    pub phase: String,
    /// The most telling reason: the container's waiting or terminated reason
    /// (`ImagePullBackOff`, `OOMKilled`, `Error`, `Completed`), else the pod's
    /// (`Unschedulable`).
    pub reason: Option<String>,
    pub message: Option<String>,
    pub exit_code: Option<i32>,
    pub restarts: i32,
    pub node: Option<String>,
    /// The container has started at least once: it has logs.
    pub started: bool,
    /// The container has terminated (for good, under `restartPolicy: Never`).
    pub terminated: bool,
    pub created: Option<jiff::Timestamp>,
    pub deleting: bool,
    /// GPUs its containers asked for (`nvidia.com/gpu`, `amd.com/gpu`).
    pub gpus: u32,
    /// When its container started running (for the time a pod took to run).
    #[serde(skip)]
    pub running_since: Option<jiff::Timestamp>,
    /// The training container's image.
    #[serde(skip)]
    pub image: String,
    /// Its node selector, `key=value` pairs in order.
    #[serde(skip)]
    pub node_selector: Vec<(String, String)>,
    /// How it ended, as its object says; None while it runs or waits.
    #[serde(skip)]
    pub fate: Option<crate::ends::Fate>,
    /// What its containers asked of the node (for its share of the node's price).
    #[serde(skip)]
    pub requests: crate::ends::cost::Requests,
    /// Who deleted it through Gantry.
    #[serde(skip)]
    pub deleted_by: Option<String>,
}

/// The extended resources that are GPUs.
const GPU_RESOURCES: [&str; 2] = ["nvidia.com/gpu", "amd.com/gpu"];

/// CPU and memory its containers request (their limits where a request is left out, as the API
/// server defaults it), and GPUs.
fn requests_of(pod: &Pod) -> crate::ends::cost::Requests {
    let mut asked = crate::ends::cost::Requests {
        gpus: gpus_of(pod),
        ..Default::default()
    };
    for c in pod.spec.iter().flat_map(|s| s.containers.iter()) {
        let r = c.resources.as_ref();
        let amount = |name: &str| {
            r.and_then(|r| r.requests.as_ref().and_then(|q| q.get(name)))
                .or_else(|| r.and_then(|r| r.limits.as_ref().and_then(|l| l.get(name))))
                .and_then(|q| crate::k8s::usage::milli(&q.0))
                .unwrap_or(0)
        };
        asked.cpu_millis += amount("cpu");
        asked.memory_bytes += amount("memory") / 1000;
    }
    asked
}

/// GPUs a pod's containers asked for: the limit (where extended resources must be set), else
/// the request.
fn gpus_of(pod: &Pod) -> u32 {
    let containers = pod.spec.iter().flat_map(|s| s.containers.iter());
    containers
        .map(|c| {
            let r = c.resources.as_ref();
            GPU_RESOURCES
                .iter()
                .map(|name| {
                    r.and_then(|r| r.limits.as_ref().and_then(|l| l.get(*name)))
                        .or_else(|| r.and_then(|r| r.requests.as_ref().and_then(|q| q.get(*name))))
                        .and_then(|q| crate::k8s::usage::milli(&q.0))
                        .map_or(0, |m| u32::try_from(m / 1000).unwrap_or(u32::MAX))
                })
                .sum::<u32>()
        })
        .sum()
}

impl PodSummary {
    /// What a STATUS column says: the reason when there is one, as kubectl does.
    pub fn status_word(&self) -> String {
        if self.deleting {
            return "Terminating".into();
        }
        // Its container's `Error(143)` would read as the training code's failure.
        if self
            .fate
            .as_ref()
            .is_some_and(|f| f.class == crate::ends::Class::Preempted)
        {
            return "Preempted".into();
        }
        match (&self.reason, self.exit_code) {
            (Some(r), Some(code)) if r == "Error" => format!("Error({code})"),
            (Some(r), _) => r.clone(),
            (None, Some(code)) if code != 0 => format!("ExitCode:{code}"),
            _ => self.phase.clone(),
        }
    }

    /// The READY column of the training container: `1/1` while it runs.
    pub fn ready(&self) -> &'static str {
        if self.phase == "Running" && !self.terminated {
            "1/1"
        } else {
            "0/1"
        }
    }

    pub fn of(pod: &Pod) -> Self {
        let meta = &pod.metadata;
        let status = pod.status.clone().unwrap_or_default();
        let container = status.container_statuses.iter().flatten().next();
        let state = container.and_then(|c| c.state.clone()).unwrap_or_default();
        let last = container
            .and_then(|c| c.last_state.clone())
            .unwrap_or_default();
        let terminated = state.terminated.clone().or(last.terminated.clone());
        let mut reason = state
            .waiting
            .as_ref()
            .and_then(|w| w.reason.clone())
            .or_else(|| state.terminated.as_ref().and_then(|t| t.reason.clone()));
        let mut message = state
            .waiting
            .as_ref()
            .and_then(|w| w.message.clone())
            .or_else(|| state.terminated.as_ref().and_then(|t| t.message.clone()));
        if reason.is_none()
            && let Some(c) = status
                .conditions
                .iter()
                .flatten()
                .find(|c| c.type_ == "PodScheduled" && c.status == "False")
        {
            reason = c.reason.clone();
            message = c.message.clone();
        }
        if reason.is_none() {
            reason = status.reason.clone();
            message = message.or(status.message.clone());
        }
        let labels = meta.labels.clone().unwrap_or_default();
        Self {
            name: meta.name.clone().unwrap_or_default(),
            namespace: meta.namespace.clone().unwrap_or_default(),
            job: labels.get(POD_JOB_NAME_LABEL).cloned().unwrap_or_default(),
            attempt: attempt_of(meta),
            index: meta
                .annotations
                .as_ref()
                .and_then(|a| a.get(COMPLETION_INDEX))
                .and_then(|i| i.parse().ok()),
            phase: status.phase.clone().unwrap_or_else(|| "Pending".into()),
            reason,
            message,
            exit_code: terminated.as_ref().map(|t| t.exit_code),
            restarts: container.map_or(0, |c| c.restart_count),
            node: pod.spec.as_ref().and_then(|s| s.node_name.clone()),
            started: state.running.is_some() || terminated.is_some(),
            terminated: state.terminated.is_some(),
            created: meta.creation_timestamp.as_ref().map(|t| t.0),
            deleting: meta.deletion_timestamp.is_some(),
            gpus: gpus_of(pod),
            // When it ran: still running, or ended after it had started.
            running_since: state
                .running
                .as_ref()
                .and_then(|r| r.started_at.as_ref())
                .or_else(|| terminated.as_ref().and_then(|t| t.started_at.as_ref()))
                .map(|t| t.0),
            image: pod
                .spec
                .as_ref()
                .and_then(|s| s.containers.first())
                .and_then(|c| c.image.clone())
                .unwrap_or_default(),
            node_selector: pod
                .spec
                .as_ref()
                .and_then(|s| s.node_selector.clone())
                .map(|m| m.into_iter().collect())
                .unwrap_or_default(),
            fate: crate::ends::fate_of(pod),
            requests: requests_of(pod),
            deleted_by: deleted_by(meta),
        }
    }
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_pod_counts_the_gpus_its_containers_ask_for_by_limit_else_request() {
        let pod: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "p"},
            "spec": {"containers": [
                {"name": "a", "resources": {"limits": {"nvidia.com/gpu": "2"}}},
                {"name": "b", "resources": {"requests": {"amd.com/gpu": "1", "cpu": "4"}}},
                {"name": "c"}
            ]}
        }))
        .unwrap();
        assert_eq!(PodSummary::of(&pod).gpus, 3);
    }
}

//! One pod of an attempt as an operator sees it: a small summary derived from the Pod object
//! (its status word, readiness, what it asked for, how it ended), without state. The watchers
//! send it, `gantry status --json` prints it.

use k8s_openapi::api::core::v1::Pod;
use serde::Serialize;

use super::labels::{COMPLETION_INDEX, POD_JOB_NAME_LABEL};
use super::labels::{attempt_of, deleted_by};

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
    pub fate: Option<crate::vocabulary::ends::Fate>,
    /// What its containers asked of the node (for its share of the node's price).
    #[serde(skip)]
    pub requests: crate::vocabulary::Requests,
    /// Who deleted it through Gantry.
    #[serde(skip)]
    pub deleted_by: Option<String>,
}

/// The extended resources that are GPUs.
const GPU_RESOURCES: [&str; 2] = ["nvidia.com/gpu", "amd.com/gpu"];

/// CPU and memory its containers request (their limits where a request is left out, as the API
/// server defaults it), and GPUs.
fn requests_of(pod: &Pod) -> crate::vocabulary::Requests {
    let mut asked = crate::vocabulary::Requests {
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
    /// Its end as `fate` says, not priced yet.
    pub fn end(&self, fate: crate::vocabulary::ends::Fate) -> crate::vocabulary::ends::PodEnd {
        crate::vocabulary::ends::PodEnd {
            pod: self.name.clone(),
            index: self.index,
            class: fate.class,
            detail: fate.detail,
            at: fate.at,
            node: self.node.clone(),
            ran_seconds: fate.ran_seconds,
            cost: None,
        }
    }

    /// What a STATUS column says: the reason when there is one, as kubectl does.
    pub fn status_word(&self) -> String {
        if self.deleting {
            return "Terminating".into();
        }
        // Its container's `Error(143)` would read as the training code's failure.
        if self
            .fate
            .as_ref()
            .is_some_and(|f| f.class == crate::vocabulary::ends::Class::Preempted)
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
            fate: super::fate::fate_of(pod),
            requests: requests_of(pod),
            deleted_by: deleted_by(meta),
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

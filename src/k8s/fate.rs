//! A pod's end as its object states it ([`fate_of`]): read from what Kubernetes states in
//! structured fields — the pod's phase and reason, its `DisruptionTarget` condition and that
//! condition's reason, its container's terminated or waiting reason and exit code — never from
//! message text, so it reads the same on GKE and on any `--context` cluster. What becomes of a
//! pod that is gone is `ends::classify`'s.

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{ContainerStateTerminated, Pod};

use crate::vocabulary::ends::{Class, Fate, seconds_between};

/// Container waiting reasons that mean the pod cannot start as it is: its image, command or spec
/// must change. (`ImagePullBackOff` follows `ErrImagePull`.)
const CONFIG_ERRORS: [&str; 6] = [
    "ErrImagePull",
    "ImagePullBackOff",
    "InvalidImageName",
    "CreateContainerConfigError",
    "CreateContainerError",
    "RunContainerError",
];

/// The pod's end as its object states it; None while it runs or waits to (or is being deleted
/// without having ended: [`gone`] decides once it is).
pub fn fate_of(pod: &Pod) -> Option<Fate> {
    let status = pod.status.as_ref()?;
    let phase = status.phase.as_deref().unwrap_or("Pending");
    let container = status.container_statuses.iter().flatten().next();
    let state = container.and_then(|c| c.state.as_ref());
    let terminated = state.and_then(|s| s.terminated.as_ref()).or_else(|| {
        container
            .and_then(|c| c.last_state.as_ref())
            .and_then(|s| s.terminated.as_ref())
            .filter(|_| phase == "Failed" || phase == "Succeeded")
    });
    let started = state
        .and_then(|s| s.running.as_ref())
        .and_then(|r| r.started_at.as_ref())
        .or_else(|| terminated.and_then(|t| t.started_at.as_ref()))
        .map(|t| t.0);
    let disruption = status
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == "DisruptionTarget" && c.status == "True");

    let (class, detail, at) = if phase == "Succeeded" {
        (
            Class::Succeeded,
            "completed".to_string(),
            finished(terminated),
        )
    } else if let Some(c) = disruption {
        let reason = c.reason.as_deref().unwrap_or_default();
        let at = c
            .last_transition_time
            .as_ref()
            .map(|t| t.0)
            .or_else(|| finished(terminated));
        (Class::Preempted, disruption_detail(reason), at)
    } else if phase == "Failed" && pod.metadata.deletion_timestamp.is_some() {
        // Killed because it was being deleted (exit 143 after SIGTERM): not the code's failure.
        // Once it is gone, `gone` says who deleted it.
        return None;
    } else if phase == "Failed" {
        failed(status.reason.as_deref(), terminated)
    } else if let Some(reason) = state
        .and_then(|s| s.waiting.as_ref())
        .and_then(|w| w.reason.as_deref())
        .filter(|r| CONFIG_ERRORS.contains(r))
    {
        let what = match reason {
            "ErrImagePull" | "ImagePullBackOff" | "InvalidImageName" => {
                "its image cannot be pulled"
            }
            _ => "its container cannot be made",
        };
        // Not an end Kubernetes will ever make: it is one because nothing changes by waiting.
        return Some(Fate {
            class: Class::ConfigError,
            detail: format!("{what} ({reason}): fix it and retry, or delete the attempt"),
            at: None,
            ran_seconds: 0,
        });
    } else {
        return None;
    };
    let ran_seconds = match (started, at.or_else(|| finished(terminated))) {
        (Some(from), Some(to)) => seconds_between(from, to),
        _ => 0,
    };
    Some(Fate {
        class,
        detail,
        at,
        ran_seconds,
    })
}

fn finished(terminated: Option<&ContainerStateTerminated>) -> Option<Timestamp> {
    terminated.and_then(|t| t.finished_at.as_ref()).map(|t| t.0)
}

/// A failed pod without `DisruptionTarget`: what its container's end or the pod's reason says.
fn failed(
    pod_reason: Option<&str>,
    terminated: Option<&ContainerStateTerminated>,
) -> (Class, String, Option<Timestamp>) {
    let at = finished(terminated);
    if pod_reason == Some("DeadlineExceeded") {
        return (
            Class::Deadline,
            "its activeDeadlineSeconds passed".into(),
            at,
        );
    }
    // A kubelet that evicted the pod for node pressure (before `DisruptionTarget` existed).
    if pod_reason == Some("Evicted") {
        return (
            Class::Preempted,
            "evicted by its node (resource pressure)".into(),
            at,
        );
    }
    match terminated {
        Some(t) if t.reason.as_deref() == Some("OOMKilled") => (
            Class::Oom,
            format!("out of memory (exit code {})", t.exit_code),
            at,
        ),
        Some(t) if t.exit_code != 0 => {
            let detail = match t.reason.as_deref() {
                None | Some("Error") => format!("exit code {}", t.exit_code),
                Some(r) => format!("exit code {} ({r})", t.exit_code),
            };
            (Class::AppError, detail, at)
        }
        _ => {
            let why = pod_reason.unwrap_or("no reason given");
            (Class::AppError, format!("failed ({why})"), at)
        }
    }
}

/// `DisruptionTarget`'s reason in words (the reasons Kubernetes documents under "Pod disruption
/// conditions"); one Kubernetes adds later is shown as it is.
fn disruption_detail(reason: &str) -> String {
    match reason {
        "TerminationByKubelet" => "its node shut down (spot VM reclaimed, or maintenance)".into(),
        "DeletionByPodGC" => "its node went away".into(),
        "EvictionByEvictionAPI" => "evicted (its node was drained)".into(),
        "DeletionByTaintManager" => "its node was tainted NoExecute".into(),
        "PreemptionByScheduler" => "preempted by a pod of higher priority".into(),
        "" => "disrupted by Kubernetes".into(),
        other => format!("disrupted by Kubernetes ({other})"),
    }
}

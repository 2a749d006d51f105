//! A pod's end, from its object alone ([`fate_of`]) or, for a pod that is gone, from what was
//! last seen of it and of its attempt ([`gone`]). Structured fields only: a message is shown,
//! never read.

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{ContainerStateTerminated, Pod};

use super::Class;
use crate::k8s::status::PodSummary;
use crate::waiting::Cause;

/// What a pod's end was, before it is priced and recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct Fate {
    pub class: Class,
    pub detail: String,
    pub at: Option<Timestamp>,
    /// How long its container ran (0: never started).
    pub ran_seconds: u64,
}

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

fn seconds_between(from: Timestamp, to: Timestamp) -> u64 {
    u64::try_from(to.as_second() - from.as_second()).unwrap_or(0)
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

/// What is known of a pod that is gone, beyond the pod itself.
#[derive(Debug, Clone, Default)]
pub struct GoneContext<'a> {
    /// Why its attempt failed, if it did (`DeadlineExceeded`, `BackoffLimitExceeded`,
    /// `PodFailurePolicy`).
    pub attempt_failed: Option<&'a str>,
    /// Who deleted it or its attempt through Gantry.
    pub deleted_by: Option<&'a str>,
    /// Why it waited, if it never ran.
    pub waiting: Option<&'a Cause>,
    /// When it was seen gone.
    pub now: Option<Timestamp>,
}

/// The end of a pod that is gone (deleted, or missing from a relist): what it had ended as, if
/// it had; else why it went.
pub fn gone(last: &PodSummary, ctx: &GoneContext<'_>) -> Fate {
    if let Some(fate) = &last.fate
        && fate.class != Class::ConfigError
    {
        return fate.clone();
    }
    let at = ctx.now;
    let ran_seconds = match (last.running_since, at) {
        (Some(from), Some(to)) => seconds_between(from, to),
        _ => 0,
    };
    let fate = |class, detail: String| Fate {
        class,
        detail,
        at,
        ran_seconds,
    };
    if ctx.attempt_failed == Some("DeadlineExceeded") {
        return fate(
            Class::Deadline,
            "its attempt's activeDeadlineSeconds passed".into(),
        );
    }
    if let Some(by) = ctx.deleted_by {
        return fate(Class::Deleted, format!("deleted by {by}"));
    }
    if let Some(f) = &last.fate {
        return f.clone();
    }
    if last.running_since.is_none()
        && let Some(cause) = ctx.waiting.filter(|c| is_capacity(c))
    {
        return fate(
            Class::Capacity,
            format!("never ran: no node could be made for it ({})", cause.name()),
        );
    }
    match ctx.attempt_failed {
        Some(reason) => fate(
            Class::Deleted,
            format!("stopped by the Job controller when its attempt failed ({reason})"),
        ),
        None => fate(Class::Deleted, "deleted outside Gantry".into()),
    }
}

/// Waiting causes that mean no node could be made for the pod.
fn is_capacity(cause: &Cause) -> bool {
    matches!(
        cause,
        Cause::ScalingUp { .. }
            | Cause::NoPool { .. }
            | Cause::PoolAtMax { .. }
            | Cause::Quota { .. }
            | Cause::Stockout { .. }
    )
}

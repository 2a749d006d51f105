//! What the Job watch reports: the attempts (the first failed for good, the second running), their
//! pods (failed, running, unable to pull their image, OOM-killed) and the cluster's events about
//! them, and the reports that carry them.

use gantry::engine::Report;
use gantry::k8s::status::{AttemptPhase, AttemptSummary, EventSummary, PodSummary};
use gantry::k8s::watch::{Change, JobWatchEvent};

use super::{ATTEMPT_1, ATTEMPT_2, FAILED_PODS, NODE, POD_IMAGE, POD_OOM, POD_RUNNING, ago};

pub fn attempt(name: &str, number: u32, status: AttemptPhase) -> AttemptSummary {
    AttemptSummary {
        name: name.into(),
        namespace: "default".into(),
        attempt: Some(number),
        status,
        reason: None,
        message: None,
        active: 0,
        ready: 0,
        succeeded: 0,
        failed: 0,
        completions: None,
        created: None,
        start_time: None,
        completion_time: None,
        finished_at: None,
        deleting: false,
        ended_by: None,
        recovered_into: None,
        recorded_ends: Vec::new(),
        recorded_cost: None,
        ignores_disruptions: false,
        deleted_by: None,
        run: None,
        node_pool: None,
        code: None,
    }
}

/// Attempt 1: failed for good after three pods failed (backoffLimit 2).
pub fn failed_attempt() -> AttemptSummary {
    AttemptSummary {
        reason: Some("BackoffLimitExceeded".into()),
        message: Some("Job has reached the specified backoff limit".into()),
        failed: 3,
        created: ago(30 * 60),
        start_time: ago(30 * 60),
        completion_time: ago(22 * 60),
        finished_at: ago(22 * 60),
        ..attempt(ATTEMPT_1, 1, AttemptPhase::Failed)
    }
}

/// Attempt 2: running, with one pod running, one that cannot pull its image, one OOM-killed.
pub fn running_attempt() -> AttemptSummary {
    AttemptSummary {
        active: 2,
        ready: 1,
        failed: 1,
        created: ago(10 * 60),
        start_time: ago(10 * 60),
        ..attempt(ATTEMPT_2, 2, AttemptPhase::Running)
    }
}

pub fn pod(name: &str, job: &str, phase: &str) -> PodSummary {
    PodSummary {
        name: name.into(),
        namespace: "default".into(),
        job: job.into(),
        attempt: None,
        index: None,
        phase: phase.into(),
        reason: None,
        message: None,
        exit_code: None,
        restarts: 0,
        node: Some(NODE.into()),
        started: phase != "Pending",
        terminated: phase == "Succeeded" || phase == "Failed",
        created: None,
        deleting: false,
        gpus: 0,
        running_since: None,
        image: String::new(),
        node_selector: Vec::new(),
        fate: None,
        requests: Default::default(),
        deleted_by: None,
    }
}

pub fn failed_pods() -> Vec<PodSummary> {
    FAILED_PODS
        .iter()
        .enumerate()
        .map(|(i, name)| PodSummary {
            reason: Some("Error".into()),
            exit_code: Some(1),
            attempt: Some(1),
            created: ago(30 * 60 - 150 * i as i64),
            ..pod(name, ATTEMPT_1, "Failed")
        })
        .collect()
}

pub fn running_pods() -> Vec<PodSummary> {
    vec![
        PodSummary {
            attempt: Some(2),
            created: ago(10 * 60),
            ..pod(POD_RUNNING, ATTEMPT_2, "Running")
        },
        PodSummary {
            attempt: Some(2),
            reason: Some("ImagePullBackOff".into()),
            message: Some(
                "Back-off pulling image \"gcr.io/demo-project/ml-training-job:v2\"".into(),
            ),
            created: ago(9 * 60),
            ..pod(POD_IMAGE, ATTEMPT_2, "Pending")
        },
        PodSummary {
            attempt: Some(2),
            reason: Some("OOMKilled".into()),
            exit_code: Some(137),
            created: ago(8 * 60),
            ..pod(POD_OOM, ATTEMPT_2, "Failed")
        },
    ]
}

/// `(name, kind, object, type, reason, message, count, seconds ago)`
type EventRow<'a> = (
    &'a str,
    &'a str,
    &'a str,
    &'a str,
    &'a str,
    &'a str,
    i32,
    i64,
);

pub fn event(row: EventRow<'_>) -> EventSummary {
    let (name, kind, object, type_, reason, message, count, secs_ago) = row;
    EventSummary {
        name: name.into(),
        kind: kind.into(),
        object: object.into(),
        type_: type_.into(),
        reason: reason.into(),
        message: message.into(),
        count,
        last_seen: ago(secs_ago),
    }
}

pub fn events() -> Vec<EventSummary> {
    let created = format!("Created pod: {POD_RUNNING}");
    [
        (
            "e1",
            "Job",
            ATTEMPT_1,
            "Warning",
            "BackoffLimitExceeded",
            "Job has reached the specified backoff limit",
            1,
            22 * 60,
        ),
        (
            "e2",
            "Job",
            ATTEMPT_2,
            "Normal",
            "SuccessfulCreate",
            created.as_str(),
            1,
            10 * 60,
        ),
        (
            "e3",
            "Pod",
            POD_RUNNING,
            "Normal",
            "Started",
            "Started container ml-training-container",
            1,
            9 * 60 + 30,
        ),
        (
            "e4",
            "Pod",
            POD_IMAGE,
            "Warning",
            "Failed",
            "Error: ImagePullBackOff",
            6,
            60,
        ),
        (
            "e5",
            "Pod",
            POD_OOM,
            "Warning",
            "OOMKilling",
            "Memory cgroup out of memory: Killed process 4242 (python)",
            1,
            7 * 60,
        ),
    ]
    .into_iter()
    .map(event)
    .collect()
}

pub fn job_event(change: Change<AttemptSummary>) -> Report {
    Report::Job(JobWatchEvent::Job(change))
}

pub fn pod_event(change: Change<PodSummary>) -> Report {
    Report::Job(JobWatchEvent::Pod(change))
}

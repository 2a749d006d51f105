//! How a Job ends: its terminal conditions (with the interim `SuccessCriteriaMet` or
//! `FailureTarget` the controller writes first, here in the same update), its active pods
//! deleted, the event the controller records (`Completed`, or a Warning named by the failure's
//! reason), and `ttlSecondsAfterFinished`.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::JobKey;
use crate::kube::cluster::ClusterState;
use crate::kube::events::EventType;
use crate::kube::lifecycle;
use crate::kube::meta;
use crate::kube::resources::Kind;

/// Why a Job ends.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Finish {
    /// `Complete` or `Failed`.
    pub kind: &'static str,
    pub reason: &'static str,
    pub message: String,
}

impl Finish {
    pub fn complete() -> Self {
        Self {
            kind: "Complete",
            reason: "CompletionsReached",
            message: "Reached expected number of succeeded pods".into(),
        }
    }

    pub fn failed(reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            kind: "Failed",
            reason,
            message: message.into(),
        }
    }

    /// Writes the terminal conditions into the Job's status.
    pub fn write(&self, status: &mut Value) {
        let now = meta::now();
        let target = if self.kind == "Complete" {
            "SuccessCriteriaMet"
        } else {
            "FailureTarget"
        };
        let (kind, reason, message) = (self.kind, self.reason, &self.message);
        status["conditions"] = json!([
            {"type": target, "status": "True", "reason": reason, "message": message, "lastProbeTime": now, "lastTransitionTime": now},
            {"type": kind, "status": "True", "reason": reason, "message": message, "lastProbeTime": now, "lastTransitionTime": now},
        ]);
        if self.kind == "Complete" {
            status["completionTime"] = json!(now);
        }
        if let Some(s) = status.as_object_mut() {
            s.remove("active");
        }
        status["ready"] = json!(0);
    }

    /// What follows the conditions: the active pods go, the event, the TTL's countdown.
    pub fn enact(&self, state: &Arc<ClusterState>, job: &Value, active: &[&Arc<Value>]) {
        for p in active {
            let _ = lifecycle::delete(
                state,
                Kind::Pod,
                meta::namespace(p),
                meta::name(p),
                &lifecycle::DeleteOptions::default(),
            );
        }
        let (event_type, reason, text) = if self.kind == "Complete" {
            (EventType::Normal, "Completed", "Job completed")
        } else {
            (EventType::Warning, self.reason, self.message.as_str())
        };
        state.events.record(
            &state.store,
            job,
            event_type,
            reason,
            text,
            "job-controller",
        );
        if let Some(ttl) = job["spec"]["ttlSecondsAfterFinished"].as_u64() {
            let key = (meta::namespace(job).into(), meta::name(job).into());
            schedule_ttl(state, key, meta::uid(job).to_string(), ttl);
        }
    }
}

/// A Job suspended while it runs: its active pods are deleted (they end as any deleted pod does,
/// after their grace period; the controller does not count them as failures).
pub fn stop_pods(state: &Arc<ClusterState>, active: &[&Arc<Value>]) {
    for p in active {
        let _ = lifecycle::delete(
            state,
            Kind::Pod,
            meta::namespace(p),
            meta::name(p),
            &lifecycle::DeleteOptions::default(),
        );
    }
}

/// The `Suspended` condition as the Job controller writes it: `True` with `JobSuspended` while
/// the Job is suspended, `False` with `JobResumed` once it is not.
pub fn suspension(status: &mut Value, suspended: bool) {
    let now = meta::now();
    let (value, reason, message) = if suspended {
        ("True", "JobSuspended", "Job suspended")
    } else {
        ("False", "JobResumed", "Job resumed")
    };
    let condition = json!({"type": "Suspended", "status": value, "reason": reason,
        "message": message, "lastProbeTime": now, "lastTransitionTime": now});
    let conditions = status["conditions"].as_array_mut();
    match conditions {
        Some(list) => {
            list.retain(|c| c["type"] != "Suspended");
            list.push(condition);
        }
        None => status["conditions"] = json!([condition]),
    }
}

/// The event of a suspension or a resumption, once each, as the Job controller records it.
pub fn tell_suspension(state: &Arc<ClusterState>, job: &Value, suspended: bool) {
    let (reason, message) = if suspended {
        ("Suspended", "Job suspended")
    } else {
        ("Resumed", "Job resumed")
    };
    state.events.record(
        &state.store,
        job,
        EventType::Normal,
        reason,
        message,
        "job-controller",
    );
}

fn schedule_ttl(state: &Arc<ClusterState>, key: JobKey, uid: String, ttl: u64) {
    let state = state.clone();
    tokio::spawn(async move {
        let wall = state.shared.clock.scaled(Duration::from_secs(ttl));
        tokio::select! {
            _ = state.stop.cancelled() => return,
            _ = tokio::time::sleep(wall) => {}
        }
        if state
            .store
            .get(Kind::Job, &key.0, &key.1)
            .is_some_and(|j| meta::uid(&j) == uid)
        {
            let opts = lifecycle::DeleteOptions {
                propagation: lifecycle::Propagation::Background,
                ..Default::default()
            };
            let _ = lifecycle::delete(&state, Kind::Job, &key.0, &key.1, &opts);
        }
    });
}

//! A Deployment's status as `calculateStatus` and `syncRolloutStatus` write it: the counts of
//! its ReplicaSets' pods, the generation observed, `Available` (minimum availability, by
//! `maxUnavailable`) and `Progressing` with the reasons `kubectl rollout status` and
//! `describe` read: NewReplicaSetCreated, FoundNewReplicaSet, ReplicaSetUpdated,
//! NewReplicaSetAvailable, ProgressDeadlineExceeded.

use std::time::Duration;

use serde_json::{Value, json};

use super::rolling::max_unavailable;
use crate::kube::cluster::ClusterState;
use crate::kube::meta;
use crate::kube::store::Obj;

const NEW_RS_AVAILABLE: &str = "NewReplicaSetAvailable";
const TIMED_OUT: &str = "ProgressDeadlineExceeded";

fn count(v: &Value, key: &str) -> i64 {
    v["status"][key].as_i64().unwrap_or(0)
}

/// The status to write, from the ReplicaSets as they are now.
pub fn next(
    state: &ClusterState,
    d: &Value,
    new_rs: Option<&Obj>,
    old: &[Obj],
    created: bool,
) -> Value {
    let all: Vec<&Obj> = old.iter().chain(new_rs).collect();
    let sum = |key: &str| all.iter().map(|rs| count(rs, key)).sum::<i64>();
    let total_spec: i64 = all
        .iter()
        .map(|rs| rs["spec"]["replicas"].as_i64().unwrap_or(0))
        .sum();
    let available = sum("availableReplicas");
    let mut status = json!({
        "observedGeneration": d["metadata"]["generation"].as_i64().unwrap_or(1),
        "replicas": sum("replicas"),
        "updatedReplicas": new_rs.map_or(0, |rs| count(rs, "replicas")),
        "readyReplicas": sum("readyReplicas"),
        "availableReplicas": available,
        "unavailableReplicas": (total_spec - available).max(0),
        "conditions": d["status"]["conditions"].as_array().cloned().unwrap_or_default(),
    });
    if let Some(collisions) = d["status"].get("collisionCount") {
        status["collisionCount"] = collisions.clone();
    }
    let desired = d["spec"]["replicas"].as_i64().unwrap_or(1);
    if available >= desired - max_unavailable(d) {
        set_condition(
            &mut status,
            "Available",
            true,
            "MinimumReplicasAvailable",
            "Deployment has minimum availability.",
        );
    } else {
        set_condition(
            &mut status,
            "Available",
            false,
            "MinimumReplicasUnavailable",
            "Deployment does not have minimum availability.",
        );
    }
    let Some(rs) = new_rs else {
        return strip_zeros(status);
    };
    let rs_name = meta::name(rs);
    if d["spec"]["progressDeadlineSeconds"].is_null() {
        remove_condition(&mut status, "Progressing");
        return strip_zeros(status);
    }
    if created {
        set_condition(
            &mut status,
            "Progressing",
            true,
            "NewReplicaSetCreated",
            &format!("Created new replica set \"{rs_name}\""),
        );
    } else if condition(&status, "Progressing").is_none() {
        set_condition(
            &mut status,
            "Progressing",
            true,
            "FoundNewReplicaSet",
            &format!("Found new replica set \"{rs_name}\""),
        );
    }
    let current = condition(&status, "Progressing");
    let settled = status["replicas"] == status["updatedReplicas"]
        && current
            .as_ref()
            .is_some_and(|c| c["reason"] == NEW_RS_AVAILABLE);
    if !settled {
        if complete(d, &status) {
            set_condition(
                &mut status,
                "Progressing",
                true,
                NEW_RS_AVAILABLE,
                &format!("ReplicaSet \"{rs_name}\" has successfully progressed."),
            );
        } else if progressing(d, &status) {
            // Progress renews lastUpdateTime even with the same reason.
            remove_condition(&mut status, "Progressing");
            set_condition(
                &mut status,
                "Progressing",
                true,
                "ReplicaSetUpdated",
                &format!("ReplicaSet \"{rs_name}\" is progressing."),
            );
            if let Some(previous) = current.filter(|c| c["status"] == "True") {
                set_field(
                    &mut status,
                    "Progressing",
                    "lastTransitionTime",
                    previous["lastTransitionTime"].clone(),
                );
            }
        } else if timed_out(state, d, &status) {
            set_condition(
                &mut status,
                "Progressing",
                false,
                TIMED_OUT,
                &format!("ReplicaSet \"{rs_name}\" has timed out progressing."),
            );
        }
    }
    strip_zeros(status)
}

/// Counts of zero are left out, as the API's `omitempty` leaves them.
fn strip_zeros(mut status: Value) -> Value {
    if let Some(map) = status.as_object_mut() {
        map.retain(|k, v| k == "observedGeneration" || v.as_i64() != Some(0));
    }
    status
}

/// `DeploymentComplete`.
pub fn complete(d: &Value, status: &Value) -> bool {
    let desired = d["spec"]["replicas"].as_i64().unwrap_or(1);
    let n = |key: &str| status[key].as_i64().unwrap_or(0);
    n("updatedReplicas") == desired
        && n("replicas") == desired
        && n("availableReplicas") == desired
        && n("observedGeneration") >= d["metadata"]["generation"].as_i64().unwrap_or(1)
}

/// `DeploymentProgressing`: more updated, fewer old, more ready or more available pods than
/// the status last written says.
fn progressing(d: &Value, status: &Value) -> bool {
    let before = &d["status"];
    let n = |v: &Value, key: &str| v[key].as_i64().unwrap_or(0);
    let old = |v: &Value| n(v, "replicas") - n(v, "updatedReplicas");
    n(status, "updatedReplicas") > n(before, "updatedReplicas")
        || old(status) < old(before)
        || n(status, "readyReplicas") > n(before, "readyReplicas")
        || n(status, "availableReplicas") > n(before, "availableReplicas")
}

/// Simulated time since the Progressing condition last changed.
fn since_progress(state: &ClusterState, status: &Value) -> Option<Duration> {
    let c = condition(status, "Progressing")?;
    let at: jiff::Timestamp = c["lastUpdateTime"].as_str()?.parse().ok()?;
    let wall = jiff::Timestamp::now()
        .duration_since(at)
        .as_secs_f64()
        .max(0.0);
    Some(Duration::from_secs_f64(
        wall / state.shared.clock.scale().max(1e-9),
    ))
}

/// `DeploymentTimedOut`.
fn timed_out(state: &ClusterState, d: &Value, status: &Value) -> bool {
    let Some(c) = condition(status, "Progressing") else {
        return false;
    };
    if c["reason"] == NEW_RS_AVAILABLE {
        return false;
    }
    if c["reason"] == TIMED_OUT {
        return true;
    }
    let deadline = d["spec"]["progressDeadlineSeconds"].as_u64().unwrap_or(600);
    since_progress(state, status).is_some_and(|s| s.as_secs() >= deadline)
}

/// How long (simulated) until the rollout under way would pass its progress deadline.
pub fn progress_deadline(state: &ClusterState, d: &Value, status: &Value) -> Option<Duration> {
    let c = condition(status, "Progressing")?;
    if c["reason"] == NEW_RS_AVAILABLE || c["reason"] == TIMED_OUT || c["status"] != "True" {
        return None;
    }
    let deadline = Duration::from_secs(d["spec"]["progressDeadlineSeconds"].as_u64()?);
    let since = since_progress(state, status)?;
    Some(deadline.saturating_sub(since) + Duration::from_secs(1))
}

fn condition(status: &Value, kind: &str) -> Option<Value> {
    status["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == kind)
        .cloned()
}

fn remove_condition(status: &mut Value, kind: &str) {
    if let Some(list) = status["conditions"].as_array_mut() {
        list.retain(|c| c["type"] != kind);
    }
}

fn set_field(status: &mut Value, kind: &str, field: &str, value: Value) {
    if let Some(c) = status["conditions"]
        .as_array_mut()
        .and_then(|l| l.iter_mut().find(|c| c["type"] == kind))
    {
        c[field] = value;
    }
}

/// `SetDeploymentCondition`: unchanged when status and reason are; otherwise the condition
/// moves to the end, keeping its transition time while its status holds.
fn set_condition(status: &mut Value, kind: &str, on: bool, reason: &str, message: &str) {
    let value = if on { "True" } else { "False" };
    let now = meta::now();
    let mut transition = json!(now);
    if let Some(c) = condition(status, kind) {
        if c["status"] == value && c["reason"] == reason {
            return;
        }
        if c["status"] == value {
            transition = c["lastTransitionTime"].clone();
        }
    }
    remove_condition(status, kind);
    if !status["conditions"].is_array() {
        status["conditions"] = json!([]);
    }
    if let Some(list) = status["conditions"].as_array_mut() {
        list.push(json!({
            "type": kind,
            "status": value,
            "lastUpdateTime": now,
            "lastTransitionTime": transition,
            "reason": reason,
            "message": message,
        }));
    }
}

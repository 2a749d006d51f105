//! The cells of each kind's table rows, formatted as the printers of kube-apiserver v1.32
//! format them (`pkg/printers/internalversion/printers.go`): one file per kind, and here the
//! readers of JSON fields and ages they share.

mod age;
mod configmap;
mod deployment;
mod event;
mod job;
mod labels;
mod lease;
mod namespace;
mod node;
mod pod;
mod replicaset;
mod rolebinding;
mod secret;
mod service;
mod serviceaccount;

use jiff::Timestamp;
use serde_json::Value;

use crate::kube::resources::Kind;
use age::human_duration;

/// The cells of `obj`'s row, and the row's conditions (only pods have them).
pub(super) fn cells(kind: Kind, obj: &Value, now: Timestamp) -> (Vec<Value>, Option<Value>) {
    match kind {
        Kind::Pod => pod::cells(obj, now),
        Kind::Job => (job::cells(obj, now), None),
        Kind::Service => (service::cells(obj, now), None),
        Kind::Node => (node::cells(obj, now), None),
        Kind::Event => (event::cells(obj, now), None),
        Kind::Namespace => (namespace::cells(obj, now), None),
        Kind::ConfigMap => (configmap::cells(obj, now), None),
        Kind::Secret => (secret::cells(obj, now), None),
        Kind::Lease => (lease::cells(obj, now), None),
        Kind::ServiceAccount => (serviceaccount::cells(obj, now), None),
        Kind::Deployment => (deployment::cells(obj, now), None),
        Kind::ReplicaSet => (replicaset::cells(obj, now), None),
        Kind::RoleBinding | Kind::ClusterRoleBinding => (rolebinding::cells(obj, now), None),
        _ => (default_cells(obj), None),
    }
}

/// The default convertor's cells (`k8s.io/apiserver/pkg/registry/rest/table.go`): name and
/// creation time in RFC 3339 (UTC), for kinds without a printer (Roles, ClusterRoles).
fn default_cells(obj: &Value) -> Vec<Value> {
    let created = timestamp(&obj["metadata"]["creationTimestamp"]).map_or_else(
        || "0001-01-01T00:00:00Z".to_string(),
        |t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
    );
    vec![s(name_of(obj)), s(created)]
}

pub(super) fn text(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

pub(super) fn items(v: &Value) -> &[Value] {
    v.as_array().map(Vec::as_slice).unwrap_or_default()
}

pub(super) fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or(0)
}

pub(super) fn s(v: impl Into<String>) -> Value {
    Value::String(v.into())
}

pub(super) fn or_placeholder(v: &str, placeholder: &str) -> String {
    if v.is_empty() {
        placeholder.to_string()
    } else {
        v.to_string()
    }
}

pub(super) fn timestamp(v: &Value) -> Option<Timestamp> {
    v.as_str().and_then(|t| t.parse::<Timestamp>().ok())
}

/// `duration.HumanDuration(now - ts)`, including its tolerance for small clock skew.
pub(super) fn since(now: Timestamp, ts: Timestamp) -> String {
    let secs = now.duration_since(ts).as_secs();
    if secs < -1 {
        "<invalid>".to_string()
    } else {
        human_duration(secs)
    }
}

/// `translateTimestampSince`: `<unknown>` for a zero (absent) time.
pub(super) fn age_of(now: Timestamp, v: &Value) -> String {
    timestamp(v).map_or_else(|| "<unknown>".to_string(), |t| since(now, t))
}

pub(super) fn creation_age(obj: &Value, now: Timestamp) -> String {
    age_of(now, &obj["metadata"]["creationTimestamp"])
}

pub(super) fn name_of(obj: &Value) -> String {
    text(&obj["metadata"]["name"]).to_string()
}

/// Whether `conditions` has a condition of `kind` whose status is True (the first of that
/// type decides, as in the printers' helpers).
pub(super) fn condition_true(conditions: &Value, kind: &str) -> bool {
    items(conditions)
        .iter()
        .find(|c| text(&c["type"]) == kind)
        .is_some_and(|c| text(&c["status"]) == "True")
}

pub(super) fn any_condition_true(conditions: &Value, kind: &str) -> bool {
    items(conditions)
        .iter()
        .any(|c| text(&c["type"]) == kind && text(&c["status"]) == "True")
}

pub(super) fn later(current: Option<Timestamp>, candidate: Option<Timestamp>) -> Option<Timestamp> {
    match (current, candidate) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// A fixed clock and a pod for the cell tests of every kind.
#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) mod fixtures {
    use jiff::{SignedDuration, Timestamp};
    use serde_json::{Value, json};

    pub fn now() -> Timestamp {
        "2025-06-01T12:00:00Z".parse().unwrap()
    }

    pub fn ago(secs: i64) -> String {
        (now() - SignedDuration::from_secs(secs))
            .strftime("%Y-%m-%dT%H:%M:%SZ")
            .to_string()
    }

    pub fn pod(status: Value) -> Value {
        json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p1", "namespace": "default", "uid": "u1",
                         "resourceVersion": "101", "creationTimestamp": ago(302),
                         "labels": {"app": "x"}},
            "spec": {"nodeName": "node-1", "containers": [{"name": "main", "image": "busybox"}]},
            "status": status,
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_default_convertor_prints_name_and_zero_time() {
        assert_eq!(
            default_cells(&json!({"metadata": {"name": "x"}}))[1],
            "0001-01-01T00:00:00Z"
        );
    }
}

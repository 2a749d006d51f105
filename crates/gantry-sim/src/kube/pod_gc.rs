//! The pod garbage collector's work on pods bound to a node that no longer exists
//! (`pkg/controller/podgc`, `gcOrphaned`): a pod not yet terminal is first made Failed with a
//! `DisruptionTarget` condition (reason `DeletionByPodGC`, "PodGC: node no longer exists"), then
//! each is deleted at once (grace 0). Kubernetes does it once the node has been gone for a
//! quarantine of 40 s, and only if it is still gone; callers choose when to call.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::cluster::ClusterState;
use super::controllers::kubelet::is_terminal;
use super::lifecycle::{self, DeleteOptions};
use super::meta;
use super::pod_status::set_condition;
use super::resources::Kind;

/// How long PodGC waits after a node goes before it takes the node's pods (`quarantineTime`).
pub const QUARANTINE: Duration = Duration::from_secs(40);

/// The pods bound to `node`.
pub fn pods_on(state: &ClusterState, node: &str) -> Vec<Arc<Value>> {
    state
        .store
        .list(Kind::Pod, None, |p| {
            p.pointer("/spec/nodeName").and_then(Value::as_str) == Some(node)
        })
        .0
}

/// Deletes the pods bound to `node`, if the node is gone.
pub fn collect_orphans(state: &Arc<ClusterState>, node: &str) {
    if state.store.get(Kind::Node, "", node).is_some() {
        return;
    }
    let now = DeleteOptions {
        grace_seconds: Some(0),
        ..Default::default()
    };
    for pod in pods_on(state, node) {
        let (ns, name) = (meta::namespace(&pod), meta::name(&pod));
        if !is_terminal(&pod) {
            let _ = state.store.update(Kind::Pod, ns, name, |p| {
                p["status"]["phase"] = json!("Failed");
                set_condition(
                    p,
                    "DisruptionTarget",
                    true,
                    Some("DeletionByPodGC"),
                    Some("PodGC: node no longer exists"),
                )
            });
        }
        let _ = lifecycle::delete(state, Kind::Pod, ns, name, &now);
    }
}

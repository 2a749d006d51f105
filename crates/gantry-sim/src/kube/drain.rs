//! How GKE takes a node away when a pool shrinks, is deleted or has its nodes recreated: it
//! cordons the node, evicts its pods through the Eviction API (each gets a `DisruptionTarget`
//! condition, then a graceful delete, so controllers replace them by their own rules), waits for
//! them to go, deletes the Node, and the pod garbage collector removes what is still bound to it
//! (`pod_gc`, at once here).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::broadcast::error::RecvError;

use super::cluster::ClusterState;
use super::controllers::kubelet::is_terminal;
use super::events::EventType;
use super::lifecycle::{self, DeleteOptions};
use super::meta;
use super::nodes::{self, UNSCHEDULABLE_TAINT};
use super::pod_gc::{self, pods_on};
use super::pod_status::set_condition;
use super::resources::Kind;

/// The longest a drain waits for evicted pods (simulated): GKE's default termination grace is
/// 30 s; past that the instance goes regardless.
const DRAIN_PATIENCE: Duration = Duration::from_secs(60);
/// The least real time a drain waits, so a time scale of 0 cannot cut pods short.
const MIN_PATIENCE: Duration = Duration::from_millis(500);

/// Drains and deletes a node. Returns once the Node is gone.
pub async fn remove_node(state: &Arc<ClusterState>, node: &str) {
    cordon(state, node);
    let evicted = evict_pods(state, node);
    wait_until_gone(state, &evicted).await;
    nodes::remove(state, node);
    pod_gc::collect_orphans(state, node);
}

/// Marks the node unschedulable, as `kubectl cordon` and GKE's drain do.
fn cordon(state: &ClusterState, node: &str) {
    let cordoned = state.store.update(Kind::Node, "", node, |n| {
        n["spec"]["unschedulable"] = json!(true);
        let mut taints = n["spec"]["taints"].as_array().cloned().unwrap_or_default();
        if !taints.iter().any(|t| t["key"] == UNSCHEDULABLE_TAINT) {
            taints.push(json!({"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule", "timeAdded": meta::now()}));
        }
        n["spec"]["taints"] = Value::Array(taints);
    });
    if let Ok(n) = cordoned {
        let message = format!("Node {node} status is now: NodeNotSchedulable");
        state.events.record(
            &state.store,
            &n,
            EventType::Normal,
            "NodeNotSchedulable",
            &message,
            "kubelet",
        );
    }
}

/// Evicts every pod still running on the node but a DaemonSet's; returns them as (namespace, name, uid).
fn evict_pods(state: &Arc<ClusterState>, node: &str) -> Vec<(String, String, String)> {
    let mut evicted = Vec::new();
    for pod in pods_on(state, node) {
        if is_terminal(&pod) || super::daemon_sets::owned_by_daemon_set(&pod) {
            continue;
        }
        let (ns, name, uid) = (meta::namespace(&pod), meta::name(&pod), meta::uid(&pod));
        if !meta::is_deleting(&pod) {
            let _ = state.store.update(Kind::Pod, ns, name, |p| {
                set_condition(
                    p,
                    "DisruptionTarget",
                    true,
                    Some("EvictionByEvictionAPI"),
                    Some("Eviction API: evicting"),
                )
            });
            let _ = lifecycle::delete(state, Kind::Pod, ns, name, &DeleteOptions::default());
        }
        evicted.push((ns.to_string(), name.to_string(), uid.to_string()));
    }
    evicted
}

/// Waits until every evicted pod has left the store (its kubelet stopped it), or patience ends.
async fn wait_until_gone(state: &ClusterState, evicted: &[(String, String, String)]) {
    let mut changes = state.store.subscribe();
    let still_there = || {
        evicted.iter().any(|(ns, name, uid)| {
            state
                .store
                .get(Kind::Pod, ns, name)
                .is_some_and(|p| meta::uid(&p) == uid)
        })
    };
    let patience = state.shared.clock.scaled(DRAIN_PATIENCE).max(MIN_PATIENCE);
    let waited = tokio::time::timeout(patience, async {
        while still_there() {
            tokio::select! {
                _ = state.stop.cancelled() => return,
                changed = changes.recv() => {
                    if matches!(changed, Err(RecvError::Closed)) {
                        return;
                    }
                }
            }
        }
    })
    .await;
    if waited.is_err() {
        tracing::debug!("drain patience ran out; the node goes with pods still stopping");
    }
}

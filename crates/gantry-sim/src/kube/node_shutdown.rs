//! Graceful node shutdown, as the kubelet does it when its VM is told to stop (a Spot VM's
//! preemption notice; GKE enables it on every node). The kubelet's shutdown manager records
//! `NodeShutdown` on the node and reports it NotReady ("node is shutting down"); the node
//! lifecycle controller then taints it `node.kubernetes.io/not-ready`. The kubelet kills the
//! node's pods, each of which ends Failed with reason `Terminated`, the manager's message and a
//! `DisruptionTarget` condition (`TerminationByKubelet`), and rejects any pod that still reaches
//! the node (`NodeShutdown`): that part is the pods' own tasks, `controllers::kubelet::shutdown`.
//! The words are those of `pkg/kubelet/nodeshutdown` and `pkg/kubelet/nodestatus`.

use serde_json::{Value, json};

use super::cluster::ClusterState;
use super::events::EventType;
use super::meta;
use super::resources::Kind;

/// The Ready condition's message while the node shuts down (the manager's `ShutdownStatus`).
const SHUTTING_DOWN: &str = "node is shutting down";
/// A killed pod's `status.reason` and `status.message`, and its DisruptionTarget's message.
pub const POD_REASON: &str = "Terminated";
pub const POD_MESSAGE: &str = "Pod was terminated in response to imminent node shutdown.";
/// The DisruptionTarget condition's reason for a pod the kubelet killed.
pub const DISRUPTION_REASON: &str = "TerminationByKubelet";
/// What the kubelet's admission answers a pod that reaches a node shutting down.
pub const REJECT_REASON: &str = "NodeShutdown";
pub const REJECT_MESSAGE: &str = "Pod was rejected as the node is shutting down.";
/// The taint the node lifecycle controller puts on a node that is not ready.
pub const NOT_READY_TAINT: &str = "node.kubernetes.io/not-ready";

/// The node's kubelet learns that the node shuts down: the node goes NotReady and is tainted,
/// and the kubelet's pod tasks kill its pods as they see it. False when there is no such node.
pub fn begin(state: &ClusterState, node: &str) -> bool {
    let now = meta::now();
    let not_ready = state.store.update(Kind::Node, "", node, |n| {
        let conditions = n["status"]["conditions"].as_array_mut();
        if let Some(ready) = conditions
            .into_iter()
            .flatten()
            .find(|c| c["type"] == "Ready")
        {
            *ready = json!({"type": "Ready", "status": "False", "reason": "KubeletNotReady",
                "message": SHUTTING_DOWN, "lastHeartbeatTime": now, "lastTransitionTime": now});
        }
    });
    let Ok(shutting_down) = not_ready else {
        return false;
    };
    let record = |reason: &str, message: &str| {
        state.events.record(
            &state.store,
            &shutting_down,
            EventType::Normal,
            reason,
            message,
            "kubelet",
        );
    };
    record("NodeShutdown", "Shutdown manager detected shutdown event");
    record(
        "NodeNotReady",
        &format!("Node {node} status is now: NodeNotReady"),
    );
    let _ = state.store.update(Kind::Node, "", node, |n| {
        let mut taints = n["spec"]["taints"].as_array().cloned().unwrap_or_default();
        if !taints.iter().any(|t| t["key"] == NOT_READY_TAINT) {
            taints.push(json!({"key": NOT_READY_TAINT, "effect": "NoSchedule"}));
            taints.push(json!({"key": NOT_READY_TAINT, "effect": "NoExecute", "timeAdded": now}));
        }
        n["spec"]["taints"] = Value::Array(taints);
    });
    true
}

/// Whether the node's kubelet reports that it is shutting down (among its other errors, if
/// any: the Ready condition's message aggregates them).
pub fn is_shutting_down(node: &Value) -> bool {
    node.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|conditions| {
            conditions.iter().any(|c| {
                c["type"] == "Ready"
                    && c["status"] == "False"
                    && c["message"]
                        .as_str()
                        .is_some_and(|m| m.contains(SHUTTING_DOWN))
            })
        })
}

/// Whether the pod is bound to a node that is shutting down.
pub fn pod_node_is_shutting_down(state: &ClusterState, pod: &Value) -> bool {
    pod.pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .and_then(|node| state.store.get(Kind::Node, "", node))
        .is_some_and(|node| is_shutting_down(&node))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_shuts_down_by_its_ready_conditions_message_whatever_surrounds_it() {
        let node = |status: &str, message: &str| {
            json!({"status": {"conditions": [
                {"type": "MemoryPressure", "status": "False", "message": SHUTTING_DOWN},
                {"type": "Ready", "status": status, "message": message},
            ]}})
        };
        assert!(is_shutting_down(&node("False", "node is shutting down")));
        let aggregated = "[container runtime is down, node is shutting down]";
        assert!(is_shutting_down(&node("False", aggregated)));
        let hostile = crate::hostile::poison(SHUTTING_DOWN);
        assert!(is_shutting_down(&node("False", &hostile)));
        assert!(!is_shutting_down(&node(
            "True",
            "kubelet is posting ready status"
        )));
        assert!(!is_shutting_down(&node(
            "False",
            "container runtime network not ready"
        )));
    }
}

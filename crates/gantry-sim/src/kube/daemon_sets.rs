//! Pods a DaemonSet owns are the node's, not a workload's: the cluster autoscaler does not count
//! them as keeping a node (its `--skip-nodes-with-system-pods` concerns `kube-system` pods with
//! no controller; DaemonSet pods are ignored when it judges a node unneeded), and a drain
//! leaves them (`kubectl drain --ignore-daemonsets`, the autoscaler's own drain).

use serde_json::Value;

/// Whether a DaemonSet owns the object.
pub fn owned_by_daemon_set(obj: &Value) -> bool {
    obj.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .is_some_and(|refs| refs.iter().any(|r| r["kind"] == "DaemonSet"))
}

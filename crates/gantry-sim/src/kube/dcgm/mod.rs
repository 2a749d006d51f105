//! GKE's managed DCGM exporter (`--monitoring=SYSTEM,DCGM`): on each GPU node an exporter pod
//! as GKE deploys it — namespace `gke-managed-system`, label
//! `app.kubernetes.io/name=gke-managed-dcgm-exporter`, container `dcgm-exporter` with port
//! `metrics` 9400, owned by the DaemonSet `dcgm-exporter` — that the API server's pod proxy
//! answers with the exporter's text (`metrics`). This file is the DaemonSet controller's part:
//! an exporter on every GPU node that is up, a failed one replaced, none on a node going away;
//! none at all under the `no-dcgm` fault.

mod load;
mod metrics;

/// A running training pod holding one GPU, started `started_secs_ago`, with `env` (tests of the
/// load and of the text).
#[cfg(test)]
fn training_pod(env: Value, started_secs_ago: i64) -> Value {
    let started = jiff::Timestamp::now() - jiff::SignedDuration::from_secs(started_secs_ago);
    json!({"metadata": {"name": "job-1-0-abcde", "namespace": "default"},
        "spec": {"containers": [{"name": "trainer", "env": env,
            "resources": {"limits": {"nvidia.com/gpu": "1"}}}]},
        "status": {"containerStatuses": [{"state": {"running": {"startedAt": started.to_string()}}}]}})
}

use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::broadcast::error::RecvError;

use super::cluster::ClusterState;
use super::controllers::kubelet::is_terminal;
use super::lifecycle::{self, DeleteOptions};
use super::meta;
use super::node_shutdown;
use super::resources::Kind;

pub use metrics::exposition;

pub const NAMESPACE: &str = "gke-managed-system";
pub const APP_LABEL: &str = "app.kubernetes.io/name";
pub const APP: &str = "gke-managed-dcgm-exporter";
pub const PORT: u16 = 9400;
const DAEMON_SET: &str = "dcgm-exporter";
/// The image GKE's recorded clusters run (`gke-dcgm-exporter:4.4.1-4.6.0-gke.17`).
const IMAGE: &str = "gke.gcr.io/gke-release/nvidia/gke-dcgm-exporter:4.4.1-4.6.0-gke.17";
/// GKE's GPU nodes carry the accelerator's name, and allocate `nvidia.com/gpu`.
pub const ACCELERATOR_LABEL: &str = "cloud.google.com/gke-accelerator";
pub const GPU: &str = "nvidia.com/gpu";

/// Whether `pod` is an exporter pod of this DaemonSet.
pub fn is_exporter(pod: &Value) -> bool {
    meta::namespace(pod) == NAMESPACE && meta::label(pod, APP_LABEL) == Some(APP)
}

/// How many GPUs the node has to give.
pub fn gpus_of(node: &Value) -> u32 {
    node.pointer("/status/allocatable/nvidia.com~1gpu")
        .and_then(Value::as_str)
        .and_then(|q| q.parse().ok())
        .unwrap_or(0)
}

/// Subscribes to the store at once, before the task runs, so no node added after the cluster
/// starts is missed.
pub fn run(state: Arc<ClusterState>) -> impl std::future::Future<Output = ()> + Send + 'static {
    let rx = state.store.subscribe();
    control_loop(state, rx)
}

async fn control_loop(
    state: Arc<ClusterState>,
    mut rx: tokio::sync::broadcast::Receiver<Arc<super::store::Change>>,
) {
    let uid = meta::new_uid();
    sync(&state, &uid);
    loop {
        let change = tokio::select! {
            _ = state.stop.cancelled() => return,
            c = rx.recv() => c,
        };
        match change {
            Ok(c) if c.kind == Kind::Node || (c.kind == Kind::Pod && is_exporter(&c.object)) => {
                sync(&state, &uid)
            }
            Ok(_) => {}
            Err(RecvError::Lagged(_)) => sync(&state, &uid),
            Err(RecvError::Closed) => return,
        }
    }
}

/// One exporter on every GPU node that is up; failed ones deleted (and so replaced).
fn sync(state: &Arc<ClusterState>, daemon_set_uid: &str) {
    if state.shared.faults.no_dcgm() {
        return;
    }
    let (nodes, _) = state.store.list(Kind::Node, None, |n| {
        gpus_of(n) > 0 && !meta::is_deleting(n) && !node_shutdown::is_shutting_down(n)
    });
    if nodes.is_empty() {
        return;
    }
    let (pods, _) = state.store.list(Kind::Pod, Some(NAMESPACE), is_exporter);
    let now = DeleteOptions {
        grace_seconds: Some(0),
        ..Default::default()
    };
    for pod in pods
        .iter()
        .filter(|p| is_terminal(p) && !meta::is_deleting(p))
    {
        let _ = lifecycle::delete(state, Kind::Pod, NAMESPACE, meta::name(pod), &now);
    }
    ensure_namespace(state);
    for node in nodes {
        let name = meta::name(&node);
        let served = pods.iter().any(|p| {
            !is_terminal(p)
                && !meta::is_deleting(p)
                && p.pointer("/spec/nodeName").and_then(Value::as_str) == Some(name)
        });
        if !served {
            let pod = exporter_pod(name, daemon_set_uid);
            if let Err(e) = lifecycle::create(state, Kind::Pod, Some(NAMESPACE), pod) {
                tracing::debug!(error = ?e, node = name, "creating a DCGM exporter pod");
            }
        }
    }
}

fn ensure_namespace(state: &ClusterState) {
    if state.store.get(Kind::Namespace, "", NAMESPACE).is_some() {
        return;
    }
    let namespace = json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": NAMESPACE,
            "uid": meta::new_uid(),
            "creationTimestamp": meta::now(),
            "labels": {"kubernetes.io/metadata.name": NAMESPACE},
        },
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    });
    let _ = state.store.create(Kind::Namespace, namespace);
}

/// The exporter pod the DaemonSet makes for `node`: bound to it, tolerating every taint. The
/// simulated runtime keeps its container running and silent (`SIM_STALL_AFTER=0`); what it
/// serves is answered by the pod proxy.
fn exporter_pod(node: &str, daemon_set_uid: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": format!("{DAEMON_SET}-{}", meta::random_suffix(5)),
            "namespace": NAMESPACE,
            "labels": {
                APP_LABEL: APP,
                "controller-revision-hash": "7c9d8f6b5d",
                "pod-template-generation": "1",
            },
            "ownerReferences": [{
                "apiVersion": "apps/v1",
                "kind": "DaemonSet",
                "name": DAEMON_SET,
                "uid": daemon_set_uid,
                "controller": true,
                "blockOwnerDeletion": true,
            }],
        },
        "spec": {
            "nodeName": node,
            "containers": [{
                "name": "dcgm-exporter",
                "image": IMAGE,
                "ports": [{"name": "metrics", "containerPort": PORT, "protocol": "TCP"}],
                "env": [{"name": "SIM_STALL_AFTER", "value": "0"}],
            }],
            "tolerations": [{"operator": "Exists"}],
        },
    })
}

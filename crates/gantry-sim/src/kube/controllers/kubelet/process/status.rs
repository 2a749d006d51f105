//! A process container's entry in the pod's status, and the pod's Ready conditions that follow
//! from every container's `ready`, as the kubelet's status manager writes them.

use serde_json::{Value, json};

use crate::kube::controllers::kubelet::context::PodCtx;
use crate::kube::pod_status::{ContainerView, set_condition};

/// Writes the container's whole entry; the pod is Running once a container runs.
pub fn put(ctx: &PodCtx, index: usize, view: &ContainerView) {
    let running = view.state.get("running").is_some();
    ctx.update(|p| {
        if let Some(slot) = slot(p, index) {
            *slot = view.to_json();
        }
        if running {
            p["status"]["phase"] = json!("Running");
        }
        readiness_conditions(p);
    });
}

/// The container's readiness, as a readiness probe (or its absence) decides it.
pub fn set_ready(ctx: &PodCtx, index: usize, ready: bool) {
    ctx.update(|p| {
        let still_running = slot(p, index).is_some_and(|c| c.pointer("/state/running").is_some());
        if let Some(c) = slot(p, index).filter(|_| still_running) {
            c["ready"] = json!(ready);
        }
        readiness_conditions(p);
    });
}

/// The container has started, as its startup probe decides it; with `ready`, it is ready too
/// (it has no readiness probe to pass), in the same write.
pub fn set_started(ctx: &PodCtx, index: usize, ready: bool) {
    ctx.update(|p| {
        if let Some(c) = slot(p, index) {
            c["started"] = json!(true);
            if ready {
                c["ready"] = json!(true);
            }
        }
        readiness_conditions(p);
    });
}

fn slot(pod: &mut Value, index: usize) -> Option<&mut Value> {
    pod["status"]["containerStatuses"]
        .as_array_mut()
        .and_then(|list| list.get_mut(index))
}

/// `Ready` and `ContainersReady`: true when every container is ready, else false naming the
/// containers that are not.
fn readiness_conditions(pod: &mut Value) {
    let unready: Vec<String> = pod["status"]["containerStatuses"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["ready"] != true)
        .filter_map(|c| c["name"].as_str().map(String::from))
        .collect();
    if unready.is_empty() {
        set_condition(pod, "Ready", true, None, None);
        set_condition(pod, "ContainersReady", true, None, None);
    } else {
        let message = format!("containers with unready status: [{}]", unready.join(" "));
        set_condition(
            pod,
            "Ready",
            false,
            Some("ContainersNotReady"),
            Some(&message),
        );
        set_condition(
            pod,
            "ContainersReady",
            false,
            Some("ContainersNotReady"),
            Some(&message),
        );
    }
}

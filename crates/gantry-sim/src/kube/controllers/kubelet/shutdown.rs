//! A pod on a node that is shutting down (`kube::node_shutdown`), as the kubelet's shutdown
//! manager kills it: its running containers get SIGTERM and the training process exits at once
//! (143, as on any stop), a container that never started is reported failed (137,
//! `ContainerStatusUnknown`), and the pod ends Failed with the manager's reason and message and a
//! `DisruptionTarget` condition, so a Job's pod failure policy can tell a reclaimed node from a
//! failed program. A pod that reaches such a node is rejected instead, as the kubelet's
//! admission rejects it.

use serde_json::{Value, json};

use super::context::PodCtx;
use super::is_terminal;
use crate::kube::events::EventType;
use crate::kube::meta;
use crate::kube::node_shutdown::{
    self, DISRUPTION_REASON, POD_MESSAGE, POD_REASON, REJECT_MESSAGE, REJECT_REASON,
};
use crate::kube::pod_status::set_condition;
use crate::kube::resources::Kind;

/// Whether the pod's task stopped because its node shuts down (and not for a delete).
pub(super) fn stopped_by_shutdown(ctx: &PodCtx) -> bool {
    ctx.get().is_some_and(|pod| {
        !meta::is_deleting(&pod) && node_shutdown::pod_node_is_shutting_down(&ctx.state, &pod)
    })
}

/// Kills the pod for the node's shutdown and reports it as the kubelet does.
pub(super) fn terminate(ctx: &PodCtx) {
    let Some(pod) = ctx.get() else { return };
    if is_terminal(&pod) {
        return;
    }
    let running: Vec<String> = pod
        .pointer("/status/containerStatuses")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|c| c.pointer("/state/running").is_some())
        .filter_map(|c| c["name"].as_str().map(String::from))
        .collect();
    for name in &running {
        ctx.event(
            EventType::Normal,
            "Killing",
            &format!("Stopping container {name}"),
            "kubelet",
        );
    }
    ctx.update(|p| {
        let now = meta::now();
        for c in p["status"]["containerStatuses"]
            .as_array_mut()
            .into_iter()
            .flatten()
        {
            if c.pointer("/state/terminated").is_some() {
                continue;
            }
            c["state"] = match c.pointer("/state/running/startedAt").cloned() {
                Some(started) => json!({"terminated": {"exitCode": 143, "reason": "Error",
                    "startedAt": started, "finishedAt": now, "containerID": c["containerID"]}}),
                // Never started (still pulling its image): the status manager's TerminatePod
                // reports it failed, as it cannot know otherwise.
                None => json!({"terminated": {"exitCode": 137, "reason": "ContainerStatusUnknown",
                    "message": "The container could not be located when the pod was terminated"}}),
            };
            c["ready"] = json!(false);
            c["started"] = json!(false);
        }
        p["status"]["phase"] = json!("Failed");
        p["status"]["reason"] = json!(POD_REASON);
        p["status"]["message"] = json!(POD_MESSAGE);
        set_condition(
            p,
            "DisruptionTarget",
            true,
            Some(DISRUPTION_REASON),
            Some(POD_MESSAGE),
        );
        set_condition(p, "Ready", false, Some("PodFailed"), None);
        set_condition(p, "ContainersReady", false, Some("PodFailed"), None);
        set_condition(p, "PodReadyToStartContainers", false, None, None);
    });
}

/// Rejects a pod placed on `node` when the node shuts down; whether it did.
pub(super) fn reject_if_shutting_down(ctx: &PodCtx, node: &str) -> bool {
    let shutting_down = ctx
        .state
        .store
        .get(Kind::Node, "", node)
        .is_some_and(|n| node_shutdown::is_shutting_down(&n));
    if !shutting_down {
        return false;
    }
    ctx.event(EventType::Warning, REJECT_REASON, REJECT_MESSAGE, "kubelet");
    ctx.update(|p| {
        p["status"]["phase"] = json!("Failed");
        p["status"]["reason"] = json!(REJECT_REASON);
        p["status"]["message"] = json!(format!("Pod was rejected: {REJECT_MESSAGE}"));
    });
    true
}

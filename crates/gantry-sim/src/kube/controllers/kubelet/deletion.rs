//! A pod being deleted: its containers get SIGTERM (exit 143) and the pod is removed once
//! its grace period, capped at a simulated second, is over.

use std::time::Duration;

use serde_json::{Value, json};

use super::context::PodCtx;
use crate::kube::events::EventType;
use crate::kube::meta;
use crate::kube::pod_status::set_condition;
use crate::kube::resources::Kind;

/// A delete arrived: stop the containers, then remove the pod after its grace period.
pub(super) async fn stop_for_deletion(ctx: &PodCtx) {
    if ctx.state.stop.is_cancelled() {
        return;
    }
    let Some(pod) = ctx.get() else { return };
    let grace = pod
        .pointer("/metadata/deletionGracePeriodSeconds")
        .and_then(Value::as_u64)
        .unwrap_or(30);
    let was_running = pod.pointer("/status/phase").and_then(Value::as_str) == Some("Running");
    if was_running {
        // A process container reported its own stop (it took its grace period to end).
        let still_running = pod
            .pointer("/status/containerStatuses")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|c| c.pointer("/state/running").is_some());
        if let Some(container) = still_running {
            ctx.event(
                EventType::Normal,
                "Killing",
                &format!(
                    "Stopping container {}",
                    container["name"].as_str().unwrap_or_default()
                ),
                "kubelet",
            );
        }
        ctx.update(|p| {
            if let Some(list) = p["status"]["containerStatuses"].as_array_mut() {
                for c in list {
                    if let Some(started) = c.pointer("/state/running/startedAt").cloned() {
                        c["state"] = json!({"terminated": {"exitCode": 143, "reason": "Error", "startedAt": started, "finishedAt": meta::now()}});
                        c["ready"] = json!(false);
                        c["started"] = json!(false);
                    }
                }
            }
            p["status"]["phase"] = json!("Failed");
            set_condition(p, "Ready", false, Some("PodFailed"), None);
        });
    }
    // The training process exits on SIGTERM at once; grace only bounds it.
    let wall = ctx
        .state
        .shared
        .clock
        .scaled(Duration::from_secs(grace.min(1)));
    if !wall.is_zero() {
        tokio::time::sleep(wall).await;
    }
    if ctx.get().is_some() {
        ctx.state.store.remove(Kind::Pod, &ctx.ns, &ctx.name);
    }
}

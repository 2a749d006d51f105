//! Waiting for a node: the scheduler is asked again whenever capacity is freed, and at least
//! every ten simulated seconds, reporting `FailedScheduling` meanwhile as kube-scheduler does.

use std::time::Duration;

use serde_json::{Value, json};

use super::MIN_RETRY_WAIT;
use super::context::PodCtx;
use crate::kube::events::EventType;
use crate::kube::pod_status::set_condition;

/// Places the pod (or keeps the node it was created on). None when stopped first.
pub(super) async fn schedule(ctx: &PodCtx) -> Option<String> {
    loop {
        let pod = ctx.get()?;
        if let Some(node) = pod
            .pointer("/spec/nodeName")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
        {
            return Some(node.to_string());
        }
        let freed = ctx.state.scheduler.freed.notified();
        match ctx.state.scheduler.place(&ctx.state.store, &pod) {
            Ok(node) => {
                ctx.update(|p| {
                    p["spec"]["nodeName"] = json!(node);
                    set_condition(p, "PodScheduled", true, None, None);
                });
                ctx.event(
                    EventType::Normal,
                    "Scheduled",
                    &format!("Successfully assigned {}/{} to {node}", ctx.ns, ctx.name),
                    "default-scheduler",
                );
                return Some(node);
            }
            Err(why) => {
                ctx.update(|p| {
                    set_condition(p, "PodScheduled", false, Some("Unschedulable"), Some(&why))
                });
                ctx.event(
                    EventType::Warning,
                    "FailedScheduling",
                    &why,
                    "default-scheduler",
                );
                let retry = ctx
                    .state
                    .shared
                    .clock
                    .scaled(Duration::from_secs(10))
                    .max(MIN_RETRY_WAIT);
                tokio::select! {
                    _ = ctx.cancel.cancelled() => return None,
                    _ = freed => {}
                    _ = tokio::time::sleep(retry) => {}
                }
            }
        }
    }
}

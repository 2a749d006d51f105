//! Scale-down: a node of an autoscaled pool that has had no pods (none bound to it that has not
//! ended, a DaemonSet's aside: GKE's DCGM exporter runs on every GPU node) for ten simulated minutes
//! (`--scale-down-unneeded-time`) is tainted `ToBeDeletedByClusterAutoscaler`, gets a `ScaleDown`
//! event, and is drained and deleted as GKE deletes a node; newest first, never below the
//! group's minimum, and not within ten simulated minutes of a scale-up
//! (`--scale-down-delay-after-add`).

use std::collections::HashSet;

use serde_json::{Value, json};
use tokio::time::Instant;

use super::groups::{self, View};
use super::messages::SCALE_DOWN;
use super::{Ctx, Memory};
use crate::kube::controllers::kubelet::is_terminal;
use crate::kube::drain;
use crate::kube::events::EventType;
use crate::kube::nodes::TO_BE_DELETED_TAINT;
use crate::kube::resources::Kind;

const UNNEEDED_SECS: f64 = 600.0;
const DELAY_AFTER_ADD_SECS: f64 = 600.0;

pub(super) fn run(ctx: &Ctx, view: &View, memory: &mut Memory) {
    let now = Instant::now();
    let (pods, _) = ctx.state.store.list(Kind::Pod, None, |p| {
        !is_terminal(p) && !crate::kube::daemon_sets::owned_by_daemon_set(p)
    });
    let busy: HashSet<&str> = pods
        .iter()
        .filter_map(|p| p.pointer("/spec/nodeName").and_then(Value::as_str))
        .collect();
    let known: HashSet<&str> = view
        .groups
        .iter()
        .flat_map(|g| g.nodes.iter().map(String::as_str))
        .collect();
    memory
        .idle_since
        .retain(|n, _| known.contains(n.as_str()) && !busy.contains(n.as_str()));
    memory.removing.retain(|n| known.contains(n.as_str()));
    for node in &known {
        if !busy.contains(node) {
            memory.idle_since.entry(node.to_string()).or_insert(now);
        }
    }
    let after_add = memory
        .last_scale_up
        .is_some_and(|t| now.duration_since(t) < ctx.scaled(DELAY_AFTER_ADD_SECS));
    if view.busy || after_add {
        return;
    }
    let unneeded = ctx.scaled(UNNEEDED_SECS);
    for group in &view.groups {
        let marked = group
            .nodes
            .iter()
            .filter(|n| memory.removing.contains(*n))
            .count() as u64;
        let mut size = group.target().saturating_sub(marked);
        for node in group.nodes.iter().rev() {
            if size <= group.min {
                break;
            }
            let idle_long = memory
                .idle_since
                .get(node)
                .is_some_and(|since| now.duration_since(*since) >= unneeded);
            if !idle_long || memory.removing.contains(node) {
                continue;
            }
            memory.removing.insert(node.clone());
            size -= 1;
            remove(ctx, &group.pool.name, node);
        }
    }
}

/// Marks the node, as the autoscaler's actuator does, then drains and deletes it.
fn remove(ctx: &Ctx, pool: &str, node: &str) {
    let marked = ctx.state.store.update(Kind::Node, "", node, |n| {
        let mut taints = n["spec"]["taints"].as_array().cloned().unwrap_or_default();
        if !taints.iter().any(|t| t["key"] == TO_BE_DELETED_TAINT) {
            let since = jiff::Timestamp::now().as_second().to_string();
            taints
                .push(json!({"key": TO_BE_DELETED_TAINT, "value": since, "effect": "NoSchedule"}));
        }
        n["spec"]["taints"] = Value::Array(taints);
    });
    if let Ok(n) = marked {
        ctx.event(&n, EventType::Normal, "ScaleDown", SCALE_DOWN);
    }
    let (ctx, pool, node) = (ctx.clone(), pool.to_string(), node.to_string());
    tokio::spawn(async move {
        drain::remove_node(&ctx.state, &node).await;
        let mut registry = ctx.api.registry();
        if let Some(record) = registry.find_mut(&ctx.key) {
            groups::sync_size(record, &ctx.state, &pool);
        }
    });
}

//! Carrying out a scale-up: the pods are told, the group's target grows at once (its instances
//! count against the project's quotas while they boot), and a task waits for the instances:
//! they register as Ready nodes after they boot, or, when Compute Engine refuses them, the
//! group shrinks back, the pods get `FailedScaleUp` and the group backs off (5 simulated
//! minutes, doubling up to 30, as the autoscaler's node group backoff does).

use std::sync::Arc;

use serde_json::Value;
use tokio::time::Instant;

use super::groups::{self, Group, View};
use super::messages::{self, ScaleUpInfo};
use super::plan::{self, ScaleUp};
use super::{Backoff, Ctx, Memory};
use crate::gke::capacity::{self, Shortage};
use crate::gke::clusters::Booting;
use crate::kube::controllers::kubelet::is_terminal;
use crate::kube::events::EventType;
use crate::kube::resources::Kind;
use crate::kube::{meta, nodes};

/// How long a new instance takes to boot and register its node, simulated.
const BOOT_SECS: f64 = 90.0;
/// How long until the autoscaler sees Compute Engine refused the instances, simulated.
const REFUSAL_SECS: f64 = 20.0;
/// A pod is told it triggers no scale-up at most this often, simulated.
const NOT_TRIGGERED_EVERY_SECS: f64 = 30.0;
const FIRST_BACKOFF_SECS: f64 = 300.0;
const MAX_BACKOFF_SECS: f64 = 1800.0;

pub(super) fn run(ctx: &Ctx, view: &View, memory: &mut Memory) {
    let (pending, _) = ctx.state.store.list(Kind::Pod, None, is_unschedulable);
    memory
        .told
        .retain(|uid, _| pending.iter().any(|p| meta::uid(p) == uid));
    if pending.is_empty() {
        return;
    }
    let now = Instant::now();
    let plan = {
        let backoff = memory.backoff.lock().unwrap_or_else(|p| p.into_inner());
        plan::decide(&view.groups, pending, |g| {
            backoff.get(&g.id).is_some_and(|b| b.until > now)
        })
    };
    if let Some(up) = plan.scale_up {
        memory.last_scale_up = Some(now);
        if let Some(group) = view.groups.get(up.group) {
            grow(ctx, group, up, memory.backoff.clone());
        }
        // As the autoscaler, no pod is told it triggered nothing in a loop that scaled up.
        return;
    }
    let quiet = ctx.scaled(NOT_TRIGGERED_EVERY_SECS);
    for (pod, reasons) in plan.unhelped {
        let uid = meta::uid(&pod).to_string();
        if memory
            .told
            .get(&uid)
            .is_some_and(|t| now.duration_since(*t) < quiet)
        {
            continue;
        }
        memory.told.insert(uid, now);
        let message = messages::not_triggered(&reasons);
        ctx.event(&pod, EventType::Normal, "NotTriggerScaleUp", &message);
    }
}

/// Bound to no node, and marked so by kube-scheduler.
fn is_unschedulable(pod: &Value) -> bool {
    let unbound = pod
        .pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty);
    let marked = pod
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|conditions| {
            conditions.iter().any(|c| {
                c["type"] == "PodScheduled"
                    && c["status"] == "False"
                    && c["reason"] == "Unschedulable"
            })
        });
    unbound && marked && !meta::is_deleting(pod) && !is_terminal(pod)
}

type Backoffs = Arc<std::sync::Mutex<std::collections::HashMap<String, Backoff>>>;

fn grow(ctx: &Ctx, group: &Group, up: ScaleUp, backoff: Backoffs) {
    let current = group.target();
    let info = ScaleUpInfo {
        group: group.id.clone(),
        current,
        new: current + up.new_nodes,
        max: group.max,
    };
    let message = messages::triggered(&[info]);
    for pod in &up.pods {
        ctx.event(pod, EventType::Normal, "TriggeredScaleUp", &message);
    }
    let refused = capacity::check(&ctx.api, &ctx.state, &group.pool, up.new_nodes).err();
    {
        let mut registry = ctx.api.registry();
        if let Some(record) = registry.find_mut(&ctx.key) {
            let gpus = capacity::gpus_per_node(&group.pool);
            for _ in 0..up.new_nodes {
                record.booting.push(Booting {
                    pool: group.pool.name.clone(),
                    zone: group.zone.clone(),
                    gpus,
                });
            }
            groups::sync_size(record, &ctx.state, &group.pool.name);
        }
    }
    let pods = up.pods.iter().map(|p| identity(p)).collect();
    tokio::spawn(boot(
        ctx.clone(),
        group.clone(),
        up.new_nodes,
        pods,
        refused,
        backoff,
    ));
}

/// A pod's namespace, name and uid: a pod recreated under its name is another pod.
fn identity(pod: &Value) -> (String, String, String) {
    (
        meta::namespace(pod).to_string(),
        meta::name(pod).to_string(),
        meta::uid(pod).to_string(),
    )
}

async fn boot(
    ctx: Ctx,
    group: Group,
    count: u64,
    pods: Vec<(String, String, String)>,
    refused: Option<Shortage>,
    backoff: Backoffs,
) {
    let wait = if refused.is_some() {
        REFUSAL_SECS
    } else {
        BOOT_SECS
    };
    tokio::select! {
        _ = ctx.state.stop.cancelled() => return,
        _ = tokio::time::sleep(ctx.scaled(wait)) => {}
    }
    if refused.is_none() {
        for _ in 0..count {
            nodes::add(&ctx.state, &group.pool, &group.zone);
        }
    }
    {
        let mut registry = ctx.api.registry();
        if let Some(record) = registry.find_mut(&ctx.key) {
            for _ in 0..count {
                let at = record
                    .booting
                    .iter()
                    .position(|b| b.pool == group.pool.name && b.zone == group.zone);
                if let Some(at) = at {
                    record.booting.remove(at);
                }
            }
            groups::sync_size(record, &ctx.state, &group.pool.name);
        }
    }
    let Some(shortage) = refused else { return };
    back_off(&ctx, &group, &backoff);
    let message = messages::failed_scale_up(&[&group.zone], shortage.autoscaler_reason());
    for (ns, name, uid) in pods {
        let pod = ctx.state.store.get(Kind::Pod, &ns, &name);
        if let Some(pod) = pod.filter(|p| meta::uid(p) == uid && is_unschedulable(p)) {
            ctx.event(&pod, EventType::Warning, "FailedScaleUp", &message);
        }
    }
}

fn back_off(ctx: &Ctx, group: &Group, backoff: &Backoffs) {
    let mut backoff = backoff.lock().unwrap_or_else(|p| p.into_inner());
    let secs = backoff
        .get(&group.id)
        .map_or(FIRST_BACKOFF_SECS, |b| b.next_secs);
    backoff.insert(
        group.id.clone(),
        Backoff {
            until: Instant::now() + ctx.scaled(secs),
            next_secs: (secs * 2.0).min(MAX_BACKOFF_SECS),
        },
    );
}

//! The `preempt` fault: Compute Engine reclaims Spot and preemptible VMs as it does when it
//! needs their capacity back. Every period of the fault (wall-clock, as every fault's period),
//! one node labelled `cloud.google.com/gke-spot` or `cloud.google.com/gke-preemptible` that runs
//! a training pod (a Running pod of a Job) gets the preemption notice, as many times in all as
//! the fault says. GKE taints the node `cloud.google.com/impending-node-termination:NoSchedule`
//! and its kubelet shuts down gracefully (`kube::node_shutdown`): the node goes NotReady and its
//! pods end Failed with a `DisruptionTarget` condition. Thirty simulated seconds after the
//! notice (GKE's grace for a Spot VM) the VM stops and its Node is deleted; the pod garbage
//! collector takes the node's pods after its 40 s quarantine; the pool's managed instance group
//! recreates the instance under the same name, which registers as a new Node a simulated minute
//! after the stop. Meanwhile the instance counts as booting (quotas, the autoscaler's group
//! size), so the pool keeps its size and pending pods schedule on the new node. While an
//! operation changes the cluster, no node is reclaimed.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::GkeApi;
use super::capacity;
use super::clusters::{Booting, ClusterKey};
use crate::kube::cluster::{ClusterState, NodePoolSpec};
use crate::kube::resources::Kind;
use crate::kube::{meta, node_shutdown, nodes, pod_gc};

/// The taint GKE puts on a node whose VM is about to be reclaimed.
pub const IMPENDING_TERMINATION_TAINT: &str = "cloud.google.com/impending-node-termination";
/// From the notice to the VM's stop: GKE's graceful shutdown period for Spot VMs (simulated).
const SHUTDOWN_SECS: f64 = 30.0;
/// From the stop to the recreated instance's node registering (simulated).
const RECREATE_SECS: f64 = 60.0;
/// The least real time between the notice and the stop, so that a time scale near 0 still lets
/// the node's pods be seen Failed before the node goes.
const MIN_SHUTDOWN: Duration = Duration::from_millis(500);
/// How often the fault is looked for while it is not set.
const IDLE_POLL: Duration = Duration::from_millis(100);
const SPOT_LABELS: &[&str] = &[
    "cloud.google.com/gke-spot",
    "cloud.google.com/gke-preemptible",
];

#[derive(Clone)]
struct Ctx {
    api: Arc<GkeApi>,
    key: ClusterKey,
    state: Arc<ClusterState>,
}

impl Ctx {
    /// Sleeps a simulated span (at least `floor` of real time); false when the cluster or the
    /// simulator stops first.
    async fn sleep(&self, simulated_secs: f64, floor: Duration) -> bool {
        let wall = self.api.shared.clock.scaled_secs(simulated_secs).max(floor);
        self.sleep_wall(wall).await
    }

    async fn sleep_wall(&self, wall: Duration) -> bool {
        tokio::select! {
            _ = self.state.stop.cancelled() => false,
            _ = self.api.stop.cancelled() => false,
            _ = tokio::time::sleep(wall) => true,
        }
    }

    /// Whether the cluster still runs this API server; and whether an operation changes it.
    fn standing(&self) -> Option<bool> {
        let registry = self.api.registry();
        let record = registry.clusters.get(&self.key)?;
        let same = record
            .runtime
            .as_ref()
            .is_some_and(|r| Arc::ptr_eq(r.state(), &self.state));
        same.then_some(record.busy_with.is_some())
    }
}

/// Starts reclaiming the Spot nodes of a cluster whose API server just started, while the
/// `preempt` fault is set.
pub fn start(api: Arc<GkeApi>, key: ClusterKey, state: Arc<ClusterState>) {
    tokio::spawn(run(Ctx { api, key, state }));
}

async fn run(ctx: Ctx) {
    loop {
        let faults = &ctx.api.shared.faults;
        let period = faults.preempt().map_or(IDLE_POLL, |(every, _)| every);
        if !ctx.sleep_wall(period).await {
            return;
        }
        let Some((_, count)) = faults.preempt() else {
            continue;
        };
        match ctx.standing() {
            None => return,
            Some(true) => continue,
            Some(false) => {}
        }
        let Some(node) = reclaimable(&ctx.state) else {
            continue;
        };
        if faults.fire_within("preempt", count) {
            reclaim(&ctx, &node);
        }
    }
}

/// The first Spot node, by name, that runs a training pod and has had no notice yet.
fn reclaimable(state: &ClusterState) -> Option<Arc<Value>> {
    let (mut spot, _) = state.store.list(Kind::Node, None, |n| {
        SPOT_LABELS
            .iter()
            .any(|l| meta::label(n, l) == Some("true"))
            && !has_taint(n, IMPENDING_TERMINATION_TAINT)
    });
    spot.sort_by(|a, b| meta::name(a).cmp(meta::name(b)));
    spot.into_iter().find(|node| {
        pod_gc::pods_on(state, meta::name(node))
            .iter()
            .any(|p| is_training(p))
    })
}

/// A Running pod that a Job owns.
fn is_training(pod: &Value) -> bool {
    let owned_by_job = pod
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .is_some_and(|owners| owners.iter().any(|o| o["kind"] == "Job"));
    owned_by_job && pod.pointer("/status/phase").and_then(Value::as_str) == Some("Running")
}

fn has_taint(node: &Value, key: &str) -> bool {
    node.pointer("/spec/taints")
        .and_then(Value::as_array)
        .is_some_and(|taints| taints.iter().any(|t| t["key"] == key))
}

/// The preemption notice: GKE's taint, the kubelet's graceful shutdown, and in the background
/// the VM's stop and its recreation.
fn reclaim(ctx: &Ctx, node: &Value) {
    let name = meta::name(node).to_string();
    let pool = meta::label(node, nodes::POOL_LABEL)
        .unwrap_or_default()
        .to_string();
    let zone = meta::label(node, "topology.kubernetes.io/zone")
        .unwrap_or_default()
        .to_string();
    tracing::info!(node = %name, "simulated Spot VM preemption");
    let _ = ctx.state.store.update(Kind::Node, "", &name, |n| {
        let mut taints = n["spec"]["taints"].as_array().cloned().unwrap_or_default();
        taints.push(json!({"key": IMPENDING_TERMINATION_TAINT, "effect": "NoSchedule"}));
        n["spec"]["taints"] = Value::Array(taints);
    });
    node_shutdown::begin(&ctx.state, &name);
    tokio::spawn(stop_and_recreate(ctx.clone(), name, pool, zone));
}

async fn stop_and_recreate(ctx: Ctx, node: String, pool: String, zone: String) {
    if !ctx.sleep(SHUTDOWN_SECS, MIN_SHUTDOWN).await {
        return;
    }
    nodes::remove(&ctx.state, &node);
    let collected = tokio::spawn(collect_orphans(ctx.clone(), node.clone()));
    let Some(spec) = recreate(&ctx, &pool, &zone).await else {
        return;
    };
    // The old node's pods go before a node of its name registers again.
    let _ = collected.await;
    if pool_spec(&ctx, &pool).is_some_and(|p| p.zones.contains(&zone)) {
        nodes::add_named(&ctx.state, &spec, &zone, &node);
    }
    booting(&ctx, &spec, &zone, false);
}

/// The pod garbage collector, once its quarantine after the node went is over.
async fn collect_orphans(ctx: Ctx, node: String) {
    if ctx
        .sleep(pod_gc::QUARANTINE.as_secs_f64(), Duration::ZERO)
        .await
    {
        pod_gc::collect_orphans(&ctx.state, &node);
    }
}

/// The instance group recreates the instance as soon as Compute Engine grants one (asking again
/// after a refusal), and it boots. Returns the pool once the instance is up, still counted as
/// booting; None when the pool, the cluster or the simulator goes first.
async fn recreate(ctx: &Ctx, pool: &str, zone: &str) -> Option<NodePoolSpec> {
    loop {
        let spec = pool_spec(ctx, pool)?;
        let granted = capacity::check(&ctx.api, &ctx.state, &spec, 1).is_ok();
        if granted {
            booting(ctx, &spec, zone, true);
        }
        if !ctx.sleep(RECREATE_SECS, Duration::ZERO).await {
            if granted {
                booting(ctx, &spec, zone, false);
            }
            return None;
        }
        if granted {
            return Some(spec);
        }
    }
}

/// The pool as GKE has it now; None once it or the cluster is gone.
fn pool_spec(ctx: &Ctx, pool: &str) -> Option<NodePoolSpec> {
    let registry = ctx.api.registry();
    let record = registry.clusters.get(&ctx.key)?;
    record
        .spec
        .node_pools
        .iter()
        .find(|p| p.name == pool)
        .cloned()
}

/// Counts the recreated instance as booting, or no longer.
fn booting(ctx: &Ctx, pool: &NodePoolSpec, zone: &str, on: bool) {
    let mut registry = ctx.api.registry();
    let Some(record) = registry.find_mut(&ctx.key) else {
        return;
    };
    if on {
        record.booting.push(Booting {
            pool: pool.name.clone(),
            zone: zone.to_string(),
            gpus: capacity::gpus_per_node(pool),
        });
    } else if let Some(at) = record
        .booting
        .iter()
        .position(|b| b.pool == pool.name && b.zone == zone)
    {
        record.booting.remove(at);
    }
}

#[cfg(test)]
#[path = "preemption_tests.rs"]
mod tests;

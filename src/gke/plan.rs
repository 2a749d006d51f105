//! What `gantry up` would do: the config's cluster against the one GKE reports, field by field,
//! each difference classified by the Container API request that could make it so. Pure: the
//! command reads the cluster; this only compares, so every class of change is testable without
//! a cloud.
//!
//! How each difference can be made (the Container API's update requests):
//! - a pool's node count: `SetNodePoolSize`, in place;
//! - a pool's autoscaling (on, off, its bounds): `SetNodePoolAutoscaling`, in place;
//! - a pool's machine type, disk type, disk size, accelerators: `UpdateNodePool` takes each, and
//!   recreates the pool's nodes to apply it;
//! - a pool the config has and the cluster lacks: `CreateNodePool`;
//! - a pool's spot setting: `UpdateNodePool` cannot change it, so it takes a new pool;
//! - labels the config names: `SetLabels` (the cluster's resource labels), in place;
//! - the location: nothing moves a cluster, it takes a new one.
//!
//! A pool Gantry made as a spot pool's on-demand fallback (`gke::fallback`) is its own, not
//! drift: it is kept while an unfinished attempt targets it, and removed (`DeleteNodePool`, said
//! as the fallback it is) once none does.
//!
//! Gantry's own `managed-by` label is not drift: a cluster made by hand without it is adopted as
//! it is. Labels the config does not name are left alone (other tools set theirs).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Value, json};

use super::ClusterSummary;
use super::cost::{configured_shape, current_shape, per_hour, zones_of};
use super::summary::PoolSummary;
use crate::config::ClusterConfig;
use crate::pricing::{ClusterShape, Estimate};

/// What applying the plan would do to the cluster as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    None,
    Create,
    Update,
}

/// How a change can be made, as the Container API allows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum How {
    /// The cluster and its nodes stay (`SetNodePoolSize`, `SetLabels`, `DeleteNodePool`).
    InPlace,
    /// `UpdateNodePool`: the pool stays, its nodes are replaced (their pods rescheduled).
    RecreateNodes,
    /// `CreateNodePool`.
    NewPool,
    /// Not possible on this cluster: it takes a new one.
    NewCluster,
}

impl How {
    /// "(in place)", as the text plan says it.
    pub fn describe(self) -> &'static str {
        match self {
            How::InPlace => "in place",
            How::RecreateNodes => "nodes recreated",
            How::NewPool => "new node pool",
            How::NewCluster => "needs a new cluster",
        }
    }
}

/// One difference between the cluster and the config.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// The node pool, or None for the cluster itself.
    pub pool: Option<String>,
    /// `nodeCount`, `machineType`, `diskType`, `diskSizeGb`, `accelerators`, `spot`,
    /// `nodePool` (the pool as a whole), `labels.KEY`, `location`, `cluster`.
    pub field: String,
    /// None (`null`) where there is none (a pool or label not there yet).
    pub current: Value,
    pub desired: Value,
    pub how: How,
}

/// The whole plan, and what the cluster costs before and after it.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub action: Action,
    pub changes: Vec<Change>,
    /// What the cluster is now; None before it exists.
    pub current: Option<ClusterShape>,
    pub desired: ClusterShape,
    pub cost_now: Option<Estimate>,
    pub cost_after: Estimate,
    /// The cluster's on-demand fallback pools, each kept (a run uses it) or removed.
    pub fallbacks: Vec<Fallback>,
}

/// A spot pool's on-demand fallback that Gantry made (`gke::fallback`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Fallback {
    pub pool: String,
    /// The spot pool it stands in for.
    pub of: String,
    /// An unfinished attempt targets it: it stays. Else the plan removes it.
    pub in_use: bool,
}

/// The cluster as GKE reports it: its summary and its resource labels.
#[derive(Debug, Clone, Copy)]
pub struct Current<'a> {
    pub summary: &'a ClusterSummary,
    pub labels: &'a BTreeMap<String, String>,
}

/// The plan for the config's cluster in `location`, given what is there (None: no cluster of
/// that name in that location), with no run using a fallback pool.
pub fn plan(config: &ClusterConfig, location: &str, current: Option<Current<'_>>) -> Plan {
    plan_keeping(config, location, current, &[])
}

/// The plan, keeping the fallback pools named in `in_use` (those an unfinished attempt
/// targets).
pub fn plan_keeping(
    config: &ClusterConfig,
    location: &str,
    current: Option<Current<'_>>,
    in_use: &[String],
) -> Plan {
    let desired = configured_shape(config, location);
    let cost_after = per_hour(&desired);
    let Some(current) = current else {
        return Plan {
            action: Action::Create,
            changes: vec![Change {
                pool: None,
                field: "cluster".into(),
                current: Value::Null,
                desired: json!(config.name),
                how: How::NewCluster,
            }],
            current: None,
            desired,
            cost_now: None,
            cost_after,
            fallbacks: Vec::new(),
        };
    };
    let mut changes = Vec::new();
    let summary = current.summary;
    if summary.location != location {
        changes.push(cluster_change(
            "location",
            json!(summary.location),
            json!(location),
            How::NewCluster,
        ));
    }
    for (key, value) in &config.labels {
        let now = current.labels.get(key);
        if now != Some(value) {
            changes.push(cluster_change(
                &format!("labels.{key}"),
                now.map_or(Value::Null, |v| json!(v)),
                json!(value),
                How::InPlace,
            ));
        }
    }
    let zones = cluster_zones(summary, location);
    for wanted in wanted_pools(config) {
        match summary.node_pools.iter().find(|p| p.name == wanted.name) {
            Some(pool) => changes.extend(pool_changes(&wanted, pool, zones)),
            None => changes.push(Change {
                pool: Some(wanted.name.clone()),
                field: "nodePool".into(),
                current: Value::Null,
                desired: json!(wanted.describe()),
                how: How::NewPool,
            }),
        }
    }
    // A pool the config does not name would go with `DeleteNodePool`, one request on the
    // cluster as it is: in place as the API sees it, though its nodes and their pods go with
    // it. It is always listed as a change of its own, so nothing is deleted unsaid.
    let mut fallbacks = Vec::new();
    for pool in &summary.node_pools {
        if wanted_pools(config).iter().any(|w| w.name == pool.name) {
            continue;
        }
        if let Some(of) = &pool.fallback_for {
            let in_use = in_use.contains(&pool.name);
            fallbacks.push(Fallback {
                pool: pool.name.clone(),
                of: of.clone(),
                in_use,
            });
            if in_use {
                continue;
            }
        }
        changes.push(Change {
            pool: Some(pool.name.clone()),
            field: "nodePool".into(),
            current: json!(describe_pool(pool)),
            desired: Value::Null,
            how: How::InPlace,
        });
    }
    let shape = current_shape(summary);
    Plan {
        action: if changes.is_empty() {
            Action::None
        } else {
            Action::Update
        },
        changes,
        cost_now: Some(per_hour(&shape)),
        current: Some(shape),
        desired,
        cost_after,
        fallbacks,
    }
}

fn cluster_change(field: &str, current: Value, desired: Value, how: How) -> Change {
    Change {
        pool: None,
        field: field.into(),
        current,
        desired,
        how,
    }
}

/// The zones a cluster's nodes are in: those GKE names, else as many as its location implies.
fn cluster_zones(summary: &ClusterSummary, location: &str) -> u32 {
    match u32::try_from(summary.locations.len()) {
        Ok(n) if n > 0 => n,
        _ => zones_of(location),
    }
}

/// A node pool as the config wants it.
#[derive(Debug, Clone, PartialEq)]
struct WantedPool {
    name: String,
    machine_type: String,
    /// Per zone, as the config and `SetNodePoolSize` count them.
    node_count: u32,
    /// Per zone; None without autoscaling.
    autoscaling: Option<(u32, u32)>,
    disk_type: String,
    disk_size_gb: u32,
    /// `1 x nvidia-tesla-t4`, as [`PoolSummary::accelerator`] says it.
    accelerator: Option<String>,
    spot: bool,
}

impl WantedPool {
    fn describe(&self) -> String {
        let mut text = format!("{} × {}", self.node_count, self.machine_type);
        if let Some(gpu) = &self.accelerator {
            text.push_str(&format!(" with {gpu}"));
        }
        text
    }
}

fn wanted_pools(config: &ClusterConfig) -> Vec<WantedPool> {
    let mut pools = vec![WantedPool {
        name: config.node_pool.clone(),
        machine_type: config.machine_type.clone(),
        node_count: config.node_count,
        autoscaling: config
            .autoscaling
            .as_ref()
            .map(|a| (a.min_nodes, a.max_nodes)),
        disk_type: config.disk_type.clone(),
        disk_size_gb: config.disk_size_gb,
        accelerator: None,
        spot: config.spot,
    }];
    if let Some(gpu) = &config.gpu_pool {
        pools.push(WantedPool {
            name: gpu.name.clone(),
            machine_type: gpu.machine_type.clone(),
            node_count: gpu.node_count,
            autoscaling: gpu.autoscaling.as_ref().map(|a| (a.min_nodes, a.max_nodes)),
            disk_type: config.disk_type.clone(),
            disk_size_gb: config.disk_size_gb,
            accelerator: Some(format!(
                "{} x {}",
                gpu.accelerator_count, gpu.accelerator_type
            )),
            spot: gpu.spot,
        });
    }
    pools
}

fn describe_pool(pool: &PoolSummary) -> String {
    let mut text = format!("{} × {}", pool.node_count, pool.machine_type);
    if let Some(gpu) = &pool.accelerator {
        text.push_str(&format!(" with {gpu}"));
    }
    text
}

fn pool_changes(wanted: &WantedPool, pool: &PoolSummary, zones: u32) -> Vec<Change> {
    let mut changes = Vec::new();
    let mut add = |field: &str, current: Value, desired: Value, how: How| {
        changes.push(Change {
            pool: Some(wanted.name.clone()),
            field: field.into(),
            current,
            desired,
            how,
        });
    };
    let per_zone = pool.node_count.div_ceil(zones.max(1));
    // With autoscaling the autoscaler owns the count: any count within its bounds is the config's.
    let count_fits = match wanted.autoscaling {
        Some((min, max)) => (min..=max).contains(&per_zone),
        None => per_zone == wanted.node_count,
    };
    if !count_fits {
        add(
            "nodeCount",
            json!(per_zone),
            json!(wanted.node_count),
            How::InPlace,
        );
    }
    if pool.autoscaling != wanted.autoscaling {
        let bounds = |b: Option<(u32, u32)>| {
            b.map_or(
                Value::Null,
                |(min, max)| json!({"minNodes": min, "maxNodes": max}),
            )
        };
        add(
            "autoscaling",
            bounds(pool.autoscaling),
            bounds(wanted.autoscaling),
            How::InPlace,
        );
    }
    if pool.machine_type != wanted.machine_type {
        add(
            "machineType",
            json!(pool.machine_type),
            json!(wanted.machine_type),
            How::RecreateNodes,
        );
    }
    if pool.disk_type != wanted.disk_type {
        add(
            "diskType",
            json!(pool.disk_type),
            json!(wanted.disk_type),
            How::RecreateNodes,
        );
    }
    if pool.disk_size_gb != wanted.disk_size_gb {
        add(
            "diskSizeGb",
            json!(pool.disk_size_gb),
            json!(wanted.disk_size_gb),
            How::RecreateNodes,
        );
    }
    if pool.accelerator != wanted.accelerator {
        add(
            "accelerators",
            json!(pool.accelerator),
            json!(wanted.accelerator),
            How::RecreateNodes,
        );
    }
    if pool.spot != wanted.spot {
        add("spot", json!(pool.spot), json!(wanted.spot), How::NewPool);
    }
    changes
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;

//! The cluster as Gantry shows it: `gantry status --json`'s `cluster` object and the TUI's pane.

use std::collections::BTreeMap;

use google_cloud_container_v1::model::Cluster;
use serde::Serialize;

use super::{ClusterRef, ClusterStatus};

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterSummary {
    pub name: String,
    pub project: String,
    pub location: String,
    pub status: ClusterStatus,
    /// Why the status is what it is, when GKE says.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub status_message: String,
    /// Nodes now (all pools, all zones); 0 while none is up.
    pub node_count: u32,
    /// The first pool's machine type (the seed's `default-pool`).
    pub machine_type: String,
    /// The API server's address (`IP` or `IP:port`), empty until it has one.
    pub endpoint: String,
    /// The control plane's version.
    pub version: String,
    pub node_version: String,
    pub node_pools: Vec<PoolSummary>,
    /// The zones the nodes are in.
    pub locations: Vec<String>,
    /// When GKE created it; what the cost so far is counted from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub create_time: Option<jiff::Timestamp>,
    /// The cluster's resource labels, for the plan (labels the config names are drift when
    /// they differ). Not part of `status --json`.
    #[serde(skip)]
    pub labels: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolSummary {
    pub name: String,
    pub status: String,
    pub machine_type: String,
    /// Nodes per zone at creation.
    pub initial_node_count: i32,
    /// Nodes now, in all its zones (see [`pool_node_counts`]).
    pub node_count: u32,
    pub spot: bool,
    /// `1 x nvidia-tesla-t4`, as people read it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accelerator: Option<String>,
    /// The GPUs on each node, as GKE names them, for their price.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accelerator_type: Option<String>,
    #[serde(skip_serializing_if = "is_zero")]
    pub accelerator_count: u32,
    pub disk_type: String,
    pub disk_size_gb: u32,
    pub version: String,
    /// The autoscaler's bounds, nodes per zone, when it is on (for the plan).
    #[serde(skip)]
    pub autoscaling: Option<(u32, u32)>,
    /// The spot pool this one is Gantry's on-demand fallback for (its nodes' label
    /// `gantry.dev/fallback-for`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback_for: Option<String>,
}

/// A running pool of `nodes` × `machine_type` as GKE makes one by default (no GPUs, not spot,
/// 100 GB pd-balanced, no autoscaling): what the unit tests plan, price and idle against.
#[cfg(test)]
impl PoolSummary {
    pub(crate) fn running(name: &str, machine_type: &str, nodes: u32) -> Self {
        Self {
            name: name.into(),
            status: "RUNNING".into(),
            machine_type: machine_type.into(),
            initial_node_count: i32::try_from(nodes).unwrap_or(0),
            node_count: nodes,
            spot: false,
            accelerator: None,
            accelerator_type: None,
            accelerator_count: 0,
            disk_type: "pd-balanced".into(),
            disk_size_gb: 100,
            version: String::new(),
            autoscaling: None,
            fallback_for: None,
        }
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl ClusterSummary {
    pub fn from_cluster(target: &ClusterRef, c: &Cluster) -> Self {
        let pools: Vec<PoolSummary> = c
            .node_pools
            .iter()
            .map(|p| {
                let config = p.config.clone().unwrap_or_default();
                let gpu = config.accelerators.first();
                PoolSummary {
                    name: p.name.clone(),
                    status: p.status.name().unwrap_or("UNKNOWN").to_string(),
                    machine_type: config.machine_type.clone(),
                    initial_node_count: p.initial_node_count,
                    node_count: 0,
                    spot: config.spot || config.preemptible,
                    accelerator: gpu
                        .map(|a| format!("{} x {}", a.accelerator_count, a.accelerator_type)),
                    accelerator_type: gpu.map(|a| a.accelerator_type.clone()),
                    accelerator_count: gpu
                        .map_or(0, |a| u32::try_from(a.accelerator_count).unwrap_or(0)),
                    disk_type: config.disk_type.clone(),
                    disk_size_gb: u32::try_from(config.disk_size_gb).unwrap_or(0),
                    version: p.version.clone(),
                    autoscaling: p.autoscaling.as_ref().filter(|a| a.enabled).map(|a| {
                        (
                            u32::try_from(a.min_node_count).unwrap_or(0),
                            u32::try_from(a.max_node_count).unwrap_or(0),
                        )
                    }),
                    fallback_for: config.labels.get(super::fallback::FALLBACK_LABEL).cloned(),
                }
            })
            .collect();
        #[allow(deprecated)]
        let machine_type = pools
            .first()
            .map(|p| p.machine_type.clone())
            .or_else(|| c.node_config.as_ref().map(|n| n.machine_type.clone()))
            .unwrap_or_default();
        #[allow(deprecated)]
        let node_count = u32::try_from(c.current_node_count).unwrap_or(0);
        let mut pools = pools;
        let expected = c.node_pools.iter().map(|p| {
            let zones = if p.locations.is_empty() {
                c.locations.len()
            } else {
                p.locations.len()
            };
            u32::try_from(p.initial_node_count).unwrap_or(0)
                * u32::try_from(zones.max(1)).unwrap_or(1)
        });
        for (pool, nodes) in pools
            .iter_mut()
            .zip(pool_node_counts(&expected.collect::<Vec<_>>(), node_count))
        {
            pool.node_count = nodes;
        }
        #[allow(deprecated)]
        let node_version = c.current_node_version.clone();
        #[allow(deprecated)]
        let status_message = c.status_message.clone();
        Self {
            name: if c.name.is_empty() {
                target.name.clone()
            } else {
                c.name.clone()
            },
            project: target.project.clone(),
            location: if c.location.is_empty() {
                target.location.clone()
            } else {
                c.location.clone()
            },
            status: ClusterStatus::from_api(&c.status),
            status_message,
            node_count,
            machine_type,
            endpoint: c.endpoint.clone(),
            version: c.current_master_version.clone(),
            node_version,
            node_pools: pools,
            locations: c.locations.clone(),
            create_time: c.create_time.parse().ok(),
            labels: c
                .resource_labels
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        }
    }

    /// The summary of a cluster that does not exist; the machine type is the one configured.
    pub fn not_found(target: &ClusterRef, machine_type: &str) -> Self {
        Self {
            name: target.name.clone(),
            project: target.project.clone(),
            location: target.location.clone(),
            status: ClusterStatus::NotFound,
            status_message: String::new(),
            node_count: 0,
            machine_type: machine_type.into(),
            endpoint: String::new(),
            version: String::new(),
            node_version: String::new(),
            node_pools: Vec::new(),
            locations: Vec::new(),
            create_time: None,
            labels: BTreeMap::new(),
        }
    }

    pub fn is_running(&self) -> bool {
        self.status == ClusterStatus::Running
    }
}

/// Each pool's nodes now. GKE reports the cluster's nodes now (`currentNodeCount`) but, per pool,
/// only the nodes per zone it was created with: the pools' counts are those, over their zones,
/// unless the cluster's total says otherwise — then one pool has the total, and with none up
/// every pool has none. Pools of a cluster resized by hand, whose total no longer adds up, keep
/// their creation counts: nothing reported tells them apart.
pub fn pool_node_counts(expected: &[u32], current: u32) -> Vec<u32> {
    let sum: u32 = expected.iter().sum();
    match expected {
        _ if sum == current => expected.to_vec(),
        [_] => vec![current],
        _ if current == 0 => vec![0; expected.len()],
        _ => expected.to_vec(),
    }
}

//! The cluster as Gantry shows it: `gantry status --json`'s `cluster` object and the TUI's pane.

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
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolSummary {
    pub name: String,
    pub status: String,
    pub machine_type: String,
    /// Nodes per zone at creation.
    pub initial_node_count: i32,
    pub spot: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accelerator: Option<String>,
    pub version: String,
}

impl ClusterSummary {
    pub fn from_cluster(target: &ClusterRef, c: &Cluster) -> Self {
        let pools: Vec<PoolSummary> = c
            .node_pools
            .iter()
            .map(|p| {
                let config = p.config.clone().unwrap_or_default();
                PoolSummary {
                    name: p.name.clone(),
                    status: p.status.name().unwrap_or("UNKNOWN").to_string(),
                    machine_type: config.machine_type.clone(),
                    initial_node_count: p.initial_node_count,
                    spot: config.spot || config.preemptible,
                    accelerator: config
                        .accelerators
                        .first()
                        .map(|a| format!("{} x {}", a.accelerator_count, a.accelerator_type)),
                    version: p.version.clone(),
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
        }
    }

    pub fn is_running(&self) -> bool {
        self.status == ClusterStatus::Running
    }
}

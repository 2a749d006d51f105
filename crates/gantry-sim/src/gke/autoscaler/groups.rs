//! The autoscaler's node groups as they stand: one per zone of each node pool whose autoscaling
//! is on (GKE's managed instance groups), with the nodes registered in it, the instances still
//! booting, its limits and the node a new instance would become.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::super::GkeApi;
use super::super::clusters::{ClusterKey, ClusterRecord};
use crate::kube::cluster::{ClusterState, NodePoolSpec};
use crate::kube::nodes;

#[derive(Debug, Clone)]
pub struct Group {
    pub pool: NodePoolSpec,
    pub zone: String,
    /// The instance group's URL, the group's id in the autoscaler's events.
    pub id: String,
    /// Nodes registered in the group, oldest first.
    pub nodes: Vec<String>,
    pub booting: u64,
    pub min: u64,
    pub max: u64,
    /// The node a new instance of the group would register as.
    pub template: Value,
}

impl Group {
    /// The group's target size: its nodes and the instances on their way.
    pub fn target(&self) -> u64 {
        self.nodes.len() as u64 + self.booting
    }
}

/// The groups of a cluster, and whether an operation is changing it (the autoscaler then waits).
#[derive(Debug, Default)]
pub struct View {
    pub groups: Vec<Group>,
    pub busy: bool,
}

/// Reads the cluster's groups; None once the cluster is gone or runs another API server.
pub fn read(api: &GkeApi, key: &ClusterKey, state: &Arc<ClusterState>) -> Option<View> {
    let (pools, booting, busy) = {
        let registry = api.registry();
        let record = registry.clusters.get(key)?;
        let same = record
            .runtime
            .as_ref()
            .is_some_and(|r| Arc::ptr_eq(r.state(), state));
        if !same {
            return None;
        }
        let booting: Vec<(String, String)> = record
            .booting
            .iter()
            .map(|b| (b.pool.clone(), b.zone.clone()))
            .collect();
        (
            autoscaled_pools(record),
            booting,
            record.busy_with.is_some(),
        )
    };
    let mut groups = Vec::new();
    for (pool, settings) in pools {
        let members = nodes::of_pool(state, &pool.name);
        let mut zonal: Vec<Group> = pool
            .zones
            .iter()
            .map(|zone| {
                let group = nodes::instance_group(&state.spec.name, &pool.name, zone);
                Group {
                    pool: pool.clone(),
                    zone: zone.clone(),
                    id: format!(
                        "https://www.googleapis.com/compute/v1/projects/{}/zones/{zone}/instanceGroups/{group}-grp",
                        state.spec.project
                    ),
                    nodes: members
                        .iter()
                        .filter(|n| n.zone == *zone)
                        .map(|n| n.name.clone())
                        .collect(),
                    booting: booting
                        .iter()
                        .filter(|(p, z)| *p == pool.name && z == zone)
                        .count() as u64,
                    min: 0,
                    max: 0,
                    template: nodes::template(state, &pool, zone),
                }
            })
            .collect();
        set_limits(&mut zonal, &settings);
        groups.extend(zonal);
    }
    Some(View { groups, busy })
}

/// The pools with autoscaling on, each with its settings.
fn autoscaled_pools(record: &ClusterRecord) -> Vec<(NodePoolSpec, Map<String, Value>)> {
    let listed = record
        .cluster
        .get("nodePools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    let mut pools: Vec<(NodePoolSpec, Map<String, Value>)> = listed
        .filter_map(|p| {
            let settings = p.get("autoscaling")?.as_object()?;
            if settings.get("enabled").and_then(Value::as_bool) != Some(true) {
                return None;
            }
            // A pool whose creation failed has no instance group to grow.
            if p.get("statusMessage").is_some() {
                return None;
            }
            let name = p.get("name")?.as_str()?;
            let spec = record.spec.node_pools.iter().find(|s| s.name == name)?;
            Some((spec.clone(), settings.clone()))
        })
        .collect();
    pools.sort_by(|a, b| a.0.name.cmp(&b.0.name));
    pools
}

/// Per-zone limits apply to each group; total limits to the pool, so each group may grow by
/// what the pool's other zones leave.
fn set_limits(groups: &mut [Group], settings: &Map<String, Value>) {
    let limit = |key: &str| {
        settings
            .get(key)
            .and_then(Value::as_u64)
            .unwrap_or_default()
    };
    let (total_min, total_max) = (limit("totalMinNodeCount"), limit("totalMaxNodeCount"));
    let whole: u64 = groups.iter().map(Group::target).sum();
    for group in groups.iter_mut() {
        if total_max > 0 {
            let others = whole - group.target();
            group.max = total_max.saturating_sub(others);
            group.min = total_min.saturating_sub(others);
        } else {
            group.max = limit("maxNodeCount");
            group.min = limit("minNodeCount");
        }
    }
}

/// Brings the pool's recorded size (GKE's view of its instance groups) to its nodes and booting
/// instances: the largest zone's, since the simulated pool has one size for every zone.
pub fn sync_size(record: &mut ClusterRecord, state: &ClusterState, pool: &str) {
    let members = nodes::of_pool(state, pool);
    let Some(spec) = record.spec.node_pools.iter().find(|p| p.name == pool) else {
        return;
    };
    let size = spec
        .zones
        .iter()
        .map(|zone| {
            let registered = members.iter().filter(|n| n.zone == *zone).count();
            let booting = record
                .booting
                .iter()
                .filter(|b| b.pool == pool && b.zone == *zone)
                .count();
            registered + booting
        })
        .max()
        .unwrap_or(0);
    if let Some(spec) = record.spec.node_pools.iter_mut().find(|p| p.name == pool) {
        spec.nodes_per_zone = u32::try_from(size).unwrap_or(u32::MAX);
    }
}

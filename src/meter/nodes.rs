//! A node as the meter needs it: when it was created, and its price per hour — its machine type
//! in its region, spot or on-demand, with the GPUs attached to it, priced as the ends of pods
//! are (`ends::cost::NodeFacts`), plus its boot disk, which its pool says (a Node does not).

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Node;

use super::PerHour;
use crate::ends::cost::NodeFacts;
use crate::gke::ClusterSummary;
use crate::k8s::labels::POOL_LABEL;
use crate::pricing::Catalogue;

/// What the meter knows of one node from its object.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeSeen {
    /// Its uid: a name given again to a new node is another life.
    pub uid: String,
    pub name: String,
    /// Its `creationTimestamp`.
    pub created: Option<Timestamp>,
    /// Its machine and GPUs per hour (None: the snapshot has no price for them).
    pub machine_per_hour: Option<f64>,
    /// Its node pool (`cloud.google.com/gke-nodepool`).
    pub pool: Option<String>,
}

impl NodeSeen {
    pub fn of(node: &Node) -> NodeSeen {
        let meta = &node.metadata;
        NodeSeen {
            uid: meta
                .uid
                .clone()
                .or_else(|| meta.name.clone())
                .unwrap_or_default(),
            name: meta.name.clone().unwrap_or_default(),
            created: meta.creation_timestamp.as_ref().map(|t| t.0),
            machine_per_hour: NodeFacts::of(node).per_hour,
            pool: meta
                .labels
                .as_ref()
                .and_then(|l| l.get(POOL_LABEL))
                .cloned(),
        }
    }

    /// Its price per hour: machine, GPUs and boot disk; only the machine and GPUs (a lower
    /// bound) when its pool was never seen.
    pub fn per_hour(&self, disks: &PoolDisks) -> PerHour {
        let Some(machine) = self.machine_per_hour else {
            return PerHour::Unknown;
        };
        match self.pool.as_deref().and_then(|p| disks.per_hour(p)) {
            Some(Some(disk)) => PerHour::Known(machine + disk),
            Some(None) => PerHour::Unknown,
            None => PerHour::AtLeast(machine),
        }
    }
}

/// Each node pool's boot disk, as GKE reported it; a pool deleted since is remembered, so its
/// nodes' lives are still priced whole.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PoolDisks {
    /// Per hour by pool (None: the snapshot has no price for its disk type there).
    per_hour: BTreeMap<String, Option<f64>>,
}

impl PoolDisks {
    /// The pools of the cluster as GKE reports it now, at the cluster's location.
    pub fn of(summary: &ClusterSummary) -> PoolDisks {
        let mut disks = PoolDisks::default();
        disks.remember(summary);
        disks
    }

    /// Learns (or learns again) the disks of the pools GKE reports now.
    pub fn remember(&mut self, summary: &ClusterSummary) {
        let catalogue = Catalogue::embedded();
        for pool in &summary.node_pools {
            let per_gb_month = catalogue.disk_per_gb_month(&pool.disk_type, &summary.location);
            let hours_per_month = catalogue.hours_per_month();
            let per_hour = per_gb_month
                .ok()
                .filter(|_| hours_per_month > 0.0)
                .map(|p| p * f64::from(pool.disk_size_gb) / hours_per_month);
            self.per_hour.insert(pool.name.clone(), per_hour);
        }
    }

    /// One node's boot disk in `pool` per hour: None when the pool was never seen, `Some(None)`
    /// when its disk has no price.
    pub fn per_hour(&self, pool: &str) -> Option<Option<f64>> {
        self.per_hour.get(pool).copied()
    }
}

//! The hourly cost of a GKE Standard cluster described as plain data: the flat management fee,
//! then for each node pool its nodes × (machine type + attached GPUs + boot disk). A disk is
//! billed per GB-month, so its hourly share is the monthly price over the snapshot's hours per
//! month. The caller turns its config or what the cloud reports into a [`ClusterShape`].

use super::{Catalogue, Estimate, Provisioning};

/// A cluster, as far as its price goes.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterShape {
    /// Its zone (`us-central1-a`) or region (`us-central1`).
    pub location: String,
    pub pools: Vec<PoolShape>,
}

/// A node pool, as far as its price goes.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolShape {
    pub name: String,
    pub machine_type: String,
    /// Nodes in the whole pool: a regional cluster has its per-zone count in each of its zones.
    pub nodes: u32,
    /// `pd-standard`, `pd-balanced` or `pd-ssd`.
    pub disk_type: String,
    pub disk_size_gb: u32,
    /// GPUs on each node, as GKE's node config names them.
    pub accelerator: Option<Accelerator>,
    pub spot: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accelerator {
    /// `nvidia-tesla-t4`, `nvidia-l4`, …
    pub kind: String,
    pub count: u32,
}

/// What a node pool costs per hour.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolCost {
    pub name: String,
    pub nodes: u32,
    /// One node: machine, GPUs and disk.
    pub per_node: Estimate,
    /// All its nodes.
    pub per_hour: Estimate,
}

/// What a cluster costs per hour.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterCost {
    /// GKE's management fee, whatever the nodes.
    pub fee: f64,
    pub pools: Vec<PoolCost>,
    /// The fee and every pool.
    pub per_hour: Estimate,
}

impl Catalogue {
    /// One node of a pool per hour: its machine type, the GPUs attached to it, its boot disk.
    pub fn node_per_hour(&self, pool: &PoolShape, location: &str) -> Estimate {
        let provisioning = Provisioning::from_spot(pool.spot);
        let machine = self
            .machine_type(&pool.machine_type, location, provisioning)
            .into();
        let gpus = match &pool.accelerator {
            Some(gpu) => self.attached_gpus(
                &pool.machine_type,
                &gpu.kind,
                gpu.count,
                location,
                provisioning,
            ),
            None => Estimate::ZERO,
        };
        let disk = Estimate::from(self.disk_per_gb_month(&pool.disk_type, location))
            .times(f64::from(pool.disk_size_gb) / self.hours_per_month());
        Estimate::plus(machine, gpus).plus(disk)
    }

    /// What `count` GPUs of a kind add to a node of a machine type, per hour: nothing when the
    /// machine type carries GPUs (A2, A3, G2: their price is the machine type's, whatever the
    /// pool calls them), else `count` times the GPU's own price — unknown, never 0, where the
    /// snapshot has none.
    pub fn attached_gpus(
        &self,
        machine_type: &str,
        gpu: &str,
        count: u32,
        location: &str,
        provisioning: Provisioning,
    ) -> Estimate {
        let carries_gpus = self.gpus_carried_by(machine_type).next().is_some();
        if count == 0 || carries_gpus {
            return Estimate::ZERO;
        }
        Estimate::from(self.gpu(gpu, location, provisioning)).times(f64::from(count))
    }

    /// A whole pool per hour; a pool scaled to zero nodes costs nothing.
    pub fn pool_cost(&self, pool: &PoolShape, location: &str) -> PoolCost {
        let per_node = self.node_per_hour(pool, location);
        let per_hour = match pool.nodes {
            0 => Estimate::ZERO,
            nodes => per_node.clone().times(f64::from(nodes)),
        };
        PoolCost {
            name: pool.name.clone(),
            nodes: pool.nodes,
            per_node,
            per_hour,
        }
    }

    /// The whole cluster per hour: the fee and every pool.
    pub fn cluster_cost(&self, cluster: &ClusterShape) -> ClusterCost {
        let fee = self.cluster_fee_per_hour();
        let pools: Vec<PoolCost> = cluster
            .pools
            .iter()
            .map(|pool| self.pool_cost(pool, &cluster.location))
            .collect();
        let nodes: Estimate = pools.iter().map(|pool| pool.per_hour.clone()).sum();
        ClusterCost {
            fee,
            pools,
            per_hour: Estimate::Known(fee).plus(nodes),
        }
    }
}

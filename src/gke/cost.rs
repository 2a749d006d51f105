//! What the configured cluster would cost and what the cluster GKE reports costs, each said once
//! as a [`ClusterShape`] for [`crate::pricing`]: the create confirmation, `gantry up`, `status`
//! and the cluster pane all price the same shape. Pure: the time is a parameter.
//!
//! A regional cluster has its pools' node count in each of its zones: GKE's default is three
//! zones of the region, which is what Gantry creates (its config names no node locations). What
//! GKE reports names its zones, and those are counted.

use jiff::Timestamp;

use super::ClusterSummary;
use crate::config::ClusterConfig;
use crate::pricing::{Accelerator, Catalogue, ClusterShape, Estimate, PoolShape};

/// The zones GKE spreads a regional cluster's nodes over when the request names none.
pub const REGIONAL_ZONES: u32 = 3;

/// Whether a location is a zone (`us-central1-a`) rather than a region (`us-central1`): a zone
/// ends in `-` and one letter.
pub fn is_zone(location: &str) -> bool {
    location
        .rsplit_once('-')
        .is_some_and(|(_, last)| last.len() == 1 && last.bytes().all(|b| b.is_ascii_lowercase()))
}

/// The zones a cluster created in `location` without named node locations has its nodes in.
pub fn zones_of(location: &str) -> u32 {
    if is_zone(location) { 1 } else { REGIONAL_ZONES }
}

/// The cluster the config describes, created in `location`.
pub fn configured_shape(config: &ClusterConfig, location: &str) -> ClusterShape {
    let zones = zones_of(location);
    let mut pools = vec![PoolShape {
        name: config.node_pool.clone(),
        machine_type: config.machine_type.clone(),
        nodes: config.node_count.saturating_mul(zones),
        disk_type: config.disk_type.clone(),
        disk_size_gb: config.disk_size_gb,
        accelerator: None,
        spot: config.spot,
    }];
    if let Some(gpu) = &config.gpu_pool {
        pools.push(PoolShape {
            name: gpu.name.clone(),
            machine_type: gpu.machine_type.clone(),
            nodes: gpu.node_count.saturating_mul(zones),
            disk_type: config.disk_type.clone(),
            disk_size_gb: config.disk_size_gb,
            accelerator: Some(Accelerator {
                kind: gpu.accelerator_type.clone(),
                count: gpu.accelerator_count,
            }),
            spot: gpu.spot,
        });
    }
    ClusterShape {
        location: location.to_string(),
        pools,
    }
}

/// The cluster as GKE reports it: each pool with the nodes it has now.
pub fn current_shape(summary: &ClusterSummary) -> ClusterShape {
    let pools = summary
        .node_pools
        .iter()
        .map(|p| PoolShape {
            name: p.name.clone(),
            machine_type: p.machine_type.clone(),
            nodes: p.node_count,
            disk_type: p.disk_type.clone(),
            disk_size_gb: p.disk_size_gb,
            accelerator: p.accelerator_type.as_ref().map(|kind| Accelerator {
                kind: kind.clone(),
                count: p.accelerator_count,
            }),
            spot: p.spot,
        })
        .collect();
    ClusterShape {
        location: summary.location.clone(),
        pools,
    }
}

/// US dollars per hour for a shape, from the snapshot Gantry is built with.
pub fn per_hour(shape: &ClusterShape) -> Estimate {
    Catalogue::embedded().cluster_cost(shape).per_hour
}

/// "≈ $0.14/h, $104/month", or "price unknown (…)".
pub fn describe(estimate: &Estimate) -> String {
    crate::pricing::format::estimate(estimate, Catalogue::embedded().hours_per_month())
}

/// Hours from `since` to `now`; none when `now` is earlier.
pub fn hours_between(since: Timestamp, now: Timestamp) -> f64 {
    (now.as_millisecond() - since.as_millisecond()).max(0) as f64 / 3_600_000.0
}

/// A cluster GKE reports: what it costs per hour as it is now. What it cost so far is the
/// meter's (`crate::meter`): each node's price over its own life, not this price over its age.
#[derive(Debug, Clone, PartialEq)]
pub struct RunningCost {
    pub per_hour: Estimate,
}

impl RunningCost {
    pub fn of(summary: &ClusterSummary) -> RunningCost {
        RunningCost {
            per_hour: per_hour(&current_shape(summary)),
        }
    }
}

/// What an attempt used: its duration times the cluster's nodes, and the cluster's hourly price
/// over that duration (fee included: the money spent while it ran). The nodes are the cluster's
/// now, not only those its pods ran on: a node the attempt left idle was paid for all the same.
#[derive(Debug, Clone, PartialEq)]
pub struct Used {
    pub node_hours: f64,
    pub cost: Estimate,
}

impl Used {
    pub fn over(start: Timestamp, end: Timestamp, nodes: u32, per_hour: &Estimate) -> Used {
        let hours = hours_between(start, end);
        Used {
            node_hours: hours * f64::from(nodes),
            cost: per_hour.clone().times(hours),
        }
    }
}

#[cfg(test)]
#[path = "cost_tests.rs"]
mod tests;

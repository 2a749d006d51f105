//! The on-demand fallback of a spot pool: when spot capacity deserts the pool a run needs, the
//! recoverer makes a pool of the same machines (and GPUs), not spot, named `<pool>-on-demand`
//! and labelled `gantry.dev/fallback-for=<pool>` on its nodes, so that Gantry knows it as its
//! own: the plan keeps it while an attempt targets it and removes it once none does, and idle
//! scale-to-zero sizes it with the rest. Pure but for [`ensure`].

use google_cloud_container_v1::model::NodePool;

use super::cost::{configured_shape, zones_of};
use super::{ClusterRef, ClusterSummary, Gke, GkeError, PollPolicy, resize, spec};
use crate::config::ClusterConfig;
use crate::pricing::{Catalogue, format};

/// The node label that names the spot pool a fallback pool stands in for.
pub const FALLBACK_LABEL: &str = "gantry.dev/fallback-for";

/// The fallback's name: `default-pool-on-demand`.
pub fn name_for(pool: &str) -> String {
    format!("{pool}-on-demand")
}

/// The pool a Job runs on (the GPU pool when it asks for GPUs and there is one, else the
/// default pool), when that pool is spot: the one that may need a fallback.
pub fn spot_pool_of(config: &ClusterConfig, wants_gpus: bool) -> Option<String> {
    match &config.gpu_pool {
        Some(gpu) if wants_gpus => gpu.spot.then(|| gpu.name.clone()),
        _ => config.spot.then(|| config.node_pool.clone()),
    }
}

/// The fallback pools of a cluster, with the pool each stands in for.
pub fn pools_of(summary: &ClusterSummary) -> Vec<(String, String)> {
    summary
        .node_pools
        .iter()
        .filter_map(|p| Some((p.name.clone(), p.fallback_for.clone()?)))
        .collect()
}

/// The fallback of `of` as `CreateNodePool` takes it: the pool the config makes, on-demand,
/// labelled, with at least one node per zone so the next attempt has somewhere to run.
pub fn pool_request(config: &ClusterConfig, of: &str) -> Result<NodePool, GkeError> {
    let cluster = spec::cluster_request(config)?;
    let mut pool = cluster
        .node_pools
        .into_iter()
        .find(|p| p.name == of)
        .ok_or_else(|| {
            GkeError::BadInput(format!(
                "no pool {of} in the config to make an on-demand fallback of"
            ))
        })?;
    pool.name = name_for(of);
    pool.initial_node_count = pool.initial_node_count.max(1);
    if let Some(config) = pool.config.as_mut() {
        config.spot = false;
        config.preemptible = false;
        config
            .labels
            .insert(FALLBACK_LABEL.to_string(), of.to_string());
    }
    Ok(pool)
}

/// Nodes per zone the fallback of `of` gets when it is made or scaled up.
fn nodes_per_zone(config: &ClusterConfig, of: &str) -> u32 {
    let configured = match &config.gpu_pool {
        Some(gpu) if gpu.name == of => gpu.node_count,
        _ => config.node_count,
    };
    configured.max(1)
}

/// The fallback in the plan's words, with what it costs more than the spot pool:
/// `+ pool default-pool-on-demand: 3 × n1-standard-1, on-demand (new node pool), ≈ $0.06/h more
/// than spot`.
/// `existing`: the fallback's nodes now, when it is there.
pub fn words(config: &ClusterConfig, of: &str, location: &str, existing: Option<u32>) -> String {
    let shape = configured_shape(config, location);
    let Some(spot) = shape.pools.into_iter().find(|p| p.name == of) else {
        return format!("+ pool {}", name_for(of));
    };
    let nodes = nodes_per_zone(config, of) * zones_of(location);
    let on_demand = crate::pricing::PoolShape {
        name: name_for(of),
        nodes,
        spot: false,
        ..spot.clone()
    };
    let catalogue = Catalogue::embedded();
    let per_node = |p| catalogue.node_per_hour(p, location).usd();
    let more = match (per_node(&on_demand), per_node(&spot)) {
        (Some(a), Some(b)) => format!(
            "≈ {}/h more than spot",
            format::usd((a - b) * f64::from(nodes))
        ),
        _ => "price difference unknown (not in the price snapshot)".to_string(),
    };
    let gpu = on_demand
        .accelerator
        .as_ref()
        .map(|a| format!(" with {} x {}", a.count, a.kind))
        .unwrap_or_default();
    let how = match existing {
        None => "new node pool",
        Some(0) => "scaled up from zero nodes, in place",
        Some(_) => "already there",
    };
    format!(
        "+ pool {}: {nodes} × {}{gpu}, on-demand ({how}), {more}",
        on_demand.name, on_demand.machine_type
    )
}

/// Makes the fallback of `of`, or scales it up when it is there at zero nodes; follows the
/// operation to its end. The pool's name.
pub async fn ensure(
    gke: &Gke,
    target: &ClusterRef,
    config: &ClusterConfig,
    of: &str,
    poll: PollPolicy,
) -> Result<String, GkeError> {
    let name = name_for(of);
    let cluster = gke
        .get_cluster(target)
        .await?
        .ok_or_else(|| GkeError::BadInput(format!("cluster {target} is not there")))?;
    let summary = ClusterSummary::from_cluster(target, &cluster);
    match summary.node_pools.iter().find(|p| p.name == name) {
        Some(pool) if pool.fallback_for.as_deref() != Some(of) => Err(GkeError::BadInput(format!(
            "pool {name} is there and is not Gantry's fallback for {of}: rename or delete it to let Gantry make its own"
        ))),
        Some(pool) if pool.node_count > 0 => Ok(name),
        Some(_) => {
            let sizes = [(name.clone(), nodes_per_zone(config, of))];
            resize::set_pool_sizes(gke, target, &sizes, poll).await?;
            Ok(name)
        }
        None => {
            let op = gke
                .create_node_pool(target, &pool_request(config, of)?)
                .await?;
            resize::wait(gke, target, &op.name, poll).await?;
            Ok(name)
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::config::GpuPool;

    #[test]
    fn the_fallback_is_the_spot_pool_on_demand_and_labelled_as_its_fallback() {
        let config = ClusterConfig {
            spot: true,
            ..ClusterConfig::default()
        };
        assert_eq!(
            spot_pool_of(&config, false).as_deref(),
            Some("default-pool")
        );
        let pool = pool_request(&config, "default-pool").unwrap();
        assert_eq!(pool.name, "default-pool-on-demand");
        let node = pool.config.unwrap();
        assert!(!node.spot);
        assert_eq!(node.machine_type, "n1-standard-1");
        assert_eq!(node.labels[FALLBACK_LABEL], "default-pool");
    }

    #[test]
    fn a_gpu_job_falls_back_from_its_gpu_pool_with_its_gpus() {
        let config = ClusterConfig {
            gpu_pool: Some(GpuPool {
                spot: true,
                node_count: 0,
                ..GpuPool::default()
            }),
            ..ClusterConfig::default()
        };
        assert_eq!(spot_pool_of(&config, true).as_deref(), Some("gpu-pool"));
        assert_eq!(
            spot_pool_of(&config, false),
            None,
            "the default pool is not spot"
        );
        let pool = pool_request(&config, "gpu-pool").unwrap();
        assert_eq!(pool.initial_node_count, 1);
        let node = pool.config.unwrap();
        assert_eq!(node.accelerators[0].accelerator_type, "nvidia-tesla-t4");
        assert_eq!(node.taints[0].key, "nvidia.com/gpu");
        let said = words(&config, "gpu-pool", "us-central1-a", None);
        // n1-standard-4 with a T4 in us-central1: $0.189999 + $0.35 on demand, $0.06701 +
        // $0.175 spot.
        assert_eq!(
            said,
            "+ pool gpu-pool-on-demand: 1 × n1-standard-4 with 1 x nvidia-tesla-t4, on-demand (new node pool), ≈ $0.30/h more than spot"
        );
        // A GPU the snapshot has no price for: unknown, never a made-up difference.
        let k80 = ClusterConfig {
            gpu_pool: config.gpu_pool.clone().map(|gpu| GpuPool {
                accelerator_type: "nvidia-tesla-k80".into(),
                ..gpu
            }),
            ..config.clone()
        };
        assert_eq!(
            words(&k80, "gpu-pool", "us-central1-a", None),
            "+ pool gpu-pool-on-demand: 1 × n1-standard-4 with 1 x nvidia-tesla-k80, on-demand (new node pool), price difference unknown (not in the price snapshot)"
        );
    }
}

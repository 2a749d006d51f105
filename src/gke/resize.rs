//! Node pools to zero nodes and back, the cluster kept: what an idle cluster's nodes cost is
//! saved while its control plane (and the GKE fee) stays. Each pool is set with
//! `SetNodePoolSize`, one operation at a time as GKE allows on a cluster, each followed to its end.

use std::time::Duration;

use google_cloud_container_v1::model::operation;

use super::{ClusterRef, Gke, GkeError, PollPolicy};
use crate::config::ClusterConfig;

/// Which way the pools go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// No nodes in any pool.
    ToZero,
    /// Each pool as the config sizes it.
    ToConfig,
}

/// Each pool of the config and its nodes per zone (what `SetNodePoolSize` takes) when scaled.
pub fn sizes(config: &ClusterConfig, scale: Scale) -> Vec<(String, u32)> {
    let size = |configured: u32| match scale {
        Scale::ToZero => 0,
        Scale::ToConfig => configured,
    };
    let mut pools = vec![(config.node_pool.clone(), size(config.node_count))];
    if let Some(gpu) = &config.gpu_pool {
        pools.push((gpu.name.clone(), size(gpu.node_count)));
    }
    pools
}

/// Sets each pool's size in turn, following each operation until it is DONE.
pub async fn set_pool_sizes(
    gke: &Gke,
    target: &ClusterRef,
    sizes: &[(String, u32)],
    poll: PollPolicy,
) -> Result<(), GkeError> {
    for (pool, nodes) in sizes {
        let nodes = i32::try_from(*nodes)
            .map_err(|_| GkeError::BadInput(format!("{nodes} nodes for {pool}: too many")))?;
        let op = gke.set_node_pool_size(target, pool, nodes).await?;
        wait(gke, target, &op.name, poll).await?;
    }
    Ok(())
}

/// Follows a pool operation until it is DONE; its error, if it ended with one.
pub(super) async fn wait(
    gke: &Gke,
    target: &ClusterRef,
    operation: &str,
    poll: PollPolicy,
) -> Result<(), GkeError> {
    let mut interval: Duration = poll.initial;
    loop {
        let op = gke.get_operation(target, operation).await?;
        if op.status == operation::Status::Done {
            return match op.error.as_ref().filter(|e| e.code != 0) {
                Some(error) => Err(GkeError::OperationFailed {
                    kind: "resize",
                    cluster: target.to_string(),
                    message: if error.message.is_empty() {
                        format!("operation {} ended with error code {}", op.name, error.code)
                    } else {
                        error.message.clone()
                    },
                }),
                None => Ok(()),
            };
        }
        tokio::time::sleep(interval).await;
        interval = poll.next(interval);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::GpuPool;

    #[test]
    fn every_pool_of_the_config_goes_to_zero_and_back_to_its_size() {
        let config = ClusterConfig {
            gpu_pool: Some(GpuPool::default()),
            ..ClusterConfig::default()
        };
        let pools = |scale| sizes(&config, scale);
        assert_eq!(
            pools(Scale::ToZero),
            [("default-pool".to_string(), 0), ("gpu-pool".to_string(), 0)]
        );
        assert_eq!(
            pools(Scale::ToConfig),
            [("default-pool".to_string(), 3), ("gpu-pool".to_string(), 1)]
        );
    }
}

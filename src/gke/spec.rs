//! The create-cluster request from [`ClusterConfig`]: the seed's cluster (a `default-pool` of
//! 3 × n1-standard-1 with the four OAuth scopes) in the node-pool form, plus what the config adds.

use google_cloud_container_v1::model::{
    AcceleratorConfig, Cluster, GPUDriverInstallationConfig, NodeConfig, NodePool,
    NodePoolAutoscaling, NodeTaint, ReleaseChannel, gpu_driver_installation_config, node_taint,
    release_channel,
};

use super::GkeError;
use crate::config::ClusterConfig;

/// The label Gantry puts on what it creates, so it can tell its clusters from others.
pub const MANAGED_BY: (&str, &str) = ("managed-by", "gantry");

/// The taint of the GPU pool: only pods that tolerate it (GPU training) land there.
pub const GPU_TAINT: (&str, &str) = ("nvidia.com/gpu", "present");

/// The cluster to create. Node pools are used, never the deprecated cluster-level node count.
pub fn cluster_request(config: &ClusterConfig) -> Result<Cluster, GkeError> {
    let mut labels = config.labels.clone();
    labels
        .entry(MANAGED_BY.0.to_string())
        .or_insert_with(|| MANAGED_BY.1.to_string());

    let mut default_pool = NodePool::new()
        .set_name(&config.node_pool)
        .set_initial_node_count(count("cluster.node-count", config.node_count)?)
        .set_config(
            NodeConfig::new()
                .set_machine_type(&config.machine_type)
                .set_oauth_scopes(config.oauth_scopes.clone())
                .set_disk_size_gb(count("cluster.disk-size-gb", config.disk_size_gb)?)
                .set_disk_type(&config.disk_type)
                .set_spot(config.spot)
                .set_labels(labels.clone()),
        );
    if let Some(a) = &config.autoscaling {
        default_pool = default_pool.set_autoscaling(
            NodePoolAutoscaling::new()
                .set_enabled(true)
                .set_min_node_count(count("cluster.autoscaling.min-nodes", a.min_nodes)?)
                .set_max_node_count(count("cluster.autoscaling.max-nodes", a.max_nodes)?),
        );
    }
    let mut pools = vec![default_pool];

    if let Some(gpu) = &config.gpu_pool {
        let driver = match gpu.gpu_driver.to_ascii_uppercase().as_str() {
            "DEFAULT" => gpu_driver_installation_config::GPUDriverVersion::Default,
            "LATEST" => gpu_driver_installation_config::GPUDriverVersion::Latest,
            "INSTALLATION_DISABLED" | "DISABLED" | "NONE" => {
                gpu_driver_installation_config::GPUDriverVersion::InstallationDisabled
            }
            other => {
                return Err(GkeError::BadInput(format!(
                    "cluster.gpu-pool.gpu-driver = \"{other}\": use DEFAULT, LATEST or INSTALLATION_DISABLED"
                )));
            }
        };
        if gpu.name == config.node_pool {
            return Err(GkeError::BadInput(format!(
                "cluster.gpu-pool.name = \"{}\" is also the default pool's name; give it another",
                gpu.name
            )));
        }
        let mut gpu_nodes = NodePool::new();
        if let Some(a) = &gpu.autoscaling {
            gpu_nodes = gpu_nodes.set_autoscaling(
                NodePoolAutoscaling::new()
                    .set_enabled(true)
                    .set_min_node_count(count(
                        "cluster.gpu-pool.autoscaling.min-nodes",
                        a.min_nodes,
                    )?)
                    .set_max_node_count(count(
                        "cluster.gpu-pool.autoscaling.max-nodes",
                        a.max_nodes,
                    )?),
            );
        }
        pools.push(
            gpu_nodes
                .set_name(&gpu.name)
                .set_initial_node_count(count("cluster.gpu-pool.node-count", gpu.node_count)?)
                .set_config(
                    NodeConfig::new()
                        .set_machine_type(&gpu.machine_type)
                        .set_oauth_scopes(config.oauth_scopes.clone())
                        .set_disk_size_gb(count("cluster.disk-size-gb", config.disk_size_gb)?)
                        .set_disk_type(&config.disk_type)
                        .set_spot(gpu.spot)
                        .set_labels(labels.clone())
                        .set_accelerators([AcceleratorConfig::new()
                            .set_accelerator_type(&gpu.accelerator_type)
                            .set_accelerator_count(i64::from(gpu.accelerator_count))
                            .set_gpu_driver_installation_config(
                                GPUDriverInstallationConfig::new().set_gpu_driver_version(driver),
                            )])
                        .set_taints([NodeTaint::new()
                            .set_key(GPU_TAINT.0)
                            .set_value(GPU_TAINT.1)
                            .set_effect(node_taint::Effect::NoSchedule)]),
                ),
        );
    }

    let mut cluster = Cluster::new()
        .set_name(&config.name)
        .set_node_pools(pools)
        .set_resource_labels(labels);
    if let Some(channel) = &config.release_channel {
        let channel = match channel.to_ascii_uppercase().as_str() {
            "RAPID" => release_channel::Channel::Rapid,
            "REGULAR" => release_channel::Channel::Regular,
            "STABLE" => release_channel::Channel::Stable,
            "EXTENDED" => release_channel::Channel::Extended,
            other => {
                return Err(GkeError::BadInput(format!(
                    "cluster.release-channel = \"{other}\": use RAPID, REGULAR, STABLE or EXTENDED"
                )));
            }
        };
        cluster = cluster.set_release_channel(ReleaseChannel::new().set_channel(channel));
    }
    if let Some(version) = &config.version {
        cluster = cluster.set_initial_cluster_version(version);
    }
    Ok(cluster)
}

fn count(key: &str, n: u32) -> Result<i32, GkeError> {
    i32::try_from(n).map_err(|_| GkeError::BadInput(format!("{key} = {n} is too large")))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::config::{Autoscaling, GpuPool, SEED_SCOPES};

    #[test]
    #[allow(deprecated)]
    fn the_seed_in_node_pool_form() {
        let c = cluster_request(&ClusterConfig::default()).unwrap();
        assert_eq!(c.name, "ml-gke-cluster");
        assert_eq!(c.initial_node_count, 0, "no deprecated cluster-level count");
        assert!(c.node_config.is_none());
        assert_eq!(c.node_pools.len(), 1);
        let pool = &c.node_pools[0];
        assert_eq!(
            (pool.name.as_str(), pool.initial_node_count),
            ("default-pool", 3)
        );
        let config = pool.config.as_ref().unwrap();
        assert_eq!(config.machine_type, "n1-standard-1");
        assert_eq!(config.oauth_scopes, SEED_SCOPES);
        assert!(c.release_channel.is_none());
        assert_eq!(c.resource_labels["managed-by"], "gantry");
    }

    #[test]
    fn options_reach_the_request() {
        let config = ClusterConfig {
            release_channel: Some("rapid".into()),
            version: Some("1.32.1-gke.100".into()),
            spot: true,
            autoscaling: Some(Autoscaling {
                min_nodes: 1,
                max_nodes: 5,
            }),
            gpu_pool: Some(GpuPool::default()),
            ..ClusterConfig::default()
        };
        let c = cluster_request(&config).unwrap();
        assert_eq!(
            c.release_channel.unwrap().channel,
            release_channel::Channel::Rapid
        );
        assert_eq!(c.initial_cluster_version, "1.32.1-gke.100");
        let a = c.node_pools[0].autoscaling.as_ref().unwrap();
        assert!(a.enabled && a.min_node_count == 1 && a.max_node_count == 5);
        assert!(c.node_pools[0].config.as_ref().unwrap().spot);
        let gpu = c.node_pools[1].config.as_ref().unwrap();
        assert_eq!(gpu.accelerators[0].accelerator_type, "nvidia-tesla-t4");
        assert_eq!(gpu.taints[0].key, "nvidia.com/gpu");
        let bad = ClusterConfig {
            release_channel: Some("nightly".into()),
            ..ClusterConfig::default()
        };
        assert_eq!(cluster_request(&bad).unwrap_err().exit_code(), 2);
    }
}

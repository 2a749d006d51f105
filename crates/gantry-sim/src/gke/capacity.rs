//! What Compute Engine refuses when a node pool's instances are made: more GPUs than the
//! project's quota (the `gpu-quota` fault) or a zone out of capacity for the pool's machines
//! (`stockout`: none at all, or none past a number of the pool's nodes, as a Spot pool that was
//! made and then finds no capacity to scale up). Cluster creation, node pool operations, the
//! cluster autoscaler and a reclaimed instance's recreation ask here before each new instance,
//! and word the refusal as GKE passes Compute Engine's on.

use std::sync::Arc;

use serde_json::Value;

use super::GkeApi;
use super::errors::rpc_code;
use super::lifecycle::Failure;
use crate::kube::cluster::{ClusterSpec, ClusterState, NodePoolSpec};
use crate::kube::resources::Kind;
use crate::kube::{nodes, quantity};
use crate::machines;

/// Why new instances cannot be made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shortage {
    /// `GPUS_ALL_REGIONS` would be exceeded; the limit in GPUs.
    Quota { limit: u32 },
    /// The zone has no capacity left for the pool's machines.
    Stockout,
}

impl Shortage {
    /// How GKE's cluster autoscaler names the failure in its `FailedScaleUp` event (the
    /// `quotaExceededMessage` and `outOfResourcesMessage` of gke-autoscaling's
    /// `pkg/events/failed_scale_up.go`, as public copies of it show).
    pub fn autoscaler_reason(self) -> &'static str {
        match self {
            Shortage::Quota { .. } => "GCE quota exceeded",
            Shortage::Stockout => "GCE out of resources",
        }
    }
}

/// GPUs one node of the pool has: attached, or built into its machine type.
pub fn gpus_per_node(pool: &NodePoolSpec) -> u64 {
    pool.accelerator
        .as_ref()
        .map(|(_, n)| u64::from(*n))
        .or_else(|| {
            machines::machine_type(&pool.machine_type)
                .and_then(|m| m.gpus)
                .map(|(_, n)| u64::from(n))
        })
        .unwrap_or(0)
}

/// Whether `new_nodes` more instances of `pool`, a pool of the cluster `state` runs, can be
/// made now: all of them or none. A refusal is counted on its fault.
pub fn check(
    api: &GkeApi,
    state: &ClusterState,
    pool: &NodePoolSpec,
    new_nodes: u64,
) -> Result<(), Shortage> {
    let faults = &api.shared.faults;
    if let Some(room) = faults.stockout(&pool.name)
        && pool_nodes(api, state, &pool.name) + new_nodes > u64::from(room)
    {
        faults.fired("stockout");
        return Err(Shortage::Stockout);
    }
    let wanted = gpus_per_node(pool) * new_nodes;
    if let Some(limit) = faults.gpu_quota()
        && wanted > 0
        && project_gpus(api, &state.spec.project) + wanted > u64::from(limit)
    {
        faults.fired("gpu-quota");
        return Err(Shortage::Quota { limit });
    }
    Ok(())
}

/// Whether a new cluster's pools can be made: the first refusal, as its create fails with it.
pub fn check_cluster(api: &GkeApi, spec: &ClusterSpec) -> Option<Failure> {
    let faults = &api.shared.faults;
    let held = project_gpus(api, &spec.project);
    let mut wanted = 0;
    for pool in &spec.node_pools {
        let count = u64::from(pool.nodes_per_zone) * pool.zones.len() as u64;
        if count == 0 {
            continue;
        }
        wanted += gpus_per_node(pool) * count;
        // A stockout lets the nodes the zones have room for run; a quota, none.
        let shortage = match faults.stockout(&pool.name).map(u64::from) {
            Some(room) if count > room => Some(("stockout", Shortage::Stockout, room)),
            _ => faults
                .gpu_quota()
                .filter(|limit| gpus_per_node(pool) > 0 && held + wanted > u64::from(*limit))
                .map(|limit| ("gpu-quota", Shortage::Quota { limit }, 0)),
        };
        if let Some((fault, shortage, running)) = shortage {
            faults.fired(fault);
            let zone = pool
                .zones
                .first()
                .map_or(spec.location.as_str(), String::as_str);
            let instance = nodes::instance_name(&spec.name, &pool.name, zone);
            let place = Place {
                project: &spec.project,
                zone,
                instance: &instance,
            };
            return Some(operation_failure(shortage, &place, (count, running), 0.0));
        }
    }
    None
}

/// The nodes `pool` has in the cluster `state` runs: registered, and instances booting for it
/// (a scale-up's, a reclaimed instance's recreation).
fn pool_nodes(api: &GkeApi, state: &ClusterState, pool: &str) -> u64 {
    let booting = {
        let registry = api.registry();
        registry
            .clusters
            .values()
            .find(|record| {
                record
                    .runtime
                    .as_ref()
                    .is_some_and(|r| std::ptr::eq(Arc::as_ptr(r.state()), state))
            })
            .map_or(0, |record| {
                record.booting.iter().filter(|b| b.pool == pool).count()
            })
    };
    (nodes::of_pool(state, pool).len() + booting) as u64
}

/// GPUs the project holds: its clusters' nodes and the instances booting for them.
pub fn project_gpus(api: &GkeApi, project: &str) -> u64 {
    let (states, booting) = {
        let registry = api.registry();
        let mut states = Vec::new();
        let mut booting = 0;
        for record in registry.clusters.values() {
            if record.spec.project != project {
                continue;
            }
            if let Some(runtime) = &record.runtime {
                states.push(runtime.state().clone());
            }
            booting += record.booting.iter().map(|b| b.gpus).sum::<u64>();
        }
        (states, booting)
    };
    let on_nodes: u64 = states
        .iter()
        .map(|state| {
            let (nodes, _) = state.store.list(Kind::Node, None, |_| true);
            nodes
                .iter()
                .filter_map(|n| n.pointer("/status/capacity/nvidia.com~1gpu"))
                .filter_map(Value::as_str)
                .filter_map(quantity::units)
                .sum::<u64>()
        })
        .sum();
    on_nodes + booting
}

/// Where an instance failed to be made.
pub struct Place<'a> {
    pub project: &'a str,
    pub zone: &'a str,
    pub instance: &'a str,
}

/// How a node pool operation ends when an instance cannot be made, in GKE's words: `progress` is
/// (instances the group expects in the zone, instances running there), `secs` how long the
/// operation waited on the group.
///
/// The quota form is GKE's "waiting on IG" message around Compute Engine's `QUOTA_EXCEEDED`
/// (as a NodePool's condition and operation errors show it in public reports, e.g. "Insufficient
/// quota to satisfy the request: waiting on IG: instance https://www.googleapis.com/compute/v1/
/// projects/P/zones/Z/instances/I is still CREATING. Last attempt error: [QUOTA_EXCEEDED] Instance
/// 'I' creation failed: Quota 'CPUS' exceeded.  Limit: 72.0 in region us-central1. - ."), with
/// the global GPU quota's own wording ("Quota 'GPUS_ALL_REGIONS' exceeded.  Limit: 0.0
/// globally."). The stockout form is GKE's "Not all instances running in IGM" message around
/// `ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS` (tranquilitybase-io/tb-gcp#589 and a Pulumi
/// troubleshooting page quote it).
pub fn operation_failure(
    shortage: Shortage,
    place: &Place<'_>,
    (expected, running): (u64, u64),
    secs: f64,
) -> Failure {
    let Place {
        project,
        zone,
        instance,
    } = place;
    let message = match shortage {
        Shortage::Quota { limit } => format!(
            "Insufficient quota to satisfy the request: waiting on IG: instance \
             https://www.googleapis.com/compute/v1/projects/{project}/zones/{zone}/instances/\
             {instance} is still CREATING. Last attempt error: [QUOTA_EXCEEDED] Instance \
             '{instance}' creation failed: Quota 'GPUS_ALL_REGIONS' exceeded.  Limit: {limit}.0 \
             globally. - ."
        ),
        Shortage::Stockout => format!(
            "Google Compute Engine: Not all instances running in IGM after {secs:.9}s. Expected \
             {expected}, running {running}, transitioning {}. Current errors: \
             [ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS]: Instance '{instance}' creation failed: \
             The zone 'projects/{project}/zones/{zone}' does not have enough resources available \
             to fulfill the request.  '(resource type:compute)'.",
            expected.saturating_sub(running)
        ),
    };
    Failure {
        code: rpc_code::RESOURCE_EXHAUSTED,
        message,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn place() -> Place<'static> {
        Place {
            project: "p",
            zone: "us-central1-a",
            instance: "gke-c-gpu-pool-1234abcd-x1y2",
        }
    }

    #[test]
    fn a_quota_failure_names_the_global_gpu_quota_and_its_limit() {
        let failure = operation_failure(Shortage::Quota { limit: 0 }, &place(), (1, 0), 20.0);
        assert_eq!(failure.code, rpc_code::RESOURCE_EXHAUSTED);
        assert!(
            failure.message.contains(
                "[QUOTA_EXCEEDED] Instance 'gke-c-gpu-pool-1234abcd-x1y2' creation failed: Quota \
                 'GPUS_ALL_REGIONS' exceeded.  Limit: 0.0 globally."
            ),
            "{}",
            failure.message
        );
        assert!(
            failure
                .message
                .starts_with("Insufficient quota to satisfy the request")
        );
    }

    #[test]
    fn a_stockout_says_the_zone_has_not_enough_resources() {
        let failure = operation_failure(Shortage::Stockout, &place(), (2, 1), 20.0);
        assert!(
            failure.message.contains(
                "Expected 2, running 1, transitioning 1. Current errors: \
                 [ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS]"
            ),
            "{}",
            failure.message
        );
        assert!(failure.message.contains(
            "The zone 'projects/p/zones/us-central1-a' does not have enough resources available \
             to fulfill the request.  '(resource type:compute)'."
        ));
        assert_eq!(
            Shortage::Stockout.autoscaler_reason(),
            "GCE out of resources"
        );
    }

    /// The seed's cluster with one pool of this name and size.
    fn one_pool_cluster(pool: &str, nodes: u32) -> ClusterSpec {
        let mut spec = ClusterSpec::seed("p", "us-central1-a", "c");
        spec.node_pools[0].name = pool.into();
        spec.node_pools[0].nodes_per_zone = nodes;
        spec
    }

    fn stockout(pool: &str, room: u32) -> Arc<GkeApi> {
        let fault = crate::faults::Fault::Stockout {
            pool: pool.into(),
            room,
        };
        GkeApi::new(crate::test_support::shared(1.0, vec![fault]))
    }

    #[test]
    fn a_stockout_after_one_node_lets_a_cluster_of_one_node_be_made_but_not_of_two() {
        let api = stockout("default-pool", 1);
        assert_eq!(
            check_cluster(&api, &one_pool_cluster("default-pool", 1)),
            None
        );
        let failure = check_cluster(&api, &one_pool_cluster("default-pool", 2)).unwrap();
        assert!(
            failure.message.contains(
                "Expected 2, running 1, transitioning 1. Current errors: \
                 [ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS]"
            ),
            "{}",
            failure.message
        );
        assert_eq!(api.shared.faults.times_fired("stockout"), 1);
    }

    #[test]
    fn a_stockout_without_a_count_refuses_even_a_cluster_of_one_node() {
        let api = stockout("default-pool", 0);
        let failure = check_cluster(&api, &one_pool_cluster("default-pool", 1)).unwrap();
        assert_eq!(failure.code, rpc_code::RESOURCE_EXHAUSTED);
        assert!(
            failure
                .message
                .contains("[ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS]"),
            "{}",
            failure.message
        );
    }

    #[test]
    fn a_stockout_spares_a_pool_whose_name_only_begins_with_the_stocked_out_one() {
        let api = stockout("default-pool", 0);
        assert_eq!(
            check_cluster(&api, &one_pool_cluster("default-pool-on-demand", 3)),
            None
        );
        assert_eq!(api.shared.faults.times_fired("stockout"), 0);
    }

    #[test]
    fn a_pool_counts_its_attached_or_built_in_gpus() {
        let mut pool = ClusterSpec::seed("p", "us-central1-a", "c").node_pools[0].clone();
        assert_eq!(gpus_per_node(&pool), 0);
        pool.accelerator = Some(("nvidia-tesla-t4".into(), 2));
        assert_eq!(gpus_per_node(&pool), 2);
        pool.accelerator = None;
        pool.machine_type = "a2-highgpu-2g".into();
        assert_eq!(gpus_per_node(&pool), 2);
    }
}

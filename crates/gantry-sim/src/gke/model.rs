//! A create request, read as GKE reads it: normalised, checked, filled with defaults, and split into
//! what GKE reports back (the cluster's canonical JSON) and what the simulated cluster runs
//! (`ClusterSpec`).

use serde_json::{Map, Value, json};

use super::errors::GkeError;
use super::locations::{Location, check_cluster_name};
use super::pools::{PoolPlan, gke_effect, plan_pool};
use super::proto_json;
use super::schema::CREATE_CLUSTER_REQUEST;
use super::versions;
use crate::kube::cluster::ClusterSpec;

/// Fields only GKE sets; a client echoing a cluster back may send them, and GKE ignores them.
const OUTPUT_ONLY: &[&str] = &[
    "status",
    "statusMessage",
    "endpoint",
    "selfLink",
    "createTime",
    "currentMasterVersion",
    "currentNodeVersion",
    "currentNodeCount",
    "zone",
    "location",
    "id",
    "etag",
    "instanceGroupUrls",
    "expireTime",
    "conditions",
];

#[derive(Debug, Clone, PartialEq)]
pub struct ClusterPlan {
    pub spec: ClusterSpec,
    pub location: Location,
    /// The cluster as requested, in canonical form, with GKE's defaults and node pools filled in.
    pub cluster: Map<String, Value>,
}

/// Reads a `CreateClusterRequest` body for a cluster in `project` at `location`.
pub fn plan_cluster(
    project: &str,
    location: Location,
    body: Value,
) -> Result<ClusterPlan, GkeError> {
    let request = proto_json::normalise(body, CREATE_CLUSTER_REQUEST)?;
    let Some(Value::Object(mut cluster)) = request.get("cluster").cloned() else {
        return Err(GkeError::invalid("Cluster must be specified."));
    };
    for field in OUTPUT_ONLY {
        cluster.remove(*field);
    }
    let name = cluster
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if name.is_empty() {
        return Err(GkeError::invalid("Cluster.name must be specified."));
    }
    check_cluster_name(&name)?;
    let zones = cluster_zones(&cluster, &location)?;
    let pools = node_pools(&mut cluster, &location, &zones)?;
    let requested = cluster
        .get("initialClusterVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let version = versions::resolve(requested)?;
    cluster.insert("initialClusterVersion".into(), json!(version));
    cluster
        .entry("releaseChannel")
        .or_insert_with(|| json!({"channel": "REGULAR"}));
    cluster.insert("locations".into(), json!(zones));
    cluster.insert(
        "nodePools".into(),
        Value::Array(
            pools
                .iter()
                .map(|p| Value::Object(p.json.clone()))
                .collect(),
        ),
    );
    let spec = ClusterSpec {
        project: project.to_string(),
        location: location.as_str().to_string(),
        name,
        version: version.to_string(),
        node_pools: pools.into_iter().map(|p| p.spec).collect(),
    };
    Ok(ClusterPlan {
        spec,
        location,
        cluster,
    })
}

/// The zones the cluster's nodes may go to: as requested, or GKE's pick for the location.
fn cluster_zones(
    cluster: &Map<String, Value>,
    location: &Location,
) -> Result<Vec<String>, GkeError> {
    let requested: Vec<String> = cluster
        .get("locations")
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    if requested.is_empty() {
        return Ok(location.default_zones());
    }
    location.check_zones(&requested)?;
    if location.is_zone() && !requested.iter().any(|z| z == location.as_str()) {
        return Err(GkeError::invalid(format!(
            "Cluster locations must include the cluster's zone \"{}\".",
            location.as_str()
        )));
    }
    Ok(requested)
}

/// The node pools to create: those listed, or a `default-pool` from the deprecated cluster-level
/// `initialNodeCount` and `nodeConfig` (which Terraform and Pulumi still send).
fn node_pools(
    cluster: &mut Map<String, Value>,
    location: &Location,
    zones: &[String],
) -> Result<Vec<PoolPlan>, GkeError> {
    let listed: Vec<Map<String, Value>> = match cluster.remove("nodePools") {
        Some(Value::Array(items)) => items
            .into_iter()
            .filter_map(|v| v.as_object().cloned())
            .collect(),
        _ => Vec::new(),
    };
    let initial = cluster.get("initialNodeCount").and_then(Value::as_i64);
    let node_config = cluster.remove("nodeConfig");
    let requests = if listed.is_empty() {
        vec![default_pool(initial.unwrap_or(0), node_config)?]
    } else if initial.is_some() || node_config.is_some() {
        return Err(GkeError::invalid(
            "Cluster.initial_node_count and Cluster.node_config cannot be used together with \
             Cluster.node_pools.",
        ));
    } else {
        listed
    };
    let mut plans: Vec<PoolPlan> = Vec::with_capacity(requests.len());
    for request in requests {
        let mut plan = plan_pool(request, location, zones)?;
        // As a pool created on its own: autoscaling checked and filled, or left out when off.
        match super::autoscaling::checked(plan.json.get("autoscaling"))? {
            Some(settings) => plan
                .json
                .insert("autoscaling".into(), Value::Object(settings)),
            None => plan.json.remove("autoscaling"),
        };
        if plans.iter().any(|p| p.spec.name == plan.spec.name) {
            return Err(GkeError::invalid(format!(
                "Node pool names must be unique; \"{}\" is given twice.",
                plan.spec.name
            )));
        }
        plans.push(plan);
    }
    Ok(plans)
}

fn default_pool(nodes: i64, node_config: Option<Value>) -> Result<Map<String, Value>, GkeError> {
    if nodes <= 0 {
        return Err(GkeError::invalid(format!(
            "Cluster.initial_node_count must be greater than zero (got {nodes})."
        )));
    }
    let mut pool = Map::new();
    pool.insert("name".into(), json!("default-pool"));
    pool.insert("initialNodeCount".into(), json!(nodes));
    if let Some(config) = node_config {
        pool.insert("config".into(), config);
    }
    Ok(pool)
}

/// The create request that would give a cluster like `spec` (for clusters the simulator starts
/// RUNNING, so they read back like any other).
pub fn request_from_spec(spec: &ClusterSpec) -> Value {
    let pools: Vec<Value> = spec
        .node_pools
        .iter()
        .map(|pool| {
            let mut config = json!({
                "machineType": pool.machine_type,
                "diskSizeGb": pool.disk_size_gb,
                "diskType": pool.disk_type,
                "labels": pool.labels,
                "spot": pool.spot,
                "taints": pool.taints.iter().map(|(key, value, effect)| {
                    json!({"key": key, "value": value, "effect": gke_effect(effect)})
                }).collect::<Vec<_>>(),
            });
            if let Some((kind, count)) = &pool.accelerator {
                config["accelerators"] =
                    json!([{"acceleratorType": kind, "acceleratorCount": count}]);
            }
            let mut request = json!({
                "name": pool.name,
                "initialNodeCount": pool.nodes_per_zone,
                "config": config,
            });
            // A spec may give the region itself as its one "zone"; GKE then picks the zones.
            let zones_are_zones = pool.zones.iter().all(|z| z != &spec.location);
            if !pool.zones.is_empty() && zones_are_zones {
                request["locations"] = json!(pool.zones);
            }
            request
        })
        .collect();
    json!({"cluster": {
        "name": spec.name,
        "initialClusterVersion": spec.version,
        "nodePools": pools,
    }})
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn plan(location: &str, body: Value) -> Result<ClusterPlan, GkeError> {
        plan_cluster("proj", Location::parse(location).unwrap(), body)
    }

    #[test]
    fn deprecated_fields_make_a_default_pool() {
        let got = plan(
            "us-central1-a",
            json!({"cluster": {"name": "gantry", "initial_node_count": 3,
            "node_config": {"machine_type": "n1-standard-1", "oauth_scopes": [
                "https://www.googleapis.com/auth/compute"]}}}),
        )
        .unwrap();
        assert_eq!(got.spec.node_pools.len(), 1);
        let pool = &got.spec.node_pools[0];
        assert_eq!(
            (
                pool.name.as_str(),
                pool.machine_type.as_str(),
                pool.nodes_per_zone
            ),
            ("default-pool", "n1-standard-1", 3)
        );
        assert_eq!(got.cluster["initialNodeCount"], 3);
        assert_eq!(got.cluster["releaseChannel"]["channel"], "REGULAR");
        assert!(!got.cluster.contains_key("nodeConfig"));
    }

    #[test]
    fn regional_clusters_span_three_zones() {
        let got = plan(
            "us-central1",
            json!({"cluster": {"name": "r", "nodePools": [
            {"name": "a", "initialNodeCount": 2}]}}),
        )
        .unwrap();
        assert_eq!(got.spec.node_pools[0].zones.len(), 3);
        assert_eq!(got.cluster["locations"].as_array().unwrap().len(), 3);
    }

    #[test]
    fn rejects_bad_clusters() {
        let bad = [
            json!({}),
            json!({"cluster": {"initialNodeCount": 1}}),
            json!({"cluster": {"name": "Bad_Name", "initialNodeCount": 1}}),
            json!({"cluster": {"name": "c"}}),
            json!({"cluster": {"name": "c", "initialNodeCount": 0}}),
            json!({"cluster": {"name": "c", "initialNodeCount": 1, "nodePools": [{"name": "p", "initialNodeCount": 1}]}}),
            json!({"cluster": {"name": "c", "nodePools": [{"name": "p", "initialNodeCount": 1}, {"name": "p", "initialNodeCount": 1}]}}),
            json!({"cluster": {"name": "c", "initialNodeCount": 1, "locations": ["us-central1-b"]}}),
            json!({"cluster": {"name": "c", "initialNodeCount": 1, "initialClusterVersion": "1.2"}}),
        ];
        for body in bad {
            assert!(plan("us-central1-a", body.clone()).is_err(), "{body}");
        }
    }

    #[test]
    fn specs_round_trip_through_requests() {
        let mut spec = ClusterSpec::seed("proj", "us-central1-a", "seed");
        spec.node_pools[0]
            .taints
            .push(("k".into(), "v".into(), "NoSchedule".into()));
        spec.node_pools[0].accelerator = Some(("nvidia-tesla-t4".into(), 1));
        let got = plan("us-central1-a", request_from_spec(&spec)).unwrap();
        assert_eq!(got.spec, spec);
        let regional = ClusterSpec::seed("proj", "us-central1", "seed");
        let got = plan("us-central1", request_from_spec(&regional)).unwrap();
        assert_eq!(got.spec.node_pools[0].zones.len(), 3);
    }
}

//! A node pool of a create request: checked as GKE checks it, filled with GKE's defaults, and
//! turned into the `NodePoolSpec` the cluster's simulated nodes are made from.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::errors::GkeError;
use super::locations::{Location, check_node_pool_name};
use crate::kube::cluster::NodePoolSpec;
use crate::machines;

const DEFAULT_MACHINE_TYPE: &str = "e2-medium";
const DEFAULT_DISK_SIZE_GB: i64 = 100;
const MIN_DISK_SIZE_GB: i64 = 10;
/// Boot disk types a GKE node can have.
const DISK_TYPES: &[&str] = &[
    "pd-standard",
    "pd-balanced",
    "pd-ssd",
    "pd-extreme",
    "hyperdisk-balanced",
];
/// With Cloud Logging and Monitoring on (GKE's default) these scopes are what nodes get unasked.
const DEFAULT_SCOPES: [&str; 2] = [
    "https://www.googleapis.com/auth/logging.write",
    "https://www.googleapis.com/auth/monitoring",
];
const SCOPE_PREFIX: &str = "https://www.googleapis.com/auth/";

/// A node pool as GKE will report it (canonical JSON), and as the simulated nodes see it.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolPlan {
    pub json: Map<String, Value>,
    pub spec: NodePoolSpec,
}

/// Checks and completes one node pool of a cluster located at `location` with nodes in `zones`.
pub fn plan_pool(
    mut pool: Map<String, Value>,
    location: &Location,
    cluster_zones: &[String],
) -> Result<PoolPlan, GkeError> {
    let name = string_field(&pool, "name");
    if name.is_empty() {
        return Err(GkeError::invalid("Node pool name must be specified."));
    }
    check_node_pool_name(&name)?;
    let nodes = node_count(&pool, &name)?;
    let zones = match pool.get("locations") {
        Some(_) => strings(&pool, "locations"),
        None => cluster_zones.to_vec(),
    };
    location.check_zones(&zones)?;
    let mut config = match pool.remove("config") {
        Some(Value::Object(config)) => config,
        _ => Map::new(),
    };
    let machine = fill_config(&mut config, location)?;
    let spec = NodePoolSpec {
        name: name.clone(),
        machine_type: machine.name.to_string(),
        nodes_per_zone: u32::try_from(nodes).unwrap_or(0),
        zones: zones.clone(),
        accelerator: accelerator(&config),
        labels: labels(&config),
        taints: taints(&config)?,
        spot: config.get("spot").and_then(Value::as_bool).unwrap_or(false),
        disk_size_gb: config
            .get("diskSizeGb")
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or(100),
        disk_type: string_field(&config, "diskType"),
    };
    pool.insert("config".into(), Value::Object(config));
    pool.insert("initialNodeCount".into(), json!(nodes));
    pool.insert("locations".into(), json!(zones));
    Ok(PoolPlan { json: pool, spec })
}

fn string_field(map: &Map<String, Value>, key: &str) -> String {
    map.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn strings(map: &Map<String, Value>, key: &str) -> Vec<String> {
    map.get(key)
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Nodes per zone: above zero, or zero for a pool the autoscaler grows.
fn node_count(pool: &Map<String, Value>, name: &str) -> Result<i64, GkeError> {
    let nodes = pool
        .get("initialNodeCount")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let autoscaled = pool
        .get("autoscaling")
        .and_then(|a| a.get("enabled"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if nodes > 0 || (nodes == 0 && autoscaled) {
        return Ok(nodes);
    }
    Err(GkeError::invalid(format!(
        "Invalid value for field \"node_pool.initial_node_count\": {nodes} (node pool \"{name}\"). \
         Must be greater than zero."
    )))
}

/// Fills GKE's defaults into a node config and checks its machine type, disk and accelerators.
fn fill_config(
    config: &mut Map<String, Value>,
    location: &Location,
) -> Result<machines::MachineType, GkeError> {
    let machine_name = match string_field(config, "machineType") {
        m if m.is_empty() => DEFAULT_MACHINE_TYPE.to_string(),
        m => m,
    };
    let zone = location
        .default_zones()
        .into_iter()
        .next()
        .unwrap_or_default();
    let machine = machines::machine_type(&machine_name).ok_or_else(|| {
        GkeError::invalid(format!(
            "Machine type \"{machine_name}\" does not exist in zone \"{zone}\"."
        ))
    })?;
    config.insert("machineType".into(), json!(machine.name));
    let disk = config
        .get("diskSizeGb")
        .and_then(Value::as_i64)
        .unwrap_or(DEFAULT_DISK_SIZE_GB);
    if disk < MIN_DISK_SIZE_GB {
        return Err(GkeError::invalid(format!(
            "Invalid value for field \"node_config.disk_size_gb\": {disk}. Must be at least \
             {MIN_DISK_SIZE_GB}."
        )));
    }
    config.insert("diskSizeGb".into(), json!(disk));
    default_string(config, "diskType", "pd-balanced");
    let disk_type = string_field(config, "diskType");
    if !DISK_TYPES.contains(&disk_type.as_str()) {
        return Err(GkeError::invalid(format!(
            "Invalid value for field \"node_config.disk_type\": \"{disk_type}\". Must be one of {}.",
            DISK_TYPES.join(", ")
        )));
    }
    default_string(config, "imageType", "COS_CONTAINERD");
    default_string(config, "serviceAccount", "default");
    config
        .entry("metadata")
        .or_insert_with(|| json!({"disable-legacy-endpoints": "true"}));
    let scopes = match strings(config, "oauthScopes") {
        s if s.is_empty() => DEFAULT_SCOPES.iter().map(|s| s.to_string()).collect(),
        s => s.into_iter().map(|s| full_scope(&s)).collect::<Vec<_>>(),
    };
    config.insert("oauthScopes".into(), json!(scopes));
    check_accelerators(config, &machine, &zone)?;
    Ok(machine)
}

fn default_string(config: &mut Map<String, Value>, key: &str, value: &str) {
    if string_field(config, key).is_empty() {
        config.insert(key.into(), json!(value));
    }
}

/// `compute` → `https://www.googleapis.com/auth/compute`: gcloud and Terraform accept short
/// scope names and send the full URL, which is what GKE then reports.
fn full_scope(scope: &str) -> String {
    if scope.contains("://") {
        scope.to_string()
    } else {
        format!("{SCOPE_PREFIX}{scope}")
    }
}

/// Every accelerator must exist and be counted; GPU machine types get theirs listed as GKE does.
fn check_accelerators(
    config: &mut Map<String, Value>,
    machine: &machines::MachineType,
    zone: &str,
) -> Result<(), GkeError> {
    let listed = config
        .get("accelerators")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for accelerator in &listed {
        let kind = accelerator
            .get("acceleratorType")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if !machines::known_accelerator(kind) {
            return Err(GkeError::invalid(format!(
                "Accelerator type \"{kind}\" does not exist in zone \"{zone}\"."
            )));
        }
        if !machine.takes_accelerator(kind) {
            return Err(GkeError::invalid(format!(
                "Accelerator type \"{kind}\" cannot be used with machine type \"{}\": GPUs are \
                 attached to N1 machine types only; G2, A2 and A3 types come with their own.",
                machine.name
            )));
        }
        let count = accelerator
            .get("acceleratorCount")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        if count <= 0 {
            return Err(GkeError::invalid(format!(
                "Invalid value for field \"node_config.accelerators.accelerator_count\": {count}. \
                 Must be greater than zero."
            )));
        }
    }
    if let (true, Some((gpu, count))) = (listed.is_empty(), machine.gpus) {
        config.insert(
            "accelerators".into(),
            json!([{"acceleratorCount": count, "acceleratorType": gpu}]),
        );
    }
    Ok(())
}

fn accelerator(config: &Map<String, Value>) -> Option<(String, u32)> {
    let first = config.get("accelerators")?.as_array()?.first()?;
    let kind = first.get("acceleratorType")?.as_str()?.to_string();
    let count = u32::try_from(first.get("acceleratorCount")?.as_i64()?).ok()?;
    Some((kind, count))
}

fn labels(config: &Map<String, Value>) -> BTreeMap<String, String> {
    config
        .get("labels")
        .and_then(Value::as_object)
        .map(|labels| {
            labels
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

/// Taints with GKE's effect names turned into Kubernetes' (`NO_SCHEDULE` → `NoSchedule`).
fn taints(config: &Map<String, Value>) -> Result<Vec<(String, String, String)>, GkeError> {
    let Some(taints) = config.get("taints").and_then(Value::as_array) else {
        return Ok(Vec::new());
    };
    taints
        .iter()
        .map(|taint| {
            let key = taint.get("key").and_then(Value::as_str).unwrap_or_default();
            let value = taint
                .get("value")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let effect = taint
                .get("effect")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let effect = kubernetes_effect(effect)
                .filter(|_| !key.is_empty())
                .ok_or_else(|| {
                    GkeError::invalid(format!(
                        "Invalid taint {taint}: a taint needs a key and an effect."
                    ))
                })?;
            Ok((key.to_string(), value.to_string(), effect.to_string()))
        })
        .collect()
}

pub fn kubernetes_effect(gke: &str) -> Option<&'static str> {
    match gke {
        "NO_SCHEDULE" => Some("NoSchedule"),
        "PREFER_NO_SCHEDULE" => Some("PreferNoSchedule"),
        "NO_EXECUTE" => Some("NoExecute"),
        _ => None,
    }
}

pub fn gke_effect(kubernetes: &str) -> &'static str {
    match kubernetes {
        "NoSchedule" | "NO_SCHEDULE" => "NO_SCHEDULE",
        "PreferNoSchedule" | "PREFER_NO_SCHEDULE" => "PREFER_NO_SCHEDULE",
        "NoExecute" | "NO_EXECUTE" => "NO_EXECUTE",
        _ => "EFFECT_UNSPECIFIED",
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn zone() -> Location {
        Location::parse("us-central1-a").unwrap()
    }

    fn plan(pool: Value) -> Result<PoolPlan, GkeError> {
        let location = zone();
        let zones = location.default_zones();
        plan_pool(pool.as_object().cloned().unwrap(), &location, &zones)
    }

    #[test]
    fn fills_defaults() {
        let got = plan(json!({"name": "default-pool", "initialNodeCount": 3})).unwrap();
        assert_eq!(got.spec.machine_type, "e2-medium");
        assert_eq!(got.spec.nodes_per_zone, 3);
        assert_eq!(got.spec.zones, ["us-central1-a"]);
        assert_eq!(got.json["config"]["diskSizeGb"], 100);
        assert_eq!(got.json["config"]["oauthScopes"], json!(DEFAULT_SCOPES));
        assert_eq!(got.json["locations"], json!(["us-central1-a"]));
    }

    #[test]
    fn reads_gpu_taints_labels_and_scopes() {
        let got = plan(json!({"name": "gpu", "initialNodeCount": 1, "config": {
            "machineType": "n1-standard-8", "spot": true, "oauthScopes": ["compute"],
            "labels": {"team_name": "ml"},
            "accelerators": [{"acceleratorType": "nvidia-tesla-t4", "acceleratorCount": 2}],
            "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}]}}))
        .unwrap();
        assert_eq!(got.spec.accelerator, Some(("nvidia-tesla-t4".into(), 2)));
        assert_eq!(
            got.spec.taints,
            [(
                "nvidia.com/gpu".into(),
                "present".into(),
                "NoSchedule".into()
            )]
        );
        assert_eq!(
            got.spec.labels.get("team_name").map(String::as_str),
            Some("ml")
        );
        assert!(got.spec.spot);
        assert_eq!(
            got.json["config"]["oauthScopes"],
            json!(["https://www.googleapis.com/auth/compute"])
        );
    }

    #[test]
    fn gpu_machine_types_list_their_gpus() {
        let got = plan(json!({"name": "a100", "initialNodeCount": 1, "config": {"machineType": "a2-highgpu-2g"}}))
            .unwrap();
        assert_eq!(got.spec.accelerator, Some(("nvidia-tesla-a100".into(), 2)));
        assert_eq!(got.json["config"]["accelerators"][0]["acceleratorCount"], 2);
    }

    #[test]
    fn rejects_what_gke_rejects() {
        let bad = [
            json!({"name": "p", "initialNodeCount": 0}),
            json!({"name": "p", "initialNodeCount": -1}),
            json!({"name": "P", "initialNodeCount": 1}),
            json!({"initialNodeCount": 1}),
            json!({"name": "p", "initialNodeCount": 1, "config": {"machineType": "n9-huge"}}),
            json!({"name": "p", "initialNodeCount": 1, "config": {"diskSizeGb": 5}}),
            json!({"name": "p", "initialNodeCount": 1, "locations": ["us-east1-b"]}),
            json!({"name": "p", "initialNodeCount": 1, "config": {"accelerators": [{"acceleratorType": "nvidia-gtx-1080", "acceleratorCount": 1}]}}),
            json!({"name": "p", "initialNodeCount": 1, "config": {"accelerators": [{"acceleratorType": "nvidia-tesla-t4"}]}}),
            json!({"name": "p", "initialNodeCount": 1, "config": {"taints": [{"key": "k"}]}}),
            json!({"name": "p", "initialNodeCount": 1, "config": {"diskType": "floppy"}}),
            json!({"name": "p", "initialNodeCount": 1, "config": {"machineType": "e2-standard-4",
                "accelerators": [{"acceleratorType": "nvidia-tesla-t4", "acceleratorCount": 1}]}}),
            json!({"name": "p", "initialNodeCount": 1, "config": {"machineType": "n1-standard-4",
                "accelerators": [{"acceleratorType": "nvidia-l4", "acceleratorCount": 1}]}}),
        ];
        for pool in bad {
            let err = plan(pool.clone()).unwrap_err();
            assert_eq!(err.status, "INVALID_ARGUMENT", "{pool}");
        }
        assert!(
            plan(json!({"name": "auto", "initialNodeCount": 0, "autoscaling": {"enabled": true}}))
                .is_ok()
        );
    }
}

//! `UpdateNodePool`, read as GKE reads it: the fields it changes (machine type, disk type and
//! size, accelerators, Kubernetes labels and taints, resource labels, network tags, zones), the
//! pool they make (checked like a new pool), and whether the nodes must be recreated (machine and
//! disk changes), relabelled in place (labels, taints) or only added and removed (zones).

use serde_json::{Map, Value, json};

use super::clusters::ClusterRecord;
use super::errors::GkeError;
use super::node_work::Mode;
use super::pool_requests::{pool_json, pool_not_found, pool_spec, string_list};
use super::pools::plan_pool;
use crate::kube::cluster::NodePoolSpec;
use crate::machines;

/// Request fields the simulator carries out.
const HANDLED: &[&str] = &[
    "machineType",
    "diskType",
    "diskSizeGb",
    "accelerators",
    "labels",
    "taints",
    "resourceLabels",
    "tags",
    "locations",
];
/// Request fields that name the pool (or, `etag`, guard it) and change nothing.
const ADDRESSING: &[&str] = &[
    "name",
    "projectId",
    "zone",
    "clusterId",
    "nodePoolId",
    "etag",
];

/// The pool as it will be, and what its nodes go through.
#[derive(Debug, Clone)]
pub struct NextPool {
    pub json: Map<String, Value>,
    pub spec: NodePoolSpec,
    pub mode: Mode,
}

pub fn next_pool(
    record: &mut ClusterRecord,
    pool: &str,
    request: &Value,
) -> Result<NextPool, GkeError> {
    let current = pool_spec(record, pool)?.clone();
    let empty = Map::new();
    let request = request.as_object().unwrap_or(&empty);
    check_fields(record, request)?;
    let mut json = match pool_json(record, pool) {
        Some(json) => json.clone(),
        None => return Err(pool_not_found(record, pool)),
    };
    let mut config = json
        .remove("config")
        .and_then(|c| c.as_object().cloned())
        .unwrap_or_default();
    let text = |key: &str| {
        request
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let accelerators = request
        .get("accelerators")
        .and_then(Value::as_array)
        .filter(|a| !a.is_empty());
    if let Some(machine) = text("machineType") {
        let built_in = machines::machine_type(&current.machine_type).and_then(|m| m.gpus);
        if accelerators.is_none() && built_in.is_some() {
            // The old type's own GPUs go with it; the new type's are listed anew.
            config.remove("accelerators");
        }
        config.insert("machineType".into(), json!(machine));
    }
    if let Some(disk_type) = text("diskType") {
        config.insert("diskType".into(), json!(disk_type));
    }
    if let Some(size) = request
        .get("diskSizeGb")
        .and_then(Value::as_i64)
        .filter(|n| *n != 0)
    {
        config.insert("diskSizeGb".into(), json!(size));
    }
    if let Some(accelerators) = accelerators {
        config.insert("accelerators".into(), json!(accelerators));
    }
    // Each of these replaces the whole list or map; an empty one clears it.
    let inner = |key: &str, field: &str| request.get(key).map(|m| m.get(field).cloned());
    if let Some(labels) = inner("labels", "labels") {
        config.insert("labels".into(), labels.unwrap_or_else(|| json!({})));
    }
    if let Some(taints) = inner("taints", "taints") {
        config.insert("taints".into(), taints.unwrap_or_else(|| json!([])));
    }
    if let Some(labels) = inner("resourceLabels", "labels") {
        config.insert("resourceLabels".into(), labels.unwrap_or_else(|| json!({})));
    }
    if let Some(tags) = inner("tags", "tags") {
        config.insert("tags".into(), tags.unwrap_or_else(|| json!([])));
    }
    json.insert("config".into(), Value::Object(config));
    let zones = string_list(request.get("locations"));
    if !zones.is_empty() {
        json.insert("locations".into(), json!(zones));
    }
    let cluster_zones = string_list(record.cluster.get("locations"));
    let plan = plan_pool(json, &record.location, &cluster_zones)?;
    let mut spec = plan.spec;
    spec.nodes_per_zone = current.nodes_per_zone;
    let recreate = spec.machine_type != current.machine_type
        || spec.disk_size_gb != current.disk_size_gb
        || spec.disk_type != current.disk_type
        || spec.accelerator != current.accelerator;
    let relabel = spec.labels != current.labels || spec.taints != current.taints;
    let mode = match (recreate, relabel) {
        (true, _) => Mode::Recreate,
        (false, true) => Mode::Relabel,
        (false, false) => Mode::Resize,
    };
    Ok(NextPool {
        json: plan.json,
        spec,
        mode,
    })
}

/// Refuses what the simulator would otherwise silently not do.
fn check_fields(record: &ClusterRecord, request: &Map<String, Value>) -> Result<(), GkeError> {
    for key in request.keys() {
        let version_kept = key == "nodeVersion"
            && request[key]
                .as_str()
                .is_some_and(|v| v.is_empty() || v == "-" || v == record.spec.version);
        let image_kept = key == "imageType"
            && request[key]
                .as_str()
                .is_some_and(|v| v.is_empty() || v.eq_ignore_ascii_case("COS_CONTAINERD"));
        if !(HANDLED.contains(&key.as_str())
            || ADDRESSING.contains(&key.as_str())
            || version_kept
            || image_kept)
        {
            return Err(GkeError::unimplemented(format!(
                "The simulated GKE does not carry out UpdateNodePoolRequest.{key} ({}); it changes \
                 {}.",
                request[key],
                HANDLED.join(", ")
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::gke::locations::Location;
    use crate::gke::model::plan_cluster;

    fn record(pool: Value) -> ClusterRecord {
        let body = json!({"cluster": {"name": "c", "nodePools": [pool]}});
        let plan = plan_cluster("p", Location::parse("us-central1-a").unwrap(), body).unwrap();
        ClusterRecord::new(plan, "operation-1")
    }

    fn default_pool() -> ClusterRecord {
        record(json!({"name": "default-pool", "initialNodeCount": 3}))
    }

    #[test]
    fn machine_and_disk_changes_recreate_nodes_and_labels_change_them_in_place() {
        for (request, mode) in [
            (json!({"machineType": "e2-standard-2"}), Mode::Recreate),
            (json!({"diskSizeGb": 50}), Mode::Recreate),
            (json!({"diskType": "pd-ssd"}), Mode::Recreate),
            (json!({"labels": {"labels": {"team": "ml"}}}), Mode::Relabel),
            (json!({"taints": {}}), Mode::Resize),
            (
                json!({"resourceLabels": {"labels": {"a": "b"}}}),
                Mode::Resize,
            ),
        ] {
            let next = next_pool(&mut default_pool(), "default-pool", &request).unwrap();
            assert_eq!(next.mode, mode, "{request}");
            assert_eq!(next.spec.nodes_per_zone, 3, "the size stays");
        }
        let next = next_pool(
            &mut default_pool(),
            "default-pool",
            &json!({"machineType": "e2-standard-2", "diskType": "pd-ssd"}),
        )
        .unwrap();
        assert_eq!(next.spec.machine_type, "e2-standard-2");
        assert_eq!(next.json["config"]["machineType"], "e2-standard-2");
        assert_eq!(next.json["config"]["diskType"], "pd-ssd");
    }

    #[test]
    fn a_type_with_its_own_gpus_takes_them_along_when_it_goes() {
        let mut record = record(json!({"name": "a100", "initialNodeCount": 1,
            "config": {"machineType": "a2-highgpu-1g"}}));
        let next = next_pool(
            &mut record,
            "a100",
            &json!({"machineType": "n1-standard-8"}),
        )
        .unwrap();
        assert_eq!(next.spec.accelerator, None);
        assert_eq!(next.mode, Mode::Recreate);
    }

    #[test]
    fn what_gke_refuses_or_the_simulator_does_not_carry_out_is_refused() {
        let cases = [
            ("nope", json!({"machineType": "e2-standard-2"}), "NOT_FOUND"),
            (
                "default-pool",
                json!({"machineType": "n9-huge"}),
                "INVALID_ARGUMENT",
            ),
            ("default-pool", json!({"diskSizeGb": 5}), "INVALID_ARGUMENT"),
            (
                "default-pool",
                json!({"imageType": "UBUNTU_CONTAINERD"}),
                "UNIMPLEMENTED",
            ),
            (
                "default-pool",
                json!({"nodeVersion": "1.31.0-gke.1"}),
                "UNIMPLEMENTED",
            ),
        ];
        for (pool, request, status) in cases {
            let err = next_pool(&mut default_pool(), pool, &request).unwrap_err();
            assert_eq!(err.status, status, "{request}: {}", err.message);
        }
        assert!(
            next_pool(
                &mut default_pool(),
                "default-pool",
                &json!({"nodeVersion": "-"})
            )
            .is_ok()
        );
    }
}

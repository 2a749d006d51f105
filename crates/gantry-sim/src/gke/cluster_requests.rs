//! The cluster methods that change a running cluster: `update` (a `ClusterUpdate` with one
//! desired field: a node pool's autoscaling, as `gcloud container clusters update
//! --enable-autoscaling` sends it, or the cluster's zones) and `setResourceLabels`, guarded by
//! the label fingerprint as GKE guards it.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::GkeApi;
use super::autoscaling;
use super::clusters::{ClusterRecord, label_fingerprint};
use super::errors::GkeError;
use super::node_work::{self, Mode, Pace};
use super::operations::OpType;
use super::pool_requests::{self, pool_json, put_spec, string_list};
use super::proto_json;
use super::schema;
use super::updates::{self, Change};

/// `ClusterUpdate` fields the simulator carries out.
const HANDLED: &[&str] = &["desiredNodePoolAutoscaling", "desiredLocations"];
/// New zones' instances boot in parallel, old zones' go likewise.
const RELOCATE: Pace = Pace {
    setup: 20.0,
    parallel: 60.0,
    per_replacement: 0.0,
};
/// Labels are metadata: GKE takes a few seconds.
const LABELS: Pace = Pace {
    setup: 5.0,
    parallel: 0.0,
    per_replacement: 0.0,
};
/// GCP's limits on resource labels.
const MAX_LABELS: usize = 64;
const MAX_LABEL_LEN: usize = 63;

/// `PUT clusters/C`: applies the one desired field of `update`.
pub fn update(
    api: &Arc<GkeApi>,
    place: (&str, &str, &str),
    body: Value,
) -> Result<Value, GkeError> {
    let request = proto_json::normalise(body, schema::UPDATE_CLUSTER_REQUEST)?;
    let empty = Map::new();
    let update = request
        .get("update")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let desired: Vec<&String> = update
        .keys()
        .filter(|k| k.starts_with("desired") && *k != "desiredNodePoolId")
        .collect();
    let field = match desired.as_slice() {
        [one] => one.as_str(),
        [] => {
            return Err(GkeError::invalid(
                "Cluster.update must set one desired_* field: nothing to update.",
            ));
        }
        _ => {
            return Err(GkeError::invalid(
                "Exactly one update can be applied to a cluster with each request: give one \
                 desired_* field.",
            ));
        }
    };
    match field {
        "desiredNodePoolAutoscaling" => {
            let settings = autoscaling::checked(update.get(field))?;
            let pool = target_pool(api, place, update.get("desiredNodePoolId"))?;
            pool_requests::start_autoscaling(api, place, &pool, settings)
        }
        "desiredLocations" => relocate(api, place, string_list(update.get(field))),
        other => Err(GkeError::unimplemented(format!(
            "The simulated GKE does not carry out ClusterUpdate.{other}; it carries out {}.",
            HANDLED.join(" and ")
        ))),
    }
}

/// The pool an autoscaling update names, or the cluster's only one, as GKE allows.
fn target_pool(
    api: &GkeApi,
    (project, location, cluster): (&str, &str, &str),
    named: Option<&Value>,
) -> Result<String, GkeError> {
    if let Some(name) = named.and_then(Value::as_str).filter(|n| !n.is_empty()) {
        return Ok(name.to_string());
    }
    let registry = api.registry();
    let record = registry.find(project, location, cluster)?;
    match record.spec.node_pools.as_slice() {
        [only] => Ok(only.name.clone()),
        _ => Err(GkeError::invalid(
            "desired_node_pool_id must be given when the cluster has more than one node pool.",
        )),
    }
}

/// Every node pool moves to `zones`: nodes are added in new zones, drained away from old ones.
fn relocate(
    api: &Arc<GkeApi>,
    (project, location, cluster): (&str, &str, &str),
    zones: Vec<String>,
) -> Result<Value, GkeError> {
    let (started, (work, specs)) = updates::begin(api, project, location, cluster, |record| {
        if zones.is_empty() {
            return Err(GkeError::invalid(
                "desired_locations must name at least one zone.",
            ));
        }
        record.location.check_zones(&zones)?;
        if record.location.is_zone() && !zones.iter().any(|z| z == record.location.as_str()) {
            return Err(GkeError::invalid(format!(
                "Cluster locations must include the cluster's zone \"{}\".",
                record.location.as_str()
            )));
        }
        let mut work = Vec::new();
        let mut specs = Vec::new();
        for pool in &record.spec.node_pools {
            let mut desired = pool.clone();
            desired.zones = zones.clone();
            if let Some(runtime) = &record.runtime {
                work.push(node_work::plan(
                    runtime.state(),
                    &pool.name,
                    Some(&desired),
                    Mode::Resize,
                ));
            }
            specs.push(desired);
        }
        let doing = "Updating the cluster's node locations".to_string();
        let change = Change {
            op_type: OpType::UpdateCluster,
            pool: None,
            status_message: format!("{doing}."),
            stage: "CLUSTER_UPDATING",
            detail: doing,
            steps: node_work::step_count(&work),
        };
        Ok((change, (work, specs)))
    })?;
    let apply = Box::new(move |record: &mut ClusterRecord| {
        record.cluster.insert("locations".into(), json!(zones));
        for spec in specs {
            if let Some(pool) = pool_json(record, &spec.name) {
                pool.insert("locations".into(), json!(zones));
            }
            put_spec(record, spec);
        }
    });
    Ok(updates::launch(api, started, work, RELOCATE, apply))
}

/// `clusters/C:setResourceLabels`: the cluster's labels replaced, if the request quotes the
/// fingerprint of the labels it read.
pub fn set_labels(
    api: &Arc<GkeApi>,
    (project, location, cluster): (&str, &str, &str),
    body: Value,
) -> Result<Value, GkeError> {
    let request = proto_json::normalise(body, schema::SET_LABELS_REQUEST)?;
    let labels = request
        .get("resourceLabels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    check_labels(&labels)?;
    let given = request
        .get("labelFingerprint")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let (started, ()) = updates::begin(api, project, location, cluster, |record| {
        let expected = label_fingerprint(record.cluster.get("resourceLabels"));
        if given != expected {
            return Err(GkeError::failed_precondition(format!(
                "Labels could not be set due to fingerprint mismatch; try again with the proper \
                 fingerprint: incorrect fingerprint supplied was \"{given}\", the expected one is \
                 \"{expected}\"."
            )));
        }
        let doing = "Updating the cluster's labels".to_string();
        let change = Change {
            op_type: OpType::UpdateCluster,
            pool: None,
            status_message: format!("{doing}."),
            stage: "CLUSTER_UPDATING",
            detail: doing,
            steps: 1,
        };
        Ok((change, ()))
    })?;
    let apply = Box::new(move |record: &mut ClusterRecord| {
        if labels.is_empty() {
            record.cluster.remove("resourceLabels");
        } else {
            record
                .cluster
                .insert("resourceLabels".into(), Value::Object(labels));
        }
    });
    Ok(updates::launch(api, started, Vec::new(), LABELS, apply))
}

/// Google Cloud's label rules: at most 64; keys start with a lowercase letter; keys and values
/// at most 63 lowercase letters, digits, `_` and `-`.
fn check_labels(labels: &Map<String, Value>) -> Result<(), GkeError> {
    if labels.len() > MAX_LABELS {
        return Err(GkeError::invalid(format!(
            "A cluster can have at most {MAX_LABELS} labels; {} were given.",
            labels.len()
        )));
    }
    let allowed = |s: &str| {
        s.len() <= MAX_LABEL_LEN
            && s.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
    };
    for (key, value) in labels {
        let value = value.as_str().unwrap_or_default();
        let key_ok = key.starts_with(|c: char| c.is_ascii_lowercase()) && allowed(key);
        if !(key_ok && allowed(value)) {
            return Err(GkeError::invalid(format!(
                "Invalid resource label \"{key}\": \"{value}\". Keys start with a lowercase \
                 letter; keys and values have at most {MAX_LABEL_LEN} lowercase letters, digits, \
                 underscores and dashes."
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn labels_follow_google_cloud_rules() {
        let ok = json!({"team": "ml", "cost_center": "", "env-1": "prod_2"});
        assert!(check_labels(ok.as_object().unwrap()).is_ok());
        for bad in [
            json!({"Team": "ml"}),
            json!({"1team": "ml"}),
            json!({"team": "ML"}),
            json!({"team": "a b"}),
            json!({"k": "x".repeat(64)}),
        ] {
            assert!(check_labels(bad.as_object().unwrap()).is_err(), "{bad}");
        }
    }
}

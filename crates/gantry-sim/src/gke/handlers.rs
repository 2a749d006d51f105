//! What each GKE method does. Every handler answers in canonical form (enums as names, integers
//! as numbers); `routes` encodes the answer the way the client asked.

use std::sync::Arc;

use serde_json::{Value, json};

use super::GkeApi;
use super::clusters::{ClusterKey, ClusterRecord, ClusterStatus, ReportContext, render_cluster};
use super::errors::{GkeError, rpc_code};
use super::lifecycle::{self, Pace};
use super::locations::Location;
use super::model::{self, ClusterPlan};
use super::operations::{OpType, Operation};

impl GkeApi {
    fn report<T>(&self, f: impl FnOnce(&ReportContext<'_>) -> T) -> T {
        let base_url = self.base_url();
        f(&ReportContext {
            base_url: &base_url,
            ca_pem: self.shared.ca.pem(),
        })
    }
}

pub fn create_cluster(
    api: &Arc<GkeApi>,
    project: &str,
    location: &str,
    body: Value,
) -> Result<Value, GkeError> {
    let location = Location::parse(location)?;
    let plan = model::plan_cluster(project, location, body)?;
    let failure = lifecycle::planned_failure(&api.shared.faults, &plan.spec)
        .or_else(|| super::capacity::check_cluster(api, &plan.spec));
    let (key, operation) = register_create(api, plan)?;
    let answer = get_operation(api, project, &key.location, &operation)?;
    tokio::spawn(lifecycle::provision(
        api.clone(),
        key,
        operation,
        failure,
        Pace::Simulated,
    ));
    Ok(answer)
}

/// Records a new PROVISIONING cluster and its CREATE_CLUSTER operation, or 409 if the name is
/// taken in that location (whatever the cluster's status, as on GKE).
pub fn register_create(api: &GkeApi, plan: ClusterPlan) -> Result<(ClusterKey, String), GkeError> {
    let mut registry = api.registry();
    let key = ClusterKey::new(&plan.spec.project, plan.location.as_str(), &plan.spec.name);
    if registry.clusters.contains_key(&key) {
        return Err(GkeError::already_exists(format!(
            "Already exists: {}.",
            key.path()
        )));
    }
    let mut operation = Operation::new(
        &key.project,
        plan.location.clone(),
        OpType::CreateCluster,
        &key.name,
        api.stop.child_token(),
    );
    operation.begin_stage(0);
    let name = operation.name.clone();
    registry
        .clusters
        .insert(key.clone(), ClusterRecord::new(plan, &name));
    registry.operations.insert(name.clone(), operation);
    Ok((key, name))
}

pub fn get_cluster(
    api: &GkeApi,
    project: &str,
    location: &str,
    name: &str,
) -> Result<Value, GkeError> {
    let registry = api.registry();
    let record = registry.find(project, location, name)?;
    let hostile = api.shared.faults.hostile_strings();
    Ok(api.report(|ctx| poisoned(render_cluster(record, ctx), hostile)))
}

pub fn list_clusters(api: &GkeApi, project: &str, location: &str) -> Result<Value, GkeError> {
    if location != "-" {
        Location::parse(location)?;
    }
    let registry = api.registry();
    let hostile = api.shared.faults.hostile_strings();
    let clusters: Vec<Value> = api.report(|ctx| {
        registry
            .list(project, location)
            .map(|record| poisoned(render_cluster(record, ctx), hostile))
            .collect()
    });
    Ok(repeated("clusters", clusters))
}

/// A cluster's free text (its status message and its conditions') under `hostile-strings`.
fn poisoned(mut cluster: Value, hostile: bool) -> Value {
    if hostile {
        crate::hostile::poison_at(&mut cluster, &["statusMessage"], false);
        crate::hostile::poison_each(&mut cluster, &["conditions"], &["message"], false);
    }
    cluster
}

/// Proto JSON leaves empty repeated fields out, so an empty list is `{}`.
fn repeated(field: &str, items: Vec<Value>) -> Value {
    if items.is_empty() {
        json!({})
    } else {
        json!({ field: items })
    }
}

pub fn list_node_pools(
    api: &GkeApi,
    project: &str,
    location: &str,
    cluster: &str,
) -> Result<Value, GkeError> {
    let pools = get_cluster(api, project, location, cluster)?
        .get("nodePools")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    Ok(repeated("nodePools", pools))
}

pub fn get_node_pool(
    api: &GkeApi,
    project: &str,
    location: &str,
    cluster: &str,
    pool: &str,
) -> Result<Value, GkeError> {
    let pools = list_node_pools(api, project, location, cluster)?;
    pools
        .get("nodePools")
        .and_then(Value::as_array)
        .and_then(|pools| pools.iter().find(|p| p["name"] == pool).cloned())
        .ok_or_else(|| {
            GkeError::not_found(format!(
                "Not found: projects/{project}/locations/{location}/clusters/{cluster}/nodePools/{pool}."
            ))
        })
}

/// Starts deleting a cluster: 400 FAILED_PRECONDITION while another operation works on it.
pub fn delete_cluster(
    api: &Arc<GkeApi>,
    project: &str,
    location: &str,
    name: &str,
) -> Result<Value, GkeError> {
    let (key, operation) = {
        let mut registry = api.registry();
        let found = registry.find(project, location, name)?;
        registry.check_idle(found)?;
        let key = found.key();
        let record = registry
            .find_mut(&key)
            .ok_or_else(|| super::clusters::cluster_not_found(project, location, name))?;
        let mut operation = Operation::new(
            project,
            record.location.clone(),
            OpType::DeleteCluster,
            name,
            api.stop.child_token(),
        );
        operation.begin_stage(0);
        record.status = ClusterStatus::Stopping;
        record.status_message.clear();
        record.busy_with = Some(operation.name.clone());
        let op_name = operation.name.clone();
        registry.operations.insert(op_name.clone(), operation);
        (key, op_name)
    };
    api.publish_running();
    let answer = get_operation(api, project, &key.location, &operation)?;
    tokio::spawn(lifecycle::delete(api.clone(), key, operation));
    Ok(answer)
}

pub fn get_operation(
    api: &GkeApi,
    project: &str,
    location: &str,
    name: &str,
) -> Result<Value, GkeError> {
    let base_url = api.base_url();
    Ok(api
        .registry()
        .operation(project, location, name)?
        .render_with(&base_url, api.shared.faults.hostile_strings()))
}

pub fn list_operations(api: &GkeApi, project: &str, location: &str) -> Result<Value, GkeError> {
    if location != "-" {
        Location::parse(location)?;
    }
    let base_url = api.base_url();
    let hostile = api.shared.faults.hostile_strings();
    let operations: Vec<Value> = api
        .registry()
        .operations
        .values()
        .filter(|op| op.project == project && (location == "-" || op.location.as_str() == location))
        .map(|op| op.render_with(&base_url, hostile))
        .collect();
    Ok(repeated("operations", operations))
}

/// Cancels a cluster creation: the operation ends CANCELLED and the cluster is left in ERROR.
pub fn cancel_operation(
    api: &GkeApi,
    project: &str,
    location: &str,
    name: &str,
) -> Result<Value, GkeError> {
    let runtime = {
        let mut registry = api.registry();
        let operation = registry.operation(project, location, name)?;
        if operation.is_done() {
            return Err(GkeError::failed_precondition(format!(
                "Operation {name} is already done and cannot be cancelled."
            )));
        }
        if operation.op_type != OpType::CreateCluster {
            return Err(GkeError::failed_precondition(format!(
                "Operation {name} of type {} cannot be cancelled.",
                operation.op_type.name()
            )));
        }
        let key = ClusterKey::new(project, operation.location.as_str(), &operation.cluster);
        let message = "Operation was cancelled by the user.";
        if let Some(operation) = registry.operations.get_mut(name) {
            operation.finish(Some((rpc_code::CANCELLED, message.to_string())));
            operation.cancel.cancel();
        }
        registry.find_mut(&key).and_then(|record| {
            record.status = ClusterStatus::Error;
            record.status_message = format!("Cluster creation was cancelled: {message}");
            record.busy_with = None;
            record.runtime.take()
        })
    };
    if let Some(runtime) = runtime {
        runtime.shutdown();
    }
    api.publish_running();
    Ok(json!({}))
}

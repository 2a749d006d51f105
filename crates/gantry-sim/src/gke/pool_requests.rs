//! The node pool methods that change a cluster: `create`, `delete`, `setSize`, `setAutoscaling`
//! and `update`. Each is checked as GKE checks it, then runs as an operation (see `updates`)
//! whose node work keeps the cluster's Kubernetes nodes true to the pool.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::GkeApi;
use super::autoscaling;
use super::clusters::ClusterRecord;
use super::errors::GkeError;
use super::lifecycle::Failure;
use super::node_work::{self, Mode, Pace, PoolWork};
use super::operations::OpType;
use super::pools::plan_pool;
use super::proto_json;
use super::schema;
use super::updates::{self, Change};
use crate::kube::cluster::NodePoolSpec;

/// GKE's limit on nodes per zone in one pool.
const MAX_NODES_PER_ZONE: i64 = 1000;
/// Output fields a client echoing a node pool back may send; GKE ignores them.
const OUTPUT_ONLY: &[&str] = &[
    "status",
    "statusMessage",
    "selfLink",
    "instanceGroupUrls",
    "version",
    "podIpv4CidrSize",
    "etag",
    "conditions",
];
const RESIZE: Pace = Pace {
    setup: 20.0,
    parallel: 60.0,
    per_replacement: 0.0,
};
const CREATE: Pace = Pace {
    setup: 30.0,
    parallel: 70.0,
    per_replacement: 0.0,
};
/// A surge upgrade: one node at a time, about a minute and a half each.
const UPGRADE: Pace = Pace {
    setup: 30.0,
    parallel: 60.0,
    per_replacement: 90.0,
};
const SETTINGS: Pace = Pace {
    setup: 15.0,
    parallel: 0.0,
    per_replacement: 0.0,
};

pub fn pool_not_found(record: &ClusterRecord, pool: &str) -> GkeError {
    GkeError::not_found(format!(
        "Not found: {}/nodePools/{pool}.",
        record.key().path()
    ))
}

/// The pool as the nodes see it.
pub fn pool_spec<'a>(record: &'a ClusterRecord, pool: &str) -> Result<&'a NodePoolSpec, GkeError> {
    record
        .spec
        .node_pools
        .iter()
        .find(|p| p.name == pool)
        .ok_or_else(|| pool_not_found(record, pool))
}

/// The pool as GKE reports it (before output fields are added).
pub fn pool_json<'a>(
    record: &'a mut ClusterRecord,
    pool: &str,
) -> Option<&'a mut Map<String, Value>> {
    record
        .cluster
        .get_mut("nodePools")?
        .as_array_mut()?
        .iter_mut()
        .filter_map(Value::as_object_mut)
        .find(|p| p.get("name").and_then(Value::as_str) == Some(pool))
}

/// Puts a pool's spec in place of the one of the same name, or adds it.
pub fn put_spec(record: &mut ClusterRecord, spec: NodePoolSpec) {
    match record
        .spec
        .node_pools
        .iter_mut()
        .find(|p| p.name == spec.name)
    {
        Some(slot) => *slot = spec,
        None => record.spec.node_pools.push(spec),
    }
}

/// The node work of a pool as it stands on the cluster's Kubernetes side.
pub fn work_for(
    record: &ClusterRecord,
    pool: &str,
    desired: Option<&NodePoolSpec>,
    mode: Mode,
) -> Vec<PoolWork> {
    match &record.runtime {
        Some(runtime) => vec![node_work::plan(runtime.state(), pool, desired, mode)],
        None => Vec::new(),
    }
}

/// An operation on one pool, which reports `pool_status` meanwhile.
fn change(
    op_type: OpType,
    stage: &'static str,
    (pool, pool_status): (&str, &'static str),
    doing: String,
    work: &[PoolWork],
) -> Change {
    Change {
        op_type,
        pool: Some((pool.to_string(), pool_status)),
        status_message: format!("{doing}."),
        stage,
        detail: doing,
        steps: node_work::step_count(work),
    }
}

/// `nodePools/P:setSize`: P gets `nodeCount` nodes in each of its zones.
pub fn set_size(
    api: &Arc<GkeApi>,
    (project, location, cluster): (&str, &str, &str),
    pool: &str,
    body: Value,
) -> Result<Value, GkeError> {
    let request = proto_json::normalise(body, schema::SET_NODE_POOL_SIZE_REQUEST)?;
    let count = request
        .get("nodeCount")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if !(0..=MAX_NODES_PER_ZONE).contains(&count) {
        return Err(GkeError::invalid(format!(
            "Invalid value for field \"node_count\": {count}. Must be from 0 to \
             {MAX_NODES_PER_ZONE} (nodes in each zone of the pool)."
        )));
    }
    let (started, (work, desired)) = updates::begin(api, project, location, cluster, |record| {
        let mut desired = pool_spec(record, pool)?.clone();
        desired.nodes_per_zone = u32::try_from(count).unwrap_or(0);
        let work = work_for(record, pool, Some(&desired), Mode::Resize);
        let doing = format!("Resizing node pool {pool} to {count} nodes per zone");
        let change = change(
            OpType::SetNodePoolSize,
            "NODE_POOL_RESIZING",
            (pool, "RECONCILING"),
            doing,
            &work,
        );
        Ok((change, (work, desired)))
    })?;
    // GKE keeps `initialNodeCount` as created: the size lives in the instance groups, whose
    // target stays the one asked for even when Compute Engine cannot make every instance.
    let target = desired.clone();
    let apply = Box::new(move |record: &mut ClusterRecord| put_spec(record, desired));
    let on_failure =
        Box::new(move |record: &mut ClusterRecord, _: &Failure| put_spec(record, target));
    Ok(updates::launch_checked(
        api, started, work, RESIZE, apply, on_failure,
    ))
}

/// `nodePools/P:setAutoscaling`: P's autoscaling settings; no node changes.
pub fn set_autoscaling(
    api: &Arc<GkeApi>,
    (project, location, cluster): (&str, &str, &str),
    pool: &str,
    body: Value,
) -> Result<Value, GkeError> {
    let request = proto_json::normalise(body, schema::SET_NODE_POOL_AUTOSCALING_REQUEST)?;
    let settings = autoscaling::checked(request.get("autoscaling"))?;
    start_autoscaling(api, (project, location, cluster), pool, settings)
}

/// Changes a pool's autoscaling settings (for `setAutoscaling` and `UpdateCluster`).
pub fn start_autoscaling(
    api: &Arc<GkeApi>,
    (project, location, cluster): (&str, &str, &str),
    pool: &str,
    settings: Option<Map<String, Value>>,
) -> Result<Value, GkeError> {
    let (started, ()) = updates::begin(api, project, location, cluster, |record| {
        pool_spec(record, pool)?;
        let doing = format!("Updating autoscaling of node pool {pool}");
        let change = change(
            OpType::UpdateCluster,
            "CLUSTER_UPDATING",
            (pool, "RECONCILING"),
            doing,
            &[],
        );
        Ok((change, ()))
    })?;
    let pool = pool.to_string();
    let apply = Box::new(move |record: &mut ClusterRecord| {
        if let Some(json) = pool_json(record, &pool) {
            match settings {
                Some(settings) => json.insert("autoscaling".into(), Value::Object(settings)),
                None => json.remove("autoscaling"),
            };
        }
    });
    Ok(updates::launch(api, started, Vec::new(), SETTINGS, apply))
}

/// `POST clusters/C/nodePools`: a new pool, its nodes added as its instances boot.
pub fn create(
    api: &Arc<GkeApi>,
    (project, location, cluster): (&str, &str, &str),
    body: Value,
) -> Result<Value, GkeError> {
    let request = proto_json::normalise(body, schema::CREATE_NODE_POOL_REQUEST)?;
    let Some(Value::Object(mut pool)) = request.get("nodePool").cloned() else {
        return Err(GkeError::invalid("Node pool must be specified."));
    };
    for field in OUTPUT_ONLY {
        pool.remove(*field);
    }
    let (started, (work, spec)) = updates::begin(api, project, location, cluster, |record| {
        let name = pool.get("name").and_then(Value::as_str).unwrap_or_default();
        if pool_spec(record, name).is_ok() {
            return Err(GkeError::already_exists(format!(
                "Already exists: {}/nodePools/{name}.",
                record.key().path()
            )));
        }
        let zones = string_list(record.cluster.get("locations"));
        let mut plan = plan_pool(pool, &record.location, &zones)?;
        if let Some(settings) = autoscaling::checked(plan.json.get("autoscaling"))? {
            plan.json
                .insert("autoscaling".into(), Value::Object(settings));
        } else {
            plan.json.remove("autoscaling");
        }
        let name = plan.spec.name.clone();
        let work = work_for(record, &name, Some(&plan.spec), Mode::Resize);
        let doing = format!("Creating node pool {name}");
        let change = change(
            OpType::CreateNodePool,
            "NODE_POOL_CREATING",
            (&name, "PROVISIONING"),
            doing,
            &work,
        );
        if let Some(Value::Array(pools)) = record.cluster.get_mut("nodePools") {
            pools.push(Value::Object(plan.json));
        } else {
            record
                .cluster
                .insert("nodePools".into(), json!([plan.json]));
        }
        Ok((change, (work, plan.spec)))
    })?;
    let failed = spec.clone();
    let apply = Box::new(move |record: &mut ClusterRecord| put_spec(record, spec));
    // The pool stays, in ERROR with the failure as its statusMessage, until it is deleted.
    let on_failure = Box::new(move |record: &mut ClusterRecord, failure: &Failure| {
        if let Some(json) = pool_json(record, &failed.name) {
            json.insert("statusMessage".into(), json!(failure.message));
        }
        put_spec(record, failed);
    });
    Ok(updates::launch_checked(
        api, started, work, CREATE, apply, on_failure,
    ))
}

/// `DELETE clusters/C/nodePools/P`: every node of P drained away, then P is gone.
pub fn delete(
    api: &Arc<GkeApi>,
    (project, location, cluster): (&str, &str, &str),
    pool: &str,
) -> Result<Value, GkeError> {
    let (started, work) = updates::begin(api, project, location, cluster, |record| {
        pool_spec(record, pool)?;
        let work = work_for(record, pool, None, Mode::Resize);
        let doing = format!("Deleting node pool {pool}");
        let change = change(
            OpType::DeleteNodePool,
            "NODE_POOL_DELETING",
            (pool, "STOPPING"),
            doing,
            &work,
        );
        Ok((change, work))
    })?;
    let pool = pool.to_string();
    let apply = Box::new(move |record: &mut ClusterRecord| {
        record.spec.node_pools.retain(|p| p.name != pool);
        if let Some(Value::Array(pools)) = record.cluster.get_mut("nodePools") {
            pools.retain(|p| p["name"] != pool.as_str());
        }
    });
    Ok(updates::launch(api, started, work, RESIZE, apply))
}

pub fn string_list(value: Option<&Value>) -> Vec<String> {
    value
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

/// `nodePools/P` (PUT) or `nodePools/P/update`: what changes and how is `pool_update`'s.
pub fn update(
    api: &Arc<GkeApi>,
    (project, location, cluster): (&str, &str, &str),
    pool: &str,
    body: Value,
) -> Result<Value, GkeError> {
    let request = proto_json::normalise(body, schema::UPDATE_NODE_POOL_REQUEST)?;
    let (started, (work, next)) = updates::begin(api, project, location, cluster, |record| {
        let next = super::pool_update::next_pool(record, pool, &request)?;
        let work = work_for(record, pool, Some(&next.spec), next.mode);
        let doing = format!("Updating node pool {pool}");
        let change = change(
            OpType::UpgradeNodes,
            "NODES_UPGRADING",
            (pool, "RECONCILING"),
            doing,
            &work,
        );
        Ok((change, (work, next)))
    })?;
    let pool = pool.to_string();
    let apply = Box::new(move |record: &mut ClusterRecord| {
        if let Some(json) = pool_json(record, &pool) {
            *json = next.json;
        }
        put_spec(record, next.spec);
    });
    Ok(updates::launch(api, started, work, UPGRADE, apply))
}

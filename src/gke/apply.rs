//! Making a plan so: the changes the Container API can make on the cluster as it is, one
//! operation at a time (GKE runs one per cluster), each followed to its end with the same
//! [`ProvisionEvent`]s a create shows. What would take a new pool in place of one or a new cluster
//! is left as it is and handed back, with [`what_it_takes`] to say so.
//!
//! The plan applied is the one the operator saw, not one computed afresh: nothing is changed that
//! was not shown. Values come from the config (the same request a create would send), so a pool
//! added here is the pool `gantry up` would have made with the cluster.
//!
//! The order keeps the cluster usable and cheap on the way: pools the config adds come first (so
//! pods have somewhere to go), then each existing pool is resized and updated — shrunk before its
//! nodes are recreated, grown after, so fewer nodes are recreated —, then the labels, and pools the
//! config no longer names go last.

use std::collections::BTreeMap;

use google_cloud_container_v1::model::{NodePool, Operation};
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;

use super::client::PoolUpdate;
use super::events::OperationKind;
use super::plan::{Change, How, Plan};
use super::provision::follow;
use super::{ClusterRef, Gke, GkeError, PollPolicy, ProvisionEvent, spec};
use crate::config::ClusterConfig;

/// What [`apply`] made of the plan.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Applied {
    /// Made, in the order they were made.
    pub done: Vec<Change>,
    /// Not made on this cluster (a new cluster, or a new pool in place of one): left as it is.
    pub left: Vec<Change>,
}

/// Applies the changes of `plan` (the one the operator saw) that can be made on this cluster:
/// In place and RecreateNodes ones, and a pool the config has and the cluster lacks
/// (CreateNodePool). One operation at a time (GKE allows one per cluster), each followed to its
/// end with the same ProvisionEvents `up` prints (the cluster shows RECONCILING meanwhile).
/// `left`: what it cannot make (new-cluster; spot, which takes a replacement pool) — changed nothing.
pub async fn apply(
    gke: &Gke,
    target: &ClusterRef,
    config: &ClusterConfig,
    plan: &Plan,
    poll: PollPolicy,
    events: &UnboundedSender<ProvisionEvent>,
) -> Result<Applied, GkeError> {
    let Steps { steps, left } = steps(config, plan)?;
    if steps.is_empty() {
        return Ok(Applied {
            done: Vec::new(),
            left,
        });
    }
    // An operation still running (a resize someone started, an update that outlived its Gantry)
    // would make GKE refuse the first request: it is followed to its end first.
    for op in gke.running_operations(target).await? {
        let _ = events.send(ProvisionEvent::Resumed {
            kind: OperationKind::Update,
            operation: op.name.clone(),
        });
        Box::pin(follow(
            gke,
            target,
            OperationKind::Update,
            &op.name,
            poll,
            events,
        ))
        .await?;
    }
    let mut done = Vec::new();
    for (step, changes) in steps {
        let op = Box::pin(send(gke, target, &step)).await?;
        let _ = events.send(ProvisionEvent::Started {
            kind: OperationKind::Update,
            operation: op.name.clone(),
        });
        Box::pin(follow(
            gke,
            target,
            OperationKind::Update,
            &op.name,
            poll,
            events,
        ))
        .await?;
        done.extend(changes);
    }
    Ok(Applied { done, left })
}

/// What a change left by [`apply`] would take, for the operator to choose: "spot for pool
/// gpu-pool: needs a new node pool; create one with spot and delete gpu-pool, or recreate the
/// cluster with `gantry down` then `gantry up`".
pub fn what_it_takes(change: &Change) -> String {
    const RECREATE: &str = "recreate the cluster with `gantry down` then `gantry up`";
    match (&change.pool, change.how) {
        (Some(pool), How::NewPool) => format!(
            "{} for pool {pool}: needs a new node pool; create one with {} and delete {pool}, or {RECREATE}",
            change.field,
            setting(&change.field, &change.desired)
        ),
        (Some(pool), _) => format!(
            "{} for pool {pool}: UpdateNodePool cannot take it away; create a pool without it and delete {pool}, or {RECREATE}",
            change.field
        ),
        (None, _) => format!(
            "{} {} → {}: needs a new cluster; {RECREATE}",
            change.field,
            shown(&change.current),
            shown(&change.desired)
        ),
    }
}

/// "spot", "no spot", "machineType e2-medium".
fn setting(field: &str, value: &Value) -> String {
    match value {
        Value::Bool(true) => field.to_string(),
        Value::Bool(false) => format!("no {field}"),
        other => format!("{field} {}", shown(other)),
    }
}

fn shown(value: &Value) -> String {
    match value {
        Value::Null => "(none)".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// One request to the Container API.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    /// `CreateNodePool`: the pool as a create of the whole cluster would have made it.
    CreatePool(Box<NodePool>),
    /// `UpdateNodePool`: every field of the pool that changes, in one request.
    UpdatePool { pool: String, update: PoolUpdate },
    /// `SetNodePoolSize`: nodes per zone.
    Resize { pool: String, nodes: i32 },
    /// `SetNodePoolAutoscaling`: on within these bounds (nodes per zone), or off (None).
    Autoscaling {
        pool: String,
        bounds: Option<(i32, i32)>,
    },
    /// `SetLabels`: these labels set, the cluster's others kept.
    Labels(BTreeMap<String, String>),
    /// `DeleteNodePool`.
    DeletePool(String),
}

/// The requests that make the plan, in order, each with the changes it makes; and the rest.
#[derive(Debug, Default)]
struct Steps {
    steps: Vec<(Step, Vec<Change>)>,
    left: Vec<Change>,
}

/// Which requests make which of the plan's changes, in the order they are sent. Pure.
fn steps(config: &ClusterConfig, plan: &Plan) -> Result<Steps, GkeError> {
    let request = spec::cluster_request(config)?;
    let configured = |name: &str| request.node_pools.iter().find(|p| p.name == name);
    let mut out = Steps::default();
    let mut creates = Vec::new();
    let mut deletes = Vec::new();
    let mut labels: Vec<&Change> = Vec::new();
    // Existing pools in the order the plan lists them, each with its changes.
    let mut pools: Vec<(&str, Vec<&Change>)> = Vec::new();
    for change in &plan.changes {
        let pool = change.pool.as_deref();
        match (pool, change.field.as_str(), change.how) {
            (_, _, How::NewCluster) | (Some(_), "spot", _) => out.left.push(change.clone()),
            (Some(name), "nodePool", How::NewPool) => match configured(name) {
                Some(p) => creates.push((Step::CreatePool(Box::new(p.clone())), change)),
                None => out.left.push(change.clone()),
            },
            (Some(name), "nodePool", _) => deletes.push((Step::DeletePool(name.into()), change)),
            // Accelerators can be set or changed, not taken away: an empty list leaves them.
            (Some(_), "accelerators", _) if change.desired.is_null() => {
                out.left.push(change.clone());
            }
            (Some(name), _, _) => match pools.iter_mut().find(|(n, _)| *n == name) {
                Some((_, changes)) => changes.push(change),
                None => pools.push((name, vec![change])),
            },
            (None, field, _) if field.starts_with("labels.") => labels.push(change),
            (None, _, _) => out.left.push(change.clone()),
        }
    }
    for (step, change) in creates {
        out.steps.push((step, vec![change.clone()]));
    }
    for (name, changes) in pools {
        let pool = configured(name);
        let resize = changes.iter().find(|c| c.field == "nodeCount");
        let autoscaling = changes.iter().find(|c| c.field == "autoscaling").map(|c| {
            let bound = |key: &str| c.desired[key].as_u64().and_then(|n| i32::try_from(n).ok());
            let bounds = bound("minNodes").zip(bound("maxNodes"));
            (
                Step::Autoscaling {
                    pool: name.into(),
                    bounds,
                },
                vec![(*c).clone()],
            )
        });
        let shrinking = resize.is_some_and(|c| c.desired.as_u64() < c.current.as_u64());
        let mut update = PoolUpdate::default();
        let mut updated = Vec::new();
        let config = pool.and_then(|p| p.config.as_ref());
        for change in changes
            .iter()
            .filter(|c| c.field != "nodeCount" && c.field != "autoscaling")
        {
            let Some(config) = config else {
                out.left.push((*change).clone());
                continue;
            };
            match change.field.as_str() {
                "machineType" => update.machine_type = Some(config.machine_type.clone()),
                "diskType" => update.disk_type = Some(config.disk_type.clone()),
                "diskSizeGb" => update.disk_size_gb = Some(i64::from(config.disk_size_gb)),
                "accelerators" => update.accelerators = Some(config.accelerators.clone()),
                _ => {
                    out.left.push((*change).clone());
                    continue;
                }
            }
            updated.push((*change).clone());
        }
        let resize = match resize {
            Some(change) => {
                let nodes = change
                    .desired
                    .as_u64()
                    .and_then(|n| i32::try_from(n).ok())
                    .ok_or_else(|| {
                        GkeError::BadInput(format!(
                            "{} nodes for pool {name}: not a node count",
                            change.desired
                        ))
                    })?;
                let step = Step::Resize {
                    pool: name.into(),
                    nodes,
                };
                Some((step, vec![(*change).clone()]))
            }
            None => None,
        };
        let update = (!update.is_empty()).then(|| {
            let step = Step::UpdatePool {
                pool: name.into(),
                update,
            };
            (step, updated)
        });
        let (first, second) = if shrinking {
            (resize, update)
        } else {
            (update, resize)
        };
        // The autoscaler's bounds last: the count it starts from is then the one planned.
        out.steps
            .extend(first.into_iter().chain(second).chain(autoscaling));
    }
    if !labels.is_empty() {
        let wanted = labels
            .iter()
            .filter_map(|c| {
                let key = c.field.strip_prefix("labels.")?;
                Some((key.to_string(), c.desired.as_str()?.to_string()))
            })
            .collect();
        let changes = labels.into_iter().cloned().collect();
        out.steps.push((Step::Labels(wanted), changes));
    }
    for (step, change) in deletes {
        out.steps.push((step, vec![change.clone()]));
    }
    Ok(out)
}

/// Sends one step's request; its operation is for the caller to follow.
async fn send(gke: &Gke, target: &ClusterRef, step: &Step) -> Result<Operation, GkeError> {
    match step {
        Step::CreatePool(pool) => gke.create_node_pool(target, pool).await,
        Step::UpdatePool { pool, update } => gke.update_node_pool(target, pool, update).await,
        Step::Resize { pool, nodes } => gke.set_node_pool_size(target, pool, *nodes).await,
        Step::Autoscaling { pool, bounds } => {
            gke.set_node_pool_autoscaling(target, pool, *bounds).await
        }
        Step::DeletePool(pool) => gke.delete_node_pool(target, pool).await,
        Step::Labels(wanted) => {
            // SetLabels replaces them all: the cluster's own (other tools', Gantry's) are kept,
            // and the fingerprint of those read makes GKE refuse if they changed meanwhile.
            let cluster = gke
                .get_cluster(target)
                .await?
                .ok_or_else(|| GkeError::NotFound {
                    cluster: target.to_string(),
                })?;
            let mut labels: BTreeMap<String, String> = cluster
                .resource_labels
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            labels.extend(wanted.iter().map(|(k, v)| (k.clone(), v.clone())));
            gke.set_labels(target, &labels, &cluster.label_fingerprint)
                .await
        }
    }
}

#[cfg(test)]
#[path = "apply_tests.rs"]
mod tests;

//! Operations that change a running cluster (its node pools, labels, control plane). GKE runs one
//! operation at a time per cluster; while it runs the cluster is RECONCILING, the pool it works
//! on says what is happening to it, and the Kubernetes API server keeps serving. The registry's
//! record of the cluster changes when the operation ends.

use std::future::Future;
use std::sync::Arc;

use serde_json::Value;

use super::GkeApi;
use super::clusters::{ClusterKey, ClusterRecord, ClusterStatus};
use super::errors::GkeError;
use super::lifecycle::Failure;
use super::node_work::{self, Pace, PoolWork};
use super::operations::{OpType, Operation};
use crate::kube::cluster::ClusterRuntime;

/// What an operation about to start is and says.
#[derive(Debug, Clone)]
pub struct Change {
    pub op_type: OpType,
    /// The node pool it works on and the status that pool reports meanwhile.
    pub pool: Option<(String, &'static str)>,
    /// The cluster's `statusMessage` while it runs.
    pub status_message: String,
    /// Its one progress stage: name, `detail`, and how many steps it counts.
    pub stage: &'static str,
    pub detail: String,
    pub steps: i64,
}

/// A started operation, for the work that carries it out.
#[derive(Debug)]
pub struct Started {
    pub key: ClusterKey,
    pub operation: String,
    pub runtime: Option<Arc<ClusterRuntime>>,
    /// The operation as the request is answered with it.
    pub answer: Value,
}

/// How a record is changed when its operation ends.
pub type Apply = Box<dyn FnOnce(&mut ClusterRecord) + Send>;
/// How a record is changed when its operation fails.
pub type OnFailure = Box<dyn FnOnce(&mut ClusterRecord, &Failure) + Send>;

/// Starts an operation on a cluster: 404 for an unknown cluster, 400 FAILED_PRECONDITION while
/// another operation runs or when the cluster is not RUNNING. Then `change` checks the request
/// against the record (it may refuse, and must not change the record before it is sure) and says
/// what the operation is, with what the work needs later.
pub fn begin<T>(
    api: &GkeApi,
    project: &str,
    location: &str,
    cluster: &str,
    change: impl FnOnce(&mut ClusterRecord) -> Result<(Change, T), GkeError>,
) -> Result<(Started, T), GkeError> {
    let (key, name, runtime, extra) = {
        let mut registry = api.registry();
        let record = registry.find(project, location, cluster)?;
        registry.check_idle(record)?;
        if record.status != ClusterStatus::Running {
            return Err(GkeError::failed_precondition(format!(
                "Cluster {cluster} is {}: it must be RUNNING to be changed.",
                record.status.name()
            )));
        }
        let key = record.key();
        let Some(record) = registry.find_mut(&key) else {
            return Err(super::clusters::cluster_not_found(
                project, location, cluster,
            ));
        };
        let (change, extra) = change(record)?;
        let mut operation = Operation::new(
            project,
            record.location.clone(),
            change.op_type,
            &key.name,
            api.stop.child_token(),
        )
        .with_stage(change.stage, change.detail.clone(), change.steps);
        if let Some((pool, _)) = &change.pool {
            operation = operation.on_pool(pool);
        }
        operation.begin_stage(0);
        let name = operation.name.clone();
        record.status = ClusterStatus::Reconciling;
        record.status_message = change.status_message;
        record.busy_with = Some(name.clone());
        record.pool_work = change.pool;
        let runtime = record.runtime.clone();
        registry.operations.insert(name.clone(), operation);
        (key, name, runtime, extra)
    };
    let answer = super::handlers::get_operation(api, &key.project, &key.location, &name)?;
    Ok((
        Started {
            key,
            operation: name,
            runtime,
            answer,
        },
        extra,
    ))
}

/// Runs `work`, then ends the operation: the record is changed by `apply` and the cluster is
/// RUNNING again. Nothing changes if the simulator stops first.
pub async fn finish_after(
    api: Arc<GkeApi>,
    key: ClusterKey,
    operation: String,
    work: impl Future<Output = ()>,
    apply: Apply,
) {
    let work = async {
        work.await;
        Ok(())
    };
    finish_checked(api, key, operation, work, apply, Box::new(|_, _| {})).await;
}

/// As `finish_after`, for work that may fail: then the operation ends with the failure as its
/// error, the record is changed by `on_failure` instead, and the cluster is RUNNING again.
pub async fn finish_checked(
    api: Arc<GkeApi>,
    key: ClusterKey,
    operation: String,
    work: impl Future<Output = Result<(), Failure>>,
    apply: Apply,
    on_failure: OnFailure,
) {
    let Some(cancel) = api.operation_cancel(&operation) else {
        return;
    };
    let outcome = tokio::select! {
        _ = cancel.cancelled() => return,
        outcome = work => outcome,
    };
    {
        let mut registry = api.registry();
        let error = outcome.as_ref().err().map(|f| (f.code, f.message.clone()));
        match registry.operations.get_mut(&operation) {
            Some(op) if !op.is_done() => op.finish(error),
            _ => return,
        }
        if let Some(record) = registry.find_mut(&key) {
            match outcome {
                Ok(()) => apply(record),
                Err(failure) => on_failure(record, &failure),
            }
            if record.status == ClusterStatus::Reconciling {
                record.status = ClusterStatus::Running;
            }
            record.status_message.clear();
            record.busy_with = None;
            record.pool_work = None;
        }
    }
    api.publish_running();
}

/// Runs an operation's node work in the background, then ends it with `apply`; answers with
/// the operation as it started.
pub fn launch(
    api: &Arc<GkeApi>,
    started: Started,
    work: Vec<PoolWork>,
    pace: Pace,
    apply: Apply,
) -> Value {
    launch_checked(api, started, work, pace, apply, Box::new(|_, _| {}))
}

/// As `launch`, with what the record becomes if an instance cannot be made.
pub fn launch_checked(
    api: &Arc<GkeApi>,
    started: Started,
    work: Vec<PoolWork>,
    pace: Pace,
    apply: Apply,
    on_failure: OnFailure,
) -> Value {
    let state = started.runtime.as_ref().map(|r| r.state().clone());
    let nodes = node_work::run(api.clone(), started.operation.clone(), state, work, pace);
    tokio::spawn(finish_checked(
        api.clone(),
        started.key,
        started.operation,
        nodes,
        apply,
        on_failure,
    ));
    started.answer
}

/// Sleeps a simulated delay, then counts a step of the operation's stage.
pub async fn step(api: &GkeApi, operation: &str, simulated_secs: f64) {
    api.shared.clock.sleep_secs(simulated_secs).await;
    api.update_operation(operation, |op| op.step(0));
}

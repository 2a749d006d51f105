//! A cluster's life: PROVISIONING through the create stages to RUNNING (or ERROR), and STOPPING
//! through the delete stages to gone. Each runs as a task that moves its operation along.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::GkeApi;
use super::clusters::{ClusterKey, ClusterStatus};
use super::errors::{GkeError, rpc_code};
use super::operations::{
    CONTROL_PLANE_STAGE, CREATE_STAGES, DELETE_STAGES, FAILING_STAGE, Operation,
};
use crate::faults::Faults;
use crate::kube::cluster::{ClusterRuntime, ClusterSpec};
use crate::machines;

/// How a create fails under an injected fault: a google.rpc.Status for its operation.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub code: i32,
    pub message: String,
}

/// Whether stages take their simulated time, or none (a cluster the simulator starts with).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pace {
    Simulated,
    Instant,
}

/// The failure the faults in force at request time hold for this cluster's creation.
pub fn planned_failure(faults: &Faults, spec: &ClusterSpec) -> Option<Failure> {
    if faults.gke_quota() {
        return Some(Failure {
            code: rpc_code::RESOURCE_EXHAUSTED,
            message: quota_message(spec),
        });
    }
    faults.gke_create_error().map(|message| Failure {
        code: rpc_code::INTERNAL,
        message,
    })
}

/// GKE's wording when the region's CPU quota is one short of the cluster's nodes.
fn quota_message(spec: &ClusterSpec) -> String {
    let cpus: u64 = spec
        .node_pools
        .iter()
        .map(|pool| {
            let vcpus =
                machines::machine_type(&pool.machine_type).map_or(1, |m| u64::from(m.vcpus));
            vcpus * u64::from(pool.nodes_per_zone) * pool.zones.len() as u64
        })
        .sum();
    let quota = cpus.saturating_sub(1);
    format!(
        "Insufficient regional quota to satisfy request: resource \"CPUS\": request requires \
         '{cpus}.0' and is short '1.0'. project has a quota of '{quota}.0' with '{quota}.0' \
         available. View and manage quotas at \
         https://console.cloud.google.com/iam-admin/quotas?usage=USED&project={}.",
        spec.project
    )
}

/// Sleeps a stage step; false if the operation was cancelled meanwhile.
async fn pause(api: &GkeApi, pace: Pace, secs: f64, cancel: &CancellationToken) -> bool {
    if pace == Pace::Instant {
        return !cancel.is_cancelled();
    }
    tokio::select! {
        _ = cancel.cancelled() => false,
        _ = api.shared.clock.sleep_secs(secs) => true,
    }
}

impl GkeApi {
    /// Changes an operation still in progress; a cancelled one is left as the cancel left it.
    pub(super) fn update_operation(&self, name: &str, change: impl FnOnce(&mut Operation)) -> bool {
        match self.registry().operations.get_mut(name) {
            Some(op) if !op.is_done() => {
                change(op);
                true
            }
            _ => false,
        }
    }

    /// The operation's cancel token, to wait on without holding the lock.
    pub(super) fn operation_cancel(&self, name: &str) -> Option<CancellationToken> {
        self.registry()
            .operations
            .get(name)
            .map(|op| op.cancel.clone())
    }
}

/// Runs a create operation to its end. Err carries the failure the operation ended with.
pub async fn provision(
    api: Arc<GkeApi>,
    key: ClusterKey,
    operation: String,
    failure: Option<Failure>,
    pace: Pace,
) -> Result<(), GkeError> {
    let Some(cancel) = api.operation_cancel(&operation) else {
        return Err(GkeError::internal("the create operation vanished"));
    };
    for (index, stage) in CREATE_STAGES.iter().enumerate() {
        api.update_operation(&operation, |op| op.begin_stage(index));
        if index == FAILING_STAGE
            && let Some(failure) = &failure
        {
            end_create(&api, &key, &operation, Some(failure.clone()));
            return Err(GkeError::internal(failure.message.clone()));
        }
        for _ in 0..stage.steps {
            if !pause(&api, pace, stage.secs / stage.steps as f64, &cancel).await {
                return Err(cancelled());
            }
            api.update_operation(&operation, |op| op.step(index));
        }
        if index == CONTROL_PLANE_STAGE {
            start_control_plane(&api, &key, &operation).await?;
        }
        api.update_operation(&operation, |op| op.finish_stage(index));
    }
    end_create(&api, &key, &operation, None);
    super::reconcile::after_running(&api, &key);
    Ok(())
}

fn cancelled() -> GkeError {
    GkeError::failed_precondition("the create operation was cancelled")
}

/// Starts the cluster's Kubernetes API server; from now on it has an endpoint.
async fn start_control_plane(
    api: &Arc<GkeApi>,
    key: &ClusterKey,
    operation: &str,
) -> Result<(), GkeError> {
    let Some(spec) = api.registry().clusters.get(key).map(|c| c.spec.clone()) else {
        return Err(cancelled());
    };
    let runtime = match ClusterRuntime::start(spec, api.shared.clone(), 0).await {
        Ok(runtime) => Arc::new(runtime),
        Err(e) => {
            let message = format!("Failed to start the cluster's control plane: {e}");
            end_create(
                api,
                key,
                operation,
                Some(Failure {
                    code: rpc_code::INTERNAL,
                    message: message.clone(),
                }),
            );
            return Err(GkeError::internal(message));
        }
    };
    let still_wanted = {
        let mut registry = api.registry();
        // `shutdown` cancels `stop` before it takes the lock to collect runtimes, so checking
        // under the lock means this runtime is either refused here or collected there.
        let op_running = !api.stop.is_cancelled()
            && registry
                .operations
                .get(operation)
                .is_some_and(|op| !op.is_done());
        match registry.find_mut(key) {
            Some(record) if op_running => {
                record.runtime = Some(runtime.clone());
                true
            }
            _ => false,
        }
    };
    if !still_wanted {
        // Cancelled (or the simulator stopped) while the API server was starting.
        runtime.shutdown();
        return Err(cancelled());
    }
    super::autoscaler::start(api.clone(), key.clone(), runtime.state().clone());
    super::preemption::start(api.clone(), key.clone(), runtime.state().clone());
    Ok(())
}

/// Ends a create: RUNNING, or ERROR with the failure's message (its API server shut down).
fn end_create(api: &GkeApi, key: &ClusterKey, operation: &str, failure: Option<Failure>) {
    let error = failure.map(|f| (f.code, f.message));
    let runtime = {
        let mut registry = api.registry();
        match registry.operations.get_mut(operation) {
            Some(op) if !op.is_done() => op.finish(error.clone()),
            _ => return,
        }
        let Some(record) = registry.find_mut(key) else {
            return;
        };
        record.busy_with = None;
        match error {
            None => {
                record.status = ClusterStatus::Running;
                None
            }
            Some((_, message)) => {
                record.status = ClusterStatus::Error;
                record.status_message = message;
                record.runtime.take()
            }
        }
    };
    if let Some(runtime) = runtime {
        runtime.shutdown();
    }
    api.publish_running();
}

/// Runs a delete operation to its end: the cluster is gone and its API server shut down.
pub async fn delete(api: Arc<GkeApi>, key: ClusterKey, operation: String) {
    let Some(cancel) = api.operation_cancel(&operation) else {
        return;
    };
    for (index, stage) in DELETE_STAGES.iter().enumerate() {
        api.update_operation(&operation, |op| op.begin_stage(index));
        for _ in 0..stage.steps {
            if !pause(
                &api,
                Pace::Simulated,
                stage.secs / stage.steps as f64,
                &cancel,
            )
            .await
            {
                return;
            }
            api.update_operation(&operation, |op| op.step(index));
        }
        api.update_operation(&operation, |op| op.finish_stage(index));
    }
    let runtime = {
        let mut registry = api.registry();
        if let Some(op) = registry.operations.get_mut(&operation) {
            op.finish(None);
        }
        registry
            .clusters
            .remove(&key)
            .and_then(|record| record.runtime)
    };
    if let Some(runtime) = runtime {
        runtime.shutdown();
    }
    api.publish_running();
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::faults::Fault;

    #[test]
    fn quota_message_counts_the_cpus() {
        let spec = ClusterSpec::seed("proj", "us-central1-a", "c");
        let faults = Faults::new(vec![Fault::GkeQuota]);
        let failure = planned_failure(&faults, &spec).unwrap();
        assert_eq!(failure.code, 8);
        assert!(failure.message.starts_with(
            "Insufficient regional quota to satisfy request: resource \"CPUS\": request requires '3.0' and is short '1.0'"
        ), "{}", failure.message);
        assert!(failure.message.contains("project=proj"));
    }

    #[test]
    fn create_error_uses_its_message() {
        let spec = ClusterSpec::seed("proj", "us-central1-a", "c");
        let faults = Faults::new(vec![Fault::GkeCreateError("boom".into())]);
        assert_eq!(
            planned_failure(&faults, &spec),
            Some(Failure {
                code: 13,
                message: "boom".into()
            })
        );
        assert_eq!(planned_failure(&Faults::default(), &spec), None);
    }
}

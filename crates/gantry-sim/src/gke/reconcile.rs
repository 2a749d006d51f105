//! The `reconcile` fault: a cluster that has become RUNNING stays so for the fault's period, then
//! reconciles once for as long, as GKE does when it auto-upgrades a control plane: the cluster
//! RECONCILING with a status message, an UPGRADE_MASTER operation listed while it lasts, and the
//! Kubernetes API server serving throughout (watches and log streams go on). The period is
//! wall-clock time, like every fault's, whatever `--time-scale` says.

use std::sync::Arc;
use std::time::Duration;

use super::GkeApi;
use super::clusters::{ClusterKey, ClusterStatus};
use super::operations::OpType;
use super::updates::{self, Change, Started};

/// Steps the operation's progress counts through the period.
const STEPS: u32 = 4;
/// How soon a cluster busy with another operation is looked at again.
const RETRY: Duration = Duration::from_millis(50);

/// Schedules the fault's reconciling period for a cluster that has just become RUNNING, if the
/// fault is in force.
pub fn after_running(api: &Arc<GkeApi>, key: &ClusterKey) {
    let Some(period) = api.shared.faults.reconcile() else {
        return;
    };
    let (api, key) = (api.clone(), key.clone());
    tokio::spawn(async move {
        let stop = api.stop.clone();
        let mut wait = period;
        loop {
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tokio::time::sleep(wait) => {}
            }
            match try_begin(&api, &key) {
                Attempt::Started(started) => {
                    run(api, started, period).await;
                    return;
                }
                // GKE waits for the running operation before it upgrades.
                Attempt::Busy => wait = RETRY,
                Attempt::Gone => return,
            }
        }
    });
}

enum Attempt {
    Started(Started),
    Busy,
    Gone,
}

fn try_begin(api: &GkeApi, key: &ClusterKey) -> Attempt {
    let busy = match api.registry().clusters.get(key) {
        None => return Attempt::Gone,
        Some(record) if !record.status.serves() => return Attempt::Gone,
        Some(record) => record.busy_with.is_some() || record.status != ClusterStatus::Running,
    };
    if busy {
        return Attempt::Busy;
    }
    let change = Change {
        op_type: OpType::UpgradeMaster,
        pool: None,
        status_message: "Upgrading cluster master.".to_string(),
        stage: "MASTER_UPGRADING",
        detail: "Upgrading cluster master".to_string(),
        steps: i64::from(STEPS),
    };
    match updates::begin(api, &key.project, &key.location, &key.name, |_| {
        Ok((change, ()))
    }) {
        Ok((started, ())) => Attempt::Started(started),
        Err(_) => Attempt::Busy,
    }
}

async fn run(api: Arc<GkeApi>, started: Started, period: Duration) {
    let operation = started.operation.clone();
    let worker = api.clone();
    let work = async move {
        for _ in 0..STEPS {
            tokio::time::sleep(period / STEPS).await;
            worker.update_operation(&operation, |op| op.step(0));
        }
    };
    updates::finish_after(api, started.key, started.operation, work, Box::new(|_| {})).await;
}

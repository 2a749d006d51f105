//! Worlds, settings and times the policies' tests start from: no engine, no tokio, no
//! simulator — a world folded from the reports a test writes, as the owner would fold them.

use std::time::Instant;

use jiff::Timestamp;
use serde_json::{Value, json};

use super::{Doing, Settings};
use crate::engine::Report;
use crate::engine::clock::Now;
use crate::engine::world::World;
use crate::k8s::status::{AttemptSummary, PodSummary};
use crate::k8s::watch::{Change, JobWatchEvent};

pub use crate::engine::world::fixtures::{hold_lease, model_with};

/// The run every fixture attempt belongs to.
pub const RUN: &str = "20261205-100000-abcdef";

/// 2026-12-05T10:00:00Z plus `secs`.
pub fn at(secs: i64) -> Timestamp {
    Timestamp::from_second(1_796_464_800 + secs).unwrap_or_default()
}

/// `at(secs)` as the policies are handed it.
pub fn now(secs: i64) -> Now {
    Now {
        wall: at(secs),
        mono: Instant::now(),
    }
}

/// A world whose cluster API is reachable.
pub fn connected() -> World {
    let mut world = World::default();
    world.apply(Report::Connected);
    world
}

/// Attempt `name`: number `number` of the Job and `run_attempt` of run [`RUN`], `completions`
/// pods, `recoveries` made in the run; `status` its Job status.
pub fn attempt(
    name: &str,
    number: u32,
    run_attempt: u32,
    recoveries: u32,
    completions: u32,
    status: Value,
) -> AttemptSummary {
    AttemptSummary::of(
        &serde_json::from_value(json!({
            "metadata": {"name": name, "creationTimestamp": at(0).to_string(),
                "labels": {"gantry.dev/attempt": number.to_string(), "gantry.dev/run": RUN},
                "annotations": {"gantry.dev/run-attempt": run_attempt.to_string(),
                    "gantry.dev/recoveries": recoveries.to_string()}},
            "spec": {"completions": completions, "completionMode": "Indexed",
                "template": {"spec": {"containers": [{"name": "c"}]}}},
            "status": status,
        }))
        .unwrap_or_default(),
    )
}

/// A pod of `job` at rank `index`, as its object says (`status`).
pub fn pod(job: &str, index: u32, status: Value) -> PodSummary {
    PodSummary::of(
        &serde_json::from_value(json!({
            "metadata": {"name": format!("{job}-{index}-abcde"), "namespace": "default",
                "creationTimestamp": at(0).to_string(),
                "labels": {"job-name": job,
                    "batch.kubernetes.io/job-completion-index": index.to_string()},
                "annotations": {"batch.kubernetes.io/job-completion-index": index.to_string()}},
            "spec": {"nodeName": "gke-node-1", "containers": [{"name": "c"}]},
            "status": status,
        }))
        .unwrap_or_default(),
    )
}

/// A running pod's status, running since `at(secs)`.
pub fn running_since(secs: i64) -> Value {
    json!({"phase": "Running", "containerStatuses": [{"name": "c", "ready": true,
        "restartCount": 0, "image": "i", "imageID": "",
        "state": {"running": {"startedAt": at(secs).to_string()}}}]})
}

/// A preempted pod's status: its spot node shut down at `at(secs)`.
pub fn preempted_at(secs: i64) -> Value {
    json!({"phase": "Failed",
        "conditions": [{"type": "DisruptionTarget", "status": "True",
            "reason": "TerminationByKubelet", "lastTransitionTime": at(secs).to_string()}],
        "containerStatuses": [{"name": "c", "ready": false, "restartCount": 0, "image": "i",
            "imageID": "", "state": {"terminated": {"exitCode": 143, "reason": "Error",
            "startedAt": at(0).to_string(), "finishedAt": at(secs).to_string()}}}]})
}

/// Folds the attempt in.
pub fn see_attempt(world: &mut World, attempt: AttemptSummary) {
    world.apply(Report::Job(JobWatchEvent::Job(Change::Applied(attempt))));
}

/// Folds the pod in.
pub fn see_pod(world: &mut World, pod: PodSummary) {
    world.apply(Report::Job(JobWatchEvent::Pod(Change::Applied(pod))));
}

/// Nothing under way.
pub fn idle_doing() -> Doing {
    Doing::default()
}

/// The seed's settings.
pub fn settings() -> Settings {
    Settings::default()
}

/// The world metered: a GKE cluster Gantry manages, RUNNING since `at(0)` with three
/// n1-standard-1 nodes a watch listed then, so a run's cost grows at the nodes' price and the
/// fee (≈ $0.2837 an hour in us-central1).
pub fn metered(world: &mut World) {
    use crate::engine::TargetInfo;
    use crate::gke::summary::PoolSummary;
    use crate::gke::{ClusterRef, ClusterStatus, ClusterSummary};
    use crate::meter::NodeSeen;
    world.apply(Report::Target(TargetInfo {
        place: "demo-project/us-central1-a".into(),
        cluster: "ml-gke-cluster".into(),
        managed: true,
        unmanaged_reason: None,
        simulated: false,
    }));
    let target = ClusterRef::new("demo-project", "us-central1-a", "ml-gke-cluster");
    world.apply(Report::Cluster(ClusterSummary {
        status: ClusterStatus::Running,
        node_pools: vec![PoolSummary::running("default-pool", "n1-standard-1", 3)],
        create_time: Some(at(0)),
        ..ClusterSummary::not_found(&target, "n1-standard-1")
    }));
    let node = |name: &str| {
        NodeSeen::of(
            &serde_json::from_value(json!({"metadata": {
                "name": name, "uid": format!("uid-{name}"),
                "creationTimestamp": at(0).to_string(),
                "labels": {"cloud.google.com/gke-nodepool": "default-pool",
                    "node.kubernetes.io/instance-type": "n1-standard-1",
                    "topology.kubernetes.io/region": "us-central1"}}}))
            .unwrap_or_default(),
        )
    };
    let seen = |world: &mut World, change| {
        world.apply(Report::Node { change, at: at(0) });
    };
    seen(world, Change::Restarted);
    for name in ["a", "b", "c"] {
        seen(world, Change::Listed(node(name)));
    }
    seen(world, Change::Synced);
}

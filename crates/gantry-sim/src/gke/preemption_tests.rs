//! The `preempt` fault on a running simulated cluster at a time scale of 1/1000 (the 30 s
//! shutdown grace is its 500 ms floor, the node's recreation 60 ms): Spot nodes reclaimed while
//! a Job trains on them, what a reclaim leaves in the pods, nodes and events, and the Job's pod
//! failure policy sparing it the reclaims. The changes are followed as they happen (the pod
//! garbage collector deletes a reclaimed node's pods), every wait bounded.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::broadcast::error::RecvError;

use super::IMPENDING_TERMINATION_TAINT;
use crate::faults::Fault;
use crate::kube::cluster::ClusterState;
use crate::kube::lifecycle;
use crate::kube::resources::Kind;
use crate::kube::store::ChangeType;
use crate::test_support::{self, PATIENCE, condition, events};

const SCALE: f64 = 0.001;

/// The `preempt` fault every 50 ms, `count` times.
fn preempt(count: u64) -> Vec<Fault> {
    vec![Fault::Preempt {
        every: std::time::Duration::from_millis(50),
        count,
    }]
}

/// One Spot node of n1-standard-4, with these faults.
async fn spot_cluster(faults: Vec<Fault>) -> Arc<ClusterState> {
    let pools = json!([{"name": "spot-pool", "initialNodeCount": 1,
        "config": {"machineType": "n1-standard-4", "spot": true}}]);
    test_support::cluster(test_support::shared(SCALE, faults), pools)
        .await
        .1
}

/// A Job `train` whose pod trains for 1000 simulated seconds (a second of real time here).
fn create_job(state: &ClusterState, backoff_limit: u64, policy: Value) {
    let mut spec = json!({"backoffLimit": backoff_limit,
        "template": {"spec": {"restartPolicy": "Never", "containers": [
            {"name": "main", "image": "gcr.io/p/train:v1", "env": [
                {"name": "SIM_LOG_LINES", "value": "1000"},
                {"name": "SIM_LINES_PER_SECOND", "value": "1"}]}]}}});
    if !policy.is_null() {
        spec["podFailurePolicy"] = policy;
    }
    let job = json!({"metadata": {"name": "train"}, "spec": spec});
    lifecycle::create(state, Kind::Job, Some("default"), job).unwrap();
}

/// What the cluster went through while the Job ran.
struct Seen {
    job: Value,
    /// Each pod as it was when it ended Failed, by name.
    failed: BTreeMap<String, Value>,
    /// Every Node that registered after the Job was made.
    registered: Vec<Value>,
    /// Each node that had the notice, as it was last before it went, by uid.
    noticed: BTreeMap<String, Value>,
}

/// Makes the Job, then follows the cluster's changes until the Job finishes (at most
/// `PATIENCE`).
async fn run_job(state: &ClusterState, backoff_limit: u64, policy: Value) -> Seen {
    let mut changes = state.store.subscribe();
    create_job(state, backoff_limit, policy);
    let mut seen = Seen {
        job: Value::Null,
        failed: BTreeMap::new(),
        registered: Vec::new(),
        noticed: BTreeMap::new(),
    };
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let change = match tokio::time::timeout_at(deadline, changes.recv()).await {
            Err(_) => panic!("the Job did not finish within {PATIENCE:?}"),
            Ok(Err(RecvError::Closed)) => panic!("the cluster stopped"),
            Ok(Err(RecvError::Lagged(n))) => panic!("missed {n} changes"),
            Ok(Ok(change)) => change,
        };
        let object = &change.object;
        match (change.kind, change.change) {
            (Kind::Pod, ChangeType::Modified) if object["status"]["phase"] == "Failed" => {
                let name = object["metadata"]["name"].as_str().unwrap().to_string();
                seen.failed
                    .entry(name)
                    .or_insert_with(|| (**object).clone());
            }
            (Kind::Node, ChangeType::Added) => seen.registered.push((**object).clone()),
            (Kind::Node, ChangeType::Modified) => {
                let noticed = object["spec"]["taints"]
                    .as_array()
                    .is_some_and(|ts| ts.iter().any(|t| t["key"] == IMPENDING_TERMINATION_TAINT));
                if noticed {
                    let uid = object["metadata"]["uid"].as_str().unwrap().to_string();
                    seen.noticed.insert(uid, (**object).clone());
                }
            }
            (Kind::Job, _)
                if condition(object, "Complete").is_some()
                    || condition(object, "Failed").is_some() =>
            {
                seen.job = (**object).clone();
                return seen;
            }
            _ => {}
        }
    }
}

fn condition_of(pod: &Value, kind: &str) -> Value {
    pod["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == kind))
        .cloned()
        .unwrap_or(Value::Null)
}

#[tokio::test]
async fn a_job_that_ignores_disruptions_completes_through_two_reclaims_of_its_spot_node() {
    let state = spot_cluster(preempt(2)).await;
    let first_node = crate::kube::nodes::of_pool(&state, "spot-pool")[0]
        .name
        .clone();
    let policy =
        json!({"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]});
    let seen = run_job(&state, 0, policy).await;

    assert!(condition(&seen.job, "Complete").is_some(), "{}", seen.job);
    assert!(seen.job["status"].get("failed").is_none(), "{}", seen.job);
    assert_eq!(state.shared.faults.times_fired("preempt"), 2);
    assert_eq!(seen.failed.len(), 2, "{:?}", seen.failed.keys());
    for pod in seen.failed.values() {
        let target = condition_of(pod, "DisruptionTarget");
        assert_eq!(target["status"], "True");
        assert_eq!(target["reason"], "TerminationByKubelet");
        assert_eq!(
            target["message"],
            "Pod was terminated in response to imminent node shutdown."
        );
        assert_eq!(pod["status"]["reason"], "Terminated");
        assert_eq!(pod["status"]["message"], target["message"]);
    }
    // The node went twice and its instance group brought it back each time, same name and pool.
    assert_eq!(seen.registered.len(), 2);
    for node in &seen.registered {
        assert_eq!(node["metadata"]["name"], first_node.as_str());
        let labels = &node["metadata"]["labels"];
        assert_eq!(labels["cloud.google.com/gke-spot"], "true");
        assert_eq!(labels["cloud.google.com/gke-nodepool"], "spot-pool");
    }
    assert_ne!(
        seen.registered[0]["metadata"]["uid"],
        seen.registered[1]["metadata"]["uid"]
    );
    assert_eq!(events(&state, &first_node, "RemovingNode").len(), 2);
}

#[tokio::test]
async fn a_reclaim_leaves_what_graceful_node_shutdown_leaves_and_counts_without_a_policy() {
    let state = spot_cluster(preempt(1)).await;
    let node_name = crate::kube::nodes::of_pool(&state, "spot-pool")[0]
        .name
        .clone();
    let seen = run_job(&state, 6, Value::Null).await;

    assert!(condition(&seen.job, "Complete").is_some(), "{}", seen.job);
    assert_eq!(
        seen.job["status"]["failed"], 1,
        "a reclaim counts without a policy"
    );
    let (name, pod) = seen.failed.iter().next().unwrap();
    let main = &pod["status"]["containerStatuses"][0];
    assert_eq!(main["state"]["terminated"]["exitCode"], 143);
    assert_eq!(main["state"]["terminated"]["reason"], "Error");
    assert_eq!(condition_of(pod, "Ready")["status"], "False");
    let killing = events(&state, name, "Killing");
    assert_eq!(killing[0]["message"], "Stopping container main");

    assert_eq!(seen.noticed.len(), 1);
    let node = seen.noticed.values().next().unwrap();
    let ready = node["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "Ready")
        .unwrap();
    assert_eq!(
        (&ready["status"], &ready["reason"], &ready["message"]),
        (
            &json!("False"),
            &json!("KubeletNotReady"),
            &json!("node is shutting down")
        )
    );
    let taints: Vec<(&str, &str)> = node["spec"]["taints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["key"].as_str().unwrap(), t["effect"].as_str().unwrap()))
        .collect();
    assert!(
        taints.contains(&(IMPENDING_TERMINATION_TAINT, "NoSchedule")),
        "{taints:?}"
    );
    assert!(
        taints.contains(&("node.kubernetes.io/not-ready", "NoSchedule")),
        "{taints:?}"
    );
    let shutdown = events(&state, &node_name, "NodeShutdown");
    assert_eq!(
        shutdown[0]["message"],
        "Shutdown manager detected shutdown event"
    );
    assert_eq!(shutdown[0]["source"]["component"], "kubelet");
    let not_ready = events(&state, &node_name, "NodeNotReady");
    assert_eq!(
        not_ready[0]["message"],
        format!("Node {node_name} status is now: NodeNotReady")
    );
    assert!(!events(&state, &node_name, "RegisteredNode").is_empty());
}

#[tokio::test]
async fn a_reclaim_under_hostile_strings_still_kills_the_pods_a_policy_ignores() {
    let state = spot_cluster(preempt(1)).await;
    state.shared.faults.set(Fault::HostileStrings);
    let policy =
        json!({"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]});
    let seen = run_job(&state, 0, policy).await;
    assert!(condition(&seen.job, "Complete").is_some(), "{}", seen.job);
    assert_eq!(state.shared.faults.times_fired("preempt"), 1);
    let pod = seen.failed.values().next().unwrap();
    let target = condition_of(pod, "DisruptionTarget");
    assert_eq!(target["reason"], "TerminationByKubelet");
    assert!(
        target["message"]
            .as_str()
            .unwrap()
            .starts_with(crate::hostile::HOSTILE)
    );
}

#[tokio::test]
async fn a_reclaimed_node_waits_for_capacity_to_come_back_and_its_pods_are_collected_meanwhile() {
    let mut faults = preempt(1);
    faults.push(Fault::Stockout {
        pool: "spot-pool".into(),
        room: 0,
    });
    let state = spot_cluster(faults).await;
    let node = crate::kube::nodes::of_pool(&state, "spot-pool")[0]
        .name
        .clone();
    let policy =
        json!({"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]});
    create_job(&state, 0, policy);
    let first = test_support::until(&state, "a reclaimed pod", |s| {
        let (pods, _) = s.store.list(Kind::Pod, Some("default"), |p| {
            p["status"]["reason"] == "Terminated"
        });
        pods.first()
            .map(|p| p["metadata"]["name"].as_str().unwrap().to_string())
    })
    .await;
    test_support::until(&state, "the reclaimed pod collected", |s| {
        s.store
            .get(Kind::Pod, "default", &first)
            .is_none()
            .then_some(())
    })
    .await;
    assert!(
        state.store.get(Kind::Node, "", &node).is_none(),
        "no capacity, no node"
    );
    // Asked for at the stop, before the collector's quarantine began.
    assert!(state.shared.faults.times_fired("stockout") > 0);
    state.shared.faults.clear();
    let job = test_support::until(&state, "the Job complete", |s| {
        let job = s.store.get(Kind::Job, "default", "train")?;
        condition(&job, "Complete").map(|_| (*job).clone())
    })
    .await;
    assert!(job["status"].get("failed").is_none(), "{job}");
    assert!(
        state.store.get(Kind::Node, "", &node).is_some(),
        "the node is back"
    );
}

/// The pod of this name once `probe` holds for it.
async fn pod_when(state: &ClusterState, name: &str, probe: impl Fn(&Value) -> bool) -> Value {
    test_support::until(state, name, |s| {
        let pod = s.store.get(Kind::Pod, "default", name)?;
        probe(&pod).then(|| (*pod).clone())
    })
    .await
}

#[tokio::test]
async fn a_shutting_down_node_fails_a_pod_that_never_started_and_rejects_one_that_comes_late() {
    let state = spot_cluster(Vec::new()).await;
    let node = crate::kube::nodes::of_pool(&state, "spot-pool")[0]
        .name
        .clone();
    let stuck = json!({"metadata": {"name": "stuck"}, "spec": {"restartPolicy": "Never",
        "containers": [{"name": "main", "image": "gcr.io/p/does-not-exist:v1"}]}});
    lifecycle::create(&state, Kind::Pod, Some("default"), stuck).unwrap();
    pod_when(&state, "stuck", |p| {
        p.pointer("/status/containerStatuses/0/state/waiting")
            .is_some()
            && p.pointer("/spec/nodeName").is_some()
    })
    .await;
    assert!(crate::kube::node_shutdown::begin(&state, &node));
    let pod = pod_when(&state, "stuck", |p| p["status"]["phase"] == "Failed").await;
    assert_eq!(
        pod["status"]["containerStatuses"][0]["state"]["terminated"],
        json!({"exitCode": 137, "reason": "ContainerStatusUnknown",
            "message": "The container could not be located when the pod was terminated"})
    );
    assert_eq!(
        condition_of(&pod, "DisruptionTarget")["reason"],
        "TerminationByKubelet"
    );

    let late = json!({"metadata": {"name": "late"}, "spec": {"nodeName": node,
        "restartPolicy": "Never", "containers": [{"name": "main", "image": "gcr.io/p/train:v1"}]}});
    lifecycle::create(&state, Kind::Pod, Some("default"), late).unwrap();
    let pod = pod_when(&state, "late", |p| p["status"]["phase"] == "Failed").await;
    assert_eq!(pod["status"]["reason"], "NodeShutdown");
    assert_eq!(
        pod["status"]["message"],
        "Pod was rejected: Pod was rejected as the node is shutting down."
    );
    let rejected = events(&state, "late", "NodeShutdown");
    assert_eq!(rejected[0]["type"], "Warning");
}

#[tokio::test]
async fn nodes_that_are_not_spot_are_never_reclaimed() {
    let fault = Fault::Preempt {
        every: std::time::Duration::from_millis(20),
        count: 5,
    };
    let pools = json!([{"name": "default-pool", "initialNodeCount": 1,
        "config": {"machineType": "n1-standard-4"}}]);
    let (_, state) = test_support::cluster(test_support::shared(SCALE, vec![fault]), pools).await;
    let seen = run_job(&state, 0, Value::Null).await;
    assert!(condition(&seen.job, "Complete").is_some(), "{}", seen.job);
    assert_eq!(state.shared.faults.times_fired("preempt"), 0);
    assert!(seen.failed.is_empty());
}

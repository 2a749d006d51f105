//! The Job controller on a running simulated cluster (one plain node, time scale 1/1000): a pod
//! failure policy fails a Job at its first matching pod, or spares it a failure it ignores.
//! Every wait is for a change in the cluster's store, bounded.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};

use crate::kube::cluster::ClusterState;
use crate::kube::lifecycle;
use crate::kube::resources::Kind;
use crate::test_support::{self, condition, events, until};

async fn one_node_cluster() -> std::sync::Arc<ClusterState> {
    let pools = json!([{"name": "default-pool", "initialNodeCount": 1,
        "config": {"machineType": "n1-standard-4"}}]);
    test_support::cluster(test_support::shared(0.001, Vec::new()), pools)
        .await
        .1
}

/// A Job `train` of one container `main` with this environment, backoffLimit and policy.
fn create_job(state: &ClusterState, env: Value, backoff_limit: u64, rules: Value) -> Value {
    let job = json!({"metadata": {"name": "train"},
        "spec": {"backoffLimit": backoff_limit, "podFailurePolicy": {"rules": rules},
            "template": {"spec": {"restartPolicy": "Never", "containers": [
                {"name": "main", "image": "gcr.io/p/train:v1", "env": env}]}}}});
    (*lifecycle::create(state, Kind::Job, Some("default"), job).unwrap()).clone()
}

/// The Job once it has a terminal condition.
async fn finished(state: &ClusterState) -> Value {
    until(state, "a finished Job", |s| {
        let job = s.store.get(Kind::Job, "default", "train")?;
        (condition(&job, "Complete").is_some() || condition(&job, "Failed").is_some())
            .then(|| (*job).clone())
    })
    .await
}

fn pods_made(state: &ClusterState) -> Vec<String> {
    events(state, "train", "SuccessfulCreate")
        .iter()
        .map(|e| {
            e["message"]
                .as_str()
                .unwrap()
                .trim_start_matches("Created pod: ")
                .to_string()
        })
        .collect()
}

#[tokio::test]
async fn a_fail_job_rule_on_exit_code_3_fails_the_job_at_its_first_pod() {
    let state = one_node_cluster().await;
    let env = json!([{"name": "SIM_EXIT_CODE", "value": "3"},
        {"name": "SIM_LOG_LINES", "value": "5"}, {"name": "SIM_LINES_PER_SECOND", "value": "0"}]);
    let rules = json!([{"action": "FailJob",
        "onExitCodes": {"containerName": "main", "operator": "In", "values": [3]}}]);
    create_job(&state, env, 6, rules);
    let job = finished(&state).await;
    let pods = pods_made(&state);
    assert_eq!(pods.len(), 1, "no pod after the first: {pods:?}");
    let message = format!(
        "Container main for pod default/{} failed with exit code 3 matching FailJob rule at index 0",
        pods[0]
    );
    for kind in ["FailureTarget", "Failed"] {
        let c = condition(&job, kind).unwrap_or_else(|| panic!("no {kind}: {job}"));
        assert_eq!(c["reason"], "PodFailurePolicy");
        assert_eq!(c["message"], message.as_str());
    }
    assert_eq!(job["status"]["failed"], 1);
    let event = &events(&state, "train", "PodFailurePolicy")[0];
    assert_eq!(
        (&event["type"], &event["message"]),
        (&json!("Warning"), &json!(message))
    );
}

#[tokio::test]
async fn an_ignored_failure_is_not_counted_and_its_pod_is_replaced() {
    let state = one_node_cluster().await;
    // The Job's first pod fails with exit code 1, the next succeeds.
    let env = json!([{"name": "SIM_FAIL_ATTEMPTS", "value": "1"},
        {"name": "SIM_LOG_LINES", "value": "5"}, {"name": "SIM_LINES_PER_SECOND", "value": "0"}]);
    let rules = json!([{"action": "Ignore", "onExitCodes": {"operator": "In", "values": [1]}}]);
    create_job(&state, env, 0, rules);
    let job = finished(&state).await;
    assert!(condition(&job, "Complete").is_some(), "{job}");
    assert!(job["status"].get("failed").is_none(), "{job}");
    assert_eq!(job["status"]["succeeded"], 1);
    assert_eq!(pods_made(&state).len(), 2);
}

#[tokio::test]
async fn a_counted_failure_past_the_backoff_limit_fails_the_job_as_without_a_policy() {
    let state = one_node_cluster().await;
    let env = json!([{"name": "SIM_EXIT_CODE", "value": "2"},
        {"name": "SIM_LOG_LINES", "value": "5"}, {"name": "SIM_LINES_PER_SECOND", "value": "0"}]);
    let rules = json!([{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [3]}}]);
    create_job(&state, env, 0, rules);
    let job = finished(&state).await;
    let failed = condition(&job, "Failed").unwrap();
    assert_eq!(failed["reason"], "BackoffLimitExceeded");
    assert_eq!(job["status"]["failed"], 1);
}

#[tokio::test]
async fn a_job_suspended_while_it_runs_has_its_pods_deleted_uncounted_and_says_so() {
    let state = one_node_cluster().await;
    let env = json!([{"name": "SIM_LOG_LINES", "value": "100000"},
        {"name": "SIM_LINES_PER_SECOND", "value": "1"}]);
    create_job(&state, env, 6, json!([]));
    let pod = until(&state, "a running pod", |s| {
        let (pods, _) = s.store.list(Kind::Pod, Some("default"), |p| {
            p["status"]["phase"] == "Running"
        });
        pods.into_iter().next()
    })
    .await;
    state
        .store
        .update(Kind::Job, "default", "train", |j| {
            j["spec"]["suspend"] = json!(true)
        })
        .unwrap();
    let name = pod["metadata"]["name"].as_str().unwrap().to_string();
    until(&state, "the pod gone", |s| {
        s.store
            .get(Kind::Pod, "default", &name)
            .is_none()
            .then_some(())
    })
    .await;
    assert_eq!(events(&state, "train", "Suspended").len(), 1);
    assert_eq!(pods_made(&state), vec![name], "no pod made in its place");
    let job = state.store.get(Kind::Job, "default", "train").unwrap();
    let suspended = condition(&job, "Suspended").unwrap();
    assert_eq!(
        (&suspended["status"], &suspended["reason"]),
        (&json!("True"), &json!("JobSuspended"))
    );
    assert!(job["status"]["failed"].is_null(), "{}", job["status"]);
    assert!(condition(&job, "Failed").is_none());
    // Resumed, it makes its pod again and says so.
    state
        .store
        .update(Kind::Job, "default", "train", |j| {
            j["spec"]["suspend"] = json!(false)
        })
        .unwrap();
    until(&state, "a pod made again", |s| {
        (pods_made(s).len() == 2).then_some(())
    })
    .await;
    let job = state.store.get(Kind::Job, "default", "train").unwrap();
    let resumed = job["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "Suspended")
        .unwrap();
    assert_eq!(
        (&resumed["status"], &resumed["reason"]),
        (&json!("False"), &json!("JobResumed"))
    );
    assert_eq!(events(&state, "train", "Resumed").len(), 1);
}

//! The `reconcile` fault seen from clients: a RUNNING cluster goes RECONCILING for a while (an
//! UPGRADE_MASTER operation listed meanwhile) and comes back RUNNING, while its Kubernetes API
//! keeps answering, a watch opened before goes on, and a log stream keeps flowing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry_test_support as common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::{AsyncBufReadExt, StreamExt, TryStreamExt};
use gantry::sim::cloud::{DEMO_LOCATION, DEMO_PROJECT};
use gantry::sim::faults::Fault;
use gantry::sim::{SimCloud, SimOptions};
use gantry_test_support::await_condition;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Node, Pod};
use kube::api::{Api, ListParams, LogParams, PostParams};
use serde_json::{Value, json};

/// Long enough that a client polling every few milliseconds sees each state.
const PERIOD: Duration = Duration::from_millis(1500);
const POLL: Duration = Duration::from_millis(5);
/// Only a guard against a hung test; nothing asserts how long anything takes.
const PATIENCE: Duration = Duration::from_secs(60);

async fn patiently<T>(what: &str, wait: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(PATIENCE, wait)
        .await
        .unwrap_or_else(|_| panic!("gave up waiting for {what}"))
}

async fn gke(cloud: &SimCloud, method: reqwest::Method, path: &str) -> (u16, Value) {
    let response = reqwest::Client::new()
        .request(method, format!("{}/v1/{path}", cloud.gke_endpoint()))
        .bearer_auth(cloud.token())
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

fn cluster_path(name: &str) -> String {
    format!("projects/{DEMO_PROJECT}/locations/{DEMO_LOCATION}/clusters/{name}")
}

async fn status(cloud: &SimCloud, name: &str) -> Value {
    gke(cloud, reqwest::Method::GET, &cluster_path(name))
        .await
        .1
}

/// Polls the cluster until its status is `want`; returns the cluster as then reported.
async fn until_status(cloud: &SimCloud, name: &str, want: &str) -> Value {
    patiently(want, async {
        loop {
            let cluster = status(cloud, name).await;
            if cluster["status"] == want {
                return cluster;
            }
            tokio::time::sleep(POLL).await;
        }
    })
    .await
}

async fn upgrade_operations(cloud: &SimCloud) -> Vec<Value> {
    let path = format!("projects/{DEMO_PROJECT}/locations/-/operations");
    let (_, list) = gke(cloud, reqwest::Method::GET, &path).await;
    list["operations"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|op| op["operationType"] == "UPGRADE_MASTER")
        .collect()
}

fn long_job() -> Job {
    serde_json::from_value(json!({
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "long"},
        "spec": {"backoffLimit": 0, "template": {"spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "c", "image": "gcr.io/demo-project/ml-training-job:latest", "env": [
                {"name": "SIM_LOG_LINES", "value": "5000"},
                {"name": "SIM_LINES_PER_SECOND", "value": "2"}]}]}}}
    }))
    .unwrap()
}

/// Follows the Job's pod's log in the background, counting lines; the flag says it ended.
async fn follow_log(client: &kube::Client) -> (Arc<AtomicUsize>, tokio::task::JoinHandle<()>) {
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let running = |p: Option<&Pod>| {
        p.and_then(|p| p.status.as_ref())
            .and_then(|s| s.phase.as_deref())
            == Some("Running")
    };
    let pod = loop {
        let list = pods
            .list(&ListParams::default().labels("job-name=long"))
            .await
            .unwrap();
        if let Some(pod) = list.items.into_iter().next() {
            let name = pod.metadata.name.clone().unwrap();
            await_condition(pods.clone(), &name, running).await.unwrap();
            break name;
        }
        tokio::time::sleep(POLL).await;
    };
    let follow = LogParams {
        follow: true,
        ..Default::default()
    };
    let mut lines = pods.log_stream(&pod, &follow).await.unwrap();
    let count = Arc::new(AtomicUsize::new(0));
    let counted = count.clone();
    let task = tokio::spawn(async move {
        let mut line = String::new();
        loop {
            line.clear();
            match lines.read_line(&mut line).await {
                Ok(0) | Err(_) => return,
                Ok(_) => counted.fetch_add(1, Ordering::SeqCst),
            };
        }
    });
    (count, task)
}

async fn until_more_than(count: &AtomicUsize, than: usize) {
    patiently("more log lines", async {
        while count.load(Ordering::SeqCst) <= than {
            tokio::time::sleep(POLL).await;
        }
    })
    .await
}

#[tokio::test]
async fn a_running_cluster_reconciles_once_while_its_kubernetes_api_keeps_serving() {
    let cloud = common::cloud_with(SimOptions {
        time_scale: 0.01,
        clusters: vec![common::CLUSTER.into()],
        faults: vec![Fault::Reconcile(PERIOD)],
        ..Default::default()
    })
    .await;
    let first = status(&cloud, common::CLUSTER).await;
    assert_eq!(first["status"], "RUNNING", "RUNNING first: {first}");
    assert!(upgrade_operations(&cloud).await.is_empty());

    // Opened while RUNNING: a watch of config maps and a log stream.
    let client = common::kube_client(&cloud);
    let maps: Api<ConfigMap> = Api::default_namespaced(client.clone());
    let mut watch = maps
        .watch(&kube::api::WatchParams::default(), "0")
        .await
        .unwrap()
        .boxed();
    Api::<Job>::default_namespaced(client.clone())
        .create(&PostParams::default(), &long_job())
        .await
        .unwrap();
    let (lines, follower) = follow_log(&client).await;

    let reconciling = until_status(&cloud, common::CLUSTER, "RECONCILING").await;
    assert_eq!(reconciling["statusMessage"], "Upgrading cluster master.");
    assert_eq!(reconciling["currentNodeCount"], 3);
    let ops = upgrade_operations(&cloud).await;
    assert_eq!(ops.len(), 1, "{ops:?}");
    assert_eq!(ops[0]["status"], "RUNNING");
    assert!(
        ops[0]["targetLink"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/clusters/{}", common::CLUSTER))
    );
    // The API server answers, and the simulator still lists the cluster for kubeconfigs.
    let nodes: Api<Node> = Api::all(client.clone());
    assert_eq!(
        nodes
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .len(),
        3
    );
    let made = ConfigMap {
        metadata: kube::api::ObjectMeta {
            name: Some("during-reconcile".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    maps.create(&PostParams::default(), &made).await.unwrap();
    assert!(
        cloud
            .gke()
            .running()
            .borrow()
            .iter()
            .any(|c| c.name == common::CLUSTER)
    );
    // GKE refuses other operations meanwhile.
    let (code, refused) = gke(
        &cloud,
        reqwest::Method::DELETE,
        &cluster_path(common::CLUSTER),
    )
    .await;
    assert_eq!(code, 400, "{refused}");
    assert_eq!(refused["error"]["status"], "FAILED_PRECONDITION");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("is currently upgrading cluster ml-gke-cluster"),
        "{message}"
    );
    let lines_while_reconciling = lines.load(Ordering::SeqCst);

    let after = until_status(&cloud, common::CLUSTER, "RUNNING").await;
    assert!(after.get("statusMessage").is_none(), "{after}");
    let ops = upgrade_operations(&cloud).await;
    assert_eq!(ops[0]["status"], "DONE");
    assert!(ops[0]["endTime"].is_string());

    // The watch opened before saw the config map made during the period.
    loop {
        match patiently("the watch", watch.try_next()).await.unwrap() {
            Some(kube::api::WatchEvent::Added(cm)) => {
                assert_eq!(cm.metadata.name.as_deref(), Some("during-reconcile"));
                break;
            }
            Some(_) => continue,
            None => panic!("the watch ended"),
        }
    }
    // The log stream opened before still flows.
    until_more_than(&lines, lines_while_reconciling).await;
    assert!(!follower.is_finished());
    follower.abort();

    // It happens once: the cluster stays RUNNING and takes requests again.
    assert_eq!(upgrade_operations(&cloud).await.len(), 1);
    let (code, deleting) = gke(
        &cloud,
        reqwest::Method::DELETE,
        &cluster_path(common::CLUSTER),
    )
    .await;
    assert_eq!(code, 200, "{deleting}");
    assert_eq!(deleting["operationType"], "DELETE_CLUSTER");
}

#[tokio::test]
async fn a_cluster_created_under_the_fault_reconciles_after_it_is_running() {
    let cloud = common::cloud_with(SimOptions {
        time_scale: 0.001,
        ..Default::default()
    })
    .await;
    cloud.faults().set(Fault::Reconcile(PERIOD));
    let create = json!({"cluster": {"name": "fresh", "initialNodeCount": 1}});
    let response = reqwest::Client::new()
        .post(format!(
            "{}/v1/projects/{DEMO_PROJECT}/locations/{DEMO_LOCATION}/clusters",
            cloud.gke_endpoint()
        ))
        .bearer_auth(cloud.token())
        .json(&create)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let mut seen: Vec<String> = Vec::new();
    patiently("four states", async {
        while seen.len() < 4 {
            let now = status(&cloud, "fresh").await["status"]
                .as_str()
                .unwrap()
                .to_string();
            if seen.last() != Some(&now) {
                seen.push(now);
            }
            tokio::time::sleep(POLL).await;
        }
    })
    .await;
    assert_eq!(seen, ["PROVISIONING", "RUNNING", "RECONCILING", "RUNNING"]);
    assert_eq!(upgrade_operations(&cloud).await[0]["status"], "DONE");
}

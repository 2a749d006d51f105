//! The simulated cloud's faults, seen from a client: cut watches and log streams, 410 Gone,
//! 429/503, an API server restart on the same port, token rotation, slow answers.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry_test_support as common;

use std::time::Duration;

use futures::TryStreamExt;
use gantry::sim::SimOptions;
use gantry::sim::faults::Fault;
use gantry_test_support::await_condition;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{Api, ListParams, LogParams, PostParams};
use kube::runtime::wait::conditions;
use serde_json::json;

fn job(name: &str, lines: u32, rate: u32) -> Job {
    serde_json::from_value(json!({
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
        "spec": {"backoffLimit": 0, "template": {"metadata": {"labels": {"job": "ml-training"}}, "spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "c", "image": "gcr.io/demo-project/ml-training-job:latest", "env": [
                {"name": "SIM_LOG_LINES", "value": lines.to_string()},
                {"name": "SIM_LINES_PER_SECOND", "value": rate.to_string()}]}]}}}
    }))
    .unwrap()
}

async fn raw_get(cloud: &gantry::sim::SimCloud, path: &str) -> reqwest::Response {
    common::https_client(cloud)
        .get(format!("https://{}{path}", common::endpoint(cloud)))
        .bearer_auth(cloud.token())
        .send()
        .await
        .unwrap()
}

/// Reads a streamed body to its end: what arrived, and whether it ended in an error (a cut).
async fn drain(mut response: reqwest::Response) -> (Vec<u8>, bool) {
    let mut received = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(bytes)) => received.extend_from_slice(&bytes),
            Ok(None) => return (received, false),
            Err(_) => return (received, true),
        }
    }
}

#[tokio::test]
async fn watch_drop_cuts_every_watch_and_watchers_recover() {
    let cloud = common::cloud_with(SimOptions {
        time_scale: 0.01,
        clusters: vec![common::CLUSTER.into()],
        faults: vec![Fault::WatchDrop(Duration::from_millis(200))],
        ..Default::default()
    })
    .await;
    // A single watch is cut: its body ends in an error, not cleanly.
    let (_, cut) = drain(raw_get(&cloud, "/api/v1/nodes?watch=true&resourceVersion=0").await).await;
    assert!(cut, "the watch should end with a broken stream");
    // kube's watcher reconnects and still sees the Job finish.
    let client = common::kube_client(&cloud);
    let jobs: Api<Job> = Api::default_namespaced(client.clone());
    jobs.create(&PostParams::default(), &job("dropped", 200, 100))
        .await
        .unwrap();
    await_condition(jobs, "dropped", conditions::is_job_completed())
        .await
        .unwrap();
    // The fault took effect: this tested it, not a quiet day.
    assert!(
        cloud.faults().times_fired("watch-drop") > 0,
        "watch-drop never fired"
    );
}

#[tokio::test]
async fn log_cut_ends_a_follow_mid_line_but_not_a_plain_read() {
    let cloud = common::cloud_with_cluster().await;
    let client = common::kube_client(&cloud);
    let jobs: Api<Job> = Api::default_namespaced(client.clone());
    jobs.create(&PostParams::default(), &job("cut", 1000, 10))
        .await
        .unwrap();
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let running = kube::runtime::watcher(
        pods.clone(),
        kube::runtime::watcher::Config::default().labels("job-name=cut"),
    );
    let mut running = std::pin::pin!(running);
    let pod_name = loop {
        if let Some(
            kube::runtime::watcher::Event::Apply(p) | kube::runtime::watcher::Event::InitApply(p),
        ) = running.try_next().await.unwrap()
            && p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")
        {
            break p.metadata.name.unwrap();
        }
    };
    cloud
        .faults()
        .set(Fault::LogCut(Duration::from_millis(100)));
    let response = raw_get(
        &cloud,
        &format!("/api/v1/namespaces/default/pods/{pod_name}/log?follow=true"),
    )
    .await;
    let (received, broke) = drain(response).await;
    assert!(
        broke,
        "the follow should be cut; got {} bytes ending {:?}",
        received.len(),
        String::from_utf8_lossy(&received[received.len().saturating_sub(80)..])
    );
    assert!(!received.ends_with(b"\n"), "cut mid-line");
    cloud.faults().clear();
    await_condition(jobs, "cut", conditions::is_job_completed())
        .await
        .unwrap();
    let whole = pods.logs(&pod_name, &LogParams::default()).await.unwrap();
    assert_eq!(whole.lines().count(), 1000);
    assert!(whole.as_bytes().starts_with(&received));
    // The fault took effect: this tested it, not a quiet day.
    assert!(
        cloud.faults().times_fired("log-cut") > 0,
        "log-cut never fired"
    );
}

#[tokio::test]
async fn watch_gone_answers_410_in_the_stream() {
    let cloud = common::cloud_with(SimOptions {
        time_scale: 0.01,
        clusters: vec![common::CLUSTER.into()],
        faults: vec![Fault::WatchGone],
        ..Default::default()
    })
    .await;
    let body = raw_get(&cloud, "/api/v1/pods?watch=true&resourceVersion=5")
        .await
        .text()
        .await
        .unwrap();
    let event: serde_json::Value = serde_json::from_str(body.lines().next().unwrap()).unwrap();
    assert_eq!(event["type"], "ERROR");
    assert_eq!(event["object"]["code"], 410);
    assert_eq!(event["object"]["reason"], "Expired");
    // The fault took effect: this tested it, not a quiet day.
    assert!(
        cloud.faults().times_fired("watch-gone") > 0,
        "watch-gone never fired"
    );
}

#[tokio::test]
async fn http_faults_answer_429_and_503_on_both_apis() {
    let cloud = common::cloud_with_cluster().await;
    cloud.faults().set(Fault::Http429(100));
    let r = raw_get(&cloud, "/api/v1/nodes").await;
    assert_eq!(r.status(), 429);
    assert_eq!(r.headers()["retry-after"], "1");
    let gke = reqwest::Client::new()
        .get(format!(
            "{}/v1/projects/demo-project/locations/-/clusters",
            cloud.gke_endpoint()
        ))
        .bearer_auth(cloud.token())
        .send()
        .await
        .unwrap();
    assert_eq!(gke.status(), 429);
    cloud.faults().set(Fault::Http503(100));
    cloud.faults().set(Fault::Http429(0));
    assert_eq!(raw_get(&cloud, "/api/v1/nodes").await.status(), 503);
    cloud.faults().clear();
    assert_eq!(raw_get(&cloud, "/api/v1/nodes").await.status(), 200);
    // The fault took effect: this tested it, not a quiet day.
    assert!(
        cloud.faults().times_fired("http-429") > 0,
        "http-429 never fired"
    );
    assert!(
        cloud.faults().times_fired("http-503") > 0,
        "http-503 never fired"
    );
}

#[tokio::test]
async fn restart_brings_the_api_server_back_on_the_same_port() {
    let cloud = common::cloud_with(SimOptions {
        time_scale: 0.01,
        clusters: vec![common::CLUSTER.into()],
        faults: vec![Fault::Restart(Duration::from_millis(300))],
        ..Default::default()
    })
    .await;
    let endpoint = common::endpoint(&cloud);
    let runtime = cloud
        .cluster("demo-project", "us-central1-a", common::CLUSTER)
        .unwrap();
    let mut availability = runtime.availability();
    // A long watch is cut by the restart.
    let (_, cut) = drain(raw_get(&cloud, "/api/v1/nodes?watch=true&resourceVersion=0").await).await;
    assert!(cut, "the restart cuts open connections");
    cloud.faults().clear();
    // Once it has come back, the same endpoint answers again.
    availability
        .wait_for(|a| a.up && a.incarnation >= 2)
        .await
        .unwrap();
    let client = common::kube_client(&cloud);
    let nodes: Api<Node> = Api::all(client);
    assert_eq!(
        nodes
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .len(),
        3
    );
    assert_eq!(common::endpoint(&cloud), endpoint);
    // The fault took effect: this tested it, not a quiet day.
    assert!(
        cloud.faults().times_fired("restart") > 0,
        "restart never fired"
    );
}

#[tokio::test]
async fn token_expiry_rotates_the_token_file_and_refuses_the_old_token() {
    let dir = tempfile::tempdir().unwrap();
    let cloud = common::cloud_with(SimOptions {
        time_scale: 0.01,
        clusters: vec![common::CLUSTER.into()],
        state_dir: Some(dir.path().to_path_buf()),
        ..Default::default()
    })
    .await;
    let first = std::fs::read_to_string(dir.path().join("token")).unwrap();
    assert_eq!(first, cloud.token());
    let old_client = common::kube_client(&cloud);
    Api::<Node>::all(old_client.clone())
        .list(&ListParams::default())
        .await
        .unwrap();
    cloud
        .faults()
        .set(Fault::TokenExpiry(Duration::from_millis(50)));
    let mut refused = false;
    for _ in 0..1000 {
        if let Err(kube::Error::Api(s)) = Api::<Node>::all(old_client.clone())
            .list(&ListParams::default())
            .await
        {
            assert_eq!(s.code, 401);
            refused = true;
            break;
        }
        tokio::task::yield_now().await;
    }
    assert!(refused, "the old token is refused after a rotation");
    cloud.faults().clear();
    let current = std::fs::read_to_string(dir.path().join("token")).unwrap();
    assert_ne!(current, first);
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(dir.path().join("token"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o600
    );
    let fresh = common::kube_client_with_token(&cloud, &cloud.token());
    Api::<Node>::all(fresh)
        .list(&ListParams::default())
        .await
        .unwrap();
    // The fault took effect: this tested it, not a quiet day.
    assert!(
        cloud.faults().times_fired("token-expiry") > 0,
        "token-expiry never fired"
    );
}

#[tokio::test]
async fn slow_answers_still_answer() {
    let cloud = common::cloud_with_cluster().await;
    cloud.faults().set(Fault::Slow(Duration::from_millis(50)));
    let client = common::kube_client(&cloud);
    let nodes = Api::<Node>::all(client)
        .list(&ListParams::default())
        .await
        .unwrap();
    assert_eq!(nodes.items.len(), 3);
    // The fault took effect: this tested it, not a quiet day.
    assert!(cloud.faults().times_fired("slow") > 0, "slow never fired");
}

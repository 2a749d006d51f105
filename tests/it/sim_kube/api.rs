//! What any client of the simulated API relies on: discovery and authentication, paged lists,
//! label and field selectors, merge and JSON patches, deletion with and without its pods, and a
//! watch resumed from a resource version.

use gantry_test_support as common;

use futures::{StreamExt, TryStreamExt};
use gantry_test_support::await_condition;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{
    Api, DeleteParams, ListParams, LogParams, Patch, PatchParams, PostParams, WatchEvent,
    WatchParams,
};
use kube::runtime::WatchStreamExt;
use kube::runtime::wait::conditions;
use serde_json::json;

use super::{job_manifest, wait_for_pod};

#[tokio::test]
async fn discovery_and_nodes_match_the_seed_cluster() {
    let cloud = common::cloud_with_cluster().await;
    let client = common::kube_client(&cloud);
    let version = client.apiserver_version().await.unwrap();
    assert_eq!(
        (version.major.as_str(), version.minor.as_str()),
        ("1", "32")
    );
    let nodes: Api<Node> = Api::all(client.clone());
    let nodes = nodes.list(&ListParams::default()).await.unwrap().items;
    assert_eq!(nodes.len(), 3);
    for node in &nodes {
        let labels = node.metadata.labels.as_ref().unwrap();
        assert_eq!(labels["node.kubernetes.io/instance-type"], "n1-standard-1");
        assert_eq!(labels["cloud.google.com/gke-nodepool"], "default-pool");
        let alloc = node.status.as_ref().unwrap().allocatable.as_ref().unwrap();
        assert_eq!(alloc["cpu"].0, "940m");
    }
    let unauthenticated = common::kube_client_with_token(&cloud, "wrong");
    let err = Api::<Node>::all(unauthenticated)
        .list(&ListParams::default())
        .await
        .unwrap_err();
    assert!(
        matches!(err, kube::Error::Api(ref s) if s.code == 401),
        "{err:?}"
    );
}

#[tokio::test]
async fn lists_page_with_limit_and_continue() {
    let cloud = common::cloud_with_cluster().await;
    let client = common::kube_client(&cloud);
    let nodes: Api<Node> = Api::all(client.clone());
    let first = nodes.list(&ListParams::default().limit(2)).await.unwrap();
    assert_eq!(first.items.len(), 2);
    assert_eq!(first.metadata.remaining_item_count, Some(1));
    let token = first.metadata.continue_.clone().expect("a continue token");
    let rest = nodes
        .list(&ListParams::default().limit(2).continue_token(&token))
        .await
        .unwrap();
    assert_eq!(rest.items.len(), 1);
    assert_eq!(rest.metadata.continue_, None);
    assert_eq!(
        rest.metadata.resource_version,
        first.metadata.resource_version
    );
    let mut names: Vec<_> = first
        .items
        .iter()
        .chain(&rest.items)
        .map(|n| n.metadata.name.clone().unwrap())
        .collect();
    names.dedup();
    assert_eq!(names.len(), 3, "{names:?}");

    // kube's watcher pages its initial list and still sees every node.
    let config = kube::runtime::watcher::Config::default().page_size(1);
    let seen: Vec<Node> = kube::runtime::watcher(nodes.clone(), config)
        .applied_objects()
        .take(3)
        .try_collect()
        .await
        .unwrap();
    assert_eq!(seen.len(), 3);

    let refused = nodes
        .list(&ListParams::default().limit(2).continue_token("not-a-token"))
        .await
        .unwrap_err();
    assert!(
        matches!(refused, kube::Error::Api(ref s) if s.code == 400),
        "{refused:?}"
    );
}

#[tokio::test]
async fn selectors_patches_and_propagation() {
    let cloud = common::cloud_with_cluster().await;
    let client = common::kube_client(&cloud);
    let jobs: Api<Job> = Api::default_namespaced(client.clone());
    for name in ["keep-a", "keep-b"] {
        jobs.create(
            &PostParams::default(),
            &job_manifest(
                name,
                json!([{"name": "SIM_LOG_LINES", "value": "5"}]),
                json!({}),
            ),
        )
        .await
        .unwrap();
        await_condition(jobs.clone(), name, conditions::is_job_completed())
            .await
            .unwrap();
    }
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let set_based = pods
        .list(&ListParams::default().labels("job-name in (keep-a, keep-b),job"))
        .await
        .unwrap();
    assert_eq!(set_based.items.len(), 2);
    let not_b = pods
        .list(&ListParams::default().labels("job-name notin (keep-b)"))
        .await
        .unwrap();
    assert_eq!(not_b.items.len(), 1);
    let succeeded = pods
        .list(&ListParams::default().fields("status.phase=Succeeded"))
        .await
        .unwrap();
    assert_eq!(succeeded.items.len(), 2);

    let merged = jobs
        .patch(
            "keep-a",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"team": "ml"}}})),
        )
        .await
        .unwrap();
    assert_eq!(merged.metadata.labels.unwrap()["team"], "ml");
    let json_patched = jobs
        .patch(
            "keep-a",
            &PatchParams::default(),
            &Patch::<()>::Json(
                serde_json::from_value(
                    json!([{"op": "add", "path": "/metadata/annotations", "value": {"note": "x"}}]),
                )
                .unwrap(),
            ),
        )
        .await
        .unwrap();
    assert_eq!(json_patched.metadata.annotations.unwrap()["note"], "x");
    let immutable = jobs
        .patch("keep-a", &PatchParams::default(), &Patch::Merge(json!({"spec": {"template": {"spec": {"containers": [{"name": "ml-training-container", "image": "other"}]}}}})))
        .await
        .unwrap_err();
    assert!(
        matches!(immutable, kube::Error::Api(ref s) if s.code == 422),
        "{immutable:?}"
    );

    // Orphan keeps the pods; Background takes them with the Job.
    jobs.delete("keep-a", &DeleteParams::orphan())
        .await
        .unwrap();
    jobs.delete("keep-b", &DeleteParams::background())
        .await
        .unwrap();
    let pods_left =
        kube::runtime::wait::await_condition(pods.clone(), "unused", |_: Option<&Pod>| true);
    drop(pods_left);
    let gone = |name: &'static str| {
        let pods = pods.clone();
        async move {
            loop {
                let left = pods
                    .list(&ListParams::default().labels(&format!("job-name={name}")))
                    .await
                    .unwrap()
                    .items;
                if left.is_empty() {
                    return;
                }
                for p in left {
                    await_condition(
                        pods.clone(),
                        p.metadata.name.as_ref().unwrap(),
                        conditions::is_deleted(p.metadata.uid.as_ref().unwrap()),
                    )
                    .await
                    .unwrap();
                }
            }
        }
    };
    gone("keep-b").await;
    let orphans = pods
        .list(&ListParams::default().labels("job-name=keep-a"))
        .await
        .unwrap()
        .items;
    assert_eq!(orphans.len(), 1);
    assert!(
        orphans[0]
            .metadata
            .owner_references
            .as_ref()
            .is_none_or(|r| r.is_empty())
    );
}

#[tokio::test]
async fn watch_resumes_from_a_version_and_follows_logs() {
    let cloud = common::cloud_with_cluster().await;
    let client = common::kube_client(&cloud);
    let jobs: Api<Job> = Api::default_namespaced(client.clone());
    let before = jobs
        .list(&ListParams::default())
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();
    jobs.create(&PostParams::default(), &job_manifest("watched", json!([{"name": "SIM_LOG_LINES", "value": "300"}, {"name": "SIM_LINES_PER_SECOND", "value": "100"}]), json!({}))).await.unwrap();
    // A watch from the version before the create still sees it.
    let mut events = jobs
        .watch(&WatchParams::default(), &before)
        .await
        .unwrap()
        .boxed();
    match events.try_next().await.unwrap() {
        Some(WatchEvent::Added(job)) => assert_eq!(job.metadata.name.as_deref(), Some("watched")),
        other => panic!("expected ADDED, got {other:?}"),
    }
    let pod = wait_for_pod(&client, "watched", |p| {
        p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")
    })
    .await;
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let mut lines = pods
        .log_stream(
            pod.metadata.name.as_ref().unwrap(),
            &LogParams {
                follow: true,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    use futures::AsyncBufReadExt;
    let mut count = 0;
    let mut line = String::new();
    loop {
        line.clear();
        if lines.read_line(&mut line).await.unwrap() == 0 {
            break;
        }
        count += 1;
    }
    assert_eq!(
        count, 300,
        "a follow ends when the container does, with every line"
    );
}

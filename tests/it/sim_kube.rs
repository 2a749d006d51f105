//! The simulated Kubernetes API through kube's real client and watcher: discovery, nodes, the Job
//! controller, the kubelet stand-in, logs, selectors, patches, deletion and watches.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry_test_support as common;

use futures::{StreamExt, TryStreamExt};
use gantry_test_support::await_condition;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Event, Node, Pod};
use kube::api::{
    Api, DeleteParams, ListParams, LogParams, Patch, PatchParams, PostParams, WatchEvent,
    WatchParams,
};
use kube::runtime::WatchStreamExt;
use kube::runtime::wait::conditions;
use serde_json::json;

fn job_manifest(name: &str, env: serde_json::Value, extra_spec: serde_json::Value) -> Job {
    let mut job = json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "backoffLimit": 2,
            "template": {
                "metadata": {"labels": {"job": "ml-training"}},
                "spec": {
                    "containers": [{"name": "ml-training-container", "image": "gcr.io/demo-project/ml-training-job:latest", "env": env}],
                    "restartPolicy": "Never"
                }
            }
        }
    });
    if let (Some(spec), Some(extra)) = (job["spec"].as_object_mut(), extra_spec.as_object()) {
        for (k, v) in extra {
            spec.insert(k.clone(), v.clone());
        }
    }
    serde_json::from_value(job).unwrap()
}

fn job_failed() -> impl kube::runtime::wait::Condition<Job> {
    |job: Option<&Job>| {
        job.and_then(|j| j.status.as_ref())
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Failed" && c.status == "True"))
    }
}

async fn pods_of(client: &kube::Client, job: &str) -> Vec<Pod> {
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    pods.list(&ListParams::default().labels(&format!("job-name={job}")))
        .await
        .unwrap()
        .items
}

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
async fn seed_job_runs_to_completion_with_logs_and_events() {
    let cloud = common::cloud_with_cluster().await;
    let client = common::kube_client(&cloud);
    let jobs: Api<Job> = Api::default_namespaced(client.clone());
    let job = job_manifest("ml-training-job", json!([]), json!({}));
    let created = jobs.create(&PostParams::default(), &job).await.unwrap();
    let uid = created.metadata.uid.clone().unwrap();
    let selector = created.spec.as_ref().unwrap().selector.as_ref().unwrap();
    assert_eq!(
        selector.match_labels.as_ref().unwrap()["batch.kubernetes.io/controller-uid"],
        uid
    );
    await_condition(
        jobs.clone(),
        "ml-training-job",
        conditions::is_job_completed(),
    )
    .await
    .unwrap();
    let done = jobs.get("ml-training-job").await.unwrap();
    let status = done.status.unwrap();
    assert_eq!(status.succeeded, Some(1));
    assert!(status.start_time.is_some() && status.completion_time.is_some());

    let pods = pods_of(&client, "ml-training-job").await;
    assert_eq!(pods.len(), 1);
    let pod = &pods[0];
    let labels = pod.metadata.labels.as_ref().unwrap();
    assert_eq!(labels["job"], "ml-training");
    assert_eq!(labels["batch.kubernetes.io/job-name"], "ml-training-job");
    assert_eq!(labels["controller-uid"], uid);
    assert!(
        pod.metadata
            .name
            .as_ref()
            .unwrap()
            .starts_with("ml-training-job-")
    );
    let pod_status = pod.status.as_ref().unwrap();
    assert_eq!(pod_status.phase.as_deref(), Some("Succeeded"));
    let terminated = pod_status.container_statuses.as_ref().unwrap()[0]
        .state
        .as_ref()
        .unwrap()
        .terminated
        .as_ref()
        .unwrap();
    assert_eq!(
        (terminated.exit_code, terminated.reason.as_deref()),
        (0, Some("Completed"))
    );
    assert!(
        pod.spec
            .as_ref()
            .unwrap()
            .node_name
            .as_ref()
            .unwrap()
            .starts_with("gke-ml-gke-cluster-default-pool-")
    );

    let pods_api: Api<Pod> = Api::default_namespaced(client.clone());
    let name = pod.metadata.name.clone().unwrap();
    let logs = pods_api.logs(&name, &LogParams::default()).await.unwrap();
    assert_eq!(logs.lines().count(), 60);
    assert!(logs.contains("epoch 1/3"), "{logs}");
    let tail = pods_api
        .logs(
            &name,
            &LogParams {
                tail_lines: Some(5),
                timestamps: true,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(tail.lines().count(), 5);
    assert!(
        tail.lines().all(|l| l
            .split_once(' ')
            .is_some_and(|(ts, _)| ts.parse::<jiff::Timestamp>().is_ok())),
        "{tail}"
    );
    let limited = pods_api
        .logs(
            &name,
            &LogParams {
                limit_bytes: Some(10),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(limited.len(), 10);
    let previous = pods_api
        .logs(
            &name,
            &LogParams {
                previous: true,
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert!(
        matches!(previous, kube::Error::Api(ref s) if s.code == 400),
        "{previous:?}"
    );

    let events: Api<Event> = Api::default_namespaced(client.clone());
    let job_events = events
        .list(
            &ListParams::default()
                .fields("involvedObject.kind=Job,involvedObject.name=ml-training-job"),
        )
        .await
        .unwrap();
    let reasons: Vec<_> = job_events
        .items
        .iter()
        .filter_map(|e| e.reason.clone())
        .collect();
    assert!(
        reasons.contains(&"SuccessfulCreate".into()) && reasons.contains(&"Completed".into()),
        "{reasons:?}"
    );
    let pod_events = events
        .list(&ListParams::default().fields(&format!("involvedObject.name={name}")))
        .await
        .unwrap();
    let reasons: Vec<_> = pod_events
        .items
        .iter()
        .filter_map(|e| e.reason.clone())
        .collect();
    for want in ["Scheduled", "Pulling", "Pulled", "Created", "Started"] {
        assert!(
            reasons.contains(&want.to_string()),
            "missing {want} in {reasons:?}"
        );
    }
}

#[tokio::test]
async fn backoff_limit_exhausted_after_three_failed_pods() {
    let cloud = common::cloud_with_cluster().await;
    let client = common::kube_client(&cloud);
    let jobs: Api<Job> = Api::default_namespaced(client.clone());
    let job = job_manifest(
        "failing",
        json!([{"name": "SIM_FAIL_ATTEMPTS", "value": "5"}]),
        json!({}),
    );
    jobs.create(&PostParams::default(), &job).await.unwrap();
    await_condition(jobs.clone(), "failing", job_failed())
        .await
        .unwrap();
    let job = jobs.get("failing").await.unwrap();
    let status = job.status.unwrap();
    assert_eq!(status.failed, Some(3));
    let failed = status
        .conditions
        .unwrap()
        .into_iter()
        .find(|c| c.type_ == "Failed")
        .unwrap();
    assert_eq!(failed.reason.as_deref(), Some("BackoffLimitExceeded"));
    let pods = pods_of(&client, "failing").await;
    assert_eq!(pods.len(), 3);
    for pod in &pods {
        let state = pod
            .status
            .as_ref()
            .unwrap()
            .container_statuses
            .as_ref()
            .unwrap()[0]
            .state
            .clone()
            .unwrap();
        assert_eq!(state.terminated.unwrap().exit_code, 1);
    }
    let events: Api<Event> = Api::default_namespaced(client.clone());
    let reasons: Vec<_> = events
        .list(&ListParams::default().fields("involvedObject.name=failing"))
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|e| e.reason)
        .collect();
    assert!(
        reasons.contains(&"BackoffLimitExceeded".into()),
        "{reasons:?}"
    );
}

#[tokio::test]
async fn indexed_job_of_four_workers() {
    let cloud = common::cloud_with_cluster().await;
    let client = common::kube_client(&cloud);
    let jobs: Api<Job> = Api::default_namespaced(client.clone());
    let job = job_manifest(
        "workers",
        json!([{"name": "SIM_LOG_LINES", "value": "20"}]),
        json!({"completions": 4, "parallelism": 4, "completionMode": "Indexed"}),
    );
    jobs.create(&PostParams::default(), &job).await.unwrap();
    await_condition(jobs.clone(), "workers", conditions::is_job_completed())
        .await
        .unwrap();
    let status = jobs.get("workers").await.unwrap().status.unwrap();
    assert_eq!(status.completed_indexes.as_deref(), Some("0-3"));
    let pods = pods_of(&client, "workers").await;
    assert_eq!(pods.len(), 4);
    let pods_api: Api<Pod> = Api::default_namespaced(client.clone());
    let mut ranks = Vec::new();
    for pod in &pods {
        let index =
            pod.metadata.annotations.as_ref().unwrap()["batch.kubernetes.io/job-completion-index"]
                .clone();
        assert_eq!(
            pod.spec.as_ref().unwrap().hostname.as_deref(),
            Some(format!("workers-{index}").as_str())
        );
        let logs = pods_api
            .logs(pod.metadata.name.as_ref().unwrap(), &LogParams::default())
            .await
            .unwrap();
        assert!(logs.starts_with(&format!("[rank {index}/")), "{logs}");
        ranks.push(index);
    }
    ranks.sort();
    assert_eq!(ranks, ["0", "1", "2", "3"]);
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

async fn wait_for_pod(client: &kube::Client, job: &str, pred: impl Fn(&Pod) -> bool) -> Pod {
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let wc = kube::runtime::watcher::Config::default().labels(&format!("job-name={job}"));
    let mut stream = kube::runtime::watcher(pods, wc).applied_objects().boxed();
    while let Some(pod) = stream.try_next().await.unwrap() {
        if pred(&pod) {
            return pod;
        }
    }
    panic!("watch ended");
}

fn waiting_reason(pod: &Pod) -> Option<String> {
    pod.status
        .as_ref()?
        .container_statuses
        .as_ref()?
        .first()?
        .state
        .as_ref()?
        .waiting
        .as_ref()?
        .reason
        .clone()
}

#[tokio::test]
async fn image_pull_backoff_failed_scheduling_and_oom_are_reported() {
    let cloud = common::cloud_with_cluster().await;
    let client = common::kube_client(&cloud);
    let jobs: Api<Job> = Api::default_namespaced(client.clone());

    let mut bad_image = job_manifest("bad-image", json!([]), json!({}));
    bad_image
        .spec
        .as_mut()
        .unwrap()
        .template
        .spec
        .as_mut()
        .unwrap()
        .containers[0]
        .image = Some("gcr.io/demo-project/does-not-exist:v1".into());
    jobs.create(&PostParams::default(), &bad_image)
        .await
        .unwrap();
    let pod = wait_for_pod(&client, "bad-image", |p| {
        waiting_reason(p).as_deref() == Some("ImagePullBackOff")
    })
    .await;
    assert_eq!(pod.status.unwrap().phase.as_deref(), Some("Pending"));

    let huge = job_manifest("too-big", json!([]), json!({}));
    let mut huge_json = serde_json::to_value(huge).unwrap();
    huge_json["spec"]["template"]["spec"]["containers"][0]["resources"] =
        json!({"requests": {"cpu": "64", "nvidia.com/gpu": "1"}});
    jobs.create(
        &PostParams::default(),
        &serde_json::from_value(huge_json).unwrap(),
    )
    .await
    .unwrap();
    let pod = wait_for_pod(&client, "too-big", |p| {
        p.status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|cs| {
                cs.iter().any(|c| {
                    c.type_ == "PodScheduled" && c.reason.as_deref() == Some("Unschedulable")
                })
            })
    })
    .await;
    let message = pod
        .status
        .unwrap()
        .conditions
        .unwrap()
        .into_iter()
        .find(|c| c.type_ == "PodScheduled")
        .unwrap()
        .message
        .unwrap();
    assert!(
        message.starts_with("0/3 nodes are available:") && message.contains("Insufficient cpu"),
        "{message}"
    );
    let events: Api<Event> = Api::default_namespaced(client.clone());
    let scheduling = events
        .list(&ListParams::default().fields(&format!(
            "involvedObject.name={},reason=FailedScheduling",
            pod.metadata.name.unwrap()
        )))
        .await
        .unwrap();
    assert_eq!(scheduling.items.len(), 1);

    let oom = job_manifest(
        "oom",
        json!([{"name": "SIM_OOM", "value": "4Gi"}]),
        json!({"backoffLimit": 0}),
    );
    let mut oom_json = serde_json::to_value(oom).unwrap();
    oom_json["spec"]["template"]["spec"]["containers"][0]["resources"] =
        json!({"limits": {"memory": "1Gi"}});
    jobs.create(
        &PostParams::default(),
        &serde_json::from_value(oom_json).unwrap(),
    )
    .await
    .unwrap();
    await_condition(jobs.clone(), "oom", job_failed())
        .await
        .unwrap();
    let pod = &pods_of(&client, "oom").await[0];
    let terminated = pod
        .status
        .as_ref()
        .unwrap()
        .container_statuses
        .as_ref()
        .unwrap()[0]
        .state
        .clone()
        .unwrap()
        .terminated
        .unwrap();
    assert_eq!(
        (terminated.exit_code, terminated.reason.as_deref()),
        (137, Some("OOMKilled"))
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

//! Jobs that the simulated Job controller and kubelet stand-in run to their end: one that
//! completes with its logs and events, one that exhausts its backoff limit, an Indexed Job of
//! four workers.

use gantry_test_support as common;

use gantry_test_support::await_condition;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Event, Pod};
use kube::api::{Api, ListParams, LogParams, PostParams};
use kube::runtime::wait::conditions;
use serde_json::json;

use super::{job_failed, job_manifest, pods_of};

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

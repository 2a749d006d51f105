//! Job controller details beyond the happy path: deadlines, TTL after finishing, foreground
//! deletion, log time filters, and watch bookmarks and timeouts.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry_test_support as common;

use gantry_test_support::await_condition;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DeleteParams, ListParams, LogParams, PostParams};
use kube::runtime::wait::conditions;
use serde_json::json;

fn job(name: &str, env: serde_json::Value, spec: serde_json::Value) -> Job {
    let mut j = json!({
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
        "spec": {"backoffLimit": 0, "template": {"metadata": {"labels": {"job": "ml-training"}}, "spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "c", "image": "gcr.io/demo-project/ml-training-job:latest", "env": env}]}}}
    });
    for (k, v) in spec.as_object().cloned().unwrap_or_default() {
        j["spec"][k] = v;
    }
    serde_json::from_value(j).unwrap()
}

#[tokio::test]
async fn active_deadline_fails_the_job_and_stops_its_pods() {
    let cloud = common::cloud_with_cluster().await;
    let client = common::kube_client(&cloud);
    let jobs: Api<Job> = Api::default_namespaced(client.clone());
    // 10,000 lines at 5 a second would take 2,000 simulated seconds; the deadline is 30.
    let slow = job(
        "slow",
        json!([{"name": "SIM_LOG_LINES", "value": "10000"}]),
        json!({"activeDeadlineSeconds": 30}),
    );
    jobs.create(&PostParams::default(), &slow).await.unwrap();
    await_condition(jobs.clone(), "slow", |j: Option<&Job>| {
        j.and_then(|j| j.status.as_ref())
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|cs| {
                cs.iter()
                    .any(|c| c.type_ == "Failed" && c.reason.as_deref() == Some("DeadlineExceeded"))
            })
    })
    .await
    .unwrap();
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let slow_pods = pods
        .list(&ListParams::default().labels("job-name=slow"))
        .await
        .unwrap()
        .items;
    assert!(
        !slow_pods.is_empty(),
        "the Job made a pod before its deadline"
    );
    for p in slow_pods {
        let name = p.metadata.name.clone().unwrap();
        await_condition(
            pods.clone(),
            &name,
            conditions::is_deleted(p.metadata.uid.as_ref().unwrap()),
        )
        .await
        .unwrap();
    }
}

#[tokio::test]
async fn ttl_after_finished_deletes_the_job() {
    let cloud = common::cloud_with_cluster().await;
    let client = common::kube_client(&cloud);
    let jobs: Api<Job> = Api::default_namespaced(client.clone());
    let created = jobs
        .create(
            &PostParams::default(),
            &job(
                "short-lived",
                json!([]),
                json!({"ttlSecondsAfterFinished": 60}),
            ),
        )
        .await
        .unwrap();
    await_condition(
        jobs.clone(),
        "short-lived",
        conditions::is_deleted(created.metadata.uid.as_ref().unwrap()),
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn foreground_deletion_waits_for_the_pods() {
    let cloud = common::cloud_with_cluster().await;
    let client = common::kube_client(&cloud);
    let jobs: Api<Job> = Api::default_namespaced(client.clone());
    let created = jobs
        .create(
            &PostParams::default(),
            &job(
                "fg",
                json!([{"name": "SIM_LOG_LINES", "value": "100000"}]),
                json!({}),
            ),
        )
        .await
        .unwrap();
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let pod = {
        use futures::TryStreamExt;
        use kube::runtime::WatchStreamExt;
        let stream = kube::runtime::watcher(
            pods.clone(),
            kube::runtime::watcher::Config::default().labels("job-name=fg"),
        )
        .applied_objects();
        let mut stream = std::pin::pin!(stream);
        stream.try_next().await.unwrap().unwrap()
    };
    let deleted = jobs
        .delete("fg", &DeleteParams::foreground())
        .await
        .unwrap();
    // While its pod goes, the Job is still there, marked for deletion with the finalizer.
    if let Some(j) = deleted.left() {
        assert!(j.metadata.deletion_timestamp.is_some());
        assert!(
            j.metadata
                .finalizers
                .unwrap_or_default()
                .contains(&"foregroundDeletion".to_string())
        );
    }
    await_condition(
        pods.clone(),
        pod.metadata.name.as_ref().unwrap(),
        conditions::is_deleted(pod.metadata.uid.as_ref().unwrap()),
    )
    .await
    .unwrap();
    await_condition(
        jobs.clone(),
        "fg",
        conditions::is_deleted(created.metadata.uid.as_ref().unwrap()),
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn since_time_and_since_seconds_filter_logs() {
    let cloud = common::cloud_with_cluster().await;
    let client = common::kube_client(&cloud);
    let jobs: Api<Job> = Api::default_namespaced(client.clone());
    jobs.create(
        &PostParams::default(),
        &job(
            "timed",
            json!([{"name": "SIM_LOG_LINES", "value": "50"}]),
            json!({}),
        ),
    )
    .await
    .unwrap();
    await_condition(jobs.clone(), "timed", conditions::is_job_completed())
        .await
        .unwrap();
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let pod = pods
        .list(&ListParams::default().labels("job-name=timed"))
        .await
        .unwrap()
        .items
        .remove(0);
    let name = pod.metadata.name.unwrap();
    let all = pods
        .logs(
            &name,
            &LogParams {
                timestamps: true,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(all.lines().count(), 50);
    let future = jiff::Timestamp::now() + jiff::SignedDuration::from_secs(3600);
    let url = format!(
        "https://{}/api/v1/namespaces/default/pods/{name}/log?sinceTime={}",
        common::endpoint(&cloud),
        future.strftime("%Y-%m-%dT%H:%M:%SZ")
    );
    let none = common::https_client(&cloud)
        .get(url)
        .bearer_auth(cloud.token())
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(none, "");
    let recent = pods
        .logs(
            &name,
            &LogParams {
                since_seconds: Some(3600),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(recent.lines().count(), 50);
}

#[tokio::test]
async fn watch_ends_at_its_timeout() {
    let cloud = common::cloud_with_cluster().await;
    let url = format!(
        "https://{}/api/v1/nodes?watch=true&resourceVersion=0&timeoutSeconds=1&allowWatchBookmarks=true",
        common::endpoint(&cloud)
    );
    let body = common::https_client(&cloud)
        .get(url)
        .bearer_auth(cloud.token())
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let kinds: Vec<String> = body
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["type"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert_eq!(
        kinds.iter().filter(|k| *k == "ADDED").count(),
        3,
        "{kinds:?}"
    );
}

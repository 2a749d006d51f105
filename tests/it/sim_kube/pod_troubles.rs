//! What keeps a pod of the simulated cluster from running, reported as Kubernetes reports it: an
//! image that cannot be pulled, a request no node can hold, a container killed for its memory.

use gantry_test_support as common;

use gantry_test_support::await_condition;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Event, Pod};
use kube::api::{Api, ListParams, PostParams};
use serde_json::json;

use super::{job_failed, job_manifest, pods_of, wait_for_pod};

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

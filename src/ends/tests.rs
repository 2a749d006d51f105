//! The classifier over pod statuses as Kubernetes and GKE write them. Each case names the page
//! its fields follow; messages are left in to show they are not what decides.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};

use super::*;
use crate::k8s::fate::fate_of;
use crate::k8s::status::PodSummary;
use crate::vocabulary::Requests;
use crate::vocabulary::ends::{Class, PodEnd};

fn pod(status: Value) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": "ml-training-job-abcde", "namespace": "default"},
        "spec": {"nodeName": "gke-n-1", "containers": [{"name": "ml-training-container"}]},
        "status": status,
    }))
    .unwrap()
}

fn terminated(code: i32, reason: &str) -> Value {
    json!([{"name": "ml-training-container", "ready": false, "restartCount": 0,
        "image": "i", "imageID": "",
        "state": {"terminated": {"exitCode": code, "reason": reason,
            "startedAt": "2026-12-05T10:00:00Z", "finishedAt": "2026-12-05T10:05:00Z"}}}])
}

fn class_of(status: Value) -> Option<Class> {
    fate_of(&pod(status)).map(|f| f.class)
}

/// Kubernetes docs, "Pod disruption conditions" and "Graceful node shutdown": the kubelet of a
/// node shutting down (GKE's Spot VM reclaim gives 30 s) fails the pod with reason Terminated and
/// adds DisruptionTarget with reason TerminationByKubelet.
#[test]
fn a_pod_on_a_reclaimed_spot_node_was_preempted_not_failed() {
    let fate = fate_of(&pod(json!({
        "phase": "Failed",
        "reason": "Terminated",
        "message": "Pod was terminated in response to imminent node shutdown.",
        "conditions": [{"type": "DisruptionTarget", "status": "True",
            "reason": "TerminationByKubelet",
            "message": "Pod was terminated in response to imminent node shutdown.",
            "lastTransitionTime": "2026-12-05T10:05:00Z"}],
        "containerStatuses": terminated(143, "Error"),
    })))
    .unwrap();
    assert_eq!(fate.class, Class::Preempted);
    assert!(fate.detail.contains("node shut down"), "{}", fate.detail);
    assert_eq!(fate.ran_seconds, 300);
}

/// "Pod disruption conditions": a drain evicts through the Eviction API (EvictionByEvictionAPI);
/// the pod garbage collector marks a pod whose node is gone (DeletionByPodGC); the taint manager
/// a pod on a NoExecute-tainted node (DeletionByTaintManager); the scheduler one it preempts
/// (PreemptionByScheduler). Whatever the reason, it is a preemption.
#[test]
fn every_disruption_reason_is_a_preemption() {
    for reason in [
        "EvictionByEvictionAPI",
        "DeletionByPodGC",
        "DeletionByTaintManager",
        "PreemptionByScheduler",
        "SomethingNewer",
    ] {
        let status = json!({
            "phase": "Running",
            "conditions": [{"type": "DisruptionTarget", "status": "True", "reason": reason}],
        });
        assert_eq!(class_of(status), Some(Class::Preempted), "{reason}");
    }
}

/// A condition that is False says nothing happened.
#[test]
fn a_false_disruption_condition_is_not_an_end() {
    let status = json!({
        "phase": "Running",
        "conditions": [{"type": "DisruptionTarget", "status": "False", "reason": "x"}],
    });
    assert_eq!(class_of(status), None);
}

/// Kubernetes docs, "Assign Memory Resources to Containers": a container over its memory limit
/// is terminated with reason OOMKilled (exit code 137).
#[test]
fn a_container_over_its_memory_limit_is_oom() {
    let status = json!({"phase": "Failed", "containerStatuses": terminated(137, "OOMKilled")});
    let fate = fate_of(&pod(status)).unwrap();
    assert_eq!(fate.class, Class::Oom);
    assert_eq!(fate.detail, "out of memory (exit code 137)");
}

#[test]
fn a_nonzero_exit_is_the_applications_error_with_its_code() {
    let fate = fate_of(&pod(
        json!({"phase": "Failed", "containerStatuses": terminated(3, "Error")}),
    ))
    .unwrap();
    assert_eq!(
        (fate.class, fate.detail.as_str()),
        (Class::AppError, "exit code 3")
    );
}

#[test]
fn a_pod_that_completed_succeeded() {
    let status = json!({"phase": "Succeeded", "containerStatuses": terminated(0, "Completed")});
    assert_eq!(class_of(status), Some(Class::Succeeded));
}

/// Kubernetes docs, "Images": a name that cannot be pulled leaves the container waiting with
/// ErrImagePull, then ImagePullBackOff; the pod stays Pending for ever.
#[test]
fn an_image_that_cannot_be_pulled_is_a_config_error() {
    for reason in ["ErrImagePull", "ImagePullBackOff", "InvalidImageName"] {
        let status = json!({"phase": "Pending", "containerStatuses": [{
            "name": "ml-training-container", "ready": false, "restartCount": 0,
            "image": "i", "imageID": "",
            "state": {"waiting": {"reason": reason, "message": "rpc error: not found"}}}]});
        assert_eq!(class_of(status), Some(Class::ConfigError), "{reason}");
    }
}

/// Kubernetes API reference, PodSpec.activeDeadlineSeconds: the kubelet fails the pod with
/// reason DeadlineExceeded.
#[test]
fn a_pod_past_its_deadline_ended_at_the_deadline() {
    let status = json!({"phase": "Failed", "reason": "DeadlineExceeded",
        "message": "Pod was active on the node longer than the specified deadline"});
    assert_eq!(class_of(status), Some(Class::Deadline));
}

#[test]
fn a_running_or_waiting_pod_has_not_ended() {
    assert_eq!(class_of(json!({"phase": "Running"})), None);
    assert_eq!(class_of(json!({"phase": "Pending"})), None);
}

#[test]
fn a_message_alone_never_makes_a_class() {
    let status = json!({"phase": "Running", "message": "preempted OOMKilled DisruptionTarget"});
    assert_eq!(class_of(status), None);
}

fn summary(status: Value) -> PodSummary {
    PodSummary::of(&pod(status))
}

#[test]
fn a_pod_deleted_through_gantry_names_who_deleted_it() {
    let last = summary(json!({"phase": "Running"}));
    let fate = gone(
        &last,
        &GoneContext {
            deleted_by: Some("alice@ops"),
            ..Default::default()
        },
    );
    assert_eq!(
        (fate.class, fate.detail.as_str()),
        (Class::Deleted, "deleted by alice@ops")
    );
    let fate = gone(&last, &GoneContext::default());
    assert_eq!(fate.detail, "deleted outside Gantry");
}

#[test]
fn a_pod_gone_after_it_ended_keeps_its_end() {
    let last = summary(json!({"phase": "Failed", "containerStatuses": terminated(1, "Error")}));
    let fate = gone(
        &last,
        &GoneContext {
            deleted_by: Some("alice@ops"),
            ..Default::default()
        },
    );
    assert_eq!(fate.class, Class::AppError);
}

#[test]
fn pods_stopped_by_an_attempts_deadline_ended_at_the_deadline() {
    let last = summary(json!({"phase": "Running"}));
    let ctx = GoneContext {
        attempt_failed: Some("DeadlineExceeded"),
        ..Default::default()
    };
    assert_eq!(gone(&last, &ctx).class, Class::Deadline);
}

#[test]
fn a_pod_that_never_got_a_node_ended_for_want_of_capacity() {
    let last = summary(json!({"phase": "Pending"}));
    let cause = crate::waiting::Cause::Stockout {
        zone: "us-central1-a".into(),
    };
    let ctx = GoneContext {
        waiting: Some(&cause),
        ..Default::default()
    };
    let fate = gone(&last, &ctx);
    assert_eq!(fate.class, Class::Capacity);
    assert!(fate.detail.contains("stockout"), "{}", fate.detail);
}

#[test]
fn the_ledger_adds_only_pods_it_lacks_and_keeps_the_newest_fifty() {
    let end = |i: i64| PodEnd {
        pod: format!("p{i}"),
        index: None,
        class: Class::Preempted,
        detail: String::new(),
        at: Some(jiff::Timestamp::from_second(1_800_000_000 + i).unwrap()),
        node: None,
        ran_seconds: 1,
        cost: None,
    };
    let recorded: Vec<PodEnd> = (0..50).map(end).collect();
    assert_eq!(ledger::merge(recorded.clone(), &[end(3)]), None);
    let merged = ledger::merge(recorded, &[end(50)]).unwrap();
    assert_eq!(merged.len(), ledger::KEPT);
    assert_eq!(merged.first().unwrap().pod, "p1");
    assert_eq!(merged.last().unwrap().pod, "p50");
}

#[test]
fn a_pods_share_is_the_largest_fraction_it_asked_for() {
    let node = cost::NodeFacts {
        per_hour: Some(0.36),
        allocatable: Requests {
            cpu_millis: 4000,
            memory_bytes: 16 << 30,
            gpus: 0,
        },
    };
    let asked = Requests {
        cpu_millis: 1000,
        memory_bytes: 8 << 30,
        gpus: 0,
    };
    assert_eq!(node.share(&asked, 1), 0.5);
    assert_eq!(node.share(&Requests::default(), 2), 0.5);
    let cost = node.cost(node.share(&asked, 1), 3600).unwrap();
    assert!((cost - 0.18).abs() < 1e-9);
    let unpriced = cost::NodeFacts {
        per_hour: None,
        ..node
    };
    assert_eq!(unpriced.cost(1.0, 3600), None);
}

#[test]
fn a_node_is_priced_from_its_machine_type_region_and_spot_labels() {
    let node = |spot: &str| -> k8s_openapi::api::core::v1::Node {
        serde_json::from_value(json!({
            "metadata": {"name": "n", "labels": {
                "node.kubernetes.io/instance-type": "n1-standard-4",
                "topology.kubernetes.io/region": "us-central1",
                "cloud.google.com/gke-spot": spot}},
            "status": {"allocatable": {"cpu": "3920m", "memory": "12Gi"}}
        }))
        .unwrap()
    };
    let on_demand = cost::NodeFacts::of(&node("false")).per_hour.unwrap();
    let spot = cost::NodeFacts::of(&node("true")).per_hour.unwrap();
    assert!(spot < on_demand, "spot {spot} vs on-demand {on_demand}");
    assert_eq!(
        cost::NodeFacts::of(&node("true")).allocatable.cpu_millis,
        3920
    );
}

#[test]
fn a_gpu_node_is_priced_with_its_attached_gpus_and_a_carrying_machine_type_alone() {
    let node = |machine: &str, gpu: &str, count: u32| -> k8s_openapi::api::core::v1::Node {
        serde_json::from_value(json!({
            "metadata": {"name": "n", "labels": {
                "node.kubernetes.io/instance-type": machine,
                "topology.kubernetes.io/region": "us-central1",
                "cloud.google.com/gke-spot": "true",
                "cloud.google.com/gke-accelerator": gpu}},
            "status": {"allocatable": {"cpu": "3920m", "memory": "12Gi",
                "nvidia.com/gpu": count.to_string()}}
        }))
        .unwrap()
    };
    // Spot in us-central1: n1-standard-4 $0.06701 and a T4 $0.175 an hour; a2-highgpu-1g
    // $1.92802 with its A100.
    let t4s = cost::NodeFacts::of(&node("n1-standard-4", "nvidia-tesla-t4", 2));
    assert!((t4s.per_hour.unwrap() - (0.06701 + 2.0 * 0.175)).abs() < 1e-9);
    let a2 = cost::NodeFacts::of(&node("a2-highgpu-1g", "nvidia-tesla-a100", 1));
    assert!((a2.per_hour.unwrap() - 1.92802).abs() < 1e-9);
    let k80 = cost::NodeFacts::of(&node("n1-standard-4", "nvidia-tesla-k80", 1));
    assert_eq!(k80.per_hour, None, "an unpriced GPU is unknown, never free");
    // One GPU an hour: the attached one's price, or the carrying machine's shared.
    let t4 = cost::gpu_per_hour(&node("n1-standard-4", "nvidia-tesla-t4", 2)).unwrap();
    assert!((t4 - 0.175).abs() < 1e-9, "{t4}");
    let a100 = cost::gpu_per_hour(&node("a2-highgpu-1g", "nvidia-tesla-a100", 1)).unwrap();
    assert!((a100 - 1.92802).abs() < 1e-9, "{a100}");
    assert_eq!(
        cost::gpu_per_hour(&node("n1-standard-4", "nvidia-tesla-k80", 1)),
        None
    );
}

#[test]
fn a_preempted_pods_status_word_says_preempted_not_its_exit_code() {
    let p = summary(json!({
        "phase": "Failed",
        "conditions": [{"type": "DisruptionTarget", "status": "True", "reason": "TerminationByKubelet"}],
        "containerStatuses": terminated(143, "Error"),
    }));
    assert_eq!(p.status_word(), "Preempted");
}

#[test]
fn a_pod_killed_because_it_was_deleted_has_not_failed() {
    let mut p = pod(json!({"phase": "Failed", "containerStatuses": terminated(143, "Error")}));
    p.metadata.deletion_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
        "2026-12-05T10:05:00Z".parse().unwrap(),
    ));
    assert_eq!(fate_of(&p), None);
}

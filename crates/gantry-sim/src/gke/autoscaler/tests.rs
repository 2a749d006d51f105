//! The autoscaler on a whole simulated cluster: pods pending for GPUs, a pool at its maximum,
//! Compute Engine refusing instances, an idle node going. At a time scale of 1/1000 a simulated
//! minute is 60 ms of real time; every wait is for a change in the cluster's store, bounded.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::SimShared;
use crate::auth::TokenAuthority;
use crate::clock::Clock;
use crate::faults::{Fault, Faults};
use crate::gke::{GkeApi, handlers, pool_requests};
use crate::kube::cluster::ClusterState;
use crate::kube::resources::Kind;
use crate::kube::{lifecycle, nodes};
use crate::test_support::until;
use crate::tls::CertificateAuthority;

const SCALE: f64 = 0.001;
const PATIENCE: Duration = Duration::from_secs(20);
const PLACE: (&str, &str, &str) = ("p", "us-central1-a", "c");

fn shared(faults: Vec<Fault>) -> SimShared {
    SimShared {
        clock: Clock::new(SCALE),
        faults: Arc::new(Faults::new(faults)),
        auth: TokenAuthority::new(None).unwrap(),
        ca: Arc::new(CertificateAuthority::generate().unwrap()),
        replay_dir: None,
        run_images: Default::default(),
    }
}

/// A RUNNING cluster `c` with one plain node and the GPU pool given.
async fn cluster(faults: Vec<Fault>, gpu_pool: Value) -> (Arc<GkeApi>, Arc<ClusterState>) {
    let api = GkeApi::new(shared(faults));
    let body = json!({"cluster": {"name": "c", "nodePools": [
        {"name": "default-pool", "initialNodeCount": 1, "config": {"machineType": "n1-standard-1"}},
        gpu_pool]}});
    api.create_running_from("p", "us-central1-a", body)
        .await
        .unwrap();
    let state = api
        .runtime("p", "us-central1-a", "c")
        .unwrap()
        .state()
        .clone();
    (api, state)
}

/// `gpu-pool`: n1-standard-4 nodes with one T4 each, autoscaled from `min` to `max` per zone.
fn gpu_pool(initial: u64, min: u64, max: u64) -> Value {
    json!({"name": "gpu-pool", "initialNodeCount": initial,
        "autoscaling": {"enabled": true, "minNodeCount": min, "maxNodeCount": max},
        "config": {"machineType": "n1-standard-4",
            "accelerators": [{"acceleratorType": "nvidia-tesla-t4", "acceleratorCount": 1}]}})
}

/// A pod asking one GPU (no toleration: admission adds it, as on GKE); a long one trains for
/// far longer than any test waits.
fn gpu_pod(state: &ClusterState, name: &str, long: bool) {
    let pace = if long { "0.01" } else { "0" };
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "train",
            "image": "gcr.io/p/train:v1",
            "env": [{"name": "SIM_LOG_LINES", "value": "1000"},
                    {"name": "SIM_LINES_PER_SECOND", "value": pace}],
            "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}});
    lifecycle::create(state, Kind::Pod, Some("default"), pod).unwrap();
}

/// The event of this reason about the object of this name.
fn event(state: &ClusterState, object: &str, reason: &str) -> Option<Value> {
    let (events, _) = state.store.list(Kind::Event, None, |e| {
        e["reason"] == reason && e["involvedObject"]["name"] == object
    });
    events.first().map(|e| (**e).clone())
}

/// Waits for a GKE operation to end (operations notify no one: polled, bounded).
async fn finished(api: &GkeApi, answer: &Value) -> Value {
    let name = answer["name"].as_str().unwrap();
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let op = handlers::get_operation(api, "p", "us-central1-a", name).unwrap();
        if op["status"] == "DONE" {
            return op;
        }
        assert!(tokio::time::Instant::now() < deadline, "{name} still runs");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn pool_size(api: &GkeApi, pool: &str) -> u32 {
    let registry = api.registry();
    let record = registry.find("p", "us-central1-a", "c").unwrap();
    let spec = record.spec.node_pools.iter().find(|p| p.name == pool);
    spec.unwrap().nodes_per_zone
}

fn group_url() -> String {
    format!(
        "https://www.googleapis.com/compute/v1/projects/p/zones/us-central1-a/instanceGroups/{}-grp",
        nodes::instance_group("c", "gpu-pool", "us-central1-a")
    )
}

#[tokio::test]
async fn a_pending_gpu_pod_triggers_a_scale_up_and_runs_on_the_new_node() {
    let (api, state) = cluster(Vec::new(), gpu_pool(0, 0, 1)).await;
    gpu_pod(&state, "train", false);
    let triggered = until(&state, "TriggeredScaleUp", |s| {
        event(s, "train", "TriggeredScaleUp")
    })
    .await;
    assert_eq!(
        triggered["message"],
        format!(
            "pod triggered scale-up: [{{{} 0->1 (max: 1)}}]",
            group_url()
        )
    );
    assert_eq!(triggered["type"], "Normal");
    assert_eq!(triggered["source"]["component"], "cluster-autoscaler");
    assert!(event(&state, "train", "FailedScheduling").is_some());
    let node = until(&state, "the pod placed", |s| {
        let pod = s.store.get(Kind::Pod, "default", "train")?;
        pod["spec"]["nodeName"].as_str().map(str::to_string)
    })
    .await;
    let node = state.store.get(Kind::Node, "", &node).unwrap();
    assert_eq!(
        node["metadata"]["labels"]["cloud.google.com/gke-nodepool"],
        "gpu-pool"
    );
    assert_eq!(node["status"]["allocatable"]["nvidia.com/gpu"], "1");
    assert!(
        event(
            &state,
            node["metadata"]["name"].as_str().unwrap(),
            "RegisteredNode"
        )
        .is_some()
    );
    until(&state, "the pod running", |s| {
        let pod = s.store.get(Kind::Pod, "default", "train")?;
        matches!(
            pod["status"]["phase"].as_str(),
            Some("Running" | "Succeeded")
        )
        .then_some(())
    })
    .await;
    // GKE's side follows: the pool's size, and the cluster's node count.
    assert_eq!(pool_size(&api, "gpu-pool"), 1);
    let cluster = handlers::get_cluster(&api, "p", "us-central1-a", "c").unwrap();
    assert_eq!(cluster["currentNodeCount"], 2);
    assert_eq!(cluster["status"], "RUNNING");
}

#[tokio::test]
async fn a_pod_past_the_pools_maximum_is_told_the_group_is_at_its_maximum() {
    let (_api, state) = cluster(Vec::new(), gpu_pool(1, 0, 1)).await;
    gpu_pod(&state, "first", true);
    until(&state, "the first pod placed", |s| {
        let pod = s.store.get(Kind::Pod, "default", "first")?;
        pod["spec"]["nodeName"].as_str().map(|_| ())
    })
    .await;
    gpu_pod(&state, "second", true);
    let told = until(&state, "NotTriggerScaleUp", |s| {
        event(s, "second", "NotTriggerScaleUp")
    })
    .await;
    assert_eq!(
        told["message"],
        "pod didn't trigger scale-up: 1 max node group size reached"
    );
    assert_eq!(told["type"], "Normal");
    assert!(event(&state, "second", "TriggeredScaleUp").is_none());
    assert_eq!(nodes::of_pool(&state, "gpu-pool").len(), 1);
}

#[tokio::test]
async fn a_scale_up_past_the_gpu_quota_fails_with_the_quota_and_makes_no_node() {
    let (api, state) = cluster(vec![Fault::GpuQuota(0)], gpu_pool(0, 0, 1)).await;
    gpu_pod(&state, "train", false);
    let failed = until(&state, "FailedScaleUp", |s| {
        event(s, "train", "FailedScaleUp")
    })
    .await;
    assert_eq!(
        failed["message"],
        "Node scale up in zones us-central1-a associated with this pod failed: GCE quota \
         exceeded. Pod is at risk of not being scheduled."
    );
    assert_eq!(failed["type"], "Warning");
    assert!(event(&state, "train", "TriggeredScaleUp").is_some());
    let told = until(&state, "NotTriggerScaleUp", |s| {
        event(s, "train", "NotTriggerScaleUp")
    })
    .await;
    assert_eq!(
        told["message"],
        "pod didn't trigger scale-up: 1 in backoff after failed scale-up"
    );
    assert!(nodes::of_pool(&state, "gpu-pool").is_empty());
    assert_eq!(pool_size(&api, "gpu-pool"), 0);
    assert!(api.shared.faults.times_fired("gpu-quota") >= 1);
}

#[tokio::test]
async fn a_pool_create_past_the_gpu_quota_ends_in_error_naming_the_quota() {
    let (api, state) = cluster(vec![Fault::GpuQuota(0)], gpu_pool(0, 0, 1)).await;
    let body = json!({"nodePool": {"name": "t4", "initialNodeCount": 1, "config": {
        "machineType": "n1-standard-4",
        "accelerators": [{"acceleratorType": "nvidia-tesla-t4", "acceleratorCount": 1}]}}});
    let answer = pool_requests::create(&api, PLACE, body).unwrap();
    let op = finished(&api, &answer).await;
    assert_eq!(op["error"]["code"], 8);
    let message = op["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("Quota 'GPUS_ALL_REGIONS' exceeded.  Limit: 0.0 globally."),
        "{message}"
    );
    let pool = handlers::get_node_pool(&api, "p", "us-central1-a", "c", "t4").unwrap();
    assert_eq!(pool["status"], "ERROR");
    assert_eq!(pool["statusMessage"], message);
    assert!(nodes::of_pool(&state, "t4").is_empty());
    let cluster = handlers::get_cluster(&api, "p", "us-central1-a", "c").unwrap();
    assert_eq!(cluster["status"], "RUNNING");
}

#[tokio::test]
async fn a_stockout_fails_a_resize_with_the_zone_exhausted_and_a_scale_up_out_of_resources() {
    let stockout = Fault::Stockout {
        pool: "gpu-pool".into(),
        room: 0,
    };
    let (api, state) = cluster(vec![stockout], gpu_pool(0, 0, 1)).await;
    let answer = pool_requests::set_size(&api, PLACE, "gpu-pool", json!({"nodeCount": 1})).unwrap();
    let op = finished(&api, &answer).await;
    let message = op["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("[ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS]")
            && message.contains(
                "The zone 'projects/p/zones/us-central1-a' does not have enough resources \
                 available to fulfill the request.  '(resource type:compute)'."
            ),
        "{message}"
    );
    assert!(nodes::of_pool(&state, "gpu-pool").is_empty());
    gpu_pod(&state, "train", false);
    let failed = until(&state, "FailedScaleUp", |s| {
        event(s, "train", "FailedScaleUp")
    })
    .await;
    assert_eq!(
        failed["message"],
        "Node scale up in zones us-central1-a associated with this pod failed: GCE out of \
         resources. Pod is at risk of not being scheduled."
    );
    assert!(nodes::of_pool(&state, "gpu-pool").is_empty());
    assert!(api.shared.faults.times_fired("stockout") >= 2);
}

#[tokio::test]
async fn a_stockout_after_one_node_fails_a_resize_to_two_with_the_zone_exhausted() {
    let stockout = Fault::Stockout {
        pool: "gpu-pool".into(),
        room: 1,
    };
    let plain = json!({"name": "gpu-pool", "initialNodeCount": 1,
        "config": {"machineType": "n1-standard-4"}});
    let (api, state) = cluster(vec![stockout], plain).await;
    let answer = pool_requests::set_size(&api, PLACE, "gpu-pool", json!({"nodeCount": 2})).unwrap();
    let op = finished(&api, &answer).await;
    let message = op["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(
            "Expected 2, running 1, transitioning 1. Current errors: \
             [ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS]"
        ),
        "{message}"
    );
    assert_eq!(nodes::of_pool(&state, "gpu-pool").len(), 1);
}

/// The stockout of a Spot pool that was made and finds no capacity to grow: the cluster is
/// created, as a client creates it (so Compute Engine is asked), with the pool's one node, and
/// a Job's second pod, which does not fit it, raises a scale-up that fails with the stockout.
#[tokio::test]
async fn a_stockout_after_the_first_node_lets_the_cluster_be_made_and_fails_its_scale_up() {
    let stockout = Fault::Stockout {
        pool: "default-pool".into(),
        room: 1,
    };
    let api = GkeApi::new(shared(vec![stockout]));
    let body = json!({"cluster": {"name": "c", "nodePools": [{"name": "default-pool",
        "initialNodeCount": 1,
        "autoscaling": {"enabled": true, "minNodeCount": 1, "maxNodeCount": 3},
        "config": {"machineType": "n1-standard-4", "spot": true}}]}});
    let answer = handlers::create_cluster(&api, "p", "us-central1-a", body).unwrap();
    let op = finished(&api, &answer).await;
    assert!(op.get("error").is_none(), "{op}");
    let cluster = handlers::get_cluster(&api, "p", "us-central1-a", "c").unwrap();
    assert_eq!(cluster["status"], "RUNNING");
    let state = api
        .runtime("p", "us-central1-a", "c")
        .unwrap()
        .state()
        .clone();
    assert_eq!(nodes::of_pool(&state, "default-pool").len(), 1);
    // Two pods of 2.5 CPUs: one fits the node's 3.92 allocatable, the other waits for a second.
    let job = json!({"metadata": {"name": "train"},
        "spec": {"parallelism": 2, "completions": 2, "template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "main", "image": "gcr.io/p/train:v1",
                "env": [{"name": "SIM_LOG_LINES", "value": "1000"},
                        {"name": "SIM_LINES_PER_SECOND", "value": "0.01"}],
                "resources": {"requests": {"cpu": "2500m"}}}]}}}});
    lifecycle::create(&state, Kind::Job, Some("default"), job).unwrap();
    let failed = until(&state, "FailedScaleUp", |s| {
        let (events, _) = s
            .store
            .list(Kind::Event, None, |e| e["reason"] == "FailedScaleUp");
        events.first().map(|e| (**e).clone())
    })
    .await;
    assert_eq!(
        failed["message"],
        "Node scale up in zones us-central1-a associated with this pod failed: GCE out of \
         resources. Pod is at risk of not being scheduled."
    );
    let waiting = failed["involvedObject"]["name"].as_str().unwrap();
    let triggered = event(&state, waiting, "TriggeredScaleUp").unwrap();
    assert!(
        triggered["message"]
            .as_str()
            .unwrap()
            .ends_with(" 1->2 (max: 3)}]"),
        "{triggered}"
    );
    let pod = state.store.get(Kind::Pod, "default", waiting).unwrap();
    assert_eq!(pod["status"]["phase"], "Pending", "{pod}");
    assert_eq!(nodes::of_pool(&state, "default-pool").len(), 1);
    assert!(api.shared.faults.times_fired("stockout") >= 1);
}

#[tokio::test]
async fn an_idle_autoscaled_node_goes_after_ten_simulated_minutes() {
    let started = tokio::time::Instant::now();
    let (api, state) = cluster(Vec::new(), gpu_pool(1, 0, 2)).await;
    let node = nodes::of_pool(&state, "gpu-pool").remove(0).name;
    let marked = until(&state, "ScaleDown", |s| event(s, &node, "ScaleDown")).await;
    assert_eq!(
        marked["message"],
        "marked the node as toBeDeleted/unschedulable"
    );
    assert_eq!(marked["source"]["component"], "cluster-autoscaler");
    until(&state, "the node gone", |s| {
        s.store.get(Kind::Node, "", &node).is_none().then_some(())
    })
    .await;
    // Never before ten simulated minutes of idleness.
    assert!(started.elapsed() >= Clock::new(SCALE).scaled(Duration::from_secs(600)));
    assert_eq!(pool_size(&api, "gpu-pool"), 0);
    // The plain pool is not the autoscaler's: its node stays.
    assert_eq!(nodes::of_pool(&state, "default-pool").len(), 1);
}

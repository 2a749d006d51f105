//! The simulated GKE API under faults and in its corners: failed creates, cancellation and busy
//! clusters, regional clusters, the `zones` URL form, clusters running from the start.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// The `zones` URL form uses fields GKE has deprecated but still serves.
#![allow(deprecated)]

use crate::sim_gke_support;

use sim_gke_support::*;

use gantry::sim::faults::Fault;
use gantry::sim::kube::cluster::ClusterSpec;
use google_cloud_container_v1::model::{
    AcceleratorConfig, Cluster, NodeConfig, NodePool, NodeTaint, Operation, ReleaseChannel,
    cluster, node_taint, operation, release_channel,
};
use google_cloud_gax::error::rpc::Code;
use serde_json::{Value, json};

async fn create_failing(fault: Fault) -> (Sim, Operation, Cluster) {
    let sim = Sim::start(0.001).await;
    sim.shared.faults.set(fault);
    let client = sim.client().await;
    let seen = wait_done(
        &client,
        &create(&client, ZONE, seed_cluster("doomed")).await,
    )
    .await;
    let cluster = get(&client, ZONE, "doomed").await;
    (sim, seen.last().cloned().unwrap(), cluster)
}

#[tokio::test]
async fn quota_fault_ends_in_error_and_the_cluster_can_be_deleted() {
    let (sim, op, cluster) = create_failing(Fault::GkeQuota).await;
    let error = op.error.as_ref().unwrap();
    assert_eq!(error.code, 8);
    assert!(
        error.message.starts_with(
            "Insufficient regional quota to satisfy request: resource \"CPUS\": request requires '3.0' and is short '1.0'"
        ),
        "{}",
        error.message
    );
    assert_eq!(cluster.status, cluster::Status::Error);
    assert_eq!(cluster.status_message, error.message);
    assert!(cluster.endpoint.is_empty());
    assert!(sim.api.running().borrow().is_empty());

    let client = sim.client().await;
    let delete = client
        .delete_cluster()
        .set_name(cluster_name(ZONE, "doomed"))
        .send()
        .await
        .unwrap();
    wait_done(&client, &delete).await;
    let gone = client
        .get_cluster()
        .set_name(cluster_name(ZONE, "doomed"))
        .send()
        .await;
    assert_eq!(code(&gone.unwrap_err()).1, Some(Code::NotFound));
}

#[tokio::test]
async fn create_error_fault_ends_in_error() {
    let (_sim, op, cluster) =
        create_failing(Fault::GkeCreateError("the zone ran out of luck".into())).await;
    let error = op.error.as_ref().unwrap();
    assert_eq!(
        (error.code, error.message.as_str()),
        (13, "the zone ran out of luck")
    );
    assert_eq!(op.status_message, "the zone ran out of luck");
    assert_eq!(cluster.status, cluster::Status::Error);
    assert_eq!(cluster.status_message, "the zone ran out of luck");
}

#[tokio::test]
async fn cancel_and_busy_clusters() {
    // At GKE's own pace nothing finishes during the test, so every state below is stable.
    let sim = Sim::start(1.0).await;
    let client = sim.client().await;
    let op = create(&client, ZONE, seed_cluster("slow")).await;
    let busy = client
        .delete_cluster()
        .set_name(cluster_name(ZONE, "slow"))
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&busy), (Some(400), Some(Code::FailedPrecondition)));
    assert!(busy.status().unwrap().message.contains(&op.name));

    let op_name = format!("{}/operations/{}", parent(ZONE), op.name);
    client
        .cancel_operation()
        .set_name(&op_name)
        .send()
        .await
        .unwrap();
    let cancelled = client
        .get_operation()
        .set_name(&op_name)
        .send()
        .await
        .unwrap();
    assert_eq!(cancelled.status, operation::Status::Done);
    assert_eq!(cancelled.error.as_ref().map(|e| e.code), Some(1));
    assert_eq!(
        get(&client, ZONE, "slow").await.status,
        cluster::Status::Error
    );
    let again = client
        .cancel_operation()
        .set_name(&op_name)
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&again).1, Some(Code::FailedPrecondition));

    let delete = client
        .delete_cluster()
        .set_name(cluster_name(ZONE, "slow"))
        .send()
        .await
        .unwrap();
    assert_eq!(delete.status, operation::Status::Running);
    assert_eq!(
        get(&client, ZONE, "slow").await.status,
        cluster::Status::Stopping
    );
    let twice = client
        .delete_cluster()
        .set_name(cluster_name(ZONE, "slow"))
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&twice), (Some(400), Some(Code::FailedPrecondition)));
    let recreate = client
        .create_cluster()
        .set_parent(parent(ZONE))
        .set_cluster(seed_cluster("slow"))
        .send()
        .await;
    assert_eq!(code(&recreate.unwrap_err()).1, Some(Code::AlreadyExists));
}

#[tokio::test]
async fn regional_clusters_span_three_zones() {
    let sim = Sim::start(0.001).await;
    let client = sim.client().await;
    let gpu = NodeConfig::new()
        .set_machine_type("n1-standard-8")
        .set_spot(true)
        .set_accelerators([AcceleratorConfig::new()
            .set_accelerator_type("nvidia-tesla-t4")
            .set_accelerator_count(2)])
        .set_taints([NodeTaint::new()
            .set_key("nvidia.com/gpu")
            .set_value("present")
            .set_effect(node_taint::Effect::NoSchedule)]);
    let cluster = Cluster::new()
        .set_name("regional")
        .set_release_channel(ReleaseChannel::new().set_channel(release_channel::Channel::Rapid))
        .set_node_pools([NodePool::new()
            .set_name("gpus")
            .set_initial_node_count(2)
            .set_config(gpu)]);
    let op = create(&client, "us-central1", cluster).await;
    wait_done(&client, &op).await;
    let running = get(&client, "us-central1", "regional").await;
    assert_eq!(running.current_node_count, 6);
    assert_eq!(
        running.locations,
        ["us-central1-a", "us-central1-b", "us-central1-c"]
    );
    assert_eq!(
        running.release_channel.unwrap().channel,
        release_channel::Channel::Rapid
    );
    let config = running.node_pools[0].config.clone().unwrap();
    assert_eq!(config.accelerators[0].accelerator_count, 2);
    assert_eq!(config.taints[0].effect, node_taint::Effect::NoSchedule);
    assert!(config.spot);
    let spec = sim
        .api
        .runtime(PROJECT, "us-central1", "regional")
        .unwrap()
        .state()
        .spec
        .clone();
    assert_eq!(
        spec.node_pools[0].accelerator,
        Some(("nvidia-tesla-t4".to_string(), 2))
    );
    assert_eq!(spec.node_pools[0].taints[0].2, "NoSchedule");
}

#[tokio::test]
async fn zones_form_snake_case_and_enum_numbers() {
    // At GKE's pace the cluster stays PROVISIONING throughout.
    let sim = Sim::start(1.0).await;
    let zone = "us-central1-b";
    let body = json!({"cluster": {
        "name": "raw",
        "release_channel": {"channel": 3},
        "node_pools": [{"name": "pool", "initial_node_count": "2", "config": {
            "machine_type": "n1-standard-4",
            "labels": {"team_name": "ml"},
            "accelerators": [{"accelerator_type": "nvidia-tesla-t4", "accelerator_count": "1",
                "gpu_driver_installation_config": {"gpu_driver_version": 3}}]}}]
    }});
    let clusters = format!("/v1/projects/{PROJECT}/zones/{zone}/clusters");
    let response = sim
        .http(reqwest::Method::POST, &clusters)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let op: Value = response.json().await.unwrap();
    assert_eq!(op["operationType"], "CREATE_CLUSTER");
    assert_eq!(op["zone"], zone);

    let path = format!("{clusters}/raw");
    let cluster: Value = sim
        .http(reqwest::Method::GET, &path)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(cluster["releaseChannel"], json!({"channel": "STABLE"}));
    assert_eq!(cluster["status"], "PROVISIONING");
    let config = &cluster["nodePools"][0]["config"];
    assert_eq!(config["labels"], json!({"team_name": "ml"}));
    assert_eq!(config["accelerators"][0]["acceleratorCount"], "1");
    assert_eq!(
        config["accelerators"][0]["gpuDriverInstallationConfig"]["gpuDriverVersion"],
        "LATEST"
    );
    assert_eq!(cluster["nodePools"][0]["initialNodeCount"], 2);

    // What the official client adds to every request: int enums, empty deprecated fields.
    let numbered = format!("{path}?projectId=&zone=&clusterId=&%24alt=json%3Benum-encoding%3Dint");
    let cluster: Value = sim
        .http(reqwest::Method::GET, &numbered)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(cluster["releaseChannel"]["channel"], 3);
    assert_eq!(cluster["status"], 1);

    let client = sim.client().await;
    let by_zone = client
        .get_cluster()
        .set_project_id(PROJECT)
        .set_zone(zone)
        .set_cluster_id("raw")
        .send()
        .await
        .unwrap();
    assert_eq!(by_zone.name, "raw");
    let listed = client
        .list_clusters()
        .set_project_id(PROJECT)
        .set_zone(zone)
        .send()
        .await
        .unwrap();
    assert_eq!(listed.clusters.len(), 1);
    let op_name = op["name"].as_str().unwrap();
    let by_zone = client
        .get_operation()
        .set_project_id(PROJECT)
        .set_zone(zone)
        .set_operation_id(op_name)
        .send()
        .await
        .unwrap();
    assert_eq!(by_zone.name, op_name);

    let unknown = sim
        .http(reqwest::Method::GET, "/v1/projects/p/regions/r/clusters")
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), 404);
    let error: Value = unknown.json().await.unwrap();
    assert_eq!(error["error"]["status"], "NOT_FOUND");
}

#[tokio::test]
async fn create_running_skips_the_wait() {
    let sim = Sim::start(1.0).await;
    let mut running = sim.api.running();
    sim.api
        .create_running(ClusterSpec::seed(PROJECT, ZONE, "seeded"))
        .await
        .unwrap();
    assert!(running.has_changed().unwrap());
    let listed = running.borrow_and_update().clone();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (listed[0].project.as_str(), listed[0].location.as_str()),
        (PROJECT, ZONE)
    );

    let client = sim.client().await;
    let cluster = get(&client, ZONE, "seeded").await;
    assert_eq!(cluster.status, cluster::Status::Running);
    assert_eq!(cluster.endpoint, listed[0].endpoint);
    assert_eq!(cluster.current_node_count, 3);
    let ops = client
        .list_operations()
        .set_parent(parent("-"))
        .send()
        .await
        .unwrap();
    assert_eq!(ops.operations.len(), 1);
    assert_eq!(ops.operations[0].status, operation::Status::Done);
    assert!(
        sim.api
            .create_running(ClusterSpec::seed(PROJECT, ZONE, "seeded"))
            .await
            .is_err()
    );

    sim.stop.cancel();
    running.changed().await.unwrap();
    assert!(running.borrow().is_empty());
}

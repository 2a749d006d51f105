//! Changes to a running cluster on the simulated GKE API through the official
//! `google-cloud-container-v1` client (and raw JSON for the older `zones` URL form): each is an
//! operation during which the cluster is RECONCILING, and its Kubernetes nodes follow the pools.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(deprecated)]

use crate::sim_gke_support;

use sim_gke_support::*;

use gantry::sim::kube::nodes;
use google_cloud_container_v1::client::ClusterManager;
use google_cloud_container_v1::model::{
    NodeLabels, NodePool, NodePoolAutoscaling, Operation, cluster, operation,
};
use google_cloud_gax::error::rpc::Code;
use serde_json::json;

const NAME: &str = "gantry";

fn pool_name(pool: &str) -> String {
    format!("{}/nodePools/{pool}", cluster_name(ZONE, NAME))
}

/// A simulated GKE with the seed's cluster (3 × n1-standard-1) RUNNING.
async fn running_cluster() -> (Sim, ClusterManager) {
    let sim = Sim::start(0.001).await;
    let client = sim.client().await;
    let op = create(&client, ZONE, seed_cluster(NAME)).await;
    wait_done(&client, &op).await;
    (sim, client)
}

/// The pool's nodes as the cluster's Kubernetes API has them.
fn pool_nodes(sim: &Sim, pool: &str) -> Vec<nodes::PoolNode> {
    let runtime = sim.api.runtime(PROJECT, ZONE, NAME).unwrap();
    nodes::of_pool(runtime.state(), pool)
}

/// Waits for the operation, which must end without an error.
async fn finished(client: &ClusterManager, op: &Operation) {
    let seen = wait_done(client, op).await;
    let last = seen.last().unwrap();
    assert!(last.error.is_none(), "{:?}", last.error);
}

#[tokio::test]
async fn set_node_pool_size_is_an_operation_after_which_the_pool_has_that_size() {
    let (sim, client) = running_cluster().await;
    let op = client
        .set_node_pool_size()
        .set_name(pool_name("default-pool"))
        .set_node_count(5)
        .send()
        .await
        .unwrap();
    assert_eq!(op.operation_type, operation::Type::SetNodePoolSize);
    assert_ne!(op.status, operation::Status::Done);
    assert!(
        op.target_link
            .ends_with("/clusters/gantry/nodePools/default-pool"),
        "{}",
        op.target_link
    );
    finished(&client, &op).await;
    let after = get(&client, ZONE, NAME).await;
    assert_eq!(after.status, cluster::Status::Running);
    assert!(after.status_message.is_empty(), "{}", after.status_message);
    assert_eq!(after.current_node_count, 5);
    assert_eq!(pool_nodes(&sim, "default-pool").len(), 5);
}

#[tokio::test]
async fn the_cluster_is_reconciling_while_a_change_runs_and_refuses_a_second() {
    // At GKE's pace, so that the first is surely still running.
    let sim = Sim::start(1.0).await;
    let client = sim.client().await;
    sim.api
        .create_running(gantry::sim::kube::cluster::ClusterSpec::seed(
            PROJECT, ZONE, NAME,
        ))
        .await
        .unwrap();
    let first = client
        .set_node_pool_size()
        .set_name(pool_name("default-pool"))
        .set_node_count(1)
        .send()
        .await
        .unwrap();
    let during = get(&client, ZONE, NAME).await;
    assert_eq!(during.status, cluster::Status::Reconciling);
    assert_eq!(
        during.status_message,
        "Resizing node pool default-pool to 1 nodes per zone."
    );
    let pool = &during.node_pools[0];
    assert_eq!(
        pool.status,
        google_cloud_container_v1::model::node_pool::Status::Reconciling
    );
    let err = client
        .delete_node_pool()
        .set_name(pool_name("default-pool"))
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&err), (Some(400), Some(Code::FailedPrecondition)));
    let message = err.status().unwrap().message.clone();
    assert_eq!(
        message,
        format!(
            "Operation {} is currently resizing a node pool for cluster {NAME}. Please wait and \
             try again once it is done.",
            first.name
        )
    );
}

#[tokio::test]
async fn sizes_and_pools_gke_refuses_are_refused_and_change_nothing() {
    let (sim, client) = running_cluster().await;
    let err = client
        .set_node_pool_size()
        .set_name(pool_name("default-pool"))
        .set_node_count(-1)
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&err), (Some(400), Some(Code::InvalidArgument)));
    let err = client
        .set_node_pool_size()
        .set_name(pool_name("nope"))
        .set_node_count(1)
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&err), (Some(404), Some(Code::NotFound)));
    let err = client
        .update_node_pool()
        .set_name(pool_name("default-pool"))
        .set_machine_type("n9-huge")
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&err), (Some(400), Some(Code::InvalidArgument)));
    assert!(
        err.status()
            .unwrap()
            .message
            .contains("Machine type \"n9-huge\" does not exist"),
        "{err}"
    );
    assert_eq!(
        get(&client, ZONE, NAME).await.status,
        cluster::Status::Running
    );
    assert_eq!(pool_nodes(&sim, "default-pool").len(), 3);
}

#[tokio::test]
async fn a_new_pool_gets_nodes_labelled_as_gke_labels_them_and_deleting_it_drains_them() {
    let (sim, client) = running_cluster().await;
    let pool = NodePool::new()
        .set_name("gpu")
        .set_initial_node_count(2)
        .set_config(
            google_cloud_container_v1::model::NodeConfig::new()
                .set_machine_type("n1-standard-4")
                .set_labels([("team", "ml")]),
        )
        .set_autoscaling(
            NodePoolAutoscaling::new()
                .set_enabled(true)
                .set_min_node_count(1)
                .set_max_node_count(4),
        );
    let op = client
        .create_node_pool()
        .set_parent(cluster_name(ZONE, NAME))
        .set_node_pool(pool)
        .send()
        .await
        .unwrap();
    assert_eq!(op.operation_type, operation::Type::CreateNodePool);
    finished(&client, &op).await;
    let created = client
        .get_node_pool()
        .set_name(pool_name("gpu"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        created.config.as_ref().unwrap().machine_type,
        "n1-standard-4"
    );
    assert!(created.autoscaling.as_ref().unwrap().enabled);
    assert_eq!(pool_nodes(&sim, "gpu").len(), 2);
    let runtime = sim.api.runtime(PROJECT, ZONE, NAME).unwrap();
    let store = &runtime.state().store;
    let node = store
        .get(
            gantry::sim::kube::resources::Kind::Node,
            "",
            &pool_nodes(&sim, "gpu")[0].name,
        )
        .unwrap();
    let labels = &node["metadata"]["labels"];
    assert_eq!(labels["cloud.google.com/gke-nodepool"], "gpu");
    assert_eq!(labels["node.kubernetes.io/instance-type"], "n1-standard-4");
    assert_eq!(labels["team"], "ml");

    let op = client
        .delete_node_pool()
        .set_name(pool_name("gpu"))
        .send()
        .await
        .unwrap();
    assert_eq!(op.operation_type, operation::Type::DeleteNodePool);
    finished(&client, &op).await;
    assert!(pool_nodes(&sim, "gpu").is_empty());
    let err = client
        .get_node_pool()
        .set_name(pool_name("gpu"))
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&err), (Some(404), Some(Code::NotFound)));
}

#[tokio::test]
async fn updating_labels_keeps_the_nodes_and_a_new_machine_type_replaces_them() {
    let (sim, client) = running_cluster().await;
    let before: Vec<String> = pool_nodes(&sim, "default-pool")
        .into_iter()
        .map(|n| n.name)
        .collect();
    let op = client
        .update_node_pool()
        .set_name(pool_name("default-pool"))
        .set_labels(NodeLabels::new().set_labels([("stage", "train")]))
        .send()
        .await
        .unwrap();
    assert_eq!(op.operation_type, operation::Type::UpgradeNodes);
    finished(&client, &op).await;
    let relabelled: Vec<String> = pool_nodes(&sim, "default-pool")
        .into_iter()
        .map(|n| n.name)
        .collect();
    assert_eq!(relabelled, before);

    let op = client
        .update_node_pool()
        .set_name(pool_name("default-pool"))
        .set_machine_type("e2-standard-2")
        .send()
        .await
        .unwrap();
    finished(&client, &op).await;
    let after = pool_nodes(&sim, "default-pool");
    assert_eq!(after.len(), 3);
    assert!(after.iter().all(|n| !before.contains(&n.name)), "{after:?}");
    let pool = client
        .get_node_pool()
        .set_name(pool_name("default-pool"))
        .send()
        .await
        .unwrap();
    let config = pool.config.unwrap();
    assert_eq!(config.machine_type, "e2-standard-2");
    assert_eq!(
        config.labels.get("stage").map(String::as_str),
        Some("train")
    );
}

#[tokio::test]
async fn resource_labels_need_the_fingerprint_of_the_labels_read() {
    let (_sim, client) = running_cluster().await;
    let read = get(&client, ZONE, NAME).await;
    let err = client
        .set_labels()
        .set_name(cluster_name(ZONE, NAME))
        .set_resource_labels([("team", "ml")])
        .set_label_fingerprint("00000000")
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&err), (Some(400), Some(Code::FailedPrecondition)));
    let op = client
        .set_labels()
        .set_name(cluster_name(ZONE, NAME))
        .set_resource_labels([("team", "ml")])
        .set_label_fingerprint(&read.label_fingerprint)
        .send()
        .await
        .unwrap();
    assert_eq!(op.operation_type, operation::Type::UpdateCluster);
    finished(&client, &op).await;
    let after = get(&client, ZONE, NAME).await;
    assert_eq!(
        after.resource_labels.get("team").map(String::as_str),
        Some("ml")
    );
    assert_ne!(after.label_fingerprint, read.label_fingerprint);
}

#[tokio::test]
async fn the_zones_url_form_resizes_and_autoscales_too() {
    let (sim, client) = running_cluster().await;
    let base =
        format!("/v1/projects/{PROJECT}/zones/{ZONE}/clusters/{NAME}/nodePools/default-pool");
    let resized = sim
        .http(reqwest::Method::POST, &format!("{base}/setSize"))
        .json(&json!({"nodeCount": 2}))
        .send()
        .await
        .unwrap();
    assert_eq!(resized.status(), 200);
    let op: serde_json::Value = resized.json().await.unwrap();
    assert_eq!(op["operationType"], "SET_NODE_POOL_SIZE");
    let op = client
        .get_operation()
        .set_name(format!(
            "{}/operations/{}",
            parent(ZONE),
            op["name"].as_str().unwrap()
        ))
        .send()
        .await
        .unwrap();
    finished(&client, &op).await;
    assert_eq!(pool_nodes(&sim, "default-pool").len(), 2);

    let scaled = sim
        .http(reqwest::Method::POST, &format!("{base}/autoscaling"))
        .json(&json!({"autoscaling": {"enabled": true, "minNodeCount": 1, "maxNodeCount": 3}}))
        .send()
        .await
        .unwrap();
    assert_eq!(scaled.status(), 200);
    let op: serde_json::Value = scaled.json().await.unwrap();
    let op = client
        .get_operation()
        .set_name(format!(
            "{}/operations/{}",
            parent(ZONE),
            op["name"].as_str().unwrap()
        ))
        .send()
        .await
        .unwrap();
    finished(&client, &op).await;
    let pool = client
        .get_node_pool()
        .set_name(pool_name("default-pool"))
        .send()
        .await
        .unwrap();
    let autoscaling = pool.autoscaling.unwrap();
    assert!(autoscaling.enabled);
    assert_eq!(
        (autoscaling.min_node_count, autoscaling.max_node_count),
        (1, 3)
    );
}

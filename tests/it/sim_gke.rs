//! The simulated GKE API, driven by the official `google-cloud-container-v1` client (and by raw
//! JSON for what that client never sends) over loopback: provisioning, listing, deleting,
//! validation and credentials.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// The seed's request uses fields GKE has deprecated but still serves.
#![allow(deprecated)]

use crate::sim_gke_support;

use sim_gke_support::*;

use base64::Engine;
use gantry::sim::faults::Fault;
use google_cloud_container_v1::model::{
    AcceleratorConfig, Cluster, NodeConfig, NodePool, cluster, operation, release_channel,
};
use google_cloud_gax::error::rpc::Code;

#[tokio::test]
async fn seed_cluster_provisions_to_running() {
    let sim = Sim::start(0.001).await;
    let client = sim.client().await;
    let op = create(&client, ZONE, seed_cluster("gantry")).await;
    assert_eq!(op.operation_type, operation::Type::CreateCluster);
    assert_ne!(op.status, operation::Status::Done);
    assert_eq!(op.location, ZONE);
    assert!(
        op.target_link
            .ends_with("/zones/us-central1-a/clusters/gantry"),
        "{}",
        op.target_link
    );
    assert!(op.self_link.starts_with(&sim.url), "{}", op.self_link);

    let seen = wait_done(&client, &op).await;
    let order = stage_order(&seen);
    assert!(
        order.windows(2).all(|w| w[0] <= w[1]),
        "stages out of order: {order:?}"
    );
    let last = seen.last().unwrap();
    assert!(last.error.is_none(), "{:?}", last.error);
    assert!(!last.end_time.is_empty());
    let stages = &last.progress.as_ref().unwrap().stages;
    assert_eq!(
        stages.first().map(|s| s.name.as_str()),
        Some("CLUSTER_CONFIGURING")
    );
    assert!(stages.iter().all(|s| s.status == operation::Status::Done));
    // Each state in progress says what is happening; a DONE one says nothing (gcloud would warn).
    let details: Vec<&str> = seen.iter().map(|op| op.detail.as_str()).collect();
    let (done, in_progress) = details.split_last().unwrap();
    assert!(
        in_progress.iter().all(|d| !d.is_empty()) && done.is_empty(),
        "{details:?}"
    );

    let running = get(&client, ZONE, "gantry").await;
    assert_eq!(running.status, cluster::Status::Running);
    assert!(
        running.endpoint.starts_with("127.0.0.1:"),
        "{}",
        running.endpoint
    );
    let ca = running
        .master_auth
        .as_ref()
        .unwrap()
        .cluster_ca_certificate
        .clone();
    let ca = base64::engine::general_purpose::STANDARD
        .decode(ca)
        .unwrap();
    assert_eq!(String::from_utf8(ca).unwrap(), sim.shared.ca.pem());
    assert_eq!(running.current_node_count, 3);
    assert_eq!(running.zone, ZONE);
    assert_eq!(running.locations, [ZONE]);
    assert_eq!(
        running.current_master_version,
        running.initial_cluster_version
    );
    assert!(!running.create_time.is_empty());
    assert_eq!(
        running.release_channel.as_ref().map(|r| r.channel.clone()),
        Some(release_channel::Channel::Regular)
    );
    assert_eq!(
        running.self_link,
        format!(
            "{}/v1/projects/{PROJECT}/zones/{ZONE}/clusters/gantry",
            sim.url
        )
    );

    let pool = &running.node_pools[0];
    assert_eq!(pool.name, "default-pool");
    assert_eq!(pool.initial_node_count, 3);
    let config = pool.config.as_ref().unwrap();
    assert_eq!(config.machine_type, "n1-standard-1");
    assert_eq!(config.oauth_scopes, SEED_SCOPES);
    assert_eq!(running.node_config.as_ref(), Some(config));

    let runtime = sim.api.runtime(PROJECT, ZONE, "gantry").expect("a runtime");
    assert_eq!(runtime.endpoint(), running.endpoint);
    let listed = sim.api.running().borrow().clone();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (listed[0].name.as_str(), listed[0].endpoint.as_str()),
        ("gantry", running.endpoint.as_str())
    );
}

#[tokio::test]
async fn lists_recreates_and_deletes() {
    let sim = Sim::start(0.001).await;
    let client = sim.client().await;
    wait_done(&client, &create(&client, ZONE, seed_cluster("one")).await).await;

    let again = client
        .create_cluster()
        .set_parent(parent(ZONE))
        .set_cluster(seed_cluster("one"))
        .send()
        .await;
    assert_eq!(
        code(&again.unwrap_err()),
        (Some(409), Some(Code::AlreadyExists))
    );

    let all = client
        .list_clusters()
        .set_parent(parent("-"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        all.clusters
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>(),
        ["one"]
    );
    let elsewhere = client
        .list_clusters()
        .set_parent(parent("europe-west4"))
        .send()
        .await
        .unwrap();
    assert!(elsewhere.clusters.is_empty());
    let pools = client
        .list_node_pools()
        .set_parent(cluster_name(ZONE, "one"))
        .send()
        .await
        .unwrap();
    assert_eq!(pools.node_pools.len(), 1);
    let pool = client
        .get_node_pool()
        .set_name(format!(
            "{}/nodePools/default-pool",
            cluster_name(ZONE, "one")
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(
        pool.status,
        google_cloud_container_v1::model::node_pool::Status::Running
    );
    assert!(
        pool.self_link
            .ends_with("/clusters/one/nodePools/default-pool")
    );

    let delete = client
        .delete_cluster()
        .set_name(cluster_name(ZONE, "one"))
        .send()
        .await
        .unwrap();
    assert_eq!(delete.operation_type, operation::Type::DeleteCluster);
    assert!(sim.api.running().borrow().is_empty());
    let seen = wait_done(&client, &delete).await;
    assert!(seen.last().unwrap().error.is_none());
    let gone = client
        .get_cluster()
        .set_name(cluster_name(ZONE, "one"))
        .send()
        .await;
    assert_eq!(code(&gone.unwrap_err()), (Some(404), Some(Code::NotFound)));
    assert!(sim.api.runtime(PROJECT, ZONE, "one").is_none());

    let ops = client
        .list_operations()
        .set_parent(parent(ZONE))
        .send()
        .await
        .unwrap();
    let types: Vec<_> = ops
        .operations
        .iter()
        .map(|o| o.operation_type.clone())
        .collect();
    assert!(
        types.contains(&operation::Type::CreateCluster)
            && types.contains(&operation::Type::DeleteCluster)
    );
}

#[tokio::test]
async fn rejects_bad_requests_as_gke_does() {
    let sim = Sim::start(0.001).await;
    let client = sim.client().await;
    let pool = |config: NodeConfig, nodes: i32| {
        NodePool::new()
            .set_name("p")
            .set_initial_node_count(nodes)
            .set_config(config)
    };
    let gpu = NodeConfig::new()
        .set_machine_type("n1-standard-4")
        .set_accelerators([AcceleratorConfig::new()
            .set_accelerator_type("nvidia-gtx-1080")
            .set_accelerator_count(1)]);
    let bad = [
        (ZONE, seed_cluster("Bad_Name")),
        (ZONE, seed_cluster(&"a".repeat(41))),
        (
            ZONE,
            Cluster::new().set_name("zero").set_initial_node_count(0),
        ),
        (
            ZONE,
            Cluster::new()
                .set_name("neg")
                .set_node_pools([pool(NodeConfig::new(), -1)]),
        ),
        (
            ZONE,
            Cluster::new()
                .set_name("m")
                .set_node_pools([pool(NodeConfig::new().set_machine_type("n9-huge"), 1)]),
        ),
        (
            ZONE,
            Cluster::new()
                .set_name("gpu")
                .set_node_pools([pool(gpu, 1)]),
        ),
        ("mars-north", seed_cluster("bad-location")),
    ];
    for (location, cluster) in bad {
        let name = cluster.name.clone();
        let err = client
            .create_cluster()
            .set_parent(parent(location))
            .set_cluster(cluster)
            .send()
            .await
            .unwrap_err();
        assert_eq!(
            code(&err),
            (Some(400), Some(Code::InvalidArgument)),
            "{name}: {err}"
        );
    }
    let missing = client
        .get_cluster()
        .set_name(cluster_name(ZONE, "nope"))
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&missing), (Some(404), Some(Code::NotFound)));
    let missing = client
        .get_operation()
        .set_name(format!("{}/operations/operation-0-nope", parent(ZONE)))
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&missing), (Some(404), Some(Code::NotFound)));
}

#[tokio::test]
async fn refuses_wrong_tokens_and_denied_permissions() {
    let sim = Sim::start(0.001).await;
    let stranger = sim.client_with_token("ya29.not-the-token").await;
    let err = stranger
        .list_clusters()
        .set_parent(parent("-"))
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&err), (Some(401), Some(Code::Unauthenticated)));

    sim.shared.faults.set(Fault::GkePermissionDenied);
    let client = sim.client().await;
    let err = client
        .list_clusters()
        .set_parent(parent("-"))
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&err), (Some(403), Some(Code::PermissionDenied)));
    assert!(
        err.status()
            .unwrap()
            .message
            .contains("container.clusters.list")
    );
}

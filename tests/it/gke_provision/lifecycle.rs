//! A cluster's life through `up` and `down`: created with its progress in order and adopted once
//! there, a create already running picked up, the config's options as they reach GKE, deleted
//! (and a cluster not found counted as deleted).

use gantry_test_support as common;

use std::time::Duration;

use gantry::config::{ClusterConfig, SEED_SCOPES};
use gantry::gke::{
    Begun, ClusterStatus, DownOutcome, OperationKind, ProvisionEvent, UpHow, begin_up, down, spec,
    up,
};
use tokio::sync::mpsc::unbounded_channel;

use super::{cluster_json, drain, fast_poll, setup, target, with_patience};

#[tokio::test]
async fn creates_the_seed_cluster_with_progress_in_order() {
    let s = setup(0.001, vec![]).await;
    let gke = s.gke().await;
    let (tx, mut rx) = unbounded_channel();
    let outcome = with_patience(up(
        &gke,
        &target(),
        &ClusterConfig::default(),
        fast_poll(),
        &tx,
    ))
    .await
    .unwrap();
    assert_eq!(outcome.how, UpHow::Created);
    assert_eq!(outcome.cluster.status, ClusterStatus::Running);
    assert_eq!(outcome.cluster.node_count, 3);
    assert_eq!(outcome.cluster.machine_type, "n1-standard-1");
    assert!(!outcome.cluster.endpoint.is_empty());
    assert!(!outcome.cluster.version.is_empty());

    let events = drain(&mut rx);
    assert!(
        matches!(&events[0], ProvisionEvent::Started { kind: OperationKind::Create, operation } if !operation.is_empty()),
        "{events:?}"
    );
    assert!(
        matches!(
            events.last(),
            Some(ProvisionEvent::Finished {
                kind: OperationKind::Create,
                ..
            })
        ),
        "{events:?}"
    );
    // Stages only move forward, and every poll says what GKE is doing.
    let stages: Vec<usize> = events
        .iter()
        .filter_map(|e| match e {
            ProvisionEvent::Progress { stage, .. } => stage.as_ref().map(|s| s.index),
            _ => None,
        })
        .collect();
    assert!(!stages.is_empty(), "{events:?}");
    assert!(stages.windows(2).all(|w| w[0] <= w[1]), "{stages:?}");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, ProvisionEvent::Progress { detail, .. } if !detail.is_empty()))
    );
    let elapsed: Vec<Duration> = events
        .iter()
        .filter_map(|e| match e {
            ProvisionEvent::Progress { elapsed, .. } => Some(*elapsed),
            _ => None,
        })
        .collect();
    assert!(elapsed.windows(2).all(|w| w[0] <= w[1]));
    // The cluster is seen PROVISIONING, then RUNNING, before the end.
    let statuses: Vec<ClusterStatus> = events
        .iter()
        .filter_map(|e| match e {
            ProvisionEvent::Cluster(c) => Some(c.status),
            _ => None,
        })
        .collect();
    assert_eq!(
        statuses.first(),
        Some(&ClusterStatus::Provisioning),
        "{statuses:?}"
    );
    assert_eq!(
        statuses.last(),
        Some(&ClusterStatus::Running),
        "{statuses:?}"
    );
    for e in &events {
        assert!(!e.line().is_empty());
    }

    // What reached GKE: the seed's pool, machine type, node count and scopes.
    let cluster = cluster_json(&s).await;
    let pool = &cluster["nodePools"][0];
    assert_eq!(pool["name"], "default-pool");
    assert_eq!(pool["initialNodeCount"], 3);
    assert_eq!(pool["config"]["machineType"], "n1-standard-1");
    assert_eq!(
        pool["config"]["oauthScopes"],
        serde_json::json!(SEED_SCOPES)
    );
    assert_eq!(cluster["currentNodeCount"], 3);
    assert_eq!(cluster["resourceLabels"]["managed-by"], "gantry");

    // Once there, `up` adopts it, and a create answered 409 says so.
    let again = up(&gke, &target(), &ClusterConfig::default(), fast_poll(), &tx)
        .await
        .unwrap();
    assert_eq!(again.how, UpHow::Adopted);
    let events = drain(&mut rx);
    assert!(
        matches!(&events[0], ProvisionEvent::Adopted { status } if *status == ClusterStatus::Running),
        "{events:?}"
    );
    let request = spec::cluster_request(&ClusterConfig::default()).unwrap();
    let conflict = gke.create_cluster(&target(), request).await.unwrap();
    assert!(matches!(
        conflict,
        gantry::gke::client::Created::AlreadyExists
    ));
}

#[tokio::test]
async fn picks_up_a_create_already_running() {
    // Slow enough that the create is still running when the second `up` looks.
    let s = setup(0.02, vec![]).await;
    let gke = s.gke().await;
    let (tx, mut rx) = unbounded_channel();
    let request = spec::cluster_request(&ClusterConfig::default()).unwrap();
    let begun = begin_up(&gke, &target(), &request, &tx).await.unwrap();
    let Begun::Operation {
        kind: OperationKind::Create,
        name,
        resumed: false,
    } = begun
    else {
        panic!("{begun:?}")
    };
    drain(&mut rx);
    // Another Gantry (this one quit) starts: it follows the same operation.
    let outcome = with_patience(up(
        &gke,
        &target(),
        &ClusterConfig::default(),
        fast_poll(),
        &tx,
    ))
    .await
    .unwrap();
    assert_eq!(outcome.how, UpHow::Resumed);
    let events = drain(&mut rx);
    assert!(
        events.iter().any(|e| matches!(e, ProvisionEvent::Resumed { kind: OperationKind::Create, operation } if *operation == name)),
        "{events:?}"
    );
    assert!(
        matches!(&events[0], ProvisionEvent::Adopted { status } if *status == ClusterStatus::Provisioning)
    );
}

#[tokio::test]
async fn deletes_and_not_found_counts_as_deleted() {
    let s = setup(0.001, vec![common::CLUSTER.into()]).await;
    let gke = s.gke().await;
    let (tx, mut rx) = unbounded_channel();
    let outcome = with_patience(down(&gke, &target(), fast_poll(), &tx))
        .await
        .unwrap();
    assert_eq!(outcome, DownOutcome::Deleted);
    let events = drain(&mut rx);
    assert!(matches!(
        &events[0],
        ProvisionEvent::Started {
            kind: OperationKind::Delete,
            ..
        }
    ));
    assert!(matches!(
        events.last(),
        Some(ProvisionEvent::Finished {
            kind: OperationKind::Delete,
            ..
        })
    ));
    assert!(gke.get_cluster(&target()).await.unwrap().is_none());
    assert_eq!(
        down(&gke, &target(), fast_poll(), &tx).await.unwrap(),
        DownOutcome::NotFound
    );
}

#[tokio::test]
async fn options_reach_gke_gpu_pool_autoscaling_channel() {
    let s = setup(0.001, vec![]).await;
    let gke = s.gke().await;
    let config = ClusterConfig {
        release_channel: Some("RAPID".into()),
        spot: true,
        disk_size_gb: 50,
        autoscaling: Some(gantry::config::Autoscaling {
            min_nodes: 1,
            max_nodes: 4,
        }),
        labels: [("team".to_string(), "ml".to_string())].into(),
        gpu_pool: Some(gantry::config::GpuPool::default()),
        ..ClusterConfig::default()
    };
    let (tx, _rx) = unbounded_channel();
    let outcome = with_patience(up(&gke, &target(), &config, fast_poll(), &tx))
        .await
        .unwrap();
    assert_eq!(outcome.cluster.node_pools.len(), 2);
    assert_eq!(
        outcome.cluster.node_pools[1].accelerator.as_deref(),
        Some("1 x nvidia-tesla-t4")
    );
    let cluster = cluster_json(&s).await;
    assert_eq!(cluster["releaseChannel"]["channel"], "RAPID");
    let pools = &cluster["nodePools"];
    assert_eq!(pools[0]["autoscaling"]["maxNodeCount"], 4);
    assert_eq!(pools[0]["config"]["spot"], true);
    assert_eq!(pools[0]["config"]["diskSizeGb"], 50);
    assert_eq!(pools[0]["config"]["labels"]["team"], "ml");
    assert_eq!(pools[1]["name"], "gpu-pool");
    assert_eq!(
        pools[1]["config"]["accelerators"][0]["acceleratorType"],
        "nvidia-tesla-t4"
    );
    assert_eq!(pools[1]["config"]["taints"][0]["effect"], "NO_SCHEDULE");
}

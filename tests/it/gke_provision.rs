//! Gantry's GKE side (src/gke) against the simulated cloud over loopback: create → RUNNING with
//! progress, adopt, resume, failures (operation errors, 401, 403, 429, quota), delete, token
//! refresh, and a kube client reaching the cluster's API server over TLS.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry_test_support as common;

use std::path::PathBuf;
use std::time::Duration;

use gantry::config::{ClusterConfig, SEED_SCOPES};
use gantry::gke::{
    Auth, Begun, ClusterRef, ClusterStatus, DownOutcome, Gke, GkeError, OperationKind, PollPolicy,
    ProvisionEvent, RequestRetry, UpHow, begin_up, down, spec, up,
};
use gantry::sim::cloud::{DEMO_LOCATION, DEMO_PROJECT};
use gantry::sim::faults::Fault;
use gantry::sim::{SimCloud, SimOptions};
use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, ListParams};
use serde_json::Value;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

/// Only a guard against a hung test; nothing asserts how long anything takes.
const PATIENCE: Duration = gantry_test_support::WAIT_BOUND;

fn target() -> ClusterRef {
    ClusterRef::new(DEMO_PROJECT, DEMO_LOCATION, common::CLUSTER)
}

fn fast_poll() -> PollPolicy {
    PollPolicy {
        initial: Duration::from_millis(5),
        max: Duration::from_millis(20),
    }
}

fn fast_retry(attempts: u32) -> RequestRetry {
    RequestRetry {
        initial: Duration::from_millis(1),
        max: Duration::from_millis(5),
        attempts,
    }
}

struct Setup {
    cloud: SimCloud,
    _dir: tempfile::TempDir,
    token_file: PathBuf,
}

/// A simulated cloud whose state directory keeps the token file current.
async fn setup(time_scale: f64, clusters: Vec<String>) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let cloud = common::cloud_with(SimOptions {
        state_dir: Some(dir.path().to_path_buf()),
        time_scale,
        clusters,
        ..Default::default()
    })
    .await;
    let token_file = dir.path().join("token");
    assert!(token_file.is_file());
    Setup {
        cloud,
        _dir: dir,
        token_file,
    }
}

impl Setup {
    async fn gke(&self) -> Gke {
        let auth = Auth::token_file(&self.token_file).unwrap();
        Gke::connect(auth, Some(self.cloud.gke_endpoint()))
            .await
            .unwrap()
            .with_retry(fast_retry(8))
    }
}

async fn with_patience<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(PATIENCE, f)
        .await
        .expect("gave up waiting")
}

fn drain(rx: &mut UnboundedReceiver<ProvisionEvent>) -> Vec<ProvisionEvent> {
    let mut out = Vec::new();
    while let Ok(e) = rx.try_recv() {
        out.push(e);
    }
    out
}

/// The cluster as the simulator's GKE API serves it, raw JSON.
async fn cluster_json(s: &Setup) -> Value {
    let url = format!("{}/v1/{}", s.cloud.gke_endpoint(), target().resource_name());
    reqwest::Client::new()
        .get(url)
        .bearer_auth(s.cloud.token())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

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

async fn failing_create(fault: Fault) -> GkeError {
    let s = setup(0.001, vec![]).await;
    s.cloud.faults().set(fault);
    let gke = s.gke().await;
    let (tx, _rx) = unbounded_channel();
    let err = with_patience(up(
        &gke,
        &target(),
        &ClusterConfig::default(),
        fast_poll(),
        &tx,
    ))
    .await
    .unwrap_err();
    assert_eq!(err.exit_code(), 1, "{err}");
    err
}

#[tokio::test]
async fn an_operation_ending_in_error_carries_its_message() {
    let err = failing_create(Fault::GkeCreateError("the zone ran out of luck".into())).await;
    assert!(
        matches!(&err, GkeError::OperationFailed { message, .. } if message == "the zone ran out of luck"),
        "{err:?}"
    );
    assert!(err.to_string().contains("the zone ran out of luck"));
}

#[tokio::test]
async fn quota_errors_are_shown() {
    let err = failing_create(Fault::GkeQuota).await;
    assert!(
        err.to_string().contains("Insufficient regional quota"),
        "{err}"
    );
}

#[tokio::test]
async fn a_refused_token_names_the_fix() {
    let s = setup(0.001, vec![]).await;
    let dir = tempfile::tempdir().unwrap();
    let wrong = dir.path().join("token");
    std::fs::write(&wrong, "ya29.not-the-token\n").unwrap();
    let gke = Gke::connect(
        Auth::token_file(&wrong).unwrap(),
        Some(s.cloud.gke_endpoint()),
    )
    .await
    .unwrap();
    let err = gke.get_cluster(&target()).await.unwrap_err();
    assert!(matches!(err, GkeError::Unauthenticated { .. }), "{err:?}");
    assert_eq!(err.exit_code(), 1);
    assert!(
        err.to_string()
            .contains("gcloud auth application-default login")
    );
    // The file is read again after the refusal: the right token works at once.
    std::fs::write(&wrong, s.cloud.token()).unwrap();
    assert!(gke.get_cluster(&target()).await.unwrap().is_none());
}

#[tokio::test]
async fn permission_denied_is_reported() {
    let s = setup(0.001, vec![]).await;
    s.cloud.faults().set(Fault::GkePermissionDenied);
    let gke = s.gke().await;
    let (tx, _rx) = unbounded_channel();
    let err = up(&gke, &target(), &ClusterConfig::default(), fast_poll(), &tx)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, GkeError::PermissionDenied { message } if message.contains("container.clusters")),
        "{err:?}"
    );
    assert_eq!(err.exit_code(), 1);
}

#[tokio::test]
async fn too_many_requests_are_retried_then_surfaced() {
    let s = setup(0.001, vec![]).await;
    s.cloud.faults().set(Fault::Http429(100));
    // With few attempts the 429 comes out, after retries reported as events.
    let (tx, mut rx) = unbounded_channel();
    let gke = s
        .gke()
        .await
        .with_retry(fast_retry(3))
        .with_events(tx.clone());
    let err = gke.get_cluster(&target()).await.unwrap_err();
    assert!(
        matches!(
            &err,
            GkeError::Api {
                code: Some(429),
                ..
            }
        ),
        "{err:?}"
    );
    let retries = drain(&mut rx)
        .into_iter()
        .filter(|e| {
            matches!(
                e,
                ProvisionEvent::Retrying {
                    status: Some(429),
                    ..
                }
            )
        })
        .count();
    assert_eq!(retries, 2);

    // With patience, the create goes through once the throttling stops.
    let gke = s
        .gke()
        .await
        .with_retry(fast_retry(u32::MAX))
        .with_events(tx.clone());
    let task = tokio::spawn(async move {
        up(&gke, &target(), &ClusterConfig::default(), fast_poll(), &tx).await
    });
    let first = with_patience(rx.recv()).await.unwrap();
    assert!(
        matches!(
            first,
            ProvisionEvent::Retrying {
                status: Some(429),
                ..
            }
        ),
        "{first:?}"
    );
    s.cloud.faults().clear();
    let outcome = with_patience(task).await.unwrap().unwrap();
    assert_eq!(outcome.cluster.status, ClusterStatus::Running);
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
async fn kube_client_reaches_the_cluster_over_tls_and_survives_token_rotation() {
    let s = setup(0.01, vec![common::CLUSTER.into()]).await;
    let gke = s.gke().await;
    let cluster = gke.get_cluster(&target()).await.unwrap().unwrap();
    let client =
        gantry::gke::cluster_client::cluster_client(&target(), &cluster, gke.auth()).unwrap();
    let nodes: Api<Node> = Api::all(client.clone());
    assert_eq!(
        nodes
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .len(),
        3
    );

    // The simulator rotates its token and rewrites the file; both clients keep working.
    let first = s.cloud.token();
    s.cloud
        .faults()
        .set(Fault::TokenExpiry(Duration::from_millis(200)));
    with_patience(async {
        while s.cloud.token() == first {
            tokio::task::yield_now().await;
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    s.cloud.faults().clear();
    let second = s.cloud.token();
    assert_ne!(first, second);
    assert_eq!(
        nodes
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .len(),
        3
    );
    assert_eq!(
        gke.get_cluster(&target()).await.unwrap().unwrap().name,
        common::CLUSTER
    );

    // The same through `connect`, as the Job side calls it.
    let flags = gantry::connect::Target {
        named: gantry::gke::target::Named {
            project: Some(DEMO_PROJECT.into()),
            location: Some(DEMO_LOCATION.into()),
        },
        access_token_file: Some(s.token_file.clone()),
        gke_endpoint: Some(s.cloud.gke_endpoint().into()),
        ..Default::default()
    };
    let client = gantry::connect::cluster_client(&flags, &gantry::config::Config::default())
        .await
        .unwrap();
    let version = client.apiserver_version().await.unwrap();
    assert_eq!(version.major, "1");
}

#[tokio::test]
async fn kube_client_needs_a_running_cluster() {
    let s = setup(0.001, vec![]).await;
    let flags = gantry::connect::Target {
        named: gantry::gke::target::Named {
            project: Some(DEMO_PROJECT.into()),
            location: Some(DEMO_LOCATION.into()),
        },
        access_token_file: Some(s.token_file.clone()),
        gke_endpoint: Some(s.cloud.gke_endpoint().into()),
        ..Default::default()
    };
    let Err(err) =
        gantry::connect::cluster_client(&flags, &gantry::config::Config::default()).await
    else {
        panic!("a client for a cluster that does not exist")
    };
    assert_eq!(err.exit_code(), 1);
    assert!(err.to_string().contains("gantry up"), "{err}");
}

#[tokio::test]
async fn kube_client_refreshes_the_token_after_a_401() {
    let s = setup(0.01, vec![common::CLUSTER.into()]).await;
    let dir = tempfile::tempdir().unwrap();
    let mine = dir.path().join("token");
    std::fs::write(&mine, s.cloud.token()).unwrap();
    let stamp = std::fs::metadata(&mine).unwrap().modified().unwrap();
    let auth = Auth::token_file(&mine).unwrap();
    let gke = Gke::connect(auth.clone(), Some(s.cloud.gke_endpoint()))
        .await
        .unwrap();
    let cluster = gke.get_cluster(&target()).await.unwrap().unwrap();
    let client = gantry::gke::cluster_client::cluster_client(&target(), &cluster, &auth).unwrap();
    let nodes: Api<Node> = Api::all(client);
    assert_eq!(
        nodes
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .len(),
        3
    );

    let first = s.cloud.token();
    s.cloud
        .faults()
        .set(Fault::TokenExpiry(Duration::from_millis(100)));
    with_patience(async {
        while s.cloud.token() == first {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    s.cloud.faults().clear();
    // The new token, in a file that looks unchanged (same size, same time): only the 401 makes
    // the client read it again.
    std::fs::write(&mine, s.cloud.token()).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&mine)
        .unwrap()
        .set_modified(stamp)
        .unwrap();
    assert_eq!(
        nodes
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .len(),
        3
    );
    assert!(gke.get_cluster(&target()).await.unwrap().is_some());
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

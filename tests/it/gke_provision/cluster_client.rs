//! The kube client for the cluster's API server, as GKE describes it: over TLS, through token
//! rotation and a refresh after a 401, and refused (saying what to do) while there is no
//! running cluster.

use gantry_test_support as common;

use std::time::Duration;

use gantry::gke::{Auth, Gke};
use gantry::sim::cloud::{DEMO_LOCATION, DEMO_PROJECT};
use gantry::sim::faults::Fault;
use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, ListParams};

use super::{setup, target, with_patience};

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

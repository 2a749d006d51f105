//! Gantry's GKE side (src/gke) against the simulated cloud over loopback: create → RUNNING with
//! progress, adopt, resume, failures (operation errors, 401, 403, 429, quota), delete, token
//! refresh, and a kube client reaching the cluster's API server over TLS. Grouped by what they
//! check: a cluster's life through `up` and `down` (`lifecycle`), GKE's refusals and how they
//! are told (`failures`), and the kube client for the cluster's API server (`cluster_client`).
//! Here: the simulated cloud each test starts and the quick polling they share.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cluster_client;
mod failures;
mod lifecycle;

use gantry_test_support as common;

use std::path::PathBuf;
use std::time::Duration;

use gantry::gke::{Auth, ClusterRef, Gke, PollPolicy, ProvisionEvent, RequestRetry};
use gantry::sim::cloud::{DEMO_LOCATION, DEMO_PROJECT};
use gantry::sim::{SimCloud, SimOptions};
use serde_json::Value;
use tokio::sync::mpsc::UnboundedReceiver;

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

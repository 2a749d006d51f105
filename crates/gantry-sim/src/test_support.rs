//! What the crate's tests that run a whole simulated cluster share: a cloud at a fast time
//! scale, a RUNNING GKE cluster, and bounded waits for what they look for in its store.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::broadcast::error::RecvError;

use crate::SimShared;
use crate::auth::TokenAuthority;
use crate::clock::Clock;
use crate::faults::{Fault, Faults};
use crate::gke::GkeApi;
use crate::kube::cluster::ClusterState;
use crate::kube::resources::Kind;
use crate::tls::CertificateAuthority;

/// The longest any wait of these tests takes before it fails the test.
pub const PATIENCE: Duration = Duration::from_secs(30);
pub const PROJECT: &str = "p";
pub const ZONE: &str = "us-central1-a";

pub fn shared(scale: f64, faults: Vec<Fault>) -> SimShared {
    SimShared {
        clock: Clock::new(scale),
        faults: Arc::new(Faults::new(faults)),
        auth: TokenAuthority::new(None).unwrap(),
        ca: Arc::new(CertificateAuthority::generate().unwrap()),
        replay_dir: None,
        run_images: Default::default(),
    }
}

/// A RUNNING cluster `c` with these node pools (CreateClusterRequest's `nodePools`).
pub async fn cluster(shared: SimShared, pools: Value) -> (Arc<GkeApi>, Arc<ClusterState>) {
    let api = GkeApi::new(shared);
    let body = json!({"cluster": {"name": "c", "nodePools": pools}});
    api.create_running_from(PROJECT, ZONE, body).await.unwrap();
    let state = api.runtime(PROJECT, ZONE, "c").unwrap().state().clone();
    (api, state)
}

/// Waits, at most `PATIENCE`, until `probe` finds what it looks for in the cluster's store.
pub async fn until<T>(
    state: &ClusterState,
    what: &str,
    probe: impl Fn(&ClusterState) -> Option<T>,
) -> T {
    let mut changes = state.store.subscribe();
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        if let Some(found) = probe(state) {
            return found;
        }
        match tokio::time::timeout_at(deadline, changes.recv()).await {
            Err(_) => panic!("no {what} within {PATIENCE:?}"),
            Ok(Err(RecvError::Closed)) => panic!("the cluster stopped before {what}"),
            Ok(_) => {}
        }
    }
}

/// The events of this reason about objects of this name.
pub fn events(state: &ClusterState, object: &str, reason: &str) -> Vec<Value> {
    let (events, _) = state.store.list(Kind::Event, None, |e| {
        e["reason"] == reason && e["involvedObject"]["name"] == object
    });
    events.iter().map(|e| (**e).clone()).collect()
}

/// A Job condition of this type that is True.
pub fn condition(job: &Value, kind: &str) -> Option<Value> {
    job["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == kind && c["status"] == "True")
        .cloned()
}

/// python3 as the EXECUTABLE of the tests that run process pods: the interpreter itself, not a
/// version manager's shim (which would add its own variables to what the pod sees). When it is
/// missing a test skips (saying so), unless `GANTRY_REQUIRE_PYTHON3=1` makes that a failure.
pub fn python3() -> Option<crate::kube::process::RunImage> {
    let asked = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output();
    let found = asked
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|path| !path.is_empty());
    let Some(executable) = found else {
        assert!(
            std::env::var("GANTRY_REQUIRE_PYTHON3").as_deref() != Ok("1"),
            "GANTRY_REQUIRE_PYTHON3=1 but python3 cannot be run"
        );
        eprintln!(
            "skipping: python3 is not installed (GANTRY_REQUIRE_PYTHON3=1 makes this a failure)"
        );
        return None;
    };
    Some(crate::kube::process::RunImage {
        pattern: "python:*".into(),
        executable: executable.into(),
    })
}

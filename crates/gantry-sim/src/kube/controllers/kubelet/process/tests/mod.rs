//! Process pods run by a whole simulated cluster, each with python3 as the image's entrypoint
//! (skipped, saying so, where python3 is missing, unless GANTRY_REQUIRE_PYTHON3=1). The
//! processes tell what they see through their logs. What a pod is given (`environment`), how
//! it ends and is stopped (`ends`), its probes and address (`health`); here the cluster,
//! the pods and the waits they share.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod code;
mod ends;
mod environment;
mod health;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::kube::cluster::{ClusterRuntime, ClusterSpec, ClusterState};
use crate::kube::lifecycle;
use crate::kube::process::RunImages;
use crate::kube::resources::Kind;
use crate::test_support::{self, PATIENCE, until};

/// A cluster whose `python:*` images run as python3, a hundred times faster than life.
pub async fn cluster() -> Option<ClusterRuntime> {
    let python = test_support::python3()?;
    let mut shared = test_support::shared(0.01, Vec::new());
    shared.run_images = Arc::new(RunImages::new(vec![python]));
    let spec = ClusterSpec::seed("p", "us-central1-a", "c");
    Some(ClusterRuntime::start(spec, shared, 0).await.unwrap())
}

/// A pod running `python3 -u -c SCRIPT ARGS…`, `container` merged into its one container and
/// `spec` into its spec.
pub fn python_pod(name: &str, script: &str, args: &[&str], container: Value, spec: Value) -> Value {
    let mut command = vec![json!("python3"), json!("-u"), json!("-c"), json!(script)];
    command.extend(args.iter().map(|a| json!(a)));
    let mut pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"restartPolicy": "Never", "terminationGracePeriodSeconds": 2,
            "containers": [{"name": "main", "image": "python:3.12", "command": command}]}});
    merge(&mut pod["spec"]["containers"][0], &container);
    merge(&mut pod["spec"], &spec);
    pod
}

pub fn merge(into: &mut Value, from: &Value) {
    match (into, from) {
        (Value::Object(into), Value::Object(from)) => {
            for (k, v) in from {
                merge(into.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        (into, from) => *into = from.clone(),
    }
}

pub fn create(state: &ClusterState, kind: Kind, obj: Value) {
    lifecycle::create(state, kind, Some("default"), obj).unwrap();
}

pub fn pod(state: &ClusterState, name: &str) -> Option<Value> {
    state
        .store
        .get(Kind::Pod, "default", name)
        .map(|p| (*p).clone())
}

/// The pod once `holds` is true of it.
pub async fn pod_when(
    state: &ClusterState,
    name: &str,
    what: &str,
    holds: impl Fn(&Value) -> bool,
) -> Value {
    until(state, what, |s| pod(s, name).filter(|p| holds(p))).await
}

pub fn phase(p: &Value) -> &str {
    p["status"]["phase"].as_str().unwrap_or_default()
}

pub fn container(p: &Value) -> &Value {
    &p["status"]["containerStatuses"][0]
}

/// The container's log (its current run), once it holds `needle`.
pub async fn logged(state: &ClusterState, name: &str, needle: &str) -> String {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        if let Some(stream) = state.logs.stream("default", name, "main", false) {
            let mut progress = stream.watch();
            let text = log_text(&stream);
            if text.contains(needle) {
                return text;
            }
            let changed = tokio::time::timeout_at(deadline, progress.changed()).await;
            assert!(
                changed.is_ok(),
                "no {needle:?} in {name}'s log within {PATIENCE:?}: {text}"
            );
            continue;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{name} never logged"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub fn log_text(stream: &crate::kube::logbook::LogStream) -> String {
    stream
        .read(0, usize::MAX)
        .iter()
        .map(|l| format!("{}\n", String::from_utf8_lossy(&l.text)))
        .collect()
}

/// The value a `KEY=value` log line gives.
pub fn said<'a>(log: &'a str, key: &str) -> &'a str {
    log.lines()
        .find_map(|l| l.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key}= in the log:\n{log}"))
}

/// A RUNNING cluster of a simulated cloud whose GKE API listens, `python:*` running as
/// python3: the API's base URL, and what stops it.
pub async fn cluster_in_cloud() -> Option<(
    Arc<crate::gke::GkeApi>,
    Arc<ClusterState>,
    String,
    tokio_util::sync::CancellationToken,
)> {
    let python = test_support::python3()?;
    let mut shared = test_support::shared(0.01, Vec::new());
    shared.run_images = Arc::new(RunImages::new(vec![python]));
    let pools = json!([{"name": "default-pool", "initialNodeCount": 1}]);
    let (api, state) = test_support::cluster(shared, pools).await;
    let stop = tokio_util::sync::CancellationToken::new();
    let port = api.serve(0, stop.clone()).await.unwrap();
    Some((api, state, format!("http://127.0.0.1:{port}"), stop))
}

/// Every version the pod goes through from now until it is removed (at most `PATIENCE`).
pub async fn versions_until_removed(
    changes: &mut tokio::sync::broadcast::Receiver<Arc<crate::kube::store::Change>>,
    name: &str,
) -> Vec<Value> {
    use crate::kube::store::ChangeType;
    let deadline = tokio::time::Instant::now() + PATIENCE;
    let mut seen = Vec::new();
    loop {
        let change = tokio::time::timeout_at(deadline, changes.recv())
            .await
            .unwrap_or_else(|_| panic!("{name} was not removed within {PATIENCE:?}"))
            .unwrap();
        if change.kind != Kind::Pod || crate::kube::meta::name(&change.object) != name {
            continue;
        }
        seen.push((*change.object).clone());
        if change.change == ChangeType::Deleted {
            return seen;
        }
    }
}

/// The container's terminated state in the last of these versions that has one.
pub fn last_terminated(versions: &[Value]) -> Value {
    versions
        .iter()
        .rev()
        .find_map(|p| container(p)["state"].get("terminated").cloned())
        .unwrap_or_else(|| panic!("the container never terminated: {versions:#?}"))
}

//! The ReplicaSet controller (`pkg/controller/replicaset`): keeps `spec.replicas` pods of the
//! ReplicaSet's template alive (owned by it, named `<replicaset>-<random>`), making new ones
//! for those that end or are deleted and deleting the surplus (unscheduled, pending and
//! not-ready pods first, the newest first, as `getPodsToDelete` ranks them), and reports
//! `replicas`, `readyReplicas` and `availableReplicas` (ready for `minReadySeconds`) with the
//! generation it saw.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::keyed::{self, Key, Watches};
use super::kubelet::is_terminal;
use crate::kube::cluster::ClusterState;
use crate::kube::events::EventType;
use crate::kube::lifecycle::{self, DeleteOptions};
use crate::kube::meta;
use crate::kube::resources::Kind;

const COMPONENT: &str = "replicaset-controller";

/// Subscribes to the store at once, before the task runs, so that nothing is missed.
pub fn run(state: Arc<ClusterState>) -> impl std::future::Future<Output = ()> + Send + 'static {
    let watches = Watches {
        kind: Kind::ReplicaSet,
        children: Kind::Pod,
        owner_kind: "ReplicaSet",
    };
    keyed::run(state, watches, reconcile)
}

/// Whether `obj`'s controller is the object with this uid.
pub fn controlled_by(obj: &Value, uid: &str) -> bool {
    obj.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .is_some_and(|refs| {
            refs.iter()
                .any(|r| r["controller"] == true && r["uid"] == uid)
        })
}

/// When the pod last became Ready, if it is Ready.
fn ready_since(pod: &Value) -> Option<jiff::Timestamp> {
    let ready = pod
        .pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Ready" && c["status"] == "True")?;
    ready["lastTransitionTime"]
        .as_str()
        .and_then(|t| t.parse().ok())
        .or_else(|| Some(jiff::Timestamp::now()))
}

/// Whether a pod counts as available: Ready for `min_ready` (simulated) seconds.
pub fn is_available(state: &ClusterState, pod: &Value, min_ready: u64) -> bool {
    let Some(since) = ready_since(pod) else {
        return false;
    };
    let wall = state.shared.clock.scaled(Duration::from_secs(min_ready));
    min_ready == 0
        || jiff::Timestamp::now().duration_since(since).as_secs_f64() >= wall.as_secs_f64()
}

fn reconcile(state: &Arc<ClusterState>, key: &Key, poke: &mpsc::UnboundedSender<Key>) {
    let Some(rs) = state.store.get(Kind::ReplicaSet, &key.0, &key.1) else {
        return;
    };
    if meta::is_deleting(&rs) {
        return;
    }
    let uid = meta::uid(&rs);
    let (pods, _) = state
        .store
        .list(Kind::Pod, Some(&key.0), |p| controlled_by(p, uid));
    let active: Vec<&Arc<Value>> = pods
        .iter()
        .filter(|p| !is_terminal(p) && !meta::is_deleting(p))
        .collect();
    let want = rs["spec"]["replicas"].as_u64().unwrap_or(1) as usize;
    if active.len() < want {
        for _ in active.len()..want {
            create_pod(state, &rs);
        }
    } else if active.len() > want {
        let mut ranked = active.clone();
        ranked.sort_by_key(|p| deletion_rank(p));
        for pod in ranked.iter().take(active.len() - want) {
            let deleted = lifecycle::delete(
                state,
                Kind::Pod,
                &key.0,
                meta::name(pod),
                &DeleteOptions::default(),
            );
            if deleted.is_ok() {
                let message = format!("Deleted pod: {}", meta::name(pod));
                state.events.record(
                    &state.store,
                    &rs,
                    EventType::Normal,
                    "SuccessfulDelete",
                    &message,
                    COMPONENT,
                );
            }
        }
    }
    let min_ready = rs["spec"]["minReadySeconds"].as_u64().unwrap_or(0);
    let ready = active.iter().filter(|p| ready_since(p).is_some()).count();
    let available = active
        .iter()
        .filter(|p| is_available(state, p, min_ready))
        .count();
    if ready > available {
        // Some pods become available once their minReadySeconds pass: look again then.
        poke_later(state, poke, key, Duration::from_secs(min_ready));
    }
    let generation = rs["metadata"]["generation"].clone();
    let _ = state.store.update(Kind::ReplicaSet, &key.0, &key.1, |r| {
        let status = &mut r["status"];
        if !status.is_object() {
            *status = json!({});
        }
        status["replicas"] = json!(active.len());
        set_count(status, "fullyLabeledReplicas", active.len());
        set_count(status, "readyReplicas", ready);
        set_count(status, "availableReplicas", available);
        status["observedGeneration"] = generation;
    });
}

fn set_count(status: &mut Value, key: &str, n: usize) {
    if n == 0 {
        if let Some(s) = status.as_object_mut() {
            s.remove(key);
        }
    } else {
        status[key] = json!(n);
    }
}

/// `ActivePodsWithRanks` order, the first deleted first: unscheduled before scheduled,
/// pending before running, not ready before ready, then the newest.
fn deletion_rank(pod: &Value) -> (bool, bool, bool, std::cmp::Reverse<String>) {
    let scheduled = pod["spec"]["nodeName"]
        .as_str()
        .is_some_and(|n| !n.is_empty());
    let running = pod["status"]["phase"] == "Running";
    let ready = ready_since(pod).is_some();
    let created = pod["metadata"]["creationTimestamp"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    (scheduled, running, ready, std::cmp::Reverse(created))
}

fn create_pod(state: &ClusterState, rs: &Value) {
    let template = &rs["spec"]["template"];
    let mut metadata = template["metadata"].clone();
    if !metadata.is_object() {
        metadata = json!({});
    }
    if let Some(m) = metadata.as_object_mut() {
        m.remove("name");
    }
    metadata["generateName"] = json!(format!("{}-", meta::name(rs)));
    metadata["ownerReferences"] = json!([meta::owner_reference(rs, "apps/v1", "ReplicaSet")]);
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": metadata,
        "spec": template["spec"].clone()});
    match lifecycle::create(state, Kind::Pod, Some(meta::namespace(rs)), pod) {
        Ok(p) => {
            let message = format!("Created pod: {}", meta::name(&p));
            state.events.record(
                &state.store,
                rs,
                EventType::Normal,
                "SuccessfulCreate",
                &message,
                COMPONENT,
            );
        }
        Err(e) => {
            let message = format!("Error creating: {}", e.message);
            state.events.record(
                &state.store,
                rs,
                EventType::Warning,
                "FailedCreate",
                &message,
                COMPONENT,
            );
        }
    }
}

/// Looks at the ReplicaSet again after a simulated delay.
pub fn poke_later(
    state: &ClusterState,
    poke: &mpsc::UnboundedSender<Key>,
    key: &Key,
    simulated: Duration,
) {
    let wall = state
        .shared
        .clock
        .scaled(simulated)
        .max(Duration::from_millis(1));
    let poke = poke.clone();
    let key = key.clone();
    let stop = state.stop.clone();
    tokio::spawn(async move {
        tokio::select! {
            _ = stop.cancelled() => {}
            _ = tokio::time::sleep(wall) => { let _ = poke.send(key); }
        }
    });
}

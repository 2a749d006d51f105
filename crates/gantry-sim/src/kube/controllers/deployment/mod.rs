//! The Deployment controller (`pkg/controller/deployment`): one ReplicaSet per pod template,
//! named `<deployment>-<pod-template-hash>` and labelled with that hash, the newest carrying
//! the next revision; scaling and rolling updates (`rolling`), and the status and conditions
//! `kubectl rollout status` reads (`status`). Old ReplicaSets beyond `revisionHistoryLimit`
//! are deleted once a rollout completes.

mod rolling;
mod status;

use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::keyed::{self, Key, Watches};
use super::replicaset::{controlled_by, poke_later};
use crate::kube::cluster::ClusterState;
use crate::kube::events::EventType;
use crate::kube::lifecycle::{self, DeleteOptions};
use crate::kube::meta;
use crate::kube::resources::Kind;
use crate::kube::store::Obj;

pub const HASH_LABEL: &str = "pod-template-hash";
pub const REVISION: &str = "deployment.kubernetes.io/revision";
const DESIRED_REPLICAS: &str = "deployment.kubernetes.io/desired-replicas";
const MAX_REPLICAS: &str = "deployment.kubernetes.io/max-replicas";
const COMPONENT: &str = "deployment-controller";

/// Subscribes to the store at once, before the task runs, so that nothing is missed.
pub fn run(state: Arc<ClusterState>) -> impl std::future::Future<Output = ()> + Send + 'static {
    let watches = Watches {
        kind: Kind::Deployment,
        children: Kind::ReplicaSet,
        owner_kind: "Deployment",
    };
    keyed::run(state, watches, reconcile)
}

fn reconcile(state: &Arc<ClusterState>, key: &Key, poke: &mpsc::UnboundedSender<Key>) {
    let Some(d) = state.store.get(Kind::Deployment, &key.0, &key.1) else {
        return;
    };
    if meta::is_deleting(&d) {
        return;
    }
    let (owned, _) = state.store.list(Kind::ReplicaSet, Some(&key.0), |rs| {
        controlled_by(rs, meta::uid(&d))
    });
    let (new_rs, old): (Vec<Obj>, Vec<Obj>) = owned
        .into_iter()
        .partition(|rs| same_template(&rs["spec"]["template"], &d["spec"]["template"]));
    let mut new_rs = new_rs.into_iter().next();
    let mut created = false;
    if new_rs.is_none() && d["spec"]["paused"] != true {
        new_rs = create_replica_set(state, &d, &old);
        created = new_rs.is_some();
    }
    let changed = match &new_rs {
        Some(rs) => rolling::scale(state, &d, rs, &old),
        None => false,
    };
    let status = status::next(state, &d, new_rs.as_ref(), &old, created);
    let revision = new_rs
        .as_ref()
        .and_then(|rs| meta::annotation(rs, REVISION))
        .map(String::from);
    let _ = state.store.update(Kind::Deployment, &key.0, &key.1, |obj| {
        obj["status"] = status.clone();
        if let Some(revision) = &revision {
            obj["metadata"]["annotations"][REVISION] = json!(revision);
        }
    });
    if !changed && status::complete(&d, &status) {
        cleanup(state, &d, &old);
    }
    if let Some(deadline) = status::progress_deadline(state, &d, &status) {
        poke_later(state, poke, key, deadline);
    }
}

/// `EqualIgnoreHash`: a ReplicaSet's template is the Deployment's but for the hash label.
fn same_template(rs_template: &Value, template: &Value) -> bool {
    let mut rs_template = rs_template.clone();
    if let Some(labels) = rs_template["metadata"]["labels"].as_object_mut() {
        labels.remove(HASH_LABEL);
    }
    rs_template == *template
}

/// `controller.ComputeHash`: FNV-1a (32 bits) of the template, then `rand.SafeEncodeString`
/// of its decimal digits. Upstream hashes the Go struct's printed form; the JSON stands in.
pub fn template_hash(template: &Value, collisions: u64) -> String {
    const ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut hash: u32 = 0x811c_9dc5;
    let mut feed = |bytes: &[u8]| {
        for b in bytes {
            hash ^= u32::from(*b);
            hash = hash.wrapping_mul(0x0100_0193);
        }
    };
    feed(template.to_string().as_bytes());
    if collisions > 0 {
        feed(&collisions.to_le_bytes());
    }
    hash.to_string()
        .bytes()
        .map(|b| char::from(ALPHANUMS[usize::from(b) % ALPHANUMS.len()]))
        .collect()
}

fn revision_of(rs: &Value) -> u64 {
    meta::annotation(rs, REVISION)
        .and_then(|r| r.parse().ok())
        .unwrap_or(0)
}

/// The new ReplicaSet of the Deployment's template, at the next revision and as many replicas
/// as the strategy lets it start with.
fn create_replica_set(state: &ClusterState, d: &Value, old: &[Obj]) -> Option<Obj> {
    let collisions = d["status"]["collisionCount"].as_u64().unwrap_or(0);
    let hash = template_hash(&d["spec"]["template"], collisions);
    let mut template = d["spec"]["template"].clone();
    template["metadata"]["labels"][HASH_LABEL] = json!(hash);
    let mut selector = d["spec"]["selector"].clone();
    selector["matchLabels"][HASH_LABEL] = json!(hash);
    let revision = old.iter().map(|rs| revision_of(rs)).max().unwrap_or(0) + 1;
    let replicas = rolling::initial_replicas(d, old);
    let mut annotations = d["metadata"]["annotations"].clone();
    if !annotations.is_object() {
        annotations = json!({});
    }
    if let Some(a) = annotations.as_object_mut() {
        a.remove("kubectl.kubernetes.io/last-applied-configuration");
    }
    annotations[REVISION] = json!(revision.to_string());
    rolling::replica_annotations(d, &mut annotations);
    let rs = json!({
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": format!("{}-{hash}", meta::name(d)),
            "labels": template["metadata"]["labels"].clone(),
            "annotations": annotations,
            "ownerReferences": [meta::owner_reference(d, "apps/v1", "Deployment")],
        },
        "spec": {
            "replicas": replicas,
            "minReadySeconds": d["spec"]["minReadySeconds"].as_u64().unwrap_or(0),
            "selector": selector,
            "template": template,
        },
    });
    match lifecycle::create(state, Kind::ReplicaSet, Some(meta::namespace(d)), rs) {
        Ok(rs) => {
            if replicas > 0 {
                let message = format!(
                    "Scaled up replica set {} from 0 to {replicas}",
                    meta::name(&rs)
                );
                scaling_event(state, d, &message);
            }
            Some(rs)
        }
        Err(e) => {
            // A ReplicaSet of that name with another template: count the collision, so the
            // next hash differs (`status.collisionCount`).
            if e.code == 409 {
                let _ = state.store.update(
                    Kind::Deployment,
                    meta::namespace(d),
                    meta::name(d),
                    |obj| {
                        obj["status"]["collisionCount"] = json!(collisions + 1);
                    },
                );
            }
            None
        }
    }
}

fn scaling_event(state: &ClusterState, d: &Value, message: &str) {
    state.events.record(
        &state.store,
        d,
        EventType::Normal,
        "ScalingReplicaSet",
        message,
        COMPONENT,
    );
}

/// `cleanupDeployment`: the oldest scaled-down ReplicaSets past `revisionHistoryLimit` go.
fn cleanup(state: &Arc<ClusterState>, d: &Value, old: &[Obj]) {
    let limit = d["spec"]["revisionHistoryLimit"].as_u64().unwrap_or(10) as usize;
    let mut idle: Vec<&Obj> = old
        .iter()
        .filter(|rs| {
            rs["spec"]["replicas"].as_u64() == Some(0)
                && rs["status"]["replicas"].as_u64().unwrap_or(0) == 0
                && !meta::is_deleting(rs)
        })
        .collect();
    if idle.len() <= limit {
        return;
    }
    idle.sort_by_key(|rs| revision_of(rs));
    for rs in idle.iter().take(idle.len() - limit) {
        let _ = lifecycle::delete(
            state,
            Kind::ReplicaSet,
            meta::namespace(rs),
            meta::name(rs),
            &DeleteOptions::default(),
        );
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;

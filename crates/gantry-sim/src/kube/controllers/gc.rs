//! The garbage collector and namespace controller: dependents follow their owner (Background and
//! Foreground propagation) once no other owner of theirs is left, as the real collector's
//! `attemptToDeleteItem` decides (a dependent with an owner still alive only loses its reference
//! to the one gone), and a deleted namespace empties before it goes.

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::broadcast::error::RecvError;

use crate::kube::cluster::ClusterState;
use crate::kube::lifecycle::{self, DeleteOptions, FOREGROUND_FINALIZER, Propagation};
use crate::kube::meta;
use crate::kube::resources::{Kind, RESOURCES};
use crate::kube::store::{Change, ChangeType};

/// Subscribes to the store at once, before the task runs, so that nothing stored after the
/// cluster starts (a pod created the moment its API is up) is missed.
pub fn run(state: Arc<ClusterState>) -> impl std::future::Future<Output = ()> + Send + 'static {
    let rx = state.store.subscribe();
    control_loop(state, rx)
}

async fn control_loop(
    state: Arc<ClusterState>,
    mut rx: tokio::sync::broadcast::Receiver<Arc<crate::kube::store::Change>>,
) {
    loop {
        let change = tokio::select! {
            _ = state.stop.cancelled() => return,
            c = rx.recv() => c,
        };
        match change {
            Ok(c) => handle(&state, &c),
            Err(RecvError::Lagged(_)) => sweep(&state),
            Err(RecvError::Closed) => return,
        }
    }
}

fn handle(state: &Arc<ClusterState>, change: &Change) {
    let obj = &change.object;
    match (change.kind, change.change) {
        (Kind::Namespace, ChangeType::Modified) if meta::is_deleting(obj) => {
            drain_namespace(state, meta::name(obj))
        }
        (Kind::Event, _) => {}
        (kind, ChangeType::Deleted) => {
            if kind != Kind::Pod {
                delete_dependents(state, meta::uid(obj));
            }
            // An owner waiting in the foreground may now be free to go.
            for owner in meta::owner_uids(obj) {
                if let Some((okind, o)) = find_by_uid(state, owner) {
                    finish_foreground(state, okind, &o);
                }
            }
            let ns = meta::namespace(obj);
            if !ns.is_empty()
                && let Some(n) = state.store.get(Kind::Namespace, "", ns)
                && meta::is_deleting(&n)
            {
                drain_namespace(state, ns);
            }
        }
        (kind, ChangeType::Modified) if meta::is_deleting(obj) => {
            finish_foreground(state, kind, obj);
            lifecycle::remove_if_finalized(state, kind, obj);
        }
        _ => {}
    }
}

fn delete_dependents(state: &Arc<ClusterState>, owner_uid: &str) {
    let opts = DeleteOptions {
        propagation: Propagation::Background,
        ..Default::default()
    };
    for (kind, dep) in lifecycle::dependents(state, owner_uid) {
        if meta::is_deleting(&dep) {
            continue;
        }
        let others_alive = meta::owner_uids(&dep)
            .into_iter()
            .any(|uid| uid != owner_uid && owner_alive(state, uid));
        if others_alive {
            let _ = state
                .store
                .update(kind, meta::namespace(&dep), meta::name(&dep), |o| {
                    if let Some(refs) = o["metadata"]["ownerReferences"].as_array_mut() {
                        refs.retain(|r| r["uid"].as_str() != Some(owner_uid));
                    }
                });
        } else {
            let _ = lifecycle::delete(state, kind, meta::namespace(&dep), meta::name(&dep), &opts);
        }
    }
}

/// Whether an object with this uid exists and is not being deleted (a "solid" owner).
fn owner_alive(state: &ClusterState, uid: &str) -> bool {
    RESOURCES.iter().any(|r| {
        let (found, _) = state.store.list(r.kind, None, |o| meta::uid(o) == uid);
        found.iter().any(|o| !meta::is_deleting(o))
    })
}

fn has_finalizer(obj: &Value, f: &str) -> bool {
    obj.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .is_some_and(|l| l.iter().any(|x| x == f))
}

fn finish_foreground(state: &Arc<ClusterState>, kind: Kind, obj: &Value) {
    if !meta::is_deleting(obj) || !has_finalizer(obj, FOREGROUND_FINALIZER) {
        return;
    }
    let deps = lifecycle::dependents(state, meta::uid(obj));
    if deps.is_empty() {
        lifecycle::remove_finalizer(state, kind, obj, FOREGROUND_FINALIZER);
    } else {
        delete_dependents(state, meta::uid(obj));
    }
}

fn find_by_uid(state: &ClusterState, uid: &str) -> Option<(Kind, Arc<Value>)> {
    for kind in lifecycle::DEPENDENT_KINDS {
        let (found, _) = state.store.list(*kind, None, |o| meta::uid(o) == uid);
        if let Some(o) = found.into_iter().next() {
            return Some((*kind, o));
        }
    }
    None
}

fn drain_namespace(state: &Arc<ClusterState>, ns: &str) {
    let opts = DeleteOptions {
        propagation: Propagation::Background,
        grace_seconds: Some(0),
        ..Default::default()
    };
    let mut left = 0;
    for r in RESOURCES.iter().filter(|r| r.namespaced) {
        let (objs, _) = state.store.list(r.kind, Some(ns), |_| true);
        left += objs.len();
        for o in objs {
            let _ = lifecycle::delete(state, r.kind, ns, meta::name(&o), &opts);
        }
    }
    if left == 0 {
        state.store.remove(Kind::Namespace, "", ns);
    }
}

fn sweep(state: &Arc<ClusterState>) {
    let (namespaces, _) = state.store.list(Kind::Namespace, None, meta::is_deleting);
    for n in namespaces {
        drain_namespace(state, meta::name(&n));
    }
    for kind in lifecycle::DEPENDENT_KINDS {
        let (deleting, _) = state.store.list(*kind, None, meta::is_deleting);
        for o in deleting {
            finish_foreground(state, *kind, &o);
        }
    }
}

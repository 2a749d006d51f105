//! The ServiceAccounts controller (`pkg/controller/serviceaccount`): every namespace that is
//! not going away has a `default` ServiceAccount, made again when it is deleted.

use std::sync::Arc;

use serde_json::json;
use tokio::sync::broadcast::error::RecvError;

use crate::kube::cluster::ClusterState;
use crate::kube::lifecycle;
use crate::kube::meta;
use crate::kube::resources::Kind;
use crate::kube::store::{Change, ChangeType};

pub const DEFAULT: &str = "default";

/// Subscribes to the store at once, before the task runs, so that no namespace made after the
/// cluster starts is missed.
pub fn run(state: Arc<ClusterState>) -> impl std::future::Future<Output = ()> + Send + 'static {
    let rx = state.store.subscribe();
    control_loop(state, rx)
}

async fn control_loop(
    state: Arc<ClusterState>,
    mut rx: tokio::sync::broadcast::Receiver<Arc<Change>>,
) {
    ensure_everywhere(&state);
    loop {
        let change = tokio::select! {
            _ = state.stop.cancelled() => return,
            c = rx.recv() => c,
        };
        match change {
            Ok(c) => match (c.kind, c.change) {
                (Kind::Namespace, ChangeType::Added) => ensure(&state, meta::name(&c.object)),
                (Kind::ServiceAccount, ChangeType::Deleted) if meta::name(&c.object) == DEFAULT => {
                    ensure(&state, meta::namespace(&c.object));
                }
                _ => {}
            },
            Err(RecvError::Lagged(_)) => ensure_everywhere(&state),
            Err(RecvError::Closed) => return,
        }
    }
}

fn ensure_everywhere(state: &ClusterState) {
    let (namespaces, _) = state.store.list(Kind::Namespace, None, |_| true);
    for ns in namespaces {
        ensure(state, meta::name(&ns));
    }
}

fn ensure(state: &ClusterState, namespace: &str) {
    if state
        .store
        .get(Kind::ServiceAccount, namespace, DEFAULT)
        .is_some()
    {
        return;
    }
    // A namespace that is gone or terminating refuses it, as it should.
    let _ = lifecycle::create(
        state,
        Kind::ServiceAccount,
        Some(namespace),
        json!({"metadata": {"name": DEFAULT}}),
    );
}

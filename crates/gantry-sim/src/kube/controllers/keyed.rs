//! The loop the Deployment and ReplicaSet controllers share, as the controllers of
//! `pkg/controller` share a keyed work queue: every change to an object of the controller's
//! kind, or to a child it controls, marks that object's key dirty; a lagged watch marks them
//! all; a controller may ask to look again later (`poke`); each dirty key is reconciled once a
//! round, however many changes named it.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};
use tokio::sync::mpsc;

use crate::kube::cluster::ClusterState;
use crate::kube::meta;
use crate::kube::resources::Kind;
use crate::kube::store::Change;

/// Namespace and name of the object a controller reconciles.
pub type Key = (String, String);

/// Reconciles one object; may send keys to look at again.
pub type Reconcile = fn(&Arc<ClusterState>, &Key, &mpsc::UnboundedSender<Key>);

/// What a controller reconciles and what it follows.
#[derive(Debug, Clone, Copy)]
pub struct Watches {
    /// The controller's own kind.
    pub kind: Kind,
    /// The kind of the objects it controls, and their owner reference's `kind`.
    pub children: Kind,
    pub owner_kind: &'static str,
}

/// Subscribes to the store at once, before the task runs, so that nothing is missed.
pub fn run(
    state: Arc<ClusterState>,
    watches: Watches,
    reconcile: Reconcile,
) -> impl std::future::Future<Output = ()> + Send + 'static {
    let rx = state.store.subscribe();
    control_loop(state, rx, watches, reconcile)
}

async fn control_loop(
    state: Arc<ClusterState>,
    mut rx: tokio::sync::broadcast::Receiver<Arc<Change>>,
    watches: Watches,
    reconcile: Reconcile,
) {
    let (poke_tx, mut poke_rx) = mpsc::unbounded_channel::<Key>();
    loop {
        let mut dirty: BTreeSet<Key> = BTreeSet::new();
        tokio::select! {
            _ = state.stop.cancelled() => return,
            key = poke_rx.recv() => if let Some(k) = key { dirty.insert(k); },
            change = rx.recv() => match change {
                Ok(c) => note(watches, &c, &mut dirty),
                Err(RecvError::Lagged(_)) => all(watches, &state, &mut dirty),
                Err(RecvError::Closed) => return,
            },
        }
        loop {
            match rx.try_recv() {
                Ok(c) => note(watches, &c, &mut dirty),
                Err(TryRecvError::Lagged(_)) => all(watches, &state, &mut dirty),
                Err(_) => break,
            }
        }
        while let Ok(k) = poke_rx.try_recv() {
            dirty.insert(k);
        }
        for key in dirty {
            reconcile(&state, &key, &poke_tx);
        }
    }
}

fn note(watches: Watches, change: &Change, dirty: &mut BTreeSet<Key>) {
    let obj = &change.object;
    let ns = meta::namespace(obj).to_string();
    if change.kind == watches.kind {
        dirty.insert((ns, meta::name(obj).into()));
    } else if change.kind == watches.children
        && let Some(owner) = controller_ref(obj, watches.owner_kind)
    {
        dirty.insert((ns, owner.to_string()));
    }
}

fn all(watches: Watches, state: &ClusterState, dirty: &mut BTreeSet<Key>) {
    let (objects, _) = state.store.list(watches.kind, None, |_| true);
    for o in objects {
        dirty.insert((meta::namespace(&o).into(), meta::name(&o).into()));
    }
}

/// The name of the controller of `obj` when it is of `kind`.
pub fn controller_ref<'a>(obj: &'a Value, kind: &str) -> Option<&'a str> {
    obj.pointer("/metadata/ownerReferences")?
        .as_array()?
        .iter()
        .find(|r| r["controller"] == true && r["kind"] == kind)?["name"]
        .as_str()
}

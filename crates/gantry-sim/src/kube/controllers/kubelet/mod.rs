//! The scheduler and kubelet stand-in: every new pod gets a task that places it on a node
//! (`scheduling`), pulls its images (`images`), runs its init containers (`init`: an archive
//! unpacked with `tar_program`), runs the simulated workload in each container (`containers`,
//! held to the Python script it names: `python_script`), or a local process where `--run-image`
//! maps the image or `--run-code` a code attempt (`process`), and reports it all as the kubelet
//! does (status and events). A pod being
//! deleted is stopped, then removed (`deletion`); the pods of a node that shuts down are killed
//! (`shutdown`). This file follows the store and keeps one task per live pod.

mod containers;
mod context;
mod deletion;
mod env;
mod images;
mod init;
mod pod;
mod process;
mod python_script;
mod scheduling;
mod shutdown;
mod tar_program;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

use crate::kube::cluster::ClusterState;
use crate::kube::meta;
use crate::kube::node_shutdown;
use crate::kube::pod_gc::pods_on;
use crate::kube::resources::Kind;
use crate::kube::store::ChangeType;
use context::PodCtx;
pub use images::image_pullable;

/// Shortest real wait of a retry loop, so a time scale of 0 cannot spin.
pub(super) const MIN_RETRY_WAIT: Duration = Duration::from_millis(20);

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
    let mut running: HashMap<String, CancellationToken> = HashMap::new();
    loop {
        let change = tokio::select! {
            _ = state.stop.cancelled() => return,
            c = rx.recv() => c,
        };
        match change {
            Ok(change) if change.kind == Kind::Pod => {
                let pod = &change.object;
                let uid = meta::uid(pod).to_string();
                match change.change {
                    ChangeType::Added => {
                        let cancel = state.stop.child_token();
                        running.insert(uid.clone(), cancel.clone());
                        tokio::spawn(run_pod(
                            state.clone(),
                            meta::namespace(pod).into(),
                            meta::name(pod).into(),
                            uid,
                            cancel,
                        ));
                    }
                    ChangeType::Modified if meta::is_deleting(pod) => {
                        if let Some(cancel) = running.remove(&uid) {
                            cancel.cancel();
                        }
                    }
                    ChangeType::Deleted => {
                        if let Some(cancel) = running.remove(&uid) {
                            cancel.cancel();
                        }
                        state.scheduler.release(&uid);
                        state.logs.forget_pod(meta::namespace(pod), meta::name(pod));
                    }
                    ChangeType::Modified => {}
                }
            }
            Ok(change)
                if change.kind == Kind::Node
                    && change.change == ChangeType::Modified
                    && node_shutdown::is_shutting_down(&change.object) =>
            {
                stop_pods_on(&state, meta::name(&change.object), &mut running);
            }
            Ok(_) => {}
            Err(RecvError::Lagged(_)) => resync(&state, &mut running),
            Err(RecvError::Closed) => return,
        }
    }
}

/// The node shuts down: its pods' tasks stop, and each reports its pod killed.
fn stop_pods_on(
    state: &ClusterState,
    node: &str,
    running: &mut HashMap<String, CancellationToken>,
) {
    for pod in pods_on(state, node) {
        if let Some(cancel) = running.remove(meta::uid(&pod)) {
            cancel.cancel();
        }
    }
}

/// After missing changes: start tasks for pods without one, stop those of pods going away or
/// on a node that shuts down.
fn resync(state: &Arc<ClusterState>, running: &mut HashMap<String, CancellationToken>) {
    let (pods, _) = state.store.list(Kind::Pod, None, |_| true);
    let alive: std::collections::HashSet<String> =
        pods.iter().map(|p| meta::uid(p).to_string()).collect();
    running.retain(|uid, cancel| {
        let keep = alive.contains(uid);
        if !keep {
            cancel.cancel();
        }
        keep
    });
    for pod in pods {
        let uid = meta::uid(&pod).to_string();
        if meta::is_deleting(&pod) || node_shutdown::pod_node_is_shutting_down(state, &pod) {
            if let Some(c) = running.remove(&uid) {
                c.cancel();
            }
            continue;
        }
        if !running.contains_key(&uid) && !is_terminal(&pod) {
            let cancel = state.stop.child_token();
            running.insert(uid.clone(), cancel.clone());
            tokio::spawn(run_pod(
                state.clone(),
                meta::namespace(&pod).into(),
                meta::name(&pod).into(),
                uid,
                cancel,
            ));
        }
    }
}

pub fn is_terminal(pod: &Value) -> bool {
    matches!(
        pod.pointer("/status/phase").and_then(Value::as_str),
        Some("Succeeded" | "Failed")
    )
}

async fn run_pod(
    state: Arc<ClusterState>,
    ns: String,
    name: String,
    uid: String,
    cancel: CancellationToken,
) {
    let ctx = PodCtx {
        state,
        ns,
        name,
        uid,
        cancel,
    };
    let finished = pod::lifecycle(&ctx).await;
    ctx.state.scheduler.release(&ctx.uid);
    if finished {
        return;
    }
    if shutdown::stopped_by_shutdown(&ctx) {
        shutdown::terminate(&ctx);
    } else {
        deletion::stop_for_deletion(&ctx).await;
    }
}

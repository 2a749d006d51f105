//! What `gantry up` says while it works and leaves behind, whether it creates the cluster
//! (`up`) or changes it to match the config (`up_apply`): progress lines, and the kubeconfig
//! context.

use tokio::sync::mpsc::UnboundedReceiver;

use crate::connect::Target;
use crate::gke::ProvisionEvent;

/// Prints progress events, one line each, until the sender is dropped.
pub(super) async fn print_events(mut rx: UnboundedReceiver<ProvisionEvent>) {
    let mut last_status = None;
    while let Some(event) = rx.recv().await {
        if let ProvisionEvent::Cluster(c) = &event {
            // Node counts and versions fill in while it works; only status changes are news.
            if Some(c.status) == last_status {
                continue;
            }
            last_status = Some(c.status);
        }
        crate::outln!("{}", event.line());
    }
}

/// Adds the cluster's context to the kubeconfig (unless `--no-kubeconfig`); a failure to write
/// it is reported but does not undo the cluster.
pub(super) fn write_kubeconfig(
    target: &Target,
    cluster: &crate::gke::ClusterRef,
    running: &google_cloud_container_v1::model::Cluster,
) -> i32 {
    if target.no_kubeconfig {
        return 0;
    }
    let credential = crate::kubeconfig::credential_for(target.access_token_file.as_deref());
    match crate::kubeconfig::write_for_cluster(&credential, cluster, running) {
        Ok((context, path)) => {
            crate::outln!("kubeconfig: context {context} in {}", path.display());
            0
        }
        Err(e) => {
            crate::errln!("gantry: {e}");
            1
        }
    }
}

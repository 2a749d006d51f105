//! The meter's workers: the Node watch (each change goes to the model with when it was seen, so
//! a node's life ends when the watch said it was deleted), and the write of the run's cost on
//! its newest attempt (`meter::ledger`). A failed write is said in the log and tried again at
//! the next record.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Node;
use kube::api::Api;
use kube::runtime::watcher;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{Shared, Tx};
use crate::engine::Report;
use crate::k8s::watch::{Change, LIST_PAGE, watch_objects};
use crate::meter::NodeSeen;
use crate::meter::ledger::{self, Entry};

/// Node changes in flight from the watch to the engine's channel.
const IN_FLIGHT: usize = 64;

/// Watches every node of the cluster until `cancel`.
pub async fn watch_nodes(client: kube::Client, tx: Tx, cancel: CancellationToken) {
    let (wtx, mut wrx) = mpsc::channel(IN_FLIGHT);
    let nodes: Api<Node> = Api::all(client);
    let config = watcher::Config::default().page_size(LIST_PAGE);
    let watch = watch_objects(
        nodes,
        config,
        wtx,
        cancel.clone(),
        |change: Change<Node>| {
            if let Change::Trouble(e) = &change {
                tracing::debug!(error = %e, "the Node watch failed: the cost is partial until it is back");
            }
            Some(Report::Node {
                change: change_of(change),
                at: jiff::Timestamp::now(),
            })
        },
    );
    let forward = async {
        while let Some(report) = wrx.recv().await {
            if tx.send(report).is_err() {
                return;
            }
        }
    };
    tokio::join!(watch, forward);
}

fn change_of(change: Change<Node>) -> Change<NodeSeen> {
    match change {
        Change::Restarted => Change::Restarted,
        Change::Listed(n) => Change::Listed(NodeSeen::of(&n)),
        Change::Synced => Change::Synced,
        Change::Applied(n) => Change::Applied(NodeSeen::of(&n)),
        Change::Deleted(n) => Change::Deleted(NodeSeen::of(&n)),
        Change::Trouble(e) => Change::Trouble(e),
        Change::Recovered => Change::Recovered,
    }
}

/// Writes the run's cost on its newest attempt.
pub async fn record(shared: Arc<Shared>, entry: Entry) {
    let Some(client) = shared.client().await else {
        tracing::debug!(
            job = entry.job,
            "not connected: the run's cost not recorded"
        );
        return;
    };
    let namespace = &shared.session.config.job.namespace;
    match ledger::record(&client, namespace, &entry.job, &entry.cost).await {
        Ok(written) => tracing::debug!(job = entry.job, written, "the run's cost recorded"),
        Err(e) => tracing::warn!(job = entry.job, "{e}"),
    }
}

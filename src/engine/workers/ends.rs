//! Records the pod ends the engine saw on their attempts: each priced by its share of its
//! node (read once per node, while the node is still there), then added to the Job's list
//! (`ends::ledger`). A failure is said in the log and not retried: the next engine to see the
//! Job, or `gantry status`, still reads the pods and the cluster's Events.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Node;
use kube::api::Api;

use super::Shared;
use crate::ends::cost::NodeFacts;
use crate::ends::ledger::{self, Entry};

pub async fn record(shared: Arc<Shared>, entries: Vec<Entry>) {
    let client = shared.client().await;
    let Some(client) = client else {
        tracing::warn!("not connected: {} pod ends not recorded", entries.len());
        return;
    };
    let mut by_job: BTreeMap<String, Vec<crate::vocabulary::ends::PodEnd>> = BTreeMap::new();
    for entry in entries {
        let facts = match &entry.end.node {
            Some(node) => node_facts(&shared, &client, node).await,
            None => None,
        };
        let mut end = entry.end;
        end.cost =
            facts.and_then(|f| f.cost(f.share(&entry.requests, entry.sharing), end.ran_seconds));
        by_job.entry(entry.job).or_default().push(end);
    }
    let namespace = &shared.session.config.job.namespace;
    for (job, ends) in by_job {
        match ledger::record(&client, namespace, &job, &ends).await {
            Ok(added) => tracing::debug!(job, added, "pod ends recorded"),
            Err(e) => tracing::warn!(job, "{e}"),
        }
    }
}

async fn node_facts(shared: &Shared, client: &kube::Client, node: &str) -> Option<NodeFacts> {
    if let Some(known) = lock(shared).get(node) {
        return known.clone();
    }
    let nodes: Api<Node> = Api::all(client.clone());
    let facts = match nodes.get_opt(node).await {
        Ok(found) => found.as_ref().map(NodeFacts::of),
        Err(e) => {
            tracing::debug!(node, error = %e, "reading a node to price its pods");
            None
        }
    };
    lock(shared).insert(node.to_string(), facts.clone());
    facts
}

fn lock(
    shared: &Shared,
) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, Option<NodeFacts>>> {
    shared.nodes.lock().unwrap_or_else(|p| p.into_inner())
}

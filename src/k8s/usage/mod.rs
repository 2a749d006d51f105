//! What each pod and node is using, from `metrics.k8s.io` (metrics-server), as k9s and kdash
//! show it. The API has no watch: it is polled, only while a viewer shows it. A cluster without metrics-server answers 404 (or 503 through
//! the aggregator): that is `Unavailable`, said once, not an error to retry.

use std::collections::HashMap;

use serde::Deserialize;

mod nodes;
mod quantity;

pub use nodes::{NodeUsage, node_usage, total};
pub use quantity::{cpu_text, memory_text, milli};

/// How often the usage is read while someone looks at it.
pub const POLL: std::time::Duration = std::time::Duration::from_secs(15);
/// How often a cluster without metrics-server is asked again (it may get one).
pub const RECHECK: std::time::Duration = std::time::Duration::from_secs(300);

/// One pod's usage, all containers together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PodUsage {
    pub cpu_millis: u64,
    pub memory_bytes: u64,
}

/// One reading: the training pods by name, and every node.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Reading {
    pub pods: HashMap<String, PodUsage>,
    pub nodes: Vec<NodeUsage>,
}

/// Reads the pods of `namespace` matching `selector`, and the nodes.
pub async fn read(
    client: &kube::Client,
    namespace: &str,
    selector: &str,
) -> Result<Reading, UsageError> {
    let pods = pod_usage(client, namespace, selector).await?;
    let nodes = node_usage(client).await?;
    Ok(Reading { pods, nodes })
}

/// A failed request: no metrics-server (404, or 503 through the aggregator), or something else.
fn classify(e: kube::Error) -> UsageError {
    match e {
        kube::Error::Api(status) if status.code == 404 || status.code == 503 => {
            UsageError::Unavailable
        }
        e => UsageError::Failed(e.to_string()),
    }
}

#[derive(Debug, thiserror::Error)]
pub enum UsageError {
    /// No metrics-server: the columns say n/a.
    #[error("the cluster serves no metrics.k8s.io (no metrics-server)")]
    Unavailable,
    #[error("reading usage: {0}")]
    Failed(String),
}

#[derive(Deserialize)]
struct PodMetricsList {
    items: Vec<PodMetrics>,
}

#[derive(Deserialize)]
struct PodMetrics {
    metadata: Meta,
    containers: Vec<ContainerMetrics>,
}

#[derive(Deserialize)]
struct Meta {
    name: String,
}

#[derive(Deserialize)]
struct ContainerMetrics {
    usage: HashMap<String, String>,
}

/// The usage of the pods in `namespace` matching `selector`, by pod name.
pub async fn pod_usage(
    client: &kube::Client,
    namespace: &str,
    selector: &str,
) -> Result<HashMap<String, PodUsage>, UsageError> {
    let request = kube::core::Request::new(format!(
        "/apis/metrics.k8s.io/v1beta1/namespaces/{namespace}/pods"
    ))
    .list(&kube::api::ListParams::default().labels(selector))
    .map_err(|e| UsageError::Failed(e.to_string()))?;
    let list: PodMetricsList = client.request(request).await.map_err(classify)?;
    Ok(list
        .items
        .into_iter()
        .map(|pod| {
            let mut total = PodUsage::default();
            for c in &pod.containers {
                let used = cpu_and_memory(|name| c.usage.get(name).map(String::as_str));
                total.cpu_millis += used.cpu_millis;
                total.memory_bytes += used.memory_bytes;
            }
            (pod.metadata.name, total)
        })
        .collect())
}

/// CPU (millicores) and memory (bytes) out of a resource list, as metrics and allocatable
/// carry them; what is missing or unreadable counts as 0.
fn cpu_and_memory<'a>(quantity: impl Fn(&str) -> Option<&'a str>) -> PodUsage {
    PodUsage {
        cpu_millis: quantity("cpu").and_then(milli).unwrap_or(0) as u64,
        memory_bytes: (quantity("memory").and_then(milli).unwrap_or(0) / 1000) as u64,
    }
}

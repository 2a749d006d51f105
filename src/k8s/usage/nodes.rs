//! What each node uses against what it can give (`kubectl top nodes`): usage from
//! `metrics.k8s.io`, allocatable from the Node objects.

use std::collections::HashMap;

use k8s_openapi::api::core::v1::Node;
use kube::Api;
use serde::Deserialize;

use super::UsageError;

/// One node's usage and what it can give to pods.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodeUsage {
    pub name: String,
    pub cpu_millis: u64,
    pub memory_bytes: u64,
    /// Allocatable; 0 when the node object is not (or no longer) there.
    pub cpu_allocatable_millis: u64,
    pub memory_allocatable_bytes: u64,
}

impl NodeUsage {
    /// Percent of allocatable CPU and memory in use, as `kubectl top nodes` prints them.
    pub fn percents(&self) -> (Option<u64>, Option<u64>) {
        (
            percent(self.cpu_millis, self.cpu_allocatable_millis),
            percent(self.memory_bytes, self.memory_allocatable_bytes),
        )
    }
}

fn percent(used: u64, of: u64) -> Option<u64> {
    (of > 0).then(|| (used.saturating_mul(100) + of / 2) / of)
}

#[derive(Deserialize)]
struct NodeMetricsList {
    items: Vec<NodeMetrics>,
}

#[derive(Deserialize)]
struct NodeMetrics {
    metadata: super::Meta,
    usage: HashMap<String, String>,
}

/// Every node's usage, by name, with its allocatable resources.
pub async fn node_usage(client: &kube::Client) -> Result<Vec<NodeUsage>, UsageError> {
    let request = kube::core::Request::new("/apis/metrics.k8s.io/v1beta1/nodes")
        .list(&Default::default())
        .map_err(|e| UsageError::Failed(e.to_string()))?;
    let list: NodeMetricsList = client.request(request).await.map_err(super::classify)?;
    let nodes: Api<Node> = Api::all(client.clone());
    let allocatable: HashMap<String, super::PodUsage> = nodes
        .list(&Default::default())
        .await
        .map_err(|e| UsageError::Failed(e.to_string()))?
        .items
        .into_iter()
        .map(|n| {
            let a = n.status.and_then(|s| s.allocatable).unwrap_or_default();
            let can = super::cpu_and_memory(|name| a.get(name).map(|q| q.0.as_str()));
            (n.metadata.name.unwrap_or_default(), can)
        })
        .collect();
    let mut out: Vec<NodeUsage> = list
        .items
        .into_iter()
        .map(|m| {
            let can = allocatable
                .get(&m.metadata.name)
                .copied()
                .unwrap_or_default();
            let used = super::cpu_and_memory(|name| m.usage.get(name).map(String::as_str));
            NodeUsage {
                cpu_millis: used.cpu_millis,
                memory_bytes: used.memory_bytes,
                cpu_allocatable_millis: can.cpu_millis,
                memory_allocatable_bytes: can.memory_bytes,
                name: m.metadata.name,
            }
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// All nodes together: used and allocatable.
pub fn total(nodes: &[NodeUsage]) -> NodeUsage {
    nodes.iter().fold(
        NodeUsage {
            name: String::new(),
            ..Default::default()
        },
        |mut t, n| {
            t.cpu_millis += n.cpu_millis;
            t.memory_bytes += n.memory_bytes;
            t.cpu_allocatable_millis += n.cpu_allocatable_millis;
            t.memory_allocatable_bytes += n.memory_allocatable_bytes;
            t
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percents_round_as_kubectl_top_does_and_say_nothing_without_allocatable() {
        let n = NodeUsage {
            name: "a".into(),
            cpu_millis: 333,
            memory_bytes: 1 << 30,
            cpu_allocatable_millis: 940,
            memory_allocatable_bytes: 0,
        };
        assert_eq!(n.percents(), (Some(35), None));
    }

    #[test]
    fn the_total_adds_every_node() {
        let a = NodeUsage {
            name: "a".into(),
            cpu_millis: 100,
            memory_bytes: 10,
            cpu_allocatable_millis: 1000,
            memory_allocatable_bytes: 100,
        };
        let t = total(&[a.clone(), a]);
        assert_eq!((t.cpu_millis, t.cpu_allocatable_millis), (200, 2000));
        assert_eq!((t.memory_bytes, t.memory_allocatable_bytes), (20, 200));
    }
}

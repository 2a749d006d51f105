//! What the GPUs are doing, read from NVIDIA's DCGM exporter on each GPU node through the API
//! server's pod proxy — no port-forward, no credential but the one Gantry already has: the
//! exporter pods are found by their labels (`discover`), each is read once a round (`scrape`),
//! and its text becomes GPUs (`crate::dcgm`). Read only while a screen shows GPUs or the
//! idle-GPU guard needs them (the engine's GPU worker decides); a cluster without an exporter
//! is said to be so once, with how to turn GKE's on.

pub mod discover;
pub mod scrape;

use std::collections::HashMap;
use std::time::Duration;

use futures::StreamExt;

pub use super::rbac::Rule;

pub use discover::{Exporter, ExporterSource, KNOWN_EXPORTERS, discover};
pub use scrape::{ScrapeError, scrape};

/// How often the exporters are read while someone or something needs them.
pub const POLL: Duration = Duration::from_secs(10);
/// How often the exporter pods are looked for again (a node added, an exporter restarted).
pub const REDISCOVER: Duration = Duration::from_secs(60);
/// How often a cluster without an exporter is asked again (DCGM may be turned on).
pub const RECHECK: Duration = Duration::from_secs(300);

/// Exporters read at once.
const READ_AT_ONCE: usize = 8;

/// What Gantry says when no exporter is found.
pub const NO_EXPORTER: &str = "GPU metrics n/a: no DCGM exporter found (on GKE: gcloud container clusters update CLUSTER --monitoring=SYSTEM,DCGM)";

/// What reading the GPUs asks of the API server, beyond following the Job: the exporter pods
/// listed by label across namespaces, each read through `pods/proxy` (a GET on
/// `/api/v1/namespaces/NS/pods/NAME:PORT/proxy/metrics` is verb `get` on subresource `proxy`:
/// kubernetes `staging/src/k8s.io/apiserver/pkg/endpoints/request/requestinfo.go`), and the
/// GPU nodes listed for what a GPU costs. `pods/proxy` reaches every port of every pod it is
/// granted in: bind it where the exporter runs (`gke-managed-system` on GKE) when a
/// ClusterRole is too wide.
pub const RBAC_RULES: &[Rule] = &[
    Rule {
        act: "find the DCGM exporters (pods, across namespaces)",
        group: "",
        resources: &["pods"],
        verbs: &["list"],
    },
    Rule {
        act: "read the GPUs (the exporters through pods/proxy)",
        group: "",
        resources: &["pods/proxy"],
        verbs: &["get"],
    },
    Rule {
        act: "price the GPUs (nodes)",
        group: "",
        resources: &["nodes"],
        verbs: &["list"],
    },
];

/// One exporter's GPUs as read, on its node.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeGpus {
    pub node: String,
    /// `namespace/pod` of the exporter read.
    pub exporter: String,
    pub gpus: Vec<crate::dcgm::Gpu>,
    /// One of the node's GPUs an hour, as GPUs are priced (`ends::cost::gpu_per_hour`); None:
    /// not priced (no price for it, or not a GKE node).
    pub per_gpu_hour: Option<f64>,
}

/// Every exporter's GPUs of one round, and when it was read.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    pub at: jiff::Timestamp,
    pub nodes: Vec<NodeGpus>,
}

impl Reading {
    /// Every GPU with its node's entry.
    pub fn gpus(&self) -> impl Iterator<Item = (&NodeGpus, &crate::dcgm::Gpu)> {
        self.nodes
            .iter()
            .flat_map(|n| n.gpus.iter().map(move |g| (n, g)))
    }
}

/// What one round of the GPU worker found.
#[derive(Debug, Clone, PartialEq)]
pub enum GpuRead {
    Read(Reading),
    Unavailable(Unavailable),
    /// Nothing needs the GPUs any more: the worker stopped reading them.
    Stopped,
}

/// Why there is no reading: said once, `n/a` in the panes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unavailable {
    /// No exporter pod on the cluster.
    NoExporter,
    /// The API server refused what the reading needs: which permission is missing.
    Forbidden(String),
    /// Every exporter failed to answer (its words, the first).
    Failed(String),
}

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unavailable::NoExporter => f.write_str(NO_EXPORTER),
            Unavailable::Forbidden(missing) => write!(f, "GPU metrics n/a: {missing}"),
            Unavailable::Failed(why) => write!(f, "GPU metrics n/a: {why}"),
        }
    }
}

/// Every exporter once, at most [`READ_AT_ONCE`] at a time: the GPUs of those that answered
/// (`prices`: one GPU an hour by node), or why none did.
pub async fn read(
    client: &kube::Client,
    exporters: &[Exporter],
    prices: &HashMap<String, Option<f64>>,
) -> GpuRead {
    // Owned, so the reads are a `Send` future whatever borrows the caller holds.
    let results: Vec<(Exporter, Result<Vec<crate::dcgm::Gpu>, ScrapeError>)> =
        futures::stream::iter(exporters.to_vec())
            .map(|e| {
                let client = client.clone();
                async move {
                    let read = scrape(&client, &e).await;
                    (e, read)
                }
            })
            .buffer_unordered(READ_AT_ONCE)
            .collect()
            .await;
    let mut nodes = Vec::new();
    let mut first_error = None;
    for (exporter, result) in results {
        match result {
            Ok(gpus) => nodes.push(NodeGpus {
                node: exporter.node.clone(),
                exporter: format!("{}/{}", exporter.namespace, exporter.pod),
                gpus,
                per_gpu_hour: prices.get(&exporter.node).copied().flatten(),
            }),
            Err(e) => {
                tracing::debug!(error = %e, "reading a DCGM exporter");
                first_error.get_or_insert(e);
            }
        }
    }
    if nodes.is_empty()
        && let Some(e) = first_error
    {
        return GpuRead::Unavailable(match e {
            ScrapeError::Forbidden { .. } => Unavailable::Forbidden(e.to_string()),
            e => Unavailable::Failed(e.to_string()),
        });
    }
    nodes.sort_by(|a, b| a.node.cmp(&b.node));
    GpuRead::Read(Reading {
        at: jiff::Timestamp::now(),
        nodes,
    })
}

/// Found and read once, unpriced (`gantry status`).
pub async fn read_once(client: &kube::Client, sources: &[ExporterSource]) -> GpuRead {
    match discover(client, sources).await {
        Ok(exporters) => read(client, &exporters, &HashMap::new()).await,
        Err(why) => GpuRead::Unavailable(why),
    }
}

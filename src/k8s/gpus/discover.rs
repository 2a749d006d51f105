//! Where the exporters are: pods found by their labels, the first found on each node kept (two
//! exporters on one node would say the same GPUs twice; GKE's is looked for first).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::api::ListParams;

use super::Unavailable;
pub use crate::config::ExporterSource;

/// The exporter's port when its pod does not name one `metrics` (its default listen address,
/// `:9400`: NVIDIA/dcgm-exporter `pkg/cmd/app.go` lines 131-135 @
/// d5e5f510a1b6b393f39a43293ccd9dc985defc79).
pub const DEFAULT_PORT: u16 = 9400;

/// The exporters Gantry looks for, in this order:
/// - GKE's managed one (`--monitoring=SYSTEM,DCGM`): DaemonSet `dcgm-exporter` in
///   `gke-managed-system`, selector `app.kubernetes.io/name=gke-managed-dcgm-exporter`, port
///   `metrics` 9400 (a recorded cluster: elideng-sg/hypercomputer-internode-deepdive
///   `assets/lab-10/managed-stack.txt` and `scrape-config.txt` @
///   f0d219928b3d9e006bbe4bdc5e2e950a2e77d44e; Google documents no label);
/// - the GPU Operator's: `app=nvidia-dcgm-exporter` (NVIDIA/gpu-operator
///   `assets/state-dcgm-exporter/0800_daemonset.yaml` lines 4-17) and, on its DRA path,
///   `app=nvidia-dcgm-exporter-dra` (`manifests/state-dcgm-exporter/0700_daemonset.yaml` lines
///   4-26), both @ a22dbf671f2e26f9a1e342f8eea28e196235e110, in the operator's namespace;
/// - NVIDIA's own Helm chart and manifest: `app.kubernetes.io/name=dcgm-exporter`
///   (NVIDIA/dcgm-exporter `deployment/templates/_helpers.tpl` lines 61-65 and
///   `dcgm-exporter.yaml` lines 16-51 @ d5e5f510a1b6b393f39a43293ccd9dc985defc79), in whatever
///   namespace it was installed.
pub const KNOWN_EXPORTERS: &[(Option<&str>, &str)] = &[
    (
        Some("gke-managed-system"),
        "app.kubernetes.io/name=gke-managed-dcgm-exporter",
    ),
    (
        None,
        "app in (nvidia-dcgm-exporter,nvidia-dcgm-exporter-dra)",
    ),
    (None, "app.kubernetes.io/name=dcgm-exporter"),
];

impl ExporterSource {
    /// The known exporters, or the one the config names (`[gpu] exporter`).
    pub fn sources(configured: Option<&ExporterSource>) -> Vec<ExporterSource> {
        match configured {
            Some(one) => vec![one.clone()],
            None => KNOWN_EXPORTERS
                .iter()
                .map(|(namespace, selector)| ExporterSource {
                    namespace: namespace.map(str::to_string),
                    selector: selector.to_string(),
                    port: None,
                })
                .collect(),
        }
    }

    fn place(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("in namespace {ns}"),
            None => "in all namespaces".to_string(),
        }
    }
}

/// One exporter pod to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exporter {
    pub namespace: String,
    pub pod: String,
    /// Its `spec.nodeName`: the node its GPUs are on (the exporter's own `Hostname` label is
    /// the pod's name where `NODE_NAME` is not set).
    pub node: String,
    pub port: u16,
}

/// The running exporter pods, one per node, the first source's first; `NoExporter` when there
/// is none, `Forbidden` (which permission) when none could be listed and one was refused.
pub async fn discover(
    client: &kube::Client,
    sources: &[ExporterSource],
) -> Result<Vec<Exporter>, Unavailable> {
    let mut by_node: BTreeMap<String, Exporter> = BTreeMap::new();
    let mut refused = None;
    for source in sources {
        let api: Api<Pod> = match &source.namespace {
            Some(ns) => Api::namespaced(client.clone(), ns),
            None => Api::all(client.clone()),
        };
        let pods = match api
            .list(&ListParams::default().labels(&source.selector))
            .await
        {
            Ok(list) => list.items,
            Err(kube::Error::Api(status)) if status.code == 403 => {
                refused.get_or_insert(format!(
                    "forbidden to list pods {} (grant list on pods there): {}",
                    source.place(),
                    crate::sanitize::one_line(&status.message)
                ));
                continue;
            }
            Err(e) => {
                tracing::debug!(error = %e, selector = %source.selector, "looking for DCGM exporters");
                continue;
            }
        };
        for pod in pods {
            if let Some(exporter) = exporter_of(&pod, source.port)
                && !by_node.contains_key(&exporter.node)
            {
                by_node.insert(exporter.node.clone(), exporter);
            }
        }
    }
    if by_node.is_empty() {
        return Err(refused.map_or(Unavailable::NoExporter, Unavailable::Forbidden));
    }
    Ok(by_node.into_values().collect())
}

/// A running pod on a node, with the port to read: its container port named `metrics`, else
/// the one given, else 9400.
fn exporter_of(pod: &Pod, port: Option<u16>) -> Option<Exporter> {
    let status = pod.status.as_ref()?;
    if status.phase.as_deref() != Some("Running") || pod.metadata.deletion_timestamp.is_some() {
        return None;
    }
    let spec = pod.spec.as_ref()?;
    let named = spec
        .containers
        .iter()
        .flat_map(|c| c.ports.iter().flatten())
        .find(|p| p.name.as_deref() == Some("metrics"))
        .and_then(|p| u16::try_from(p.container_port).ok());
    Some(Exporter {
        namespace: pod.metadata.namespace.clone()?,
        pod: pod.metadata.name.clone()?,
        node: spec.node_name.clone()?,
        port: named.or(port).unwrap_or(DEFAULT_PORT),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn gkes_exporter_is_looked_for_first_and_a_configured_one_alone() {
        let known = ExporterSource::sources(None);
        assert_eq!(known[0].namespace.as_deref(), Some("gke-managed-system"));
        assert_eq!(known.len(), KNOWN_EXPORTERS.len());
        let mine = ExporterSource::parse("ns/app=x").unwrap();
        assert_eq!(ExporterSource::sources(Some(&mine)), vec![mine]);
    }

    #[test]
    fn only_a_running_pod_on_a_node_is_read_at_its_metrics_port() {
        let pod = |phase: &str, ports: serde_json::Value| -> Pod {
            serde_json::from_value(serde_json::json!({
                "metadata": {"name": "dcgm-exporter-x", "namespace": "gke-managed-system"},
                "spec": {"nodeName": "n1", "containers": [{"name": "c", "ports": ports}]},
                "status": {"phase": phase},
            }))
            .unwrap()
        };
        let named = serde_json::json!([{"name": "metrics", "containerPort": 9500}]);
        let found = exporter_of(&pod("Running", named), None).unwrap();
        assert_eq!((found.node.as_str(), found.port), ("n1", 9500));
        let unnamed = serde_json::json!([]);
        assert_eq!(
            exporter_of(&pod("Running", unnamed.clone()), None)
                .unwrap()
                .port,
            9400
        );
        assert_eq!(
            exporter_of(&pod("Running", unnamed.clone()), Some(9401))
                .unwrap()
                .port,
            9401
        );
        assert_eq!(exporter_of(&pod("Pending", unnamed), None), None);
    }
}

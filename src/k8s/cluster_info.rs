//! A Kubernetes cluster Gantry did not make — a kubeconfig context: kind, minikube, EKS, a GKE
//! cluster someone else runs — described as `gantry status` shows it. Whether its API answers is
//! all Gantry can say of its health; there is no provisioning state to report.

use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, ListParams};
use serde::Serialize;

/// Whether the context's API server answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ContextStatus {
    Running,
    Unreachable,
}

impl ContextStatus {
    pub fn name(self) -> &'static str {
        match self {
            Self::Running => "RUNNING",
            Self::Unreachable => "UNREACHABLE",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextSummary {
    /// The kubeconfig context.
    pub name: String,
    /// Its API server's URL.
    pub server: String,
    /// The API server's version (`v1.32.0`), empty when it did not answer.
    pub version: String,
    pub node_count: u32,
    pub status: ContextStatus,
    /// Why it is unreachable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Asks the API server for its version and its nodes.
pub async fn describe(client: &kube::Client, context: &str, server: &str) -> ContextSummary {
    let mut summary = ContextSummary {
        name: context.to_string(),
        server: server.to_string(),
        version: String::new(),
        node_count: 0,
        status: ContextStatus::Unreachable,
        error: None,
    };
    let version = match client.apiserver_version().await {
        Ok(v) => v,
        Err(e) => {
            summary.error = Some(format!("the API server did not answer: {e}"));
            return summary;
        }
    };
    summary.version = version.git_version;
    summary.status = ContextStatus::Running;
    // Listing nodes is a cluster-scoped permission a namespace user may not have: the count
    // stays 0 then, the cluster is still reachable.
    if let Ok(nodes) = Api::<Node>::all(client.clone())
        .list_metadata(&ListParams::default())
        .await
    {
        summary.node_count = u32::try_from(nodes.items.len()).unwrap_or(u32::MAX);
    }
    summary
}

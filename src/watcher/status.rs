//! `gantry watcher status`: whether the watcher is there and ready, which image and version it
//! runs, its pod, whether it holds the recoverer's Lease, and — from the report the watcher
//! itself writes from inside (`Report`, its ConfigMap) — what it cannot do, and why: a GKE grant
//! missing, a permission its RBAC lacks, a setting a newer Gantry wrote that it ignored.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::ResourceExt;
use kube::api::{Api, ListParams};
use serde::{Deserialize, Serialize};

use super::error::WatcherError;

/// An act the watcher cannot do from inside, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Unavailable {
    pub act: String,
    pub why: String,
}

/// What the watcher found from inside, as it writes it in its report ConfigMap.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub pod: String,
    pub version: String,
    pub at: Option<jiff::Timestamp>,
    #[serde(default)]
    pub unavailable: Vec<Unavailable>,
    /// Settings a newer Gantry wrote that this one does not know.
    #[serde(default)]
    pub ignored: Vec<String>,
}

/// The report's key in its ConfigMap.
pub const REPORT_KEY: &str = "report.json";

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WatcherStatus {
    pub installed: bool,
    pub ready: bool,
    pub image: Option<String>,
    pub version: Option<String>,
    pub pod: Option<String>,
    pub holds_lease: bool,
    pub unavailable: Vec<Unavailable>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ignored: Vec<String>,
    /// When the watcher last wrote its report.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reported_at: Option<jiff::Timestamp>,
}

pub async fn status(
    client: &kube::Client,
    namespace: &str,
    job: &str,
    job_namespace: &str,
) -> Result<WatcherStatus, WatcherError> {
    let name = super::name(job);
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), namespace);
    let Some(deployment) = deployments
        .get_opt(&name)
        .await
        .map_err(WatcherError::api(format!("reading Deployment {name}")))?
    else {
        return Ok(WatcherStatus::default());
    };
    let mut status = WatcherStatus {
        installed: true,
        ready: deployment
            .status
            .as_ref()
            .and_then(|s| s.ready_replicas)
            .unwrap_or(0)
            > 0,
        image: deployment
            .spec
            .as_ref()
            .and_then(|s| s.template.spec.as_ref())
            .and_then(|p| p.containers.first())
            .and_then(|c| c.image.clone()),
        version: deployment.labels().get(super::VERSION_LABEL).cloned(),
        ..Default::default()
    };
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let mut running: Vec<Pod> = pods
        .list(&ListParams::default().labels(&super::selector(job)))
        .await
        .map_err(WatcherError::api("listing the watcher's pods"))?
        .items
        .into_iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .collect();
    running.sort_by_key(|p| p.metadata.creation_timestamp.clone().map(|t| t.0));
    status.pod = running.last().map(ResourceExt::name_any);
    let holder = crate::k8s::lease::named(client, job_namespace, job)
        .await
        .ok()
        .flatten()
        .map(|n| n.identity);
    status.holds_lease = holder.is_some_and(|h| {
        status
            .pod
            .as_ref()
            .is_some_and(|p| h.starts_with(p.as_str()))
    });
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
    let report = maps
        .get_opt(&super::report_name(job))
        .await
        .map_err(WatcherError::api("reading the watcher's report"))?
        .and_then(|m| m.data)
        .and_then(|d| d.get(REPORT_KEY).cloned())
        .and_then(|text| serde_json::from_str::<Report>(&text).ok());
    if let Some(report) = report {
        status.unavailable = report.unavailable;
        status.ignored = report.ignored;
        status.reported_at = report.at;
    }
    Ok(status)
}

impl WatcherStatus {
    /// For a person.
    pub fn lines(&self) -> Vec<String> {
        if !self.installed {
            return vec![
                "not installed: gantry watcher install (README \"Gantry in the cluster\")".into(),
            ];
        }
        let mut out = vec![
            format!(
                "watcher   {}{}",
                if self.ready { "ready" } else { "not ready" },
                self.pod
                    .as_ref()
                    .map(|p| format!(" · pod {p}"))
                    .unwrap_or_default()
            ),
            format!(
                "image     {} (Gantry {})",
                self.image.as_deref().unwrap_or("?"),
                self.version.as_deref().unwrap_or("?")
            ),
            format!(
                "lease     {}",
                if self.holds_lease {
                    "held: it recovers, guards and sends"
                } else {
                    "not held by it"
                }
            ),
        ];
        if self.unavailable.is_empty() {
            out.push("can do    everything it is asked to".into());
        }
        for u in &self.unavailable {
            out.push(format!(
                "cannot    {}: {}",
                crate::sanitize::one_line(&u.act),
                crate::sanitize::one_line(&u.why)
            ));
        }
        for key in &self.ignored {
            out.push(format!(
                "ignored   {} (written by a newer Gantry)",
                crate::sanitize::one_line(key)
            ));
        }
        out
    }
}

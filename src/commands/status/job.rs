//! The training Job as `gantry status` shows it: every attempt, oldest first, with its pods and
//! how they ended (`ends::attempt`, filled in by the command, which reads Events and nodes too),
//! the run and who recovers it.

use k8s_openapi::api::batch::v1::Job;
use serde::Serialize;

use crate::config::JobConfig;
use crate::k8s::status::{AttemptSummary, EventSummary, PodSummary};
use crate::k8s::{K8sError, list_attempts};

/// The training Job as `gantry status` shows it: every attempt, oldest first, with its pods.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobStatus {
    pub name: String,
    pub namespace: String,
    pub attempts: Vec<AttemptStatus>,
    /// The newest attempt's run: its id (`GANTRY_RUN_ID`), and how many attempts Gantry made
    /// in it by itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recoveries: Option<u32>,
    /// The engine the recoverer's Lease names, if it names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recoverer: Option<String>,
    /// Its record was not renewed for longer than the Lease's duration by this machine's
    /// clock: it looks silent (a one-shot reader cannot tell more; the engines watching decide
    /// whether to take it over).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub recoverer_silent: bool,
    /// The cluster's watcher, when it is the recoverer: its pod and the Gantry it runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub watcher: Option<WatcherHolder>,
    /// Why the attempts could not be read (the cluster did not answer); `attempts` is empty then.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The watcher that holds the recoverer's Lease, as the Lease says.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WatcherHolder {
    pub pod: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// One attempt and its pods. `status` already counts running pods (`phase_with_pods`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AttemptStatus {
    #[serde(flatten)]
    pub summary: AttemptSummary,
    /// Failed pods allowed before the attempt fails (`spec.backoffLimit`, 6 when unset).
    pub backoff_limit: i32,
    pub pods: Vec<PodSummary>,
    /// How its pods ended (filled in by `gantry status`, which reads Events and nodes too).
    #[serde(flatten)]
    pub ends: crate::ends::attempt::AttemptEnds,
}

impl JobStatus {
    /// No attempt could be read: why.
    pub fn unreadable(cfg: &JobConfig, error: String) -> Self {
        Self {
            name: cfg.name.clone(),
            namespace: cfg.namespace.clone(),
            attempts: Vec::new(),
            run_id: None,
            recoveries: None,
            recoverer: None,
            recoverer_silent: false,
            watcher: None,
            error: Some(error),
        }
    }

    /// The attempt that counts now (the newest).
    pub fn current(&self) -> Option<&AttemptStatus> {
        self.attempts.last()
    }
}

impl AttemptStatus {
    pub fn of(job: &Job, pods: Vec<PodSummary>) -> Self {
        let mut summary = AttemptSummary::of(job);
        summary.status = summary.phase_with_pods(&pods);
        Self {
            summary,
            backoff_limit: job
                .spec
                .as_ref()
                .and_then(|s| s.backoff_limit)
                .unwrap_or(DEFAULT_BACKOFF_LIMIT),
            pods,
            ends: Default::default(),
        }
    }
}

/// The Job API's default `backoffLimit`.
const DEFAULT_BACKOFF_LIMIT: i32 = 6;

/// Every attempt of the training Job with its pods, oldest first. A cluster that does not
/// answer gives a `JobStatus` saying so rather than failing the whole status.
pub async fn job_status(client: &kube::Client, cfg: &JobConfig) -> JobStatus {
    match attempt_statuses(client, cfg).await {
        Ok(attempts) => {
            let run = attempts.last().and_then(|a| a.summary.run.clone());
            let named = crate::k8s::lease::named(client, &cfg.namespace, &cfg.name)
                .await
                .ok()
                .flatten();
            JobStatus {
                name: cfg.name.clone(),
                namespace: cfg.namespace.clone(),
                run_id: run.as_ref().map(|r| r.id.clone()),
                recoveries: run.map(|r| r.recoveries),
                recoverer_silent: named.as_ref().is_some_and(|n| n.looks_silent),
                watcher: named
                    .as_ref()
                    .filter(|n| n.stamp.in_cluster)
                    .map(|n| WatcherHolder {
                        pod: n.identity.clone(),
                        version: n.stamp.version.clone(),
                    }),
                recoverer: named.map(|n| n.identity),
                attempts,
                error: None,
            }
        }
        Err(e) => JobStatus::unreadable(cfg, e.to_string()),
    }
}

/// The events about the Job's attempts and their pods (newest as the API server keeps them);
/// none when they cannot be read (the diagnosis then has the pods alone).
pub async fn job_events(client: &kube::Client, cfg: &JobConfig) -> Vec<EventSummary> {
    let api: kube::Api<k8s_openapi::api::core::v1::Event> =
        kube::Api::namespaced(client.clone(), &cfg.namespace);
    match api.list(&kube::api::ListParams::default()).await {
        Ok(list) => list
            .items
            .iter()
            .filter(|e| EventSummary::concerns(e, &cfg.name))
            .map(EventSummary::of)
            .collect(),
        Err(e) => {
            tracing::debug!(error = %e, "listing the Job's events");
            Vec::new()
        }
    }
}

async fn attempt_statuses(
    client: &kube::Client,
    cfg: &JobConfig,
) -> Result<Vec<AttemptStatus>, K8sError> {
    let mut out = Vec::new();
    for job in list_attempts(client, cfg).await? {
        let name = job.metadata.name.clone().unwrap_or_default();
        let pods = crate::k8s::attempts::pods_of(client, &cfg.namespace, &name)
            .await?
            .iter()
            .map(PodSummary::of)
            .collect();
        out.push(AttemptStatus::of(&job, pods));
    }
    Ok(out)
}

//! The attempts of the training Job: every Job Gantry made for it, oldest first, and the one
//! that counts now (the newest). Also the Job part of `gantry status`.

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams};
use serde::Serialize;

use super::K8sError;
use super::labels;
use super::status::{AttemptSummary, EventSummary, PodSummary, attempt_of};
use crate::config::JobConfig;

/// Every attempt of the training Job `cfg.name`, oldest first (by attempt number).
pub async fn list_attempts(client: &kube::Client, cfg: &JobConfig) -> Result<Vec<Job>, K8sError> {
    let jobs: Api<Job> = Api::namespaced(client.clone(), &cfg.namespace);
    let mut list = jobs
        .list(&ListParams::default().labels(&labels::managed_selector(&cfg.name)))
        .await
        .map_err(K8sError::api(format!("listing the Jobs of {}", cfg.name)))?
        .items;
    list.sort_by_key(|j| {
        (
            attempt_of(&j.metadata).unwrap_or(0),
            j.metadata.creation_timestamp.clone(),
        )
    });
    Ok(list)
}

/// The newest attempt, if any.
pub async fn current_attempt(
    client: &kube::Client,
    cfg: &JobConfig,
) -> Result<Option<Job>, K8sError> {
    Ok(list_attempts(client, cfg).await?.pop())
}

/// The pods of one attempt, oldest first.
pub async fn pods_of(
    client: &kube::Client,
    namespace: &str,
    job_name: &str,
) -> Result<Vec<Pod>, K8sError> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let mut list = pods
        .list(&ListParams::default().labels(&labels::pods_of_job_selector(job_name)))
        .await
        .map_err(K8sError::api(format!("listing the pods of {job_name}")))?
        .items;
    list.sort_by(|a, b| {
        (
            a.metadata.creation_timestamp.as_ref().map(|t| t.0),
            &a.metadata.name,
        )
            .cmp(&(
                b.metadata.creation_timestamp.as_ref().map(|t| t.0),
                &b.metadata.name,
            ))
    });
    Ok(list)
}

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
    /// The engine that holds the recoverer's Lease, if any does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recoverer: Option<String>,
    /// Why the attempts could not be read (the cluster did not answer); `attempts` is empty then.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
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
            let recoverer = super::lease::read(client, &cfg.namespace, &cfg.name, "")
                .await
                .ok()
                .flatten()
                .map(|h| h.identity);
            JobStatus {
                name: cfg.name.clone(),
                namespace: cfg.namespace.clone(),
                run_id: run.as_ref().map(|r| r.id.clone()),
                recoveries: run.map(|r| r.recoveries),
                recoverer,
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
        let pods = pods_of(client, &cfg.namespace, &name)
            .await?
            .iter()
            .map(PodSummary::of)
            .collect();
        out.push(AttemptStatus::of(&job, pods));
    }
    Ok(out)
}

//! The attempts of the training Job: every Job Gantry made for it, oldest first, and the one
//! that counts now (the newest), and the pods of one.

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams};

use super::K8sError;
use super::labels;
use super::labels::attempt_of;
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

/// Attempt `attempt`, if it is one of the configured Job's made by Gantry (else a clear
/// error: never act on a Job someone else made).
pub async fn managed(jobs: &Api<Job>, cfg: &JobConfig, attempt: &str) -> Result<Job, K8sError> {
    let job = jobs
        .get_opt(attempt)
        .await
        .map_err(K8sError::api(format!("reading Job {attempt}")))?
        .ok_or_else(|| K8sError::NotFound {
            name: attempt.to_string(),
            namespace: cfg.namespace.clone(),
        })?;
    let labels_of = job.metadata.labels.clone().unwrap_or_default();
    if labels_of.get(labels::MANAGED_BY).map(String::as_str) != Some(labels::MANAGER)
        || labels_of.get(labels::JOB_LABEL) != Some(&cfg.name)
    {
        return Err(K8sError::NotManaged {
            kind: "Job",
            name: attempt.to_string(),
            job: cfg.name.clone(),
        });
    }
    Ok(job)
}

//! The attempts of the training Job: every Job Gantry made for it, oldest first, and the one
//! that counts now (the newest). Also the `job` part of `gantry status --json`.

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams};
use serde_json::{Value, json};

use super::K8sError;
use super::labels;
use super::status::{AttemptSummary, PodSummary, attempt_of};
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

/// `{"name", "attempts": [{"name", "status", "reason", "pods": [{"name", "phase", "reason",
/// "exitCode", "restarts", "node"}]}]}`, oldest attempt first. An unreachable cluster gives
/// `{"name", "error"}` rather than failing the whole status.
pub async fn job_status_json(client: &kube::Client, cfg: &JobConfig) -> Value {
    match attempts_json(client, cfg).await {
        Ok(attempts) => json!({"name": cfg.name, "attempts": attempts}),
        Err(e) => json!({"name": cfg.name, "attempts": [], "error": e.to_string()}),
    }
}

async fn attempts_json(client: &kube::Client, cfg: &JobConfig) -> Result<Vec<Value>, K8sError> {
    let mut out = Vec::new();
    for job in list_attempts(client, cfg).await? {
        let summary = AttemptSummary::of(&job);
        let pods: Vec<PodSummary> = pods_of(client, &cfg.namespace, &summary.name)
            .await?
            .iter()
            .map(PodSummary::of)
            .collect();
        out.push(json!({
            "name": summary.name,
            "attempt": summary.attempt,
            "status": summary.phase_with_pods(&pods),
            "reason": summary.reason,
            "pods": pods.iter().map(|p| json!({
                "name": p.name,
                "phase": p.phase,
                "reason": p.reason,
                "exitCode": p.exit_code,
                "restarts": p.restarts,
                "node": p.node,
            })).collect::<Vec<_>>(),
        }));
    }
    Ok(out)
}

//! Delete: attempts of the training Job with background propagation (the garbage collector takes
//! their pods), and the headless Service once no attempt is left. Only what Gantry made.

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Service;
use kube::api::{Api, DeleteParams, ListParams};

use super::labels::{self, JOB_LABEL, MANAGED_BY, MANAGER};
use super::{K8sError, attempts, status_code};
use crate::config::JobConfig;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Deleted {
    pub jobs: Vec<String>,
    pub services: Vec<String>,
}

/// Deletes the attempt `name`, or every attempt when `name` is None.
pub async fn delete(
    client: &kube::Client,
    cfg: &JobConfig,
    name: Option<&str>,
    by: &str,
) -> Result<Deleted, K8sError> {
    let ns = &cfg.namespace;
    let jobs: Api<Job> = Api::namespaced(client.clone(), ns);
    let targets: Vec<String> = match name {
        Some(n) => {
            let job = jobs
                .get_opt(n)
                .await
                .map_err(K8sError::api(format!("reading Job {n}")))?
                .ok_or_else(|| K8sError::NotFound {
                    name: n.to_string(),
                    namespace: ns.clone(),
                })?;
            let labels = job.metadata.labels.unwrap_or_default();
            if labels.get(MANAGED_BY).map(String::as_str) != Some(MANAGER)
                || labels.get(JOB_LABEL) != Some(&cfg.name)
            {
                return Err(K8sError::NotManaged {
                    kind: "Job",
                    name: n.to_string(),
                    job: cfg.name.clone(),
                });
            }
            vec![n.to_string()]
        }
        None => attempts::list_attempts(client, cfg)
            .await?
            .into_iter()
            .filter_map(|j| j.metadata.name)
            .collect(),
    };
    let mut deleted = Deleted::default();
    for job in &targets {
        mark_deleted_by(&jobs, job, by).await;
        match jobs.delete(job, &DeleteParams::background()).await {
            Ok(_) => deleted.jobs.push(job.clone()),
            // Gone already: what the user wanted.
            Err(e) if status_code(&e) == Some(404) => {}
            Err(e) => return Err(K8sError::api(format!("deleting Job {job}"))(e)),
        }
    }
    let left = attempts::list_attempts(client, cfg)
        .await?
        .into_iter()
        .filter(|j| {
            j.metadata.deletion_timestamp.is_none()
                && !targets.iter().any(|t| Some(t) == j.metadata.name.as_ref())
        })
        .count();
    if left == 0 {
        let services: Api<Service> = Api::namespaced(client.clone(), ns);
        let managed = services
            .list(&ListParams::default().labels(&labels::managed_selector(&cfg.name)))
            .await
            .map_err(K8sError::api("listing Gantry's Services"))?;
        for svc in managed.items.into_iter().filter_map(|s| s.metadata.name) {
            match services.delete(&svc, &DeleteParams::background()).await {
                Ok(_) => deleted.services.push(svc),
                Err(e) if status_code(&e) == Some(404) => {}
                Err(e) => return Err(K8sError::api(format!("deleting Service {svc}"))(e)),
            }
        }
    }
    Ok(deleted)
}

/// Says on the object who is deleting it (`gantry.dev/deleted-by`), so that every Gantry
/// watching tells the ends of its pods as this person's doing. Best effort: the delete goes on
/// whatever this answers.
pub async fn mark_deleted_by<K>(api: &Api<K>, name: &str, by: &str)
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let patch = serde_json::json!({"metadata": {"annotations": {super::labels::DELETED_BY: by}}});
    if let Err(e) = api
        .patch(
            name,
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(&patch),
        )
        .await
        && status_code(&e) != Some(404)
    {
        tracing::debug!(name, error = %e, "marking who deletes it");
    }
}

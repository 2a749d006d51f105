//! An attempt's code on the cluster (`crate::code::mount` says how its Job carries it): the
//! ConfigMap made for a Job created held, then the Job released; the archive of an attempt read
//! back, for the attempt after it (a retry or a recovery copies it, never the directory) and for
//! `gantry code`.

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};

use super::K8sError;
use crate::code::mount;

/// Makes the ConfigMap holding `archive` for `job` (as the API server returned it), owned by
/// it, and releases the Job. A Job whose code could not be made is deleted: it never ran, and
/// would only wait.
pub async fn provide(client: &kube::Client, job: &Job, archive: Vec<u8>) -> Result<(), K8sError> {
    let name = job.metadata.name.clone().unwrap_or_default();
    let namespace = job.metadata.namespace.clone().unwrap_or_default();
    let jobs: Api<Job> = Api::namespaced(client.clone(), &namespace);
    let configmaps: Api<ConfigMap> = Api::namespaced(client.clone(), &namespace);
    let configmap = mount::configmap(job, archive);
    let cm_name = mount::configmap_name(&name);
    if let Err(e) = configmaps.create(&PostParams::default(), &configmap).await {
        // Its pods never started (it was held): take it back, and say why.
        let _ = jobs.delete(&name, &DeleteParams::background()).await;
        return Err(K8sError::api(format!(
            "making ConfigMap {cm_name} with the code of attempt {name} (the attempt was deleted again)"
        ))(e));
    }
    jobs.patch(
        &name,
        &PatchParams::default(),
        &Patch::Merge(&mount::release_patch()),
    )
    .await
    .map_err(K8sError::api(format!(
        "releasing attempt {name} once its code was there (it waits suspended: delete it with `gantry delete attempt {name}`)"
    )))?;
    Ok(())
}

/// The archive of the code attempt `job` ran: its own ConfigMap's (owned by it).
pub async fn archive_of(client: &kube::Client, job: &Job) -> Result<Vec<u8>, K8sError> {
    let name = job.metadata.name.clone().unwrap_or_default();
    let namespace = job.metadata.namespace.clone().unwrap_or_default();
    let cm_name = mount::configmap_name(&name);
    let gone = || K8sError::CodeGone {
        attempt: name.clone(),
        configmap: cm_name.clone(),
    };
    let configmaps: Api<ConfigMap> = Api::namespaced(client.clone(), &namespace);
    let configmap = configmaps
        .get_opt(&cm_name)
        .await
        .map_err(K8sError::api(format!("reading ConfigMap {cm_name}")))?
        .ok_or_else(gone)?;
    // A ConfigMap of that name that another object owns is not this attempt's code.
    let owned = configmap
        .metadata
        .owner_references
        .iter()
        .flatten()
        .any(|o| Some(&o.uid) == job.metadata.uid.as_ref());
    if !owned {
        return Err(gone());
    }
    mount::archive_in(&configmap)
        .map(<[u8]>::to_vec)
        .ok_or_else(gone)
}

/// What attempt `attempt` of the configured Job ran: its record and its archive.
pub async fn of_attempt(
    client: &kube::Client,
    cfg: &crate::config::JobConfig,
    attempt: &str,
) -> Result<(crate::code::CodeRecord, Vec<u8>), K8sError> {
    let jobs: Api<Job> = Api::namespaced(client.clone(), &cfg.namespace);
    let job = super::attempts::managed(&jobs, cfg, attempt).await?;
    let record = mount::record_of(&job).ok_or_else(|| K8sError::NoCode {
        attempt: attempt.to_string(),
    })?;
    Ok((record, archive_of(client, &job).await?))
}

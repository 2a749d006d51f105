//! Launch: create the next attempt of the training Job from the configuration (and the headless
//! Service a distributed Job needs). A running attempt is never doubled.

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Service;
use kube::api::{Api, PostParams};

use super::labels::{JOB_LABEL, MANAGED_BY, MANAGER};
use super::manifest;
use super::status::{AttemptPhase, JobSummary, attempt_of};
use super::{K8sError, attempts, status_code};
use crate::config::JobConfig;

/// What a launch or retry created.
#[derive(Debug, Clone, PartialEq)]
pub struct Launched {
    /// The new attempt's Job name.
    pub job: String,
    pub attempt: u32,
    /// The headless Service of a distributed Job (created now or already there).
    pub service: Option<String>,
}

/// Creates the next attempt from `cfg` (attempt 1 when there is none). Refuses while the
/// current attempt is still pending or running.
pub async fn launch(
    client: &kube::Client,
    cfg: &JobConfig,
    project: Option<&str>,
) -> Result<Launched, K8sError> {
    // Validate before asking the cluster anything.
    manifest::training_job(cfg, project, 1)?;
    let service = manifest::worker_service(cfg, 1)?;
    let attempt = match attempts::current_attempt(client, cfg).await? {
        Some(current) => {
            refuse_if_active(&current, true)?;
            attempt_of(&current.metadata).unwrap_or(1) + 1
        }
        None => 1,
    };
    let job = manifest::training_job(cfg, project, attempt)?;
    let service = match service {
        Some(_) => manifest::worker_service(cfg, attempt)?,
        None => None,
    };
    let service_name = match &service {
        Some(s) => Some(ensure_service(client, &cfg.namespace, &cfg.name, s).await?),
        None => None,
    };
    let name = create_job(client, &cfg.namespace, &job).await?;
    Ok(Launched {
        job: name,
        attempt,
        service: service_name,
    })
}

/// Refuses while `current` runs (and, with `pending_too`, while it waits to run: a retry may
/// replace an attempt stuck pending, e.g. on a wrong image, a second launch may not).
pub(crate) fn refuse_if_active(current: &Job, pending_too: bool) -> Result<(), K8sError> {
    let summary = JobSummary::of(current);
    if summary.deleting {
        return Ok(());
    }
    let state = match summary.status {
        AttemptPhase::Running => "running",
        AttemptPhase::Pending if pending_too => "pending",
        _ => return Ok(()),
    };
    Err(K8sError::StillActive {
        name: summary.name,
        state,
    })
}

pub(crate) async fn create_job(
    client: &kube::Client,
    namespace: &str,
    job: &Job,
) -> Result<String, K8sError> {
    let name = job.metadata.name.clone().unwrap_or_default();
    let jobs: Api<Job> = Api::namespaced(client.clone(), namespace);
    jobs.create(&PostParams::default(), job)
        .await
        .map_err(K8sError::api(format!("creating Job {name}")))?;
    Ok(name)
}

/// Creates the Service, or accepts the one there if Gantry made it for this Job.
pub(crate) async fn ensure_service(
    client: &kube::Client,
    namespace: &str,
    base: &str,
    service: &Service,
) -> Result<String, K8sError> {
    let name = service.metadata.name.clone().unwrap_or_default();
    let services: Api<Service> = Api::namespaced(client.clone(), namespace);
    match services.create(&PostParams::default(), service).await {
        Ok(_) => Ok(name),
        Err(e) if status_code(&e) == Some(409) => {
            let existing = services
                .get(&name)
                .await
                .map_err(K8sError::api(format!("reading Service {name}")))?;
            let labels = existing.metadata.labels.unwrap_or_default();
            if labels.get(MANAGED_BY).map(String::as_str) == Some(MANAGER)
                && labels.get(JOB_LABEL).map(String::as_str) == Some(base)
            {
                Ok(name)
            } else {
                Err(K8sError::NotManaged {
                    kind: "Service",
                    name,
                    job: base.to_string(),
                })
            }
        }
        Err(e) => Err(K8sError::api(format!("creating Service {name}"))(e)),
    }
}

//! Launch and retry: the next attempt of the training Job. A launch builds it from the
//! configuration (and the headless Service a distributed Job needs); a retry copies the previous
//! attempt's spec (a Job's template is immutable) with optional overrides, and the old attempt
//! and its pods stay, so their logs stay readable. A running attempt is never doubled.

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Service;
use kube::api::{Api, PostParams};

use super::labels::{self, attempt_of};
use super::labels::{JOB_LABEL, MANAGED_BY, MANAGER};
use super::manifest;
use super::run::{Next, Run};
use super::status::{AttemptPhase, AttemptSummary};
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
    /// What the operator should know about how the attempt was made, said once at its launch
    /// (a Job that goes without a `podFailurePolicy`).
    pub note: Option<&'static str>,
    /// The code it runs, when it runs code without an image (`crate::code`).
    pub code: Option<crate::code::CodeRecord>,
}

/// Creates the next attempt from `cfg` (attempt 1 when there is none), with the code of
/// `cfg.code` read now. Refuses while the current attempt is still pending or running.
pub async fn launch(
    client: &kube::Client,
    cfg: &JobConfig,
    project: Option<&str>,
) -> Result<Launched, K8sError> {
    // Validate before asking the cluster anything.
    manifest::training_job(cfg, project, 1)?;
    let code = cfg.code.as_deref().map(crate::code::pack).transpose()?;
    launch_packed(client, cfg, project, code.as_ref()).await
}

/// [`launch`] with the code already packed (and said) by the caller.
pub async fn launch_packed(
    client: &kube::Client,
    cfg: &JobConfig,
    project: Option<&str>,
    code: Option<&crate::code::Packed>,
) -> Result<Launched, K8sError> {
    manifest::training_job(cfg, project, 1)?;
    let service = manifest::worker_service(cfg, 1)?;
    let attempt = match attempts::current_attempt(client, cfg).await? {
        Some(current) => {
            refuse_if_active(&current, true)?;
            attempt_of(&current.metadata).unwrap_or(1) + 1
        }
        None => 1,
    };
    let mut job = manifest::training_job(cfg, project, attempt)?;
    Run::launched(jiff::Timestamp::now()).stamp(&mut job);
    if let Some(code) = code {
        crate::code::mount::attach(
            &mut job,
            &labels::attempt_name(&cfg.name, attempt),
            &code.record,
        );
    }
    let service = match service {
        Some(_) => manifest::worker_service(cfg, attempt)?,
        None => None,
    };
    let service_name = match &service {
        Some(s) => Some(ensure_service(client, &cfg.namespace, &cfg.name, s).await?),
        None => None,
    };
    let created = create_job(client, &cfg.namespace, &job).await?;
    if let Some(code) = code {
        super::code::provide(client, &created, code.archive.clone()).await?;
    }
    Ok(Launched {
        job: created.metadata.name.unwrap_or_default(),
        attempt,
        service: service_name,
        note: (manifest::Policy::of(cfg) == manifest::Policy::Without)
            .then_some(manifest::WITHOUT_POLICY),
        code: code.map(|c| c.record.clone()),
    })
}

/// Refuses while `current` runs (and, with `pending_too`, while it waits to run: a retry may
/// replace an attempt stuck pending, e.g. on a wrong image, a second launch may not).
fn refuse_if_active(current: &Job, pending_too: bool) -> Result<(), K8sError> {
    let summary = AttemptSummary::of(current);
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

/// The Job as the API server made it (with its uid, which its code's ConfigMap names).
async fn create_job(client: &kube::Client, namespace: &str, job: &Job) -> Result<Job, K8sError> {
    let name = job.metadata.name.clone().unwrap_or_default();
    let jobs: Api<Job> = Api::namespaced(client.clone(), namespace);
    match jobs.create(&PostParams::default(), job).await {
        Ok(created) => Ok(created),
        // Another Gantry made this attempt a moment ago: a person's retry and a recovery, or two
        // of either, are never both made.
        Err(e) if status_code(&e) == Some(409) => Err(K8sError::AttemptTaken { name }),
        Err(e) => Err(K8sError::api(format!("creating Job {name}"))(e)),
    }
}

/// Creates the Service, or accepts the one there if Gantry made it for this Job.
async fn ensure_service(
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

/// Starts the next attempt with the previous attempt's spec and `overrides`, as a person's
/// retry.
pub async fn retry(
    client: &kube::Client,
    cfg: &JobConfig,
    overrides: &manifest::Overrides,
) -> Result<Launched, K8sError> {
    next_of_run(client, cfg, overrides, Next::Retry).await
}

/// Starts the run's next attempt with the previous attempt's spec and `overrides`: a person's
/// retry, or Gantry's recovery. Two of them at once (two engines, or a person and an engine)
/// make the same attempt name: the API server lets one through.
pub async fn next_of_run(
    client: &kube::Client,
    cfg: &JobConfig,
    overrides: &manifest::Overrides,
    why: Next,
) -> Result<Launched, K8sError> {
    let previous = attempts::current_attempt(client, cfg)
        .await?
        .ok_or_else(|| K8sError::NothingToRetry {
            job: cfg.name.clone(),
        })?;
    refuse_if_active(&previous, false)?;
    next_from(client, cfg, &previous, overrides, why).await
}

/// Makes the attempt after `previous` (its spec, `overrides` over it), in `previous`'s run,
/// with `previous`'s code when it ran code (a copy of its archive: the directory is never read
/// again).
pub async fn next_from(
    client: &kube::Client,
    cfg: &JobConfig,
    previous: &Job,
    overrides: &manifest::Overrides,
    why: Next,
) -> Result<Launched, K8sError> {
    let attempt = attempt_of(&previous.metadata).unwrap_or(1) + 1;
    let mut job = manifest::next_attempt(previous, &cfg.name, attempt, overrides)?;
    let next_name = labels::attempt_name(&cfg.name, attempt);
    let code = if crate::code::mount::follow(&mut job, previous, &next_name) {
        Some(super::code::archive_of(client, previous).await?)
    } else {
        None
    };
    Run::next(
        Run::of(&previous.metadata).as_ref(),
        why,
        jiff::Timestamp::now(),
    )
    .stamp(&mut job);
    let subdomain = job
        .spec
        .as_ref()
        .and_then(|s| s.template.spec.as_ref())
        .and_then(|p| p.subdomain.clone());
    // The Service may have gone with a deleted attempt: bring it back like the launch made it.
    let service = match subdomain {
        Some(sub) => {
            let services: Api<Service> = Api::namespaced(client.clone(), &cfg.namespace);
            let exists = services
                .get_opt(&sub)
                .await
                .map_err(K8sError::api(format!("reading Service {sub}")))?
                .is_some();
            if !exists && let Some(svc) = manifest::worker_service(cfg, attempt)? {
                ensure_service(client, &cfg.namespace, &cfg.name, &svc).await?;
            }
            Some(sub)
        }
        None => None,
    };
    let created = create_job(client, &cfg.namespace, &job).await?;
    if let Some(archive) = code {
        super::code::provide(client, &created, archive).await?;
    }
    Ok(Launched {
        job: created.metadata.name.unwrap_or_default(),
        attempt,
        service,
        note: None,
        code: crate::code::mount::record_of(&job),
    })
}

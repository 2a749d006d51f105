//! Retry: a new attempt with the previous attempt's spec (a Job's template is immutable) and
//! optional overrides. The old attempt and its pods stay, so their logs stay readable.

use k8s_openapi::api::core::v1::Service;
use kube::api::Api;

use super::launch::{Launched, create_job, ensure_service, refuse_if_active};
use super::status::attempt_of;
use super::{K8sError, attempts, manifest};
use crate::config::JobConfig;

pub async fn retry(
    client: &kube::Client,
    cfg: &JobConfig,
    overrides: &manifest::Overrides,
) -> Result<Launched, K8sError> {
    let previous = attempts::current_attempt(client, cfg)
        .await?
        .ok_or_else(|| K8sError::NothingToRetry {
            job: cfg.name.clone(),
        })?;
    refuse_if_active(&previous, false)?;
    let attempt = attempt_of(&previous.metadata).unwrap_or(1) + 1;
    let job = manifest::next_attempt(&previous, &cfg.name, attempt, overrides)?;
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
    let name = create_job(client, &cfg.namespace, &job).await?;
    Ok(Launched {
        job: name,
        attempt,
        service,
    })
}

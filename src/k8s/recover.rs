//! What the recoverer does to a run (the engine that holds the Lease, `k8s::lease`, decides
//! when): restart a gang whose rank was preempted — its attempt deleted, the next one made with
//! the same spec in the same run, counted as a recovery — and end a run that ran out of
//! recoveries, said on its attempt (`gantry.dev/run-ended`) and suspended so its pods stop. A
//! recovery onto a spot pool's on-demand fallback sends the next attempt's pods to that pool.

use k8s_openapi::api::batch::v1::Job;
use kube::api::{Api, DeleteParams, Patch, PatchParams};

use super::delete::mark_deleted_by;
use super::labels::{JOB_LABEL, MANAGED_BY, MANAGER, POOL_LABEL, RUN_ENDED, SPOT_LABEL};
use super::launch::{Launched, next_from};
use super::run::Next;
use super::{K8sError, status_code};
use crate::config::JobConfig;

async fn managed(jobs: &Api<Job>, cfg: &JobConfig, attempt: &str) -> Result<Job, K8sError> {
    let job = jobs
        .get_opt(attempt)
        .await
        .map_err(K8sError::api(format!("reading Job {attempt}")))?
        .ok_or_else(|| K8sError::NotFound {
            name: attempt.to_string(),
            namespace: cfg.namespace.clone(),
        })?;
    let labels = job.metadata.labels.clone().unwrap_or_default();
    if labels.get(MANAGED_BY).map(String::as_str) != Some(MANAGER)
        || labels.get(JOB_LABEL) != Some(&cfg.name)
    {
        return Err(K8sError::NotManaged {
            kind: "Job",
            name: attempt.to_string(),
            job: cfg.name.clone(),
        });
    }
    Ok(job)
}

/// Ends `attempt` (its pods with it; their logs are followed to their end) and makes the next
/// attempt of its run with the same spec, as a recovery; with `pool`, its pods go to that node
/// pool (a spot pool's on-demand fallback).
pub async fn recover(
    client: &kube::Client,
    cfg: &JobConfig,
    attempt: &str,
    by: &str,
    pool: Option<&str>,
) -> Result<Launched, K8sError> {
    let jobs: Api<Job> = Api::namespaced(client.clone(), &cfg.namespace);
    let mut previous = managed(&jobs, cfg, attempt).await?;
    if let Some(pool) = pool {
        send_to_pool(&mut previous, pool);
    }
    mark_deleted_by(&jobs, attempt, by).await;
    match jobs.delete(attempt, &DeleteParams::background()).await {
        Ok(_) => {}
        Err(e) if status_code(&e) == Some(404) => {}
        Err(e) => return Err(K8sError::api(format!("deleting Job {attempt}"))(e)),
    }
    next_from(client, cfg, &previous, &Default::default(), Next::Recovery).await
}

/// Sends a Job's pods to `pool`: its node selector names the pool, and no longer asks for spot
/// nodes (an on-demand pool has none). Tolerations stay: a GPU pod still needs its own.
pub fn send_to_pool(job: &mut Job, pool: &str) {
    let Some(pod) = job.spec.as_mut().and_then(|s| s.template.spec.as_mut()) else {
        return;
    };
    let selector = pod.node_selector.get_or_insert_with(Default::default);
    selector.remove(SPOT_LABEL);
    selector.insert(POOL_LABEL.to_string(), pool.to_string());
}

/// Ends the run at `attempt`: says why on it and suspends it (the Job controller stops its pods;
/// the attempt and its logs stay to be read).
pub async fn end_run(
    client: &kube::Client,
    cfg: &JobConfig,
    attempt: &str,
    why: &str,
) -> Result<(), K8sError> {
    let jobs: Api<Job> = Api::namespaced(client.clone(), &cfg.namespace);
    managed(&jobs, cfg, attempt).await?;
    let patch = serde_json::json!({
        "metadata": {"annotations": {RUN_ENDED: why}},
        "spec": {"suspend": true},
    });
    jobs.patch(attempt, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(K8sError::api(format!("ending the run at Job {attempt}")))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn a_job_sent_to_the_fallback_selects_its_pool_drops_spot_and_keeps_its_toleration() {
        let mut job: Job = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "train-2"},
            "spec": {"template": {"spec": {
                "containers": [{"name": "trainer"}],
                "nodeSelector": {"cloud.google.com/gke-spot": "true", "team": "ml"},
                "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
            }}},
        }))
        .unwrap();
        send_to_pool(&mut job, "gpu-pool-on-demand");
        let pod = job.spec.unwrap().template.spec.unwrap();
        let selector = pod.node_selector.unwrap();
        assert_eq!(selector.get(POOL_LABEL).unwrap(), "gpu-pool-on-demand");
        assert!(!selector.contains_key(SPOT_LABEL));
        assert_eq!(selector.get("team").unwrap(), "ml");
        assert_eq!(
            pod.tolerations.unwrap()[0].key.as_deref(),
            Some("nvidia.com/gpu")
        );
    }
}

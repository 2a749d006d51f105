//! What the recoverer does to a run (the engine that holds the Lease, `k8s::lease`, decides
//! when): restart a gang whose rank was preempted — its attempt suspended (its pods stop; the
//! Job, its pods' ends and cost stay) and marked recovered (`gantry.dev/recovered`: why, by
//! whom, when, and what followed), the next one made with the same spec in the same run,
//! counted as a recovery — and end a run that ran out of recoveries or that a guard stopped,
//! said on its attempt (`gantry.dev/run-ended`) and suspended so its pods stop. Either way the
//! attempt is never deleted: only `d` and `gantry delete` remove an attempt. A recovery onto a
//! spot pool's on-demand fallback sends the next attempt's pods to that pool.

use k8s_openapi::api::batch::v1::Job;
use kube::api::{Api, Patch, PatchParams};

use super::attempts::managed;
use super::labels::{
    ENDED_BY, POOL_LABEL, RECOVERED, RUN_ENDED, SPOT_LABEL, attempt_name, attempt_of,
};
use super::launch::{Launched, next_from};
use super::run::Next;
use super::{K8sError, status_code};
use crate::config::JobConfig;
use crate::vocabulary::attempt::EndedBy;

/// How a recovery ends the attempt it replaces.
#[derive(Debug, Clone, PartialEq)]
pub struct Recovery<'a> {
    /// What happened, in words.
    pub why: &'a str,
    pub ended_by: EndedBy,
    /// Who recovers (a principal's name).
    pub by: &'a str,
    /// The node pool the next attempt's pods go to (a spot pool's on-demand fallback).
    pub pool: Option<&'a str>,
}

/// Ends `attempt` by suspending it (its pods stop; their logs are followed to their end), marks
/// it recovered into the next attempt, and makes that attempt of its run with the same spec, as
/// a recovery.
pub async fn recover(
    client: &kube::Client,
    cfg: &JobConfig,
    attempt: &str,
    recovery: Recovery<'_>,
) -> Result<Launched, K8sError> {
    let jobs: Api<Job> = Api::namespaced(client.clone(), &cfg.namespace);
    let mut previous = managed(&jobs, cfg, attempt).await?;
    if let Some(pool) = recovery.pool {
        send_to_pool(&mut previous, pool);
    }
    let next = attempt_name(&cfg.name, attempt_of(&previous.metadata).unwrap_or(1) + 1);
    let record = recovered_record(recovery.why, recovery.by, jiff::Timestamp::now(), &next);
    let patch = serde_json::json!({
        "metadata": {"annotations": {RECOVERED: record, ENDED_BY: recovery.ended_by.name()}},
        "spec": {"suspend": true},
    });
    match jobs
        .patch(attempt, &PatchParams::default(), &Patch::Merge(&patch))
        .await
    {
        Ok(_) => {}
        Err(e) if status_code(&e) == Some(404) => {}
        Err(e) => return Err(K8sError::api(format!("suspending Job {attempt}"))(e)),
    }
    next_from(client, cfg, &previous, &Default::default(), Next::Recovery).await
}

/// The text of `gantry.dev/recovered` (what `Recovered::parse` reads back).
fn recovered_record(why: &str, by: &str, at: jiff::Timestamp, into: &str) -> String {
    serde_json::json!({"why": why, "by": by, "at": at.to_string(), "into": into}).to_string()
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
    ended_by: EndedBy,
) -> Result<(), K8sError> {
    let jobs: Api<Job> = Api::namespaced(client.clone(), &cfg.namespace);
    managed(&jobs, cfg, attempt).await?;
    let patch = serde_json::json!({
        "metadata": {"annotations": {RUN_ENDED: why, ENDED_BY: ended_by.name()}},
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
    use crate::vocabulary::attempt::Recovered;

    #[test]
    fn the_recovered_record_is_read_back_as_it_was_written() {
        let at: jiff::Timestamp = "2026-12-05T10:00:00Z".parse().unwrap();
        let text = recovered_record(
            "rank 1 of train preempted",
            "gantry (recovery)",
            at,
            "train-2",
        );
        assert_eq!(
            Recovered::parse(&text),
            Some(Recovered {
                why: "rank 1 of train preempted".into(),
                by: "gantry (recovery)".into(),
                at,
                into: "train-2".into(),
            })
        );
    }

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

//! Both sides of a drill's comparison: what the simulator says through a plain client (the
//! attempts and pods a plain list returns, a pod's log a plain GET returns, retried through a
//! fault's aftermath) and what the model pictures (its attempts, pods, streams and lines).

use std::collections::BTreeMap;
use std::time::Duration;

use futures::AsyncReadExt;
use gantry::config::JobConfig;
use gantry::engine::World;
use gantry::engine::notice::Notice;
use gantry::k8s;
use gantry::k8s::status::{AttemptSummary, PodSummary};
use gantry::vocabulary::{Kind, Severity};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, LogParams};

/// Retries through a fault's aftermath (a restarting API server, a rotated token).
pub(super) async fn settle<T, E: std::fmt::Debug, F: std::future::Future<Output = Result<T, E>>>(
    mut f: impl FnMut() -> F,
) -> T {
    let mut tries = 0;
    loop {
        match f().await {
            Ok(t) => return t,
            Err(e) if tries < 100 => {
                tries += 1;
                tracing::debug!(?e, "retrying");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => panic!("{e:?}"),
        }
    }
}

/// A plain, non-follow GET of a pod's log.
pub(super) async fn plain_log(client: &kube::Client, pod: &str) -> Result<Vec<u8>, String> {
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let mut body = Vec::new();
    pods.log_stream(pod, &LogParams::default())
        .await
        .map_err(|e| e.to_string())?
        .read_to_end(&mut body)
        .await
        .map_err(|e| e.to_string())?;
    Ok(body)
}

pub(super) fn count_lines(b: &[u8]) -> usize {
    b.iter().filter(|c| **c == b'\n').count()
}

/// What the simulator says, through a plain list: the attempts and the training pods.
pub(super) async fn truth(
    client: &kube::Client,
    cfg: &JobConfig,
) -> Result<(Vec<AttemptSummary>, Vec<PodSummary>), kube::Error> {
    let jobs: Api<Job> = Api::default_namespaced(client.clone());
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let job_sel = ListParams::default().labels(&k8s::labels::managed_selector(&cfg.name));
    let mut pod_sel: Vec<String> = cfg.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
    pod_sel.push(k8s::labels::managed_selector(&cfg.name));
    let pod_sel = ListParams::default().labels(&pod_sel.join(","));
    let j = jobs.list(&job_sel).await?;
    let p = pods.list(&pod_sel).await?;
    let mut j: Vec<AttemptSummary> = j.items.iter().map(AttemptSummary::of).collect();
    let mut p: Vec<PodSummary> = p.items.iter().map(PodSummary::of).collect();
    j.sort_by(|a, b| a.name.cmp(&b.name));
    p.sort_by(|a, b| a.name.cmp(&b.name));
    Ok((j, p))
}

pub(super) fn model_picture(model: &World) -> (Vec<AttemptSummary>, Vec<PodSummary>) {
    (
        model.jobs.attempts.values().cloned().collect(),
        model.jobs.pods.values().cloned().collect(),
    )
}

/// The notices told since the last look, oldest first; how each pod's stream ended, as they say
/// it, noted in `ends` (pod → how).
pub(super) fn read_notices(
    notices: &mut tokio::sync::broadcast::Receiver<Notice>,
    ends: &mut BTreeMap<String, String>,
) -> Vec<Notice> {
    let mut told = Vec::new();
    while let Ok(n) = notices.try_recv() {
        if let Some(how) = stream_end(&n) {
            ends.insert(n.subject.clone(), how.to_string());
        }
        told.push(n);
    }
    told
}

/// How a pod's stream ended (`ended`, `pod deleted`…), when the notice is the engine's word on
/// it: "log of <pod> <how>".
fn stream_end(notice: &Notice) -> Option<&str> {
    if notice.kind != Kind::Log || notice.severity != Severity::Info {
        return None;
    }
    notice
        .text
        .strip_prefix("log of ")?
        .strip_prefix(notice.subject.as_str())?
        .strip_prefix(' ')
}

/// Lines the store received from each pod.
pub(super) fn lines_per_pod(model: &World) -> BTreeMap<String, u64> {
    model
        .logs
        .pods
        .iter()
        .cloned()
        .zip(model.logs.received_of.iter().copied())
        .collect()
}

//! The log tailer under faults: dropped watches, cut log streams, 410 Gone and API server
//! restarts during a follow; every line must be saved exactly once, byte for byte, and hostile
//! output must be stored as it is.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry_test_support as common;

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use futures::AsyncReadExt;
use gantry::config::JobConfig;
use gantry::k8s;
use gantry::k8s::logs::{LogTail, StreamEnd, TailEvent, TailOptions};
use gantry::sim::faults::Fault;
use gantry_test_support::await_condition;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, LogParams};
use kube::runtime::wait::conditions;

fn config(env: &[(&str, &str)], workers: Option<u32>) -> JobConfig {
    let mut cfg = JobConfig::default();
    for (k, v) in env {
        cfg.env.insert(k.to_string(), v.to_string());
    }
    if let Some(n) = workers {
        cfg.parallelism = Some(n);
        cfg.completions = Some(n);
        cfg.indexed = true;
    }
    cfg
}

/// What a follow saw.
struct Followed {
    pods: Vec<String>,
    /// How many times a stream had to resume.
    resumed: usize,
    /// Pods whose lines came before any pod's stream ended.
    heard_before_first_end: usize,
    /// How many times the fault took effect, as the simulator counted it.
    fired: u64,
}

/// Follows the attempt's pods until `expected` streams ended.
async fn follow(
    client: &kube::Client,
    job: &str,
    dir: &Path,
    expected: usize,
    options: TailOptions,
) -> Followed {
    let mut tail = LogTail::follow(
        client.clone(),
        common::training_job(job),
        TailOptions {
            save_dir: Some(dir.to_path_buf()),
            ..options
        },
    );
    let mut ended = BTreeSet::new();
    let mut heard = BTreeSet::new();
    let mut resumed = 0;
    while ended.len() < expected {
        match tail.next().await.unwrap() {
            TailEvent::Reconnecting { .. } => resumed += 1,
            TailEvent::Lines { pod, .. } if ended.is_empty() => {
                heard.insert(pod);
            }
            TailEvent::PodEnded { pod, why } => {
                assert_eq!(why, StreamEnd::Completed, "{pod}");
                ended.insert(pod);
            }
            TailEvent::SaveFailed { pod, error } => panic!("{pod}: {error}"),
            _ => {}
        }
    }
    tail.handle().cancel();
    Followed {
        pods: ended.into_iter().collect(),
        resumed,
        heard_before_first_end: heard.len(),
        fired: 0,
    }
}

/// A plain, non-follow GET of a pod's log: the container's bytes, as `kubectl logs` has them.
async fn plain_log(client: &kube::Client, pod: &str) -> Result<Vec<u8>, String> {
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

/// Retries a request through the downtime of a restarting API server.
async fn through_restarts<T, F: std::future::Future<Output = Result<T, E>>, E: std::fmt::Debug>(
    mut f: impl FnMut() -> F,
) -> T {
    let mut tries = 0;
    loop {
        match f().await {
            Ok(t) => return t,
            Err(e) if tries < 50 => {
                tries += 1;
                tracing::debug!(?e, "retrying through a restart");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => panic!("{e:?}"),
        }
    }
}

async fn run_with_fault(fault: Option<Fault>, env: &[(&str, &str)], workers: Option<u32>) -> usize {
    run_following(fault, env, workers, TailOptions::default())
        .await
        .resumed
}

async fn run_following(
    fault: Option<Fault>,
    env: &[(&str, &str)],
    workers: Option<u32>,
    options: TailOptions,
) -> Followed {
    // The restart fault is read when the API server (re)starts: it must be there from the start.
    let restart = matches!(fault, Some(Fault::Restart(_)));
    let fault_name = fault.as_ref().map(Fault::name);
    let cloud = common::cloud_with(gantry::sim::SimOptions {
        time_scale: 0.01,
        clusters: vec![common::CLUSTER.into()],
        faults: fault.clone().filter(|_| restart).into_iter().collect(),
        ..Default::default()
    })
    .await;
    let client = common::kube_client(&cloud);
    let cfg = config(env, workers);
    let dir = tempfile::tempdir().unwrap();
    let launched = through_restarts(|| k8s::launch(&client, &cfg, Some("demo-project"))).await;
    if let Some(f) = fault.filter(|_| !restart) {
        cloud.faults().set(f);
    }
    let followed = follow(
        &client,
        &launched.job,
        dir.path(),
        workers.unwrap_or(1) as usize,
        options,
    )
    .await;
    let pods = &followed.pods;
    let fired = fault_name.map_or(0, |name| cloud.faults().times_fired(name));
    cloud.faults().clear();
    let jobs = Api::default_namespaced(client.clone());
    through_restarts(|| {
        await_condition(jobs.clone(), &launched.job, conditions::is_job_completed())
    })
    .await;
    assert_saved_once(&client, &launched.job, dir.path(), pods).await;
    Followed { fired, ..followed }
}

/// `pods` are all the pods of `job`, and each one's file in `dir` holds its log exactly.
async fn assert_saved_once(client: &kube::Client, job: &str, dir: &Path, pods: &[String]) {
    let listed: Api<Pod> = Api::default_namespaced(client.clone());
    let selector = ListParams::default().labels(&format!("job-name={job}"));
    let all = through_restarts(|| listed.list(&selector)).await;
    assert_eq!(all.items.len(), pods.len());
    for pod in pods {
        let saved = std::fs::read(dir.join(format!("{pod}.log"))).unwrap();
        let served = through_restarts(|| plain_log(client, pod)).await;
        assert!(!served.is_empty());
        assert!(
            saved == served,
            "{pod}: saved {} bytes / {} lines, the server has {} bytes / {} lines",
            saved.len(),
            saved.iter().filter(|b| **b == b'\n').count(),
            served.len(),
            served.iter().filter(|b| **b == b'\n').count()
        );
    }
}

/// About three wall-clock seconds of logging at time scale 0.01, so faults strike mid-stream.
const STEADY: &[(&str, &str)] = &[("SIM_LOG_LINES", "1500"), ("SIM_LINES_PER_SECOND", "5")];

#[tokio::test]
async fn watch_drop_during_a_follow_saves_every_line_once() {
    let followed = run_following(
        Some(Fault::WatchDrop(Duration::from_millis(200))),
        STEADY,
        Some(2),
        TailOptions::default(),
    )
    .await;
    assert!(followed.fired > 0, "the fault never dropped a watch");
}

#[tokio::test]
async fn log_cut_during_a_follow_saves_every_line_once() {
    let resumed = run_with_fault(
        Some(Fault::LogCut(Duration::from_millis(150))),
        STEADY,
        Some(2),
    )
    .await;
    assert!(resumed > 0, "the fault never cut a stream");
}

#[tokio::test]
async fn watch_gone_during_a_follow_saves_every_line_once() {
    let followed = run_following(
        Some(Fault::WatchGone),
        STEADY,
        Some(2),
        TailOptions::default(),
    )
    .await;
    assert!(
        followed.fired > 0,
        "the fault never answered a watch 410 Gone"
    );
}

#[tokio::test]
async fn api_server_restarts_during_a_follow_save_every_line_once() {
    let resumed = run_with_fault(
        Some(Fault::Restart(Duration::from_millis(700))),
        STEADY,
        Some(2),
    )
    .await;
    assert!(resumed > 0, "the restarts never dropped a stream");
}

#[tokio::test]
async fn more_pods_than_streams_take_turns_and_save_every_line_once() {
    let followed = run_following(
        Some(Fault::LogCut(Duration::from_millis(400))),
        STEADY,
        Some(6),
        TailOptions {
            max_streams: 2,
            lease: Duration::from_millis(200),
            ..TailOptions::default()
        },
    )
    .await;
    assert!(
        followed.heard_before_first_end > 2,
        "only {} pods were heard while all six ran: the two streams never gave their places up",
        followed.heard_before_first_end
    );
}

#[tokio::test]
async fn hostile_output_is_stored_byte_for_byte() {
    // 1010 lines include the 1 MiB line (line 1008) and every escape-sequence kind.
    run_with_fault(
        Some(Fault::LogCut(Duration::from_millis(300))),
        &[
            ("SIM_HOSTILE_OUTPUT", "1"),
            ("SIM_LOG_LINES", "1010"),
            ("SIM_LINES_PER_SECOND", "0"),
        ],
        None,
    )
    .await;
}

#[tokio::test]
async fn stopping_a_pod_ends_its_stream() {
    let cloud = common::cloud_with_cluster().await;
    let client = common::kube_client(&cloud);
    let cfg = long_running();
    let (mut tail, pod) = follow_a_long_running_pod(&client, &cfg, TailOptions::default()).await;
    tail.handle().stop_pod(&pod);
    assert_eq!(end_of(&mut tail, &pod).await, StreamEnd::Stopped);
    tail.handle().cancel();
    while tail.next().await.is_some() {}
    k8s::delete(&client, &cfg, None, "test").await.unwrap();
}

/// A Job of one pod that logs for hours (of simulated time), followed by a fresh tail; returns
/// the tail once the pod's first lines arrived, and the pod's name.
async fn follow_a_long_running_pod(
    client: &kube::Client,
    cfg: &JobConfig,
    options: TailOptions,
) -> (LogTail, String) {
    let launched = k8s::launch(client, cfg, Some("demo-project"))
        .await
        .unwrap();
    let mut tail = LogTail::follow(client.clone(), common::training_job(&launched.job), options);
    let pod = loop {
        if let Some(TailEvent::Lines { pod, .. }) = tail.next().await {
            break pod;
        }
    };
    (tail, pod)
}

fn long_running() -> JobConfig {
    config(
        &[("SIM_LOG_LINES", "100000"), ("SIM_LINES_PER_SECOND", "5")],
        None,
    )
}

/// The way `pod`'s stream ended; panics on a save failure.
async fn end_of(tail: &mut LogTail, pod: &str) -> StreamEnd {
    loop {
        match tail.next().await {
            Some(TailEvent::PodEnded { pod: p, why }) if p == pod => return why,
            Some(TailEvent::SaveFailed { pod, error }) => panic!("{pod}: {error}"),
            Some(_) => {}
            None => panic!("the tail ended before {pod}'s stream did"),
        }
    }
}

#[tokio::test]
async fn a_pod_deleted_while_followed_ends_as_deleted() {
    let cloud = common::cloud_with_cluster().await;
    let client = common::kube_client(&cloud);
    let cfg = long_running();
    let dir = tempfile::tempdir().unwrap();
    let (mut tail, pod) = follow_a_long_running_pod(
        &client,
        &cfg,
        TailOptions {
            save_dir: Some(dir.path().to_path_buf()),
            ..TailOptions::default()
        },
    )
    .await;
    // A graceful delete: the container is stopped, its stream read to the end, then the pod goes.
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    pods.delete(&pod, &kube::api::DeleteParams::default())
        .await
        .unwrap();
    assert_eq!(end_of(&mut tail, &pod).await, StreamEnd::PodDeleted);
    tail.handle().cancel();
    k8s::delete(&client, &cfg, None, "test").await.unwrap();
}

#[tokio::test]
async fn the_pods_of_a_deleted_job_end_as_deleted() {
    let cloud = common::cloud_with_cluster().await;
    let client = common::kube_client(&cloud);
    let cfg = long_running();
    let (mut tail, pod) = follow_a_long_running_pod(&client, &cfg, TailOptions::default()).await;
    // Background propagation: the garbage collector deletes the pod.
    k8s::delete(&client, &cfg, None, "test").await.unwrap();
    assert_eq!(end_of(&mut tail, &pod).await, StreamEnd::PodDeleted);
    tail.handle().cancel();
}

/// What one tail of a single pod saw, to the end of its stream.
struct Drained {
    /// Complete lines shown.
    lines: usize,
    saved_by_another: bool,
    end: StreamEnd,
}

async fn drain(mut tail: LogTail) -> Drained {
    let mut drained = Drained {
        lines: 0,
        saved_by_another: false,
        end: StreamEnd::Stopped,
    };
    loop {
        match tail.next().await.unwrap() {
            TailEvent::Lines { lines, .. } => {
                drained.lines += lines.iter().filter(|l| !l.continues).count();
            }
            TailEvent::SavedByAnother { .. } => drained.saved_by_another = true,
            TailEvent::SaveFailed { pod, error } => panic!("{pod}: {error}"),
            TailEvent::PodEnded { why, .. } => {
                drained.end = why;
                break;
            }
            _ => {}
        }
    }
    tail.handle().cancel();
    drained
}

#[tokio::test]
async fn two_tails_of_one_pod_save_its_log_once() {
    let cloud = common::cloud_with_cluster().await;
    let client = common::kube_client(&cloud);
    let cfg = config(STEADY, None);
    let dir = tempfile::tempdir().unwrap();
    let launched = k8s::launch(&client, &cfg, Some("demo-project"))
        .await
        .unwrap();
    // Both before the container starts, so both reach for the file as its first lines come.
    let tail = || {
        LogTail::follow(
            client.clone(),
            common::training_job(&launched.job),
            TailOptions {
                save_dir: Some(dir.path().to_path_buf()),
                ..TailOptions::default()
            },
        )
    };
    let (a, b) = tokio::join!(drain(tail()), drain(tail()));
    assert_eq!(
        (&a.end, &b.end),
        (&StreamEnd::Completed, &StreamEnd::Completed)
    );
    assert!(
        a.saved_by_another != b.saved_by_another,
        "exactly one tail must save: a says saved by another {}, b {}",
        a.saved_by_another,
        b.saved_by_another
    );
    let listed: Api<Pod> = Api::default_namespaced(client.clone());
    let pods = listed
        .list(&ListParams::default().labels(&format!("job-name={}", launched.job)))
        .await
        .unwrap();
    let [pod] = &pods.items[..] else {
        panic!("one pod expected, found {}", pods.items.len())
    };
    let pod = pod.metadata.name.clone().unwrap();
    // Both showed every line; the file holds each once.
    let served = plain_log(&client, &pod).await.unwrap();
    let served_lines = served.iter().filter(|b| **b == b'\n').count();
    assert_eq!((a.lines, b.lines), (served_lines, served_lines));
    assert_saved_once(&client, &launched.job, dir.path(), &[pod]).await;
}

#[tokio::test]
async fn two_tails_taking_turns_save_every_line_once() {
    // Six pods, two places in each tail: streams give their places up, and their files' locks
    // with them, so a tail may find a file locked, or moved on, when it comes back to a pod.
    // Whichever tail saves a pod's lines, none is saved twice and none is left out.
    let cloud = common::cloud_with_cluster().await;
    let client = common::kube_client(&cloud);
    let cfg = config(STEADY, Some(6));
    let dir = tempfile::tempdir().unwrap();
    let launched = k8s::launch(&client, &cfg, Some("demo-project"))
        .await
        .unwrap();
    let options = TailOptions {
        max_streams: 2,
        lease: Duration::from_millis(200),
        ..TailOptions::default()
    };
    let (a, b) = tokio::join!(
        follow(&client, &launched.job, dir.path(), 6, options.clone()),
        follow(&client, &launched.job, dir.path(), 6, options),
    );
    assert_eq!(a.pods, b.pods);
    assert_saved_once(&client, &launched.job, dir.path(), &a.pods).await;
}

/// Follows a pod that runs on, unchanged, while `fault` breaks the pod watch: the tail says the
/// pod list is stale, and once the faults are gone says it is whole again. Nothing about the pods
/// changes meanwhile, so no change from the watch could have cleared the notice. `from_start`
/// are on from the start.
async fn pod_watch_trouble_and_recovery_are_told(from_start: Vec<Fault>, fault: Fault) {
    let cloud = common::cloud_with(gantry::sim::SimOptions {
        time_scale: 0.01,
        clusters: vec![common::CLUSTER.into()],
        faults: from_start,
        ..Default::default()
    })
    .await;
    let client = common::kube_client(&cloud);
    let (mut tail, pod) =
        follow_a_long_running_pod(&client, &long_running(), TailOptions::default()).await;
    cloud.faults().set(fault.clone());
    let error = loop {
        match tail.next().await.unwrap() {
            TailEvent::WatchTrouble { error } => break error,
            TailEvent::PodEnded { pod, why } => panic!("{fault:?}: {pod} ended: {why:?}"),
            _ => {}
        }
    };
    assert!(!error.is_empty());
    cloud.faults().clear();
    loop {
        match tail.next().await.unwrap() {
            TailEvent::WatchRecovered => break,
            TailEvent::PodEnded { pod, why } => panic!("{fault:?}: {pod} ended: {why:?}"),
            _ => {}
        }
    }
    // The pod's stream went on through it all.
    loop {
        if let TailEvent::Lines { pod: p, .. } = tail.next().await.unwrap() {
            assert_eq!(p, pod);
            break;
        }
    }
    tail.handle().cancel();
}

#[tokio::test]
async fn a_gone_pod_watch_is_told_and_so_is_its_recovery() {
    // The fault strikes a watch as it opens: cut every watch (which kube's watcher resumes
    // quietly) so the pod watch opens again while it is on.
    pod_watch_trouble_and_recovery_are_told(
        vec![Fault::WatchDrop(Duration::from_millis(200))],
        Fault::WatchGone,
    )
    .await;
}

#[tokio::test]
async fn a_pod_watch_cut_by_a_restart_is_told_and_so_is_its_recovery() {
    // kube's watcher would resume this watch without a word: the recovery must still be told.
    pod_watch_trouble_and_recovery_are_told(Vec::new(), Fault::Restart(Duration::from_millis(300)))
        .await;
}

//! The engine without a terminal, from cluster creation to a retried attempt, driven by one
//! viewer's keys on the simulated cloud: the model's picture of the Job and its pods ends as the
//! API's, and every saved file is the pod's log, byte for byte.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry_test_support as common;

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use futures::AsyncReadExt;
use gantry::app::App;
use gantry::config::{Config, JobConfig};
use gantry::engine::told::Telling;
use gantry::engine::{Command, Engine, EngineHandle, World, open_session};
use gantry::k8s::status::{AttemptPhase, AttemptSummary, PodSummary};
use gantry::keys::Keymap;
use gantry::sim::SimOptions;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, LogParams};

/// Only against a hang: nothing is asserted about time.
const HANG_GUARD: Duration = gantry_test_support::WAIT_BOUND;

fn key(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
}

/// Presses a key; what the viewer asks goes to the engine, through the viewer's gate.
pub(crate) fn press(app: &mut App, engine: &EngineHandle, k: KeyEvent) -> Vec<Command> {
    let asked = app.on_key(k, &engine.model());
    for c in &asked {
        if let Some(approved) = app.pass(c.clone()) {
            engine.run(approved);
        }
    }
    asked
}

/// Waits for the world and what the engine told to satisfy `done`, taking every change into
/// the viewer.
pub(crate) async fn until_told(
    app: &mut App,
    engine: &EngineHandle,
    done: impl Fn(&World, &Telling) -> bool,
) {
    let mut changed = engine.changed();
    loop {
        {
            let model = engine.model();
            let told = engine.told();
            app.on_model(&model, &told);
            if done(&model, &told) {
                return;
            }
        }
        changed.changed().await.unwrap();
    }
}

/// Waits for the world to satisfy `done`, taking every change into the viewer.
pub(crate) async fn until(app: &mut App, engine: &EngineHandle, done: impl Fn(&World) -> bool) {
    until_told(app, engine, |world, _| done(world)).await
}

fn picture(model: &World) -> (Vec<AttemptSummary>, Vec<PodSummary>) {
    let mut attempts: Vec<AttemptSummary> = model.jobs.attempts.values().cloned().collect();
    let mut pods: Vec<PodSummary> = model.jobs.pods.values().cloned().collect();
    attempts.sort_by(|a, b| a.name.cmp(&b.name));
    pods.sort_by(|a, b| a.name.cmp(&b.name));
    (attempts, pods)
}

async fn truth(client: &kube::Client) -> (Vec<AttemptSummary>, Vec<PodSummary>) {
    let jobs: Api<Job> = Api::default_namespaced(client.clone());
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let mut attempts: Vec<AttemptSummary> = jobs
        .list(&ListParams::default().labels("app.kubernetes.io/managed-by=gantry"))
        .await
        .unwrap()
        .items
        .iter()
        .map(AttemptSummary::of)
        .collect();
    let mut pods: Vec<PodSummary> = pods
        .list(&ListParams::default().labels("job=ml-training"))
        .await
        .unwrap()
        .items
        .iter()
        .map(PodSummary::of)
        .collect();
    attempts.sort_by(|a, b| a.name.cmp(&b.name));
    pods.sort_by(|a, b| a.name.cmp(&b.name));
    (attempts, pods)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn from_cluster_creation_to_a_retried_attempt_without_a_terminal() {
    let sim_dir = tempfile::tempdir().unwrap();
    let cloud = common::cloud_with(SimOptions {
        time_scale: 0.01,
        state_dir: Some(sim_dir.path().to_path_buf()),
        ..Default::default()
    })
    .await;
    let mut job = JobConfig::default();
    job.env.insert("SIM_LOG_LINES".into(), "30".into());
    job.env.insert("SIM_FAIL_ATTEMPTS".into(), "1".into());
    job.backoff_limit = 0;
    let config = Config {
        job,
        ..Default::default()
    };
    let logs = tempfile::tempdir().unwrap();
    let options = common::engine_options(&cloud, sim_dir.path(), logs.path());
    let engine = Engine::start(open_session(&options, config.clone()).await.unwrap());
    let handle = engine.handle();
    let mut app = App::new(config, Keymap::default(), false);

    tokio::time::timeout(HANG_GUARD, async {
        until(&mut app, &handle, |m| m.cluster.summary.is_some()).await;
        assert!(press(&mut app, &handle, key('c')).is_empty(), "asks first");
        assert_eq!(press(&mut app, &handle, key('y')), [Command::CreateCluster]);
        until(&mut app, &handle, |m| m.connected).await;

        assert_eq!(press(&mut app, &handle, key('l')), [Command::LaunchJob]);
        // Failed, and its pod's log followed to its end (saved whole) before the retry moves
        // the store on.
        until(&mut app, &handle, |m| {
            m.jobs.newest().is_some_and(|a| {
                a.status == AttemptPhase::Failed
                    && !m.jobs.pods_of(&a.name).is_empty()
                    && m.logs.ended == m.jobs.pods_of(&a.name).len()
            })
        })
        .await;
        assert_eq!(press(&mut app, &handle, key('r')), [Command::RetryJob]);
        until(&mut app, &handle, |m| {
            m.jobs.attempts().len() == 2
                && m.jobs.newest().is_some_and(|a| a.status.is_finished())
                && m.logs.ended == m.jobs.pods_of(&m.jobs.newest().unwrap().name).len()
        })
        .await;
    })
    .await
    .expect("the run reached its retried attempt");

    // The model's picture converges to the API's.
    let client = common::kube_client(&cloud);
    let mut changed = handle.changed();
    loop {
        let truth = truth(&client).await;
        if picture(&handle.model()) == truth {
            break;
        }
        tokio::time::timeout(HANG_GUARD, changed.changed())
            .await
            .expect("the model converges")
            .unwrap();
    }

    // Every pod of both attempts: its saved file is its log, byte for byte.
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let (attempts, all_pods) = truth(&client).await;
    assert_eq!(attempts.len(), 2);
    for pod in &all_pods {
        let mut served = Vec::new();
        pods.log_stream(&pod.name, &LogParams::default())
            .await
            .unwrap()
            .read_to_end(&mut served)
            .await
            .unwrap();
        let saved = std::fs::read(
            logs.path()
                .join(common::CLUSTER)
                .join(&pod.job)
                .join(format!("{}.log", pod.name)),
        )
        .unwrap();
        assert!(!served.is_empty());
        assert_eq!(saved, served, "{}", pod.name);
    }
    engine.stop().await;
}

/// An engine on `cloud`'s seed cluster (RUNNING from the start), with one viewer.
async fn engine_on(cloud: &gantry::sim::SimCloud, dirs: &tempfile::TempDir) -> Engine {
    let options = common::engine_options(cloud, &dirs.path().join("sim"), dirs.path());
    let config = Config::default();
    Engine::start(open_session(&options, config).await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_each_pod_uses_comes_from_metrics_k8s_io_or_is_not_available() {
    let dirs = tempfile::tempdir().unwrap();
    let cloud = common::cloud_with(SimOptions {
        time_scale: 0.01,
        clusters: vec![common::CLUSTER.into()],
        state_dir: Some(dirs.path().join("sim")),
        ..Default::default()
    })
    .await;
    // A training pod running before the engine looks.
    let client = common::kube_client(&cloud);
    let mut job = JobConfig::default();
    job.env.insert("SIM_LOG_LINES".into(), "100000".into());
    job.resources.cpu = Some("500m".into());
    gantry::k8s::launch(&client, &job, Some("demo-project"))
        .await
        .unwrap();
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let running = tokio::time::timeout(HANG_GUARD, async {
        use futures::TryStreamExt;
        use kube::runtime::WatchStreamExt;
        let mut pods = Box::pin(
            kube::runtime::watcher(pods, kube::runtime::watcher::Config::default())
                .applied_objects(),
        );
        while let Some(p) = pods.try_next().await.unwrap() {
            if p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running") {
                return p.metadata.name.unwrap();
            }
        }
        panic!("the pod watch ended");
    })
    .await
    .expect("the pod runs");

    let engine = engine_on(&cloud, &dirs).await;
    let handle = engine.handle();
    let shown = handle.show_usage();
    let mut app = App::new(Config::default(), Keymap::default(), false);
    tokio::time::timeout(
        HANG_GUARD,
        until(&mut app, &handle, |m| m.usage.of(&running).is_ok()),
    )
    .await
    .expect("usage read");
    let used = handle.model().usage.of(&running).unwrap();
    assert!((400..=500).contains(&used.cpu_millis), "{used:?}");
    assert!(used.memory_bytes > 0);
    let nodes = match &handle.model().usage {
        gantry::engine::world::Usage::Known(reading) => reading.nodes.clone(),
        other => panic!("usage {other:?}"),
    };
    assert!(!nodes.is_empty());
    assert!(
        nodes.iter().all(|n| n.cpu_allocatable_millis > 0
            && n.memory_allocatable_bytes > 0
            && n.memory_bytes > 0),
        "{nodes:?}"
    );
    drop(shown);
    engine.stop().await;

    // Without metrics-server: n/a, and no trouble on the status line.
    cloud.faults().set(gantry::sim::faults::Fault::NoMetricsApi);
    let engine = engine_on(&cloud, &dirs).await;
    let handle = engine.handle();
    let _shown = handle.show_usage();
    tokio::time::timeout(
        HANG_GUARD,
        until(&mut app, &handle, |m| {
            m.usage == gantry::engine::world::Usage::Unavailable
        }),
    )
    .await
    .expect("usage unavailable");
    assert_eq!(handle.model().usage.of(&running), Err("n/a"));
    assert_eq!(handle.model().trouble(), None);
    engine.stop().await;
}

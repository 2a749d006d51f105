//! Applying the plan through the engine, on the simulated cloud: a viewer's `P` and `y` resize
//! the seed cluster's pool to what the config says, the pane's drift goes, and the Kubernetes
//! API has the nodes; a plan the cluster has moved on from is refused by the engine too. With
//! `[watcher] in-cluster = true` and nothing else to change, `y` makes the watcher.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry_test_support as common;

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use gantry::app::App;
use gantry::config::Config;
use gantry::engine::{Command, Engine, open_session};
use gantry::keys::Keymap;
use gantry::vocabulary::Severity;
use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, ListParams};

/// Only against a hang: nothing is asserted about time.
const HANG_GUARD: Duration = gantry_test_support::WAIT_BOUND;

fn key(c: char) -> KeyEvent {
    let modifiers = if c.is_ascii_uppercase() {
        KeyModifiers::SHIFT
    } else {
        KeyModifiers::NONE
    };
    KeyEvent::new(KeyCode::Char(c), modifiers)
}

use crate::engine::{press, until, until_told};

/// The seed cluster (3 × n1-standard-1) against a config that wants two nodes: drift that
/// `SetNodePoolSize` makes good in place.
async fn two_nodes_wanted(dirs: &tempfile::TempDir) -> (gantry::sim::SimCloud, Engine, Config) {
    let cloud = common::cloud_with(gantry::sim::SimOptions {
        time_scale: 0.01,
        clusters: vec![common::CLUSTER.into()],
        state_dir: Some(dirs.path().join("sim")),
        ..Default::default()
    })
    .await;
    let mut config = Config::default();
    config.cluster.node_count = 2;
    let options = common::engine_options(&cloud, &dirs.path().join("sim"), dirs.path());
    let engine = Engine::start(open_session(&options, config.clone()).await.unwrap());
    (cloud, engine, config)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn p_then_y_resizes_the_pool_to_the_config_and_the_drift_goes() {
    let dirs = tempfile::tempdir().unwrap();
    let (cloud, engine, config) = two_nodes_wanted(&dirs).await;
    let handle = engine.handle();
    let mut app = App::new(config, Keymap::default(), false);
    tokio::time::timeout(HANG_GUARD, async {
        until(&mut app, &handle, |m| m.cluster.drifted().is_some()).await;
        assert!(press(&mut app, &handle, key('P')).is_empty());
        let asked = press(&mut app, &handle, key('y'));
        assert!(
            matches!(asked.as_slice(), [Command::ApplyPlan { .. }]),
            "{asked:?}"
        );
        until_told(&mut app, &handle, |m, told| {
            m.cluster.busy.is_none()
                && m.cluster.drifted().is_none()
                && m.cluster
                    .summary
                    .as_ref()
                    .is_some_and(|s| s.node_count == 2)
                && told
                    .after(0)
                    .any(|t| t.notice.text.starts_with("plan applied"))
        })
        .await;
    })
    .await
    .expect("the plan was applied");
    let told = handle
        .told()
        .after(0)
        .find(|t| t.notice.text.starts_with("plan applied"))
        .map(|t| t.notice.clone())
        .unwrap();
    assert_eq!(told.severity, Severity::Info, "{told:?}");
    assert_eq!(told.text, "plan applied: 1 change made");

    let nodes: Api<Node> = Api::all(common::kube_client(&cloud));
    let listed = nodes.list(&ListParams::default()).await.unwrap();
    assert_eq!(listed.items.len(), 2);
    engine.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_engine_refuses_a_plan_of_another_generation() {
    let dirs = tempfile::tempdir().unwrap();
    let (cloud, engine, config) = two_nodes_wanted(&dirs).await;
    let handle = engine.handle();
    let mut app = App::new(config, Keymap::default(), false);
    tokio::time::timeout(HANG_GUARD, async {
        until(&mut app, &handle, |m| m.cluster.drifted().is_some()).await;
        let stale = handle.model().cluster.drift.generation() + 1;
        handle.run(gantry_test_support::approved(Command::ApplyPlan {
            generation: stale,
        }));
        until_told(&mut app, &handle, |_, told| {
            told.after(0)
                .any(|t| t.notice.text.contains("changed since the plan was shown"))
        })
        .await;
    })
    .await
    .expect("the engine refused");
    // Nothing was changed: the pool keeps its three nodes.
    let nodes: Api<Node> = Api::all(common::kube_client(&cloud));
    assert_eq!(
        nodes
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .len(),
        3
    );
    assert!(handle.model().cluster.drifted().is_some());
    engine.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_an_in_cluster_watcher_y_makes_it_and_the_plan_then_says_it_is_current() {
    use gantry::watcher::planned::State;
    use k8s_openapi::api::apps::v1::Deployment;
    let dirs = tempfile::tempdir().unwrap();
    let cloud = common::cloud_with(gantry::sim::SimOptions {
        time_scale: 0.01,
        clusters: vec![common::CLUSTER.into()],
        state_dir: Some(dirs.path().join("sim")),
        ..Default::default()
    })
    .await;
    // The seed cluster as the config has it: only the watcher is to make.
    let mut config = Config::default();
    config.watcher.in_cluster = true;
    config.watcher.image = Some("example.com/team/gantry:test".into());
    config.watcher.authorized_keys = Some("/dev/null".into());
    config.watcher.operators = Some("/dev/null".into());
    let options = common::engine_options(&cloud, &dirs.path().join("sim"), dirs.path());
    let engine = Engine::start(open_session(&options, config.clone()).await.unwrap());
    let handle = engine.handle();
    let mut app = App::new(config, Keymap::default(), false);
    let state = |m: &gantry::engine::World| m.cluster.watcher.as_ref().map(|w| w.state.clone());
    tokio::time::timeout(HANG_GUARD, async {
        until(&mut app, &handle, |m| {
            m.connected && m.cluster.drift.plan().is_some() && state(m) == Some(State::New)
        })
        .await;
        assert!(press(&mut app, &handle, key('P')).is_empty());
        let asked = press(&mut app, &handle, key('y'));
        assert!(
            matches!(asked.as_slice(), [Command::ApplyPlan { .. }]),
            "{asked:?}"
        );
        until_told(&mut app, &handle, |m, told| {
            state(m) == Some(State::Current)
                && told.after(0).any(|t| {
                    t.notice.text
                        == "watcher gantry-watcher-ml-training-job installed in namespace default"
                })
        })
        .await;
    })
    .await
    .expect("y made the watcher");
    let deployments: Api<Deployment> = Api::namespaced(common::kube_client(&cloud), "default");
    let made = deployments
        .get("gantry-watcher-ml-training-job")
        .await
        .unwrap();
    assert!(
        made.metadata
            .annotations
            .unwrap()
            .contains_key(gantry::watcher::DESIRED_ANNOTATION)
    );
    engine.stop().await;
}

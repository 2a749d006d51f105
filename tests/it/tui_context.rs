//! The TUI on a cluster that is not Gantry's, through a kubeconfig context, with no Google Cloud
//! set up at all: it takes launch's Job flags at the top level (`--image`, `--env`) and launches
//! with them; the cluster keys say why they do nothing there. Without metrics-server, usage says
//! n/a on screen and one line in gantry.log.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry_test_support::CliEnv;
use gantry_test_support::tmux::Tmux;

/// The TUI's arguments and environment for the fixture's context, with an image of its own.
fn tui_on_context(e: &CliEnv) -> (String, String) {
    let kubeconfig = e.home.path().join("sim/kubeconfig");
    let args = format!(
        "--context {} --image registry.example/trainer:v1 --env SIM_LOG_LINES=500",
        e.context
    );
    (args, format!("KUBECONFIG={}", kubeconfig.display()))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_tui_launches_on_a_context_with_the_image_it_was_given() {
    let e = CliEnv::start().await;
    let (args, env) = tui_on_context(&e);
    let tui = tokio::task::spawn_blocking(move || {
        let Some(t) = Tmux::start_with("context", &args, "", &env) else {
            return;
        };
        t.wait_for(&["No attempt yet"]);
        t.keys(&["c"]);
        t.wait_for(&["not Gantry's cluster"]);
        t.keys(&["l"]);
        t.wait_for(&["ml-training-job", "epoch"]);
        t.keys(&["q"]);
        t.wait_for(&["GANTRY-EXIT=0"]);
    });
    tui.await.unwrap();
    // The attempt runs the image given at the top level.
    let jobs = kube::Api::<k8s_openapi::api::batch::v1::Job>::default_namespaced(
        gantry_test_support::kube_client(&e.cloud),
    )
    .list(&Default::default())
    .await
    .unwrap();
    if let Some(job) = jobs.items.first() {
        let image = job
            .spec
            .as_ref()
            .unwrap()
            .template
            .spec
            .as_ref()
            .unwrap()
            .containers[0]
            .image
            .clone();
        assert_eq!(image.as_deref(), Some("registry.example/trainer:v1"));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn without_metrics_server_usage_says_n_a_and_gantry_log_says_why_once() {
    let e = CliEnv::start().await;
    e.cloud
        .faults()
        .set(gantry::sim::faults::Fault::NoMetricsApi);
    let (args, env) = tui_on_context(&e);
    let log = tokio::task::spawn_blocking(move || {
        let t = Tmux::start_with("no-metrics", &args, "", &env)?;
        t.wait_for(&["usage n/a"]);
        t.keys(&["l"]);
        let screen = t.wait_for(&["Running"]);
        assert!(
            !screen.contains("metrics.k8s.io"),
            "no status-line error:\n{screen}"
        );
        t.keys(&["q"]);
        t.wait_for(&["GANTRY-EXIT=0"]);
        Some(std::fs::read_to_string(t.state_dir().join("gantry.log")).unwrap())
    })
    .await
    .unwrap();
    let Some(log) = log else { return };
    let said: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("no metrics.k8s.io"))
        .collect();
    assert_eq!(said.len(), 1, "gantry.log:\n{log}");
}

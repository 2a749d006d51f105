//! `kubectl top` against the simulated cluster: metrics.k8s.io as metrics-server serves it, with
//! usage that follows the workload (CPU near the request, memory rising under the limit).
//! Skipped (saying so) where kubectl is absent, unless GANTRY_REQUIRE_KUBECTL=1.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry::sim::faults::Fault;
use gantry_test_support::{CliEnv, kubectl_available, text};

async fn kubectl(e: &CliEnv, args: &[&str]) -> std::process::Output {
    tokio::process::Command::new("kubectl")
        .env("KUBECONFIG", e.home.path().join("sim/kubeconfig"))
        .args(["--context", &e.context, "--cache-dir"])
        .arg(e.home.path().join("kube-cache"))
        .args(args)
        .output()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn kubectl_top_shows_pods_and_nodes_and_says_so_without_metrics_server() {
    if !kubectl_available() {
        return;
    }
    let e = CliEnv::start().await;
    let launched = e
        .gantry(&[
            "launch",
            "--env",
            "SIM_LOG_LINES=100000",
            "--cpu",
            "500m",
            "--memory",
            "2Gi",
        ])
        .await;
    assert_eq!(
        launched.status.code(),
        Some(0),
        "{}",
        text(&launched.stderr)
    );
    let ready = kubectl(
        &e,
        &[
            "wait",
            "--for=condition=Ready",
            "pod",
            "-l",
            "job=ml-training",
            "--timeout=120s",
        ],
    )
    .await;
    assert!(ready.status.success(), "{}", text(&ready.stderr));

    let pods = kubectl(&e, &["top", "pods", "--containers"]).await;
    assert!(pods.status.success(), "{}", text(&pods.stderr));
    let out = text(&pods.stdout);
    let row = out
        .lines()
        .find(|l| l.contains("ml-training-container"))
        .unwrap_or_else(|| panic!("{out}"));
    // CPU near the 500m request.
    let cpu: u64 = row
        .split_whitespace()
        .find_map(|c| c.strip_suffix('m').and_then(|n| n.parse().ok()))
        .unwrap_or_else(|| panic!("{row}"));
    assert!((400..=500).contains(&cpu), "{row}");
    assert!(row.contains("Mi"), "{row}");

    let nodes = kubectl(&e, &["top", "nodes"]).await;
    assert!(nodes.status.success(), "{}", text(&nodes.stderr));
    let out = text(&nodes.stdout);
    assert_eq!(
        out.lines().filter(|l| l.starts_with("gke-")).count(),
        3,
        "{out}"
    );
    assert!(out.contains("CPU(%)"), "{out}");

    // Without metrics-server, kubectl says the API is not there.
    e.cloud.faults().set(Fault::NoMetricsApi);
    let none = kubectl(&e, &["top", "pods"]).await;
    assert!(!none.status.success());
    assert!(
        text(&none.stderr).contains("Metrics API not available"),
        "{}",
        text(&none.stderr)
    );
}

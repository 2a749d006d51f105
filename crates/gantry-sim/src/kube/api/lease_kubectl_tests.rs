//! Leases as kubectl finds and prints them from a running simulated cluster: discovery, and
//! `kubectl apply` and `kubectl get lease` themselves (skipped, saying so, where kubectl is
//! absent, unless GANTRY_REQUIRE_KUBECTL=1).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use super::lease_tests::{create, lease, sim};
use crate::test_http::kubectl_available;
use crate::test_support;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_lists_leases_in_coordination_v1_with_every_verb_and_no_short_name() {
    let sim = sim().await;
    let (_, groups) = sim.api.request("GET", "/apis", None).await;
    let coordination = groups["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == "coordination.k8s.io")
        .expect("coordination.k8s.io among the groups");
    assert_eq!(
        coordination["preferredVersion"]["groupVersion"],
        "coordination.k8s.io/v1"
    );
    let (status, list) = sim
        .api
        .request("GET", "/apis/coordination.k8s.io/v1", None)
        .await;
    assert_eq!(status, 200);
    let leases = &list["resources"][0];
    assert_eq!(leases["name"], "leases");
    assert_eq!(leases["kind"], "Lease");
    assert_eq!(leases["namespaced"], true);
    assert_eq!(
        leases["verbs"],
        json!([
            "create",
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "update",
            "watch"
        ])
    );
    assert!(leases.get("shortNames").is_none());
    assert_eq!(list["resources"].as_array().unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_applies_a_lease_and_get_lease_names_each_holder() {
    if !kubectl_available() {
        return;
    }
    let sim = sim().await;
    create(&sim, "gantry-leader", "engine-a").await;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = sim.api.kubeconfig(dir.path());
    let applied = dir.path().join("standby.json");
    std::fs::write(&applied, lease("standby", "engine-b").to_string()).unwrap();
    let file = applied.to_str().unwrap();
    assert!(
        kubectl(&kubeconfig, &["apply", "-f", file])
            .await
            .contains("lease.coordination.k8s.io/standby created")
    );
    let stdout = kubectl(&kubeconfig, &["get", "lease", "-n", "default"]).await;
    let rows: Vec<Vec<&str>> = stdout
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows[0], ["NAME", "HOLDER", "AGE"]);
    assert_eq!(rows[1][..2], ["gantry-leader", "engine-a"], "{stdout}");
    assert_eq!(rows[2][..2], ["standby", "engine-b"], "{stdout}");
}

/// kubectl's output, with its cache beside `kubeconfig`; a kubectl that fails fails the test.
async fn kubectl(kubeconfig: &std::path::Path, args: &[&str]) -> String {
    let cache = kubeconfig.with_file_name("cache");
    let run = tokio::process::Command::new("kubectl")
        .env("KUBECONFIG", kubeconfig)
        .arg("--cache-dir")
        .arg(cache)
        .args(args)
        .output();
    let out = tokio::time::timeout(test_support::PATIENCE, run)
        .await
        .expect("kubectl answered")
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "kubectl {args:?}: {stderr}{stdout}");
    stdout
}

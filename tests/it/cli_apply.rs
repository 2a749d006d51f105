//! `gantry up` on a cluster that differs from the config, against a simulated cloud reached only
//! through `--gke-endpoint` and `--access-token-file`: a cluster made by hand through the
//! Container API with 1 × e2-medium is planned, then made 3 × n1-standard-1 by `up --yes`, as the
//! cluster's Kubernetes API (and kubectl) then sees it; without a terminal and without `--yes`,
//! or read-only, `up` changes nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry_test_support::gke_cli::GkeCli as Env;
use gantry_test_support::text;

use gantry_test_support as common;
use gantry_test_support::gke_cli::PATIENCE;

use serde_json::Value;

fn fields(plan: &Value) -> Vec<(String, String)> {
    plan["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["field"].as_str().unwrap().to_string(),
                c["how"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn up_with_yes_makes_a_hand_made_cluster_what_the_config_says() {
    let env = Env::start().await;
    env.create_by_hand().await;
    let (code, plan) = env.plan_json().await;
    assert_eq!(code, Some(3), "{plan}");
    assert_eq!(
        fields(&plan),
        [
            ("nodeCount".to_string(), "in-place".to_string()),
            ("machineType".to_string(), "recreate-nodes".to_string()),
        ]
    );
    let cost = &plan["costPerHour"];
    assert!(
        cost["current"].as_f64().is_some() && cost["desired"].as_f64().is_some(),
        "{cost}"
    );

    let up = env.gantry(&["up", "--wait", "--yes"]).await;
    let (out, err) = (text(&up.stdout), text(&up.stderr));
    assert_eq!(up.status.code(), Some(0), "{out}{err}");
    assert!(
        out.contains("~ default-pool.nodeCount: 1 → 3 (in place)"),
        "{out}"
    );
    assert!(out.contains("update started: operation"), "{out}");
    assert!(out.contains("2 of 2 changes made"), "{out}");

    let (code, plan) = env.plan_json().await;
    assert_eq!(code, Some(0), "{plan}");
    assert_eq!(plan["action"], "none");

    if common::kubectl_available() {
        let kubeconfig = env.dir.path().join("kube").join("config");
        let nodes = tokio::process::Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .args(["get", "nodes", "-o", "json"])
            .env("HOME", env.dir.path())
            .output();
        let nodes = tokio::time::timeout(PATIENCE, nodes)
            .await
            .unwrap()
            .unwrap();
        assert!(nodes.status.success(), "{}", text(&nodes.stderr));
        let nodes: Value = serde_json::from_slice(&nodes.stdout).unwrap();
        let types: Vec<&str> = nodes["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| {
                n["metadata"]["labels"]["node.kubernetes.io/instance-type"]
                    .as_str()
                    .unwrap_or("(none)")
            })
            .collect();
        assert_eq!(types, ["n1-standard-1"; 3]);
    }
}

#[tokio::test]
async fn up_without_yes_and_without_a_terminal_refuses_and_changes_nothing() {
    let env = Env::start().await;
    env.create_by_hand().await;
    let (_, before) = env.plan_json().await;

    let up = env.gantry(&["up", "--wait"]).await;
    let err = text(&up.stderr);
    assert_eq!(up.status.code(), Some(2), "{err}");
    assert!(err.contains("pass --yes"), "{err}");
    assert!(
        text(&up.stdout).contains("default-pool.machineType"),
        "the plan is shown"
    );

    let (code, after) = env.plan_json().await;
    assert_eq!((code, after), (Some(3), before));
}

#[tokio::test]
async fn read_only_up_refuses_before_it_changes_anything() {
    let env = Env::start().await;
    env.create_by_hand().await;
    let (_, before) = env.plan_json().await;

    let up = env.gantry(&["--read-only", "up", "--wait", "--yes"]).await;
    let err = text(&up.stderr);
    assert_eq!(up.status.code(), Some(2), "{err}");
    assert!(err.contains("--read-only"), "{err}");

    let (code, after) = env.plan_json().await;
    assert_eq!((code, after), (Some(3), before));
}

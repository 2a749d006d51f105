//! The real `gantry plan` against a simulated cloud reached only through `--gke-endpoint` and
//! `--access-token-file`: a cluster made by hand through the Container API is compared with the
//! config; one made by `gantry up` matches it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry_test_support::gke_cli::GkeCli as Env;
use gantry_test_support::text;

use serde_json::{Value, json};

fn changes(plan: &Value) -> Vec<(String, String, Value, Value, String)> {
    plan["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["pool"].as_str().unwrap_or("(cluster)").to_string(),
                c["field"].as_str().unwrap().to_string(),
                c["current"].clone(),
                c["desired"].clone(),
                c["how"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_hand_made_smaller_cluster_plans_a_resize_in_place_and_new_nodes() {
    let env = Env::start().await;
    env.create_by_hand().await;

    let (code, plan) = env.plan_json().await;
    assert_eq!(code, Some(3), "{plan}");
    assert_eq!(plan["action"], "update");
    assert_eq!(
        changes(&plan),
        [
            (
                "default-pool".into(),
                "nodeCount".into(),
                json!(1),
                json!(3),
                "in-place".into()
            ),
            (
                "default-pool".into(),
                "machineType".into(),
                json!("e2-medium"),
                json!("n1-standard-1"),
                "recreate-nodes".into()
            ),
        ]
    );
    let cost = &plan["costPerHour"];
    assert_eq!(cost["currency"], "USD");
    let (now, after) = (cost["current"].as_f64(), cost["desired"].as_f64());
    assert!(now.is_some_and(|n| n > 0.0) && after > now, "{cost}");

    let out = env.gantry(&["plan"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(
        shown.contains("~ default-pool.nodeCount: 1 → 3 (in place)"),
        "{shown}"
    );
    assert!(
        shown.contains("~ default-pool.machineType: e2-medium → n1-standard-1 (nodes recreated)"),
        "{shown}"
    );
    assert!(shown.contains("/h → $0.28/h"), "{shown}");
}

#[tokio::test]
async fn the_cluster_gantry_up_made_matches_the_config() {
    let env = Env::start().await;
    let (code, plan) = env.plan_json().await;
    assert_eq!((code, &plan["action"]), (Some(3), &json!("create")));
    assert_eq!(plan["costPerHour"]["current"], Value::Null);

    let up = env.gantry(&["up", "--wait", "--no-kubeconfig"]).await;
    assert_eq!(up.status.code(), Some(0), "{}", text(&up.stderr));

    let (code, plan) = env.plan_json().await;
    assert_eq!(code, Some(0), "{plan}");
    assert_eq!(plan["action"], "none");
    assert_eq!(plan["changes"], json!([]));
    let cost = &plan["costPerHour"];
    assert!(cost["current"].as_f64().is_some(), "{cost}");
    assert_eq!(cost["current"], cost["desired"]);
    let out = env.gantry(&["plan"]).await;
    assert!(
        text(&out.stdout).contains("No changes: the cluster matches the config."),
        "{}",
        text(&out.stdout)
    );
}

#[tokio::test]
async fn a_plan_against_a_kubeconfig_context_says_it_needs_gke() {
    let env = Env::start().await;
    let out = env.gantry(&["plan", "--context", "kind-dev"]).await;
    assert_eq!(out.status.code(), Some(2));
    let said = text(&out.stderr);
    assert!(said.contains("drop --context"), "{said}");
    assert!(out.stdout.is_empty());
}

//! The real `gantry plan` against a simulated cloud reached only through `--gke-endpoint` and
//! `--access-token-file`: a cluster made by hand through the Container API is compared with the
//! config; one made by `gantry up` matches it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry_test_support as common;
use gantry_test_support::text;

use std::path::PathBuf;
use std::process::{Output, Stdio};
use std::time::Duration;

use gantry::sim::{SimCloud, SimOptions};
use serde_json::{Value, json};

/// Only a guard against a hung binary or cluster; nothing asserts how long anything takes.
const PATIENCE: Duration = Duration::from_secs(180);
const CLUSTERS: &str = "/v1/projects/demo-project/locations/us-central1-a/clusters";

struct Env {
    cloud: SimCloud,
    dir: tempfile::TempDir,
}

impl Env {
    async fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let cloud = common::cloud_with(SimOptions {
            state_dir: Some(dir.path().join("sim")),
            time_scale: 0.001,
            ..Default::default()
        })
        .await;
        Self { cloud, dir }
    }

    fn token_file(&self) -> PathBuf {
        self.dir.path().join("sim").join("token")
    }

    fn token(&self) -> String {
        std::fs::read_to_string(self.token_file())
            .unwrap()
            .trim()
            .to_string()
    }

    /// `gantry ARGS --project … --location … --gke-endpoint … --access-token-file …`, isolated
    /// from the user's config, state and gcloud.
    async fn gantry(&self, args: &[&str]) -> Output {
        let home = self.dir.path();
        let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_gantry"))
            .args(args)
            .args(["--project", "demo-project", "--location", "us-central1-a"])
            .arg("--gke-endpoint")
            .arg(self.cloud.gke_endpoint())
            .arg("--access-token-file")
            .arg(self.token_file())
            .env("XDG_CONFIG_HOME", home.join("config"))
            .env("XDG_STATE_HOME", home.join("state"))
            .env("HOME", home)
            .env("KUBECONFIG", home.join("kube").join("config"))
            .env("CLOUDSDK_CONFIG", home.join("gcloud"))
            .env_remove("GOOGLE_CLOUD_PROJECT")
            .env_remove("CLOUDSDK_CORE_PROJECT")
            .env_remove("GOOGLE_APPLICATION_CREDENTIALS")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .output();
        tokio::time::timeout(PATIENCE, child)
            .await
            .expect("gantry hung")
            .unwrap()
    }

    /// `gantry plan --json --exit-code`: the exit code and the plan.
    async fn plan_json(&self) -> (Option<i32>, Value) {
        let out = self.gantry(&["plan", "--json", "--exit-code"]).await;
        let plan = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}{}", text(&out.stdout), text(&out.stderr)));
        (out.status.code(), plan)
    }

    /// A cluster made by hand through the Container API's REST form (as `gcloud container
    /// clusters create --num-nodes 1 --machine-type e2-medium` sends it), RUNNING on return.
    async fn create_by_hand(&self) {
        let http = reqwest::Client::new();
        let url = format!("{}{CLUSTERS}", self.cloud.gke_endpoint());
        let body = json!({"cluster": {
            "name": "ml-gke-cluster",
            "nodePools": [{
                "name": "default-pool",
                "initialNodeCount": 1,
                "config": {"machineType": "e2-medium"},
            }],
        }});
        let created = http
            .post(&url)
            .bearer_auth(self.token())
            .json(&body)
            .send()
            .await
            .unwrap();
        assert!(created.status().is_success(), "{:?}", created.text().await);
        let running = async {
            loop {
                let cluster: Value = http
                    .get(format!("{url}/ml-gke-cluster"))
                    .bearer_auth(self.token())
                    .send()
                    .await
                    .unwrap()
                    .json()
                    .await
                    .unwrap();
                if cluster["status"] == "RUNNING" {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        };
        tokio::time::timeout(PATIENCE, running)
            .await
            .expect("the cluster never became RUNNING");
    }
}

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

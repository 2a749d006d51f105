//! `gantry up` on a cluster that differs from the config, against a simulated cloud reached only
//! through `--gke-endpoint` and `--access-token-file`: a cluster made by hand through the
//! Container API with 1 × e2-medium is planned, then made 3 × n1-standard-1 by `up --yes`, as the
//! cluster's Kubernetes API (and kubectl) then sees it; without a terminal and without `--yes`,
//! or read-only, `up` changes nothing.
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

//! The real binary against a simulated cloud reached only through `--gke-endpoint` and
//! `--access-token-file` (no kubeconfig, no gcloud), and a cluster made by hand through the
//! Container API's REST form: what `plan` and `up` are tested against.

use std::path::PathBuf;
use std::process::{Output, Stdio};
use std::time::Duration;

use gantry::sim::{SimCloud, SimOptions};
use serde_json::{Value, json};

use crate::text;

/// Only a guard against a hung binary or cluster; nothing asserts how long anything takes.
pub const PATIENCE: Duration = crate::WAIT_BOUND;
const CLUSTERS: &str = "/v1/projects/demo-project/locations/us-central1-a/clusters";

/// A simulated cloud on loopback and the real binary pointed at it with flags alone.
pub struct GkeCli {
    pub cloud: SimCloud,
    pub dir: tempfile::TempDir,
}

impl GkeCli {
    pub async fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let cloud = crate::cloud_with(SimOptions {
            state_dir: Some(dir.path().join("sim")),
            time_scale: 0.001,
            ..Default::default()
        })
        .await;
        Self { cloud, dir }
    }

    pub fn token_file(&self) -> PathBuf {
        self.dir.path().join("sim").join("token")
    }

    pub fn token(&self) -> String {
        std::fs::read_to_string(self.token_file())
            .unwrap()
            .trim()
            .to_string()
    }

    /// `gantry ARGS --project … --location … --gke-endpoint … --access-token-file …`, isolated
    /// from the user's config, state and gcloud.
    pub async fn gantry(&self, args: &[&str]) -> Output {
        let home = self.dir.path();
        let child = tokio::process::Command::new(crate::gantry_bin())
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
    pub async fn plan_json(&self) -> (Option<i32>, Value) {
        let out = self.gantry(&["plan", "--json", "--exit-code"]).await;
        let plan = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}{}", text(&out.stdout), text(&out.stderr)));
        (out.status.code(), plan)
    }

    /// A cluster made by hand through the Container API's REST form (as `gcloud container
    /// clusters create --num-nodes 1 --machine-type e2-medium` sends it), RUNNING on return.
    pub async fn create_by_hand(&self) {
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

//! The scriptable commands as a script would run them: a `gantry sim` in the foreground, and
//! `gantry up/launch/logs/status/retry/delete/down` reaching it with only `--gke-endpoint` and
//! `--access-token-file`, as they would reach Google.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

pub struct Sim {
    child: Child,
    dir: tempfile::TempDir,
    gke: String,
}

impl Sim {
    pub fn start() -> Sim {
        Sim::start_with(&["--time-scale", "0.005"], "")
    }

    /// A `gantry sim` with these flags, and `config` as the commands' config file.
    pub fn start_with(flags: &[&str], config: &str) -> Sim {
        let dir = tempfile::tempdir().unwrap();
        let config_dir = dir.path().join("config").join("gantry");
        std::fs::create_dir_all(&config_dir).unwrap();
        std::fs::write(config_dir.join("config.toml"), config).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_gantry"))
            .arg("sim")
            .args(flags)
            .arg("--state-dir")
            .arg(dir.path().join("sim"))
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let mut gke = String::new();
        let mut said = Vec::new();
        for line in lines.by_ref() {
            let line = line.unwrap();
            if let Some(url) = line.strip_prefix("gantry sim: GKE API on ") {
                gke = url.trim().to_string();
            }
            if line.contains("state in") {
                break;
            }
            said.push(line);
        }
        assert!(
            !gke.is_empty(),
            "gantry sim {flags:?} did not start: {said:#?}"
        );
        std::thread::spawn(move || for _ in lines {});
        Sim { child, dir, gke }
    }

    /// A simulator with these flags and config, its cluster made, and `gantry launch LAUNCH`
    /// done.
    pub fn launched(flags: &[&str], config: &str, launch: &[&str]) -> Sim {
        let sim = Sim::start_with(flags, config);
        sim.ok(&["up", "--wait"]);
        let mut args = vec!["launch"];
        args.extend_from_slice(launch);
        sim.ok(&args);
        sim
    }

    /// `kubectl ARGS` with the kubeconfig `gantry up` wrote for this simulator.
    pub fn kubectl(&self, args: &[&str]) -> Output {
        Command::new("kubectl")
            .args(args)
            .env("KUBECONFIG", self.home().join("kube").join("config"))
            .env("HOME", self.home())
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    /// `gantry status --json`.
    pub fn status(&self) -> serde_json::Value {
        serde_json::from_str(&self.ok(&["status", "--json"])).unwrap()
    }

    /// Polls `gantry status --json` until `done` holds (bounded by `WAIT_BOUND`), giving it.
    pub fn until_status(
        &self,
        what: &str,
        done: impl Fn(&serde_json::Value) -> bool,
    ) -> serde_json::Value {
        let deadline = std::time::Instant::now() + gantry_test_support::WAIT_BOUND;
        loop {
            let s = self.status();
            if done(&s) {
                return s;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{what}: {:#}",
                s["job"]
            );
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
    }

    /// A `gantry watch` beside this simulator, killed when dropped.
    pub fn watch(&self) -> Watch {
        Watch(
            self.command(&["watch"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        )
    }

    /// Resizes a node pool of the cluster through the simulator's GKE API (`nodePools/P:setSize`,
    /// as `gcloud container clusters resize` asks): `nodes` in each zone. Returns once GKE took
    /// the request; its operation goes on.
    pub fn set_pool_size(&self, pool: &str, nodes: u32) {
        let url = format!(
            "{}/v1/projects/demo-project/locations/us-central1-a/clusters/ml-gke-cluster/nodePools/{pool}:setSize",
            self.gke.trim_end_matches('/')
        );
        let token = std::fs::read_to_string(self.token_file()).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let (status, body) = runtime.block_on(async {
            let answer = reqwest::Client::new()
                .post(&url)
                .bearer_auth(token.trim())
                .json(&serde_json::json!({ "nodeCount": nodes }))
                .send()
                .await
                .unwrap();
            (answer.status(), answer.text().await.unwrap_or_default())
        });
        assert!(
            status.is_success(),
            "setSize {pool} to {nodes}: {status} {body}"
        );
    }

    pub fn home(&self) -> &Path {
        self.dir.path()
    }

    fn token_file(&self) -> PathBuf {
        self.home().join("sim").join("token")
    }

    pub fn gantry(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    /// `gantry ARGS` against this simulator, to run or spawn (`gantry watch` beside it).
    pub fn command(&self, args: &[&str]) -> Command {
        let home = self.home();
        let mut command = Command::new(env!("CARGO_BIN_EXE_gantry"));
        command
            .args(args)
            .args([
                "--project",
                "demo-project",
                "--location",
                "us-central1-a",
                "--gke-endpoint",
                &self.gke,
                "--access-token-file",
            ])
            .arg(self.token_file())
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join("config"))
            .env("XDG_STATE_HOME", home.join("state"))
            .env("KUBECONFIG", home.join("kube").join("config"))
            .env("CLOUDSDK_CONFIG", home.join("gcloud"))
            .env_remove("GOOGLE_CLOUD_PROJECT")
            .env_remove("GOOGLE_APPLICATION_CREDENTIALS")
            .stdin(Stdio::null());
        command
    }

    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.gantry(args);
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        assert_eq!(
            out.status.code(),
            Some(0),
            "gantry {args:?}: {}{stdout}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
    }
}

/// The newest attempt in a `gantry status --json` document (null without one).
pub fn newest(status: &serde_json::Value) -> &serde_json::Value {
    status["job"]["attempts"]
        .as_array()
        .and_then(|a| a.last())
        .unwrap_or(&serde_json::Value::Null)
}

/// A `gantry watch` process, killed when dropped.
pub struct Watch(pub Child);

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_whole_training_run_from_the_command_line() {
    let sim = Sim::start();
    assert!(sim.ok(&["up", "--wait"]).contains("is RUNNING"));
    let launched = sim.ok(&[
        "launch",
        "--env",
        "SIM_LOG_LINES=30",
        "--env",
        "SIM_FAIL_ATTEMPTS=3",
    ]);
    assert!(launched.contains("ml-training-job"), "{launched}");
    // backoffLimit 2: three pods fail, the attempt fails, and a follow says so with exit 1.
    let failed = sim.gantry(&["logs", "--follow"]);
    assert_eq!(
        failed.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&failed.stderr)
    );
    let followed = String::from_utf8_lossy(&failed.stdout).to_string();
    assert!(
        followed.lines().all(|l| l.starts_with('[')),
        "every line is prefixed with its pod"
    );
    assert!(followed.contains("epoch"), "{followed}");
    let status: serde_json::Value = serde_json::from_str(&sim.ok(&["status", "--json"])).unwrap();
    assert_eq!(status["cluster"]["status"], "RUNNING");
    let attempts = status["job"]["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 1);
    assert_eq!(attempts[0]["status"], "Failed");
    assert_eq!(attempts[0]["pods"].as_array().unwrap().len(), 3);
    sim.ok(&["retry", "--env", "SIM_FAIL_ATTEMPTS=0"]);
    let succeeded = sim.gantry(&["logs", "--follow"]);
    assert_eq!(
        succeeded.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&succeeded.stderr)
    );
    let status: serde_json::Value = serde_json::from_str(&sim.ok(&["status", "--json"])).unwrap();
    let attempts = status["job"]["attempts"].as_array().unwrap();
    assert_eq!(
        (attempts.len(), attempts[1]["status"].as_str()),
        (2, Some("Succeeded")),
        "{status:#}"
    );
    sim.ok(&["delete", "job", "--yes"]);
    assert!(sim.ok(&["down", "--yes"]).contains("deleted"));
    let gone: serde_json::Value = serde_json::from_str(&sim.ok(&["status", "--json"])).unwrap();
    assert_eq!(gone["cluster"]["status"], "NOT_FOUND");
}

//! The real binary in a terminal (tmux), keys in, screen out, against `--sim --time-scale 0.01`.
//! Skipped, saying so, where tmux is missing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Only a guard against a hung binary: screens are waited for by content, never by time.
const HANG_GUARD: Duration = Duration::from_secs(300);

struct Tmux {
    session: String,
    _home: tempfile::TempDir,
}

impl Tmux {
    fn start(name: &str, args: &str, config: &str) -> Option<Tmux> {
        if Command::new("tmux").arg("-V").output().is_err() {
            eprintln!("skipping: tmux is not installed");
            return None;
        }
        let home = tempfile::tempdir().unwrap();
        let config_path = home.path().join("config.toml");
        std::fs::write(&config_path, config).unwrap();
        let session = format!("gantry-e2e-{name}-{}", std::process::id());
        let bin = env!("CARGO_BIN_EXE_gantry");
        let state = home.path().join("state");
        let command = format!(
            "env HOME={home} XDG_STATE_HOME={state} TERM=xterm-256color {bin} --sim --time-scale 0.01 --config {config} {args}; echo GANTRY-EXIT=$?; sleep 600",
            home = home.path().display(),
            state = state.display(),
            config = config_path.display(),
        );
        let ok = Command::new("tmux")
            .args([
                "-L",
                &session,
                "new-session",
                "-d",
                "-s",
                &session,
                "-x",
                "80",
                "-y",
                "24",
                &command,
            ])
            .status()
            .unwrap()
            .success();
        assert!(ok, "tmux starts");
        Some(Tmux {
            session,
            _home: home,
        })
    }

    fn screen(&self) -> String {
        let out = Command::new("tmux")
            .args([
                "-L",
                &self.session,
                "capture-pane",
                "-p",
                "-t",
                &self.session,
            ])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).to_string()
    }

    fn keys(&self, keys: &[&str]) {
        for k in keys {
            Command::new("tmux")
                .args(["-L", &self.session, "send-keys", "-t", &self.session, k])
                .status()
                .unwrap();
        }
    }

    fn literal(&self, text: &str) {
        Command::new("tmux")
            .args([
                "-L",
                &self.session,
                "send-keys",
                "-l",
                "-t",
                &self.session,
                text,
            ])
            .status()
            .unwrap();
    }

    /// Waits until the screen shows all of `wanted`, returning it.
    fn wait_for(&self, wanted: &[&str]) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if wanted.iter().all(|w| screen.contains(w)) {
                return screen;
            }
            assert!(
                start.elapsed() < HANG_GUARD,
                "screen never showed {wanted:?}:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.session, "kill-server"])
            .status();
    }
}

const FAILING_JOB: &str =
    "[job]\nbackoff-limit = 0\n[job.env]\nSIM_FAIL_ATTEMPTS = \"1\"\nSIM_LOG_LINES = \"40\"\n";

#[test]
fn operator_session_from_create_to_delete() {
    let Some(t) = Tmux::start("full", "", FAILING_JOB) else {
        return;
    };
    t.wait_for(&["ml-gke-cluster", "NOT CREATED", "Press c to create"]);
    t.keys(&["?"]);
    t.wait_for(&["Keys", "create the cluster"]);
    t.keys(&["Escape"]);
    t.keys(&["c"]);
    t.wait_for(&["Create this GKE cluster?", "3 × n1-standard-1"]);
    t.keys(&["y"]);
    t.wait_for(&["RUNNING", "No attempt yet"]);
    t.keys(&["l"]);
    let screen = t.wait_for(&["Failed", "epoch", "BackoffLimitExceeded"]);
    assert!(
        screen.contains("Error(1)") || screen.contains("Error"),
        "{screen}"
    );
    t.keys(&["r"]);
    t.wait_for(&["ml-training-job-2"]);
    t.keys(&["X"]);
    t.wait_for(&["Delete cluster ml-gke-cluster?"]);
    t.literal("ml-gke-cluster");
    t.keys(&["Enter"]);
    t.wait_for(&["NOT CREATED"]);
    t.keys(&["q"]);
    let screen = t.wait_for(&["GANTRY-EXIT=0"]);
    // The terminal is restored: the alternate screen is gone with the panes on it.
    assert!(!screen.contains("┌ Logs"), "{screen}");
}

/// The TUI's launch and retry keys use the Job of `--job-manifest`, not the config's.
#[test]
fn launch_and_retry_keys_use_the_job_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("job.yaml");
    std::fs::write(
        &manifest,
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: from-manifest\nspec:\n  backoffLimit: 0\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n        - name: trainer\n          image: gcr.io/demo-project/trainer:v1\n          env:\n            - {name: SIM_LOG_LINES, value: \"12\"}\n            - {name: SIM_FAIL_ATTEMPTS, value: \"1\"}\n",
    )
    .unwrap();
    let args = format!("--job-manifest {}", manifest.display());
    let Some(t) = Tmux::start("manifest", &args, FAILING_JOB) else {
        return;
    };
    t.wait_for(&["Job from-manifest", "NOT CREATED"]);
    t.keys(&["c"]);
    t.wait_for(&["Create this GKE cluster?"]);
    t.keys(&["y"]);
    t.wait_for(&["RUNNING", "No attempt yet"]);
    t.keys(&["l"]);
    t.wait_for(&["from-manifest ", "Failed", "BackoffLimitExceeded"]);
    t.keys(&["r"]);
    // SIM_FAIL_ATTEMPTS counts per Job: the new attempt fails too, under its own name.
    t.wait_for(&["Pods from-manifest-2", "#2"]);
    let screen = t.screen();
    assert!(!screen.contains("ml-training-job"), "{screen}");
    t.keys(&["q"]);
    t.wait_for(&["GANTRY-EXIT=0"]);
}

#[test]
fn read_only_refuses_to_provision() {
    let Some(t) = Tmux::start("ro", "--read-only", "") else {
        return;
    };
    t.wait_for(&["READ-ONLY", "NOT CREATED"]);
    t.keys(&["c"]);
    t.wait_for(&["read-only: refused to create the cluster"]);
    let screen = t.screen();
    assert!(
        screen.contains("NOT CREATED") && !screen.contains("PROVISIONING"),
        "{screen}"
    );
    t.keys(&["q"]);
    t.wait_for(&["GANTRY-EXIT=0"]);
    let _ = Path::new("");
}

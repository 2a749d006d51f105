//! The real binary in a terminal (tmux), keys in, screen out, against `--sim --time-scale 0.01`.
//! Skipped, saying so, where tmux is missing.
//!
//! Every valid config file (tests/valid_configs, assets/config) starts the TUI: its first screen
//! shows the config's cluster (and READ-ONLY when it says so), and `q` quits with status 0.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry_test_support as common;

use std::path::Path;

use common::tmux::Tmux;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use gantry::config::Config;
use gantry::keys::{Action, Keymap};

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
    // The failed pod's STATUS, as kubectl prints it.
    assert!(screen.contains("Error"), "{screen}");
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
    t.create_cluster();
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

#[test]
fn the_simulated_cluster_lives_where_the_operator_said() {
    // Flags: a region, so three zones of nodes, as GKE makes them.
    let Some(t) = Tmux::start("place", "--project my-proj --location europe-west4", "") else {
        return;
    };
    t.wait_for(&["my-proj/europe-west4", "NOT CREATED"]);
    t.keys(&["c"]);
    t.wait_for(&["Create this GKE cluster?"]);
    t.keys(&["y"]);
    t.wait_for(&["RUNNING", "9 nodes"]);
    t.keys(&["q"]);
    t.wait_for(&["GANTRY-EXIT=0"]);

    // The config file, when no flag says otherwise.
    let config = "project = \"cfg-proj\"\nlocation = \"asia-east1-b\"\n";
    let Some(t) = Tmux::start("place-config", "", config) else {
        return;
    };
    t.wait_for(&["cfg-proj/asia-east1-b", "NOT CREATED"]);
    t.keys(&["q"]);
    t.wait_for(&["GANTRY-EXIT=0"]);
}

/// Valid configs that cannot start on the simulator, by path, each with the reason: none so far.
/// Each is still named in the test's output with its reason, never skipped in silence.
const CANNOT_START_ON_THE_SIMULATOR: &[(&str, &str)] = &[];

/// Every valid config file, by its path in the repository.
fn valid_configs() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["tests/valid_configs", "assets/config"] {
        let mut found: Vec<String> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .map(|p| format!("{dir}/{}", p.file_name().unwrap().to_string_lossy()))
            .collect();
        assert!(!found.is_empty(), "no config files in {dir}");
        found.sort();
        files.extend(found);
    }
    for (listed, _) in CANNOT_START_ON_THE_SIMULATOR {
        assert!(
            files.iter().any(|f| f == listed),
            "{listed} is not a valid config"
        );
    }
    files
}

#[test]
fn every_valid_config_starts_on_the_simulator() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for name in valid_configs() {
        if let Some((_, why)) = CANNOT_START_ON_THE_SIMULATOR
            .iter()
            .find(|(n, _)| *n == name)
        {
            eprintln!("{name}: not started: it cannot start on the simulator: {why}");
            continue;
        }
        let file = root.join(&name);
        let config = Config::load(&file).unwrap();
        let keymap = Keymap::with_overrides(&config.keys).unwrap();
        let q = KeyEvent::new(KeyCode::Char('q'), KeyModifiers::NONE);
        assert_eq!(
            keymap.action_for(&q),
            Some(Action::Quit),
            "{name}: q does not quit with this config ({}): teach this test its quit key",
            keymap.keys_for(Action::Quit)
        );
        let session = name.replace(['/', '.'], "-");
        let Some(t) = Tmux::start(&session, "", &std::fs::read_to_string(&file).unwrap()) else {
            return;
        };
        // The first screen: the cluster pane titled with the config's cluster, once the
        // simulator's GKE has answered that there is none yet, beside the config's Job.
        let cluster = config.cluster.name.as_str();
        let job = format!("Job {}", config.job.name);
        let mut wanted = vec![cluster, "NOT CREATED", job.as_str()];
        if config.read_only {
            wanted.push("READ-ONLY");
        }
        let screen = t.wait_for(&wanted);
        assert!(
            screen
                .lines()
                .any(|l| l.starts_with("┌ ") && l.contains(cluster)),
            "{name}: no cluster pane titled {cluster}:\n{screen}"
        );
        t.keys(&["q"]);
        let (status, screen) = t.wait_for_exit();
        assert_eq!(status, 0, "{name}: exit status {status}:\n{screen}");
    }
}

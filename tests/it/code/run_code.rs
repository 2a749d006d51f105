//! `--run-code`: the simulator runs a code attempt for real, on this machine's python3, with the
//! pod's environment — `assets/code/train.py` as two ranks of an Indexed Job that meet at
//! MASTER_ADDR:MASTER_PORT, their loss read by `gantry metrics`; and its `sys.exit(3)` under
//! `fail-exit-codes = [3]` failing the attempt at its first pod. Without `--run-code`, a script
//! missing from the code ends the pod as Python would. Skipped (saying so) without python3,
//! unless GANTRY_REQUIRE_PYTHON3=1.

use gantry::sim::SimOptions;
use gantry_test_support::{CliEnv, fixtures::repo_path, python3, text};
use serde_json::Value;

/// A directory holding a copy of `assets/code/train.py`.
fn code_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        repo_path("assets/code/train.py"),
        dir.path().join("train.py"),
    )
    .unwrap();
    dir
}

async fn run_code_env() -> Option<CliEnv> {
    python3()?;
    Some(
        CliEnv::start_with(SimOptions {
            run_code: true,
            ..Default::default()
        })
        .await,
    )
}

async fn status(e: &CliEnv) -> Value {
    let out = e.gantry(&["status", "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn train_py_runs_for_real_as_two_ranks_that_meet_and_its_loss_is_read() {
    let Some(e) = run_code_env().await else {
        return;
    };
    let code = code_dir();
    let out = e
        .gantry_in(
            code.path(),
            &[
                "launch",
                "--code",
                ".",
                "--indexed",
                "--completions",
                "2",
                "--env",
                "STEPS=10",
            ],
            &["python3", "train.py"],
        )
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    let follow = e.gantry(&["logs", "--follow"]).await;
    let logs = text(&follow.stdout);
    assert_eq!(
        follow.status.code(),
        Some(0),
        "{logs}{}",
        text(&follow.stderr)
    );
    assert!(logs.contains("] rank 0 met rank 1\n"), "{logs}");
    assert_eq!(logs.matches("step=10 loss=").count(), 2, "{logs}");
    assert!(logs.contains("] rank 1: done\n"), "{logs}");

    let out = e.gantry(&["metrics", "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let metrics: Value = serde_json::from_slice(&out.stdout).unwrap();
    let sources = metrics["sources"].as_array().unwrap();
    assert_eq!(sources.len(), 2, "{metrics}");
    for source in sources {
        let loss = source["metrics"]["loss"].as_array().unwrap();
        assert_eq!(loss.len(), 10, "{source}");
        assert_eq!(loss[0][0], 1.0, "{source}");
        assert_eq!(loss[9][0], 10.0, "{source}");
    }
    // Rank 0 starts at 0.1 + 2.4 × 0.97, rank 1 at 0.1 + 2.3 × 0.97.
    let firsts: Vec<f64> = sources
        .iter()
        .map(|s| s["metrics"]["loss"][0][1].as_f64().unwrap())
        .collect();
    assert!(
        firsts.contains(&2.428) && firsts.contains(&2.331),
        "{firsts:?}"
    );

    let s = status(&e).await;
    assert_eq!(s["job"]["attempts"][0]["status"], "Succeeded", "{s}");
    drop(e.cloud);
}

#[tokio::test(flavor = "multi_thread")]
async fn sys_exit_3_under_fail_exit_codes_fails_the_attempt_at_its_first_pod() {
    let Some(e) = run_code_env().await else {
        return;
    };
    let code = code_dir();
    let config = code.path().join("gantry.toml");
    std::fs::write(&config, "[job.recovery]\nfail-exit-codes = [3]\n").unwrap();
    let out = e
        .gantry_in(
            code.path(),
            &[
                "--config",
                "gantry.toml",
                "launch",
                "--code",
                ".",
                "--env",
                "FAIL_AT_STEP=3",
            ],
            &["python3", "train.py"],
        )
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let follow = e.gantry(&["logs", "--follow"]).await;
    let logs = text(&follow.stdout);
    assert_eq!(
        follow.status.code(),
        Some(1),
        "{logs}{}",
        text(&follow.stderr)
    );
    assert!(logs.contains("step=3 loss=2.2904\n"), "{logs}");
    assert!(!logs.contains("step=4"), "{logs}");

    let s = status(&e).await;
    let attempt = &s["job"]["attempts"][0];
    assert_eq!(attempt["status"], "Failed", "{attempt}");
    assert_eq!(attempt["reason"], "PodFailurePolicy", "{attempt}");
    let ends = attempt["podEnds"].as_array().unwrap();
    assert_eq!(ends.len(), 1, "no pod after the first: {attempt}");
    assert_eq!(ends[0]["class"], "app-error", "{attempt}");
    assert!(
        ends[0]["detail"].as_str().unwrap().contains('3'),
        "{attempt}"
    );
    drop(e.cloud);
}

#[tokio::test(flavor = "multi_thread")]
async fn without_run_code_a_script_missing_from_the_code_fails_the_pod_as_python_would() {
    let e = CliEnv::start().await;
    let code = code_dir();
    let out = e
        .gantry_in(
            code.path(),
            &["launch", "--code", "."],
            &["python3", "trian.py"],
        )
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let follow = e.gantry(&["logs", "--follow"]).await;
    let logs = text(&follow.stdout);
    assert_eq!(follow.status.code(), Some(1), "{logs}");
    assert!(
        logs.contains(
            "python3: can't open file '/workspace/trian.py': [Errno 2] No such file or directory\n"
        ),
        "{logs}"
    );
    let s = status(&e).await;
    let ends = s["job"]["attempts"][0]["podEnds"].as_array().unwrap();
    assert!(
        ends.iter()
            .all(|end| end["class"] == "app-error" && end["detail"].as_str().unwrap().contains('2')),
        "{ends:?}"
    );
    drop(e.cloud);
}

//! Any cluster: every command that does not touch GKE, through the real binary, on a kubeconfig
//! context of the simulator, on a machine with no Google Cloud set up at all — no project, no
//! location, no gcloud configuration, an empty HOME. And the first-run messages there.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry_test_support as common;

use std::path::Path;
use std::process::{Output, Stdio};

use common::{CliEnv, text};

/// `gantry ARGS` with nothing in the environment but PATH, an empty HOME and, when given, the
/// simulator's kubeconfig.
async fn bare(home: &Path, kubeconfig: Option<&Path>, args: &[&str]) -> Output {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_gantry"));
    command
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .stdin(Stdio::null());
    if let Some(k) = kubeconfig {
        command.env("KUBECONFIG", k);
    }
    command.output().await.unwrap()
}

fn ok(out: &Output, what: &str) -> String {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{what}: {}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

#[tokio::test(flavor = "multi_thread")]
async fn every_job_command_works_on_a_context_with_no_google_cloud_anywhere() {
    let e = CliEnv::start().await;
    let home = tempfile::tempdir().unwrap();
    let kubeconfig = e.home.path().join("sim/kubeconfig");
    let run = |args: Vec<&'static str>| {
        let home = home.path().to_path_buf();
        let kubeconfig = kubeconfig.clone();
        let context = e.context.clone();
        async move {
            let mut all = args.clone();
            let context: &'static str = Box::leak(context.into_boxed_str());
            all.extend(["--context", context]);
            bare(&home, Some(&kubeconfig), &all).await
        }
    };

    let out = run(vec![
        "launch",
        "--image",
        "registry.example/trainer:v1",
        "--env",
        "SIM_LOG_LINES=6",
    ])
    .await;
    assert!(ok(&out, "launch").contains("launched Job ml-training-job (attempt 1)"));
    let logs = ok(&run(vec!["logs", "--follow"]).await, "logs --follow");
    assert_eq!(logs.lines().count(), 6, "{logs}");

    let status = ok(&run(vec!["status"]).await, "status");
    assert!(status.contains("context   gke_demo-project"), "{status}");
    assert!(
        status.contains("RUNNING") && status.contains("ml-training-job"),
        "{status}"
    );

    let json: serde_json::Value =
        serde_json::from_str(&ok(&run(vec!["status", "--json"]).await, "status --json")).unwrap();
    assert_eq!(json["cluster"]["kind"], "context");
    assert_eq!(json["cluster"]["status"], "RUNNING");
    assert_eq!(json["cluster"]["name"], e.context.as_str());
    assert!(
        json["cluster"]["server"]
            .as_str()
            .unwrap()
            .starts_with("https://")
    );
    assert!(
        json["cluster"]["version"]
            .as_str()
            .unwrap()
            .starts_with('v')
    );
    assert!(json["cluster"]["nodeCount"].as_u64().unwrap() > 0);
    assert_eq!(json["job"]["attempts"][0]["status"], "Succeeded");

    let retried = ok(&run(vec!["retry"]).await, "retry");
    assert!(retried.contains("attempt 2"), "{retried}");
    ok(&run(vec!["logs", "--follow"]).await, "logs of the retry");
    ok(
        &run(vec!["delete", "attempt", "ml-training-job", "--yes"]).await,
        "delete attempt",
    );
    ok(&run(vec!["delete", "job", "--yes"]).await, "delete job");
    ok(&run(vec!["config"]).await, "config");
    drop(e.cloud);
}

#[tokio::test(flavor = "multi_thread")]
async fn without_an_image_launch_says_what_to_do_in_one_short_line() {
    let e = CliEnv::start().await;
    let home = tempfile::tempdir().unwrap();
    let out = bare(
        home.path(),
        Some(&e.home.path().join("sim/kubeconfig")),
        &["launch", "--context", &e.context],
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    let message = stderr.trim_end().strip_prefix("gantry: ").unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(message.chars().count() <= 78, "{message}");
    assert!(message.contains("--image"), "{message}");
}

#[tokio::test]
async fn a_first_run_with_nothing_set_up_points_at_the_simulator() {
    let home = tempfile::tempdir().unwrap();
    let out = bare(home.path(), None, &[]).await;
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("no Google Cloud project"), "{stderr}");
    assert!(stderr.contains("gantry --sim"), "{stderr}");
}

#[tokio::test]
async fn sim_with_a_subcommand_points_at_gantry_sim_in_one_line() {
    let home = tempfile::tempdir().unwrap();
    for command in ["logs", "status", "launch", "up"] {
        let out = bare(home.path(), None, &["--sim", command]).await;
        assert_eq!(out.status.code(), Some(2), "{command}");
        let stderr = text(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.contains("gantry sim --state-dir")
                && stderr.contains(&format!("`gantry {command}`")),
            "{stderr}"
        );
    }
}

#[tokio::test]
async fn missing_credentials_are_said_once_in_gantrys_words() {
    let home = tempfile::tempdir().unwrap();
    let out = bare(
        home.path(),
        None,
        &["--project", "p", "--location", "us-central1-a", "status"],
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("no Google Cloud credentials"), "{stderr}");
    assert!(
        stderr.contains("gcloud auth application-default login"),
        "{stderr}"
    );
    assert!(
        !stderr.to_lowercase().contains("succeed"),
        "the library's retry advice: {stderr}"
    );
}

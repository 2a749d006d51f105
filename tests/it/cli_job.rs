//! The Job commands through the real binary, on the simulated cluster via a kubeconfig context.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry_test_support as common;

use std::path::Path;

use common::{CliEnv, text};

fn saved_logs(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".log"))
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn launch_follow_and_delete_through_a_context() {
    let e = CliEnv::start().await;
    let out = e.gantry(&["launch", "--env", "SIM_LOG_LINES=25"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("launched Job ml-training-job (attempt 1)"));

    let out = e.gantry(&["logs", "--follow"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 25, "{stdout}");
    assert!(
        lines.iter().all(|l| l.starts_with("[ml-training-job-")),
        "{stdout}"
    );
    assert!(
        lines[0]
            .ends_with("] [rank 0/1] starting training: epochs=3 steps_per_epoch=8 device=cuda:0"),
        "{stdout}"
    );
    let saved = saved_logs(&e.logs_dir("ml-training-job"));
    assert_eq!(saved.len(), 1);
    assert_eq!(saved[0].1.iter().filter(|b| **b == b'\n').count(), 25);

    // A plain `logs` prints the same; saving again adds nothing.
    let again = e.gantry(&["logs"]).await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again.stderr));
    assert_eq!(again.stdout, out.stdout);
    assert_eq!(saved_logs(&e.logs_dir("ml-training-job")), saved);

    let refused = e.gantry(&["--read-only", "launch"]).await;
    assert_eq!(refused.status.code(), Some(2));
    let refused = e.gantry(&["--read-only", "delete", "job", "--yes"]).await;
    assert_eq!(refused.status.code(), Some(2));
    let no_tty = e.gantry(&["delete", "job"]).await;
    assert_eq!(no_tty.status.code(), Some(2));
    assert!(text(&no_tty.stderr).contains("--yes"));

    let deleted = e.gantry(&["delete", "job", "--yes"]).await;
    assert_eq!(deleted.status.code(), Some(0), "{}", text(&deleted.stderr));
    assert!(text(&deleted.stdout).contains("deleted Job ml-training-job"));
    let none = e.gantry(&["logs"]).await;
    assert_eq!(none.status.code(), Some(1));
    drop(e.cloud);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_attempt_exits_1_and_a_retry_with_an_override_exits_0() {
    let e = CliEnv::start().await;
    let out = e
        .gantry(&[
            "launch",
            "--env",
            "SIM_FAIL_ATTEMPTS=5",
            "--env",
            "SIM_LOG_LINES=5",
        ])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let follow = e.gantry(&["logs", "-f"]).await;
    assert_eq!(follow.status.code(), Some(1), "{}", text(&follow.stderr));
    let stdout = text(&follow.stdout);
    assert_eq!(
        stdout.matches("RuntimeError: simulated failure").count(),
        3,
        "{stdout}"
    );

    let refused = e.gantry(&["--read-only", "retry"]).await;
    assert_eq!(refused.status.code(), Some(2));
    let retry = e.gantry(&["retry", "--env", "SIM_FAIL_ATTEMPTS=0"]).await;
    assert_eq!(retry.status.code(), Some(0), "{}", text(&retry.stderr));
    assert!(text(&retry.stdout).contains("ml-training-job-2 (attempt 2)"));
    let follow = e.gantry(&["logs", "--follow"]).await;
    assert_eq!(follow.status.code(), Some(0), "{}", text(&follow.stderr));
    assert!(text(&follow.stdout).starts_with("[ml-training-job-2-"));

    // Deleting one attempt by name keeps the other; a Job Gantry did not make is refused.
    let one = e
        .gantry(&["delete", "attempt", "ml-training-job", "--yes"])
        .await;
    assert_eq!(one.status.code(), Some(0), "{}", text(&one.stderr));
    let missing = e.gantry(&["delete", "attempt", "not-there", "--yes"]).await;
    assert_eq!(missing.status.code(), Some(2));
    // One attempt is not the Job: `delete job NAME` says which command deletes one.
    let named = e
        .gantry(&["delete", "job", "ml-training-job-2", "--yes"])
        .await;
    assert_eq!(named.status.code(), Some(2));
    assert!(
        text(&named.stderr).contains("gantry delete attempt ml-training-job-2"),
        "{}",
        text(&named.stderr)
    );
    drop(e.cloud);
}

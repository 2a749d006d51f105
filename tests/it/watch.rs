//! `gantry watch` through the real binary: the engine with no terminal, on its own simulated
//! cloud. Another terminal creates the cluster and launches; watch saves the attempt's lines
//! and prints its end; SIGTERM stops it with status 0.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry_test_support as common;

use std::process::Stdio;
use std::time::Duration;

use common::text;
use tokio::io::{AsyncBufReadExt, BufReader};

/// Only against a hung binary: nothing is asserted about time.
const HANG_GUARD: Duration = gantry_test_support::WAIT_BOUND;

#[tokio::test(flavor = "multi_thread")]
async fn watch_saves_what_another_terminal_launched_and_stops_on_sigterm() {
    let home = tempfile::tempdir().unwrap();
    let env = |c: &mut tokio::process::Command| {
        c.env("HOME", home.path())
            .env("XDG_CONFIG_HOME", home.path().join("config"))
            .env("XDG_STATE_HOME", home.path().join("state"))
            .env("KUBECONFIG", home.path().join("kubeconfig"))
            .env_remove("GOOGLE_CLOUD_PROJECT")
            .stdin(Stdio::null());
    };
    let mut watch = tokio::process::Command::new(env!("CARGO_BIN_EXE_gantry"));
    env(&mut watch);
    let mut watch = watch
        .args(["--sim", "--time-scale", "0.01", "watch"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(watch.stderr.take().unwrap()).lines();
    let mut stdout = BufReader::new(watch.stdout.take().unwrap()).lines();

    tokio::time::timeout(HANG_GUARD, async {
        // Where its simulated cloud is, for the other terminal.
        let dir = loop {
            let line = stderr.next_line().await.unwrap().expect("watch said where");
            if let Some(rest) = line.strip_prefix("gantry watch: simulated cloud: state in ") {
                break rest.split(" (").next().unwrap().to_string();
            }
        };
        let endpoints: serde_json::Value =
            serde_json::from_slice(&std::fs::read(format!("{dir}/endpoints.json")).unwrap())
                .unwrap();
        let gke = endpoints["gke"].as_str().unwrap().to_string();
        let other = |args: &[&str]| {
            let mut c = tokio::process::Command::new(env!("CARGO_BIN_EXE_gantry"));
            env(&mut c);
            c.args(["--gke-endpoint", &gke, "--access-token-file"])
                .arg(format!("{dir}/token"))
                .args(["--project", "demo-project", "--location", "us-central1-a"])
                .args(args)
                .output()
        };
        let up = other(&["up", "--wait"]).await.unwrap();
        assert_eq!(up.status.code(), Some(0), "{}", text(&up.stderr));
        let launch = other(&["launch", "--env", "SIM_LOG_LINES=7"])
            .await
            .unwrap();
        assert_eq!(launch.status.code(), Some(0), "{}", text(&launch.stderr));

        // Watch tells the attempt's end and its pod's log's, one line per change.
        let mut seen = Vec::new();
        let (mut succeeded, mut log_ended) = (false, false);
        while !(succeeded && log_ended) {
            let line = stdout.next_line().await.unwrap().expect("watch goes on");
            succeeded |= line.contains("attempt ml-training-job Succeeded");
            log_ended |= line.contains("log of ml-training-job-") && line.ends_with(" ended");
            seen.push(line);
        }
        assert!(
            seen.iter()
                .any(|l| l.contains("cluster ml-gke-cluster RUNNING")),
            "{seen:#?}"
        );
        // Every line saved, as the TUI saves it.
        let saved = home
            .path()
            .join("state/gantry/logs/ml-gke-cluster/ml-training-job");
        let files: Vec<Vec<u8>> = std::fs::read_dir(&saved)
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().ends_with(".log"))
            .map(|e| std::fs::read(e.path()).unwrap())
            .collect();
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].iter().filter(|c| **c == b'\n').count(), 7);
    })
    .await
    .expect("watch followed the launch");

    let pid = watch.id().unwrap() as i32;
    // kill(1), as an operator (or systemd) would.
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = tokio::time::timeout(HANG_GUARD, watch.wait())
        .await
        .expect("watch stops on SIGTERM")
        .unwrap();
    assert_eq!(status.code(), Some(0));
}

//! Security drills: read-only cannot be bypassed by the scriptable commands (the App's keys and
//! commands: `security_read_only`); no token is left anywhere after a whole simulated run; credential files are 0600;
//! deletes touch only what Gantry manages; a killed `gantry logs --follow` restarts cleanly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry_test_support as common;
use gantry_test_support::text;

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use futures::AsyncReadExt;
use gantry::sim::cloud::{DEMO_LOCATION, DEMO_PROJECT};
use gantry::sim::{SimCloud, SimOptions};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, LogParams, PostParams};

// ---- The binary ----

struct Env {
    cloud: SimCloud,
    home: tempfile::TempDir,
    sim_dir: PathBuf,
}

async fn env(clusters: Vec<String>) -> Env {
    let home = tempfile::tempdir().unwrap();
    let sim_dir = home.path().join("sim");
    let cloud = common::cloud_with(SimOptions {
        time_scale: 0.01,
        clusters,
        state_dir: Some(sim_dir.clone()),
        ..Default::default()
    })
    .await;
    Env {
        cloud,
        home,
        sim_dir,
    }
}

impl Env {
    fn command(&self, args: &[&str]) -> tokio::process::Command {
        let home = self.home.path();
        let mut c = tokio::process::Command::new(env!("CARGO_BIN_EXE_gantry"));
        c.args(["--gke-endpoint", self.cloud.gke_endpoint()])
            .arg("--access-token-file")
            .arg(self.sim_dir.join("token"))
            .args(["--project", DEMO_PROJECT, "--location", DEMO_LOCATION])
            .args(args)
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join("config"))
            .env("XDG_STATE_HOME", home.join("state"))
            .env("KUBECONFIG", home.join("kube/config"))
            .env_remove("GOOGLE_CLOUD_PROJECT")
            .env_remove("GOOGLE_APPLICATION_CREDENTIALS")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        c
    }

    async fn gantry(&self, args: &[&str]) -> Output {
        self.command(args).output().await.unwrap()
    }

    fn client(&self) -> kube::Client {
        common::kube_client(&self.cloud)
    }
}

async fn jobs(client: &kube::Client) -> Vec<String> {
    Api::<Job>::default_namespaced(client.clone())
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|j| j.metadata.name)
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn read_only_scriptable_commands_exit_2_and_change_nothing() {
    let e = env(vec![common::CLUSTER.into()]).await;
    let client = e.client();
    let launched = e.gantry(&["launch", "--env", "SIM_LOG_LINES=5"]).await;
    assert_eq!(
        launched.status.code(),
        Some(0),
        "{}",
        text(&launched.stderr)
    );
    let before = jobs(&client).await;
    for args in [
        &["--read-only", "up"][..],
        &["--read-only", "up", "--wait"],
        &["--read-only", "down", "--yes"],
        &["--read-only", "launch"],
        &["--read-only", "retry"],
        &["--read-only", "delete", "job", "--yes"],
        &[
            "--read-only",
            "delete",
            "attempt",
            "ml-training-job",
            "--yes",
        ],
        &["down", "--yes", "--read-only"],
    ] {
        let out = e.gantry(args).await;
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(
            text(&out.stderr).contains("read-only"),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(out.stdout.is_empty(), "{args:?}: {}", text(&out.stdout));
    }
    assert_eq!(jobs(&client).await, before);
    assert!(
        e.cloud
            .cluster(DEMO_PROJECT, DEMO_LOCATION, common::CLUSTER)
            .is_some(),
        "the cluster survives"
    );
    // Reading is allowed.
    let status = e.gantry(&["--read-only", "status", "--json"]).await;
    assert_eq!(status.status.code(), Some(0), "{}", text(&status.stderr));
}

#[tokio::test(flavor = "multi_thread")]
async fn delete_touches_only_what_gantry_manages() {
    let e = env(vec![common::CLUSTER.into()]).await;
    let client = e.client();
    // A Job with the training label that Gantry did not make.
    let stranger: Job = serde_json::from_value(serde_json::json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "someone-elses-training", "labels": {"job": "ml-training", "gantry.dev/job": "ml-training-job"}},
        "spec": {"backoffLimit": 0, "template": {"metadata": {"labels": {"job": "ml-training"}}, "spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "c", "image": "gcr.io/demo-project/ml-training-job:latest",
                "env": [{"name": "SIM_LOG_LINES", "value": "3"}]}]}}}
    }))
    .unwrap();
    Api::<Job>::default_namespaced(client.clone())
        .create(&PostParams::default(), &stranger)
        .await
        .unwrap();
    let launched = e.gantry(&["launch", "--env", "SIM_LOG_LINES=5"]).await;
    assert_eq!(
        launched.status.code(),
        Some(0),
        "{}",
        text(&launched.stderr)
    );
    let deleted = e.gantry(&["delete", "job", "--yes"]).await;
    assert_eq!(deleted.status.code(), Some(0), "{}", text(&deleted.stderr));
    assert!(
        !text(&deleted.stdout).contains("someone-elses"),
        "{}",
        text(&deleted.stdout)
    );
    // Named, it is refused too.
    let named = e
        .gantry(&["delete", "attempt", "someone-elses-training", "--yes"])
        .await;
    assert_eq!(named.status.code(), Some(2), "{}", text(&named.stdout));
    let left = jobs(&client).await;
    assert!(
        left.contains(&"someone-elses-training".to_string()),
        "{left:?}"
    );
    let job = Api::<Job>::default_namespaced(client.clone())
        .get("someone-elses-training")
        .await
        .unwrap();
    assert!(job.metadata.deletion_timestamp.is_none());
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn a_whole_run_leaves_no_token_anywhere() {
    use std::os::unix::fs::PermissionsExt;
    let e = env(vec![]).await;
    let token = e.cloud.token();
    let mut outputs: Vec<(String, Output)> = Vec::new();
    for args in [
        &["up", "--wait"][..],
        &["status", "--json"],
        &[
            "launch",
            "--env",
            "SIM_LOG_LINES=30",
            "--parallelism",
            "2",
            "--completions",
            "2",
            "--indexed",
        ],
        &["logs", "--follow"],
        &["logs"],
        &["status", "--json"],
        &["delete", "job", "--yes"],
        &["down", "--yes"],
        &["status", "--json"],
    ] {
        let out = e.gantry(args).await;
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            text(&out.stderr)
        );
        outputs.push((args.join(" "), out));
    }
    for (what, out) in &outputs {
        assert!(
            !text(&out.stdout).contains(&token),
            "gantry {what} printed the token"
        );
        assert!(
            !text(&out.stderr).contains(&token),
            "gantry {what} printed the token"
        );
    }
    // The simulator's own files are the only place the token may be (it is the credential).
    let sim_dir = e.sim_dir.clone();
    let mut saw_log = false;
    let mut kubeconfigs = 0;
    for file in files_under(e.home.path()) {
        if file.starts_with(&sim_dir) {
            continue;
        }
        let bytes = std::fs::read(&file).unwrap();
        assert!(
            !bytes.windows(token.len()).any(|w| w == token.as_bytes()),
            "{} holds the token",
            file.display()
        );
        saw_log |= file.extension().is_some_and(|x| x == "log");
        if file.file_name().is_some_and(|n| n == "config")
            && file.parent().is_some_and(|p| p.ends_with("kube"))
        {
            kubeconfigs += 1;
            let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{} is {mode:o}", file.display());
        }
    }
    assert!(saw_log, "the run saved logs (and they were searched)");
    eprintln!("kubeconfig files written by gantry: {kubeconfigs}");
    let mode = std::fs::metadata(sim_dir.join("token"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600);
    let mode = std::fs::metadata(sim_dir.join("kubeconfig"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_follow_restarts_cleanly() {
    let e = env(vec![common::CLUSTER.into()]).await;
    let client = e.client();
    let launched = e
        .gantry(&[
            "launch",
            "--env",
            "SIM_LOG_LINES=20000",
            "--env",
            "SIM_LINES_PER_SECOND=40",
        ])
        .await;
    assert_eq!(
        launched.status.code(),
        Some(0),
        "{}",
        text(&launched.stderr)
    );
    let mut child = e.command(&["logs", "--follow"]).spawn().unwrap();
    // Kill it once it has printed a few thousand lines.
    {
        use tokio::io::AsyncReadExt as _;
        let mut stdout = child.stdout.take().unwrap();
        let mut seen = 0usize;
        let mut buf = vec![0u8; 65536];
        while seen < 3000 {
            let n = stdout.read(&mut buf).await.unwrap();
            assert!(n > 0, "the follow ended early");
            seen += buf[..n].iter().filter(|b| **b == b'\n').count();
        }
        let pid = child.id().unwrap() as i32;
        // SIGKILL: no chance to flush or clean up.
        assert_eq!(unsafe_kill(pid), 0);
        let status = child.wait().await.unwrap();
        assert!(!status.success());
        let dir = e
            .home
            .path()
            .join("state/gantry/logs")
            .join(common::CLUSTER)
            .join("ml-training-job");
        let pods = Api::<Pod>::default_namespaced(client.clone())
            .list(&ListParams::default().labels("job-name=ml-training-job"))
            .await
            .unwrap();
        let pod = pods.items[0].metadata.name.clone().unwrap();
        let saved = std::fs::read(dir.join(format!("{pod}.log"))).unwrap();
        let served = plain_log(&client, &pod).await;
        // What was saved is the log's beginning, whole lines or the one being written.
        assert!(
            served.starts_with(&saved),
            "the saved file is not a prefix of the log"
        );
        // Lines are saved before they are printed: every line printed before the kill is on
        // disk (nothing of the last second is lost, let alone more).
        let saved_lines = saved.iter().filter(|b| **b == b'\n').count();
        assert!(
            saved_lines >= seen,
            "saved {saved_lines} lines, printed {seen}"
        );
    }
    // A new follow picks up where the file stops: in the end it is the log, each line once.
    let out = e.gantry(&["logs", "--follow"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let dir = e
        .home
        .path()
        .join("state/gantry/logs")
        .join(common::CLUSTER)
        .join("ml-training-job");
    let pods = Api::<Pod>::default_namespaced(client.clone())
        .list(&ListParams::default().labels("job-name=ml-training-job"))
        .await
        .unwrap();
    for p in pods.items {
        let pod = p.metadata.name.unwrap();
        let saved = std::fs::read(dir.join(format!("{pod}.log"))).unwrap();
        let served = plain_log(&client, &pod).await;
        assert!(
            saved == served,
            "{pod}: {} saved, {} served",
            saved.len(),
            served.len()
        );
    }
}

fn unsafe_kill(pid: i32) -> i32 {
    std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .map(|s| if s.success() { 0 } else { 1 })
        .unwrap_or(1)
}

async fn plain_log(client: &kube::Client, pod: &str) -> Vec<u8> {
    let mut body = Vec::new();
    Api::<Pod>::default_namespaced(client.clone())
        .log_stream(pod, &LogParams::default())
        .await
        .unwrap()
        .read_to_end(&mut body)
        .await
        .unwrap();
    body
}

// ---- Signals restore the terminal (tmux) ----

fn tmux(socket: &str, args: &[&str]) -> std::process::Output {
    std::process::Command::new("tmux")
        .args(["-L", socket])
        .args(args)
        .output()
        .unwrap()
}

/// Runs the TUI in tmux, sends `signal` to it, and checks the alternate screen is left.
fn signal_restores_the_terminal(signal: &str) {
    if !common::tmux::available() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let socket = format!("gantry-sec-{signal}-{}", std::process::id());
    let command = format!(
        "env HOME={h} XDG_STATE_HOME={h}/state XDG_CONFIG_HOME={h}/config TERM=xterm-256color {bin} --sim --time-scale 0.01; echo GANTRY-EXIT=$?; sleep 600",
        h = home.path().display(),
        bin = env!("CARGO_BIN_EXE_gantry"),
    );
    struct Kill(String);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = tmux(&self.0, &["kill-server"]);
        }
    }
    let ok = tmux(
        &socket,
        &[
            "new-session",
            "-d",
            "-s",
            "s",
            "-x",
            "100",
            "-y",
            "30",
            &command,
        ],
    );
    assert!(ok.status.success());
    let _kill = Kill(socket.clone());
    let wait_for = |want: &dyn Fn(&str) -> bool| {
        let start = std::time::Instant::now();
        loop {
            let screen = text(&tmux(&socket, &["capture-pane", "-p", "-t", "s"]).stdout);
            if want(&screen) {
                return screen;
            }
            assert!(
                start.elapsed() < gantry_test_support::WAIT_BOUND,
                "{screen}"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    };
    wait_for(&|s| s.contains("NOT CREATED"));
    let shell = text(&tmux(&socket, &["list-panes", "-t", "s", "-F", "#{pane_pid}"]).stdout);
    let children = std::process::Command::new("pgrep")
        .args(["-P", shell.trim()])
        .output()
        .unwrap();
    let pid = text(&children.stdout)
        .lines()
        .next()
        .expect("the gantry process")
        .trim()
        .to_string();
    let sent = std::process::Command::new("kill")
        .args([&format!("-{signal}"), &pid])
        .status()
        .unwrap();
    assert!(sent.success());
    let screen = wait_for(&|s| s.contains("GANTRY-EXIT="));
    eprintln!("after SIG{signal}:\n{}", screen.trim());
    assert!(
        !screen.contains("NOT CREATED"),
        "the TUI is still on screen:\n{screen}"
    );
    assert!(
        !screen.contains("┌"),
        "the TUI is still on screen:\n{screen}"
    );
}

#[test]
fn sigterm_restores_the_terminal() {
    signal_restores_the_terminal("TERM");
}

#[test]
fn sighup_restores_the_terminal() {
    signal_restores_the_terminal("HUP");
}

//! What the GPUs are doing, end to end through the real binary: `gantry --sim watch` with a T4
//! pool, the simulator's DCGM exporter read through the API server's pod proxy. A training pod
//! whose GPU does nothing (`SIM_GPU_IDLE=1`) is told idle once (watch's line naming the pod, the
//! GPU and its cost an hour; the webhook once), `gantry status --json` shows its GPU's figures,
//! and `kubectl get --raw` reads the exporter through the pod proxy; on a cluster with no
//! exporter (`--fault no-dcgm`) the GPU metrics are n/a, said once, and the run goes on as
//! before.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Stdio;
use std::time::Duration;

use gantry_test_support::text;
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{ChildStdout, Command};

use crate::notify_receiver::Receiver;

/// Only against a hung binary: nothing is asserted about time.
const HANG_GUARD: Duration = gantry_test_support::WAIT_BOUND;

/// One n1-standard-1 and one n1-standard-4 with a T4; a Job of one pod asking for one GPU.
fn config(env: &str, notify: &str) -> String {
    format!(
        "[cluster]\nnode-count = 1\n\
[cluster.gpu-pool]\nname = \"gpu-pool\"\nmachine-type = \"n1-standard-4\"\nnode-count = 1\n\
accelerator-type = \"nvidia-tesla-t4\"\naccelerator-count = 1\n\
[job.resources]\ngpus = 1\n[job.env]\n{env}\n\
[guards]\ngpu-idle-after = \"2s\"\n{notify}"
    )
}

/// A `gantry --sim … watch`, and a way to run other commands against its simulated cloud.
struct Watched {
    home: tempfile::TempDir,
    stdout: Lines<BufReader<ChildStdout>>,
    gke: String,
    sim_dir: String,
    _watch: tokio::process::Child,
}

impl Watched {
    async fn start(flags: &[&str], config: &str) -> Watched {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(home.path().join("config.toml"), config).unwrap();
        let mut watch = Command::new(env!("CARGO_BIN_EXE_gantry"));
        env(&mut watch, home.path());
        let mut watch = watch
            .args(["--sim", "--time-scale", "0.01"])
            .args(flags)
            .arg("watch")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(watch.stderr.take().unwrap()).lines();
        let stdout = BufReader::new(watch.stdout.take().unwrap()).lines();
        let sim_dir = loop {
            let line = stderr.next_line().await.unwrap().expect("watch said where");
            if let Some(rest) = line.strip_prefix("gantry watch: simulated cloud: state in ") {
                break rest.split(" (").next().unwrap().to_string();
            }
        };
        tokio::spawn(async move { while let Ok(Some(_)) = stderr.next_line().await {} });
        let endpoints: serde_json::Value =
            serde_json::from_slice(&std::fs::read(format!("{sim_dir}/endpoints.json")).unwrap())
                .unwrap();
        Watched {
            gke: endpoints["gke"].as_str().unwrap().to_string(),
            home,
            stdout,
            sim_dir,
            _watch: watch,
        }
    }

    /// `gantry ARGS` against the watched simulated cloud; its stdout.
    async fn ok(&self, args: &[&str]) -> String {
        let mut c = Command::new(env!("CARGO_BIN_EXE_gantry"));
        env(&mut c, self.home.path());
        let out = c
            .args(["--gke-endpoint", &self.gke, "--access-token-file"])
            .arg(format!("{}/token", self.sim_dir))
            .args(["--project", "demo-project", "--location", "us-central1-a"])
            .args(args)
            .output()
            .await
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            text(&out.stderr)
        );
        text(&out.stdout)
    }

    /// Watch's lines until one holds `what`: it, and those before.
    async fn until(&mut self, what: &str) -> (String, Vec<String>) {
        let mut before = Vec::new();
        loop {
            let line = self
                .stdout
                .next_line()
                .await
                .unwrap()
                .expect("watch goes on");
            if line.contains(what) {
                return (line, before);
            }
            before.push(line);
        }
    }

    fn kubectl(&self, args: &[&str]) -> std::process::Output {
        std::process::Command::new("kubectl")
            .args(args)
            .env("KUBECONFIG", self.home.path().join("kubeconfig"))
            .env("HOME", self.home.path())
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }
}

fn env(c: &mut Command, home: &std::path::Path) {
    c.env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("xdg-config"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env("KUBECONFIG", home.join("kubeconfig"))
        .env_remove("GOOGLE_CLOUD_PROJECT")
        .arg("--config")
        .arg(home.join("config.toml"))
        .stdin(Stdio::null());
}

#[tokio::test(flavor = "multi_thread")]
async fn an_idle_gpu_is_told_once_with_its_cost_and_its_figures_are_in_status_and_kubectl() {
    let mut hook = Receiver::start(Vec::new()).await;
    let notify = format!(
        "[[notify]]\nkind = \"webhook\"\nurl = \"{}\"\nevents = [\"gpu-idle\"]\n",
        hook.url()
    );
    let config = config("SIM_GPU_IDLE = \"1\"\nSIM_LOG_LINES = \"100000\"", &notify);
    let mut watched = Watched::start(&[], &config).await;
    tokio::time::timeout(HANG_GUARD, async {
        watched.ok(&["up", "--wait"]).await;
        watched.ok(&["launch"]).await;

        // watch's line: the pod, its GPU, what it costs an hour (a T4 on demand).
        let (idle, _) = watched.until("idle for").await;
        assert!(idle.contains("warning"), "{idle}");
        assert!(idle.contains("pod ml-training-job-"), "{idle}");
        assert!(idle.contains("GPU 0 (Tesla T4)"), "{idle}");
        assert!(idle.contains("it costs $0.35/h"), "{idle}");

        let message = hook.next_within(HANG_GUARD).await.json();
        assert_eq!(message["event"], "gpu-idle", "{message:#}");
        assert_eq!(message["severity"], "warning", "{message:#}");
        assert_eq!(message["detail"]["gpu"], 0, "{message:#}");
        assert!(
            message["detail"]["pod"]
                .as_str()
                .unwrap()
                .starts_with("ml-training-job-"),
            "{message:#}"
        );

        // status --json: the running pod's GPU, its figures from the exporter.
        let status: serde_json::Value =
            serde_json::from_str(&watched.ok(&["status", "--json"]).await).unwrap();
        let pod = &status["job"]["attempts"][0]["pods"][0];
        assert_eq!(pod["gpus"], 1, "{pod:#}");
        let gpu = &pod["accelerators"][0];
        assert_eq!(gpu["index"], 0, "{pod:#}");
        assert_eq!(gpu["model"], "Tesla T4", "{pod:#}");
        assert_eq!(gpu["util"], 0.0, "{pod:#}");
        assert_eq!(gpu["memTotalBytes"], 15360u64 << 20, "{pod:#}");
        let used = gpu["memUsedBytes"].as_u64().unwrap();
        assert!(used > 0 && used < 15360u64 << 20, "{pod:#}");
        assert!(gpu["uuid"].as_str().unwrap().starts_with("GPU-"), "{pod:#}");
        let shown = watched.ok(&["status"]).await;
        assert!(shown.contains("    GPU 0 0% 4.7G/15G"), "{shown}");

        // kubectl, unmodified, reads the exporter through the API server's pod proxy.
        if gantry_test_support::kubectl_available() {
            let pods = watched.kubectl(&[
                "get",
                "pods",
                "-n",
                "gke-managed-system",
                "-l",
                "app.kubernetes.io/name=gke-managed-dcgm-exporter",
                "-o",
                "jsonpath={.items[0].metadata.name}",
            ]);
            let exporter = text(&pods.stdout);
            assert!(
                exporter.starts_with("dcgm-exporter-"),
                "{}",
                text(&pods.stderr)
            );
            let path =
                format!("/api/v1/namespaces/gke-managed-system/pods/{exporter}:9400/proxy/metrics");
            let raw = watched.kubectl(&["get", "--raw", &path]);
            let metrics = text(&raw.stdout);
            assert!(raw.status.success(), "{}", text(&raw.stderr));
            assert!(
                metrics.contains("# TYPE DCGM_FI_DEV_GPU_UTIL gauge"),
                "{metrics}"
            );
            let util = metrics
                .lines()
                .find(|l| l.starts_with("DCGM_FI_DEV_GPU_UTIL{"))
                .unwrap();
            assert!(util.contains(",pod=\"ml-training-job-"), "{util}");
            assert!(util.ends_with("} 0"), "{util}");
        }

        // Told once: the status and kubectl rounds above took many readings.
        assert!(hook.more().is_none(), "the idle spell was sent twice");
    })
    .await
    .expect("the idle GPU was never told");
}

#[tokio::test(flavor = "multi_thread")]
async fn without_an_exporter_gpu_metrics_are_na_said_once_and_the_run_goes_on() {
    let config = config("SIM_LOG_LINES = \"500\"", "");
    let mut watched = Watched::start(&["--fault", "no-dcgm"], &config).await;
    tokio::time::timeout(HANG_GUARD, async {
        watched.ok(&["up", "--wait"]).await;
        watched.ok(&["launch"]).await;
        let (na, _) = watched.until("GPU metrics n/a").await;
        assert!(
            na.contains(
                "no DCGM exporter found (on GKE: gcloud container clusters update CLUSTER --monitoring=SYSTEM,DCGM)"
            ),
            "{na}"
        );
        let (_, between) = watched.until("attempt ml-training-job Succeeded").await;
        assert!(
            !between.iter().any(|l| l.contains("GPU metrics")),
            "said more than once: {between:#?}"
        );
        let status: serde_json::Value =
            serde_json::from_str(&watched.ok(&["status", "--json"]).await).unwrap();
        assert_eq!(status["job"]["attempts"][0]["status"], "Succeeded", "{status:#}");
    })
    .await
    .expect("the run did not go on");
}

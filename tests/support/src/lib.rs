//! What Gantry's tests and benchmarks share, compiled once: a simulated cloud on loopback and
//! clients for it (`cloud_with`, `kube_client`, `CliEnv`), fixtures and property-test settings,
//! one viewer over a model fed plain values (`tui`), the real binary in tmux (`tmux`), and an SSH
//! client that sends what OpenSSH never would (`ssh_client`).
//! Test code: it unwraps, as tests do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod cases;
pub mod fixtures;
pub mod gke_cli;
pub mod serve;
pub mod ssh_client;
pub mod tmux;
pub mod tui;

use std::path::PathBuf;
use std::process::{Output, Stdio};
use std::time::Duration;

use gantry::gke::target::context_name;
use gantry::sim::cloud::{DEMO_LOCATION, DEMO_PROJECT};
use gantry::sim::{SimCloud, SimOptions};

pub const CLUSTER: &str = "ml-gke-cluster";

/// The `gantry` binary this test run built: beside the test binary's `deps` directory
/// (`target/<profile>/gantry`). Cargo tells integration tests where it is only at their own
/// compile time, so a shared crate finds it from the running test.
pub fn gantry_bin() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .unwrap()
        .to_path_buf();
    let bin = profile_dir.join(format!("gantry{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.is_file(),
        "no gantry binary at {}: run the tests through cargo test, which builds it",
        bin.display()
    );
    bin
}

pub fn init() {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
}

/// A simulated cloud with the seed's cluster RUNNING, a hundred times faster than life.
pub async fn cloud_with_cluster() -> SimCloud {
    cloud_with(SimOptions {
        time_scale: 0.01,
        clusters: vec![CLUSTER.into()],
        ..Default::default()
    })
    .await
}

pub async fn cloud_with(options: SimOptions) -> SimCloud {
    init();
    SimCloud::start(options)
        .await
        .expect("simulated cloud starts")
}

pub fn endpoint(cloud: &SimCloud) -> String {
    cloud
        .cluster(DEMO_PROJECT, DEMO_LOCATION, CLUSTER)
        .expect("cluster runs")
        .endpoint()
}

/// The pods of `job` (an attempt of the default config's training Job) to follow: its namespace
/// and its container.
pub fn training_job(job: &str) -> gantry::k8s::logs::TailTarget {
    let config = gantry::config::JobConfig::default();
    gantry::k8s::logs::TailTarget {
        namespace: config.namespace,
        job: job.into(),
        container: Some(config.container),
    }
}

/// A kube client for the seed cluster, trusting the simulator's CA, with the current token.
pub fn kube_client(cloud: &SimCloud) -> kube::Client {
    kube_client_with_token(cloud, &cloud.token())
}

pub fn kube_client_with_token(cloud: &SimCloud, token: &str) -> kube::Client {
    client_at(cloud, &endpoint(cloud), token)
}

/// A kube client for the cluster API server at `endpoint` (`IP:port`) of `cloud`, with the
/// current token.
pub fn kube_client_for(cloud: &SimCloud, endpoint: &str) -> kube::Client {
    client_at(cloud, endpoint, &cloud.token())
}

fn client_at(cloud: &SimCloud, endpoint: &str, token: &str) -> kube::Client {
    let mut config = kube::Config::new(format!("https://{endpoint}").parse().unwrap());
    let der = rustls_pemfile::certs(&mut cloud.ca_pem().as_bytes())
        .next()
        .unwrap()
        .unwrap();
    config.root_cert = Some(vec![der.to_vec()]);
    config.auth_info.token = Some(token.to_string().into());
    config.default_namespace = "default".into();
    config.read_timeout = Some(Duration::from_secs(300));
    kube::Client::try_from(config).unwrap()
}

/// A raw HTTPS client for requests kube's typed API does not make (tables, odd parameters).
pub fn https_client(cloud: &SimCloud) -> reqwest::Client {
    let cert = reqwest::Certificate::from_pem(cloud.ca_pem().as_bytes()).unwrap();
    reqwest::Client::builder()
        .tls_certs_only([cert])
        .build()
        .unwrap()
}

/// The real binary against a simulated cloud with the seed's cluster RUNNING, reached through
/// the kubeconfig context the simulator writes, in a HOME of its own.
pub struct CliEnv {
    pub cloud: SimCloud,
    pub home: tempfile::TempDir,
    pub context: String,
}

impl CliEnv {
    pub async fn start() -> CliEnv {
        Self::start_with(SimOptions::default()).await
    }

    /// With `options` for the simulator (its time scale, cluster and state directory are the
    /// environment's own).
    pub async fn start_with(options: SimOptions) -> CliEnv {
        let home = tempfile::tempdir().unwrap();
        let cloud = cloud_with(SimOptions {
            time_scale: 0.01,
            clusters: vec![CLUSTER.into()],
            state_dir: Some(home.path().join("sim")),
            ..options
        })
        .await;
        CliEnv {
            cloud,
            context: context_name(DEMO_PROJECT, DEMO_LOCATION, CLUSTER),
            home,
        }
    }

    /// `gantry ARGS --context <the cluster's> --project demo-project`.
    pub async fn gantry(&self, args: &[&str]) -> Output {
        self.command()
            .args(args)
            .args(["--context", &self.context, "--project", DEMO_PROJECT])
            .output()
            .await
            .unwrap()
    }

    /// `gantry --context <the cluster's> --project demo-project ARGS -- TAIL` in `dir`: for a
    /// launch's command after `--`, which takes everything after it.
    pub async fn gantry_in(&self, dir: &std::path::Path, args: &[&str], tail: &[&str]) -> Output {
        self.command()
            .args(["--context", &self.context, "--project", DEMO_PROJECT])
            .args(args)
            .arg("--")
            .args(tail)
            .current_dir(dir)
            .output()
            .await
            .unwrap()
    }

    /// The binary with this environment's HOME, state, config and kubeconfig, no arguments.
    pub fn command(&self) -> tokio::process::Command {
        let home = self.home.path();
        let mut command = tokio::process::Command::new(gantry_bin());
        command
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join("config"))
            .env("XDG_STATE_HOME", home.join("state"))
            .env("KUBECONFIG", home.join("sim/kubeconfig"))
            .env_remove("GOOGLE_CLOUD_PROJECT")
            .stdin(Stdio::null());
        command
    }

    /// Where `gantry logs` saves the lines of an attempt.
    pub fn logs_dir(&self, job: &str) -> std::path::PathBuf {
        self.home
            .path()
            .join("state/gantry/logs")
            .join(&self.context)
            .join(job)
    }
}

/// The engine's session on a simulated cloud, as the TUI opens it on GKE: the simulator's GKE
/// endpoint and token file, the demo project and location, no kubeconfig written, logs saved
/// under `logs_root`.
pub fn engine_options(
    cloud: &SimCloud,
    sim_dir: &std::path::Path,
    logs_root: &std::path::Path,
) -> gantry::engine::SessionOptions {
    gantry::engine::SessionOptions {
        target: gantry::connect::Target {
            named: gantry::gke::target::Named {
                project: Some(DEMO_PROJECT.into()),
                location: Some(DEMO_LOCATION.into()),
            },
            access_token_file: Some(sim_dir.join("token")),
            gke_endpoint: Some(cloud.gke_endpoint().to_string()),
            no_kubeconfig: true,
            ..Default::default()
        },
        sim: false,
        time_scale: 1.0,
        faults: Vec::new(),
        replay_dir: None,
        run_images: Vec::new(),
        run_code: false,
        read_only: false,
        logs_root: Some(logs_root.to_path_buf()),
        audit_file: Some(logs_root.join("audit.jsonl")),
        clock: Default::default(),
        in_cluster: false,
    }
}

/// Whether kubectl can be used: when it is missing, a test skips (saying so), unless
/// `GANTRY_REQUIRE_KUBECTL=1` makes that a failure (as CI does).
pub fn kubectl_available() -> bool {
    let present = std::process::Command::new("kubectl")
        .arg("version")
        .arg("--client")
        .output()
        .is_ok_and(|o| o.status.success());
    if !present {
        assert!(
            std::env::var("GANTRY_REQUIRE_KUBECTL").as_deref() != Ok("1"),
            "GANTRY_REQUIRE_KUBECTL=1 but kubectl is not installed"
        );
        eprintln!(
            "skipping: kubectl is not installed (set GANTRY_REQUIRE_KUBECTL=1 to make this a failure)"
        );
    }
    present
}

/// The python3 interpreter itself (not a version manager's shim, which would add variables of
/// its own to a process pod's environment), for the tests that run process pods. When it is
/// missing a test skips (saying so), unless `GANTRY_REQUIRE_PYTHON3=1` makes that a failure (as
/// CI does).
pub fn python3() -> Option<PathBuf> {
    let found = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|path| !path.is_empty());
    if found.is_none() {
        assert!(
            std::env::var("GANTRY_REQUIRE_PYTHON3").as_deref() != Ok("1"),
            "GANTRY_REQUIRE_PYTHON3=1 but python3 is not installed"
        );
        eprintln!(
            "skipping: python3 is not installed (set GANTRY_REQUIRE_PYTHON3=1 to make this a failure)"
        );
    }
    found.map(PathBuf::from)
}

/// A process's output as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `command` as the person at this machine asks it, through the one gate (not read-only).
pub fn approved(command: gantry::engine::Command) -> gantry::engine::Approved {
    match gantry::engine::Gate::new(gantry::engine::Principal::local(), false).pass(command) {
        Ok(approved) => approved,
        Err(refused) => panic!("{refused}"),
    }
}

/// Every saved log in `saved` (`<pod>.log`) is its pod's log as `kubectl logs` serves it from
/// the cluster of `kubeconfig`, byte for byte; how many pods' logs there were.
pub fn saved_logs_are_the_pods(saved: &std::path::Path, kubeconfig: &std::path::Path) -> usize {
    let mut files = 0;
    for entry in std::fs::read_dir(saved).unwrap().filter_map(Result::ok) {
        let name = entry.file_name().to_string_lossy().to_string();
        let Some(pod) = name.strip_suffix(".log") else {
            continue;
        };
        let out = std::process::Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .args(["logs", pod])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mine = std::fs::read(entry.path()).unwrap();
        assert!(
            mine == out.stdout,
            "{name}: {} bytes saved, {} served",
            mine.len(),
            out.stdout.len()
        );
        files += 1;
    }
    files
}

/// How long a test waits for anything: a failing test fails within a minute.
pub const WAIT_BOUND: Duration = Duration::from_secs(60);

/// kube's `await_condition`, bounded by [`WAIT_BOUND`]: a condition that never holds fails the
/// test, naming the object, instead of hanging it.
pub async fn await_condition<K>(
    api: kube::Api<K>,
    name: &str,
    cond: impl kube::runtime::wait::Condition<K>,
) -> Result<Option<K>, kube::runtime::wait::Error>
where
    K: Clone + std::fmt::Debug + Send + serde::de::DeserializeOwned + kube::Resource + 'static,
{
    tokio::time::timeout(
        WAIT_BOUND,
        kube::runtime::wait::await_condition(api, name, cond),
    )
    .await
    .unwrap_or_else(|_| panic!("{name}: the condition did not hold within {WAIT_BOUND:?}"))
}

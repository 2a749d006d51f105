//! The real `gantry` binary's `up`, `status` and `down` against a simulated cloud, reached only
//! through `--gke-endpoint` and `--access-token-file`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry_test_support as common;
use gantry_test_support::text;

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;

use gantry::sim::{SimCloud, SimOptions};
use serde_json::Value;

/// Only a guard against a hung binary; nothing asserts how long anything takes.
const PATIENCE: Duration = gantry_test_support::WAIT_BOUND;

struct Env {
    cloud: SimCloud,
    dir: tempfile::TempDir,
}

impl Env {
    async fn start(clusters: Vec<String>) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let cloud = common::cloud_with(SimOptions {
            state_dir: Some(dir.path().join("sim")),
            time_scale: 0.001,
            clusters,
            ..Default::default()
        })
        .await;
        std::fs::create_dir_all(dir.path().join("gcloud")).unwrap();
        Self { cloud, dir }
    }

    fn token_file(&self) -> PathBuf {
        self.dir.path().join("sim").join("token")
    }

    /// `gantry ARGS --project … --location … --gke-endpoint … --access-token-file …`.
    async fn gantry(&self, args: &[&str]) -> Output {
        let mut full: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        full.extend([
            "--project".into(),
            "demo-project".into(),
            "--location".into(),
            "us-central1-a".into(),
            "--gke-endpoint".into(),
            self.cloud.gke_endpoint().into(),
            "--access-token-file".into(),
            self.token_file().display().to_string(),
        ]);
        self.raw(&full).await
    }

    /// The binary with exactly these arguments, isolated from the user's config and gcloud.
    async fn raw(&self, args: &[String]) -> Output {
        run(args, self.dir.path()).await
    }
}

async fn run(args: &[String], home: &Path) -> Output {
    run_with(args, home, &[]).await
}

async fn run_with(args: &[String], home: &Path, vars: &[(&str, &str)]) -> Output {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_gantry"));
    let child = command
        .args(args)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env("HOME", home)
        .env("KUBECONFIG", home.join("kube").join("config"))
        .env("CLOUDSDK_CONFIG", home.join("gcloud"))
        .env_remove("GOOGLE_CLOUD_PROJECT")
        .env_remove("CLOUDSDK_CORE_PROJECT")
        .env_remove("CLOUDSDK_COMPUTE_ZONE")
        .env_remove("CLOUDSDK_COMPUTE_REGION")
        .env_remove("GOOGLE_APPLICATION_CREDENTIALS")
        .env("NO_COLOR", "1")
        .envs(vars.iter().copied())
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    tokio::time::timeout(PATIENCE, child)
        .await
        .expect("gantry hung")
        .unwrap()
}

fn status_json(out: &Output) -> Value {
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test]
async fn up_status_down_against_the_simulator() {
    let env = Env::start(vec![]).await;

    let before = status_json(&env.gantry(&["status", "--json"]).await);
    assert_eq!(before["cluster"]["status"], "NOT_FOUND");
    assert_eq!(before["cluster"]["name"], "ml-gke-cluster");
    assert!(before["cluster"]["costPerHour"].is_null(), "{before}");

    let up = env.gantry(&["up", "--wait"]).await;
    let stdout = text(&up.stdout);
    assert_eq!(up.status.code(), Some(0), "{stdout}\n{}", text(&up.stderr));
    assert!(stdout.contains("create started"), "{stdout}");
    assert!(
        stdout.contains("create DONE") || stdout.contains("create done"),
        "{stdout}"
    );
    assert!(stdout.contains("is RUNNING"), "{stdout}");

    let now = status_json(&env.gantry(&["status", "--json"]).await);
    let c = &now["cluster"];
    assert_eq!(c["status"], "RUNNING");
    assert_eq!(c["name"], "ml-gke-cluster");
    assert_eq!(c["location"], "us-central1-a");
    assert_eq!(c["nodeCount"], 3);
    assert_eq!(c["machineType"], "n1-standard-1");
    assert!(c["endpoint"].as_str().unwrap().starts_with("127.0.0.1:"));
    assert!(!c["version"].as_str().unwrap().is_empty());
    // 3 × n1-standard-1 with 100 GB pd-balanced each in us-central1, and GKE's fee: the price
    // snapshot's $0.2836/h; so far, the meter's: the nodes since their creation a moment ago and
    // the fee (a lower bound, `costSoFarPartial`, once the cluster is older than the few seconds
    // no node can come and go in: `gantry status` watches none).
    assert_eq!(c["costPerHour"], 0.2836, "{c}");
    let so_far = c["costSoFar"].as_f64().unwrap();
    assert!((0.0..0.2836).contains(&so_far), "{c}");
    assert!(c["costSoFarPartial"].is_boolean(), "{c}");

    let human = env.gantry(&["status"]).await;
    assert_eq!(human.status.code(), Some(0));
    assert!(text(&human.stdout).contains("RUNNING"));

    // Again: adopted, not created twice.
    let again = env.gantry(&["up", "--wait"]).await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again.stderr));
    assert!(
        text(&again.stdout).contains("already"),
        "{}",
        text(&again.stdout)
    );

    // Without --yes and with no terminal to ask on, nothing is deleted.
    let refused = env.gantry(&["down"]).await;
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        text(&refused.stderr).contains("--yes"),
        "{}",
        text(&refused.stderr)
    );
    let read_only = env.gantry(&["down", "--yes", "--read-only"]).await;
    assert_eq!(read_only.status.code(), Some(2));
    assert!(text(&read_only.stderr).contains("read-only"));
    assert_eq!(
        status_json(&env.gantry(&["status", "--json"]).await)["cluster"]["status"],
        "RUNNING"
    );

    let down = env.gantry(&["down", "--yes"]).await;
    assert_eq!(down.status.code(), Some(0), "{}", text(&down.stderr));
    assert!(text(&down.stdout).contains("deleted"));
    let after = status_json(&env.gantry(&["status", "--json"]).await);
    assert_eq!(after["cluster"]["status"], "NOT_FOUND");
    let twice = env.gantry(&["down", "--yes"]).await;
    assert_eq!(twice.status.code(), Some(0), "{}", text(&twice.stderr));
}

#[tokio::test]
async fn up_without_wait_starts_and_returns() {
    let env = Env::start(vec![]).await;
    let out = env.gantry(&["up"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("creating"),
        "{}",
        text(&out.stdout)
    );
    let status = status_json(&env.gantry(&["status", "--json"]).await);
    let s = status["cluster"]["status"].as_str().unwrap().to_string();
    assert!(s == "PROVISIONING" || s == "RUNNING", "{s}");
}

#[tokio::test]
async fn failures_have_exit_codes() {
    let env = Env::start(vec![]).await;

    // Bad input: 2, with the fix named.
    let read_only = env.gantry(&["up", "--wait", "--read-only"]).await;
    assert_eq!(read_only.status.code(), Some(2));
    let no_project: Vec<String> = [
        "status",
        "--location",
        "us-central1-a",
        "--gke-endpoint",
        env.cloud.gke_endpoint(),
        "--access-token-file",
        &env.token_file().display().to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let out = env.raw(&no_project).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--project"),
        "{}",
        text(&out.stderr)
    );
    let no_token: Vec<String> = [
        "status",
        "--project",
        "demo-project",
        "--location",
        "us-central1-a",
        "--gke-endpoint",
        env.cloud.gke_endpoint(),
        "--access-token-file",
        "/nonexistent/token",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let out = env.raw(&no_token).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("gcloud auth application-default login"),
        "{}",
        text(&out.stderr)
    );
    // No --access-token-file and no Application Default Credentials.
    let no_adc: Vec<String> = [
        "status",
        "--project",
        "demo-project",
        "--location",
        "us-central1-a",
        "--gke-endpoint",
        env.cloud.gke_endpoint(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let out = run_with(
        &no_adc,
        env.dir.path(),
        &[("GOOGLE_APPLICATION_CREDENTIALS", "/nonexistent/adc.json")],
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("gcloud auth application-default login"),
        "{}",
        text(&out.stderr)
    );
    let bad_config = env.dir.path().join("bad.toml");
    std::fs::write(&bad_config, "[cluster]\nnode-cnt = 3\n").unwrap();
    let out = env
        .gantry(&["status", "--config", bad_config.to_str().unwrap()])
        .await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("node-cnt"),
        "{}",
        text(&out.stderr)
    );

    // The cloud says no: 1, with Google's message.
    env.cloud
        .faults()
        .set(gantry::sim::faults::Fault::GkeCreateError(
            "no luck today".into(),
        ));
    let out = env.gantry(&["up", "--wait"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("no luck today"),
        "{}",
        text(&out.stderr)
    );
    env.cloud.faults().clear();
    env.cloud
        .faults()
        .set(gantry::sim::faults::Fault::GkePermissionDenied);
    let out = env.gantry(&["status", "--json"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("403"), "{}", text(&out.stderr));
}

/// A kubeconfig as gcloud and kubectl write it (keys sorted, lists not indented, a long plain
/// scalar folded onto a second line), then touched by hand: comments, its own quoting, a flow
/// mapping. Split where the merge may insert our items or change `current-context`.
const OTHER_KUBECONFIG: [&str; 5] = [
    r#"# my clusters: keep this comment
apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: TFMwdExTMUNSVWRKVGlCRFJWSlVTVVpKUTBGVVJTMHRMUzB0Q2sxSlNVVk1WRU5E
    server: https://34.67.1.2
  name: gke_other-project_us-east1_prod
# the lab, reachable over the VPN only
- cluster:
    server: "https://10.9.9.9:6443"   # internal
    insecure-skip-tls-verify: true
  name: 'lab: east'
"#,
    r#"contexts:
- context:
    cluster: gke_other-project_us-east1_prod
    user: gke_other-project_us-east1_prod
  name: gke_other-project_us-east1_prod
- context: {cluster: 'lab: east', user: "someone", namespace: "007"}
  name: "other"
"#,
    "current-context: \"other\"  # my default\n",
    r#"kind: Config
preferences: {}
users:
- name: gke_other-project_us-east1_prod
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: gke-gcloud-auth-plugin
      installHint: Install gke-gcloud-auth-plugin for use with kubectl by following
        https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-access-for-kubectl#install_plugin
      provideClusterInfo: true
- name: someone
  user:
    username: 'someone'
"#,
    "# end of my kubeconfig\n",
];

/// `text` without `prefix`, or a failure naming where they part.
fn after_prefix<'a>(text: &'a str, prefix: &str) -> &'a str {
    match text.strip_prefix(prefix) {
        Some(rest) => rest,
        None => panic!("expected next, byte for byte:\n{prefix}\nin:\n{text}"),
    }
}

/// Splits `text` at the first `marker`: (what comes before, from the marker on).
fn up_to<'a>(text: &'a str, marker: &str) -> (&'a str, &'a str) {
    let at = text
        .find(marker)
        .unwrap_or_else(|| panic!("{marker:?} is gone from:\n{text}"));
    text.split_at(at)
}

#[tokio::test]
async fn up_writes_a_kubeconfig_context_that_kubectl_uses() {
    let env = Env::start(vec![]).await;
    let kubeconfig = env.dir.path().join("kube").join("config");
    std::fs::create_dir_all(kubeconfig.parent().unwrap()).unwrap();
    let other = OTHER_KUBECONFIG.concat();
    std::fs::write(&kubeconfig, &other).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&kubeconfig, std::fs::Permissions::from_mode(0o644)).unwrap();
    let up = env.gantry(&["up", "--wait"]).await;
    assert_eq!(up.status.code(), Some(0), "{}", text(&up.stderr));
    let context = "gke_demo-project_us-central1-a_ml-gke-cluster";
    assert!(text(&up.stdout).contains(context), "{}", text(&up.stdout));
    assert_eq!(
        std::fs::metadata(&kubeconfig).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let written = std::fs::read_to_string(&kubeconfig).unwrap();

    // Every byte of the old file is there, in order; only our items are inserted, each at the
    // end of its list, and current-context is ours (its comment kept).
    let [clusters, contexts, _current, users, end] = OTHER_KUBECONFIG;
    let rest = after_prefix(&written, clusters);
    let (our_cluster, rest) = up_to(rest, contexts);
    let rest = after_prefix(rest, contexts);
    let (our_context, rest) = up_to(rest, "current-context:");
    let rest = after_prefix(rest, &format!("current-context: {context}  # my default\n"));
    let rest = after_prefix(rest, users);
    let (our_user, rest) = up_to(rest, end);
    assert_eq!(rest, end);
    let item = |text: &str| -> serde_norway::Value {
        let list: Vec<serde_norway::Value> = serde_norway::from_str(text).unwrap();
        assert_eq!(list.len(), 1, "{text}");
        assert_eq!(list[0]["name"], context, "{text}");
        list[0].clone()
    };
    let cluster = item(our_cluster);
    assert!(
        cluster["cluster"]["server"]
            .as_str()
            .is_some_and(|s| s.starts_with("https://")),
        "{our_cluster}"
    );
    assert!(
        cluster["cluster"]["certificate-authority-data"]
            .as_str()
            .is_some_and(|s| !s.is_empty()),
        "{our_cluster}"
    );
    assert_eq!(item(our_context)["context"]["cluster"], context);
    assert_eq!(item(our_context)["context"]["user"], context);
    assert_eq!(
        item(our_user)["user"]["tokenFile"],
        env.token_file().display().to_string()
    );
    // Written as gcloud does, not indented.
    for ours in [our_cluster, our_context, our_user] {
        assert!(ours.starts_with("- "), "{ours}");
    }

    // A second `up` finds the cluster there and writes the same bytes.
    let again = env.gantry(&["up", "--wait"]).await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again.stderr));
    assert_eq!(std::fs::read_to_string(&kubeconfig).unwrap(), written);

    // No token in the file: the user reads Gantry's token file.
    let token = std::fs::read_to_string(env.token_file()).unwrap();
    assert!(
        !std::fs::read_to_string(&kubeconfig)
            .unwrap()
            .contains(token.trim())
    );
    if !common::kubectl_available() {
        return;
    }
    // Asynchronously: the simulator serves on this test's runtime.
    let out = tokio::process::Command::new("kubectl")
        .env("KUBECONFIG", &kubeconfig)
        .args(["--context", context, "get", "nodes", "--cache-dir"])
        .arg(env.dir.path().join("kube-cache"))
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout)
            .lines()
            .filter(|l| l.contains(" Ready "))
            .count(),
        3,
        "{}",
        text(&out.stdout)
    );
    // kubectl reads the other contexts as they were.
    let kubectl = |args: &[&str]| {
        let out = std::process::Command::new("kubectl")
            .env("KUBECONFIG", &kubeconfig)
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        text(&out.stdout)
    };
    assert_eq!(kubectl(&["config", "current-context"]).trim(), context);
    let mut names: Vec<String> = kubectl(&["config", "get-contexts", "-o", "name"])
        .lines()
        .map(str::to_string)
        .collect();
    names.sort();
    assert_eq!(names, [context, "gke_other-project_us-east1_prod", "other"]);
    let lab = kubectl(&[
        "config",
        "view",
        "--minify",
        "--context",
        "other",
        "-o",
        "jsonpath={.contexts[0].context.namespace} {.clusters[0].name} {.clusters[0].cluster.server}",
    ]);
    assert_eq!(lab, "007 lab: east https://10.9.9.9:6443");
}

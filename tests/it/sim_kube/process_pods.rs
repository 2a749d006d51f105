//! Pods run as local processes (`--run-image`), driven by the real kubectl: a Deployment whose
//! image maps to python3 running `-m http.server 8080`, with a readiness probe, a Secret as a
//! file and as a variable, becomes Ready; its log shows the server and what the process sees
//! (the Secret, none of this machine's HOME or KUBECONFIG, a metadata server whose token of the
//! node's default account GKE refuses for its scopes); its page is fetched where `ClusterState::pod_endpoint` says; deleting its
//! pod sends SIGTERM, which the process logs before it goes. Also `gantry sim --run-image`
//! itself. Skipped (saying so) without kubectl or python3, unless GANTRY_REQUIRE_KUBECTL=1 or
//! GANTRY_REQUIRE_PYTHON3=1.

use std::process::Stdio;

use gantry::sim::cloud::{DEMO_LOCATION, DEMO_PROJECT};
use gantry::sim::kube::process::RunImage;
use gantry_test_support as common;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use super::kubectl_env::Kubectl;

/// Prints what the process sees, then runs `python3 -m http.server 8080 --bind POD_IP` itself,
/// logging the SIGTERM it is stopped with.
const WEB: &str = r#"
import json, os, runpy, signal, sys, urllib.error, urllib.request
print("HOME=" + os.environ.get("HOME", "<unset>"))
print("KUBECONFIG=" + os.environ.get("KUBECONFIG", "<unset>"))
print("GOOGLE_APPLICATION_CREDENTIALS=" + os.environ.get("GOOGLE_APPLICATION_CREDENTIALS", "<unset>"))
print("PASSWORD=" + os.environ["PASSWORD"])
print("FILE=" + open(sys.argv[1]).read())
token_url = "http://%s/computeMetadata/v1/instance/service-accounts/default/token" % os.environ["GCE_METADATA_HOST"]
try:
    urllib.request.urlopen(token_url)
    print("BARE=200")
except urllib.error.HTTPError as e:
    print("BARE=%d" % e.code)
answer = urllib.request.urlopen(urllib.request.Request(token_url, headers={"Metadata-Flavor": "Google"}))
token = json.load(answer)["access_token"]
clusters = urllib.request.Request(sys.argv[2], headers={"Authorization": "Bearer " + token})
try:
    print("GKE=%d" % urllib.request.urlopen(clusters).status)
except urllib.error.HTTPError as e:
    print("GKE=%d %s" % (e.code, json.load(e)["error"]["details"][0]["reason"]))
def stop(*_):
    print("got SIGTERM", flush=True)
    sys.exit(0)
signal.signal(signal.SIGTERM, stop)
sys.argv = ["http.server", "8080", "--bind", os.environ["POD_IP"]]
runpy.run_module("http.server", run_name="__main__")
"#;

fn deployment(clusters_url: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"terminationGracePeriodSeconds": 5,
                    "containers": [{"name": "web", "image": "python:3.12-slim",
                        "command": ["python3", "-u", "-c", WEB, "/etc/app-secret/password", clusters_url],
                        "env": [
                            {"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": "app-secret", "key": "password"}}},
                            {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
                        ],
                        "ports": [{"name": "http", "containerPort": 8080}],
                        "readinessProbe": {"httpGet": {"path": "/", "port": "http"}, "periodSeconds": 2},
                        "volumeMounts": [{"name": "secret", "mountPath": "/etc/app-secret", "readOnly": true}]}],
                    "volumes": [{"name": "secret", "secret": {"secretName": "app-secret"}}]}}}})
}

fn python_image(python: std::path::PathBuf) -> RunImage {
    RunImage {
        pattern: "python:*".into(),
        executable: python,
    }
}

/// The value a `KEY=value` log line gives.
fn said<'a>(log: &'a str, key: &str) -> &'a str {
    log.lines()
        .find_map(|l| l.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key}= in the log:\n{log}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deployment_of_a_process_web_server_becomes_ready_serves_and_stops_on_sigterm() {
    if !common::kubectl_available() {
        return;
    }
    let Some(python) = common::python3() else {
        return;
    };
    let k = Kubectl::start(vec![python_image(python)]).await;
    let clusters = format!(
        "{}/v1/projects/{DEMO_PROJECT}/locations/{DEMO_LOCATION}/clusters",
        k.cloud.gke_endpoint()
    );
    k.ok(&[
        "create",
        "secret",
        "generic",
        "app-secret",
        "--from-literal=password=hunter2",
    ])
    .await;
    let file = k.manifest("web.json", &deployment(&clusters));
    assert!(
        k.ok(&["apply", "-f", &file])
            .await
            .contains("deployment.apps/web created")
    );
    let rolled = k
        .ok(&["rollout", "status", "deployment/web", "--timeout=60s"])
        .await;
    assert!(rolled.contains("successfully rolled out"), "{rolled}");
    let pod = k
        .ok(&[
            "get",
            "pods",
            "-l",
            "app=web",
            "-o",
            "jsonpath={.items[0].metadata.name}",
        ])
        .await;
    let ready = k
        .ok(&[
            "get",
            "pod",
            &pod,
            "-o",
            "jsonpath={.status.conditions[?(@.type==\"Ready\")].status}",
        ])
        .await;
    assert_eq!(ready, "True");

    let log = k.ok(&["logs", &pod]).await;
    assert!(log.contains("Serving HTTP on "), "{log}");
    assert_eq!(said(&log, "PASSWORD"), "hunter2");
    assert_eq!(said(&log, "FILE"), "hunter2");
    assert_eq!(said(&log, "KUBECONFIG"), "<unset>");
    assert_eq!(said(&log, "GOOGLE_APPLICATION_CREDENTIALS"), "<unset>");
    let home = said(&log, "HOME");
    assert_ne!(Some(home), std::env::var("HOME").ok().as_deref(), "{log}");
    assert!(home.contains("gantry-pod-default-web-"), "{log}");
    assert_eq!(said(&log, "BARE"), "403");
    // No Workload Identity binding: the node's default account, whose scopes GKE refuses.
    assert_eq!(said(&log, "GKE"), "403 ACCESS_TOKEN_SCOPE_INSUFFICIENT");

    let cluster = k
        .cloud
        .cluster(DEMO_PROJECT, DEMO_LOCATION, common::CLUSTER)
        .unwrap();
    let endpoint = cluster.state().pod_endpoint("default", &pod, 8080).unwrap();
    let page = reqwest::get(format!("http://{endpoint}/")).await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(
        page.text()
            .await
            .unwrap()
            .contains("Directory listing for /")
    );

    // Follow the pod's log while it is deleted: its last line is the process's own.
    let mut follow = k
        .command()
        .args(["logs", "-f", &pod])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(follow.stdout.take().unwrap()).lines();
    let first = tokio::time::timeout(common::WAIT_BOUND, async {
        // kubectl follows once it has printed what was there.
        let mut lines_seen = Vec::new();
        while let Some(line) = lines.next_line().await.unwrap() {
            let serving = line.starts_with("Serving HTTP on ");
            lines_seen.push(line);
            if serving {
                break;
            }
        }
        lines_seen
    })
    .await
    .unwrap();
    assert!(first.iter().any(|l| l.starts_with("HOME=")), "{first:?}");
    let deleted = k.ok(&["delete", "pod", &pod, "--timeout=60s"]).await;
    assert!(
        deleted.contains(&format!("pod \"{pod}\" deleted")),
        "{deleted}"
    );
    let rest = tokio::time::timeout(common::WAIT_BOUND, async {
        let mut seen = Vec::new();
        while let Some(line) = lines.next_line().await.unwrap() {
            seen.push(line);
        }
        seen
    })
    .await
    .unwrap();
    assert_eq!(
        rest.last().map(String::as_str),
        Some("got SIGTERM"),
        "{rest:?}"
    );
    assert!(
        rest.iter().any(|l| l.contains("\"GET / HTTP/1.1\" 200")),
        "the page fetched is in the log: {rest:?}"
    );
}

#[tokio::test]
async fn gantry_sim_runs_a_mapped_image_as_a_process() {
    if !common::kubectl_available() {
        return;
    }
    let Some(python) = common::python3() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut sim = tokio::process::Command::new(common::gantry_bin())
        .args([
            "sim",
            "--cluster",
            common::CLUSTER,
            "--time-scale",
            "0.01",
            "--state-dir",
        ])
        .arg(dir.path())
        .arg("--run-image")
        .arg(format!("python:*={}", python.display()))
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut said_lines = BufReader::new(sim.stderr.take().unwrap()).lines();
    let mut mapped = false;
    let started = tokio::time::timeout(common::WAIT_BOUND, async {
        while let Some(line) = said_lines.next_line().await.unwrap() {
            mapped |= line.contains("containers of images python:* run as processes of");
            if line.contains("state in") {
                return;
            }
        }
        panic!("gantry sim ended before it served");
    });
    started.await.unwrap();
    assert!(mapped);
    tokio::spawn(async move { while let Ok(Some(_)) = said_lines.next_line().await {} });
    let kubectl = |args: &[&str]| {
        let mut command = tokio::process::Command::new("kubectl");
        command
            .env("KUBECONFIG", dir.path().join("kubeconfig"))
            .arg("--cache-dir")
            .arg(dir.path().join("kube-cache"))
            .args(args);
        command
    };
    let run = kubectl(&[
        "run",
        "hello",
        "--image=python:3.12",
        "--restart=Never",
        "--command",
        "--",
        "python3",
        "-c",
        "import os; print('hello from', os.environ['HOSTNAME'])",
    ])
    .output()
    .await
    .unwrap();
    assert!(run.status.success(), "{}", common::text(&run.stderr));
    let waited = kubectl(&[
        "wait",
        "--for=jsonpath={.status.phase}=Succeeded",
        "pod/hello",
        "--timeout=60s",
    ])
    .output()
    .await
    .unwrap();
    assert!(waited.status.success(), "{}", common::text(&waited.stderr));
    let logs = kubectl(&["logs", "hello"]).output().await.unwrap();
    assert_eq!(common::text(&logs.stdout), "hello from hello\n");
    // Stopped as an operator stops it, it takes its pods' directories with it.
    let pid = sim.id().unwrap().to_string();
    let signalled = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status();
    assert!(signalled.unwrap().success());
    let exited = tokio::time::timeout(common::WAIT_BOUND, sim.wait()).await;
    assert!(exited.unwrap().unwrap().success());
}

#[test]
fn run_image_is_refused_off_the_simulator_and_a_bad_mapping_says_what_to_give() {
    let gantry = |args: &[&str]| {
        let out = std::process::Command::new(common::gantry_bin())
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (out.status.code(), common::text(&out.stderr))
    };
    let (code, err) = gantry(&["--run-image", "python:*=python3", "status"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("--run-image works on the simulated cloud: add --sim"),
        "{err}"
    );
    let (code, err) = gantry(&[
        "sim",
        "--state-dir",
        "/nonexistent",
        "--run-image",
        "python3",
    ]);
    assert_eq!(code, Some(2));
    assert!(err.contains("give PATTERN=EXECUTABLE"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().to_str().unwrap();
    let missing = "python:*=surely-no-such-interpreter";
    let (code, err) = gantry(&["sim", "--state-dir", state, "--run-image", missing]);
    assert_ne!(code, Some(0));
    assert!(
        err.contains("surely-no-such-interpreter is not on PATH: give a path to the executable"),
        "{err}"
    );
}

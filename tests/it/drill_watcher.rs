//! Gantry in the cluster, end to end on the simulator as its own process, with no local engine
//! running: `gantry watcher install` puts this very build into the simulated cluster (images
//! named `…/gantry` run as it), where it runs with its own ServiceAccount token, Secret,
//! metadata server and exactly its RBAC. It recovers a preempted gang once and tells once;
//! its pod deleted mid-run, the Deployment's next pod takes the Lease within 30 s and carries
//! on without sending anything twice (the outbox is a ConfigMap). Without its GKE grant or an
//! RBAC rule it says what it cannot do; uninstall removes exactly its objects.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::cli_flow::{Sim, newest};
use crate::notify_receiver::{Received, Receiver};

const IMAGE: &str = "example.com/team/gantry:test";
const GSA: &str = "gantry-watcher@demo-project.iam.gserviceaccount.com";
const DEPLOYMENT: &str = "deployment/gantry-watcher-ml-training-job";

/// A spot cluster and two indexed workers of `lines` lines at one a simulated second (a
/// hundredth of a second at the tests' time scale). Each rank asks for 600m of CPU, more than
/// half of a node's 940m, so no two ranks of an attempt share a node (the watcher's pod takes
/// 50m of one): a reclaim takes one rank, which is what the engine recovers — two ranks on one
/// node would both go, and the Job would replace them itself.
fn gang(lines: u32) -> String {
    format!(
        "[cluster]\nspot = true\n[job]\nbackoff-limit = 2\ncompletions = 2\nparallelism = 2\n\
indexed = true\n[job.recovery]\nmax-recoveries = 10\n[job.resources]\ncpu = \"600m\"\n[job.env]\n\
SIM_LOG_LINES = \"{lines}\"\nSIM_LINES_PER_SECOND = \"1\"\n"
    )
}

fn webhook(hook: &Receiver) -> String {
    format!(
        "[[notify]]\nkind = \"webhook\"\nurl = \"{}\"\nevents = [\"recovered\", \"attempt-ended\"]\nrate-limit = \"0s\"\n",
        hook.url()
    )
}

fn watcher(google_service_account: bool) -> String {
    let gsa = if google_service_account {
        format!("google-service-account = \"{GSA}\"\n")
    } else {
        String::new()
    };
    format!("[watcher]\nimage = \"{IMAGE}\"\n{gsa}")
}

fn finished(s: &Value) -> bool {
    matches!(newest(s)["status"].as_str(), Some("Succeeded" | "Failed"))
}

/// The watcher pod the Lease names, once `status` says the watcher holds it.
fn watching_pod(sim: &Sim, what: &str, not: Option<&str>) -> String {
    let s = sim.until_status(what, |s| {
        s["job"]["watcher"]["pod"]
            .as_str()
            .is_some_and(|p| Some(p) != not)
    });
    assert_eq!(
        s["job"]["watcher"]["version"],
        env!("CARGO_PKG_VERSION"),
        "{:#}",
        s["job"]
    );
    s["job"]["watcher"]["pod"].as_str().unwrap().to_string()
}

fn watcher_status(sim: &Sim) -> Value {
    serde_json::from_str(&sim.ok(&["watcher", "status", "--json"])).unwrap()
}

/// Waits (bounded) until `watcher status --json` satisfies `done`.
fn until_watcher(sim: &Sim, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + gantry_test_support::WAIT_BOUND;
    loop {
        let s = watcher_status(sim);
        if done(&s) {
            return s;
        }
        assert!(Instant::now() < deadline, "{what}: {s:#}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn kubectl_ok(sim: &Sim, args: &[&str]) -> String {
    let out = sim.kubectl(args);
    assert!(
        out.status.success(),
        "kubectl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Removes the watcher and waits until its pod is gone: its notifier has written what it had.
fn uninstall_and_wait(sim: &Sim) {
    sim.ok(&["watcher", "uninstall", "--yes", "--force"]);
    kubectl_ok(
        sim,
        &[
            "wait",
            "--for=delete",
            "pod",
            "-l",
            "app.kubernetes.io/component=watcher",
            "--timeout=60s",
        ],
    );
}

#[test]
fn the_watcher_alone_recovers_a_preempted_gang_once_and_its_next_pod_carries_on() {
    if !gantry_test_support::kubectl_available() {
        return;
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut hook = rt.block_on(Receiver::start(Vec::new()));
    // Two reclaims, 12 s apart (the fault's period is the wall clock's): the first recovered
    // by the watcher's pod, the second by the pod that replaced it.
    let sim = Sim::start_with(
        &["--time-scale", "0.01", "--fault", "preempt=12:2"],
        &format!("{}{}{}", gang(1500), webhook(&hook), watcher(true)),
    );
    sim.ok(&["up", "--wait"]);
    let installed = sim.ok(&["watcher", "install", "--wait"]);
    assert!(
        installed.contains("watcher ready: pod gantry-watcher-"),
        "{installed}"
    );
    let first = watching_pod(&sim, "the watcher holds the Lease", None);
    let human = sim.ok(&["status"]);
    assert!(
        human.contains(&format!("watched   in the cluster by {first}")),
        "{human}"
    );
    let lease = kubectl_ok(&sim, &["get", "lease", "gantry-engine-ml-training-job"]);
    assert!(lease.contains(&first), "{lease}");
    // It does its whole job with exactly its rules and its grant.
    let inside = until_watcher(&sim, "the watcher's report", |s| {
        s["reportedAt"].is_string()
    });
    assert_eq!(inside["unavailable"], serde_json::json!([]), "{inside:#}");
    assert_eq!(inside["holdsLease"], true, "{inside:#}");

    sim.ok(&["launch"]);
    sim.until_status("the first recovery, by the watcher", |s| {
        s["job"]["recoveries"] == 1
    });
    // Its pod deleted mid-run: the Deployment's next pod takes the Lease within 30 s.
    let deleted = Instant::now();
    kubectl_ok(&sim, &["delete", "pod", &first, "--wait=false"]);
    let second = watching_pod(&sim, "the next pod holds the Lease", Some(&first));
    let handover = deleted.elapsed();
    assert!(
        handover < Duration::from_secs(30),
        "handed over in {handover:?}"
    );
    let done = sim.until_status(
        "the second recovery, by the next pod, and the run's end",
        |s| finished(s) && s["job"]["recoveries"] == 2,
    );
    let last = newest(&done);
    assert_eq!(last["status"], "Succeeded", "{:#}", done["job"]);
    assert_eq!(last["name"], "ml-training-job-3", "{:#}", done["job"]);
    // Watched in the cluster to the end (by the next pod, or by one after it when a reclaim
    // took the watcher's own node).
    let last_watcher = done["job"]["watcher"]["pod"].as_str().unwrap_or_default();
    assert!(
        last_watcher.starts_with("gantry-watcher-") && last_watcher != first,
        "{:#} (second: {second})",
        done["job"]
    );

    // Each told once: two recoveries, one end; nothing twice across the two pods.
    let mut messages: Vec<Received> = Vec::new();
    rt.block_on(async {
        while messages.len() < 3 {
            messages.push(hook.next().await);
        }
    });
    uninstall_and_wait(&sim);
    if let Some(more) = hook.more() {
        panic!("told more: {:#}", more.json());
    }
    let events: Vec<(String, Value)> = messages
        .iter()
        .map(|m| {
            let j = m.json();
            (
                j["event"].as_str().unwrap().to_string(),
                j["attempt"].clone(),
            )
        })
        .collect();
    let count = |e: &str| events.iter().filter(|(name, _)| name == e).count();
    assert_eq!(count("recovered"), 2, "{events:?}");
    assert_eq!(count("attempt-ended"), 1, "{events:?}");
    let mut keys: Vec<&str> = messages
        .iter()
        .map(|m| m.header("idempotency-key").unwrap())
        .collect();
    keys.sort_unstable();
    keys.dedup();
    assert_eq!(keys.len(), 3, "every message its own key: {keys:?}");
}

#[test]
fn without_its_grant_or_a_rule_the_watcher_says_what_it_cannot_do_and_uninstall_takes_only_its_own()
{
    if !gantry_test_support::kubectl_available() {
        return;
    }
    let config = format!(
        "{}[guards]\nbudget = 0.0001\nbudget-action = \"scale-to-zero\"\n{}",
        gang(2000),
        watcher(false)
    );
    let sim = Sim::start_with(&["--time-scale", "0.01"], &config);
    sim.ok(&["up", "--wait"]);
    let refused = sim.gantry(&["watcher", "install", "--watcher-image", ""]);
    assert_eq!(refused.status.code(), Some(2), "an empty image is refused");
    let installed = sim.ok(&["watcher", "install", "--wait"]);
    assert!(
        installed.contains("roles/iam.workloadIdentityUser")
            && installed.contains("gcloud projects add-iam-policy-binding demo-project"),
        "the grant, as gcloud commands: {installed}"
    );
    // No Workload Identity binding: the node's account, whose scopes GKE refuses.
    let without = until_watcher(&sim, "GKE said unavailable", |s| {
        s["unavailable"].as_array().is_some_and(|u| !u.is_empty())
    });
    let unavailable = without["unavailable"].as_array().unwrap();
    let acts: Vec<&str> = unavailable
        .iter()
        .map(|u| u["act"].as_str().unwrap())
        .collect();
    assert!(
        acts.contains(&"scale-to-zero (idle, a spent budget)") && acts.contains(&"spot-fallback"),
        "{without:#}"
    );
    assert!(
        unavailable.iter().all(|u| u["why"]
            .as_str()
            .unwrap()
            .contains("insufficient authentication scopes")),
        "{without:#}"
    );

    // A spent budget: the run ends, and the pools cannot be scaled from inside — said.
    sim.ok(&["launch"]);
    let deadline = Instant::now() + gantry_test_support::WAIT_BOUND;
    loop {
        let log = kubectl_ok(&sim, &["logs", DEPLOYMENT]);
        if log.contains("cannot be scaled to zero from here") {
            assert!(log.contains("insufficient authentication scopes"), "{log}");
            assert!(
                log.contains(r#""audit":true"#),
                "acts audited in its log: {log}"
            );
            break;
        }
        assert!(
            Instant::now() < deadline,
            "never said it cannot scale:\n{log}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }

    // One rule taken away (its events): a request outside its RBAC is refused, and said.
    let role = kubectl_ok(
        &sim,
        &[
            "get",
            "role",
            "gantry-watcher-ml-training-job",
            "-o",
            "json",
        ],
    );
    let mut role: Value = serde_json::from_str(&role).unwrap();
    role["rules"]
        .as_array_mut()
        .unwrap()
        .retain(|r| r["resources"][0] != "events");
    let edited = sim.home().join("role.json");
    std::fs::write(&edited, role.to_string()).unwrap();
    kubectl_ok(&sim, &["replace", "-f", edited.to_str().unwrap()]);
    kubectl_ok(
        &sim,
        &[
            "delete",
            "pod",
            "-l",
            "app.kubernetes.io/component=watcher",
            "--wait=false",
        ],
    );
    let lacking = until_watcher(&sim, "the missing rule said", |s| {
        s["unavailable"]
            .as_array()
            .unwrap()
            .iter()
            .any(|u| u["act"] == "read why pods wait (events)")
    });
    let events = lacking["unavailable"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["act"] == "read why pods wait (events)")
        .unwrap();
    assert!(
        events["why"]
            .as_str()
            .unwrap()
            .contains("forbidden (403): cannot get resource \"events\" in API group \"\" in the namespace \"default\""),
        "{events:#}"
    );

    // `gantry delete job` leaves the watcher; uninstall takes exactly its objects.
    let deployments = kubectl_ok(&sim, &["get", "deployments", "-o", "name"]);
    sim.ok(&["delete", "job", "--yes"]);
    assert_eq!(
        kubectl_ok(&sim, &["get", "deployments", "-o", "name"]),
        deployments
    );
    uninstall_and_wait(&sim);
    let left = kubectl_ok(
        &sim,
        &[
            "get",
            "deployments,replicasets,configmaps,secrets,serviceaccounts,roles,rolebindings",
            "-l",
            "app.kubernetes.io/component=watcher",
            "-o",
            "name",
        ],
    );
    assert_eq!(left.trim(), "", "{left}");
    let cluster_wide = kubectl_ok(
        &sim,
        &[
            "get",
            "clusterroles,clusterrolebindings",
            "-l",
            "app.kubernetes.io/component=watcher",
            "-o",
            "name",
        ],
    );
    assert_eq!(cluster_wide.trim(), "", "{cluster_wide}");
    let lease = kubectl_ok(&sim, &["get", "lease", "-o", "name"]);
    assert!(
        lease.contains("gantry-engine-ml-training-job"),
        "the Job's Lease stays: {lease}"
    );
    let status = watcher_status(&sim);
    assert_eq!(status["installed"], false, "{status:#}");
}

/// `command` as one shell line (its variables, program and arguments, each quoted).
fn shell_line(command: &std::process::Command) -> String {
    let quote = |s: &std::ffi::OsStr| format!("'{}'", s.to_string_lossy().replace('\'', r"'\''"));
    let mut words: Vec<String> = vec!["env".into()];
    for (k, v) in command.get_envs() {
        if let Some(v) = v {
            words.push(format!("{}={}", k.to_string_lossy(), quote(v)));
        }
    }
    words.push(quote(command.get_program()));
    words.extend(command.get_args().map(quote));
    words.join(" ")
}

#[test]
fn gantry_watcher_ssh_shows_the_in_cluster_tui_and_kubectl_port_forward_reaches_it_too() {
    use gantry_test_support::serve::{keygen, ssh_available};
    use gantry_test_support::tmux::{self, Tmux};
    if !gantry_test_support::kubectl_available() || !tmux::available() || !ssh_available() {
        return;
    }
    let keys = tempfile::tempdir().unwrap();
    keygen(keys.path(), "teammate");
    keygen(keys.path(), "stranger");
    let key = |name: &str| keys.path().join(name).display().to_string();
    let config = format!(
        "{}serve = true\nauthorized-keys = \"{}\"\n",
        watcher(true),
        key("teammate.pub")
    );
    let sim = Sim::start_with(&["--time-scale", "0.01"], &config);
    sim.ok(&["up", "--wait"]);
    let installed = sim.ok(&["watcher", "install", "--wait"]);
    assert!(
        installed.contains("its SSH host key: SHA256:"),
        "{installed}"
    );
    let pod = watching_pod(&sim, "the watcher holds the Lease", None);

    // Through `gantry watcher ssh`: the host key pinned, the teammate's own key.
    let identity = format!(
        "-i {} -o IdentitiesOnly=yes -o IdentityAgent=none -o BatchMode=yes",
        key("teammate")
    );
    let mut watch = sim.command(&["watcher", "ssh"]);
    watch.arg("--").args(identity.split(' '));
    let pane = Tmux::run("watcher-ssh", &shell_line(&watch), (100, 30)).unwrap();
    pane.wait_for(&[
        "ml-gke-cluster",
        "RUNNING",
        "Job ml-training-job",
        "READ-ONLY",
    ]);
    pane.keys(&["q"]);
    let (status, screen) = pane.wait_for_exit();
    assert_eq!(status, 0, "{screen}");

    // A stranger's key is refused.
    let mut stranger = sim.command(&["watcher", "ssh"]);
    stranger.args([
        "--",
        "-i",
        &key("stranger"),
        "-o",
        "IdentitiesOnly=yes",
        "-o",
        "IdentityAgent=none",
        "-o",
        "BatchMode=yes",
        "-T",
    ]);
    let refused = stranger.output().unwrap();
    assert_eq!(refused.status.code(), Some(255), "{refused:?}");
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("Permission denied"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );

    // Unmodified kubectl port-forward to its SSH port works as well.
    let mut forward = std::process::Command::new("kubectl")
        .args(["port-forward", &format!("pod/{pod}"), ":2222"])
        .env("KUBECONFIG", sim.home().join("kube").join("config"))
        .env("HOME", sim.home())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut said = String::new();
    let mut out = std::io::BufReader::new(forward.stdout.take().unwrap());
    std::io::BufRead::read_line(&mut out, &mut said).unwrap();
    let port = said
        .split("127.0.0.1:")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or_else(|| panic!("kubectl port-forward said: {said}"))
        .to_string();
    let known = keys.path().join("known_hosts");
    let ssh = format!(
        "ssh -tt -p {port} {identity} -o UserKnownHostsFile={} -o StrictHostKeyChecking=accept-new 127.0.0.1",
        known.display()
    );
    let pane = Tmux::run("watcher-port-forward", &ssh, (100, 30)).unwrap();
    pane.wait_for(&["ml-gke-cluster", "Job ml-training-job", "READ-ONLY"]);
    pane.keys(&["q"]);
    let (status, screen) = pane.wait_for_exit();
    assert_eq!(status, 0, "{screen}");
    let _ = forward.kill();
    let _ = forward.wait();
}

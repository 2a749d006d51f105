//! The real kubectl against `gantry sim`, as someone running Gantry in its cluster would use
//! it: a Deployment applied, rolled out, healed and rolled to a new image; a ServiceAccount
//! given a Role, its token from `kubectl create token`, and what that token may and may not do.
//! Skipped (saying so) where kubectl is absent, unless GANTRY_REQUIRE_KUBECTL=1.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};

struct Sim {
    child: Child,
    dir: tempfile::TempDir,
}

impl Sim {
    /// Starts `gantry sim` and returns once it has said its state directory is ready.
    fn start() -> Sim {
        let dir = tempfile::tempdir().unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_gantry"))
            .args([
                "sim",
                "--cluster",
                "ml-gke-cluster",
                "--time-scale",
                "0.01",
                "--state-dir",
            ])
            .arg(dir.path())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        for line in lines.by_ref() {
            if line.unwrap().contains("state in") {
                break;
            }
        }
        // Keep draining so the simulator never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        Sim { child, dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn kubectl(&self, args: &[&str]) -> Output {
        Command::new("kubectl")
            .env("KUBECONFIG", self.path("kubeconfig"))
            .arg("--cache-dir")
            .arg(self.path("kube-cache"))
            .args(args)
            .output()
            .unwrap()
    }

    /// kubectl's stdout; a kubectl that fails fails the test, with its stderr.
    fn ok(&self, args: &[&str]) -> String {
        let out = self.kubectl(args);
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(
            out.status.success(),
            "kubectl {args:?} failed: {}{stdout}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: IMAGE
        env:
        # The simulated workload writes a line, then runs until it is stopped, as a server.
        - name: SIM_STALL_AFTER
          value: \"1\"
";

fn pod_names(sim: &Sim) -> Vec<String> {
    sim.ok(&["get", "pods", "-l", "app=web", "-o", "name"])
        .lines()
        .map(String::from)
        .collect()
}

#[test]
fn kubectl_rolls_out_a_deployment_heals_it_and_rolls_it_to_a_new_image() {
    if !gantry_test_support::kubectl_available() {
        return;
    }
    let sim = Sim::start();
    let manifest = sim.path("web.yaml");
    std::fs::write(&manifest, DEPLOYMENT.replace("IMAGE", "nginx:1.27")).unwrap();
    let manifest = manifest.to_str().unwrap();
    assert!(
        sim.ok(&["apply", "-f", manifest])
            .contains("deployment.apps/web created")
    );
    let status = ["rollout", "status", "deployment/web", "--timeout=60s"];
    assert!(
        sim.ok(&status)
            .contains("deployment \"web\" successfully rolled out")
    );
    let deployments = sim.ok(&["get", "deploy", "web"]);
    assert!(
        deployments.contains("READY   UP-TO-DATE   AVAILABLE") && deployments.contains("2/2"),
        "{deployments}"
    );
    let first = pod_names(&sim);
    assert_eq!(first.len(), 2, "{first:?}");

    // The ReplicaSet replaces a pod as soon as it starts terminating, before it is gone.
    sim.ok(&["delete", &first[0], "--wait=false"]);
    sim.ok(&["wait", "--for=delete", &first[0], "--timeout=60s"]);
    let healed = pod_names(&sim);
    assert_eq!(healed.len(), 2, "{healed:?}");
    assert!(
        healed.contains(&first[1]) && !healed.contains(&first[0]),
        "{healed:?}"
    );
    assert!(sim.ok(&status).contains("successfully rolled out"));

    std::fs::write(manifest, DEPLOYMENT.replace("IMAGE", "nginx:1.28")).unwrap();
    assert!(
        sim.ok(&["apply", "-f", manifest])
            .contains("deployment.apps/web configured")
    );
    assert!(sim.ok(&status).contains("successfully rolled out"));
    let sets = sim.ok(&["get", "rs", "-o", "wide"]);
    let rows: Vec<Vec<&str>> = sets
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 2, "{sets}");
    assert!(
        rows.iter()
            .any(|r| r[1..4] == ["2", "2", "2"] && r[6] == "nginx:1.28"),
        "{sets}"
    );
    assert!(
        rows.iter()
            .any(|r| r[1..4] == ["0", "0", "0"] && r[6] == "nginx:1.27"),
        "{sets}"
    );
    let described = sim.ok(&["describe", "deploy", "web"]);
    assert!(
        described.contains("deployment.kubernetes.io/revision: 2")
            && described.contains("NewReplicaSetAvailable")
            && described.contains("Scaled down replica set"),
        "{described}"
    );
}

#[test]
fn a_service_account_token_from_kubectl_gets_what_its_role_allows_and_is_refused_the_rest() {
    if !gantry_test_support::kubectl_available() {
        return;
    }
    let sim = Sim::start();
    sim.ok(&["create", "serviceaccount", "gantry"]);
    sim.ok(&[
        "create",
        "role",
        "pod-reader",
        "--verb=get,list",
        "--resource=pods",
    ]);
    sim.ok(&[
        "create",
        "rolebinding",
        "gantry-reads-pods",
        "--role=pod-reader",
        "--serviceaccount=default:gantry",
    ]);
    let bindings = sim.ok(&["get", "rolebinding", "-o", "wide"]);
    assert!(
        bindings.contains("Role/pod-reader") && bindings.contains("default/gantry"),
        "{bindings}"
    );
    let token = sim.ok(&["create", "token", "gantry"]).trim().to_string();
    assert_eq!(token.split('.').count(), 3, "a JWT");
    let with_token = |args: &[&str]| {
        let mut all = vec!["--token", token.as_str()];
        all.extend_from_slice(args);
        sim.kubectl(&all)
    };

    let pods = with_token(&["get", "pods"]);
    assert!(
        pods.status.success(),
        "{}",
        String::from_utf8_lossy(&pods.stderr)
    );
    let refused = with_token(&["get", "configmaps"]);
    assert!(!refused.status.success());
    assert_eq!(
        String::from_utf8_lossy(&refused.stderr).trim(),
        "Error from server (Forbidden): configmaps is forbidden: User \"system:serviceaccount:default:gantry\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\""
    );
    let can_list_secrets = with_token(&["auth", "can-i", "list", "secrets"]);
    assert_eq!(
        String::from_utf8_lossy(&can_list_secrets.stdout).trim(),
        "no"
    );
    assert_eq!(can_list_secrets.status.code(), Some(1));
    let can_list_pods = with_token(&["auth", "can-i", "list", "pods"]);
    assert_eq!(String::from_utf8_lossy(&can_list_pods.stdout).trim(), "yes");
    let whoami = with_token(&["auth", "whoami"]);
    assert!(
        String::from_utf8_lossy(&whoami.stdout).contains("system:serviceaccount:default:gantry"),
        "{}",
        String::from_utf8_lossy(&whoami.stderr)
    );

    // The account gone, its token opens nothing.
    sim.ok(&["delete", "serviceaccount", "gantry"]);
    let after = with_token(&["get", "pods"]);
    assert!(!after.status.success());
    assert!(
        String::from_utf8_lossy(&after.stderr).contains("Unauthorized"),
        "{}",
        String::from_utf8_lossy(&after.stderr)
    );
}

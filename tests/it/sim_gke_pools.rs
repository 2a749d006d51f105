//! Node pool and cluster changes on the simulated GKE as an operator makes them: the real gcloud
//! against `gantry sim --cluster c1`, reaching it only through its endpoint override and an
//! access token file, and kubectl looking at the nodes afterwards. Skipped (saying so) where
//! gcloud or kubectl is absent, unless GANTRY_REQUIRE_GCLOUD=1.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};

use serde_json::Value;

const CLUSTER: &str = "c1";

struct Sim {
    child: Child,
    dir: tempfile::TempDir,
    gke: String,
}

impl Sim {
    /// `gantry sim` with the cluster RUNNING, its delays `scale` times GKE's.
    fn start(scale: &str) -> Sim {
        let dir = tempfile::tempdir().unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_gantry"))
            .args(["sim", "--cluster", CLUSTER, "--time-scale", scale])
            .arg("--state-dir")
            .arg(dir.path().join("sim"))
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let mut gke = String::new();
        for line in lines.by_ref() {
            let line = line.unwrap();
            if let Some(url) = line.strip_prefix("gantry sim: GKE API on ") {
                gke = url.trim().to_string();
            }
            if line.contains("state in") {
                break;
            }
        }
        // Keep draining so the simulator never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        assert!(
            !gke.is_empty(),
            "gantry sim never said where its GKE API is"
        );
        Sim { child, dir, gke }
    }

    fn state(&self) -> PathBuf {
        self.dir.path().join("sim")
    }

    /// gcloud as configured for the simulator: the Container API's endpoint overridden, the
    /// simulator's token, no prompts, nothing of the user's configuration.
    fn gcloud(&self, args: &[&str]) -> Output {
        Command::new("gcloud")
            .args(args)
            .env("CLOUDSDK_CONFIG", self.dir.path().join("gcloud"))
            .env(
                "CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER",
                format!("{}/", self.gke),
            )
            .env(
                "CLOUDSDK_AUTH_ACCESS_TOKEN_FILE",
                self.state().join("token"),
            )
            .env("CLOUDSDK_CORE_PROJECT", "demo-project")
            .env("CLOUDSDK_COMPUTE_ZONE", "us-central1-a")
            .env("CLOUDSDK_CORE_DISABLE_PROMPTS", "1")
            .env("CLOUDSDK_COMPONENT_MANAGER_DISABLE_UPDATE_CHECK", "1")
            .env("CLOUDSDK_CORE_DISABLE_USAGE_REPORTING", "1")
            .env_remove("CLOUDSDK_CORE_ACCOUNT")
            .env_remove("GOOGLE_APPLICATION_CREDENTIALS")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    /// Runs gcloud and returns its stdout, failing the test with stderr when it fails.
    fn gcloud_ok(&self, args: &[&str]) -> String {
        let out = self.gcloud(args);
        assert!(
            out.status.success(),
            "gcloud {args:?} failed: {}",
            text(&out.stderr)
        );
        text(&out.stdout)
    }

    /// Runs gcloud expecting it to fail; returns its stderr.
    fn gcloud_err(&self, args: &[&str]) -> String {
        let out = self.gcloud(args);
        assert!(
            !out.status.success(),
            "gcloud {args:?} succeeded: {}",
            text(&out.stdout)
        );
        text(&out.stderr)
    }

    fn kubectl_ok(&self, args: &[&str]) -> String {
        let out = Command::new("kubectl")
            .args(args)
            .arg("--cache-dir")
            .arg(self.dir.path().join("kube-cache"))
            .env("KUBECONFIG", self.state().join("kubeconfig"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "kubectl {args:?} failed: {}",
            text(&out.stderr)
        );
        text(&out.stdout)
    }

    /// `kubectl get nodes` as (name, labels), the nodes of `pool` only.
    fn nodes_of(&self, pool: &str) -> Vec<(String, Value)> {
        let selector = format!("cloud.google.com/gke-nodepool={pool}");
        let list: Value = serde_json::from_str(
            &self.kubectl_ok(&["get", "nodes", "-l", &selector, "-o", "json"]),
        )
        .unwrap();
        list["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| {
                let name = n["metadata"]["name"].as_str().unwrap().to_string();
                (name, n["metadata"]["labels"].clone())
            })
            .collect()
    }

    /// The cluster's status as gcloud describes it.
    fn status(&self) -> String {
        self.gcloud_ok(&[
            "container",
            "clusters",
            "describe",
            CLUSTER,
            "--format=value(status)",
        ])
        .trim()
        .to_string()
    }

    fn pool(&self, pool: &str) -> Value {
        serde_json::from_str(&self.gcloud_ok(&[
            "container",
            "node-pools",
            "describe",
            pool,
            "--cluster",
            CLUSTER,
            "--format=json",
        ]))
        .unwrap()
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn tools_available() -> bool {
    let works = |tool: &str, args: &[&str]| {
        Command::new(tool)
            .args(args)
            .env("CLOUDSDK_COMPONENT_MANAGER_DISABLE_UPDATE_CHECK", "1")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let present = works("gcloud", &["--version"]) && works("kubectl", &["version", "--client"]);
    if !present {
        assert!(
            std::env::var("GANTRY_REQUIRE_GCLOUD").as_deref() != Ok("1"),
            "GANTRY_REQUIRE_GCLOUD=1 but gcloud or kubectl is not installed"
        );
        eprintln!(
            "skipping: gcloud or kubectl is not installed (set GANTRY_REQUIRE_GCLOUD=1 to make \
             this a failure)"
        );
    }
    present
}

fn label<'a>(labels: &'a Value, key: &str) -> &'a str {
    labels[key].as_str().unwrap_or_default()
}

#[test]
fn gcloud_resizes_the_default_pool_and_kubectl_sees_one_node_left() {
    if !tools_available() {
        return;
    }
    let sim = Sim::start("0.01");
    assert_eq!(sim.nodes_of("default-pool").len(), 3);
    sim.gcloud_ok(&[
        "container",
        "clusters",
        "resize",
        CLUSTER,
        "--node-pool",
        "default-pool",
        "--num-nodes",
        "1",
        "--quiet",
    ]);
    let nodes = sim.nodes_of("default-pool");
    assert_eq!(nodes.len(), 1, "{nodes:?}");
    assert_eq!(
        label(&nodes[0].1, "node.kubernetes.io/instance-type"),
        "n1-standard-1"
    );
    assert_eq!(sim.status(), "RUNNING");
    let listed = sim.gcloud_ok(&[
        "container",
        "clusters",
        "list",
        "--format=value(currentNodeCount)",
    ]);
    assert_eq!(listed.trim(), "1");
}

#[test]
fn gcloud_creates_updates_and_deletes_a_node_pool_and_the_nodes_follow() {
    if !tools_available() {
        return;
    }
    let sim = Sim::start("0.01");
    let pools = ["container", "node-pools"];
    let on_cluster = ["--cluster", CLUSTER];
    let run = |args: &[&str]| {
        let all: Vec<&str> = pools
            .iter()
            .chain(args)
            .chain(&on_cluster)
            .copied()
            .collect();
        sim.gcloud_ok(&all)
    };

    run(&[
        "create",
        "gpu",
        "--machine-type",
        "n1-standard-4",
        "--num-nodes",
        "1",
    ]);
    assert_eq!(sim.status(), "RUNNING");
    let created = sim.nodes_of("gpu");
    assert_eq!(created.len(), 1, "{created:?}");
    let (first, labels) = &created[0];
    assert_eq!(
        label(labels, "node.kubernetes.io/instance-type"),
        "n1-standard-4"
    );
    assert_eq!(label(labels, "cloud.google.com/gke-nodepool"), "gpu");
    assert!(first.starts_with("gke-c1-gpu-"), "{first}");
    assert_eq!(sim.pool("gpu")["status"], "RUNNING");
    assert_eq!(sim.nodes_of("default-pool").len(), 3);

    // A pod bound to the pool's node is evicted when the node is drained for its replacement.
    let overrides = r#"{"spec":{"nodeSelector":{"cloud.google.com/gke-nodepool":"gpu"}}}"#;
    sim.kubectl_ok(&[
        "run",
        "on-gpu",
        "--image=busybox",
        "--restart=Never",
        "--env=SIM_LOG_LINES=1000000",
        "--overrides",
        overrides,
    ]);
    sim.kubectl_ok(&[
        "wait",
        "--for=condition=Ready",
        "pod/on-gpu",
        "--timeout=60s",
    ]);

    // A new machine type is a surge upgrade: a new node, the old one drained and deleted.
    run(&["update", "gpu", "--machine-type", "e2-standard-2"]);
    assert_eq!(sim.status(), "RUNNING");
    let upgraded = sim.nodes_of("gpu");
    assert_eq!(upgraded.len(), 1, "{upgraded:?}");
    let (second, labels) = &upgraded[0];
    assert_ne!(second, first, "the node was recreated");
    assert_eq!(
        label(labels, "node.kubernetes.io/instance-type"),
        "e2-standard-2"
    );
    assert_eq!(label(labels, "cloud.google.com/machine-family"), "e2");
    assert_eq!(sim.pool("gpu")["config"]["machineType"], "e2-standard-2");
    let pods = sim.kubectl_ok(&["get", "pods", "-o", "name"]);
    assert!(!pods.contains("pod/on-gpu"), "{pods}");

    // Labels change in place.
    run(&["update", "gpu", "--node-labels", "team=ml"]);
    let relabelled = sim.nodes_of("gpu");
    assert_eq!(relabelled.len(), 1);
    assert_eq!(&relabelled[0].0, second, "labels do not recreate nodes");
    assert_eq!(label(&relabelled[0].1, "team"), "ml");
    assert_eq!(sim.pool("gpu")["config"]["labels"]["team"], "ml");

    run(&["delete", "gpu", "--quiet"]);
    assert_eq!(sim.status(), "RUNNING");
    assert!(sim.nodes_of("gpu").is_empty());
    let listed = sim.gcloud_ok(&["container", "node-pools", "list", "--cluster", CLUSTER]);
    assert!(!listed.contains("gpu"), "{listed}");
    assert_eq!(sim.nodes_of("default-pool").len(), 3);
}

#[test]
fn a_gpu_pool_gets_gkes_accelerator_labels() {
    if !tools_available() {
        return;
    }
    let sim = Sim::start("0.01");
    sim.gcloud_ok(&[
        "container",
        "node-pools",
        "create",
        "t4",
        "--cluster",
        CLUSTER,
        "--machine-type",
        "n1-standard-4",
        "--accelerator",
        "type=nvidia-tesla-t4,count=1",
        "--num-nodes",
        "2",
    ]);
    let nodes = sim.nodes_of("t4");
    assert_eq!(nodes.len(), 2, "{nodes:?}");
    for (_, labels) in &nodes {
        assert_eq!(
            label(labels, "cloud.google.com/gke-accelerator"),
            "nvidia-tesla-t4"
        );
        assert_eq!(
            label(labels, "node.kubernetes.io/instance-type"),
            "n1-standard-4"
        );
    }
}

#[test]
fn gcloud_enables_autoscaling_on_the_default_pool() {
    if !tools_available() {
        return;
    }
    let sim = Sim::start("0.01");
    sim.gcloud_ok(&[
        "container",
        "clusters",
        "update",
        CLUSTER,
        "--enable-autoscaling",
        "--node-pool",
        "default-pool",
        "--min-nodes",
        "3",
        "--max-nodes",
        "5",
    ]);
    // Settings only: the update adds and removes no node. (The minimum is the pool's size: the
    // cluster autoscaler, which removes idle nodes after ten simulated minutes — 6 s at this
    // scale, less than gcloud may take on a busy machine — can remove none.)
    assert_eq!(sim.nodes_of("default-pool").len(), 3);
    assert_eq!(sim.status(), "RUNNING");
    let autoscaling = &sim.pool("default-pool")["autoscaling"];
    assert_eq!(autoscaling["enabled"], true, "{autoscaling}");
    assert_eq!(autoscaling["minNodeCount"], 3);
    assert_eq!(autoscaling["maxNodeCount"], 5);
}

#[test]
fn gcloud_sets_the_clusters_labels() {
    if !tools_available() {
        return;
    }
    let sim = Sim::start("0.01");
    sim.gcloud_ok(&[
        "container",
        "clusters",
        "update",
        CLUSTER,
        "--update-labels",
        "team=ml,env=dev",
    ]);
    let labels = sim.gcloud_ok(&[
        "container",
        "clusters",
        "describe",
        CLUSTER,
        "--format=json(resourceLabels)",
    ]);
    let labels: Value = serde_json::from_str(&labels).unwrap();
    assert_eq!(
        labels["resourceLabels"],
        serde_json::json!({"team": "ml", "env": "dev"})
    );
}

#[test]
fn bad_requests_get_gkes_errors() {
    if !tools_available() {
        return;
    }
    let sim = Sim::start("0.01");
    let negative = sim.gcloud_err(&[
        "container",
        "clusters",
        "resize",
        CLUSTER,
        "--node-pool",
        "default-pool",
        "--num-nodes",
        "-1",
        "--quiet",
    ]);
    assert!(
        negative.contains("INVALID_ARGUMENT") && negative.contains("\"node_count\": -1"),
        "{negative}"
    );
    let unknown_pool = sim.gcloud_err(&[
        "container",
        "node-pools",
        "update",
        "nope",
        "--cluster",
        CLUSTER,
        "--node-labels",
        "a=b",
    ]);
    assert!(
        unknown_pool.contains("code=404") && unknown_pool.contains("clusters/c1/nodePools/nope"),
        "{unknown_pool}"
    );
    let unknown_machine = sim.gcloud_err(&[
        "container",
        "node-pools",
        "create",
        "big",
        "--cluster",
        CLUSTER,
        "--machine-type",
        "n9-huge",
    ]);
    assert!(
        unknown_machine.contains("code=400")
            && unknown_machine.contains("Machine type \"n9-huge\" does not exist"),
        "{unknown_machine}"
    );
    let limits = sim.gcloud_err(&[
        "container",
        "clusters",
        "update",
        CLUSTER,
        "--enable-autoscaling",
        "--node-pool",
        "default-pool",
        "--min-nodes",
        "3",
        "--max-nodes",
        "1",
    ]);
    assert!(
        limits.contains("INVALID_ARGUMENT") && limits.contains("max_node_count"),
        "{limits}"
    );
    // Nothing was changed by any of them.
    assert_eq!(sim.status(), "RUNNING");
    assert_eq!(sim.nodes_of("default-pool").len(), 3);
    assert!(sim.nodes_of("big").is_empty());
}

#[test]
fn the_cluster_is_reconciling_while_a_resize_runs_and_refuses_another_change() {
    if !tools_available() {
        return;
    }
    // At GKE's own pace a resize takes over a minute: ample time to look while it runs.
    let sim = Sim::start("1");
    sim.gcloud_ok(&[
        "container",
        "clusters",
        "resize",
        CLUSTER,
        "--node-pool",
        "default-pool",
        "--num-nodes",
        "1",
        "--quiet",
        "--async",
    ]);
    assert_eq!(sim.status(), "RECONCILING");
    assert_eq!(sim.pool("default-pool")["status"], "RECONCILING");
    let running = sim.gcloud_ok(&[
        "container",
        "operations",
        "list",
        "--filter=status=RUNNING",
        "--format=value(name,operationType)",
    ]);
    let (operation, kind) = running.trim().split_once('\t').unwrap();
    assert!(operation.starts_with("operation-"), "{running}");
    assert_eq!(kind, "SET_NODE_POOL_SIZE");
    let busy = format!(
        "Operation {operation} is currently resizing a node pool for cluster c1. Please wait and \
         try again once it is done."
    );
    let second_resize = sim.gcloud_err(&[
        "container",
        "clusters",
        "resize",
        CLUSTER,
        "--node-pool",
        "default-pool",
        "--num-nodes",
        "2",
        "--quiet",
    ]);
    assert!(
        second_resize.contains("FAILED_PRECONDITION") && second_resize.contains(&busy),
        "{second_resize}"
    );
    // gcloud words this one as a bare HTTP 400, which FAILED_PRECONDITION is.
    let new_pool = sim.gcloud_err(&[
        "container",
        "node-pools",
        "create",
        "second",
        "--cluster",
        CLUSTER,
        "--num-nodes",
        "1",
    ]);
    assert!(
        new_pool.contains("code=400") && new_pool.contains(&busy),
        "{new_pool}"
    );
    assert_eq!(sim.status(), "RECONCILING");
}

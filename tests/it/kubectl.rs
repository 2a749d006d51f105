//! The real kubectl against `gantry sim --cluster ml-gke-cluster`: what an operator would type.
//! Skipped (saying so) where kubectl is absent, unless GANTRY_REQUIRE_KUBECTL=1.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

struct Sim {
    child: Child,
    dir: tempfile::TempDir,
}

impl Sim {
    /// Starts `gantry sim` and returns once it has said its state directory is ready.
    fn start() -> Sim {
        let dir = tempfile::tempdir().unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_gantry"));
        cmd.args([
            "sim",
            "--cluster",
            "ml-gke-cluster",
            "--time-scale",
            "0.01",
            "--state-dir",
        ])
        .arg(dir.path());
        Sim::spawn(cmd, dir)
    }

    /// Runs `command` (a simulator keeping its state in `dir`) until it says it serves.
    fn spawn(mut command: Command, dir: tempfile::TempDir) -> Sim {
        let mut child = command.stderr(Stdio::piped()).spawn().unwrap();
        let stderr = child.stderr.take().unwrap();
        let mut lines = BufReader::new(stderr).lines();
        for line in lines.by_ref() {
            if line.unwrap().contains("state in") {
                break;
            }
        }
        // Keep draining so the simulator never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        Sim { child, dir }
    }

    fn kubeconfig(&self) -> PathBuf {
        self.dir.path().join("kubeconfig")
    }

    fn kubectl(&self, args: &[&str]) -> Output {
        kubectl_command(&self.kubeconfig(), self.dir.path())
            .args(args)
            .output()
            .unwrap()
    }

    /// Runs kubectl and returns its stdout, failing the test with stderr when it fails.
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

fn kubectl_command(kubeconfig: &Path, cache: &Path) -> Command {
    let mut cmd = Command::new("kubectl");
    cmd.env("KUBECONFIG", kubeconfig)
        .arg("--cache-dir")
        .arg(cache.join("kube-cache"));
    cmd
}

fn seed_job() -> String {
    format!("{}/assets/ml-training-job.yaml", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn kubectl_gets_describes_and_waits_on_the_seed_job() {
    if !gantry_test_support::kubectl_available() {
        return;
    }
    let sim = Sim::start();
    let nodes = sim.ok(&["get", "nodes"]);
    assert_eq!(
        nodes.lines().filter(|l| l.contains(" Ready ")).count(),
        3,
        "{nodes}"
    );
    assert!(
        nodes.starts_with("NAME") && nodes.contains("v1.32."),
        "{nodes}"
    );
    assert!(
        sim.ok(&["create", "-f", &seed_job()])
            .contains("job.batch/ml-training-job created")
    );
    assert!(
        sim.ok(&[
            "wait",
            "--for=condition=complete",
            "job/ml-training-job",
            "--timeout=60s"
        ])
        .contains("condition met")
    );
    let jobs = sim.ok(&["get", "jobs"]);
    assert!(
        jobs.contains("STATUS")
            && jobs.contains("COMPLETIONS")
            && jobs.contains("Complete")
            && jobs.contains("1/1"),
        "{jobs}"
    );
    let pods = sim.ok(&["get", "pods", "-l", "job=ml-training", "-o", "wide"]);
    assert!(
        pods.contains("Completed") && pods.contains("gke-ml-gke-cluster-default-pool-"),
        "{pods}"
    );
    let described = sim.ok(&["describe", "job", "ml-training-job"]);
    assert!(
        described.contains("Pods Statuses:")
            && described.contains("1 Succeeded")
            && described.contains("SuccessfulCreate"),
        "{described}"
    );
    let logs = sim.ok(&["logs", "job/ml-training-job"]);
    assert!(
        logs.contains("epoch 1/3") && logs.lines().count() == 60,
        "{logs}"
    );
    let followed = sim.ok(&["logs", "-f", "job/ml-training-job"]);
    assert_eq!(followed, logs);
    let all = sim.ok(&["get", "all"]);
    assert!(
        all.contains("pod/ml-training-job-") && all.contains("job.batch/ml-training-job"),
        "{all}"
    );
    assert!(
        sim.ok(&["delete", "job", "ml-training-job"])
            .contains("deleted")
    );
    let after = sim.kubectl(&["get", "job", "ml-training-job"]);
    assert!(!after.status.success() && String::from_utf8_lossy(&after.stderr).contains("NotFound"));
}

#[test]
fn kubectl_apply_is_idempotent_and_validates_fields() {
    if !gantry_test_support::kubectl_available() {
        return;
    }
    let sim = Sim::start();
    assert!(sim.ok(&["apply", "-f", &seed_job()]).contains("created"));
    assert!(sim.ok(&["apply", "-f", &seed_job()]).contains("unchanged"));
    let labelled = std::fs::read_to_string(seed_job())
        .unwrap()
        .replace("job: ml-training", "job: ml-training\n        team: vision");
    let changed = sim.dir.path().join("changed.yaml");
    std::fs::write(&changed, labelled).unwrap();
    // The template is immutable: the API server refuses, as a real one does.
    let refused = sim.kubectl(&["apply", "-f", changed.to_str().unwrap()]);
    assert!(
        !refused.status.success() && String::from_utf8_lossy(&refused.stderr).contains("immutable")
    );
    let bogus = std::fs::read_to_string(seed_job())
        .unwrap()
        .replace("backoffLimit: 2", "backoffLimit: 2\n  bogusField: 1")
        .replace("name: ml-training-job", "name: other-job");
    let bogus_file = sim.dir.path().join("bogus.yaml");
    std::fs::write(&bogus_file, bogus).unwrap();
    let strict = sim.kubectl(&["create", "-f", bogus_file.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&strict.stderr);
    assert!(
        !strict.status.success() && stderr.contains("unknown field \"spec.bogusField\""),
        "{stderr}"
    );
    sim.ok(&[
        "patch",
        "job",
        "ml-training-job",
        "--type=merge",
        "-p",
        r#"{"metadata":{"labels":{"owner":"ml"}}}"#,
    ]);
    assert!(
        sim.ok(&["get", "job", "ml-training-job", "--show-labels"])
            .contains("owner=ml")
    );
}

#[test]
fn kubectl_watches_pods_as_they_run() {
    if !gantry_test_support::kubectl_available() {
        return;
    }
    let sim = Sim::start();
    // At -v=6 kubectl logs each request it makes: once it has sent the watch, it has listed
    // (no pods yet) and follows every change since, however slowly it started.
    let mut watch = kubectl_command(&sim.kubeconfig(), sim.dir.path())
        .args(["get", "pods", "-w", "-v=6"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = watch.stdout.take().unwrap();
    let stderr = watch.stderr.take().unwrap();
    let (watching, watched) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.contains("watch=true") {
                let _ = watching.send(());
            }
        }
    });
    watched
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("kubectl watching within a minute");
    sim.ok(&["create", "-f", &seed_job()]);
    let mut seen = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        let done = line.contains("Completed");
        seen.push(line);
        if done {
            break;
        }
    }
    let _ = watch.kill();
    let _ = watch.wait();
    let statuses: Vec<&str> = seen
        .iter()
        .filter_map(|l| l.split_whitespace().nth(2))
        .collect();
    assert!(
        statuses.contains(&"Pending") || statuses.contains(&"ContainerCreating"),
        "{seen:?}"
    );
    assert!(statuses.contains(&"Running"), "{seen:?}");
    assert_eq!(statuses.last(), Some(&"Completed"), "{seen:?}");
}

/// The README's "simulator on its own" commands, as written: the first block in one process,
/// the second in a shell once the first says it serves, with the built `gantry` on `PATH`. Only
/// the state directory differs (`/tmp/sim` is shared by anything else on the machine).
#[test]
fn the_readme_simulator_commands_work_as_written() {
    if !gantry_test_support::kubectl_available() {
        return;
    }
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let blocks: Vec<&str> = readme
        .split("```sh\n")
        .skip(1)
        .filter_map(|b| b.split("```").next())
        .collect();
    let at = blocks
        .iter()
        .position(|b| {
            b.trim_start()
                .starts_with("gantry sim --state-dir /tmp/sim")
        })
        .expect("README starts the simulator on its own");
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().to_str().unwrap().to_owned();
    let script = |block: &str| block.replace("/tmp/sim", &state);
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_gantry")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );

    let mut sim = Command::new("bash");
    sim.args(["-c", &format!("exec {}", script(blocks[at]).trim())])
        .env("PATH", &path);
    let sim = Sim::spawn(sim, dir);

    let out = Command::new("bash")
        .args(["-euo", "pipefail", "-c", &script(blocks[at + 1])])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("PATH", &path)
        .env("HOME", sim.dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "README's commands failed: {}{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    for expected in [
        " Ready ",
        "job.batch/ml-training-job created",
        "condition met",
        "epoch 3/3 done",
        "\"status\": \"RUNNING\"",
    ] {
        assert!(stdout.contains(expected), "no {expected:?} in: {stdout}");
    }
}

//! The real kubectl against an in-process simulated cloud (so a test can also look inside the
//! cluster): the seed's cluster, the kubeconfig the simulator writes, and kubectl runs bounded
//! so a failing test fails within a minute.

use std::process::{Output, Stdio};

use gantry::sim::kube::process::RunImage;
use gantry::sim::{SimCloud, SimOptions};
use gantry_test_support as common;

pub struct Kubectl {
    pub cloud: SimCloud,
    dir: tempfile::TempDir,
}

impl Kubectl {
    /// A cloud a hundred times faster than life whose images matching `run_images` run as
    /// local processes.
    pub async fn start(run_images: Vec<RunImage>) -> Kubectl {
        let dir = tempfile::tempdir().unwrap();
        let cloud = common::cloud_with(SimOptions {
            time_scale: 0.01,
            clusters: vec![common::CLUSTER.into()],
            state_dir: Some(dir.path().join("sim")),
            run_images,
            ..Default::default()
        })
        .await;
        Kubectl { cloud, dir }
    }

    pub fn command(&self) -> tokio::process::Command {
        let mut command = tokio::process::Command::new("kubectl");
        command
            .env("KUBECONFIG", self.dir.path().join("sim/kubeconfig"))
            .arg("--cache-dir")
            .arg(self.dir.path().join("kube-cache"))
            .stdin(Stdio::null())
            .kill_on_drop(true);
        command
    }

    pub async fn run(&self, args: &[&str]) -> Output {
        let output = self.command().args(args).output();
        tokio::time::timeout(common::WAIT_BOUND, output)
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "kubectl {args:?} did not end within {:?}",
                    common::WAIT_BOUND
                )
            })
            .unwrap()
    }

    /// kubectl's stdout; a kubectl that fails fails the test, with what it said.
    pub async fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args).await;
        let stdout = common::text(&out.stdout);
        assert!(
            out.status.success(),
            "kubectl {args:?} failed: {}{stdout}",
            common::text(&out.stderr)
        );
        stdout
    }

    /// Writes `manifest` (JSON, which kubectl reads as it reads YAML) where kubectl can read it.
    pub fn manifest(&self, name: &str, manifest: &serde_json::Value) -> String {
        let path = self.dir.path().join(name);
        std::fs::write(&path, manifest.to_string()).unwrap();
        path.display().to_string()
    }
}

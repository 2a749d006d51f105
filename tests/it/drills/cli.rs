//! The real `gantry logs --follow` beside the engine in a drill: started through GKE with the
//! simulator's token file in a HOME of its own, its output read as it comes and counted.

use gantry_test_support as common;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use gantry::sim::SimCloud;
use gantry::sim::cloud::{DEMO_LOCATION, DEMO_PROJECT};

use super::truth::count_lines;

/// The `gantry logs --follow` child, through GKE with the simulator's token file.
pub(super) struct Cli {
    child: tokio::process::Child,
    home: tempfile::TempDir,
    /// Read as it comes, so a full pipe never slows the follow down.
    stdout: tokio::task::JoinHandle<Vec<u8>>,
    stderr: tokio::task::JoinHandle<Vec<u8>>,
    /// Lines printed so far.
    pub(super) printed: Arc<AtomicUsize>,
}

fn drain(
    mut r: impl tokio::io::AsyncRead + Unpin + Send + 'static,
    lines: Arc<AtomicUsize>,
) -> tokio::task::JoinHandle<Vec<u8>> {
    tokio::spawn(async move {
        use tokio::io::AsyncReadExt as _;
        let mut out = Vec::new();
        let mut buf = vec![0u8; 64 * 1024];
        while let Ok(n) = r.read(&mut buf).await {
            if n == 0 {
                break;
            }
            lines.fetch_add(count_lines(&buf[..n]), Ordering::Relaxed);
            out.extend_from_slice(&buf[..n]);
        }
        out
    })
}

impl Cli {
    pub(super) fn start(cloud: &SimCloud, sim_dir: &Path) -> Cli {
        let home = tempfile::tempdir().unwrap();
        let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_gantry"))
            .args(["--gke-endpoint", cloud.gke_endpoint()])
            .arg("--access-token-file")
            .arg(sim_dir.join("token"))
            .args(["--project", DEMO_PROJECT, "--location", DEMO_LOCATION])
            .args(["logs", "--follow"])
            .env("HOME", home.path())
            .env("XDG_CONFIG_HOME", home.path().join("config"))
            .env("XDG_STATE_HOME", home.path().join("state"))
            .env("KUBECONFIG", home.path().join("kubeconfig"))
            .env_remove("GOOGLE_CLOUD_PROJECT")
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let printed = Arc::new(AtomicUsize::new(0));
        let stdout = drain(child.stdout.take().unwrap(), printed.clone());
        let stderr = drain(child.stderr.take().unwrap(), Arc::default());
        Cli {
            child,
            home,
            stdout,
            stderr,
            printed,
        }
    }

    pub(super) async fn finish(&mut self) -> ChildOutput {
        let status = self.child.wait().await.unwrap();
        ChildOutput {
            code: status.code(),
            stdout: (&mut self.stdout).await.unwrap(),
            stderr: (&mut self.stderr).await.unwrap(),
        }
    }

    pub(super) fn saved_dir(&self, job: &str) -> PathBuf {
        self.home
            .path()
            .join("state/gantry/logs")
            .join(common::CLUSTER)
            .join(job)
    }
}

pub(super) struct ChildOutput {
    pub(super) code: Option<i32>,
    pub(super) stdout: Vec<u8>,
    pub(super) stderr: Vec<u8>,
}

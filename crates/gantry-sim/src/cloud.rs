//! The whole simulated cloud in one value: the GKE API, every cluster it runs, the shared token
//! and CA, faults, and the state directory files clients use to find it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::auth::TokenAuthority;
use super::clock::Clock;
use super::faults::{Fault, Faults};
use super::gke::{GkeApi, RunningCluster};
use super::kube::cluster::{ClusterRuntime, ClusterSpec};
use super::kube::process::{RunImage, RunImages};
use super::state_files::{context_name, write_private};
use super::tls::CertificateAuthority;
use super::{SimError, SimShared};

pub const DEMO_PROJECT: &str = "demo-project";
pub const DEMO_LOCATION: &str = "us-central1-a";

#[derive(Debug, Clone)]
pub struct SimOptions {
    /// Where endpoints.json, token, ca.pem and kubeconfig are kept current (none: nowhere).
    pub state_dir: Option<PathBuf>,
    pub time_scale: f64,
    /// Port of the GKE API (0: the OS picks).
    pub gke_port: u16,
    /// Clusters that exist, RUNNING, from the start.
    pub clusters: Vec<String>,
    pub faults: Vec<Fault>,
    /// Where containers with `SIM_REPLAY=NAME` read the file NAME from (none: they fail).
    pub replay_dir: Option<PathBuf>,
    /// Images whose containers run as local processes (`--run-image PATTERN=EXECUTABLE`).
    pub run_images: Vec<RunImage>,
    /// `--run-code`: code attempts (Python over code an init container unpacks) run as local
    /// processes of this machine's python3.
    pub run_code: bool,
}

impl Default for SimOptions {
    fn default() -> Self {
        Self {
            state_dir: None,
            time_scale: 1.0,
            gke_port: 0,
            clusters: Vec::new(),
            faults: Vec::new(),
            replay_dir: None,
            run_images: Vec::new(),
            run_code: false,
        }
    }
}

/// `--replay-dir` as containers will read it: resolved once, so a link inside cannot be
/// judged against a different directory later.
fn resolve_replay_dir(dir: &Path) -> Result<Arc<Path>, SimError> {
    let resolved = dir.canonicalize().map_err(|e| {
        SimError::Other(format!(
            "--replay-dir {}: {e}: give a directory that holds the logs to replay",
            dir.display()
        ))
    })?;
    if !resolved.is_dir() {
        return Err(SimError::Other(format!(
            "--replay-dir {}: not a directory: give a directory that holds the logs to replay",
            dir.display()
        )));
    }
    Ok(Arc::from(resolved))
}

pub struct SimCloud {
    shared: SimShared,
    gke: Arc<GkeApi>,
    gke_url: String,
    stop: CancellationToken,
}

impl std::fmt::Debug for SimCloud {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimCloud")
            .field("gke_url", &self.gke_url)
            .finish_non_exhaustive()
    }
}

impl SimCloud {
    pub async fn start(options: SimOptions) -> Result<Self, SimError> {
        let token_file = options.state_dir.as_ref().map(|d| d.join("token"));
        if let Some(dir) = &options.state_dir {
            std::fs::create_dir_all(dir)?;
        }
        let replay_dir = match &options.replay_dir {
            Some(dir) => Some(resolve_replay_dir(dir)?),
            None => None,
        };
        let mut run_images = RunImages::new(options.run_images.clone())
            .resolved()
            .map_err(|e| SimError::Other(e.to_string()))?;
        if options.run_code {
            let interpreter = crate::kube::process::Interpreter::find()
                .map_err(|e| SimError::Other(e.to_string()))?;
            run_images = run_images.with_code(interpreter);
        }
        let ca = Arc::new(CertificateAuthority::generate()?);
        let shared = SimShared {
            clock: Clock::new(options.time_scale),
            faults: Arc::new(Faults::new(options.faults.clone())),
            auth: TokenAuthority::new(token_file)?,
            ca,
            replay_dir,
            run_images: Arc::new(run_images),
        };
        if let Some(dir) = &options.state_dir {
            write_private(&dir.join("ca.pem"), shared.ca.pem().as_bytes())?;
        }
        let stop = CancellationToken::new();
        let gke = GkeApi::new(shared.clone());
        let port = gke.serve(options.gke_port, stop.clone()).await?;
        let gke_url = format!("http://127.0.0.1:{port}");
        for name in &options.clusters {
            gke.create_running(ClusterSpec::seed(DEMO_PROJECT, DEMO_LOCATION, name))
                .await?;
        }
        let cloud = Self {
            shared,
            gke,
            gke_url,
            stop,
        };
        if let Some(dir) = options.state_dir {
            cloud.keep_state_dir(dir).await?;
        }
        cloud.rotate_tokens();
        Ok(cloud)
    }

    pub fn gke_endpoint(&self) -> &str {
        &self.gke_url
    }

    /// The bearer token in force now.
    pub fn token(&self) -> String {
        self.shared.auth.current()
    }

    pub fn ca_pem(&self) -> &str {
        self.shared.ca.pem()
    }

    pub fn faults(&self) -> &Faults {
        &self.shared.faults
    }

    pub fn clock(&self) -> Clock {
        self.shared.clock
    }

    pub fn shared(&self) -> &SimShared {
        &self.shared
    }

    pub fn gke(&self) -> &Arc<GkeApi> {
        &self.gke
    }

    /// The runtime of a RUNNING cluster, for tests that look inside it.
    pub fn cluster(
        &self,
        project: &str,
        location: &str,
        name: &str,
    ) -> Option<Arc<ClusterRuntime>> {
        self.gke.runtime(project, location, name)
    }

    /// Stops every API and cluster now (a process that exits next leaves nothing behind).
    pub fn shutdown(&self) {
        self.stop.cancel();
        self.gke.shutdown();
    }

    async fn keep_state_dir(&self, dir: PathBuf) -> Result<(), SimError> {
        let mut running = self.gke.running();
        let snapshot = running.borrow_and_update().clone();
        write_state(&dir, &self.gke_url, &snapshot, &self.shared)?;
        let (gke_url, shared, stop) =
            (self.gke_url.clone(), self.shared.clone(), self.stop.clone());
        let mut token_seen = shared.auth.current();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(100));
            loop {
                tokio::select! {
                    _ = stop.cancelled() => return,
                    changed = running.changed() => if changed.is_err() { return },
                    // The kubeconfig carries the token: rewrite it when the token rotates.
                    _ = tick.tick() => {
                        let now = shared.auth.current();
                        if now == token_seen { continue; }
                        token_seen = now;
                    }
                }
                let clusters = running.borrow_and_update().clone();
                if let Err(e) = write_state(&dir, &gke_url, &clusters, &shared) {
                    tracing::warn!(error = %e, "could not update the simulator's state directory");
                }
            }
        });
        Ok(())
    }

    fn rotate_tokens(&self) {
        let (faults, auth, stop) = (
            self.shared.faults.clone(),
            self.shared.auth.clone(),
            self.stop.clone(),
        );
        tokio::spawn(async move {
            loop {
                let wait = faults.token_expiry().unwrap_or(Duration::from_millis(100));
                tokio::select! {
                    _ = stop.cancelled() => return,
                    _ = tokio::time::sleep(wait) => {}
                }
                if faults.token_expiry().is_some() {
                    match auth.rotate() {
                        Ok(()) => faults.fired("token-expiry"),
                        Err(e) => {
                            tracing::warn!(error = %e, "could not rotate the simulated token")
                        }
                    }
                }
            }
        });
    }
}

impl Drop for SimCloud {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn write_state(
    dir: &Path,
    gke_url: &str,
    clusters: &[RunningCluster],
    shared: &SimShared,
) -> Result<(), SimError> {
    let endpoints: BTreeMap<String, String> = clusters
        .iter()
        .map(|c| {
            (
                format!("{}/{}/{}", c.project, c.location, c.name),
                format!("https://{}", c.endpoint),
            )
        })
        .collect();
    let body = json!({"gke": gke_url, "clusters": endpoints});
    write_private(
        &dir.join("endpoints.json"),
        format!("{body:#}\n").as_bytes(),
    )?;
    write_private(
        &dir.join("kubeconfig"),
        kubeconfig(clusters, shared).as_bytes(),
    )?;
    Ok(())
}

fn kubeconfig(clusters: &[RunningCluster], shared: &SimShared) -> String {
    let ca = base64::engine::general_purpose::STANDARD.encode(shared.ca.pem());
    let token = shared.auth.current();
    let mut sorted: Vec<&RunningCluster> = clusters.iter().collect();
    sorted.sort_by_key(|c| c.created_at);
    let current = sorted
        .last()
        .map(|c| context_name(&c.project, &c.location, &c.name))
        .unwrap_or_default();
    let entries: Vec<(String, &RunningCluster)> = sorted
        .iter()
        .map(|c| (context_name(&c.project, &c.location, &c.name), *c))
        .collect();
    let config = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "preferences": {},
        "current-context": current,
        "clusters": entries.iter().map(|(n, c)| json!({"name": n, "cluster": {"server": format!("https://{}", c.endpoint), "certificate-authority-data": ca}})).collect::<Vec<_>>(),
        "users": entries.iter().map(|(n, _)| json!({"name": n, "user": {"token": token}})).collect::<Vec<_>>(),
        "contexts": entries.iter().map(|(n, _)| json!({"name": n, "context": {"cluster": n, "user": n}})).collect::<Vec<_>>(),
    });
    serde_norway::to_string(&config).unwrap_or_default()
}

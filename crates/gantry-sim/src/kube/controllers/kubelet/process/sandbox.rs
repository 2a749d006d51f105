//! What a process pod's containers share, as a pod sandbox does: a private directory of the
//! pod's own (its volumes, a home), its loopback address, its node's metadata server, and
//! projected tokens kept fresh. Made before the containers start, undone when the pod's task
//! ends: the directory removed, the address given back, the server stopped.

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::launch::{DEFAULT_PATH, Environment, Mounts};
use super::volumes::{self, SERVICE_ACCOUNT_VOLUME, TokenFile, Volumes};
use crate::kube::cluster::ClusterState;
use crate::kube::controllers::kubelet::MIN_RETRY_WAIT;
use crate::kube::controllers::kubelet::context::PodCtx;
use crate::kube::events::EventType;
use crate::kube::process::{SERVICE_ACCOUNT_DIR, private_dir};
use crate::kube::resources::Kind;
use crate::metadata::{self, Metadata};

/// The kubelet's volume-mount retry: doubling from half a second, at most about two minutes.
const MOUNT_RETRY_FIRST: Duration = Duration::from_millis(500);
const MOUNT_RETRY_MOST: Duration = Duration::from_secs(122);

pub struct Sandbox {
    pub ip: IpAddr,
    dir: tempfile::TempDir,
    volumes: Volumes,
    metadata: SocketAddr,
    /// Stops the metadata server and the token refresher.
    stop: CancellationToken,
    state: Arc<ClusterState>,
    ns: String,
    name: String,
    uid: String,
}

impl Sandbox {
    /// Mounts the pod's volumes, retrying (with `FailedMount` events) until they can be, then
    /// gives the pod its address and metadata server. None when the pod is stopped first.
    pub async fn prepare(ctx: &PodCtx, node: &str) -> Option<Sandbox> {
        let mut retry = MOUNT_RETRY_FIRST;
        let (dir, volumes) = loop {
            let pod = ctx.get()?;
            match mount(ctx, &pod) {
                Ok(mounted) => break mounted,
                Err(why) => {
                    ctx.event(EventType::Warning, "FailedMount", &why, "kubelet");
                    if !ctx.wait(retry, MIN_RETRY_WAIT).await {
                        return None;
                    }
                    retry = (retry * 2).min(MOUNT_RETRY_MOST);
                }
            }
        };
        let pod = ctx.get()?;
        let ip = ctx.state.processes.assign(&ctx.ns, &ctx.name, &ctx.uid);
        let stop = ctx.cancel.child_token();
        let mut sandbox = Sandbox {
            ip,
            dir,
            volumes,
            metadata: SocketAddr::new(ip, 0),
            stop: stop.clone(),
            state: ctx.state.clone(),
            ns: ctx.ns.clone(),
            name: ctx.name.clone(),
            uid: ctx.uid.clone(),
        };
        match metadata::serve(ip, metadata_of(&ctx.state, &pod, node), stop.clone()).await {
            Ok(address) => sandbox.metadata = address,
            Err(e) => {
                let why = format!("the node's metadata server could not listen on {ip}: {e}");
                ctx.event(
                    EventType::Warning,
                    "FailedCreatePodSandBox",
                    &why,
                    "kubelet",
                );
            }
        }
        for token in sandbox.volumes.tokens.clone() {
            tokio::spawn(keep_fresh(
                ctx.state.clone(),
                (*pod).clone(),
                token,
                stop.clone(),
            ));
        }
        Some(sandbox)
    }

    /// The container's mount paths and the directories that stand for them.
    pub fn mounts(&self, container: &Value) -> Mounts {
        let mut mounts: Vec<(String, PathBuf)> = container["volumeMounts"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| {
                let dir = self.volumes.dirs.get(m["name"].as_str()?)?;
                let sub = m["subPath"].as_str().filter(|s| !s.is_empty());
                let dir = sub.map_or_else(|| dir.clone(), |s| dir.join(s));
                Some((m["mountPath"].as_str()?.to_string(), dir))
            })
            .collect();
        if let Some(dir) = self.volumes.dirs.get(SERVICE_ACCOUNT_VOLUME) {
            mounts.push((SERVICE_ACCOUNT_DIR.to_string(), dir.clone()));
        }
        Mounts::new(mounts)
    }

    /// What the image and the runtime set before the container's own environment: PATH with
    /// the EXECUTABLE's directory first, HOSTNAME, HOME (an empty directory of the pod's own,
    /// as an image's home is), the API server's service variables and GCE_METADATA_HOST.
    /// Nothing of the machine's own environment.
    pub fn base_env(&self, pod: &Value, executable: &Path) -> Environment {
        let mut env = Environment::default();
        let path = match executable.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => {
                format!("{}:{DEFAULT_PATH}", dir.display())
            }
            _ => DEFAULT_PATH.to_string(),
        };
        env.set("PATH", path);
        let hostname = pod
            .pointer("/spec/hostname")
            .and_then(Value::as_str)
            .unwrap_or(&self.name);
        env.set("HOSTNAME", hostname.to_string());
        env.set("HOME", self.home().display().to_string());
        if let Some(api) = self.state.processes.api_server() {
            let (host, port) = (api.ip(), api.port());
            env.set("KUBERNETES_SERVICE_HOST", host.to_string());
            env.set("KUBERNETES_SERVICE_PORT", port.to_string());
            env.set("KUBERNETES_SERVICE_PORT_HTTPS", port.to_string());
            env.set("KUBERNETES_PORT", format!("tcp://{api}"));
            let tcp = format!("KUBERNETES_PORT_{port}_TCP");
            env.set(&tcp, format!("tcp://{api}"));
            env.set(&format!("{tcp}_PROTO"), "tcp".into());
            env.set(&format!("{tcp}_PORT"), port.to_string());
            env.set(&format!("{tcp}_ADDR"), host.to_string());
        }
        if self.metadata.port() != 0 {
            env.set("GCE_METADATA_HOST", self.metadata.to_string());
        }
        env
    }

    /// The directory standing for the pod's volume `name`.
    pub fn volume_dir(&self, name: &str) -> Option<&Path> {
        self.volumes.dirs.get(name).map(PathBuf::as_path)
    }

    /// Where a container runs unless it says: the pod's own directory.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        self.stop.cancel();
        self.state
            .processes
            .release(&self.ns, &self.name, &self.uid);
    }
}

/// The pod's directory (only its owner may enter) with its volumes written.
fn mount(ctx: &PodCtx, pod: &Value) -> Result<(tempfile::TempDir, Volumes), String> {
    let cannot = |e: std::io::Error| format!("could not make the pod's directory: {e}");
    let prefix = format!("gantry-pod-{}-{}-", ctx.ns, ctx.name);
    let dir = private_dir(&prefix)
        .tempdir_in(ctx.state.processes.directories().map_err(cannot)?)
        .map_err(cannot)?;
    std::fs::create_dir_all(dir.path().join("home"))
        .map_err(|e| format!("could not make the pod's home: {e}"))?;
    let volumes = volumes::write_all(&ctx.state, pod, dir.path())?;
    Ok((dir, volumes))
}

fn metadata_of(state: &Arc<ClusterState>, pod: &Value, node: &str) -> Metadata {
    let zone = state
        .store
        .get(Kind::Node, "", node)
        .and_then(|n| {
            crate::kube::meta::label(&n, "topology.kubernetes.io/zone").map(str::to_string)
        })
        .unwrap_or_else(|| state.spec.location.clone());
    let (now, of) = (state.clone(), pod.clone());
    Metadata {
        identity: state.google_identity(pod),
        account: Arc::new(move || now.google_identity(&of).email),
        cluster_name: state.spec.name.clone(),
        cluster_location: state.spec.location.clone(),
        zone,
        instance: node.to_string(),
        auth: state.shared.auth.clone(),
        faults: state.shared.faults.clone(),
    }
}

/// Writes the token again at four fifths of its life, as the kubelet's token manager does,
/// until the pod goes.
async fn keep_fresh(
    state: Arc<ClusterState>,
    pod: Value,
    token: TokenFile,
    stop: CancellationToken,
) {
    let mut expires_at = token.expires_at;
    while let Some(at) = expires_at {
        let left = at
            .duration_since(jiff::Timestamp::now())
            .as_secs_f64()
            .max(0.0);
        let refresh = Duration::from_secs_f64(left * 0.8).max(MIN_RETRY_WAIT);
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(refresh) => {}
        }
        match volumes::write_token(&state, &pod, &token) {
            Ok(at) => expires_at = at,
            Err(e) => {
                tracing::warn!(error = %e, "could not refresh a pod's projected token");
                // Asked again in a while, as the token manager retries.
                expires_at = jiff::Timestamp::now()
                    .checked_add(jiff::SignedDuration::from_secs(10))
                    .ok();
            }
        }
    }
}

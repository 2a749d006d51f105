//! Where the TUI works: the embedded simulated cloud (`--sim`), GKE (project and location), or
//! an existing cluster through a kubeconfig context. Resolved before any pane opens, so missing
//! credentials are one clear line, not a broken screen.

use std::sync::Arc;

use color_eyre::eyre::{Result, eyre};

use super::TargetInfo;
use crate::config::Config;
use crate::connect::Target;
use crate::gke::{ClusterRef, Gke, PollPolicy};

pub enum Backend {
    Gke {
        gke: Arc<Gke>,
        target: ClusterRef,
        poll: PollPolicy,
        /// In the cluster itself (the watcher): its pod's own client, used whatever GKE says
        /// or whether GKE can be read at all (a grant may be missing).
        in_cluster: Option<kube::Client>,
    },
    Context {
        client: kube::Client,
        name: String,
    },
}

pub struct Session {
    pub backend: Backend,
    pub config: Config,
    pub info: TargetInfo,
    /// How kubectl should reach a cluster Gantry creates or adopts (None: leave the kubeconfig).
    pub kubeconfig: Option<crate::kubeconfig::Credential>,
    /// Where saved logs go, when not the state directory's `logs`.
    pub(super) logs_root: Option<std::path::PathBuf>,
    /// Whether pods' logs are saved (not in the cluster: Cloud Logging keeps the containers'
    /// logs, and a pod's disk goes with it).
    pub(super) saves_logs: bool,
    /// The simulated cloud, alive as long as the session.
    pub(super) _sim: Option<Box<dyn std::any::Any + Send + Sync>>,
    /// Where the simulated cloud keeps its endpoints, token and kubeconfig (other terminals
    /// reach it through them).
    pub sim_dir: Option<std::path::PathBuf>,
    /// `--read-only` or the config's `read-only`: nothing is changed without being asked.
    pub read_only: bool,
    /// Where every change that reaches the engine is recorded.
    pub audit: super::audit::Audit,
    /// In a pod of the cluster (the watcher): it takes the recoverer's Lease first.
    pub in_cluster: bool,
    /// The time the engine reads.
    pub clock: super::clock::Clock,
}

impl Session {
    pub fn project(&self) -> Option<&str> {
        match &self.backend {
            Backend::Gke { target, .. } => Some(&target.project),
            Backend::Context { .. } => self.config.project.as_deref(),
        }
    }

    /// The config's watcher (`[watcher] in-cluster = true`) working on this session's cluster,
    /// as `gantry up` carries it; None without one, or on a cluster Gantry does not manage.
    pub fn watcher(&self) -> Option<Result<crate::watcher::desired::Desired, String>> {
        let Backend::Gke { gke, target, .. } = &self.backend else {
            return None;
        };
        let mut config = self.config.clone();
        config.project = Some(target.project.clone());
        config.location = Some(target.location.clone());
        crate::watcher::desired::Desired::in_cluster(&config, Some(gke.endpoint().to_string()))
    }

    /// Where an attempt's pods save their logs.
    pub fn logs_dir(&self, attempt: &str) -> Option<std::path::PathBuf> {
        if !self.saves_logs {
            return None;
        }
        let cluster = self.cluster_name();
        match &self.logs_root {
            Some(root) => Some(
                root.join(crate::paths::path_component(&cluster))
                    .join(crate::paths::path_component(attempt)),
            ),
            None => crate::k8s::logs::logs_dir(&cluster, attempt),
        }
    }

    pub fn cluster_name(&self) -> String {
        match &self.backend {
            Backend::Gke { target, .. } => target.name.clone(),
            Backend::Context { name, .. } => name.clone(),
        }
    }
}

/// What the operator asked for: where to work, and whether on the embedded simulated cloud.
#[derive(Debug, Clone, Default)]
pub struct SessionOptions {
    pub target: Target,
    /// Run on the embedded simulated cloud.
    pub sim: bool,
    /// With `sim`: every simulated delay multiplied by this.
    pub time_scale: f64,
    /// With `sim`: faults the simulated cloud injects.
    pub faults: Vec<crate::simulated::Fault>,
    /// With `sim`: the directory `SIM_REPLAY` files are read from.
    pub replay_dir: Option<std::path::PathBuf>,
    /// With `sim`: images whose containers run as local processes.
    pub run_images: Vec<crate::simulated::RunImage>,
    /// With `sim`: code attempts run as local processes of this machine's python3.
    pub run_code: bool,
    /// Where saved logs go (`<root>/<cluster>/<attempt>/<pod>.log`); default: the state
    /// directory's `logs`.
    pub logs_root: Option<std::path::PathBuf>,
    /// Read-only (the flag's or the config's, as `Settings` resolved it): the engine changes
    /// nothing on its own either (idle node pools stay).
    pub read_only: bool,
    /// The audit file (the command line gives the state directory's `audit.jsonl`); None:
    /// changes are not recorded.
    pub audit_file: Option<std::path::PathBuf>,
    /// The time the engine reads: the machine's, unless a test sets it apart.
    pub clock: super::clock::Clock,
    /// Running in a pod of the cluster (`--in-cluster`, the watcher): the pod's ServiceAccount
    /// for Kubernetes, the metadata server's identity for Google, no saved logs, the audit to
    /// the pod's log.
    pub in_cluster: bool,
}

/// A session on Google Cloud (GKE) or a kubeconfig context (`open_session` starts the
/// simulated cloud for `--sim`).
pub(super) async fn open(options: &SessionOptions, config: Config) -> Result<Session> {
    let read_only = options.read_only;
    let target = &options.target;
    if options.in_cluster {
        return open_in_cluster(options, config).await;
    }
    if let Some(context) = &target.context {
        let client = crate::connect::cluster_client(target, &config)
            .await
            .map_err(|e| eyre!("{e}"))?;
        let info = TargetInfo {
            place: format!("context {context}"),
            cluster: context.clone(),
            managed: false,
            unmanaged_reason: Some(String::from(
                "not Gantry's cluster: create and delete it with its own tools",
            )),
            simulated: false,
        };
        return Ok(Session {
            backend: Backend::Context {
                client,
                name: context.clone(),
            },
            config,
            info,
            kubeconfig: None,
            logs_root: options.logs_root.clone(),
            saves_logs: true,
            _sim: None,
            sim_dir: None,
            read_only,
            audit: audit_of(options),
            in_cluster: false,
            clock: options.clock,
        });
    }
    // A first run with nothing set up: say that the simulated cloud needs none of it.
    let or_sim = |e: crate::connect::ConnectError| {
        eyre!("{e}\n       (or try everything on the simulated cloud first: gantry --sim)")
    };
    let cluster = crate::connect::cluster_ref(target, &config).map_err(or_sim)?;
    let auth = crate::connect::auth(target).map_err(or_sim)?;
    auth.verify(std::time::Duration::from_secs(20))
        .await
        .map_err(|e| or_sim(e.into()))?;
    let gke = Gke::connect(auth, target.gke_endpoint.as_deref())
        .await
        .map_err(|e| eyre!("{e}"))?;
    let info = TargetInfo {
        place: format!("{}/{}", cluster.project, cluster.location),
        cluster: cluster.name.clone(),
        managed: true,
        unmanaged_reason: None,
        simulated: false,
    };
    Ok(Session {
        backend: Backend::Gke {
            gke: Arc::new(gke),
            target: cluster,
            poll: PollPolicy::default(),
            in_cluster: None,
        },
        config,
        info,
        kubeconfig: (!target.no_kubeconfig)
            .then(|| crate::kubeconfig::credential_for(target.access_token_file.as_deref())),
        logs_root: options.logs_root.clone(),
        saves_logs: true,
        _sim: None,
        sim_dir: None,
        read_only,
        audit: audit_of(options),
        in_cluster: options.in_cluster,
        clock: options.clock,
    })
}

/// A session in a pod of the cluster: Kubernetes through the pod's ServiceAccount, GKE (for
/// the node pools: the spot fallback, scaling to zero) with the pod's identity from the
/// metadata server. Without GKE — no credential, no grant — it still watches, recovers and
/// tells through the Kubernetes API; what needs GKE says it cannot.
async fn open_in_cluster(options: &SessionOptions, config: Config) -> Result<Session> {
    let inside = crate::k8s::in_cluster::connect().map_err(|e| eyre!("{e}"))?;
    let gke = match crate::connect::cluster_ref(&options.target, &config) {
        Ok(cluster) => gke_from_inside(options).await.map(|gke| (gke, cluster)),
        Err(e) => Err(e.to_string()),
    };
    let (info, backend) = match gke {
        Ok((gke, cluster)) => (
            TargetInfo {
                place: format!("{}/{} (in the cluster)", cluster.project, cluster.location),
                cluster: cluster.name.clone(),
                managed: true,
                unmanaged_reason: None,
                simulated: false,
            },
            Backend::Gke {
                gke: Arc::new(gke),
                target: cluster,
                poll: PollPolicy::default(),
                in_cluster: Some(inside.client),
            },
        ),
        Err(e) => {
            tracing::warn!(error = %e, "in the cluster without GKE: its node pools cannot be changed");
            let name = config.cluster.name.clone();
            (
                TargetInfo {
                    place: format!("namespace {} (in the cluster)", inside.namespace),
                    cluster: name.clone(),
                    managed: false,
                    unmanaged_reason: Some(format!("GKE cannot be reached from inside: {e}")),
                    simulated: false,
                },
                Backend::Context {
                    client: inside.client,
                    name,
                },
            )
        }
    };
    Ok(Session {
        backend,
        config,
        info,
        kubeconfig: None,
        logs_root: None,
        saves_logs: false,
        _sim: None,
        sim_dir: None,
        read_only: options.read_only,
        audit: audit_of(options),
        in_cluster: options.in_cluster,
        clock: options.clock,
    })
}

/// GKE with the pod's own identity (the metadata server's token).
async fn gke_from_inside(options: &SessionOptions) -> std::result::Result<Gke, String> {
    let auth = crate::connect::auth(&options.target).map_err(|e| e.to_string())?;
    auth.verify(std::time::Duration::from_secs(20))
        .await
        .map_err(|e| e.to_string())?;
    Gke::connect(auth, options.target.gke_endpoint.as_deref())
        .await
        .map_err(|e| e.to_string())
}

pub(super) fn audit_of(options: &SessionOptions) -> super::audit::Audit {
    if options.in_cluster {
        return super::audit::Audit::to_stderr();
    }
    options
        .audit_file
        .clone()
        .map(super::audit::Audit::to_file)
        .unwrap_or_default()
}

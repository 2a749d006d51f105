//! Where the TUI works: the embedded simulated cloud (`--sim`), GKE (project and location), or
//! an existing cluster through a kubeconfig context. Resolved before any pane opens, so missing
//! credentials are one clear line, not a broken screen.

use std::sync::Arc;

use color_eyre::eyre::{Result, WrapErr, eyre};

use super::TargetInfo;
use crate::config::Config;
use crate::connect::Target;
use crate::gke::{Auth, ClusterRef, Gke, PollPolicy, RequestRetry};
use crate::sim::cloud::{DEMO_LOCATION, DEMO_PROJECT};
use crate::sim::{SimCloud, SimOptions};

pub enum Backend {
    Gke {
        gke: Arc<Gke>,
        target: ClusterRef,
        poll: PollPolicy,
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
    logs_root: Option<std::path::PathBuf>,
    /// The simulated cloud, alive as long as the session.
    _sim: Option<SimCloud>,
    /// Where the simulated cloud keeps its endpoints, token and kubeconfig (other terminals
    /// reach it through them).
    pub sim_dir: Option<std::path::PathBuf>,
    /// `--read-only` or the config's `read-only`: nothing is changed without being asked.
    pub read_only: bool,
    /// Where every change that reaches the engine is recorded.
    pub audit: super::audit::Audit,
}

impl Session {
    pub fn project(&self) -> Option<&str> {
        match &self.backend {
            Backend::Gke { target, .. } => Some(&target.project),
            Backend::Context { .. } => self.config.project.as_deref(),
        }
    }

    /// Where an attempt's pods save their logs.
    pub fn logs_dir(&self, attempt: &str) -> Option<std::path::PathBuf> {
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
    pub faults: Vec<crate::sim::faults::Fault>,
    /// With `sim`: the directory `SIM_REPLAY` files are read from.
    pub replay_dir: Option<std::path::PathBuf>,
    /// Where saved logs go (`<root>/<cluster>/<attempt>/<pod>.log`); default: the state
    /// directory's `logs`.
    pub logs_root: Option<std::path::PathBuf>,
    /// `--read-only`: the engine changes nothing on its own either (idle node pools stay).
    pub read_only: bool,
    /// The audit file (the command line gives the state directory's `audit.jsonl`); None:
    /// changes are not recorded.
    pub audit_file: Option<std::path::PathBuf>,
}

pub async fn open(options: &SessionOptions, config: Config) -> Result<Session> {
    let read_only = options.read_only || config.read_only;
    if options.sim {
        return open_sim(options, config).await;
    }
    let target = &options.target;
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
            _sim: None,
            sim_dir: None,
            read_only,
            audit: audit_of(options),
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
        },
        config,
        info,
        kubeconfig: (!target.no_kubeconfig)
            .then(|| crate::kubeconfig::credential_for(target.access_token_file.as_deref())),
        logs_root: options.logs_root.clone(),
        _sim: None,
        sim_dir: None,
        read_only,
        audit: audit_of(options),
    })
}

async fn open_sim(options: &SessionOptions, config: Config) -> Result<Session> {
    let read_only = options.read_only || config.read_only;
    let base = crate::paths::state_dir()
        .ok_or_else(|| eyre!("no state directory: set HOME or XDG_STATE_HOME"))?;
    let dir = base.join("sim").join(std::process::id().to_string());
    let cloud = SimCloud::start(SimOptions {
        state_dir: Some(dir.clone()),
        time_scale: options.time_scale,
        faults: options.faults.clone(),
        replay_dir: options.replay_dir.clone(),
        ..Default::default()
    })
    .await
    .wrap_err("could not start the simulated cloud")?;
    let auth = Auth::token_file(&dir.join("token")).map_err(|e| eyre!("{e}"))?;
    // The simulator answers fast and never throttles for real: poll it at its own pace.
    let factor = options.time_scale.clamp(0.001, 1.0);
    let gke = Gke::connect(auth, Some(cloud.gke_endpoint()))
        .await
        .map_err(|e| eyre!("{e}"))?
        .with_retry(RequestRetry::scaled(factor));
    // The project and location the operator named (flag, then config), so a rehearsal on the
    // simulator looks like the real thing; else the simulator's own.
    let (project, location) = crate::gke::target::named_place(&options.target.named, &config);
    let project = project.unwrap_or_else(|| DEMO_PROJECT.to_string());
    let location = location.unwrap_or_else(|| DEMO_LOCATION.to_string());
    let target = ClusterRef::new(&project, &location, &config.cluster.name);
    let info = TargetInfo {
        place: format!("{project}/{location}"),
        cluster: config.cluster.name.clone(),
        managed: true,
        unmanaged_reason: None,
        simulated: true,
    };
    Ok(Session {
        backend: Backend::Gke {
            gke: Arc::new(gke),
            target,
            poll: PollPolicy::scaled(factor),
        },
        config,
        info,
        // The simulator keeps its own kubeconfig in its state directory.
        kubeconfig: None,
        logs_root: options.logs_root.clone(),
        _sim: Some(cloud),
        sim_dir: Some(dir),
        read_only,
        audit: audit_of(options),
    })
}

fn audit_of(options: &SessionOptions) -> super::audit::Audit {
    options
        .audit_file
        .clone()
        .map(super::audit::Audit::to_file)
        .unwrap_or_default()
}

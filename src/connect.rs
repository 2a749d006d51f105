//! From the command line to live clients: the effective configuration, the Container API client,
//! and a `kube::Client` for the training cluster (through `--context`, or through GKE).

use std::path::PathBuf;

use crate::config::{Config, ConfigError};
use crate::gke::{self, Auth, ClusterRef, Gke, GkeError};

/// Where Gantry works and with what credentials, as the operator said it (the command line
/// fills this in; nothing here knows about flags).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Target {
    pub named: gke::target::Named,
    /// The config file (default: `$XDG_CONFIG_HOME/gantry/config.toml` when it exists).
    pub config: Option<PathBuf>,
    /// A file holding an OAuth access token, instead of Application Default Credentials.
    pub access_token_file: Option<PathBuf>,
    /// The Container API endpoint (default: Google's).
    pub gke_endpoint: Option<String>,
    /// An existing cluster through this kubeconfig context, instead of GKE.
    pub context: Option<String>,
    /// A Job manifest to use instead of the config's `[job]` section.
    pub job_manifest: Option<PathBuf>,
    /// Leave the kubeconfig alone.
    pub no_kubeconfig: bool,
}

/// Why Gantry could not get a client.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("kubeconfig context {context}: {message}")]
    Kubeconfig { context: String, message: String },
    #[error(transparent)]
    Gke(#[from] GkeError),
}

impl ConnectError {
    /// 2 for bad input (config, flags, credentials), 1 when the cloud said no.
    pub fn exit_code(&self) -> i32 {
        match self {
            ConnectError::Config(_) | ConnectError::Kubeconfig { .. } => 2,
            ConnectError::Gke(e) => e.exit_code(),
        }
    }
}

/// The cluster Gantry works on (project, location, name), or why it cannot tell.
pub fn cluster_ref(target: &Target, config: &Config) -> Result<ClusterRef, ConnectError> {
    Ok(gke::target::resolve(&target.named, config)?)
}

/// The credentials: `--access-token-file`, else Application Default Credentials.
pub fn auth(target: &Target) -> Result<Auth, ConnectError> {
    Ok(Auth::from_flags(target.access_token_file.as_deref())?)
}

/// How long getting the first token may take before Gantry says the credentials are missing.
const CREDENTIALS_PATIENCE: std::time::Duration = std::time::Duration::from_secs(20);

/// A Container API client for `--gke-endpoint` (default: Google's) with [`auth`]'s credentials,
/// which are tried once first so that missing credentials fail early with the fix named.
pub async fn gke_client(target: &Target) -> Result<Gke, ConnectError> {
    let auth = auth(target)?;
    auth.verify(CREDENTIALS_PATIENCE).await?;
    Ok(Gke::connect(auth, target.gke_endpoint.as_deref()).await?)
}

/// A Kubernetes client for the training cluster: the kubeconfig's `--context NAME` when given,
/// else through GKE (the cluster must exist and be RUNNING).
pub async fn cluster_client(
    target: &Target,
    config: &Config,
) -> Result<kube::Client, ConnectError> {
    if let Some(context) = &target.context {
        return Ok(context_client(context).await?.0);
    }
    let cluster = cluster_ref(target, config)?;
    let gke = gke_client(target).await?;
    let found = gke
        .get_cluster(&cluster)
        .await?
        .ok_or_else(|| GkeError::NotFound {
            cluster: cluster.to_string(),
        })?;
    Ok(gke::cluster_client::cluster_client(
        &cluster,
        &found,
        gke.auth(),
    )?)
}

/// A client for a kubeconfig context, and the URL of its API server.
pub async fn context_client(context: &str) -> Result<(kube::Client, String), ConnectError> {
    let fail = |message: String| ConnectError::Kubeconfig {
        context: context.to_string(),
        message,
    };
    let options = kube::config::KubeConfigOptions {
        context: Some(context.to_string()),
        ..Default::default()
    };
    let config = kube::Config::from_kubeconfig(&options)
        .await
        .map_err(|e| fail(format!("{e} (see `kubectl config get-contexts`)")))?;
    let server = config.cluster_url.to_string();
    let client = crate::k8s::client::builder(&config)
        .map_err(|e| fail(e.to_string()))?
        .build();
    Ok((client, server))
}

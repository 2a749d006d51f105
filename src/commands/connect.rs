//! What the commands need before they can work: the configuration and a client for GKE (the
//! cluster commands) or for the training cluster (the Job commands). Each returns the exit code
//! of why it cannot, after saying so.

use crate::config::Config;
use crate::connect::{self, Target};
use crate::gke::{ClusterRef, Gke};
use crate::k8s::K8sError;
use crate::settings::Settings;

/// What every GKE command needs, or the exit code of why it cannot have it (after the message).
pub struct Prepared {
    pub config: Config,
    pub cluster: ClusterRef,
    pub gke: Gke,
}

pub async fn prepare(settings: &Settings) -> Result<Prepared, i32> {
    let (target, config) = (settings.target(), settings.config.clone());
    let cluster = connect::cluster_ref(target, &config).map_err(|e| fail(&e, e.exit_code()))?;
    let gke = connect::gke_client(target)
        .await
        .map_err(|e| fail(&e, e.exit_code()))?;
    Ok(Prepared {
        config,
        cluster,
        gke,
    })
}

/// Prints the error on stderr and gives back the exit code.
pub fn fail(e: &dyn std::fmt::Display, code: i32) -> i32 {
    crate::errln!("gantry: {e}");
    code
}

/// What every Job command needs: the configuration and a client for the training cluster.
pub struct JobTarget {
    pub config: Config,
    pub client: kube::Client,
    /// Names the cluster in the log directory: the kubeconfig context, or the GKE cluster.
    pub cluster_label: String,
    pub project: Option<String>,
}

/// Connects with the settings' configuration; on failure prints why and gives the exit code.
pub async fn connect(settings: &Settings) -> Result<JobTarget, i32> {
    let (target, mut config) = (settings.target(), settings.config.clone());
    let project = crate::gke::target::project(&target.named, &config);
    if config.project.is_none() {
        config.project = project.clone();
    }
    let client = connect::cluster_client(target, &config)
        .await
        .map_err(|e| fail(&e, e.exit_code()))?;
    let cluster_label = cluster_label(target, &config);
    Ok(JobTarget {
        config,
        client,
        cluster_label,
        project,
    })
}

/// The name the saved logs are kept under: the kubeconfig context, or the GKE cluster (as the
/// TUI names it too).
pub fn cluster_label(target: &Target, config: &Config) -> String {
    target
        .context
        .clone()
        .unwrap_or_else(|| config.cluster.name.clone())
}

/// Exit code for a failed Job action: 2 for what the user must change, 1 when the cluster
/// said no.
pub fn job_error(e: &K8sError) -> i32 {
    let code = match e {
        K8sError::Api { .. } => 1,
        _ => 2,
    };
    fail(e, code)
}

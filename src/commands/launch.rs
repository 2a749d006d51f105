//! `gantry launch`: the next attempt of the training Job from the configuration and flags.
//! Also the connection helpers the Job commands share.

use crate::cli::LaunchArgs;
use crate::config::Config;
use crate::connect::Target;
use crate::k8s::{self, K8sError, manifest};

use super::up::fail;

/// What every Job command needs: the configuration and a client for the training cluster.
pub(super) struct JobTarget {
    pub config: Config,
    pub client: kube::Client,
    /// Names the cluster in the log directory: the kubeconfig context, or the GKE cluster.
    pub cluster_label: String,
    pub project: Option<String>,
}

/// Loads the configuration and connects; on failure prints why and gives the exit code.
pub(super) async fn connect(target: &Target) -> Result<JobTarget, i32> {
    let mut config = crate::connect::load_config(target).map_err(|e| fail(&e, 2))?;
    if let Err(e) = config.validate() {
        return Err(fail(&e, 2));
    }
    let project = crate::gke::target::project(&target.named, &config);
    if config.project.is_none() {
        config.project = project.clone();
    }
    let client = crate::connect::cluster_client(target, &config)
        .await
        .map_err(|e| fail(&e, e.exit_code()))?;
    let cluster_label = target
        .context
        .clone()
        .unwrap_or_else(|| config.cluster.name.clone());
    Ok(JobTarget {
        config,
        client,
        cluster_label,
        project,
    })
}

/// Exit code for a failed Job action: 2 for what the user must change, 1 when the cluster
/// said no.
pub(super) fn job_error(e: &K8sError) -> i32 {
    let code = match e {
        K8sError::Api { .. } => 1,
        _ => 2,
    };
    fail(e, code)
}

pub async fn run(args: LaunchArgs, target: &Target) -> i32 {
    let mut t = match connect(target).await {
        Ok(t) => t,
        Err(code) => return code,
    };
    manifest::apply_launch_flags(
        &mut t.config.job,
        &(&args.overrides).into(),
        args.parallelism,
        args.completions,
        args.indexed,
    );
    match k8s::launch(&t.client, &t.config.job, t.project.as_deref()).await {
        Ok(l) => {
            print_launched("launched", &l);
            0
        }
        Err(e) => job_error(&e),
    }
}

pub(super) fn print_launched(verb: &str, l: &k8s::Launched) {
    crate::outln!("{verb} Job {} (attempt {})", l.job, l.attempt);
    if let Some(s) = &l.service {
        crate::outln!("workers reach each other through headless Service {s}");
    }
    crate::outln!("follow it with `gantry logs --follow`");
}

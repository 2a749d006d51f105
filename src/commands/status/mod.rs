//! `gantry status [--json]`: the cluster, and the training Job's attempts and pods when the
//! cluster can answer. `view` lays it out for a person; `--json` is one document for scripts.

mod view;

use std::path::PathBuf;

use serde::Serialize;

pub use view::render;

use super::connect::{Prepared, fail, prepare};
use crate::cli::StatusArgs;
use crate::config::Config;
use crate::connect::Target;
use crate::gke::ClusterSummary;
use crate::k8s::JobStatus;
use crate::k8s::cluster_info::{ContextStatus, ContextSummary, describe};
use crate::k8s::logs::logs_dir;

/// `gantry status --json`: one object.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusReport {
    /// The cluster; for GKE `status` is `NOT_FOUND` when there is none.
    pub cluster: ClusterReport,
    /// The training Job, when the cluster serves its API.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job: Option<JobStatus>,
    /// Where the current attempt's logs are saved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logs_dir: Option<PathBuf>,
}

/// The cluster Gantry manages on GKE, or the one a kubeconfig context names. `kind` tells them
/// apart in JSON; both have `name` and `status`, so `jq .cluster.status` works on either.
#[derive(Debug, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ClusterReport {
    Gke(ClusterSummary),
    Context(ContextSummary),
}

impl ClusterReport {
    /// The name the log directory is kept under: the GKE cluster's, or the context's.
    fn label(&self) -> &str {
        match self {
            Self::Gke(c) => &c.name,
            Self::Context(c) => &c.name,
        }
    }
}

pub async fn run(args: StatusArgs, target: &Target) -> i32 {
    let (cluster, config, client) = match &target.context {
        Some(context) => match on_context(target, context).await {
            Ok(found) => found,
            Err(code) => return code,
        },
        None => match on_gke(target).await {
            Ok(found) => found,
            Err(code) => return code,
        },
    };
    let job = match client {
        Some(Ok(client)) => Some(crate::k8s::job_status(&client, &config.job).await),
        Some(Err(e)) => Some(JobStatus::unreadable(&config.job, e)),
        None => None,
    };
    let logs_dir = job
        .as_ref()
        .and_then(JobStatus::current)
        .and_then(|a| logs_dir(cluster.label(), &a.summary.name));
    let report = StatusReport {
        cluster,
        job,
        logs_dir,
    };
    if args.json {
        match crate::sanitize::to_json_pretty(&report) {
            Ok(text) => crate::outln!("{text}"),
            Err(e) => return fail(&e, 1),
        }
    } else {
        for line in render(&report, jiff::Timestamp::now()) {
            crate::outln!("{line}");
        }
    }
    0
}

/// The cluster, the configuration, and a client for the Job when the cluster can serve it.
type Found = (ClusterReport, Config, Option<Result<kube::Client, String>>);

async fn on_gke(target: &Target) -> Result<Found, i32> {
    let Prepared {
        config,
        cluster,
        gke,
    } = prepare(target).await?;
    let summary = match gke.get_cluster(&cluster).await {
        Ok(Some(c)) => ClusterSummary::from_cluster(&cluster, &c),
        Ok(None) => ClusterSummary::not_found(&cluster, &config.cluster.machine_type),
        Err(e) => return Err(fail(&e, e.exit_code())),
    };
    let client = if summary.status.serves_api() {
        Some(
            crate::connect::cluster_client(target, &config)
                .await
                .map_err(|e| e.to_string()),
        )
    } else {
        None
    };
    Ok((ClusterReport::Gke(summary), config, client))
}

/// A kubeconfig context: no Google Cloud project, location or credentials needed.
async fn on_context(target: &Target, context: &str) -> Result<Found, i32> {
    let config = crate::connect::load_config(target).map_err(|e| fail(&e, 2))?;
    let (client, server) = crate::connect::context_client(context)
        .await
        .map_err(|e| fail(&e, e.exit_code()))?;
    let summary = describe(&client, context, &server).await;
    let client = (summary.status == ContextStatus::Running).then_some(Ok(client));
    Ok((ClusterReport::Context(summary), config, client))
}

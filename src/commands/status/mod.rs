//! `gantry status [--json]`: the cluster, and the training Job's attempts and pods when the
//! cluster can answer. `view` lays it out for a person; `--json` is one document for scripts.

mod view;

use std::path::PathBuf;

use serde::Serialize;

pub use view::render;

use super::connect::{Prepared, fail, prepare};
use crate::cli::StatusArgs;
use crate::connect::Target;
use crate::gke::ClusterSummary;
use crate::k8s::JobStatus;
use crate::k8s::logs::logs_dir;

/// `gantry status --json`: one object.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusReport {
    /// The cluster; `status` is `NOT_FOUND` when there is none.
    pub cluster: ClusterSummary,
    /// The training Job, when the cluster serves its API.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job: Option<JobStatus>,
    /// Where the current attempt's logs are saved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logs_dir: Option<PathBuf>,
}

pub async fn run(args: StatusArgs, target: &Target) -> i32 {
    let Prepared {
        config,
        cluster,
        gke,
    } = match prepare(target).await {
        Ok(p) => p,
        Err(code) => return code,
    };
    let summary = match gke.get_cluster(&cluster).await {
        Ok(Some(c)) => ClusterSummary::from_cluster(&cluster, &c),
        Ok(None) => ClusterSummary::not_found(&cluster, &config.cluster.machine_type),
        Err(e) => return fail(&e, e.exit_code()),
    };
    let job = if summary.status.serves_api() {
        Some(
            match crate::connect::cluster_client(target, &config).await {
                Ok(client) => crate::k8s::job_status(&client, &config.job).await,
                Err(e) => JobStatus::unreadable(&config.job, e.to_string()),
            },
        )
    } else {
        None
    };
    let logs_dir = job
        .as_ref()
        .and_then(JobStatus::current)
        .and_then(|a| logs_dir(&config.cluster.name, &a.summary.name));
    let report = StatusReport {
        cluster: summary,
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

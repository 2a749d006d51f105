//! `gantry status [--json]`: the cluster (and, later, the training Job).

use serde::Serialize;

use super::up::{Prepared, fail, prepare};
use crate::cli::StatusArgs;
use crate::connect::Target;
use crate::gke::{ClusterStatus, ClusterSummary};

/// `gantry status --json`: one object.
#[derive(Debug, Serialize)]
pub struct StatusReport {
    /// The cluster; `status` is `NOT_FOUND` when there is none.
    pub cluster: ClusterSummary,
    /// The training Job. JOB-STATUS: the Job side (src/k8s) fills this in `run` below, from a
    /// kube client (`crate::connect::cluster_client`) when the cluster is RUNNING.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job: Option<serde_json::Value>,
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
    // JOB-STATUS (src/k8s): the training Job's attempts, when the cluster can answer.
    let job = if summary.status.serves_api() {
        match crate::connect::cluster_client(target, &config).await {
            Ok(client) => Some(crate::k8s::job_status_json(&client, &config.job).await),
            Err(e) => Some(
                serde_json::json!({"name": config.job.name, "attempts": [], "error": e.to_string()}),
            ),
        }
    } else {
        None
    };
    let report = StatusReport {
        cluster: summary,
        job,
    };
    if args.json {
        match serde_json::to_string_pretty(&report) {
            Ok(text) => println!("{text}"),
            Err(e) => return fail(&e, 1),
        }
    } else {
        print_human(&report);
    }
    0
}

fn print_human(report: &StatusReport) {
    let c = &report.cluster;
    println!("cluster   {} ({}/{})", c.name, c.project, c.location);
    println!("status    {}", c.status);
    if !c.status_message.is_empty() {
        println!("message   {}", c.status_message);
    }
    if c.status == ClusterStatus::NotFound {
        println!("          create it with `gantry up --wait`");
        return;
    }
    println!("nodes     {} x {}", c.node_count, c.machine_type);
    for pool in &c.node_pools {
        println!(
            "pool      {} {} {}{}{}",
            pool.name,
            pool.status,
            pool.machine_type,
            if pool.spot { " spot" } else { "" },
            pool.accelerator
                .as_ref()
                .map(|a| format!(" {a}"))
                .unwrap_or_default()
        );
    }
    if !c.version.is_empty() {
        println!("version   {}", c.version);
    }
    if !c.endpoint.is_empty() {
        println!("endpoint  https://{}", c.endpoint);
    }
}

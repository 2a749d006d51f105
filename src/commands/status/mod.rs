//! `gantry status [--json]`: the cluster, and the training Job's attempts and pods when the
//! cluster can answer. `view` lays it out for a person; `--json` is one document for scripts.

pub mod cost;
pub mod gpus;
pub mod job;
pub mod nodes;
mod usage;
mod view;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

pub use view::render;

use super::connect::{Prepared, fail, prepare};
use crate::cli::StatusArgs;
use crate::config::Config;
use crate::gke::cost::RunningCost;
use crate::gke::{ClusterStatus, ClusterSummary};
use crate::k8s::cluster_info::{ContextStatus, ContextSummary, describe};
use crate::k8s::logs::logs_dir;
use crate::pricing::Estimate;
use crate::settings::Settings;
use crate::waiting::{Waiting, attempt_time_to_running, diagnose, time_to_running};
use job::JobStatus;

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
    /// Why each pod that is not running waits, by pod name (added to each pod in JSON).
    #[serde(skip)]
    pub waiting: BTreeMap<String, Waiting>,
    /// What the newest attempt's run cost so far, or why that is not known (added to `job` in
    /// JSON); None without an attempt.
    #[serde(skip)]
    pub run_cost: Option<Result<crate::meter::RunCost, String>>,
    /// What the Job's GPUs are doing, when a pod asks for some (added to each pod in JSON).
    #[serde(skip)]
    pub gpus: Option<crate::k8s::gpus::GpuRead>,
}

/// The cluster Gantry manages on GKE, or the one a kubeconfig context names. `kind` tells them
/// apart in JSON; both have `name` and `status`, so `jq .cluster.status` works on either.
#[derive(Debug, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ClusterReport {
    Gke(Box<GkeCluster>),
    Context(ContextSummary),
}

/// A GKE cluster as GKE reports it, and what it costs: per hour at its present size, and so far
/// — each node's price over its life and GKE's fee since the cluster was created (`meter`),
/// `costSoFarPartial` when that is a lower bound (always here: a node that came and went is
/// known only to an engine that watched it). In US dollars; `null` when the price snapshot lacks
/// something it runs (a machine type, a GPU, a region) or, for the cost so far, when it has not
/// been created or its nodes could not be read.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GkeCluster {
    #[serde(flatten)]
    pub summary: ClusterSummary,
    /// Its nodes by machine type, from the Nodes' labels once they can be listed, else from
    /// the pools ([`nodes`]).
    pub nodes_by_machine_type: Vec<nodes::MachineTypeNodes>,
    pub cost_per_hour: Option<f64>,
    pub cost_so_far: Option<f64>,
    pub cost_so_far_partial: bool,
    /// Why a cost is `null`, when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_unknown: Option<String>,
    #[serde(skip)]
    pub cost: Option<RunningCost>,
    /// The cost so far, as the meter gives it.
    #[serde(skip)]
    pub so_far: Option<crate::meter::Figure>,
}

impl GkeCluster {
    /// The cluster and its price per hour; nothing costs anything before it exists. What it cost
    /// so far comes with its nodes ([`GkeCluster::metered`]).
    pub fn new(summary: ClusterSummary) -> Self {
        if summary.status == ClusterStatus::NotFound {
            return Self {
                summary,
                nodes_by_machine_type: Vec::new(),
                cost_per_hour: None,
                cost_so_far: None,
                cost_so_far_partial: false,
                cost_unknown: None,
                cost: None,
                so_far: None,
            };
        }
        let cost = RunningCost::of(&summary);
        let round = |usd: f64| (usd * 1e4).round() / 1e4;
        let unknown = match &cost.per_hour {
            Estimate::Unknown(_) => Some(crate::gke::cost::describe(&cost.per_hour)),
            Estimate::Known(_) => None,
        };
        Self {
            nodes_by_machine_type: nodes::from_pools(&summary.node_pools),
            cost_per_hour: cost.per_hour.usd().map(round),
            cost_so_far: None,
            cost_so_far_partial: false,
            cost_unknown: unknown,
            cost: Some(cost),
            so_far: None,
            summary,
        }
    }

    /// Counts the nodes by the Nodes' own labels, the truth about them; an empty list (none
    /// registered yet) leaves the pools' count.
    pub fn count_nodes(&mut self, listed: &[k8s_openapi::api::core::v1::Node]) {
        if !listed.is_empty() && self.summary.status != ClusterStatus::NotFound {
            self.nodes_by_machine_type = nodes::from_nodes(listed);
        }
    }

    /// What it cost so far at `now`, from its nodes as read now (`Err`: why they are not known).
    pub fn metered(&mut self, nodes: Result<&cost::Nodes, &str>, now: jiff::Timestamp) {
        if self.summary.status == ClusterStatus::NotFound {
            return;
        }
        match nodes.map(|n| n.cluster_so_far(now)) {
            Ok(Some(figure)) => {
                self.so_far = Some(figure);
                self.cost_so_far = figure.usd.map(crate::pricing::format::round_usd);
                self.cost_so_far_partial = figure.partial;
                if figure.usd.is_none() && self.cost_unknown.is_none() {
                    self.cost_unknown = Some(cost::UNPRICED.to_string());
                }
            }
            Ok(None) => {}
            Err(why) => {
                if self.cost_unknown.is_none() {
                    self.cost_unknown = Some(format!("cost so far {why}"));
                }
            }
        }
    }
}

impl ClusterReport {
    /// The name the log directory is kept under: the GKE cluster's, or the context's.
    fn label(&self) -> &str {
        match self {
            Self::Gke(c) => &c.summary.name,
            Self::Context(c) => &c.name,
        }
    }
}

pub async fn run(args: StatusArgs, settings: &Settings) -> i32 {
    let target = settings.target();
    let now = jiff::Timestamp::now();
    let (mut cluster, config, client) = match &target.context {
        Some(context) => match on_context(settings, context).await {
            Ok(found) => found,
            Err(code) => return code,
        },
        None => match on_gke(settings).await {
            Ok(found) => found,
            Err(code) => return code,
        },
    };
    let (mut job, events, nodes, gpus) = match client {
        Some(Ok(client)) => {
            let job = job::job_status(&client, &config.job).await;
            let gpus = gpus::read(&client, &config, &job).await;
            let events = job::job_events(&client, &config.job).await;
            let listed = list_nodes(&client).await;
            if let (ClusterReport::Gke(gke), Ok(listed)) = (&mut cluster, &listed) {
                gke.count_nodes(listed);
            }
            (Some(job), events, Some(listed), gpus)
        }
        Some(Err(e)) => (
            Some(JobStatus::unreadable(&config.job, e)),
            Vec::new(),
            None,
            None,
        ),
        None => (None, Vec::new(), None, None),
    };
    let facts = node_facts(nodes.as_ref());
    let metered = meter_nodes(&cluster, nodes.as_ref(), now);
    if let ClusterReport::Gke(g) = &mut cluster {
        g.metered(metered.as_ref().map_err(String::as_str), now);
    }
    let run_cost = job
        .as_ref()
        .filter(|j| j.current().is_some())
        .map(|j| match &metered {
            Ok(nodes) => nodes
                .run_cost(j, now)
                .ok_or_else(|| "unknown: the run's start is not known".to_string()),
            Err(why) => Err(why.clone()),
        });
    for attempt in job.iter_mut().flat_map(|j| j.attempts.iter_mut()) {
        attempt.ends =
            crate::ends::attempt::of_attempt(&attempt.summary, &attempt.pods, &events, &facts);
    }
    let pools = match &cluster {
        ClusterReport::Gke(g) => Some(g.summary.node_pools.as_slice()),
        ClusterReport::Context(_) => None,
    };
    let events: Vec<&crate::k8s::status::EventSummary> = events.iter().collect();
    let waiting = job
        .iter()
        .flat_map(|j| &j.attempts)
        .flat_map(|a| &a.pods)
        .filter_map(|p| Some((p.name.clone(), diagnose(p, &events, pools)?)))
        .collect();
    let logs_dir = job
        .as_ref()
        .and_then(JobStatus::current)
        .and_then(|a| logs_dir(cluster.label(), &a.summary.name));
    let report = StatusReport {
        cluster,
        job,
        logs_dir,
        waiting,
        run_cost,
        gpus,
    };
    if args.json {
        let mut value = with_run_cost(with_waiting(&report, now), &report);
        if let (Some(job), Some(read)) = (&report.job, &report.gpus) {
            gpus::add_to_json(&mut value, job, read);
        }
        match crate::sanitize::to_json_pretty(&value) {
            Ok(text) => crate::outln!("{text}"),
            Err(e) => return fail(&e, 1),
        }
    } else {
        for line in render(&report, now) {
            crate::outln!("{line}");
        }
    }
    0
}

/// Every node of the cluster — by which its nodes are counted per machine type, its cost so far
/// metered and the pods' time priced — or why they could not be listed.
async fn list_nodes(
    client: &kube::Client,
) -> Result<Vec<k8s_openapi::api::core::v1::Node>, String> {
    let nodes: kube::Api<k8s_openapi::api::core::v1::Node> = kube::Api::all(client.clone());
    match nodes.list(&Default::default()).await {
        Ok(list) => Ok(list.items),
        Err(e) => {
            tracing::debug!(error = %e, "listing the nodes to price them");
            Err(e.to_string())
        }
    }
}

/// What pricing the pods' time needs of every node (none when the nodes could not be listed:
/// the costs are then unknown).
fn node_facts(
    nodes: Option<&Result<Vec<k8s_openapi::api::core::v1::Node>, String>>,
) -> std::collections::HashMap<String, crate::ends::cost::NodeFacts> {
    nodes
        .and_then(|n| n.as_ref().ok())
        .into_iter()
        .flatten()
        .filter_map(|n| {
            Some((
                n.metadata.name.clone()?,
                crate::ends::cost::NodeFacts::of(n),
            ))
        })
        .collect()
}

/// The nodes as the meter prices them, or why there is no figure.
fn meter_nodes(
    cluster: &ClusterReport,
    nodes: Option<&Result<Vec<k8s_openapi::api::core::v1::Node>, String>>,
    now: jiff::Timestamp,
) -> Result<cost::Nodes, String> {
    let ClusterReport::Gke(gke) = cluster else {
        return Err(format!(
            "unavailable: {}",
            crate::meter::NOT_PRICED_ON_A_CONTEXT
        ));
    };
    match nodes {
        Some(Ok(nodes)) => {
            let seen: Vec<crate::meter::NodeSeen> =
                nodes.iter().map(crate::meter::NodeSeen::of).collect();
            Ok(cost::Nodes::of(&gke.summary, &seen, now))
        }
        Some(Err(e)) => Err(format!("unknown: the nodes could not be listed ({e})")),
        None => Err("unknown: the cluster's API does not answer".to_string()),
    }
}

/// The cluster, the configuration, and a client for the Job when the cluster can serve it.
type Found = (ClusterReport, Config, Option<Result<kube::Client, String>>);

async fn on_gke(settings: &Settings) -> Result<Found, i32> {
    let target = settings.target();
    let Prepared {
        config,
        cluster,
        gke,
    } = prepare(settings).await?;
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
    Ok((
        ClusterReport::Gke(Box::new(GkeCluster::new(summary))),
        config,
        client,
    ))
}

/// A kubeconfig context: no Google Cloud project, location or credentials needed.
async fn on_context(settings: &Settings, context: &str) -> Result<Found, i32> {
    let config = settings.config.clone();
    let (client, server) = crate::connect::context_client(context)
        .await
        .map_err(|e| fail(&e, e.exit_code()))?;
    let summary = describe(&client, context, &server).await;
    let client = (summary.status == ContextStatus::Running).then_some(Ok(client));
    Ok((ClusterReport::Context(summary), config, client))
}

/// The report as JSON, each pod with its `waiting` (absent once it runs) and its
/// `timeToRunningSeconds` (created → running), each attempt with the time until all its pods
/// ran.
fn with_waiting(report: &StatusReport, now: jiff::Timestamp) -> serde_json::Value {
    let mut value = serde_json::to_value(report).unwrap_or_default();
    let Some(job) = &report.job else {
        return value;
    };
    let Some(attempts) = value
        .pointer_mut("/job/attempts")
        .and_then(serde_json::Value::as_array_mut)
    else {
        return value;
    };
    for (attempt, json) in job.attempts.iter().zip(attempts.iter_mut()) {
        let pods = json
            .get_mut("pods")
            .and_then(serde_json::Value::as_array_mut);
        for (pod, pod_json) in attempt.pods.iter().zip(pods.into_iter().flatten()) {
            let Some(object) = pod_json.as_object_mut() else {
                continue;
            };
            if let Some(w) = report.waiting.get(&pod.name) {
                object.insert("waiting".into(), serde_json::json!(w.json(now)));
            }
            if let Some(secs) = time_to_running(pod) {
                object.insert("timeToRunningSeconds".into(), secs.into());
            }
        }
        if let (Some(secs), Some(object)) =
            (attempt_time_to_running(&attempt.pods), json.as_object_mut())
        {
            object.insert("timeToRunningSeconds".into(), secs.into());
        }
    }
    value
}

/// The report as JSON with the run's cost in `job` (`costSoFar`, `costSoFarPartial`,
/// `costSince`, `costAsOf`; `costUnknown` when it is `null`).
fn with_run_cost(mut value: serde_json::Value, report: &StatusReport) -> serde_json::Value {
    let Some(run_cost) = &report.run_cost else {
        return value;
    };
    let json = cost::RunCostJson::of(run_cost.as_ref().map_err(String::as_str));
    if let (Some(job), Ok(serde_json::Value::Object(fields))) = (
        value
            .get_mut("job")
            .and_then(serde_json::Value::as_object_mut),
        serde_json::to_value(json),
    ) {
        job.extend(fields);
    }
    value
}

#[cfg(test)]
#[path = "json_tests.rs"]
mod tests;

//! The watcher beside the cluster, when the config has `[watcher] in-cluster = true`:
//! `gantry plan` shows it (made, current, or what changes, with its cost) and `gantry up` makes
//! it once the cluster runs, as `gantry watcher install` would. A failed install leaves the
//! cluster as it is and says how to try again.

use std::time::Duration;

use google_cloud_container_v1::model::Cluster;

use super::connect::fail;
use crate::config::Config;
use crate::gke::{ClusterRef, ClusterStatus, Gke};
use crate::settings::Settings;
use crate::watcher::desired::Desired;
use crate::watcher::planned::{Planned, There};

/// How long `up --wait` waits for the watcher's pod to be ready.
const READY_WITHIN: Duration = Duration::from_secs(300);

/// The config's watcher, working on `cluster` as this Gantry resolved it (as `gantry watcher
/// install` carries it); None when the config does not put it in the cluster.
pub(super) fn desired(
    settings: &Settings,
    config: &Config,
    cluster: &ClusterRef,
) -> Option<Result<Desired, String>> {
    let mut config = config.clone();
    config.project = Some(cluster.project.clone());
    config.location = Some(cluster.location.clone());
    Desired::in_cluster(&config, settings.target().gke_endpoint.clone())
}

/// The watcher in the plan, compared with the one in the cluster when the cluster runs; None
/// when the config does not put it in the cluster. A key file that cannot be read is said.
pub(super) async fn planned(
    settings: &Settings,
    gke: &Gke,
    cluster: &ClusterRef,
    config: &Config,
) -> Result<Option<Planned>, i32> {
    let Some(desired) = desired(settings, config, cluster) else {
        return Ok(None);
    };
    let desired = desired.map_err(|e| fail(&e, 2))?;
    let there = match gke.get_cluster(cluster).await {
        Ok(Some(found)) if ClusterStatus::from_api(&found.status).serves_api() => {
            read(gke, cluster, &found, config).await
        }
        Ok(_) => Ok(None),
        Err(e) => Err(e.to_string()),
    };
    Ok(Some(Planned::of(
        &desired,
        config,
        &cluster.location,
        there.as_ref().map(Option::as_ref).map_err(Clone::clone),
    )))
}

/// The watcher's Deployment in the running cluster, as far as a plan compares it.
async fn read(
    gke: &Gke,
    cluster: &ClusterRef,
    found: &Cluster,
    config: &Config,
) -> Result<Option<There>, String> {
    use k8s_openapi::api::apps::v1::Deployment;
    let client = crate::gke::cluster_client::cluster_client(cluster, found, gke.auth())
        .map_err(|e| e.to_string())?;
    let api: kube::Api<Deployment> =
        kube::Api::namespaced(client, &crate::watcher::namespace(config));
    let deployment = api
        .get_opt(&crate::watcher::name(&config.job.name))
        .await
        .map_err(|e| e.to_string())?;
    Ok(deployment.as_ref().map(There::of))
}

/// After `up` made the cluster or found it running (`code`: how that went): the watcher made
/// or brought up to date, and with `wait` its pod ready. The exit code: `code`, or 1 when the
/// watcher is not there (the cluster stays).
pub(super) async fn after_up(
    settings: &Settings,
    gke: &Gke,
    cluster: &ClusterRef,
    config: &Config,
    wait: bool,
    code: i32,
) -> i32 {
    let Some(desired) = desired(settings, config, cluster) else {
        return code;
    };
    let again = "`gantry watcher install` tries again (README \"Gantry in the cluster\")";
    let not_made = |why: &dyn std::fmt::Display| {
        crate::errln!("gantry: cluster {cluster} is up; its watcher is not: {why}; {again}");
        1
    };
    let desired = match desired {
        Ok(d) => d,
        Err(e) => return not_made(&e),
    };
    let found = match gke.get_cluster(cluster).await {
        Ok(Some(found)) if ClusterStatus::from_api(&found.status).serves_api() => found,
        Ok(_) => {
            crate::outln!(
                "the watcher is made once cluster {cluster} runs: `gantry up --wait` makes both"
            );
            return code;
        }
        Err(e) => return not_made(&e),
    };
    let client = match crate::gke::cluster_client::cluster_client(cluster, &found, gke.auth()) {
        Ok(c) => c,
        Err(e) => return not_made(&e),
    };
    let (namespace, job, image) = (
        desired.plan.namespace.clone(),
        desired.plan.job.clone(),
        desired.plan.image.clone(),
    );
    let name = crate::watcher::name(&job);
    if let Err(e) = crate::watcher::install::install(&client, desired.plan, &desired.keys).await {
        return not_made(&e);
    }
    crate::outln!("watcher {name} installed in namespace {namespace}, image {image}");
    crate::outln!(
        "`gantry watcher status` says what it can do from inside; `gantry watcher install` prints the grants its Google service account needs"
    );
    if !wait {
        return code;
    }
    match super::watcher::wait_ready(
        &client,
        &namespace,
        &job,
        &config.job.namespace,
        READY_WITHIN,
    )
    .await
    {
        0 => code,
        failed => failed,
    }
}

//! `gantry up` on a cluster that is there but differs from the config: the plan shown, the
//! operator asked (or `--yes`), then what can be made on this cluster made, and what cannot said
//! with what it would take. Nothing is changed unasked: without a terminal to ask on and without
//! `--yes` it refuses, as `gantry down` does.

use std::io::IsTerminal;

use tokio::sync::mpsc::unbounded_channel;

use super::connect::fail;
use super::plan::{plan_against, render};
use super::up_progress::{print_events, write_kubeconfig};
use crate::cli::UpArgs;
use crate::config::ClusterConfig;
use crate::connect::Target;
use crate::gke::apply::what_it_takes;
use crate::gke::plan::{Action, How, Plan};
use crate::gke::{self, ClusterRef, ClusterStatus, Gke, PollPolicy};
use crate::watcher::planned::Planned;

/// The plan for a RUNNING cluster that differs from the config; None when there is no cluster,
/// it is not RUNNING (being created or deleted: `up` carries on as before), or it matches.
pub(super) async fn drifted(
    gke: &Gke,
    cluster: &ClusterRef,
    config: &crate::config::Config,
) -> Result<Option<Plan>, i32> {
    let found = gke
        .get_cluster(cluster)
        .await
        .map_err(|e| fail(&e, e.exit_code()))?;
    let running = found.is_some_and(|c| ClusterStatus::from_api(&c.status).serves_api());
    if !running {
        return Ok(None);
    }
    let plan = plan_against(gke, cluster, config).await?;
    Ok((plan.action == Action::Update).then_some(plan))
}

/// Shows the plan (with the watcher's, when there is one), asks, applies it; the exit code (1
/// when something was left as it is), or `Err` with it when nothing was applied (refused, or
/// the operator said no): the watcher is then left as it is too.
pub(super) async fn run(
    args: &UpArgs,
    target: &Target,
    gke: Gke,
    cluster: &ClusterRef,
    config: &ClusterConfig,
    (plan, watcher): (&Plan, Option<&Planned>),
) -> Result<i32, i32> {
    for line in render(plan, cluster) {
        crate::outln!("{line}");
    }
    for line in watcher.map(Planned::lines).unwrap_or_default() {
        crate::outln!("{line}");
    }
    if !args.yes {
        if !std::io::stdin().is_terminal() {
            crate::errln!(
                "gantry: not changing cluster {cluster}: stdin is not a terminal to ask on; pass --yes to apply the plan without asking"
            );
            return Err(2);
        }
        let question = format!(
            "Apply the plan to cluster {cluster}{}? [y/N] ",
            warning(plan)
        );
        match tokio::task::spawn_blocking(move || crate::output::ask(&question)).await {
            Ok(true) => {}
            _ => {
                crate::outln!("nothing changed");
                return Err(0);
            }
        }
    }
    let (tx, rx) = unbounded_channel();
    // The client reports its retries on the channel: it goes with the channel, so the printer ends.
    let reporting = gke.clone().with_events(tx.clone());
    let printer = tokio::spawn(print_events(rx));
    let result = gke::apply(
        &reporting,
        cluster,
        config,
        plan,
        PollPolicy::default(),
        &tx,
    )
    .await;
    drop((tx, reporting));
    let _ = printer.await;
    let applied = match result {
        Ok(applied) => applied,
        Err(e) => return Err(fail(&e, e.exit_code())),
    };
    crate::outln!(
        "cluster {cluster}: {} of {} changes made",
        applied.done.len(),
        plan.changes.len()
    );
    let mut code = 0;
    if args.wait {
        // The kubeconfig is written as for a cluster `up` finds there already.
        match gke.get_cluster(cluster).await {
            Ok(Some(running)) => code = write_kubeconfig(target, cluster, &running),
            Ok(None) => {}
            Err(e) => return Err(fail(&e, e.exit_code())),
        }
    }
    for change in &applied.left {
        crate::errln!("gantry: left as it is: {}", what_it_takes(change));
    }
    Ok(if applied.left.is_empty() { code } else { 1 })
}

/// What the operator should know before saying yes: nodes recreated (their pods restart), pools
/// deleted with their nodes.
fn warning(plan: &Plan) -> &'static str {
    let recreates = plan.changes.iter().any(|c| c.how == How::RecreateNodes);
    let deletes = plan
        .changes
        .iter()
        .any(|c| c.field == "nodePool" && c.desired.is_null());
    match (recreates, deletes) {
        (true, true) => " (nodes are recreated and a pool deleted: their pods restart or go)",
        (true, false) => " (nodes are recreated: their pods restart elsewhere)",
        (false, true) => " (a pool is deleted with its nodes and their pods)",
        (false, false) => "",
    }
}

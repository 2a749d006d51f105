//! Applying the plan a viewer showed: the changes the Container API can make on this cluster,
//! one operation at a time, followed to their end as a create or delete is (the cluster pane
//! shows RECONCILING and the operation's progress meanwhile). What cannot be made this way is
//! left as it is and said, with what it would take. With `[watcher] in-cluster = true` the
//! watcher is then made or brought up to date (a plan with nothing else to do makes only it).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::Shared;
use super::cluster::forward_provision;
use crate::engine::session::Backend;
use crate::engine::{Command, Report};
use crate::gke::plan::{Action, Change, Plan};

/// Applies `plan`; None: the plan shown has moved on since, and nothing is applied.
pub async fn apply_plan(shared: Arc<Shared>, plan: Option<Plan>) {
    let what = Command::ApplyPlan { generation: 0 }.describe();
    let refuse = |why: &str| {
        let _ = shared.tx.send(Report::Done {
            what: what.clone(),
            result: Err(why.to_string()),
        });
    };
    let Some(plan) = plan else {
        return refuse(
            "the cluster changed since the plan was shown: nothing applied (P shows the plan now)",
        );
    };
    let session = &shared.session;
    // The viewer's gate refused already; a worker never changes a read-only session's cluster.
    if session.read_only {
        return refuse("read-only: the cluster is left as it is");
    }
    let Backend::Gke {
        gke, target, poll, ..
    } = &session.backend
    else {
        return refuse("the cluster is not managed by Gantry");
    };
    if plan.action == Action::None {
        return install_watcher(&shared).await;
    }
    if shared.operating.swap(true, Ordering::SeqCst) {
        return refuse("another operation on the cluster is running: nothing applied");
    }
    let events = forward_provision(&shared.tx);
    let result = Box::pin(crate::gke::apply::apply(
        gke,
        target,
        &session.config.cluster,
        &plan,
        *poll,
        &events,
    ))
    .await;
    // Let the forwarder pass the last progress event before the end is reported.
    drop(events);
    tokio::task::yield_now().await;
    shared.operating.store(false, Ordering::SeqCst);
    match result {
        Ok(applied) => {
            let _ = shared.tx.send(Report::ProvisionDone(Ok(done(
                &applied.done,
                &applied.left,
            ))));
            if !applied.left.is_empty() {
                let _ = shared.tx.send(Report::Done {
                    what,
                    result: Err(left(&applied.left)),
                });
            }
        }
        Err(e) => {
            let _ = shared
                .tx
                .send(Report::ProvisionDone(Err(format!("{what}: {e}"))));
            shared.refresh.notify_one();
            return;
        }
    }
    shared.refresh.notify_one();
    install_watcher(&shared).await;
}

/// With `[watcher] in-cluster = true`, after the cluster's changes: the watcher made or brought
/// up to date, as `gantry up` does. A failure is said with how to try again; the cluster's
/// changes stay.
async fn install_watcher(shared: &Shared) {
    let what = "make the cluster's watcher".to_string();
    let said = |result: Result<String, String>| {
        let _ = shared.tx.send(Report::Done {
            what: what.clone(),
            result,
        });
    };
    let again = "P then y tries again, or `gantry watcher install`";
    let desired = match shared.session.watcher() {
        None => return,
        Some(Err(e)) => return said(Err(format!("{e}; {again}"))),
        Some(Ok(desired)) => desired,
    };
    let Some(client) = shared.client().await else {
        return said(Err(format!(
            "the cluster's API cannot be reached yet; {again} once it can"
        )));
    };
    let (name, namespace) = (
        crate::watcher::name(&desired.plan.job),
        desired.plan.namespace.clone(),
    );
    match crate::watcher::install::install(&client, desired.plan, &desired.keys).await {
        Ok(_) => said(Ok(format!(
            "watcher {name} installed in namespace {namespace}"
        ))),
        Err(e) => said(Err(format!("{e}; {again}"))),
    }
}

/// "plan applied: 2 changes made", or what was made of how many.
fn done(done: &[Change], left: &[Change]) -> String {
    match (done.len(), left.len()) {
        (0, _) => "plan: nothing could be applied on this cluster".to_string(),
        (1, 0) => "plan applied: 1 change made".to_string(),
        (n, 0) => format!("plan applied: {n} changes made"),
        (n, l) => format!("plan applied in part: {n} of {} changes made", n + l),
    }
}

/// What was left as it is, each with what it would take.
fn left(left: &[Change]) -> String {
    let each: Vec<String> = left.iter().map(crate::gke::apply::what_it_takes).collect();
    format!("left as it is: {}", each.join("; "))
}

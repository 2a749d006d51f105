//! Idle node pools to zero nodes, and back before a launch (`scale-to-zero-when-idle`, or a
//! spent budget's `scale-to-zero`). The engine decides when (`model::idle`, `model::guards`); this carries it out on GKE, one cluster operation at a
//! time, as a create or delete would be. Spot pools' on-demand fallbacks go to zero with the
//! rest.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::Shared;
use crate::engine::Report;
use crate::engine::session::Backend;
use crate::gke::ClusterSummary;
use crate::gke::resize::{self, Scale};

/// Sets every pool of the config to zero nodes or back to its size, and says how it went: as
/// the engine's own act (`idle: …`, `guard: …`) when it decided, else the owner names who asked.
pub async fn scale(shared: Arc<Shared>, to: Scale, engine_why: Option<&'static str>) {
    let what = crate::engine::Command::ScaleNodePools(to).describe();
    let result = run(&shared, to).await;
    let result = result.map(|()| {
        let done = match to {
            Scale::ToZero => {
                "node pools scaled to zero nodes (the cluster stays; a launch brings them back)"
            }
            Scale::ToConfig => "node pools back to their configured size",
        };
        match engine_why {
            Some(why) => format!("{why}: {done}"),
            None => done.to_string(),
        }
    });
    let _ = shared.tx.send(Report::Done { what, result });
}

/// When Gantry may have left the pools at zero (`scale-to-zero-when-idle`, or a budget guard's
/// `scale-to-zero`), a launch first brings them back.
pub async fn back_before_launch(shared: &Arc<Shared>) -> Result<(), String> {
    let session = &shared.session;
    if !session.config.may_scale_to_zero() || session.read_only {
        return Ok(());
    }
    let Backend::Gke { gke, target, .. } = &session.backend else {
        return Ok(());
    };
    let cluster = gke.get_cluster(target).await.map_err(|e| e.to_string())?;
    let at_zero = cluster
        .map(|c| ClusterSummary::from_cluster(target, &c))
        .is_some_and(|s| {
            s.node_pools
                .iter()
                .any(|p| p.node_count == 0 && p.fallback_for.is_none())
        });
    if !at_zero {
        return Ok(());
    }
    let _ = shared.tx.send(Report::Done {
        what: "launch".into(),
        result: Ok("bringing the node pools back before launching…".into()),
    });
    run(shared, Scale::ToConfig).await
}

async fn run(shared: &Arc<Shared>, to: Scale) -> Result<(), String> {
    let session = &shared.session;
    if session.read_only {
        return Err("read-only: the node pools are left as they are".into());
    }
    let Backend::Gke {
        gke, target, poll, ..
    } = &session.backend
    else {
        return Err("the cluster is not managed by Gantry".into());
    };
    // One operation on the cluster at a time: a create, delete or resize already going wins.
    if shared.operating.swap(true, Ordering::SeqCst) {
        return Err("another operation on the cluster is running".into());
    }
    let mut sizes = resize::sizes(&session.config.cluster, to);
    // An idle cluster's fallback pools go to zero with the rest; a launch targets the config's
    // pools, so they are not brought back.
    if to == Scale::ToZero {
        match gke.get_cluster(target).await {
            Ok(Some(cluster)) => {
                let summary = ClusterSummary::from_cluster(target, &cluster);
                sizes.extend(
                    crate::gke::fallback::pools_of(&summary)
                        .into_iter()
                        .map(|(pool, _)| (pool, 0)),
                );
            }
            Ok(None) => {}
            Err(e) => tracing::debug!(error = %e, "reading the fallback pools to scale"),
        }
    }
    let result = resize::set_pool_sizes(gke, target, &sizes, *poll).await;
    shared.operating.store(false, Ordering::SeqCst);
    shared.refresh.notify_one();
    result.map_err(|e| e.to_string())
}

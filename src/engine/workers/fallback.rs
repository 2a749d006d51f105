//! The spot fallback carried out (the recoverer decides when, `model::fallback`): the spot
//! pool's on-demand fallback is made or scaled up on GKE, one cluster operation at a time as a
//! resize is, then the attempt stuck on spot ends and the next attempt of the run starts on
//! the fallback. Answers with `Done`.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::Shared;
use crate::engine::session::Backend;
use crate::engine::{Command, Report};
use crate::{gke, k8s};

/// `by`: who asked (the recoverer), named on the attempt it ends.
pub async fn fall_back(shared: Arc<Shared>, command: Command, by: String) {
    let what = command.describe();
    let Command::FallBack {
        attempt, pool, why, ..
    } = command
    else {
        return;
    };
    let result = run(&shared, &attempt, &pool, &why, &by).await;
    let _ = shared.tx.send(Report::Done { what, result });
}

async fn run(
    shared: &Arc<Shared>,
    attempt: &str,
    pool: &str,
    why: &str,
    by: &str,
) -> Result<String, String> {
    let session = &shared.session;
    let Backend::Gke {
        gke, target, poll, ..
    } = &session.backend
    else {
        return Err("spot fallback needs a GKE cluster Gantry manages".into());
    };
    let client = shared
        .client()
        .await
        .ok_or("not connected to the cluster")?;
    // One operation on the cluster at a time: the fallback waits for a resize or update going.
    while shared.operating.swap(true, Ordering::SeqCst) {
        tokio::select! {
            _ = shared.stop.cancelled() => return Err("the engine stopped".into()),
            _ = tokio::time::sleep(Duration::from_secs(1)) => {}
        }
    }
    let made = gke::fallback::ensure(gke, target, &session.config.cluster, pool, *poll).await;
    shared.operating.store(false, Ordering::SeqCst);
    shared.refresh.notify_one();
    let fallback = made.map_err(|e| e.to_string())?;
    let recovery = k8s::recover::Recovery {
        why,
        ended_by: crate::vocabulary::attempt::EndedBy::SpotFallback,
        by,
        pool: Some(&fallback),
    };
    let next = k8s::recover::recover(&client, &session.config.job, attempt, recovery)
        .await
        .map_err(|e| e.to_string())?;
    Ok(format!(
        "fell back to on-demand: {attempt} ended, {} started on {fallback}",
        next.job
    ))
}

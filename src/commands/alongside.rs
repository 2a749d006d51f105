//! What runs beside the engine of `watch` and `serve` when asked: the health endpoint
//! (`--health ADDR`), and — in the cluster (`--in-cluster`) — the watcher's report of what it
//! can and cannot do from inside, written at start, every few minutes, and again soon after the
//! cluster refuses it something (a right taken away shows up without a restart).

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::engine::EngineHandle;
use crate::settings::Settings;
use crate::watcher::inside;
use crate::watcher::status::Report;

/// How often the watcher looks again at what it may do, when nothing says it changed.
const REPORT_EVERY: Duration = Duration::from_secs(300);
/// How soon after a refusal begins or ends it looks again (they come in bursts: one look for a
/// burst).
const AFTER_REFUSAL: Duration = Duration::from_secs(2);

/// The tasks started; dropping it stops them.
pub struct Alongside {
    _stop: tokio_util::sync::DropGuard,
}

/// Starts what `settings` and `health` ask for beside `engine`; an address that cannot be
/// bound is an error to say (exit 2).
pub async fn start(
    settings: &Settings,
    engine: &EngineHandle,
    health: Option<std::net::SocketAddr>,
) -> Result<Alongside, String> {
    let stop = CancellationToken::new();
    if let Some(addr) = health {
        crate::health::serve(addr, engine.clone(), stop.clone())
            .await
            .map_err(|e| format!("--health {addr}: {e}"))?;
    }
    if settings.session.in_cluster {
        for key in &settings.ignored {
            tracing::warn!(
                "ignored the setting {key}: written by a newer Gantry than this {}",
                crate::watcher::VERSION
            );
        }
        tokio::spawn(report(settings.clone(), engine.clone(), stop.clone()));
    }
    Ok(Alongside {
        _stop: stop.drop_guard(),
    })
}

/// Writes the watcher's report until `stop`.
async fn report(settings: Settings, engine: EngineHandle, stop: CancellationToken) {
    let inside = match crate::k8s::in_cluster::connect() {
        Ok(inside) => inside,
        Err(e) => {
            tracing::warn!(error = %e, "the watcher's report cannot be written");
            return;
        }
    };
    let job = settings.config.job.name.clone();
    let namespace = crate::watcher::namespace(&settings.config);
    let pod = std::env::var("POD_NAME").unwrap_or_else(|_| "?".into());
    let mut changed = engine.changed();
    let mut refused = refusals(&engine);
    loop {
        let mut unavailable = inside::lacking(&inside.client, &namespace).await;
        if let Some(why) = gke_refusal(&settings).await {
            unavailable.extend(inside::without_gke(&why));
        }
        let report = Report {
            pod: pod.clone(),
            version: crate::watcher::VERSION.to_string(),
            at: Some(jiff::Timestamp::now()),
            unavailable,
            ignored: settings.ignored.clone(),
        };
        if let Err(e) = inside::write_report(&inside.client, &namespace, &job, &report).await {
            tracing::warn!(error = %e, "the watcher's report");
        }
        let next = tokio::time::sleep(REPORT_EVERY);
        tokio::pin!(next);
        loop {
            tokio::select! {
                _ = stop.cancelled() => return,
                () = &mut next => break,
                seen = changed.changed() => {
                    if seen.is_err() {
                        return;
                    }
                    let now = refusals(&engine);
                    if now != refused {
                        refused = now;
                        tokio::time::sleep(AFTER_REFUSAL).await;
                        break;
                    }
                    refused = now;
                }
            }
        }
    }
}

/// How many of the engine's troubles are the cluster's or GKE's refusals (403).
fn refusals(engine: &EngineHandle) -> usize {
    engine
        .model()
        .troubles
        .messages()
        .filter(|m| m.contains("403") || m.contains("forbidden"))
        .count()
}

/// Why GKE cannot be used from inside, if it cannot: no credential from the metadata server,
/// or GKE refusing to read the cluster. Read-only: a read is all it tries.
async fn gke_refusal(settings: &Settings) -> Option<String> {
    let target = settings.target();
    let cluster = match crate::connect::cluster_ref(target, &settings.config) {
        Ok(c) => c,
        Err(e) => return Some(e.to_string()),
    };
    let gke = match crate::connect::gke_client(target).await {
        Ok(gke) => gke,
        Err(e) => return Some(format!("no Google credential in the pod: {e}")),
    };
    match gke.get_cluster(&cluster).await {
        Ok(Some(_)) => None,
        Ok(None) => Some(format!("GKE has no cluster {cluster}")),
        Err(e) => Some(format!(
            "GKE refuses to read the cluster ({e}): run the gcloud commands `gantry watcher install` printed"
        )),
    }
}

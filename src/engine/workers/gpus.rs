//! The GPU worker: reads every DCGM exporter (`k8s::gpus`) once a round, only while a pod asks
//! for GPUs and either a screen shows them or the idle-GPU guard watches (`gpu-idle-below`
//! above 0). The exporter pods and their nodes' prices are looked for again every minute, or
//! after a round that failed; a cluster without an exporter is asked again every five minutes.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Node;
use kube::Api;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::Tx;
use crate::engine::Report;
use crate::k8s::gpus::{self, Exporter, ExporterSource, GpuRead};

/// What the worker needs to know of the engine.
pub(super) struct GpuDemand {
    /// Screens showing usage (`EngineHandle::show_usage`).
    pub shown: watch::Receiver<usize>,
    /// A pod of the Job asks for GPUs and has not ended (the owner says after every batch).
    pub wanted: watch::Receiver<bool>,
    /// `[guards] gpu-idle-below` above 0: the guard needs the GPUs with no screen.
    pub guard: bool,
    /// `[gpu] exporter`, or the known ones.
    pub sources: Vec<ExporterSource>,
    /// The round's period (10 s; the simulator's pace on it).
    pub period: Duration,
}

impl GpuDemand {
    fn needed(&self) -> bool {
        *self.wanted.borrow() && (self.guard || *self.shown.borrow() > 0)
    }
}

/// The exporters found, with their nodes' price of one GPU an hour, and when.
struct Found {
    exporters: Vec<Exporter>,
    prices: HashMap<String, Option<f64>>,
    at: Instant,
}

pub(super) async fn poll_gpus(
    client: kube::Client,
    tx: Tx,
    mut demand: GpuDemand,
    stop: CancellationToken,
) {
    let mut found: Option<Found> = None;
    let mut reading = false;
    loop {
        if !demand.needed() {
            if std::mem::take(&mut reading) {
                let _ = tx.send(Report::Gpus(GpuRead::Stopped));
            }
            tokio::select! {
                _ = stop.cancelled() => return,
                r = demand.wanted.changed() => if r.is_err() { return },
                r = demand.shown.changed() => if r.is_err() { return },
            }
            continue;
        }
        reading = true;
        let stale = found
            .as_ref()
            .is_none_or(|f| f.at.elapsed() >= gpus::REDISCOVER);
        if stale {
            found = match gpus::discover(&client, &demand.sources).await {
                Ok(exporters) => Some(Found {
                    prices: prices(&client, &exporters).await,
                    exporters,
                    at: Instant::now(),
                }),
                Err(why) => {
                    let _ = tx.send(Report::Gpus(GpuRead::Unavailable(why)));
                    if !wait(&stop, &mut demand, gpus::RECHECK).await {
                        return;
                    }
                    continue;
                }
            };
        }
        let Some(now_found) = &found else { continue };
        let read = gpus::read(&client, &now_found.exporters, &now_found.prices).await;
        if matches!(read, GpuRead::Unavailable(_)) {
            // An exporter gone or restarted: look for them again next round.
            found = None;
        }
        let _ = tx.send(Report::Gpus(read));
        let period = demand.period;
        if !wait(&stop, &mut demand, period).await {
            return;
        }
    }
}

/// Waits `period`, or less when the demand changes; false when stopped.
async fn wait(stop: &CancellationToken, demand: &mut GpuDemand, period: Duration) -> bool {
    let until = tokio::time::Instant::now() + period;
    loop {
        tokio::select! {
            _ = stop.cancelled() => return false,
            _ = tokio::time::sleep_until(until) => return true,
            r = demand.wanted.changed() => if r.is_err() { return false },
            r = demand.shown.changed() => if r.is_err() { return false },
        }
        if !demand.needed() {
            return true;
        }
    }
}

/// One GPU an hour on each exporter's node, as its accelerator label prices it (none when the
/// nodes cannot be listed: the costs are then unknown).
async fn prices(client: &kube::Client, exporters: &[Exporter]) -> HashMap<String, Option<f64>> {
    let nodes: Api<Node> = Api::all(client.clone());
    let listed = match nodes.list(&Default::default()).await {
        Ok(list) => list.items,
        Err(e) => {
            tracing::debug!(error = %e, "listing the GPU nodes to price them");
            Vec::new()
        }
    };
    exporters
        .iter()
        .map(|e| {
            let node = listed
                .iter()
                .find(|n| n.metadata.name.as_deref() == Some(e.node.as_str()));
            (
                e.node.clone(),
                node.and_then(crate::ends::cost::gpu_per_hour),
            )
        })
        .collect()
}

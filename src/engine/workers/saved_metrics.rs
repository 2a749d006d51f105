//! An earlier attempt's training metrics, read back from the logs the tailer saved, so the
//! chart can show it behind the newest one although this session never followed it live.
//! Read on a blocking thread into a store of its own; the model takes it in whole.

use std::sync::Arc;

use super::Shared;
use crate::engine::Report;
use crate::k8s::logs::saved;
use crate::metrics::store::Store;

/// Reads attempt `number`'s saved logs, if there are any, and reports their metrics.
pub fn load(shared: Arc<Shared>, number: u32) {
    tokio::task::spawn_blocking(move || {
        let job = &shared.session.config.job.name;
        let name = crate::k8s::labels::attempt_name(job, number);
        let Some(dir) = shared.session.logs_dir(&name) else {
            return;
        };
        let Some(cluster_dir) = dir.parent() else {
            return;
        };
        let attempt = match saved::attempt(cluster_dir, job, number) {
            Ok(Some(attempt)) => attempt,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!(dir = %dir.display(), error = %e, "cannot list saved logs");
                return;
            }
        };
        let mut store = Store::default();
        for (pod, path) in &attempt.pods {
            let read = std::fs::File::open(path).and_then(|file| {
                crate::metrics::read::samples(file, |sample| {
                    store.push_sample(number, pod, sample);
                })
            });
            if let Err(e) = read {
                tracing::warn!(path = %path.display(), error = %e, "cannot read a saved log");
            }
        }
        store.flush(number);
        if shared.stop.is_cancelled() {
            return;
        }
        let _ = shared.tx.send(Report::TrainingLoaded {
            attempt: number,
            store: Box::new(store),
        });
    });
}

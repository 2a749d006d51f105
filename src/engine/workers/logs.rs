//! Log tails: the newest attempt's for the model's store, and a viewer's own fetch (an older
//! attempt, a previous container). Both save what they read, under the same lock, so a line is
//! on disk once whoever asked for it.

use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{Shared, flow_room};
use crate::engine::Report;
use crate::k8s::logs::{LogTail, TailEvent, TailOptions, TailTarget};

pub struct LogRequest {
    pub attempt: String,
    pub pod: Option<String>,
    pub previous: bool,
}

/// Where a tail's events go.
pub enum TailTo {
    /// The model's store, as events of this generation.
    World { generation: u64 },
    /// One viewer, waiting for it when it is slow.
    Viewer {
        to: mpsc::Sender<(u64, TailEvent)>,
        generation: u64,
    },
}

/// Starts a tail that runs until `cancel` (or the engine stops).
pub fn tail(shared: Arc<Shared>, request: LogRequest, sink: TailTo, cancel: CancellationToken) {
    tokio::spawn(async move {
        let Some(client) = shared
            .connection
            .lock()
            .await
            .as_ref()
            .map(|c| c.client.clone())
        else {
            return;
        };
        let cfg = &shared.session.config.job;
        // A previous container's lines are not the file's: only the current ones are saved.
        let save_dir = if request.previous {
            None
        } else {
            shared.session.logs_dir(&request.attempt)
        };
        if let (Some(dir), TailTo::World { generation }) = (&save_dir, &sink) {
            let _ = shared.tx.send(Report::LogsSavedTo {
                generation: *generation,
                dir: dir.display().to_string(),
            });
        }
        let target = TailTarget {
            namespace: cfg.namespace.clone(),
            job: request.attempt,
            container: None,
        };
        let options = TailOptions {
            save_dir,
            pod: request.pod,
            follow: !request.previous,
            previous: request.previous,
            ..Default::default()
        };
        let (mut rx, tail_handle) = LogTail::follow(client, target, options).into_parts();
        loop {
            let event = tokio::select! {
                _ = cancel.cancelled() => break,
                _ = shared.stop.cancelled() => break,
                event = rx.recv() => match event {
                    Some(event) => event,
                    None => return,
                },
            };
            let delivered = match &sink {
                TailTo::World { generation } => {
                    flow_room(&shared.flow_budget, &cancel).await
                        && shared
                            .tx
                            .send(Report::Tail {
                                generation: *generation,
                                event,
                            })
                            .is_ok()
                }
                TailTo::Viewer { to, generation } => tokio::select! {
                    _ = cancel.cancelled() => false,
                    sent = to.send((*generation, event)) => sent.is_ok(),
                },
            };
            if !delivered {
                break;
            }
        }
        tail_handle.cancel();
    });
}

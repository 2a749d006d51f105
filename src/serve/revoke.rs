//! Keys taken out are out within seconds. The key files are read again every second and compared
//! by content; when their keys change, every session is told to look at its own key again: a key
//! no longer listed ends its sessions, an operator's key left only among the viewers makes its
//! sessions read-only. Stricter than OpenSSH, which leaves open sessions alone: a teammate who
//! leaves the team leaves the training too.

use std::sync::Arc;
use std::time::Duration;

use super::Shared;

/// How often the files are read again.
const EVERY: Duration = Duration::from_secs(1);

/// Reads the key files every second until the server stops; says when their keys changed.
pub async fn watch_key_files(shared: Arc<Shared>) {
    let mut tick = tokio::time::interval(EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = shared.stop.cancelled() => return,
            _ = tick.tick() => {}
        }
        let mut changed = false;
        for file in std::iter::once(&shared.authorized).chain(shared.operators.as_ref()) {
            match file.refresh() {
                Ok(c) => changed |= c,
                Err(e) => tracing::warn!("{e}; keeping the keys read before"),
            }
        }
        if changed {
            tracing::info!("the authorized keys changed: open sessions are checked again");
            shared.keys_changed.send_modify(|n| *n += 1);
        }
    }
}

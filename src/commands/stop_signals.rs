//! How a command that runs in the foreground (`sim`, `watch`, `serve`) is told to stop: SIGTERM
//! (kill, systemd) or SIGINT (Ctrl-C), listened for before it starts its work.

use tokio::signal::unix::{Signal, SignalKind, signal};

pub struct StopSignals {
    term: Signal,
    int: Signal,
}

impl StopSignals {
    /// Listens for both, from now on.
    pub fn listen() -> std::io::Result<StopSignals> {
        Ok(StopSignals {
            term: signal(SignalKind::terminate())?,
            int: signal(SignalKind::interrupt())?,
        })
    }

    /// Waits for either.
    pub async fn recv(&mut self) {
        tokio::select! {
            _ = self.term.recv() => {}
            _ = self.int.recv() => {}
        }
    }
}

//! `gantry watch`: the engine alone, in the foreground — for tmux, systemd or a server where no
//! one keeps a terminal open. It follows the cluster and the newest attempt, saves every pod's
//! log exactly as the TUI does (same files, same lock), and prints every notice, one line each:
//! the time, the severity and the text (also to `gantry.log`). SIGTERM or Ctrl-C stop it
//! cleanly: exit 0.

use tokio::sync::broadcast::error::RecvError;

use super::stop_signals::StopSignals;
use crate::engine::{Engine, open_session};
use crate::settings::Settings;

pub async fn run(settings: Settings) -> i32 {
    let Settings {
        session: options,
        config,
        log_file,
        ..
    } = settings;
    crate::logging::to_file(log_file.as_deref());
    let session = match open_session(&options, config).await {
        Ok(s) => s,
        Err(e) => {
            crate::errln!("gantry: {e:#}");
            return 2;
        }
    };
    let place = session.info.place.clone();
    let cluster = session.cluster_name();
    if let Some(dir) = &session.sim_dir {
        crate::errln!(
            "gantry watch: simulated cloud: state in {} (endpoints.json, token, kubeconfig)",
            dir.display()
        );
    }
    let Ok(mut stop) = StopSignals::listen() else {
        crate::errln!("gantry: cannot listen for SIGTERM and SIGINT");
        return 1;
    };
    let engine = Engine::start(session);
    let mut notices = engine.handle().notices();
    crate::errln!("gantry watch: cluster {cluster} in {place}; SIGTERM or Ctrl-C stops");
    loop {
        tokio::select! {
            _ = stop.recv() => break,
            n = notices.recv() => match n {
                Ok(n) => crate::outln!(
                    "{} {:<8} {n}",
                    jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ"),
                    n.severity.name()
                ),
                Err(RecvError::Lagged(missed)) => {
                    crate::errln!("gantry watch: {missed} changes came too fast to print (gantry.log has them)");
                }
                Err(RecvError::Closed) => break,
            },
        }
    }
    engine.stop().await;
    crate::errln!("gantry watch: stopped");
    0
}

//! An engine handle with no owner behind it, for testing what sits beside an engine (the health
//! endpoint): the test decides whether pings are answered and what the world says.

use std::sync::{Arc, RwLock};

use tokio::sync::{broadcast, mpsc, watch};

use super::{EngineHandle, Request, World, told};

/// A handle whose owner answers pings when `answers` (else holds them unanswered), with `world`
/// as its world. The stand-in lives as long as the runtime's tasks.
pub(crate) fn handle(answers: bool, world: World) -> EngineHandle {
    let (requests, mut asked) = mpsc::unbounded_channel();
    let (_changed_tx, changed) = watch::channel(0);
    let (notices, _) = broadcast::channel(1);
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Some(request) = asked.recv().await {
            if let Request::Ping(pong) = request {
                if answers {
                    let _ = pong.send(());
                } else {
                    held.push(pong);
                }
            }
        }
    });
    EngineHandle {
        model: Arc::new(RwLock::new(world)),
        telling: Arc::new(RwLock::new(told::Telling::default())),
        changed,
        requests,
        notices,
        usage_shown: Arc::new(watch::channel(0).0),
    }
}

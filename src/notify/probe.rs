//! `gantry notify test`: one message to each target now, past its filters and its rate limit,
//! tried once, with how it went and how long it took — to check a URL before a run depends on
//! it. The outcome is recorded as the target's last delivery.

use std::path::Path;
use std::time::{Duration, Instant};

use jiff::Timestamp;

use super::message::Message;
use super::outbox::{Files, LastTry, target_id};
use super::send::{Outcome, Sender};
use crate::config::NotifyTarget;
use crate::vocabulary::Kind;
use crate::vocabulary::Severity;

/// How one target took the test message.
#[derive(Debug, Clone, PartialEq)]
pub struct TestResult {
    /// Its place in the config, from 1.
    pub number: usize,
    /// `slack https://hooks.slack.com/…`.
    pub label: String,
    /// None for a terminal target: viewers tell it, nothing is sent.
    pub outcome: Option<Outcome>,
    pub took: Duration,
}

/// The test message: a `cluster` event at info severity, its key new every time.
pub fn test_event(cluster: &str) -> Message {
    let now = Timestamp::now();
    let mut event = Message::new(
        Kind::Cluster,
        Severity::Info,
        cluster,
        "Gantry test message: this target is told what happens to runs on this cluster",
        format!("test/{}", now.as_millisecond()),
    );
    event.at = now;
    event
}

/// Sends `event` to each target once, each request ending within `timeout`; records each
/// outcome in the outbox in `dir` when there is one.
pub async fn send_test(
    targets: &[NotifyTarget],
    event: &Message,
    timeout: Duration,
    dir: Option<&Path>,
) -> Result<Vec<TestResult>, String> {
    let sender = Sender::new(timeout)?;
    let tries = targets.iter().enumerate().map(|(i, target)| {
        let sender = sender.clone();
        async move {
            let started = Instant::now();
            let outcome = if target.kind.is_http() {
                Some(sender.send(target, event).await)
            } else {
                None
            };
            TestResult {
                number: i + 1,
                label: target.label(),
                outcome,
                took: started.elapsed(),
            }
        }
    });
    let results = futures::future::join_all(tries).await;
    if let Some(dir) = dir {
        let recorded = Files::new(dir).update(|outbox| {
            let now = Timestamp::now();
            for (target, result) in targets.iter().zip(&results) {
                let Some(outcome) = &result.outcome else {
                    continue;
                };
                let record = outbox.targets.entry(target_id(target)).or_default();
                record.last = Some(LastTry {
                    at: now,
                    ok: outcome.is_delivered(),
                    result: format!("test message: {outcome}"),
                });
            }
        });
        if let Err(e) = recorded {
            tracing::warn!("notify: the test's outcomes could not be recorded: {e}");
        }
    }
    Ok(results)
}

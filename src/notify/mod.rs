//! Telling people what happened to a run nobody is watching. Most training runs are not
//! watched: a failed attempt, a recovery, a NaN loss, a stall, a budget crossed reach their
//! people as messages to the `[[notify]]` targets — Slack, a webhook, ntfy, the terminals
//! watching Gantry.
//!
//! - [`Message`]: one message, the same for every target.
//! - [`Notifier`]: takes messages without ever blocking its caller ([`Notifier::send`]) and
//!   delivers them in the background, at least once, through an outbox that outlives the
//!   process; each target's filters and rate limit decide what it is sent.
//! - [`terminal_bytes`]: what a viewer writes to its terminal for a `terminal` target.
//! - [`send_test`] and [`status`]: `gantry notify test` and `gantry notify status`.

mod admit;
mod deliverer;
pub mod filter;
mod message;
mod ntfy;
mod outbox;
mod probe;
mod schedule;
mod send;
mod slack;
mod status;
mod store;
mod terminal;
mod webhook;

use std::time::Duration;

pub use deliverer::Notifier;
pub use message::Message;
pub use outbox::LastTry;
pub use probe::{TestResult, send_test, test_event};
pub use send::{Outcome, idempotency_key};
pub use status::{TargetStatus, status};
pub use store::{ClusterStore, OUTBOX_KEY, pending_in};
pub use terminal::terminal_bytes;
pub use webhook::SCHEMA_VERSION;

/// The outbox's directory under Gantry's state directory.
pub const OUTBOX_DIR: &str = "notify";

/// How messages are delivered: the waits between tries, when to give up, how long a request
/// may take, how many messages may wait. The defaults are Gantry's; tests shorten them.
#[derive(Debug, Clone, PartialEq)]
pub struct Delivery {
    /// The wait after a first failed try; it doubles after each one.
    pub first_retry: Duration,
    /// The longest wait between tries.
    pub max_retry: Duration,
    /// How long after a message was queued it is given up on.
    pub give_up: Duration,
    /// How long one request may take.
    pub timeout: Duration,
    /// Messages waiting at most, over all targets (then the oldest of the least severe go).
    pub max_pending: usize,
    /// Messages tried per target in one round.
    pub per_round: usize,
}

impl Default for Delivery {
    fn default() -> Self {
        Delivery {
            first_retry: Duration::from_secs(5),
            max_retry: Duration::from_secs(10 * 60),
            give_up: Duration::from_secs(24 * 60 * 60),
            timeout: Duration::from_secs(10),
            max_pending: 1000,
            per_round: 20,
        }
    }
}

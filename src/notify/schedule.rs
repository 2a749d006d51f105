//! When each waiting message is tried, and what a try changes. A deliverer claims the messages
//! that are due for its targets (a lease: no other process tries them meanwhile, and they come
//! back by themselves if it dies), tries them, and records each outcome: delivered or refused,
//! the message goes; worth another try, it waits — the server's `Retry-After`, else a back-off
//! doubling from `first_retry` to `max_retry` — until `give_up` after it was queued.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

use super::Delivery;
use super::admit::since;
use super::message::Message;
use super::outbox::{LastTry, Outbox};
use super::send::Outcome;

/// A message claimed for a try.
#[derive(Debug, Clone)]
pub(crate) struct Claim {
    pub id: u64,
    pub target: String,
    pub event: Message,
}

/// A message given up on, for the log.
#[derive(Debug, Clone)]
pub(crate) struct GivenUp {
    pub target: String,
    pub tries: u32,
    pub last_error: Option<String>,
}

/// What became of a claimed message.
#[derive(Debug, Clone)]
pub(crate) enum Tried {
    Sent(Outcome),
    /// Not tried: its target failed earlier in the round; it waits until then.
    Deferred(Timestamp),
}

/// Gives up on what waited too long, then claims what is due for `targets`, oldest first, at
/// most `per_target` each, for `lease`.
pub(crate) fn claim(
    outbox: &mut Outbox,
    targets: &[String],
    now: Timestamp,
    token: u64,
    lease: Duration,
    delivery: &Delivery,
) -> (Vec<Claim>, Vec<GivenUp>) {
    let mut given_up = Vec::new();
    let (expired, waiting): (Vec<_>, Vec<_>) = std::mem::take(&mut outbox.pending)
        .into_iter()
        .partition(|p| p.next_try <= now && since(p.enqueued, now) >= delivery.give_up);
    outbox.pending = waiting;
    for p in expired {
        let record = outbox.targets.entry(p.target.clone()).or_default();
        record.failed += 1;
        record.last = Some(LastTry {
            at: now,
            ok: false,
            result: format!(
                "gave up after {} tries in {}: {}",
                p.tries,
                friendly(delivery.give_up),
                p.last_error.as_deref().unwrap_or("never tried")
            ),
        });
        given_up.push(GivenUp {
            target: p.target,
            tries: p.tries,
            last_error: p.last_error,
        });
    }
    let until = later(now, lease);
    let mut claims = Vec::new();
    for target in targets {
        for p in outbox
            .pending
            .iter_mut()
            .filter(|p| &p.target == target && p.next_try <= now)
            .take(delivery.per_round)
        {
            p.claimed_by = Some(token);
            p.next_try = until;
            claims.push(Claim {
                id: p.id,
                target: p.target.clone(),
                event: p.event.clone(),
            });
        }
    }
    (claims, given_up)
}

/// Records each claimed message's outcome.
pub(crate) fn record(
    outbox: &mut Outbox,
    results: &[(u64, Tried)],
    now: Timestamp,
    delivery: &Delivery,
) {
    for (id, tried) in results {
        let Some(index) = outbox.pending.iter().position(|p| p.id == *id) else {
            continue;
        };
        let outcome = match tried {
            Tried::Deferred(until) => {
                let p = &mut outbox.pending[index];
                p.claimed_by = None;
                p.next_try = *until;
                continue;
            }
            Tried::Sent(outcome) => outcome,
        };
        let tries = outbox.pending[index].tries + 1;
        let target = outbox.pending[index].target.clone();
        let record = outbox.targets.entry(target).or_default();
        match outcome {
            Outcome::Delivered { .. } => {
                record.delivered += 1;
                record.last = Some(LastTry {
                    at: now,
                    ok: true,
                    result: match tries {
                        1 => outcome.to_string(),
                        n => format!("{outcome} at try {n}"),
                    },
                });
                outbox.pending.remove(index);
            }
            Outcome::Refused { why } => {
                record.failed += 1;
                record.last = Some(LastTry {
                    at: now,
                    ok: false,
                    result: format!("refused: {why}"),
                });
                outbox.pending.remove(index);
            }
            Outcome::Retry { why, after } => {
                let wait = retry_wait(*after, tries, delivery);
                record.last = Some(LastTry {
                    at: now,
                    ok: false,
                    result: format!("{why}; try {tries}, next in {}", friendly(wait)),
                });
                let p = &mut outbox.pending[index];
                p.tries = tries;
                p.claimed_by = None;
                p.next_try = later(now, wait);
                p.last_error = Some(why.clone());
            }
        }
    }
}

/// How long after try `tries` failed the next one is: the server's word when it gave one
/// (up to the give-up time), else the back-off.
pub(crate) fn retry_wait(after: Option<Duration>, tries: u32, delivery: &Delivery) -> Duration {
    match after.filter(|a| !a.is_zero()) {
        Some(after) => after.min(delivery.give_up),
        None => crate::backoff::Backoff::new(delivery.first_retry, delivery.max_retry)
            .nth(tries.saturating_sub(1) as usize)
            .unwrap_or(delivery.max_retry),
    }
}

/// Gives back what `token` holds, to be tried at once (a deliverer that stops).
pub(crate) fn release(outbox: &mut Outbox, token: u64, now: Timestamp) {
    for p in outbox
        .pending
        .iter_mut()
        .filter(|p| p.claimed_by == Some(token))
    {
        p.claimed_by = None;
        p.next_try = now;
    }
}

/// When the next of `targets`' messages is due, if any waits.
pub(crate) fn next_due(outbox: &Outbox, targets: &[String]) -> Option<Timestamp> {
    outbox
        .pending
        .iter()
        .filter(|p| targets.contains(&p.target))
        .map(|p| p.next_try)
        .min()
}

/// `d` after `now` (the end of time at the most).
pub(crate) fn later(now: Timestamp, d: Duration) -> Timestamp {
    now.saturating_add(signed(d)).unwrap_or(Timestamp::MAX)
}

fn signed(d: Duration) -> SignedDuration {
    SignedDuration::try_from(d).unwrap_or(SignedDuration::MAX)
}

/// `1h 30m`, `2s`, `250ms`: a wait as people read it.
pub(crate) fn friendly(d: Duration) -> String {
    let d = if d >= Duration::from_secs(1) {
        Duration::from_secs(d.as_secs())
    } else {
        Duration::from_millis(d.as_millis() as u64)
    };
    format!("{:#}", signed(d))
}

#[cfg(test)]
#[path = "schedule_tests.rs"]
mod tests;

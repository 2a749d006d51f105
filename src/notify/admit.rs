//! Which messages go into the outbox, for which target. A target is sent a message when it
//! wants it (its `events`, its `min-severity`), when its key is new to it (a key accepted in
//! the last day is the same message told again: by a restart, or by a second Gantry process
//! watching the same run), and within its rate limit: one message per event kind per window,
//! unless it is worse than the last one accepted in that window. What is over the limit is
//! counted and dropped, never queued. The outbox holds a bounded number of messages: when it
//! is full, the oldest of the least severe goes.

use std::time::Duration;

use jiff::Timestamp;

use super::message::{Message, bounded};
use super::outbox::{Accepted, Outbox, Pending, target_id};
use crate::config::NotifyTarget;

/// How long a key is remembered.
pub(crate) const KEY_MEMORY: Duration = Duration::from_secs(24 * 60 * 60);
/// Keys remembered per target at most (the oldest are forgotten first).
const KEYS_MAX: usize = 1000;
/// A message's text is kept up to this many characters.
const TEXT_MAX: usize = 4000;

/// What became of a batch of messages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Admitted {
    pub queued: usize,
    pub rate_limited: usize,
    pub repeated: usize,
    /// Dropped from a full outbox (older messages, or these).
    pub dropped: usize,
}

/// Adds `events` to the outbox for each HTTP target that is to be sent them.
pub(crate) fn admit(
    outbox: &mut Outbox,
    targets: &[NotifyTarget],
    events: &[Message],
    now: Timestamp,
    max_pending: usize,
) -> Admitted {
    let mut admitted = Admitted::default();
    for event in events {
        for target in targets.iter().filter(|t| t.kind.is_http()) {
            if !super::filter::wants(target, event) {
                continue;
            }
            let id = target_id(target);
            let record = outbox.targets.entry(id.clone()).or_default();
            record.keys.retain(|_, at| since(*at, now) < KEY_MEMORY);
            if record.keys.contains_key(&event.key) {
                admitted.repeated += 1;
                continue;
            }
            let window = super::filter::window(target);
            let last = record
                .sent
                .get(&event.kind)
                .map(|last| (since(last.at, now), last.severity));
            if !super::filter::passes(window, last, event.severity) {
                record.rate_limited += 1;
                admitted.rate_limited += 1;
                continue;
            }
            record.sent.insert(
                event.kind,
                Accepted {
                    at: now,
                    severity: event.severity,
                },
            );
            record.keys.insert(event.key.clone(), now);
            while record.keys.len() > KEYS_MAX {
                let oldest = record
                    .keys
                    .iter()
                    .min_by_key(|(_, at)| **at)
                    .map(|(k, _)| k.clone());
                match oldest {
                    Some(key) => record.keys.remove(&key),
                    None => break,
                };
            }
            let mut event = event.clone();
            event.text = bounded(&event.text, TEXT_MAX);
            outbox.pending.push(Pending {
                id: rand::random(),
                target: id,
                event,
                enqueued: now,
                tries: 0,
                next_try: now,
                claimed_by: None,
                last_error: None,
            });
            admitted.queued += 1;
        }
    }
    admitted.dropped = make_room(outbox, max_pending);
    admitted
}

/// Drops the oldest of the least severe messages until at most `max` wait; how many went.
fn make_room(outbox: &mut Outbox, max: usize) -> usize {
    let mut dropped = 0;
    while outbox.pending.len() > max {
        let Some(victim) = outbox
            .pending
            .iter()
            .enumerate()
            .min_by_key(|(_, p)| (p.event.severity, p.enqueued))
            .map(|(i, _)| i)
        else {
            break;
        };
        let gone = outbox.pending.remove(victim);
        outbox.targets.entry(gone.target).or_default().dropped += 1;
        dropped += 1;
    }
    dropped
}

/// How long ago `then` was (zero for a time to come: a clock set back).
pub(crate) fn since(then: Timestamp, now: Timestamp) -> Duration {
    Duration::try_from(now.duration_since(then)).unwrap_or(Duration::ZERO)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TargetKind;
    use crate::secret_url::SecretUrl;
    use crate::vocabulary::Kind;
    use crate::vocabulary::Severity;

    fn webhook() -> NotifyTarget {
        NotifyTarget::new(
            TargetKind::Webhook,
            Some(SecretUrl::parse("https://example.com/h").unwrap()),
        )
    }

    fn alert(n: usize, severity: Severity) -> Message {
        Message::new(
            Kind::Alert,
            severity,
            "c",
            "loss NaN",
            format!("r/alert/{n}"),
        )
    }

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + seconds).unwrap()
    }

    #[test]
    fn a_thousand_alerts_in_a_window_queue_one_and_a_worse_one_still_passes() {
        let mut outbox = Outbox::default();
        let targets = [webhook()];
        let alerts: Vec<_> = (0..1000).map(|n| alert(n, Severity::Warning)).collect();
        let admitted = admit(&mut outbox, &targets, &alerts, at(0), 1000);
        assert_eq!((admitted.queued, admitted.rate_limited), (1, 999));
        let critical = admit(
            &mut outbox,
            &targets,
            &[alert(1000, Severity::Critical)],
            at(30),
            1000,
        );
        assert_eq!(critical.queued, 1);
        let again = admit(
            &mut outbox,
            &targets,
            &[alert(1001, Severity::Critical)],
            at(40),
            1000,
        );
        assert_eq!(again.rate_limited, 1, "as bad as the last one: limited");
        let later = admit(
            &mut outbox,
            &targets,
            &[alert(1002, Severity::Info)],
            at(40 + 600),
            1000,
        );
        assert_eq!(later.queued, 1, "after the window, anything");
        let record = &outbox.targets[&target_id(&targets[0])];
        assert_eq!(record.rate_limited, 1000);
        assert_eq!(outbox.pending.len(), 3);
    }

    #[test]
    fn a_rate_limit_is_per_event_kind_and_zero_is_none() {
        let mut outbox = Outbox::default();
        let mut target = webhook();
        let budget = Message::new(Kind::Budget, Severity::Warning, "c", "80%", "r/budget/80");
        let admitted = admit(
            &mut outbox,
            std::slice::from_ref(&target),
            &[alert(0, Severity::Warning), budget],
            at(0),
            1000,
        );
        assert_eq!(admitted.queued, 2);
        target.rate_limit = "0s".into();
        let alerts: Vec<_> = (1..5).map(|n| alert(n, Severity::Warning)).collect();
        assert_eq!(
            admit(&mut outbox, &[target], &alerts, at(1), 1000).queued,
            4
        );
    }

    #[test]
    fn a_key_is_sent_once_a_day() {
        let mut outbox = Outbox::default();
        let targets = [webhook()];
        let mut event = alert(7, Severity::Critical);
        assert_eq!(
            admit(&mut outbox, &targets, &[event.clone()], at(0), 1000).queued,
            1
        );
        event.severity = Severity::Critical;
        let again = admit(&mut outbox, &targets, &[event.clone()], at(3600), 1000);
        assert_eq!((again.queued, again.repeated), (0, 1));
        let tomorrow = admit(&mut outbox, &targets, &[event], at(25 * 3600), 1000);
        assert_eq!(tomorrow.queued, 1);
    }

    #[test]
    fn only_http_targets_that_want_it_are_queued() {
        let mut outbox = Outbox::default();
        let mut picky = webhook();
        picky.min_severity = Severity::Critical;
        let terminal = NotifyTarget::new(TargetKind::Terminal, None);
        let admitted = admit(
            &mut outbox,
            &[picky, terminal],
            &[alert(0, Severity::Warning)],
            at(0),
            1000,
        );
        assert_eq!(admitted, Admitted::default());
        assert!(outbox.pending.is_empty());
    }

    #[test]
    fn a_full_outbox_drops_the_oldest_of_the_least_severe() {
        let mut outbox = Outbox::default();
        let mut target = webhook();
        target.rate_limit = "0s".into();
        let targets = [target];
        let events = [
            alert(0, Severity::Critical),
            alert(1, Severity::Info),
            alert(2, Severity::Warning),
            alert(3, Severity::Info),
        ];
        for (i, e) in events.iter().enumerate() {
            admit(
                &mut outbox,
                &targets,
                std::slice::from_ref(e),
                at(i as i64),
                3,
            );
        }
        let keys: Vec<_> = outbox
            .pending
            .iter()
            .map(|p| p.event.key.as_str())
            .collect();
        assert_eq!(keys, ["r/alert/0", "r/alert/2", "r/alert/3"]);
        assert_eq!(outbox.targets[&target_id(&targets[0])].dropped, 1);
    }
}

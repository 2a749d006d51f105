use super::*;
use crate::config::{NotifyTarget, TargetKind};
use crate::notify::admit::admit;
use crate::notify::outbox::target_id;
use crate::secret_url::SecretUrl;
use crate::vocabulary::Kind;
use crate::vocabulary::Severity;

fn at(seconds: i64) -> Timestamp {
    Timestamp::from_second(1_700_000_000 + seconds).unwrap()
}

fn delivery() -> Delivery {
    Delivery {
        first_retry: Duration::from_secs(10),
        max_retry: Duration::from_secs(80),
        ..Delivery::default()
    }
}

/// An outbox with `n` messages for one webhook, and the webhook's id.
fn outbox_with(n: usize) -> (Outbox, String) {
    let mut target = NotifyTarget::new(
        TargetKind::Webhook,
        Some(SecretUrl::parse("https://example.com/h").unwrap()),
    );
    target.rate_limit = "0s".into();
    let mut outbox = Outbox::default();
    let events: Vec<_> = (0..n)
        .map(|i| Message::new(Kind::Alert, Severity::Warning, "c", "t", format!("k{i}")))
        .collect();
    admit(
        &mut outbox,
        std::slice::from_ref(&target),
        &events,
        at(0),
        1000,
    );
    (outbox, target_id(&target))
}

const LEASE: Duration = Duration::from_secs(60);

#[test]
fn a_claimed_message_is_not_claimed_again_until_its_lease_ends() {
    let (mut outbox, id) = outbox_with(1);
    let targets = [id];
    let (first, _) = claim(&mut outbox, &targets, at(0), 1, LEASE, &delivery());
    assert_eq!(first.len(), 1);
    let (second, _) = claim(&mut outbox, &targets, at(30), 2, LEASE, &delivery());
    assert!(second.is_empty(), "another deliverer holds it");
    let (third, _) = claim(&mut outbox, &targets, at(61), 2, LEASE, &delivery());
    assert_eq!(third.len(), 1, "the first one died: its lease ended");
}

#[test]
fn a_delivered_message_goes_and_the_target_remembers_it() {
    let (mut outbox, id) = outbox_with(1);
    let (claims, _) = claim(
        &mut outbox,
        std::slice::from_ref(&id),
        at(0),
        1,
        LEASE,
        &delivery(),
    );
    let sent = Tried::Sent(Outcome::Delivered { status: 200 });
    record(&mut outbox, &[(claims[0].id, sent)], at(1), &delivery());
    assert!(outbox.pending.is_empty());
    let record = &outbox.targets[&id];
    assert_eq!(record.delivered, 1);
    let last = record.last.as_ref().unwrap();
    assert!(last.ok && last.result == "delivered (HTTP 200)", "{last:?}");
}

#[test]
fn a_retry_waits_the_back_off_or_the_servers_word_and_counts_its_tries() {
    let (mut outbox, id) = outbox_with(1);
    let targets = [id.clone()];
    let (claims, _) = claim(&mut outbox, &targets, at(0), 1, LEASE, &delivery());
    let failed = Tried::Sent(Outcome::Retry {
        why: "HTTP 503".into(),
        after: None,
    });
    record(&mut outbox, &[(claims[0].id, failed)], at(0), &delivery());
    let p = &outbox.pending[0];
    assert_eq!((p.tries, p.claimed_by), (1, None));
    let wait = since(at(0), p.next_try);
    assert!(
        wait >= Duration::from_secs(5) && wait <= Duration::from_secs(10),
        "{wait:?}"
    );
    assert!(
        outbox.targets[&id]
            .last
            .as_ref()
            .unwrap()
            .result
            .starts_with("HTTP 503; try 1, next in"),
        "{:?}",
        outbox.targets[&id].last
    );

    let (claims, _) = claim(&mut outbox, &targets, at(11), 1, LEASE, &delivery());
    let told = Tried::Sent(Outcome::Retry {
        why: "HTTP 429".into(),
        after: Some(Duration::from_secs(120)),
    });
    record(&mut outbox, &[(claims[0].id, told)], at(11), &delivery());
    assert_eq!(outbox.pending[0].next_try, at(131));
    assert_eq!(outbox.pending[0].tries, 2);
}

#[test]
fn the_back_off_doubles_to_its_cap() {
    let d = delivery();
    let waits: Vec<_> = (1..=6).map(|n| retry_wait(None, n, &d)).collect();
    for (wait, step) in waits.iter().zip([10, 20, 40, 80, 80, 80]) {
        let step = Duration::from_secs(step);
        assert!(*wait >= step / 2 && *wait <= step, "{waits:?}");
    }
    assert_eq!(
        retry_wait(Some(Duration::from_secs(3 * 86_400)), 1, &d),
        d.give_up,
        "a server cannot hold a message past the give-up time"
    );
}

#[test]
fn a_refused_message_goes_and_counts_as_failed() {
    let (mut outbox, id) = outbox_with(1);
    let (claims, _) = claim(
        &mut outbox,
        std::slice::from_ref(&id),
        at(0),
        1,
        LEASE,
        &delivery(),
    );
    let refused = Tried::Sent(Outcome::Refused {
        why: "HTTP 400 (invalid_payload)".into(),
    });
    record(&mut outbox, &[(claims[0].id, refused)], at(0), &delivery());
    assert!(outbox.pending.is_empty());
    assert_eq!(outbox.targets[&id].failed, 1);
    assert_eq!(
        outbox.targets[&id].last.as_ref().unwrap().result,
        "refused: HTTP 400 (invalid_payload)"
    );
}

#[test]
fn a_message_is_given_up_on_a_day_after_it_was_queued() {
    let (mut outbox, id) = outbox_with(2);
    let targets = [id.clone()];
    let day = 24 * 3600;
    let (claims, given_up) = claim(&mut outbox, &targets, at(day - 1), 1, LEASE, &delivery());
    assert_eq!((claims.len(), given_up.len()), (2, 0));
    release(&mut outbox, 1, at(day - 1));
    let (claims, given_up) = claim(&mut outbox, &targets, at(day), 1, LEASE, &delivery());
    assert_eq!((claims.len(), given_up.len()), (0, 2));
    assert!(outbox.pending.is_empty());
    assert_eq!(outbox.targets[&id].failed, 2);
    assert!(
        outbox.targets[&id]
            .last
            .as_ref()
            .unwrap()
            .result
            .starts_with("gave up after 0 tries in 24h"),
        "{:?}",
        outbox.targets[&id].last
    );
}

#[test]
fn claims_are_bounded_per_round_and_deferred_ones_wait() {
    let (mut outbox, id) = outbox_with(30);
    let d = delivery();
    let (claims, _) = claim(&mut outbox, std::slice::from_ref(&id), at(0), 1, LEASE, &d);
    assert_eq!(claims.len(), d.per_round);
    let deferred: Vec<_> = claims
        .iter()
        .map(|c| (c.id, Tried::Deferred(at(50))))
        .collect();
    record(&mut outbox, &deferred, at(0), &d);
    assert!(outbox.pending.iter().all(|p| p.claimed_by.is_none()));
    assert_eq!(
        next_due(&outbox, &[id]),
        Some(at(0)),
        "the unclaimed ones are due"
    );
    assert_eq!(next_due(&outbox, &["other".into()]), None);
}

#[test]
fn waits_read_as_people_write_them() {
    assert_eq!(friendly(Duration::from_secs(5400)), "1h 30m");
    assert_eq!(friendly(Duration::from_millis(2500)), "2s");
    assert_eq!(friendly(Duration::from_millis(250)), "250ms");
}

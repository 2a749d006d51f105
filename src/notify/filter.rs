//! What a target is told, the one rule for every target — the HTTP ones (`admit`, into the
//! outbox) and the terminals every viewer rings (`app::bells`): the events it lists, from its
//! least severity, and at most one message per kind in its rate-limit window unless a later one
//! is worse than the last one that passed.

use std::time::Duration;

use super::Message;
use crate::config::NotifyTarget;
use crate::vocabulary::Severity;

/// The window when a target's `rate-limit` is not a duration (the config refuses that, so only
/// a value made in code can be one).
const WINDOW_UNREADABLE: Duration = Duration::from_secs(600);

/// Whether `target` is told `message` at all: its kind listed, severe enough.
pub fn wants(target: &NotifyTarget, message: &Message) -> bool {
    target.events.contains(&message.kind) && message.severity >= target.min_severity
}

/// The target's rate-limit window (zero: no limit).
pub fn window(target: &NotifyTarget) -> Duration {
    crate::config::parse_duration(&target.rate_limit).unwrap_or(WINDOW_UNREADABLE)
}

/// Whether a message of `severity` passes a window in which the last one of its kind passed
/// `since` ago with `last` severity (None: none passed yet).
pub fn passes(window: Duration, last: Option<(Duration, Severity)>, severity: Severity) -> bool {
    match last {
        None => true,
        Some((since, last)) => window.is_zero() || since >= window || severity > last,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TargetKind;
    use crate::vocabulary::Kind;

    #[test]
    fn a_target_wants_its_events_from_its_least_severity() {
        let mut t = NotifyTarget::new(TargetKind::Terminal, None);
        t.events = vec![Kind::Alert];
        t.min_severity = Severity::Warning;
        let message = |kind, severity| Message::new(kind, severity, "c", "t", "k");
        assert!(wants(&t, &message(Kind::Alert, Severity::Warning)));
        assert!(wants(&t, &message(Kind::Alert, Severity::Critical)));
        assert!(!wants(&t, &message(Kind::Alert, Severity::Info)));
        assert!(!wants(&t, &message(Kind::Budget, Severity::Critical)));
    }

    #[test]
    fn once_a_window_unless_worse_and_a_zero_window_is_no_limit() {
        let ten = Duration::from_secs(600);
        let warning = Severity::Warning;
        assert!(passes(ten, None, warning));
        assert!(!passes(
            ten,
            Some((Duration::from_secs(5), warning)),
            warning
        ));
        assert!(passes(
            ten,
            Some((Duration::from_secs(5), warning)),
            Severity::Critical
        ));
        assert!(passes(ten, Some((ten, warning)), warning));
        assert!(passes(
            Duration::ZERO,
            Some((Duration::ZERO, warning)),
            warning
        ));
    }

    #[test]
    fn a_target_takes_its_window_from_its_rate_limit() {
        let mut t = NotifyTarget::new(TargetKind::Terminal, None);
        assert_eq!(window(&t), ten_minutes());
        t.rate_limit = "1h".into();
        assert_eq!(window(&t), Duration::from_secs(3600));
    }

    fn ten_minutes() -> Duration {
        Duration::from_secs(600)
    }
}

//! The `terminal` notification targets (`[[notify]] kind = "terminal"`), told by each viewer to
//! its own terminal — the local TUI's, each SSH client's of `gantry serve` — as a bell and a
//! desktop notification. Every viewer rings its own (there is no one sender here, unlike the
//! HTTP targets), each target with its events, least severity and rate limit: at most one ring
//! per event kind in the window, unless the news is worse than the last one rung.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::config::NotifyTarget;
use crate::notify::{Message, filter};
use crate::vocabulary::{Kind, Severity};

#[derive(Debug, Default)]
pub struct Bells {
    /// (target, event kind) → when it last rang, and how bad that was.
    last: HashMap<(usize, Kind), (Instant, Severity)>,
    /// What the terminal is to be sent next.
    pub pending: Vec<u8>,
}

impl Bells {
    /// Rings for `event` if a terminal target wants it now.
    pub fn hear(&mut self, targets: &[NotifyTarget], event: &Message, now: Instant) {
        let mut ring = false;
        for (i, target) in targets.iter().enumerate() {
            if target.kind.is_http() || !filter::wants(target, event) {
                continue;
            }
            if self.allows(i, filter::window(target), event, now) {
                ring = true;
            }
        }
        if ring {
            self.pending
                .extend_from_slice(&crate::notify::terminal_bytes(event));
        }
    }

    fn allows(&mut self, target: usize, window: Duration, event: &Message, now: Instant) -> bool {
        let key = (target, event.kind);
        let last = self
            .last
            .get(&key)
            .map(|(at, severity)| (now.duration_since(*at), *severity));
        let allowed = filter::passes(window, last, event.severity);
        if allowed {
            self.last.insert(key, (now, event.severity));
        }
        allowed
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn targets(text: &str) -> Vec<NotifyTarget> {
        let config: crate::config::Config = toml::from_str(text).unwrap();
        config.notify
    }

    fn event(kind: Kind, severity: Severity, text: &str) -> Message {
        Message::new(kind, severity, "ml-gke-cluster", text, format!("k/{text}"))
    }

    #[test]
    fn a_terminal_target_rings_for_what_it_wants_once_a_window_unless_it_gets_worse() {
        let targets = targets(
            "[[notify]]\nkind = \"terminal\"\nevents = [\"alert\", \"attempt-ended\"]\nmin-severity = \"warning\"\n",
        );
        let mut bells = Bells::default();
        let t0 = Instant::now();
        bells.hear(&targets, &event(Kind::Stalled, Severity::Critical, "a"), t0);
        bells.hear(&targets, &event(Kind::Alert, Severity::Info, "b"), t0);
        assert!(
            bells.pending.is_empty(),
            "not its events, or not bad enough"
        );
        bells.hear(
            &targets,
            &event(Kind::Alert, Severity::Warning, "loss jumped"),
            t0,
        );
        let rung = std::mem::take(&mut bells.pending);
        assert_eq!(rung[0], 0x07, "a bell first");
        assert!(String::from_utf8_lossy(&rung).contains("\x1b]9;Gantry: Training alert"));
        bells.hear(
            &targets,
            &event(Kind::Alert, Severity::Warning, "again"),
            t0,
        );
        assert!(bells.pending.is_empty(), "once in the window");
        bells.hear(&targets, &event(Kind::Alert, Severity::Critical, "NaN"), t0);
        assert!(!bells.pending.is_empty(), "worse news passes");
        bells.pending.clear();
        let later = t0 + Duration::from_secs(601);
        bells.hear(
            &targets,
            &event(Kind::Alert, Severity::Warning, "later"),
            later,
        );
        assert!(!bells.pending.is_empty(), "a new window");
    }

    #[test]
    fn http_targets_ring_no_terminal() {
        let targets = targets("[[notify]]\nkind = \"ntfy\"\nurl = \"https://ntfy.sh/topic\"\n");
        let mut bells = Bells::default();
        bells.hear(
            &targets,
            &event(Kind::Alert, Severity::Critical, "x"),
            Instant::now(),
        );
        assert!(bells.pending.is_empty());
    }
}

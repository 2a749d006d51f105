//! The recoverer's Lease as this engine sees it: the record as last read, whether this engine
//! holds it, and — what decides a takeover — when this engine last saw the record change, by its
//! own monotonic clock. A record's claimed times are never trusted (`k8s::lease`): one that
//! claims a renewal in 2099 is as silent as any other once it stops changing. Taking and losing
//! the Lease are told here; renewals are not.

use std::time::{Duration, Instant};

use crate::engine::notice::Notice;
use crate::k8s::lease::Record;
use crate::vocabulary::{Kind, Severity};

/// What the Lease's keeper found: the record (None: there is no Lease), and whether this engine
/// holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reading {
    pub record: Option<Record>,
    pub mine: bool,
}

/// Who holds the Lease, as its record says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    pub identity: String,
    /// Whether that is this engine.
    pub mine: bool,
    /// What it says of itself: its version, whether it is the cluster's watcher.
    pub stamp: crate::k8s::lease::Stamp,
}

/// The cluster's watcher, as its Deployment says (read by local engines only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatcherSeen {
    /// Its pod is ready: a local engine makes way for it.
    pub ready: bool,
    /// The Gantry it runs.
    pub version: Option<String>,
    /// Its Deployment, as far as the plan compares it with the config's watcher.
    pub there: crate::watcher::planned::There,
}

#[derive(Debug, Default)]
pub struct LeaseSeen {
    /// The cluster's watcher, when there is one (a local engine's keeper reads it).
    pub watcher: Option<WatcherSeen>,
    /// Read at least once: before that, nothing is known (and nothing is taken).
    read: bool,
    record: Option<Record>,
    mine: bool,
    /// When this engine last saw the record change (or first saw it).
    changed_at: Option<Instant>,
    /// The watcher version already said to differ from this Gantry's (said once).
    version_told: Option<String>,
}

impl LeaseSeen {
    /// A reading at `at`; what to tell when this engine took the Lease or lost it.
    pub fn saw(&mut self, seen: Reading, at: Instant) -> Option<Notice> {
        let changed = match (&self.record, &seen.record) {
            (Some(before), Some(now)) => !before.unchanged(now),
            (None, None) => !self.read,
            _ => true,
        };
        let silent = self.changed_at.map(|t| at.saturating_duration_since(t));
        let before = self.holder().filter(|h| !h.mine).map(|h| h.identity);
        let was_mine = self.mine;
        if changed || self.changed_at.is_none() {
            self.changed_at = Some(at);
        }
        self.read = true;
        self.record = seen.record;
        self.mine = seen.mine;
        let text = match (was_mine, self.mine) {
            (false, true) => match (before, silent) {
                (Some(from), Some(silent)) => {
                    format!("recoverer: taken over from {from}, silent {}", said(silent))
                }
                _ => "recoverer: this engine holds the Lease".to_string(),
            },
            (true, false) => match self.holder() {
                Some(h) => format!("recoverer: {} holds the Lease now", h.identity),
                None => "recoverer: this engine let the Lease go".to_string(),
            },
            _ => return None,
        };
        Some(Notice::new(
            Kind::Recoverer,
            Severity::Info,
            "recoverer",
            text,
        ))
    }

    /// Once per version: the cluster's watcher holds the Lease and runs another Gantry than
    /// this one (`ours`).
    pub fn version_news(&mut self, ours: &str) -> Option<Notice> {
        let holder = self.holder().filter(|h| !h.mine && h.stamp.in_cluster)?;
        let theirs = holder.stamp.version?;
        if theirs == ours || self.version_told.as_deref() == Some(theirs.as_str()) {
            return None;
        }
        self.version_told = Some(theirs.clone());
        let older = older_than(&theirs, ours);
        let text = if older {
            format!("the cluster's watcher is {theirs}; gantry watcher install upgrades it")
        } else {
            format!("the cluster's watcher is {theirs}, newer than this Gantry ({ours})")
        };
        Some(Notice::new(
            Kind::Recoverer,
            Severity::Warning,
            "watcher",
            text,
        ))
    }

    /// Whether the Lease has been read at all.
    pub fn read(&self) -> bool {
        self.read
    }

    /// Whether this engine holds it.
    pub fn mine(&self) -> bool {
        self.mine
    }

    /// Who holds it, as the record says (None: nobody, or not read yet).
    pub fn holder(&self) -> Option<Holder> {
        let record = self.record.as_ref()?;
        Some(Holder {
            identity: record.holder.clone()?,
            mine: self.mine,
            stamp: record.stamp.clone(),
        })
    }

    /// The record as last read.
    pub fn record(&self) -> Option<&Record> {
        self.record.as_ref()
    }

    /// How long the record has not changed, by this engine's clock at `now`.
    pub fn silent_for(&self, now: Instant) -> Option<Duration> {
        self.changed_at.map(|t| now.saturating_duration_since(t))
    }
}

/// Whether version `a` comes before `b` (`0.3.1` < `0.4.0`; numbers compared as numbers).
fn older_than(a: &str, b: &str) -> bool {
    let parts = |v: &str| -> Vec<u64> {
        v.split(['.', '-', '+'])
            .map_while(|p| p.parse().ok())
            .collect()
    };
    parts(a) < parts(b)
}

/// `15 s`, `2m 5s`.
fn said(d: Duration) -> String {
    let secs = d.as_secs();
    if secs < 60 {
        format!("{secs} s")
    } else {
        crate::k8s::age::human_duration(i64::try_from(secs).unwrap_or(i64::MAX))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn record(holder: &str, renewed: &str) -> Option<Record> {
        Some(Record {
            holder: Some(holder.into()),
            renew_time: renewed.parse().ok(),
            transitions: 0,
            version: Some("1".into()),
            stamp: Default::default(),
        })
    }

    fn theirs(record: Option<Record>) -> Reading {
        Reading {
            record,
            mine: false,
        }
    }

    #[test]
    fn silence_is_counted_from_the_last_change_seen_never_from_the_claimed_renewal() {
        let t0 = Instant::now();
        let mut lease = LeaseSeen::default();
        let stranger = record("stranger", "2099-01-01T00:00:00Z");
        assert!(lease.saw(theirs(stranger.clone()), t0).is_none());
        lease.saw(theirs(stranger.clone()), t0 + Duration::from_secs(10));
        assert_eq!(
            lease.silent_for(t0 + Duration::from_secs(15)),
            Some(Duration::from_secs(15))
        );
        // A renewal is a change: silence starts again.
        lease.saw(
            theirs(record("stranger", "2099-01-01T00:00:05Z")),
            t0 + Duration::from_secs(16),
        );
        assert_eq!(
            lease.silent_for(t0 + Duration::from_secs(20)),
            Some(Duration::from_secs(4))
        );
    }

    #[test]
    fn taking_over_and_losing_are_told_and_renewals_are_not() {
        let t0 = Instant::now();
        let mut lease = LeaseSeen::default();
        lease.saw(theirs(record("b@x pid 2", "2026-12-05T10:00:00Z")), t0);
        let taken = lease
            .saw(
                Reading {
                    record: record("me", "2026-12-05T10:00:15Z"),
                    mine: true,
                },
                t0 + Duration::from_secs(15),
            )
            .unwrap();
        assert_eq!(
            taken.text,
            "recoverer: taken over from b@x pid 2, silent 15 s"
        );
        let renewed = Reading {
            record: record("me", "2026-12-05T10:00:20Z"),
            mine: true,
        };
        assert!(lease.saw(renewed, t0 + Duration::from_secs(20)).is_none());
        let lost = lease
            .saw(
                theirs(record("c@y pid 3", "2026-12-05T10:00:40Z")),
                t0 + Duration::from_secs(40),
            )
            .unwrap();
        assert_eq!(lost.text, "recoverer: c@y pid 3 holds the Lease now");
    }

    #[test]
    fn a_watcher_of_another_version_is_said_once_per_version() {
        let mut seen = LeaseSeen::default();
        let mut watcher = record("gantry-watcher-job-7c9f-x2", "2026-01-01T00:00:00Z").unwrap();
        watcher.stamp = crate::k8s::lease::Stamp {
            version: Some("0.3.1".into()),
            in_cluster: true,
        };
        seen.saw(theirs(Some(watcher.clone())), Instant::now());
        let told = seen.version_news("0.4.0").unwrap();
        assert_eq!(
            told.text,
            "the cluster's watcher is 0.3.1; gantry watcher install upgrades it"
        );
        assert!(seen.version_news("0.4.0").is_none(), "said once");
        watcher.stamp.version = Some("0.10.0".into());
        seen.saw(theirs(Some(watcher.clone())), Instant::now());
        let newer = seen.version_news("0.4.0").unwrap();
        assert!(
            newer.text.contains("newer than this Gantry (0.4.0)"),
            "{}",
            newer.text
        );
        watcher.stamp.version = Some("0.4.0".into());
        seen.saw(theirs(Some(watcher)), Instant::now());
        assert!(
            seen.version_news("0.4.0").is_none(),
            "the same version is no news"
        );
    }
}

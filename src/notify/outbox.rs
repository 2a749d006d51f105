//! The outbox: every message not yet delivered, per target, and what each target has been
//! sent (for its rate limit, its repeated keys and `gantry notify status`), in one file that
//! outlives the process — a message sent while a webhook is down is delivered after a restart.
//! Two Gantry processes on one machine may share it (`gantry serve` and `gantry watch`), so
//! every read-modify-write holds an exclusive lock on `outbox.lock`; the file is replaced whole
//! (0600) so a crash leaves the old one. It holds no URL: a target is named by its kind, its
//! host and a hash of its URL ([`target_id`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::message::Message;
use crate::config::NotifyTarget;
use crate::vocabulary::Kind;
use crate::vocabulary::Severity;

const FILE: &str = "outbox.json";
const LOCK: &str = "outbox.lock";
pub(crate) const VERSION: u32 = 1;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Outbox {
    #[serde(default)]
    pub version: u32,
    /// One entry per message and target, oldest first.
    #[serde(default)]
    pub pending: Vec<Pending>,
    /// By [`target_id`].
    #[serde(default)]
    pub targets: BTreeMap<String, TargetRecord>,
}

/// A message waiting for one target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Pending {
    pub id: u64,
    pub target: String,
    pub event: Message,
    pub enqueued: Timestamp,
    /// Tries made so far.
    pub tries: u32,
    /// Not before then: after a failed try, or while a deliverer holds it.
    pub next_try: Timestamp,
    /// The deliverer sending it now (its lease ends at `next_try`).
    pub claimed_by: Option<u64>,
    pub last_error: Option<String>,
}

/// What a target has been sent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetRecord {
    /// The last try and how it went.
    pub last: Option<LastTry>,
    /// The last message accepted for it, per event kind (the rate limit's window starts there).
    #[serde(default)]
    pub sent: BTreeMap<Kind, Accepted>,
    /// Keys accepted in the last day: a key is sent once.
    #[serde(default)]
    pub keys: BTreeMap<String, Timestamp>,
    #[serde(default)]
    pub delivered: u64,
    /// Refused, or given up on.
    #[serde(default)]
    pub failed: u64,
    /// Over the rate limit, never sent.
    #[serde(default)]
    pub rate_limited: u64,
    /// Dropped when the outbox was full.
    #[serde(default)]
    pub dropped: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Accepted {
    pub at: Timestamp,
    pub severity: Severity,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LastTry {
    pub at: Timestamp,
    /// Delivered.
    pub ok: bool,
    /// `delivered (HTTP 200)`, `HTTP 500 (…); will try again`, `refused: HTTP 404 (no_service)`.
    pub result: String,
}

/// How the outbox names a target: its kind, its host and a hash of its whole URL, so that
/// targets on one host stay apart and the file never holds the URL's secret part.
pub fn target_id(target: &NotifyTarget) -> String {
    match target.address() {
        Some(url) => format!(
            "{}:{}:{:016x}",
            target.kind.name(),
            url.host(),
            fnv1a(url.expose().as_str().as_bytes())
        ),
        None => target.kind.name().to_string(),
    }
}

/// FNV-1a, 64 bits: a hash that is the same in every build, so ids survive an upgrade.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The outbox directory's files.
#[derive(Debug, Clone)]
pub(crate) struct Files {
    dir: PathBuf,
}

impl Files {
    pub fn new(dir: &Path) -> Files {
        Files {
            dir: dir.to_path_buf(),
        }
    }

    /// Where it is.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The outbox as it is now, read without the lock (the file is only ever replaced whole).
    pub fn read(&self) -> std::io::Result<Outbox> {
        match std::fs::read(self.dir.join(FILE)) {
            Ok(bytes) => Ok(self.parse(&bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Outbox::default()),
            Err(e) => Err(e),
        }
    }

    /// Reads, changes and writes the outbox under the lock; `change` returns what the caller
    /// wants back. The file is written only when the outbox changed.
    pub fn update<T>(&self, change: impl FnOnce(&mut Outbox) -> T) -> std::io::Result<T> {
        std::fs::create_dir_all(&self.dir)?;
        let lock = crate::private_file::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(self.dir.join(LOCK))?;
        lock.lock()?;
        let mut outbox = self.read()?;
        let before = outbox.clone();
        let answer = change(&mut outbox);
        if outbox != before {
            outbox.version = VERSION;
            let bytes = serde_json::to_vec(&outbox).map_err(std::io::Error::other)?;
            crate::private_file::write_private(&self.dir.join(FILE), &bytes)?;
        }
        // The lock ends with the file's last handle.
        drop(lock);
        Ok(answer)
    }

    /// A file that cannot be read as an outbox is kept aside (for a person to look at) and the
    /// outbox starts again empty: a damaged file must not stop every message after it.
    fn parse(&self, bytes: &[u8]) -> Outbox {
        match serde_json::from_slice::<Outbox>(bytes) {
            Ok(outbox) => outbox,
            Err(e) => {
                let aside = self
                    .dir
                    .join(format!("{FILE}.damaged-{}", Timestamp::now().as_second()));
                tracing::warn!(
                    "notify: the outbox {} cannot be read ({e}); kept as {} and started again",
                    self.dir.join(FILE).display(),
                    aside.display()
                );
                let _ = std::fs::rename(self.dir.join(FILE), aside);
                Outbox::default()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TargetKind;
    use crate::secret_url::SecretUrl;

    fn target(url: &str) -> NotifyTarget {
        NotifyTarget::new(TargetKind::Webhook, Some(SecretUrl::parse(url).unwrap()))
    }

    #[test]
    fn a_target_id_names_kind_and_host_and_keeps_urls_on_one_host_apart() {
        let a = target_id(&target("https://example.com/hooks/secret-a"));
        let b = target_id(&target("https://example.com/hooks/secret-b"));
        assert!(a.starts_with("webhook:example.com:"), "{a}");
        assert_ne!(a, b);
        assert!(!a.contains("secret") && !a.contains("hooks"), "{a}");
        assert_eq!(a, target_id(&target("https://example.com/hooks/secret-a")));
    }

    #[test]
    fn updates_are_written_private_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let files = Files::new(dir.path());
        assert_eq!(files.read().unwrap(), Outbox::default());
        files
            .update(|o| {
                o.targets.entry("t".into()).or_default().delivered = 3;
            })
            .unwrap();
        assert_eq!(files.read().unwrap().targets["t"].delivered, 3);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            for file in [FILE, LOCK] {
                let mode = std::fs::metadata(dir.path().join(file))
                    .unwrap()
                    .permissions()
                    .mode();
                assert_eq!(mode & 0o777, 0o600, "{file}");
            }
        }
    }

    #[test]
    fn a_damaged_outbox_is_kept_aside_and_the_outbox_starts_again() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(FILE), b"{not json").unwrap();
        let files = Files::new(dir.path());
        assert_eq!(files.read().unwrap(), Outbox::default());
        let aside: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains("damaged"))
            .collect();
        assert_eq!(aside.len(), 1, "{aside:?}");
    }

    #[test]
    fn two_writers_at_once_lose_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let writers: Vec<_> = (0..4)
            .map(|_| {
                let files = Files::new(dir.path());
                std::thread::spawn(move || {
                    for _ in 0..25 {
                        files
                            .update(|o| o.targets.entry("t".into()).or_default().delivered += 1)
                            .unwrap();
                    }
                })
            })
            .collect();
        for w in writers {
            w.join().unwrap();
        }
        assert_eq!(
            Files::new(dir.path()).read().unwrap().targets["t"].delivered,
            100
        );
    }
}

//! `[[notify]]`: where Gantry tells people what happened to a run nobody is watching — a Slack
//! channel, a webhook of one's own, an ntfy topic, or the terminals watching it — which
//! events each wants, from what severity, and how often at most. A URL is a secret: it is held
//! as a [`SecretUrl`] from the moment it is read, and a `url-file` is read when the config is.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::secret_url::SecretUrl;
use crate::vocabulary::{Kind, Severity};

/// The rate limit when a target names none.
pub const DEFAULT_RATE_LIMIT: &str = "10m";

/// How a target is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TargetKind {
    /// A Slack incoming webhook (Block Kit).
    Slack,
    /// A JSON POST of Gantry's own schema (version 1).
    Webhook,
    /// An ntfy topic, on ntfy.sh or a server of one's own.
    Ntfy,
    /// The terminals of the TUI and `gantry serve`'s viewers: a bell and a desktop notification.
    Terminal,
}

impl TargetKind {
    pub fn name(self) -> &'static str {
        match self {
            TargetKind::Slack => "slack",
            TargetKind::Webhook => "webhook",
            TargetKind::Ntfy => "ntfy",
            TargetKind::Terminal => "terminal",
        }
    }

    /// Whether it is sent over HTTP (and so needs a URL).
    pub fn is_http(self) -> bool {
        self != TargetKind::Terminal
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct NotifyTarget {
    pub kind: TargetKind,
    /// The address, written in the config (`gantry config` shows its host only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<SecretUrl>,
    /// A file holding the address (`~` is the home directory; a relative path is the config
    /// file's directory's), read when the config is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url_file: Option<PathBuf>,
    /// The events it is told (kinds that are sent, `Kind::SENT`); all of them unless given.
    #[serde(default = "all_events")]
    pub events: Vec<Kind>,
    /// The least severity it is told.
    #[serde(default = "least_severity")]
    pub min_severity: Severity,
    /// At most one message per event kind in this long (`"10m"`), unless a later one is worse.
    #[serde(default = "default_rate_limit")]
    pub rate_limit: String,
    /// What `url-file` holds, once read.
    #[serde(skip)]
    pub url_from_file: Option<SecretUrl>,
}

fn all_events() -> Vec<Kind> {
    Kind::SENT.to_vec()
}

fn least_severity() -> Severity {
    Severity::Info
}

fn default_rate_limit() -> String {
    DEFAULT_RATE_LIMIT.to_string()
}

impl NotifyTarget {
    /// A target of `kind` with every default: all events, from info, ten minutes apart.
    pub fn new(kind: TargetKind, url: Option<SecretUrl>) -> NotifyTarget {
        NotifyTarget {
            kind,
            url,
            url_file: None,
            events: all_events(),
            min_severity: least_severity(),
            rate_limit: default_rate_limit(),
            url_from_file: None,
        }
    }

    /// Where it sends: the `url`, or what `url-file` held.
    pub fn address(&self) -> Option<&SecretUrl> {
        self.url.as_ref().or(self.url_from_file.as_ref())
    }

    /// How it is shown: `slack https://hooks.slack.com/…`, `terminal`.
    pub fn label(&self) -> String {
        match self.address() {
            Some(url) => format!("{} {url}", self.kind.name()),
            None => self.kind.name().to_string(),
        }
    }

    /// Reads `url-file` (for a config read from a file in `base`); every other check is
    /// [`check`]'s.
    fn read_url_file(&mut self, n: usize, base: Option<&Path>) -> Result<(), String> {
        let Some(written) = self.url_file.clone() else {
            return Ok(());
        };
        let path = resolve_path(&written, base);
        let at = || {
            format!(
                "[[notify]] #{n} ({}): url-file = \"{}\"",
                self.kind.name(),
                written.display()
            )
        };
        let text = std::fs::read_to_string(&path).map_err(|e| {
            format!(
                "{}: cannot read {}: {e}; put the URL in that file (chmod 600), or write url = \"https://…\" instead",
                at(),
                path.display()
            )
        })?;
        let url = SecretUrl::parse(text.trim())
            .map_err(|e| format!("{}: {} holds {e}", at(), path.display()))?;
        self.url_from_file = Some(url);
        // `gantry config` shows where the URL came from, whichever directory it runs in.
        self.url_file = Some(path);
        Ok(())
    }

    /// The checks that need no file: one address for an HTTP target and none for a terminal,
    /// events listed, a rate limit that is a duration.
    fn check(&self, n: usize, files_read: bool) -> Result<(), String> {
        let kind = self.kind.name();
        let at = format!("[[notify]] #{n} ({kind})");
        match (self.kind.is_http(), &self.url, &self.url_file) {
            (true, None, None) => {
                return Err(format!(
                    "{at}: give the address: url = \"https://…\", or url-file = \"~/.config/gantry/{kind}-url\" (a file holding it, kept private)"
                ));
            }
            (true, Some(_), Some(_)) => {
                return Err(format!(
                    "{at}: url and url-file are both given: keep one (url-file keeps the secret out of the config)"
                ));
            }
            (false, Some(_), _) | (false, _, Some(_)) => {
                return Err(format!(
                    "{at}: a terminal target has no url or url-file (the TUI and `gantry serve`'s viewers ring their own terminals): remove it"
                ));
            }
            _ => {}
        }
        if self.events.is_empty() {
            return Err(format!(
                "{at}: events = []: list the events it is told ({}), or remove events for all of them",
                event_names()
            ));
        }
        if super::parse_duration(&self.rate_limit).is_none() {
            return Err(format!(
                "{at}: rate-limit = \"{}\": write a duration such as \"10m\", \"1h\" or \"0s\" (no limit)",
                self.rate_limit
            ));
        }
        if files_read && self.url_file.is_some() && self.url_from_file.is_none() {
            return Err(format!(
                "{at}: url-file was not read: load the config with Config::load or Config::parse"
            ));
        }
        Ok(())
    }
}

/// The event names, for a message.
pub fn event_names() -> String {
    crate::vocabulary::sent_names()
}

/// `~/x` under the home directory; a relative path under `base` when there is one; made
/// absolute (from the working directory), so that it names the same file wherever it is read.
fn resolve_path(path: &Path, base: Option<&Path>) -> PathBuf {
    let path = match (path.strip_prefix("~"), std::env::var_os("HOME")) {
        (Ok(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => match base {
            Some(base) if path.is_relative() => base.join(path),
            _ => path.to_path_buf(),
        },
    };
    std::path::absolute(&path).unwrap_or(path)
}

/// Reads every target's `url-file`, then checks them all.
pub(super) fn load(targets: &mut [NotifyTarget], base: Option<&Path>) -> Result<(), String> {
    for (i, target) in targets.iter_mut().enumerate() {
        // Shape first: no file is read for a target that is wrong anyway.
        target.check(i + 1, false)?;
        target.read_url_file(i + 1, base)?;
    }
    check(targets)
}

/// The checks of every target (the files were read by [`load`]).
pub(super) fn check(targets: &[NotifyTarget]) -> Result<(), String> {
    for (i, target) in targets.iter().enumerate() {
        target.check(i + 1, true)?;
    }
    Ok(())
}

#[cfg(test)]
#[path = "notify_tests.rs"]
mod tests;

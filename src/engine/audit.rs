//! The audit file: one JSON line for every change to the cloud that reached the engine — who
//! asked (the principal), what, when, and whether the engine ran it or refused it. Appended,
//! never rewritten; created 0600 in the state directory. In the cluster (the watcher, whose
//! disk goes with its pod) the same lines go to standard error: the pod's log, which the
//! cluster's logging keeps. Nothing in it is a secret: principals
//! are named by key fingerprint and comment, never by anything a client could send as a token.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::Command;
use super::gate::Principal;

/// Where the engine records changes; None: nowhere (a library user that did not ask).
#[derive(Debug, Clone, Default)]
pub struct Audit {
    to: Option<To>,
}

#[derive(Debug, Clone)]
enum To {
    File(PathBuf),
    Stderr,
}

#[derive(Serialize)]
struct Line<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    audit: Option<bool>,
    at: String,
    principal: Who<'a>,
    command: &'a str,
    what: &'a str,
    result: &'a str,
}

#[derive(Serialize)]
struct Who<'a> {
    kind: &'static str,
    name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    fingerprint: Option<&'a str>,
}

impl Audit {
    pub fn to_file(path: PathBuf) -> Audit {
        Audit {
            to: Some(To::File(path)),
        }
    }

    /// Each line to standard error, marked `"audit": true` among the process's other lines.
    pub fn to_stderr() -> Audit {
        Audit {
            to: Some(To::Stderr),
        }
    }

    pub fn path(&self) -> Option<&Path> {
        match &self.to {
            Some(To::File(path)) => Some(path),
            _ => None,
        }
    }

    /// Appends one line; a file that cannot be written is said in Gantry's log, and the command
    /// goes on (the audit records, it does not decide).
    pub fn record(&self, by: &Principal, command: &Command, result: &str) {
        self.record_change(by, command.kind(), &command.describe(), result);
    }

    /// The same for a change that is not an engine command (`gantry launch` on the command
    /// line): its kind (`launch`) and what it does, in words.
    pub fn record_change(&self, by: &Principal, kind: &str, what: &str, result: &str) {
        let Some(to) = &self.to else { return };
        let line = Line {
            audit: matches!(to, To::Stderr).then_some(true),
            at: jiff::Timestamp::now().to_string(),
            principal: Who {
                kind: by.audit_kind(),
                name: by.name(),
                fingerprint: by.fingerprint(),
            },
            command: kind,
            what,
            result,
        };
        let json = match crate::sanitize::to_json(&line) {
            Ok(json) => json,
            Err(e) => {
                tracing::warn!(error = %e, "cannot write an audit line");
                return;
            }
        };
        match to {
            To::Stderr => eprintln!("{json}"),
            To::File(path) => {
                if let Err(e) = append(path, &json) {
                    tracing::warn!(path = %path.display(), error = %e, "cannot write the audit file");
                }
            }
        }
    }
}

fn append(path: &Path, json: &str) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let mut file = crate::private_file::options()
        .append(true)
        .create(true)
        .open(path)?;
    let mut line = json.as_bytes().to_vec();
    line.push(b'\n');
    // One write of the whole line: appends from several engines do not interleave.
    file.write_all(&line)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn each_change_is_one_private_json_line_naming_who_asked() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/audit.jsonl");
        let audit = Audit::to_file(path.clone());
        let alice = Principal::Key {
            fingerprint: "SHA256:abc".into(),
            comment: "alice@ops".into(),
        };
        audit.record(&alice, &Command::LaunchJob, "started");
        audit.record(
            &Principal::Engine("idle"),
            &Command::DeleteCluster,
            "refused: read-only",
        );
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["principal"]["name"], "alice@ops");
        assert_eq!(lines[0]["principal"]["fingerprint"], "SHA256:abc");
        assert_eq!(lines[0]["command"], "launch");
        assert_eq!(lines[0]["result"], "started");
        assert_eq!(lines[1]["principal"]["kind"], "engine");
        assert!(lines[1]["at"].as_str().unwrap().ends_with('Z'));
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}

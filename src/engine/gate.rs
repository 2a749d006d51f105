//! The one gate. Every command that reaches the engine was let through here, by a gate that
//! knows who is asking (`Principal`) and whether they may change anything: an [`Approved`]
//! command can be made nowhere else, so a viewer that forgets to ask cannot reach the cloud at
//! all, and the engine checks again what an approval says (`Approved::may_run`) before it
//! carries a command out. Read-only is decided here, for the local TUI, every SSH viewer, the
//! command line and the engine's own actions alike.

use std::fmt;

use super::Command;

/// Who asked for a command: shown to every viewer with what it did, and written to the audit
/// file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Principal {
    /// The person at this machine: the local TUI or the command line (`user@host`).
    Local { user: String },
    /// An SSH key of `gantry serve`, by its fingerprint and the comment of its line in the key
    /// file (the user name an SSH client sends is its own choice, never taken as an identity).
    Key {
        fingerprint: String,
        comment: String,
    },
    /// The engine acting on its own, and why (`idle`: the idle cluster scaled to zero).
    Engine(&'static str),
}

impl Principal {
    /// The user running this process, on this host.
    pub fn local() -> Principal {
        let user = std::env::var("USER")
            .or_else(|_| std::env::var("LOGNAME"))
            .unwrap_or_else(|_| "someone".into());
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_string())
            .unwrap_or_default();
        let user = if host.is_empty() {
            user
        } else {
            format!("{user}@{host}")
        };
        Principal::Local {
            user: crate::sanitize::one_line(&user),
        }
    }

    /// How it is named to people: `alice@ops` (a key's comment, else its fingerprint),
    /// `root@trainer`, `gantry (idle)`.
    pub fn name(&self) -> String {
        match self {
            Principal::Local { user } => user.clone(),
            Principal::Key {
                fingerprint,
                comment,
            } if comment.is_empty() => fingerprint.clone(),
            Principal::Key { comment, .. } => comment.clone(),
            Principal::Engine(why) => format!("gantry ({why})"),
        }
    }

    /// What the audit file says of it.
    pub fn audit_kind(&self) -> &'static str {
        match self {
            Principal::Local { .. } => "local",
            Principal::Key { .. } => "ssh-key",
            Principal::Engine(_) => "engine",
        }
    }

    pub fn fingerprint(&self) -> Option<&str> {
        match self {
            Principal::Key { fingerprint, .. } => Some(fingerprint),
            _ => None,
        }
    }
}

impl fmt::Display for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// A principal and what it may do. `read_only` can only be tightened once the gate is made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gate {
    principal: Principal,
    read_only: bool,
}

/// A command the gate let through, with who asked. Only [`Gate::pass`] makes one.
#[derive(Debug, Clone, PartialEq)]
pub struct Approved {
    command: Command,
    by: Principal,
    read_only: bool,
}

/// A command the gate refused, and why, in the words every viewer shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Refused {
    pub command: Command,
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "read-only: refused to {}", self.command.describe())
    }
}

impl Gate {
    pub fn new(principal: Principal, read_only: bool) -> Gate {
        Gate {
            principal,
            read_only,
        }
    }

    /// The engine's own gate: what it starts by itself, refused too when it is read-only.
    pub fn engine(why: &'static str, read_only: bool) -> Gate {
        Gate::new(Principal::Engine(why), read_only)
    }

    pub fn read_only(&self) -> bool {
        self.read_only
    }

    pub fn principal(&self) -> &Principal {
        &self.principal
    }

    /// From now on this gate refuses every change (a key taken out of the operators' file).
    /// There is no way back: a gate is never loosened.
    pub fn restrict(&mut self) {
        self.read_only = true;
    }

    /// Whether the gate would refuse `command`.
    pub fn refuses(&self, command: &Command) -> bool {
        self.read_only && command.mutates()
    }

    /// Lets `command` through, or says why not.
    pub fn pass(&self, command: Command) -> Result<Approved, Refused> {
        if self.refuses(&command) {
            return Err(Refused { command });
        }
        Ok(Approved {
            command,
            by: self.principal.clone(),
            read_only: self.read_only,
        })
    }
}

impl Approved {
    pub fn command(&self) -> &Command {
        &self.command
    }

    pub fn by(&self) -> &Principal {
        &self.by
    }

    /// The engine's own check: a mutating command runs only when the gate that passed it could
    /// change things, and the engine itself may (`engine_read_only`: `--read-only`, the
    /// config's `read-only`).
    pub fn may_run(&self, engine_read_only: bool) -> bool {
        !self.command.mutates() || !(self.read_only || engine_read_only)
    }

    pub fn into_parts(self) -> (Command, Principal) {
        (self.command, self.by)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::gke::resize::Scale;

    /// Every command there is. The match below does not compile until a new variant is added
    /// here, with whether it changes the cloud.
    fn every_command() -> Vec<(Command, bool)> {
        let all = vec![
            Command::CreateCluster,
            Command::DeleteCluster,
            Command::LaunchJob,
            Command::RetryJob,
            Command::DeleteAttempt("ml-training-job-2".into()),
            Command::DeletePod("ml-training-job-2-abcde".into()),
            Command::ScaleNodePools(Scale::ToZero),
            Command::ScaleNodePools(Scale::ToConfig),
            Command::ApplyPlan { generation: 3 },
            Command::RecordEnds(Vec::new()),
            Command::RecordCost(crate::meter::ledger::Entry {
                job: "ml-training-job-3".into(),
                cost: crate::vocabulary::cost::Recorded {
                    version: 1,
                    usd: Some(1.25),
                    as_of: jiff::Timestamp::UNIX_EPOCH,
                    since: jiff::Timestamp::UNIX_EPOCH,
                    partial: false,
                    nodes: None,
                },
            }),
            Command::TakeLease {
                from: Some("alice@a pid 1".into()),
                silent: Some(std::time::Duration::from_secs(15)),
                judged: None,
            },
            Command::GiveWayLease,
            Command::Recover {
                attempt: "ml-training-job-3".into(),
                why: "rank 1 of ml-training-job-3 preempted".into(),
                ended_by: crate::vocabulary::attempt::EndedBy::Preempted,
                next: 4,
                most: 11,
            },
            Command::FallBack {
                attempt: "ml-training-job-3".into(),
                pool: "default-pool".into(),
                why: "default-pool has had no spot capacity for 10m".into(),
                plan: "+ pool default-pool-on-demand".into(),
                next: 4,
                most: 11,
            },
            Command::EndRun {
                attempt: "ml-training-job-3".into(),
                why: "too many".into(),
                ended_by: crate::vocabulary::attempt::EndedBy::MaxRecoveries,
            },
            Command::FetchLogs {
                attempt: "ml-training-job-1".into(),
                pod: None,
                previous: false,
                generation: 1,
            },
        ];
        all.into_iter()
            .map(|c| {
                let changes = match &c {
                    Command::CreateCluster
                    | Command::DeleteCluster
                    | Command::LaunchJob
                    | Command::RetryJob
                    | Command::DeleteAttempt(_)
                    | Command::DeletePod(_)
                    | Command::ScaleNodePools(_)
                    | Command::ApplyPlan { .. }
                    | Command::RecordEnds(_)
                    | Command::RecordCost(_)
                    | Command::TakeLease { .. }
                    | Command::GiveWayLease
                    | Command::Recover { .. }
                    | Command::FallBack { .. }
                    | Command::EndRun { .. } => true,
                    Command::FetchLogs { .. } => false,
                };
                (c, changes)
            })
            .collect()
    }

    #[test]
    fn every_command_is_classed_and_a_read_only_gate_refuses_every_change() {
        for principal in [
            Principal::Local { user: "a@b".into() },
            Principal::Key {
                fingerprint: "SHA256:x".into(),
                comment: "alice@ops".into(),
            },
            Principal::Engine("idle"),
        ] {
            let gate = Gate::new(principal.clone(), true);
            for (command, changes) in every_command() {
                assert_eq!(command.mutates(), changes, "{command:?}");
                match gate.pass(command.clone()) {
                    Ok(approved) => {
                        assert!(!changes, "{command:?} passed a read-only gate");
                        assert!(approved.may_run(true));
                    }
                    Err(refused) => {
                        assert!(changes);
                        assert!(refused.to_string().starts_with("read-only: refused to "));
                    }
                }
            }
        }
    }

    #[test]
    fn the_engine_refuses_a_change_when_it_is_read_only_whoever_passed_it() {
        let gate = Gate::new(Principal::local(), false);
        for (command, changes) in every_command() {
            let approved = gate.pass(command).unwrap();
            assert!(approved.may_run(false));
            assert_eq!(approved.may_run(true), !changes);
        }
    }

    #[test]
    fn a_gate_is_tightened_and_never_loosened() {
        let mut gate = Gate::new(Principal::Engine("idle"), false);
        assert!(gate.pass(Command::LaunchJob).is_ok());
        gate.restrict();
        assert!(gate.read_only());
        assert!(gate.pass(Command::LaunchJob).is_err());
    }

    #[test]
    fn principals_are_named_by_key_comment_else_fingerprint() {
        let key = |comment: &str| Principal::Key {
            fingerprint: "SHA256:abc".into(),
            comment: comment.into(),
        };
        assert_eq!(key("alice@ops").to_string(), "alice@ops");
        assert_eq!(key("").to_string(), "SHA256:abc");
        assert_eq!(Principal::Engine("idle").to_string(), "gantry (idle)");
    }
}

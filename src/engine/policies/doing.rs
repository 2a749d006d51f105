//! What the engine itself is doing, handed to the policies beside the world: the world says
//! what the cluster is, this says what is under way because of this engine — a person's retry
//! on its way, a cluster operation being followed, the attempts this engine has ended or
//! replaced (never twice, whichever policy did it), a recovery not finished, a Lease being
//! taken. The owner keeps it as commands go out and their ends come back.

use std::collections::BTreeSet;

use crate::engine::Command;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Doing {
    /// A person's retry is on its way: a recovery would make a second next attempt.
    pub retry_asked: bool,
    /// A create, delete or resize of the cluster is being carried out.
    pub operating: bool,
    /// Attempts this engine ended or replaced (a recovery, a fallback, a run ended).
    pub ended: BTreeSet<String>,
    /// A recovery or a fallback this engine started that has not ended (its command's words).
    pub recovering: Option<String>,
    /// This engine asked to take the recoverer's Lease and has not heard how that went.
    pub taking_lease: bool,
}

impl Doing {
    /// `command` goes out: what it ends, and what it has under way.
    pub fn decided(&mut self, command: &Command) {
        match command {
            Command::Recover { attempt, .. } | Command::FallBack { attempt, .. } => {
                self.ended.insert(attempt.clone());
                self.recovering = Some(command.describe());
            }
            Command::EndRun { attempt, .. } => {
                self.ended.insert(attempt.clone());
            }
            Command::TakeLease { .. } | Command::GiveWayLease => self.taking_lease = true,
            _ => {}
        }
    }

    /// A one-shot command ended (its `Done`, by its words).
    pub fn done(&mut self, what: &str) {
        if self.recovering.as_deref() == Some(what) {
            self.recovering = None;
        }
    }

    /// Whether this engine has ended or replaced `attempt`, or is busy replacing one.
    pub fn busy_with(&self, attempt: &str) -> bool {
        self.ended.contains(attempt) || self.recovering.is_some() || self.retry_asked
    }
}

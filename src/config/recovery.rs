//! `[job.recovery]`: what happens when a pod of the training Job ends badly, decided before the
//! Job is sent so that the cloud itself acts on it with no Gantry process running. A preempted
//! pod never counts as a failure (the Job's `podFailurePolicy` ignores `DisruptionTarget`);
//! exit codes listed here mean a bug in the training code, which ends the attempt at its first
//! pod instead of after `backoff-limit` more tries.

use serde::{Deserialize, Serialize};

/// The most exit codes a `podFailurePolicy` rule may list (the API server's limit).
pub const MAX_FAIL_EXIT_CODES: usize = 255;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct Recovery {
    /// Exit codes of the training container that end the attempt at once (`FailJob`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fail_exit_codes: Vec<i32>,
}

impl Recovery {
    pub fn is_default(&self) -> bool {
        *self == Recovery::default()
    }

    /// The exit codes as the API server wants them: in increasing order, each once.
    pub fn fail_exit_codes_sorted(&self) -> Vec<i32> {
        let mut codes = self.fail_exit_codes.clone();
        codes.sort_unstable();
        codes.dedup();
        codes
    }

    pub fn validate(&self) -> Result<(), String> {
        if let Some(code) = self
            .fail_exit_codes
            .iter()
            .find(|c| !(1..=255).contains(*c))
        {
            return Err(format!(
                "job.recovery.fail-exit-codes: {code}: an exit code that fails the attempt is from 1 to 255 (0 is success)"
            ));
        }
        if self.fail_exit_codes.len() > MAX_FAIL_EXIT_CODES {
            return Err(format!(
                "job.recovery.fail-exit-codes: {} codes: at most {MAX_FAIL_EXIT_CODES}",
                self.fail_exit_codes.len()
            ));
        }
        Ok(())
    }
}

//! `[job.recovery]`: what happens when a pod of the training Job ends badly, decided before the
//! Job is sent so that the cloud itself acts on it with no Gantry process running. A preempted
//! pod never counts as a failure (the Job's `podFailurePolicy` ignores `DisruptionTarget`);
//! exit codes listed here mean a bug in the training code, which ends the attempt at its first
//! pod instead of after `backoff-limit` more tries. What needs an engine — restarting a whole
//! gang when one rank is preempted, and bounding how often a run is restarted — is bounded by
//! `max-recoveries`.

use serde::{Deserialize, Serialize};

/// The most exit codes a `podFailurePolicy` rule may list (the API server's limit).
pub const MAX_FAIL_EXIT_CODES: usize = 255;

/// Recoveries a run may have when the config says nothing.
pub const DEFAULT_MAX_RECOVERIES: u32 = 10;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct Recovery {
    /// Exit codes of the training container that end the attempt at once (`FailJob`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fail_exit_codes: Vec<i32>,
    /// How many times a run may be recovered — a gang restarted after a rank was preempted, or
    /// a pod the cloud replaced after a preemption — before it ends as failed.
    pub max_recoveries: u32,
}

impl Default for Recovery {
    fn default() -> Self {
        Self {
            fail_exit_codes: Vec::new(),
            max_recoveries: DEFAULT_MAX_RECOVERIES,
        }
    }
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

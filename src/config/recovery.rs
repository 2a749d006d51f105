//! `[job.recovery]`: what happens when a pod of the training Job ends badly, decided before the
//! Job is sent so that the cloud itself acts on it with no Gantry process running. A preempted
//! pod never counts as a failure (the Job's `podFailurePolicy` ignores `DisruptionTarget`);
//! exit codes listed here mean a bug in the training code, which ends the attempt at its first
//! pod instead of after `backoff-limit` more tries. What needs an engine — restarting a whole
//! gang when one rank is preempted, and bounding how often a run is restarted — is bounded by
//! `max-recoveries`. A run on spot nodes that spot capacity deserts (`spot-fallback`) goes on
//! on an on-demand pool of the same machines: opt-in, since on-demand nodes cost more.

use serde::{Deserialize, Serialize};

/// The most exit codes a `podFailurePolicy` rule may list (the API server's limit).
pub const MAX_FAIL_EXIT_CODES: usize = 255;

/// Recoveries a run may have when the config says nothing.
pub const DEFAULT_MAX_RECOVERIES: u32 = 10;

/// How long a run's pods may wait for spot capacity before it falls back, unless told.
pub const DEFAULT_SPOT_WAIT: &str = "10m";

/// Preemptions in an hour past which a run falls back, unless told.
pub const DEFAULT_SPOT_MAX_PREEMPTIONS: u32 = 5;

/// Where a run goes when spot capacity deserts its pool.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SpotFallback {
    /// It waits for spot capacity, however long.
    #[default]
    Off,
    /// An on-demand pool of the same machines, made (or scaled up) by the recoverer.
    OnDemand,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct Recovery {
    /// Exit codes of the training container that end the attempt at once (`FailJob`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fail_exit_codes: Vec<i32>,
    /// How many times a run may be recovered — a gang restarted after a rank was preempted, or
    /// a pod the cloud replaced after a preemption — before it ends as failed.
    pub max_recoveries: u32,
    /// `"on-demand"`: a run whose spot pool has no capacity goes on on an on-demand pool.
    pub spot_fallback: SpotFallback,
    /// How long the pods may wait for spot capacity (`"10m"`, `"90s"`) before the fallback.
    pub spot_wait: String,
    /// Preemptions of the pool in an hour past which the run falls back.
    pub spot_max_preemptions: u32,
}

impl Default for Recovery {
    fn default() -> Self {
        Self {
            fail_exit_codes: Vec::new(),
            max_recoveries: DEFAULT_MAX_RECOVERIES,
            spot_fallback: SpotFallback::Off,
            spot_wait: DEFAULT_SPOT_WAIT.to_string(),
            spot_max_preemptions: DEFAULT_SPOT_MAX_PREEMPTIONS,
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

    /// How long the pods may wait for spot capacity (the default when it does not parse, which
    /// `validate` refuses).
    pub fn spot_wait(&self) -> std::time::Duration {
        super::parse_duration(&self.spot_wait).unwrap_or(std::time::Duration::from_secs(10 * 60))
    }

    pub fn validate(&self) -> Result<(), String> {
        if super::parse_duration(&self.spot_wait).is_none() {
            return Err(format!(
                "job.recovery.spot-wait = \"{}\": write a duration such as \"10m\", \"1h 30m\" or \"90s\"",
                self.spot_wait
            ));
        }
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

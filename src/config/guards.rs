//! `[guards]`: what Gantry watches for on behalf of people who are not looking, and what it may
//! do about it. When to tell is on by default (a run with no progress for `stall-after`, a pod
//! not running after `waiting-after`); every action is off by default, since each one changes
//! the cloud: a budget that ends the run or scales the pools to zero, a limit on the run's time,
//! a stalled attempt ended so the recoverer starts the next. Actions go through the engine's one
//! gate as `guard`, are audited, and read-only engines never take them.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// No new log line (or no new step while lines flow) this long, unless told: `stalled`.
pub const DEFAULT_STALL_AFTER: &str = "20m";
/// A pod not running this long, unless told: `waiting`.
pub const DEFAULT_WAITING_AFTER: &str = "15m";
/// A GPU busy less than this many percent, unless told: idle (`gpu-idle`).
pub const DEFAULT_GPU_IDLE_BELOW: f64 = 5.0;
/// For this long while its pod runs, unless told.
pub const DEFAULT_GPU_IDLE_AFTER: &str = "10m";
/// Shares of the budget told, once each per run.
pub const BUDGET_THRESHOLDS: [u32; 2] = [80, 100];

/// What reaching the budget does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BudgetAction {
    /// Tell, and nothing more.
    #[default]
    Notify,
    /// End the attempt, and start no recovery: the run ends.
    StopRun,
    /// As `stop-run`, and size the node pools to zero as the idle mode does.
    ScaleToZero,
}

impl BudgetAction {
    pub fn name(self) -> &'static str {
        match self {
            BudgetAction::Notify => "notify",
            BudgetAction::StopRun => "stop-run",
            BudgetAction::ScaleToZero => "scale-to-zero",
        }
    }
}

/// What a stalled attempt gets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StallAction {
    #[default]
    Notify,
    /// End the attempt: the recoverer starts the next (a gang hung in a collective).
    EndAttempt,
}

impl StallAction {
    pub fn name(self) -> &'static str {
        match self {
            StallAction::Notify => "notify",
            StallAction::EndAttempt => "end-attempt",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct Guards {
    /// No new log line while a pod runs, or no new step while lines flow, this long.
    pub stall_after: String,
    /// A pod not running this long.
    pub waiting_after: String,
    /// USD the run may cost; unset: no budget.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<f64>,
    pub budget_action: BudgetAction,
    /// How long the run as a whole may take (`"24h"`); unset: no limit. Each attempt's own
    /// limit is `[job] active-deadline-seconds`, which the cloud enforces.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_run_time: Option<String>,
    pub stall_action: StallAction,
    /// A GPU of a running training pod busy less than this many percent (0 to 100; 0 turns the
    /// watch off)…
    pub gpu_idle_below: f64,
    /// …for this long is told (`gpu-idle`).
    pub gpu_idle_after: String,
    /// What an idle GPU's attempt gets, as a stalled one: told, or ended for the next.
    pub gpu_idle_action: StallAction,
}

impl Default for Guards {
    fn default() -> Self {
        Self {
            stall_after: DEFAULT_STALL_AFTER.to_string(),
            waiting_after: DEFAULT_WAITING_AFTER.to_string(),
            budget: None,
            budget_action: BudgetAction::Notify,
            max_run_time: None,
            stall_action: StallAction::Notify,
            gpu_idle_below: DEFAULT_GPU_IDLE_BELOW,
            gpu_idle_after: DEFAULT_GPU_IDLE_AFTER.to_string(),
            gpu_idle_action: StallAction::Notify,
        }
    }
}

impl Guards {
    pub fn is_default(&self) -> bool {
        *self == Guards::default()
    }

    pub fn stall_after(&self) -> Duration {
        super::parse_duration(&self.stall_after).unwrap_or(Duration::from_secs(20 * 60))
    }

    pub fn waiting_after(&self) -> Duration {
        super::parse_duration(&self.waiting_after).unwrap_or(Duration::from_secs(15 * 60))
    }

    pub fn gpu_idle_after(&self) -> Duration {
        super::parse_duration(&self.gpu_idle_after).unwrap_or(Duration::from_secs(10 * 60))
    }

    /// Whether idle GPUs are watched for at all (`gpu-idle-below = 0` turns it off): the GPUs
    /// are then read even with no screen showing them, while a pod asks for some.
    pub fn watches_gpus(&self) -> bool {
        self.gpu_idle_below > 0.0
    }

    pub fn max_run_time(&self) -> Option<Duration> {
        self.max_run_time.as_deref().and_then(super::parse_duration)
    }

    /// What is armed, in words for a confirmation and the status line ("budget $50 → stop-run,
    /// max run time 24h, stalled → end-attempt"); None when no guard acts.
    pub fn armed(&self) -> Option<String> {
        let mut armed = Vec::new();
        if let Some(budget) = self.budget {
            armed.push(format!(
                "budget {} → {}",
                crate::pricing::format::usd(budget),
                self.budget_action.name()
            ));
        }
        if let Some(limit) = &self.max_run_time {
            armed.push(format!("max run time {limit}"));
        }
        if self.stall_action != StallAction::Notify {
            armed.push(format!("stalled → {}", self.stall_action.name()));
        }
        if self.gpu_idle_action != StallAction::Notify && self.watches_gpus() {
            armed.push(format!("idle GPU → {}", self.gpu_idle_action.name()));
        }
        (!armed.is_empty()).then(|| armed.join(", "))
    }

    pub fn validate(&self) -> Result<(), String> {
        let duration = |key: &str, text: &str| match super::parse_duration(text) {
            Some(d) if !d.is_zero() => Ok(()),
            _ => Err(format!(
                "guards.{key} = \"{text}\": write a duration such as \"20m\", \"1h 30m\" or \"90s\""
            )),
        };
        duration("stall-after", &self.stall_after)?;
        duration("waiting-after", &self.waiting_after)?;
        duration("gpu-idle-after", &self.gpu_idle_after)?;
        if !(0.0..=100.0).contains(&self.gpu_idle_below) {
            return Err(format!(
                "guards.gpu-idle-below = {}: write a percent from 0 to 100 (5.0; 0 turns the idle-GPU watch off)",
                self.gpu_idle_below
            ));
        }
        if let Some(limit) = &self.max_run_time {
            duration("max-run-time", limit)?;
        }
        if let Some(budget) = self.budget
            && !(budget.is_finite() && budget > 0.0)
        {
            return Err(format!(
                "guards.budget = {budget}: write the run's budget in USD, more than 0 (e.g. 50.0)"
            ));
        }
        if self.budget.is_none() && self.budget_action != BudgetAction::Notify {
            return Err(format!(
                "guards.budget-action = \"{}\" needs guards.budget (USD for the run)",
                self.budget_action.name()
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Guards, String> {
        let guards: Guards = toml::from_str(text).map_err(|e| e.to_string())?;
        guards.validate().map(|()| guards)
    }

    #[test]
    fn nothing_acts_by_default_and_telling_has_its_thresholds() {
        let guards = Guards::default();
        assert_eq!(guards.stall_after(), Duration::from_secs(20 * 60));
        assert_eq!(guards.waiting_after(), Duration::from_secs(15 * 60));
        assert_eq!(guards.armed(), None);
        assert!(guards.validate().is_ok());
        assert_eq!(guards.gpu_idle_below, 5.0);
        assert_eq!(guards.gpu_idle_after(), Duration::from_secs(10 * 60));
        assert!(guards.watches_gpus());
    }

    #[test]
    fn armed_guards_are_said_in_a_few_words() {
        let guards = parse(
            "budget = 50.0\nbudget-action = \"stop-run\"\nmax-run-time = \"24h\"\nstall-action = \"end-attempt\"\n",
        )
        .unwrap();
        assert_eq!(
            guards.armed().unwrap(),
            "budget $50.00 → stop-run, max run time 24h, stalled → end-attempt"
        );
        assert_eq!(guards.max_run_time(), Some(Duration::from_secs(24 * 3600)));
    }

    #[test]
    fn bad_values_say_what_to_write() {
        let err = parse("stall-after = \"soon\"\n").unwrap_err();
        assert!(
            err.contains("guards.stall-after") && err.contains("20m"),
            "{err}"
        );
        let err = parse("budget = -3.0\n").unwrap_err();
        assert!(err.contains("more than 0"), "{err}");
        let err = parse("budget-action = \"scale-to-zero\"\n").unwrap_err();
        assert!(err.contains("needs guards.budget"), "{err}");
        let err = parse("gpu-idle-below = 120.0\n").unwrap_err();
        assert!(err.contains("0 to 100"), "{err}");
        let err = parse("gpu-idle-after = \"later\"\n").unwrap_err();
        assert!(err.contains("guards.gpu-idle-after"), "{err}");
        let err = parse("budget-action = \"panic\"\n").unwrap_err();
        assert!(err.contains("notify") && err.contains("stop-run"), "{err}");
    }
}

//! Guards that act for people who are not looking (`[guards]`): a run that reached its budget is
//! told at 80 % and 100 %, and at 100 % ended (`stop-run`) or ended with the pools sized to zero
//! once its pods are gone (`scale-to-zero`); a run longer than `max-run-time` is ended; a
//! stalled attempt is ended so that the next one starts (`stall-action = "end-attempt"`, a
//! recovery bounded by `max-recoveries`). Decided by the recoverer only — the Lease holder, so one engine acts —
//! and handed to the engine, which passes each command through the one gate as `guard`.

use std::collections::HashSet;

use jiff::Timestamp;

use super::Model;
use crate::config::{BUDGET_THRESHOLDS, BudgetAction, Guards, StallAction};
use crate::engine::Command;
use crate::engine::notice::Notice;
use crate::k8s::run::Run;
use crate::pricing::format::usd;
use crate::vocabulary::{Kind, Severity};

/// What the guards told and did, so that each is once per run (or attempt).
#[derive(Debug, Default)]
pub struct Guarded {
    /// (run id, share of the budget) told.
    budget_told: HashSet<(String, u32)>,
    /// Attempts a guard ended or restarted.
    acted_on: HashSet<String>,
    /// A budget that cannot be judged (a cluster Gantry does not price) was said to be so.
    unpriced_told: bool,
    /// The attempt whose run a spent budget ended, its pools to go to zero once its pods are
    /// gone: a pod the Job controller stops is deleted by Gantry's act, not evicted by a drain.
    zero_after: Option<(String, Timestamp)>,
}

/// How long the pools wait for the ended run's pods before they go to zero all the same.
const ZERO_AFTER_AT_MOST_SECONDS: i64 = 60;

/// What the guards call for now.
#[derive(Debug, Default, PartialEq)]
pub struct GuardCalls {
    pub told: Vec<Notice>,
    pub commands: Vec<Command>,
}

impl Model {
    /// What the armed guards do at `now`, given the run's cost so far (None: not known).
    pub fn guard(
        &mut self,
        guards: &Guards,
        max_recoveries: u32,
        run_cost: Option<f64>,
        now: Timestamp,
    ) -> GuardCalls {
        let mut calls = GuardCalls::default();
        if !self.recovery.mine() {
            return calls;
        }
        if let Some((ended, at)) = self.guarded.zero_after.clone()
            && (self.jobs.pods_of(&ended).iter().all(|p| p.terminated)
                || (now - at).get_seconds() >= ZERO_AFTER_AT_MOST_SECONDS)
        {
            self.guarded.zero_after = None;
            calls
                .commands
                .push(Command::ScaleNodePools(crate::gke::resize::Scale::ToZero));
        }
        let Some(attempt) = self.jobs.active_attempt().cloned() else {
            return calls;
        };
        let run = attempt.run.clone().unwrap_or_else(Run::unrecorded);
        // A kubeconfig context's nodes are not priced: its budget is said to be unavailable.
        if guards.budget.is_some() && !self.cluster.managed() && !self.guarded.unpriced_told {
            self.guarded.unpriced_told = true;
            calls.told.push(Notice::new(
                Kind::Guard,
                Severity::Warning,
                run_name(&run, &attempt.name),
                format!(
                    "guards.budget is unavailable here: {}",
                    crate::meter::NOT_PRICED_ON_A_CONTEXT
                ),
            ));
        }
        if let (Some(budget), Some(cost)) = (guards.budget, run_cost) {
            for share in BUDGET_THRESHOLDS {
                if cost < budget * f64::from(share) / 100.0
                    || !self.guarded.budget_told.insert((run.id.clone(), share))
                {
                    continue;
                }
                let severity = if share >= 100 {
                    Severity::Critical
                } else {
                    Severity::Warning
                };
                let then = match (share >= 100, guards.budget_action) {
                    (true, BudgetAction::StopRun) => ": ending the run",
                    (true, BudgetAction::ScaleToZero) => {
                        ": ending the run and scaling the node pools to zero"
                    }
                    _ => "",
                };
                let text = format!(
                    "run {} has cost {} of its {} budget ({share} %){then}",
                    run_name(&run, &attempt.name),
                    usd(cost),
                    usd(budget)
                );
                calls.told.push(
                    Notice::new(Kind::Budget, severity, run_name(&run, &attempt.name), text)
                        .as_news(format!("budget/{share}"))
                        .with_detail("budget", budget)
                        .with_detail("share", share)
                        .with_detail("action", guards.budget_action.name()),
                );
                if share >= 100 && guards.budget_action != BudgetAction::Notify {
                    let why = format!("its budget is spent ({} of {})", usd(cost), usd(budget));
                    calls.commands.extend(self.end_run(&attempt.name, why));
                    if guards.budget_action == BudgetAction::ScaleToZero {
                        self.guarded.zero_after = Some((attempt.name.clone(), now));
                    }
                }
            }
        }
        if let (Some(limit), Some(started)) = (guards.max_run_time(), run.started()) {
            let ran = now.duration_since(started);
            if ran.as_secs() >= i64::try_from(limit.as_secs()).unwrap_or(i64::MAX) {
                let limit_text = guards.max_run_time.clone().unwrap_or_default();
                let why = format!(
                    "it has run for {} (max-run-time = {limit_text})",
                    crate::k8s::age::human_duration(ran.as_secs())
                );
                calls.commands.extend(self.end_run(&attempt.name, why));
            }
        }
        let stalled = self
            .unattended
            .stalled
            .as_ref()
            .filter(|s| s.attempt == attempt.name)
            .cloned();
        if let Some(stall) = stalled
            && guards.stall_action == StallAction::EndAttempt
            && self.recovery.recovering.is_none()
            && self.guarded.acted_on.insert(attempt.name.clone())
        {
            let why = format!("{} stalled: {}", attempt.name, stall.what);
            let command = super::recovery::restart_or_end(&attempt.name, &run, why, max_recoveries);
            self.acting(&attempt.name, &command);
            calls.commands.push(command);
        }
        for notice in &calls.told {
            self.record(notice.clone());
        }
        calls
    }

    /// Ends the run at `attempt`, once.
    fn end_run(&mut self, attempt: &str, why: String) -> Option<Command> {
        if !self.guarded.acted_on.insert(attempt.to_string()) {
            return None;
        }
        let command = Command::EndRun {
            attempt: attempt.to_string(),
            why,
        };
        self.acting(attempt, &command);
        Some(command)
    }
}

/// The run's id, or its attempt's name for one made before runs were recorded.
fn run_name<'a>(run: &'a Run, attempt: &'a str) -> &'a str {
    if run.id.is_empty() { attempt } else { &run.id }
}

#[cfg(test)]
#[path = "guards_tests.rs"]
mod tests;

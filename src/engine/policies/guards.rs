//! Guards that act for people who are not looking (`[guards]`): a run that reached its budget is
//! told at 80 % and 100 %, and at 100 % ended (`stop-run`) or ended with the pools sized to zero
//! once its pods are gone (`scale-to-zero`); a run longer than `max-run-time` is ended; a
//! stalled attempt is ended so that the next one starts (`stall-action = "end-attempt"`, a
//! recovery bounded by `max-recoveries`). Decided by the recoverer only — the Lease holder, so
//! one engine acts — and passed through the one gate as `guard`.

use std::collections::HashSet;

use jiff::Timestamp;

use super::{Decisions, Doing, Settings};
use crate::config::{BUDGET_THRESHOLDS, BudgetAction, StallAction};
use crate::engine::Command;
use crate::engine::clock::Now;
use crate::engine::notice::Notice;
use crate::engine::world::World;
use crate::k8s::run::Run;
use crate::k8s::status::AttemptSummary;
use crate::pricing::format::usd;
use crate::vocabulary::attempt::EndedBy;
use crate::vocabulary::{Kind, Severity};

/// How long the pools wait for the ended run's pods before they go to zero all the same.
const ZERO_AFTER_AT_MOST_SECONDS: i64 = 60;

/// What the guards told and did, so that each is once per run (or attempt).
#[derive(Debug, Default)]
pub struct Guards {
    /// (run id, share of the budget) told.
    budget_told: HashSet<(String, u32)>,
    /// A budget that cannot be judged (a cluster Gantry does not price) was said to be so.
    unpriced_told: bool,
    /// The attempt whose run a spent budget ended, its pools to go to zero once its pods are
    /// gone: a pod the Job controller stops is deleted by Gantry's act, not evicted by a drain.
    zero_after: Option<(String, Timestamp)>,
}

impl super::Policy for Guards {
    fn principal(&self) -> &'static str {
        "guard"
    }

    /// What the armed guards do at `now`.
    fn decide(&mut self, world: &World, doing: &Doing, settings: &Settings, now: Now) -> Decisions {
        let mut decided = Decisions::default();
        if !world.is_recoverer() {
            return decided;
        }
        decided.extend(self.scale_after_the_run(world, now.wall));
        let Some(attempt) = world.jobs.active_attempt() else {
            return decided;
        };
        let run = attempt.run.clone().unwrap_or_else(Run::unrecorded);
        let guards = &settings.guards;
        // A kubeconfig context's nodes are not priced: its budget is said to be unavailable.
        if guards.budget.is_some() && !world.cluster.managed() && !self.unpriced_told {
            self.unpriced_told = true;
            decided.notices.push(Notice::new(
                Kind::Guard,
                Severity::Warning,
                run_name(&run, &attempt.name),
                format!(
                    "guards.budget is unavailable here: {}",
                    crate::meter::NOT_PRICED_ON_A_CONTEXT
                ),
            ));
        }
        let mut judging = Judging {
            world,
            attempt,
            run: &run,
            settings,
            now: now.wall,
            doing,
            decided,
        };
        self.budget(&mut judging);
        run_time(&mut judging);
        stall(&mut judging);
        judging.decided
    }
}

impl Guards {
    /// A spent budget's pools go to zero once the ended run's pods are gone (or a minute after).
    fn scale_after_the_run(&mut self, world: &World, now: Timestamp) -> Decisions {
        let Some((ended, at)) = &self.zero_after else {
            return Decisions::default();
        };
        let gone = world.jobs.pods_in(ended).all(|p| p.terminated);
        if !gone && (now - *at).get_seconds() < ZERO_AFTER_AT_MOST_SECONDS {
            return Decisions::default();
        }
        let ended = ended.clone();
        self.zero_after = None;
        // GKE refuses this engine (a watcher without its grant): said, not tried in silence.
        if let Some(gke) = world
            .troubles
            .message_of(&crate::engine::world::trouble::TroubleSource::Gke)
        {
            let mut decided = Decisions::default();
            decided.notices.push(
                Notice::new(
                    Kind::Budget,
                    Severity::Critical,
                    ended.as_str(),
                    format!(
                        "the budget is spent and the node pools cannot be scaled to zero from here ({gke}): scale them with `gantry down` or gcloud, or grant the watcher GKE (`gantry watcher install` prints how)"
                    ),
                )
                .as_news(format!("budget/cannot-scale/{ended}"))
                .with_detail("action", "scale-to-zero"),
            );
            return decided;
        }
        Decisions::run(Command::ScaleNodePools(crate::gke::resize::Scale::ToZero))
    }

    /// The budget's shares told once each, and what reaching it does.
    fn budget(&mut self, ending: &mut Judging<'_>) {
        let (world, attempt, run, now) = (ending.world, ending.attempt, ending.run, ending.now);
        let guards = &ending.settings.guards;
        let Some(budget) = guards.budget else { return };
        let Some((cost, _)) = world.run_cost_so_far(now) else {
            return;
        };
        let name = run_name(run, &attempt.name);
        for share in BUDGET_THRESHOLDS {
            if cost < budget * f64::from(share) / 100.0
                || !self.budget_told.insert((run.id.clone(), share))
            {
                continue;
            }
            let spent = share >= 100;
            let severity = if spent {
                Severity::Critical
            } else {
                Severity::Warning
            };
            let then = match (spent, guards.budget_action) {
                (true, BudgetAction::StopRun) => ": ending the run",
                (true, BudgetAction::ScaleToZero) => {
                    ": ending the run and scaling the node pools to zero"
                }
                _ => "",
            };
            let text = format!(
                "run {name} has cost {} of its {} budget ({share} %){then}",
                usd(cost),
                usd(budget)
            );
            ending.decided.notices.push(
                Notice::new(Kind::Budget, severity, name, text)
                    .as_news(format!("budget/{share}"))
                    .with_detail("budget", budget)
                    .with_detail("share", share)
                    .with_detail("action", guards.budget_action.name()),
            );
            if spent && guards.budget_action != BudgetAction::Notify {
                let why = format!("its budget is spent ({} of {})", usd(cost), usd(budget));
                if ending.end_run(&attempt.name, why, EndedBy::Budget)
                    && guards.budget_action == BudgetAction::ScaleToZero
                {
                    self.zero_after = Some((attempt.name.clone(), now));
                }
            }
        }
    }
}

/// The active attempt being judged, and what the guards decide of it this round.
struct Judging<'a> {
    world: &'a World,
    attempt: &'a AttemptSummary,
    run: &'a Run,
    settings: &'a Settings,
    now: Timestamp,
    /// What the engine has ended already.
    doing: &'a Doing,
    decided: Decisions,
}

impl Judging<'_> {
    /// Ends the run at `attempt`, unless this engine has ended it already; whether it does.
    fn end_run(&mut self, attempt: &str, why: String, ended_by: EndedBy) -> bool {
        if self.ended(attempt) {
            return false;
        }
        self.decided.commands.push(Command::EndRun {
            attempt: attempt.to_string(),
            why,
            ended_by,
        });
        true
    }

    /// Whether the attempt is ended already, by an earlier round or by a guard of this one.
    fn ended(&self, attempt: &str) -> bool {
        self.doing.ended.contains(attempt)
            || self.decided.commands.iter().any(|c| {
                matches!(c, Command::EndRun { attempt: a, .. } | Command::Recover { attempt: a, .. } if a == attempt)
            })
    }
}

/// A run longer than `max-run-time` is ended.
fn run_time(ending: &mut Judging<'_>) {
    let (attempt, run, now) = (ending.attempt, ending.run, ending.now);
    let guards = &ending.settings.guards;
    let (Some(limit), Some(started)) = (guards.max_run_time(), run.started()) else {
        return;
    };
    let ran = now.duration_since(started);
    if ran.as_secs() < i64::try_from(limit.as_secs()).unwrap_or(i64::MAX) {
        return;
    }
    let limit_text = guards.max_run_time.clone().unwrap_or_default();
    let why = format!(
        "it has run for {} (max-run-time = {limit_text})",
        crate::k8s::age::human_duration(ran.as_secs())
    );
    ending.end_run(&attempt.name, why, EndedBy::MaxRunTime);
}

/// A stalled attempt is ended as a recovery (`stall-action = "end-attempt"`).
fn stall(ending: &mut Judging<'_>) {
    let (world, attempt, run, settings) =
        (ending.world, ending.attempt, ending.run, ending.settings);
    let now = ending.now;
    if settings.guards.stall_action != StallAction::EndAttempt
        || ending.doing.recovering.is_some()
        || ending.ended(&attempt.name)
    {
        return;
    }
    let Some(stall) = super::watch::stalled(world, settings.thresholds.stall_after, now) else {
        return;
    };
    let why = format!("{} stalled: {}", attempt.name, stall.what);
    let max = settings.max_recoveries;
    let command = super::recovery::restart_or_end(&attempt.name, run, why, max, EndedBy::Stall);
    ending.decided.commands.push(command);
}

/// The run's id, or its attempt's name for one made before runs were recorded.
fn run_name<'a>(run: &'a Run, attempt: &'a str) -> &'a str {
    if run.id.is_empty() { attempt } else { &run.id }
}

#[cfg(test)]
#[path = "guards_tests.rs"]
mod tests;

//! What a viewer asks of the engine. Workers carry it out and answer with events.

/// What to start. Every command reaches the engine through the one gate (`gate::Gate::pass`),
/// which refuses those that change the cloud to a read-only principal.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    CreateCluster,
    DeleteCluster,
    LaunchJob,
    RetryJob,
    /// Delete one attempt (a Job Gantry made), with its pods.
    DeleteAttempt(String),
    DeletePod(String),
    /// Every node pool to zero nodes (an idle cluster) or back to the config's size.
    ScaleNodePools(crate::gke::resize::Scale),
    /// Make the cluster what the config describes, as the plan of this generation says
    /// (`Drift::generation`): a plan that has moved on since it was shown is not applied.
    ApplyPlan {
        generation: u64,
    },
    /// The recoverer restarts a run whose rank was preempted: `attempt` ends, the next (run
    /// attempt `next` of at most `most`) starts with the same spec.
    Recover {
        attempt: String,
        /// What happened, in words: `rank 1 of ml-training-job-3 preempted`.
        why: String,
        /// Why, in one word (recorded on the attempt).
        ended_by: crate::vocabulary::attempt::EndedBy,
        next: u32,
        most: u32,
    },
    /// The recoverer moves a run off a spot pool that capacity deserted: the pool's on-demand
    /// fallback (`gke::fallback::name_for`) is made (or scaled up), `attempt` ends, and the next
    /// (run attempt `next` of at most `most`) starts on the fallback.
    FallBack {
        attempt: String,
        /// The spot pool.
        pool: String,
        /// What happened, in words: `default-pool has had no spot capacity for 10m`.
        why: String,
        /// The fallback in the plan's words, with its price difference (`gke::fallback::words`).
        plan: String,
        next: u32,
        most: u32,
    },
    /// The recoverer ends a run that ran out of recoveries, at its attempt `attempt`.
    EndRun {
        attempt: String,
        why: String,
        /// Why, in one word (recorded on the attempt).
        ended_by: crate::vocabulary::attempt::EndedBy,
    },
    /// Take the recoverer's Lease for this engine: nobody holds it, or its holder `from` has
    /// been silent for `silent` by this engine's clock. Only the record `judged` (the one seen
    /// unheld or silent) is replaced: if it changed since, its writer is alive and keeps it.
    TakeLease {
        from: Option<String>,
        silent: Option<std::time::Duration>,
        judged: Option<Box<crate::k8s::lease::Record>>,
    },
    /// Let the recoverer's Lease go, for the cluster's watcher to take: a local engine makes
    /// way for the watcher whose pod is ready (it goes on with every laptop closed).
    GiveWayLease,
    /// Record pod ends this engine saw on their attempts (`ends::ledger`): the engine's own
    /// bookkeeping, a write to the Jobs, so never from a read-only engine.
    RecordEnds(Vec<crate::ends::ledger::Entry>),
    /// Record the run's cost on its newest attempt (`meter::ledger`): the engine's own
    /// bookkeeping, a write to the Job, so never from a read-only engine.
    RecordCost(crate::meter::ledger::Entry),
    /// Logs the engine's store does not hold, for one viewer: an older attempt's, or a
    /// previous container's. Every pod of the attempt, or only the one named.
    FetchLogs {
        attempt: String,
        pod: Option<String>,
        previous: bool,
        /// The viewer's fetch generation: lines of an older fetch are dropped.
        generation: u64,
    },
}

impl Command {
    /// Whether the command changes anything in the cloud (refused under `--read-only`).
    /// Every variant is named: a new one does not compile until it is classed.
    pub fn mutates(&self) -> bool {
        match self {
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
        }
    }

    /// Its name in the audit file.
    pub fn kind(&self) -> &'static str {
        match self {
            Command::CreateCluster => "create-cluster",
            Command::DeleteCluster => "delete-cluster",
            Command::LaunchJob => "launch",
            Command::RetryJob => "retry",
            Command::DeleteAttempt(_) => "delete-attempt",
            Command::DeletePod(_) => "delete-pod",
            Command::ScaleNodePools(crate::gke::resize::Scale::ToZero) => "scale-to-zero",
            Command::ScaleNodePools(crate::gke::resize::Scale::ToConfig) => "scale-back",
            Command::ApplyPlan { .. } => "apply-plan",
            Command::RecordEnds(_) => "record-ends",
            Command::RecordCost(_) => "record-cost",
            Command::TakeLease { .. } => "take-lease",
            Command::GiveWayLease => "give-way-lease",
            Command::Recover { .. } => "recover",
            Command::FallBack { .. } => "spot-fallback",
            Command::EndRun { .. } => "end-run",
            Command::FetchLogs { .. } => "fetch-logs",
        }
    }

    /// The recoverer's act as what happens to the run, headed by the word for each act
    /// (`recovering: rank 1 of … preempted; attempt 4 of at most 11`); None for other commands.
    fn to_the_run(&self, recover: &str, fall_back: &str, end: &str) -> Option<String> {
        Some(match self {
            Command::Recover {
                why, next, most, ..
            } => format!("{recover}: {why}; attempt {next} of at most {most}"),
            Command::FallBack {
                why,
                plan,
                next,
                most,
                ..
            } => format!("{fall_back}: {why}; {plan}; attempt {next} of at most {most}"),
            Command::EndRun { attempt, why, .. } => format!("{end} {attempt}: {why}"),
            _ => return None,
        })
    }

    /// How the recoverer's acts are told to every viewer and listener: as what happens to the
    /// run (kind `recovery`), not as a command someone asked for; None for other commands.
    pub fn told_as_recovery(&self) -> Option<super::notice::Notice> {
        use super::notice::Notice;
        use crate::vocabulary::{Kind, Severity};
        let (Command::Recover { attempt, .. }
        | Command::FallBack { attempt, .. }
        | Command::EndRun { attempt, .. }) = self
        else {
            return None;
        };
        let severity = match self {
            Command::EndRun { .. } => Severity::Critical,
            _ => Severity::Warning,
        };
        let text = self.to_the_run("recovering", "spot fallback", "run ended as failed at")?;
        let what = match self {
            Command::Recover { .. } => "recovering",
            Command::FallBack { .. } => "spot-fallback",
            _ => "run-ended",
        };
        Some(
            Notice::new(Kind::Recovered, severity, attempt, text)
                .as_news(format!("{attempt}/{what}"))
                .with_detail("attempt", attempt.as_str())
                .with_detail("action", what),
        )
    }

    pub fn describe(&self) -> String {
        match self {
            Command::CreateCluster => "create the cluster".into(),
            Command::DeleteCluster => "delete the cluster".into(),
            Command::LaunchJob => "launch the Job".into(),
            Command::RetryJob => "retry the Job".into(),
            Command::DeleteAttempt(n) => format!("delete attempt {n}"),
            Command::DeletePod(n) => format!("delete pod {n}"),
            Command::ScaleNodePools(crate::gke::resize::Scale::ToZero) => {
                "scale the node pools to zero".into()
            }
            Command::ScaleNodePools(crate::gke::resize::Scale::ToConfig) => {
                "scale the node pools back".into()
            }
            Command::ApplyPlan { .. } => "apply the plan".into(),
            Command::Recover { .. } | Command::FallBack { .. } | Command::EndRun { .. } => self
                .to_the_run("recover", "fall back to on-demand", "end the run at")
                .unwrap_or_default(),
            Command::RecordEnds(ends) => {
                let pods: Vec<&str> = ends.iter().map(|e| e.end.pod.as_str()).collect();
                format!("record how {} ended", pods.join(", "))
            }
            Command::RecordCost(entry) => format!("record the run's cost on {}", entry.job),
            Command::TakeLease {
                from: Some(from),
                silent,
                ..
            } => format!(
                "take the recoverer's Lease over from {from} (silent {}s)",
                silent.unwrap_or_default().as_secs()
            ),
            Command::TakeLease { from: None, .. } => "take the recoverer's Lease".into(),
            Command::GiveWayLease => {
                "let the recoverer's Lease go to the cluster's watcher (its pod is ready)".into()
            }
            Command::FetchLogs { attempt, .. } => format!("read the logs of {attempt}"),
        }
    }
}

//! The model's one owner: folds the workers' events in, runs the commands that passed a gate
//! (checked again here, audited, told to every viewer with who asked), and acts on its own
//! (the idle cluster scaled to zero) through the same gate.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, RwLock};

use tokio::sync::{broadcast, mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::notice::Notice;
use super::workers::Workers;
use super::{Approved, Command, EVENTS_PER_BATCH, Gate, Model, Principal, Report};
use super::{Request, audit, model};
use crate::k8s::logs::TailEvent;
use crate::vocabulary::{Kind, Severity};

/// Whether a command's end is a `Done` whose `what` is its `describe()` (a create or delete of
/// the cluster ends as the operation it followed).
fn ends_with_done(command: &Command) -> bool {
    match command {
        Command::LaunchJob
        | Command::RetryJob
        | Command::DeleteAttempt(_)
        | Command::DeletePod(_)
        | Command::ScaleNodePools(_)
        | Command::Recover { .. }
        | Command::FallBack { .. }
        | Command::EndRun { .. } => true,
        Command::CreateCluster
        | Command::DeleteCluster
        | Command::ApplyPlan { .. }
        | Command::RecordEnds(_)
        | Command::RecordCost(_)
        | Command::FetchLogs { .. } => false,
    }
}

pub(super) struct Owner {
    model: Arc<RwLock<Model>>,
    changed: watch::Sender<u64>,
    notices: broadcast::Sender<Notice>,
    workers: Workers,
    /// The idle cluster's pools were sent to zero nodes: not again until it has been busy (or
    /// not RUNNING with nodes) in between, so a refused resize is not asked for at every poll.
    scaled_while_idle: bool,
    /// `--read-only` or the config's: the engine runs no change, whoever passed it.
    read_only: bool,
    audit: audit::Audit,
    /// Who asked for the one-shot commands still running, by what they do (`Command::describe`,
    /// the `what` of their `Done`), oldest first: their ends are told with the name.
    asked: HashMap<String, VecDeque<Principal>>,
    /// Where news goes for those not looking (`[[notify]]`).
    news: Option<super::news::Sender>,
}

impl Owner {
    pub(super) fn new(
        model: Arc<RwLock<Model>>,
        changed: watch::Sender<u64>,
        notices: broadcast::Sender<Notice>,
        workers: Workers,
        read_only: bool,
        audit: audit::Audit,
        news: Option<super::news::Sender>,
    ) -> Owner {
        Owner {
            news,
            model,
            changed,
            notices,
            workers,
            scaled_while_idle: false,
            read_only,
            audit,
            asked: HashMap::new(),
        }
    }
}

pub(super) async fn own_the_model(
    mut owner: Owner,
    mut events: mpsc::UnboundedReceiver<Report>,
    mut requests: mpsc::UnboundedReceiver<Request>,
    stop: CancellationToken,
) {
    let mut version = 0u64;
    loop {
        tokio::select! {
            _ = stop.cancelled() => break,
            event = events.recv() => {
                let Some(event) = event else { break };
                let mut batch = vec![event];
                while batch.len() < EVENTS_PER_BATCH {
                    match events.try_recv() {
                        Ok(e) => batch.push(e),
                        Err(_) => break,
                    }
                }
                if owner.fold(batch) {
                    version += 1;
                    owner.changed.send_replace(version);
                }
            }
            request = requests.recv() => {
                let changed = match request {
                    Some(Request::Run(approved)) => owner.take(approved),
                    Some(Request::Fetch { command, to, cancel }) => {
                        owner.fetch(command, to, cancel);
                        false
                    }
                    None => false,
                };
                if changed {
                    version += 1;
                    owner.changed.send_replace(version);
                }
            }
        }
    }
    owner.workers.stop();
    // What is still to be sent is written to the outbox (sent by the next Gantry to run if not
    // now); a moment for the sends under way.
    if let Some(news) = owner.news.take() {
        news.notifier.idle_within(NOTIFY_AT_STOP).await;
    }
}

/// How long a stopping engine waits for its messages to be sent or kept.
const NOTIFY_AT_STOP: std::time::Duration = std::time::Duration::from_secs(3);

impl Owner {
    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Model> {
        self.model.write().unwrap_or_else(|p| p.into_inner())
    }

    /// An approved command: checked again here (a change from a read-only gate, or while the
    /// engine is read-only, is refused whoever sent it), recorded in the audit file, told to
    /// every viewer with who asked, then run. Whether the model changed.
    fn take(&mut self, approved: Approved) -> bool {
        let command = approved.command().clone();
        if !command.mutates() {
            self.run(command, approved.by());
            return false;
        }
        let by = approved.by().clone();
        // A person's retry while a recovery makes the next attempt: one of them, never both.
        if command == Command::RetryJob {
            let recovering = self.write().recovery.recovering.clone();
            if let Some(recovery) = recovering {
                self.audit
                    .record(&by, &command, "refused: a recovery is under way");
                let text =
                    format!("retry refused: Gantry is making the next attempt itself ({recovery})");
                let notice =
                    Notice::new(Kind::Command, Severity::Warning, command.describe(), text);
                self.tell(notice, |_| {});
                return true;
            }
        }
        // The engine's bookkeeping is audited like any change, but told to no one: the ends it
        // records were told as they happened, and the cost is shown where it is kept.
        if matches!(command, Command::RecordEnds(_) | Command::RecordCost(_)) {
            if approved.may_run(self.read_only) {
                self.audit.record(&by, &command, "started");
                self.run(command, &by);
            }
            return false;
        }
        // The audit file is written before the model is locked: no viewer waits on the disk.
        if !approved.may_run(self.read_only) {
            self.audit.record(&by, &command, "refused: read-only");
            let text = format!(
                "read-only: refused to {} (asked by {by})",
                command.describe()
            );
            tracing::warn!(target: "gantry::audit", principal = %by, "{text}");
            let notice = Notice::new(Kind::Command, Severity::Warning, command.describe(), text);
            self.tell(notice, |_| {});
            return true;
        }
        self.audit.record(&by, &command, "started");
        let text = format!("{by} asked to {}", command.describe());
        match by.fingerprint() {
            Some(key) => {
                tracing::info!(target: "gantry::audit", principal = %by, key, command = command.kind(), "{text}")
            }
            None => {
                tracing::info!(target: "gantry::audit", principal = %by, command = command.kind(), "{text}")
            }
        }
        // The recoverer's acts are said as what happens to the run.
        let notice = command.told_as_recovery().unwrap_or_else(|| {
            Notice::new(Kind::Command, Severity::Info, command.describe(), text)
        });
        self.tell(notice, |model| {
            model.command_sent(&command);
        });
        if ends_with_done(&command) {
            self.asked
                .entry(command.describe())
                .or_default()
                .push_back(by.clone());
        }
        self.run(command, &by);
        true
    }

    /// Tells every viewer and every listener, after `change` to the model under the same lock.
    fn tell(&self, notice: Notice, change: impl FnOnce(&mut Model)) {
        {
            let mut model = self.write();
            change(&mut model);
            model.record(notice.clone());
        }
        self.publish(notice);
    }

    /// Tells the engine's listeners and its log, and those not looking if it is news.
    fn publish(&self, notice: Notice) {
        tracing::info!(
            kind = notice.kind.name(),
            severity = notice.severity.name(),
            "{notice}"
        );
        if let Some(news) = &self.news
            && notice.news.is_some()
        {
            let model = self.model.read().unwrap_or_else(|p| p.into_inner());
            news.send(&notice, &model, jiff::Timestamp::now());
        }
        let _ = self.notices.send(notice);
    }

    /// A viewer's own fetch of logs, if its approval still holds here.
    fn fetch(
        &mut self,
        approved: Approved,
        to: mpsc::Sender<(u64, TailEvent)>,
        cancel: CancellationToken,
    ) {
        if approved.may_run(self.read_only) {
            self.workers.fetch(approved.into_parts().0, to, cancel);
        }
    }

    /// A one-shot command's end, told with the name of who asked for it.
    fn attribute(&mut self, event: Report) -> Report {
        let Report::Done { what, result } = event else {
            return event;
        };
        let Some(queue) = self.asked.get_mut(&what) else {
            return Report::Done { what, result };
        };
        let by = queue.pop_front();
        if queue.is_empty() {
            self.asked.remove(&what);
        }
        match (by, result) {
            // The engine's own work says so itself ("idle: …").
            (Some(Principal::Engine(_)), result) => Report::Done { what, result },
            (Some(by), Ok(text)) => Report::Done {
                what,
                result: Ok(format!("{by}: {text}")),
            },
            (Some(by), Err(e)) => Report::Done {
                what: format!("{what} (asked by {by})"),
                result: Err(e),
            },
            (None, result) => Report::Done { what, result },
        }
    }

    /// Hands a viewer's command to the workers. Applying the plan takes the plan of the
    /// generation the viewer showed, if it is still the plan (None: the worker refuses).
    fn run(&mut self, command: Command, by: &Principal) {
        if let Command::ApplyPlan { generation } = command {
            let plan = self.write().cluster.drift.plan_at(generation).cloned();
            self.workers.apply_plan(plan);
            return;
        }
        self.workers.run(command, by);
    }

    /// `scale-to-zero-when-idle`: the node pools go to zero nodes once the idle decision says so
    /// (checked as events come; the cluster follower polls GKE at least every 30 s).
    fn act_on_idle(&mut self, idle: &model::idle::Idle) {
        match idle {
            // Not while an operation (the create that made the cluster) is still being
            // followed to its end: the next batch (its end) decides again.
            model::idle::Idle::ScaleToZero { .. }
                if !self.scaled_while_idle && !self.workers.operating() =>
            {
                self.scaled_while_idle = true;
                let scale = Command::ScaleNodePools(crate::gke::resize::Scale::ToZero);
                // The engine's own change passes the same gate, and is audited as its own.
                if let Ok(approved) = Gate::engine("idle", self.read_only).pass(scale) {
                    self.take(approved);
                }
            }
            model::idle::Idle::ScaleToZero { .. } | model::idle::Idle::Remind { .. } => {}
            model::idle::Idle::No => self.scaled_while_idle = false,
        }
    }

    /// Folds a batch of events in; whether anything viewers show changed.
    fn fold(&mut self, batch: Vec<Report>) -> bool {
        let mut changed = false;
        let mut follows = Vec::new();
        let mut told = Vec::new();
        let mut record = Vec::new();
        let mut preempted = Vec::new();
        let wanted;
        let idle;
        let guarded;
        // Log lines alone change nothing the spot fallback, the guards or the watch for stalls
        // look at (pods, their waits, ends, the Lease, time by the engine's tick): a batch of
        // them is not judged again.
        let judge = batch.iter().any(|e| !matches!(e, Report::Tail { .. }));
        {
            let batch: Vec<Report> = batch.into_iter().map(|e| self.attribute(e)).collect();
            let mut model = self.write();
            for event in batch {
                if matches!(event, Report::Tail { .. } | Report::Job(_)) {
                    self.workers.flow_event_taken();
                }
                let applied = model.apply(event);
                changed |= applied.changed;
                follows.extend(applied.follow);
                told.extend(applied.told);
                record.extend(applied.record);
                preempted.extend(applied.preempted);
            }
            wanted = model.training.take_wanted();
            let settings = self.workers.idle_settings();
            let now = jiff::Timestamp::now();
            idle = model::idle::decide(&model, &settings, now);
            // What time alone makes news (a stall, a long wait, an unreachable or idle cluster)
            // and what the guards do: judged at the tick and on every change but log lines.
            guarded = if judge {
                let news = model.unattended(&self.workers.thresholds(), &idle, now);
                changed |= !news.is_empty();
                told.extend(news);
                let guards = self.workers.guards();
                let run_cost = guards
                    .budget
                    .and_then(|_| model.run_cost_so_far(now))
                    .map(|(usd, _)| usd);
                let calls = model.guard(guards, self.workers.max_recoveries(), run_cost, now);
                changed |= !calls.told.is_empty();
                told.extend(calls.told);
                calls.commands
            } else {
                Vec::new()
            };
        }
        // What the guards do passes the same gate as any change, audited as the guard's.
        for command in guarded {
            if let Ok(approved) = Gate::engine("guard", self.read_only).pass(command) {
                self.take(approved);
            }
        }
        self.act_on_idle(&idle);
        // A preempted rank: the recoverer (this engine, if it holds the Lease) restarts the run
        // or ends it, through the same gate as any change, audited as its own.
        let retry_asked = self.asked.contains_key(&Command::RetryJob.describe());
        let max = self.workers.max_recoveries();
        for p in preempted {
            let decided = self.write().recovery_for(&p, max, retry_asked);
            if let Some(command) = decided
                && let Ok(approved) = Gate::engine("recovery", self.read_only).pass(command)
            {
                self.take(approved);
            }
        }
        // A run that spot capacity deserted goes on on its pool's on-demand fallback: decided by
        // the recoverer, through the same gate.
        if let Some(settings) = self.workers.spot_fallback().filter(|_| judge) {
            let decided = self
                .write()
                .fallback_for(settings, retry_asked, jiff::Timestamp::now());
            if let Some(command) = decided
                && let Ok(approved) = Gate::engine("recovery", self.read_only).pass(command)
            {
                self.take(approved);
            }
        }
        // What the pods' ends were, on their attempts: a write, so through the gate (a read-only
        // engine records nothing, and says nothing of it).
        if !record.is_empty()
            && let Ok(approved) =
                Gate::engine("ends", self.read_only).pass(Command::RecordEnds(record))
        {
            self.take(approved);
        }
        // The run's cost on its newest attempt, when this engine records it and it is due:
        // through the same gate, audited as its own.
        let cost = self.write().cost_to_record(jiff::Timestamp::now());
        if let Some(entry) = cost
            && let Ok(approved) =
                Gate::engine("cost", self.read_only).pass(Command::RecordCost(entry))
        {
            self.take(approved);
        }
        for follow in follows {
            self.workers.follow(follow);
        }
        if let Some(number) = wanted {
            self.workers.load_saved_metrics(number);
        }
        for notice in told {
            self.publish(notice);
        }
        if let Some(news) = &self.news {
            let model = self.model.read().unwrap_or_else(|p| p.into_inner());
            news.settle(&model, jiff::Timestamp::now());
        }
        changed
    }
}

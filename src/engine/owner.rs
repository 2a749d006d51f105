//! The world's one owner. A batch of the workers' reports is folded into the world; the
//! policies then decide, in their one order (`policies`), under the same lock; every command
//! they call for passes the gate under the policy's principal (refused, and audited, as any
//! other), every notice is published one way (`publish`), and the messages go to the notifier.
//! A viewer's command is checked again here, audited, told to every viewer with who asked,
//! then handed to the workers.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, RwLock};

use tokio::sync::{broadcast, mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::clock::Clock;
use super::notice::Notice;
use super::policies::{Doing, Policies, Round, Settings, news};
use super::round::{self, Folded};
use super::told::Telling;
use super::workers::Workers;
use super::world::World;
use super::{Approved, Command, EVENTS_PER_BATCH, Gate, Principal, Report, Request, audit};
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
        | Command::TakeLease { .. }
        | Command::GiveWayLease
        | Command::FetchLogs { .. } => false,
    }
}

/// The engine's bookkeeping: audited like any change, but told to no one (the ends were told
/// as they happened, the cost is shown where it is kept, and how a Lease take went is told by
/// the world when the Lease is read again).
fn told_to_no_one(command: &Command) -> bool {
    matches!(
        command,
        Command::RecordEnds(_)
            | Command::RecordCost(_)
            | Command::TakeLease { .. }
            | Command::GiveWayLease
    )
}

/// Where the owner publishes: the viewers' ring, the engine's listeners.
pub(super) struct Outlets {
    pub changed: watch::Sender<u64>,
    pub telling: Arc<RwLock<Telling>>,
    pub notices: broadcast::Sender<Notice>,
}

pub(super) struct Owner {
    world: Arc<RwLock<World>>,
    outlets: Outlets,
    workers: Workers,
    /// `--read-only` or the config's: the engine runs no change, whoever passed it.
    read_only: bool,
    audit: audit::Audit,
    /// Who asked for the one-shot commands still running, by what they do (`Command::describe`,
    /// the `what` of their `Done`), oldest first: their ends are told with the name.
    asked: HashMap<String, VecDeque<Principal>>,
    policies: Policies,
    settings: Settings,
    doing: Doing,
    clock: Clock,
    /// Where messages go for those not looking (`[[notify]]`'s HTTP targets).
    notifier: Option<crate::notify::Notifier>,
}

/// What the owner is made of.
pub(super) struct Parts {
    pub world: Arc<RwLock<World>>,
    pub outlets: Outlets,
    pub workers: Workers,
    pub read_only: bool,
    pub audit: audit::Audit,
    pub settings: Settings,
    pub clock: Clock,
    pub notifier: Option<crate::notify::Notifier>,
}

impl Owner {
    pub(super) fn new(parts: Parts) -> Owner {
        Owner {
            world: parts.world,
            outlets: parts.outlets,
            workers: parts.workers,
            read_only: parts.read_only,
            audit: parts.audit,
            asked: HashMap::new(),
            policies: Policies::default(),
            settings: parts.settings,
            doing: Doing::default(),
            clock: parts.clock,
            notifier: parts.notifier,
        }
    }
}

pub(super) async fn own_the_world(
    mut owner: Owner,
    mut events: mpsc::UnboundedReceiver<Report>,
    mut requests: mpsc::UnboundedReceiver<Request>,
    stop: CancellationToken,
) {
    let mut version = 0u64;
    loop {
        let changed = tokio::select! {
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
                owner.fold(batch)
            }
            request = requests.recv() => match request {
                Some(Request::Run(approved)) => owner.take(approved),
                Some(Request::Ping(answer)) => {
                    let _ = answer.send(());
                    false
                }
                Some(Request::Fetch { command, to, cancel }) => {
                    owner.fetch(command, to, cancel);
                    false
                }
                None => false,
            },
        };
        if changed {
            version += 1;
            owner.outlets.changed.send_replace(version);
        }
    }
    owner.workers.stop();
    // What is still to be sent is written to the outbox (sent by the next Gantry to run if not
    // now); a moment for the sends under way.
    if let Some(notifier) = owner.notifier.take() {
        notifier.idle_within(NOTIFY_AT_STOP).await;
    }
}

/// How long a stopping engine waits for its messages to be sent or kept.
const NOTIFY_AT_STOP: std::time::Duration = std::time::Duration::from_secs(3);

impl Owner {
    fn write(&self) -> std::sync::RwLockWriteGuard<'_, World> {
        self.world.write().unwrap_or_else(|p| p.into_inner())
    }

    /// An approved command: checked again here (a change from a read-only gate, or while the
    /// engine is read-only, is refused whoever sent it), recorded in the audit file, told to
    /// every viewer with who asked, then run. Whether the world changed.
    fn take(&mut self, approved: Approved) -> bool {
        let command = approved.command().clone();
        if !command.mutates() {
            self.run(command, approved.by());
            return false;
        }
        let by = approved.by().clone();
        // A person's retry while a recovery makes the next attempt: one of them, never both.
        if command == Command::RetryJob
            && let Some(recovery) = self.doing.recovering.clone()
        {
            let text =
                format!("retry refused: Gantry is making the next attempt itself ({recovery})");
            return self.refuse(&by, &command, "refused: a recovery is under way", text);
        }
        // The audit file is written before the world is locked: no viewer waits on the disk.
        if !approved.may_run(self.read_only) {
            if told_to_no_one(&command) {
                return false;
            }
            let text = format!(
                "read-only: refused to {} (asked by {by})",
                command.describe()
            );
            tracing::warn!(target: "gantry::audit", principal = %by, "{text}");
            return self.refuse(&by, &command, "refused: read-only", text);
        }
        self.audit.record(&by, &command, "started");
        self.doing.decided(&command);
        if told_to_no_one(&command) {
            self.run(command, &by);
            return false;
        }
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
        self.write().command_sent(&command);
        self.tell(notice);
        if ends_with_done(&command) {
            self.asked
                .entry(command.describe())
                .or_default()
                .push_back(by.clone());
        }
        self.run(command, &by);
        true
    }

    /// A command refused here: audited with `result`, told with `text`. The world changed (a
    /// notice).
    fn refuse(&mut self, by: &Principal, command: &Command, result: &str, text: String) -> bool {
        self.audit.record(by, command, result);
        self.tell(Notice::new(
            Kind::Command,
            Severity::Warning,
            command.describe(),
            text,
        ));
        true
    }

    /// Tells one notice of a command (a recoverer's act is news): its message is made from the
    /// world as it is now, and the news policy decides whether it is sent, as for any notice.
    fn tell(&mut self, notice: Notice) {
        let now = self.clock.now();
        let (message, messages) = {
            let world = self.world.read().unwrap_or_else(|p| p.into_inner());
            let message = news::message_for(&notice, &world, &self.settings.job, now.wall);
            let messages = self
                .policies
                .news
                .decide(&world, &[&notice], &self.settings, now);
            (message, messages)
        };
        self.publish(vec![(notice, message)]);
        self.send(messages);
    }

    /// Messages to the notifier, when there is one.
    fn send(&self, messages: Vec<crate::notify::Message>) {
        if let Some(notifier) = &self.notifier {
            for message in messages {
                notifier.send(message);
            }
        }
    }

    /// The one way a notice goes out: the viewers' ring, Gantry's log, the engine's listeners
    /// (`gantry watch`).
    fn publish(&mut self, told: Vec<(Notice, Option<crate::notify::Message>)>) {
        if told.is_empty() {
            return;
        }
        let mut telling = self
            .outlets
            .telling
            .write()
            .unwrap_or_else(|p| p.into_inner());
        for (notice, message) in told {
            tracing::info!(
                kind = notice.kind.name(),
                severity = notice.severity.name(),
                "{notice}"
            );
            let _ = self.outlets.notices.send(notice.clone());
            telling.record(notice, message);
        }
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

    /// Hands a command to the workers. Applying the plan takes the plan of the generation the
    /// viewer showed, if it is still the plan (None: the worker refuses).
    fn run(&mut self, command: Command, by: &Principal) {
        if let Command::ApplyPlan { generation } = command {
            let plan = self.write().cluster.drift.plan_at(generation).cloned();
            self.workers.apply_plan(plan);
            return;
        }
        self.workers.run(command, by);
    }

    /// Folds a batch of reports in and lets the policies decide; whether anything viewers show
    /// changed.
    fn fold(&mut self, batch: Vec<Report>) -> bool {
        let batch: Vec<Report> = batch.into_iter().map(|e| self.attribute(e)).collect();
        let now = self.clock.now();
        self.doing.retry_asked = self.asked.contains_key(&Command::RetryJob.describe());
        self.doing.operating = self.workers.operating();
        let world = self.world.clone();
        let mut world = world.write().unwrap_or_else(|p| p.into_inner());
        let workers = &self.workers;
        let folded = round::fold_and_decide(
            &mut world,
            &mut self.policies,
            &mut self.doing,
            &self.settings,
            batch,
            now,
            |report, doing| note(workers, report, doing),
        );
        let Folded {
            mut changed,
            follows,
            told,
            round,
            wanted,
        } = folded;
        let Round {
            commands,
            notices,
            messages,
        } = round;
        let job = self.settings.job.clone();
        let told: Vec<_> = told
            .into_iter()
            .chain(notices)
            .map(|n| {
                let message = news::message_for(&n, &world, &job, now.wall);
                (n, message)
            })
            .collect();
        drop(world);
        self.publish(told);
        self.send(messages);
        // What the policies call for passes the same gate as any change, audited as theirs.
        for decided in commands {
            if let Ok(approved) = Gate::engine(decided.by, self.read_only).pass(decided.command) {
                changed |= self.take(approved);
            }
        }
        for follow in follows {
            self.workers.follow(follow);
        }
        if let Some(number) = wanted {
            self.workers.load_saved_metrics(number);
        }
        changed
    }
}

/// What a report says of what the engine is doing: a flow event taken off the channel, a
/// one-shot command's end, a Lease read after a take.
fn note(workers: &Workers, report: &Report, doing: &mut Doing) {
    match report {
        Report::Tail { .. } | Report::Job(_) => workers.flow_event_taken(),
        Report::Done { what, .. } => doing.done(what),
        Report::Lease { .. } => doing.taking_lease = false,
        _ => {}
    }
}

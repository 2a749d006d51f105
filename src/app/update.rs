//! `App::update` for actions and `App::on_event` for what workers report.

use super::cluster::ClusterPhase;
use super::confirm::Confirm;
use super::logs::Source;
use super::trouble::TroubleSource;
use super::{App, Command, Event, Focus, Level, Overlay};
use crate::gke::ClusterStatus;
use crate::k8s::logs::{StreamEnd, TailEvent};
use crate::k8s::status::AttemptPhase;
use crate::keys::Action;

impl App {
    pub fn update(&mut self, action: Action) -> Vec<Command> {
        self.dirty = true;
        match action {
            Action::Quit => self.should_quit = true,
            Action::Help => {
                self.overlay = match self.overlay {
                    Some(Overlay::Help) => None,
                    _ => Some(Overlay::Help),
                }
            }
            Action::Close => {
                if self.overlay.take().is_none() {
                    self.logs.search = None;
                }
            }
            Action::FocusNext => self.focus = self.focus.step(1),
            Action::FocusPrev => self.focus = self.focus.step(-1),
            Action::Up | Action::Down => {
                return self.move_selection(if action == Action::Up { -1 } else { 1 });
            }
            Action::PageUp => self.logs.scroll_by(-(self.log_rows.max(1) as isize)),
            Action::PageDown => self.logs.scroll_by(self.log_rows.max(1) as isize),
            Action::Top => self.logs.top(),
            Action::Bottom => self.logs.bottom(),
            Action::CreateCluster => return self.create_cluster(),
            Action::DeleteCluster => return self.delete_cluster(),
            Action::Launch => return self.launch(Command::LaunchJob),
            Action::Retry => return self.launch(Command::RetryJob),
            Action::Delete => return self.delete_selected(),
            Action::FollowSelected => return self.follow_pod(false),
            Action::Previous => return self.follow_pod(true),
            Action::AllPods => return self.follow_attempt(),
            Action::ToggleFollow => self.logs.toggle_follow(),
            Action::ToggleWrap => self.logs.wrap = !self.logs.wrap,
            Action::ToggleTimestamps => self.logs.timestamps = !self.logs.timestamps,
            Action::Search => self.logs.typing = Some(String::new()),
            Action::NextMatch | Action::PrevMatch => {
                if self.logs.search.is_none() {
                    self.notify(
                        Level::Info,
                        format!(
                            "no search: press {} to search",
                            self.keymap.keys_for(Action::Search)
                        ),
                    );
                } else if !self.logs.jump_to_match(action == Action::NextMatch) {
                    self.notify(Level::Info, "no more matches");
                }
            }
        }
        Vec::new()
    }

    fn move_selection(&mut self, delta: isize) -> Vec<Command> {
        match self.focus {
            Focus::Jobs => {
                let before = self.jobs.current().map(|a| a.name.clone());
                self.jobs.move_attempt(delta);
                if self.jobs.current().map(|a| a.name.clone()) != before {
                    return self.follow_attempt();
                }
            }
            Focus::Pods => self.jobs.move_pod(delta),
            Focus::Logs | Focus::Events => self.logs.scroll_by(delta),
        }
        Vec::new()
    }

    /// Opens a dialog for a mutating command — unless read-only, which refuses at once.
    fn ask(&mut self, dialog: Confirm) -> Vec<Command> {
        if self.read_only {
            return self.request(dialog.command);
        }
        self.overlay = Some(Overlay::Confirm(dialog));
        Vec::new()
    }

    fn unavailable(&mut self, why: impl Into<String>) -> Vec<Command> {
        self.notify(Level::Warning, why);
        Vec::new()
    }

    fn unmanaged(&self) -> Option<String> {
        self.cluster
            .target
            .as_ref()
            .filter(|t| !t.managed)
            .map(|t| {
                t.unmanaged_reason
                    .clone()
                    .unwrap_or_else(|| "the cluster is not managed by Gantry".into())
            })
    }

    fn create_cluster(&mut self) -> Vec<Command> {
        if let Some(why) = self.unmanaged() {
            return self.unavailable(why);
        }
        match self.cluster.phase() {
            ClusterPhase::NotCreated => {}
            ClusterPhase::Checking => {
                return self.unavailable("still asking GKE about the cluster");
            }
            phase => return self.unavailable(format!("the cluster already exists ({phase:?})")),
        }
        let c = &self.config.cluster;
        let mut lines = vec![
            format!("cluster  {}", c.name),
            format!(
                "where    {}",
                self.cluster
                    .target
                    .as_ref()
                    .map(|t| t.place.clone())
                    .unwrap_or_default()
            ),
            format!(
                "nodes    {} × {} ({} GB {})",
                c.node_count, c.machine_type, c.disk_size_gb, c.disk_type
            ),
            format!(
                "scopes   {}",
                c.oauth_scopes
                    .iter()
                    .map(|s| s.rsplit('/').next().unwrap_or(s))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ];
        if let Some(gpu) = &c.gpu_pool {
            lines.push(format!(
                "gpu pool {} × {} with {} × {}",
                gpu.node_count, gpu.machine_type, gpu.accelerator_count, gpu.accelerator_type
            ));
        }
        lines.push("Nodes cost money while the cluster exists; X deletes it.".into());
        self.ask(Confirm::yes_no(
            "Create this GKE cluster? (y/N)",
            lines,
            Command::CreateCluster,
        ))
    }

    fn delete_cluster(&mut self) -> Vec<Command> {
        if let Some(why) = self.unmanaged() {
            return self.unavailable(why);
        }
        match self.cluster.phase() {
            ClusterPhase::NotCreated | ClusterPhase::Checking => {
                return self.unavailable("there is no cluster to delete");
            }
            ClusterPhase::Deleting => {
                return self.unavailable("the cluster is already being deleted");
            }
            _ => {}
        }
        let name = self.cluster.name().to_string();
        let lines = vec![
            format!("This deletes {name} and every Job, pod and log on it."),
            "Saved log files on this machine are kept.".into(),
            format!("Type {name} and press Enter to delete; Esc cancels."),
        ];
        self.ask(Confirm::type_name(
            format!("Delete cluster {name}?"),
            lines,
            &name,
            Command::DeleteCluster,
        ))
    }

    fn launch(&mut self, command: Command) -> Vec<Command> {
        if self.cluster.phase() != ClusterPhase::Running || !self.connected {
            let key = self.keymap.keys_for(Action::CreateCluster);
            return self.unavailable(match self.cluster.phase() {
                ClusterPhase::NotCreated => format!("no cluster yet: press {key} to create it"),
                ClusterPhase::Running => "connecting to the cluster…".to_string(),
                phase => format!("the cluster is not running yet ({phase:?})"),
            });
        }
        if command == Command::RetryJob && self.jobs.newest().is_none() {
            return self.unavailable(format!(
                "nothing to retry: press {} to launch",
                self.keymap.keys_for(Action::Launch)
            ));
        }
        if let Some(active) = self.jobs.active_attempt() {
            let name = active.name.clone();
            return self.unavailable(format!(
                "attempt {name} is still running: wait for it to end, or delete it ({})",
                self.keymap.keys_for(Action::Delete)
            ));
        }
        self.request(command)
    }

    fn delete_selected(&mut self) -> Vec<Command> {
        match self.focus {
            Focus::Jobs => match self.jobs.current() {
                Some(a) => {
                    let name = a.name.clone();
                    let lines = vec![format!(
                        "Delete attempt {name} and its pods (their saved logs are kept)?"
                    )];
                    self.ask(Confirm::yes_no(
                        format!("Delete {name}? (y/N)"),
                        lines,
                        Command::DeleteAttempt(name),
                    ))
                }
                None => self.unavailable("no attempt to delete"),
            },
            Focus::Pods => match self.jobs.selected_pod() {
                Some(p) => {
                    let name = p.name.clone();
                    let lines = vec![format!("Delete pod {name}? The Job may start another.")];
                    self.ask(Confirm::yes_no(
                        format!("Delete {name}? (y/N)"),
                        lines,
                        Command::DeletePod(name),
                    ))
                }
                None => self.unavailable("no pod to delete"),
            },
            _ => self.unavailable(
                "select an attempt (Jobs pane) or a pod (Pods pane) first: Tab moves focus",
            ),
        }
    }

    fn follow(&mut self, attempt: String, pod: Option<String>, previous: bool) -> Vec<Command> {
        // The old tail's streams go with it, and so do their troubles.
        self.troubles.clear_logs();
        let generation = self.logs.switch(Source {
            attempt: attempt.clone(),
            pod: pod.clone(),
            previous,
        });
        self.request(Command::FollowLogs {
            attempt,
            pod,
            previous,
            generation,
        })
    }

    fn follow_attempt(&mut self) -> Vec<Command> {
        match self.jobs.current().map(|a| a.name.clone()) {
            Some(attempt) => self.follow(attempt, None, false),
            None => self.unavailable("no attempt yet"),
        }
    }

    fn follow_pod(&mut self, previous: bool) -> Vec<Command> {
        let Some(pod) = self
            .jobs
            .selected_pod()
            .map(|p| (p.job.clone(), p.name.clone()))
        else {
            return self.unavailable("no pod selected");
        };
        self.follow(pod.0, Some(pod.1), previous)
    }

    pub fn on_event(&mut self, event: Event) -> Vec<Command> {
        let was_dirty = self.dirty;
        self.dirty = true;
        match event {
            Event::Target(t) => self.cluster.target = Some(t),
            Event::Cluster(summary) => {
                if summary.status != ClusterStatus::Running {
                    self.connected = false;
                }
                self.cluster.summary = Some(summary);
            }
            Event::Provision(e) => {
                if let crate::gke::ProvisionEvent::Retrying { message, .. } = &e {
                    self.troubles.set(TroubleSource::Provision, message.clone());
                } else {
                    self.troubles.clear(&TroubleSource::Provision);
                }
                self.cluster.apply(e);
            }
            Event::ProvisionDone(result) => {
                self.troubles.clear(&TroubleSource::Provision);
                self.cluster.finished(&result);
                match result {
                    Ok(done) => self.notify(Level::Info, done),
                    Err(e) => self.notify(Level::Error, e),
                }
            }
            Event::Connected => self.connected = true,
            Event::Job(e) => {
                let watch = TroubleSource::watch_of(&e);
                // Any other news from a watch means it is running again.
                match self.jobs.apply(e) {
                    Some(trouble) => self.troubles.set(watch, trouble),
                    None => {
                        self.troubles.clear(&watch);
                    }
                }
                return self.follow_new_attempt();
            }
            Event::Tail { generation, event } if generation == self.logs.generation => {
                self.on_tail(event)
            }
            Event::Tail { .. } => {}
            Event::LogsSavedTo { generation, dir } if generation == self.logs.generation => {
                self.logs.saved_to = Some(dir)
            }
            Event::LogsSavedTo { .. } => {}
            Event::Done { what, result } => match result {
                Ok(text) => self.notify(Level::Info, text),
                Err(e) => self.notify(Level::Error, format!("{what}: {e}")),
            },
            Event::Trouble { source, message } => self.troubles.set(source, message),
            Event::TroubleOver(source) => {
                // Sources say so after every good poll: only a change is worth a frame.
                self.dirty = self.troubles.clear(&source) || was_dirty;
            }
        }
        Vec::new()
    }

    /// A new attempt (launch, retry) takes over the logs pane, as the operator expects.
    fn follow_new_attempt(&mut self) -> Vec<Command> {
        let newest = self.jobs.newest().map(|a| (a.name.clone(), a.status));
        let Some((name, status)) = newest else {
            return Vec::new();
        };
        if self.newest_seen.as_deref() == Some(name.as_str()) && self.logs.source.is_some() {
            return Vec::new();
        }
        self.newest_seen = Some(name.clone());
        // A finished attempt found at start is followed too: its logs are still there to read.
        let _ = status == AttemptPhase::Running;
        self.jobs.selected_attempt = None;
        self.jobs.selected_pod = None;
        self.follow(name, None, false)
    }

    fn on_tail(&mut self, event: TailEvent) {
        match event {
            TailEvent::Lines { pod, lines } => {
                // Lines again after a reconnect: that stream is fine.
                if self.troubles.has_logs_of(&pod) {
                    self.troubles.clear(&TroubleSource::Logs(pod.clone()));
                }
                self.logs.push(&pod, &lines)
            }
            TailEvent::PodStarted { .. } => {}
            TailEvent::Reconnecting { pod, error } => {
                let message = format!("logs of {pod}: reconnecting ({error})");
                self.troubles.set(TroubleSource::Logs(pod), message)
            }
            TailEvent::PodEnded { pod, why } => {
                let how = match why {
                    StreamEnd::Completed => "ended".to_string(),
                    StreamEnd::PodDeleted => "pod deleted".to_string(),
                    StreamEnd::Stopped => "stopped".to_string(),
                    StreamEnd::Failed(e) => {
                        self.notify(Level::Warning, format!("logs of {pod}: {e}"));
                        format!("failed: {e}")
                    }
                };
                self.troubles.clear(&TroubleSource::Logs(pod.clone()));
                self.logs.ended.push((pod, how));
            }
            TailEvent::SaveFailed { pod, error } => self.notify(
                Level::Error,
                format!("could not save the logs of {pod}: {error}"),
            ),
            TailEvent::SavedByAnother { pod } => self.notify(
                Level::Warning,
                format!("another Gantry is saving the log of {pod}: shown here, not saved"),
            ),
            TailEvent::WatchTrouble { error } => self.logs.pods_stale = Some(error),
            TailEvent::WatchRecovered => self.logs.pods_stale = None,
        }
    }
}

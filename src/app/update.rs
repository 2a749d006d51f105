//! `App::update`: what an action does to the view, and what it asks of the engine.

use super::confirm::Confirm;
use super::{App, Focus, Overlay};
use crate::engine::world::cluster::ClusterPhase;
use crate::engine::world::log_store::Source;
use crate::engine::{Command, World};
use crate::keys::Action;
use crate::vocabulary::Severity;

impl App {
    pub fn update(&mut self, action: Action, model: &World) -> Vec<Command> {
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
                return self.move_selection(model, if action == Action::Up { -1 } else { 1 });
            }
            Action::PageUp => self.logs.scroll_by(model, -(self.log_rows.max(1) as isize)),
            Action::PageDown => self.logs.scroll_by(model, self.log_rows.max(1) as isize),
            Action::Top => self.logs.top(model),
            Action::Bottom => self.logs.bottom(),
            Action::CreateCluster => return self.create_cluster(model),
            Action::DeleteCluster => return self.delete_cluster(model),
            Action::Plan => return self.show_plan(model),
            Action::Launch => return self.launch(model, Command::LaunchJob),
            Action::Retry => return self.launch(model, Command::RetryJob),
            Action::Delete => return self.delete_selected(model),
            Action::FollowSelected => return self.follow_pod(model, false),
            Action::Previous => return self.follow_pod(model, true),
            Action::AllPods => return self.follow_attempt(model),
            Action::ToggleFollow => self.logs.toggle_follow(model),
            Action::ToggleWrap => self.logs.wrap = !self.logs.wrap,
            Action::ToggleTimestamps => self.logs.timestamps = !self.logs.timestamps,
            Action::Search => self.logs.typing = Some(String::new()),
            Action::ToggleMetrics => self.metrics.shown = !self.metrics.shown,
            Action::NextMetric | Action::PrevMetric => {
                self.choose_metric(model, if action == Action::NextMetric { 1 } else { -1 })
            }
            Action::ToggleSmoothing => {
                self.metrics.smooth = !self.metrics.smooth;
                self.metrics.shown = true;
            }
            Action::NextMatch | Action::PrevMatch => {
                if self.logs.search.is_none() {
                    self.notify(
                        Severity::Info,
                        format!(
                            "no search: press {} to search",
                            self.keymap.keys_for(Action::Search)
                        ),
                    );
                } else if !self.logs.jump_to_match(model, action == Action::NextMatch) {
                    self.notify(Severity::Info, "no more matches");
                }
            }
        }
        Vec::new()
    }

    /// `[` and `]`: the chart shows the metric before or after, and shows at all.
    fn choose_metric(&mut self, model: &World, delta: isize) {
        self.metrics.shown = true;
        let Some(attempt) = self.selection.attempt(&model.jobs) else {
            return self.notify(Severity::Info, "no attempt yet: no metrics to chart");
        };
        let names = super::metric_names(model, attempt);
        if self.metrics.step(&names, delta).is_none() {
            let name = attempt.name.clone();
            self.notify(
                Severity::Info,
                format!("no metrics in the logs of {name} yet"),
            );
        }
    }

    fn move_selection(&mut self, model: &World, delta: isize) -> Vec<Command> {
        let jobs = &model.jobs;
        match self.focus {
            Focus::Jobs => {
                let before = self.selection.attempt(jobs).map(|a| a.name.clone());
                self.selection.move_attempt(jobs, delta);
                if self.selection.attempt(jobs).map(|a| a.name.clone()) != before {
                    return self.follow_attempt(model);
                }
            }
            Focus::Pods => self.selection.move_pod(jobs, delta),
            Focus::Logs | Focus::Events => self.logs.scroll_by(model, delta),
        }
        Vec::new()
    }

    /// Opens a dialog for a mutating command — unless read-only, which refuses at once.
    fn ask(&mut self, dialog: Confirm) -> Vec<Command> {
        if self.read_only() {
            return self.request(dialog.command);
        }
        self.overlay = Some(Overlay::Confirm(dialog));
        Vec::new()
    }

    pub(super) fn unavailable(&mut self, why: impl Into<String>) -> Vec<Command> {
        self.notify(Severity::Warning, why);
        Vec::new()
    }

    /// Why there is nothing to launch on yet, and what to do: create the cluster, unless this
    /// viewer may not (the gate would refuse the key the hint names).
    pub(super) fn no_cluster_yet(&self) -> String {
        if self.read_only() {
            return "no cluster yet (read-only: it cannot be created from here)".into();
        }
        let key = self.keymap.keys_for(Action::CreateCluster);
        format!("no cluster yet: press {key} to create it")
    }

    pub(super) fn unmanaged(&self, model: &World) -> Option<String> {
        model.target().filter(|t| !t.managed).map(|t| {
            t.unmanaged_reason
                .clone()
                .unwrap_or_else(|| "the cluster is not managed by Gantry".into())
        })
    }

    fn create_cluster(&mut self, model: &World) -> Vec<Command> {
        if let Some(why) = self.unmanaged(model) {
            return self.unavailable(why);
        }
        match model.cluster.phase() {
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
                model.target().map(|t| t.place.clone()).unwrap_or_default()
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
        if let Some(location) = model.cluster.summary.as_ref().map(|s| s.location.as_str()) {
            let shape = crate::gke::cost::configured_shape(c, location);
            let cost = crate::gke::cost::per_hour(&shape);
            lines.push(format!("cost     {}", crate::gke::cost::describe(&cost)));
        }
        if let Some(armed) = self.config.guards.armed() {
            lines.push(format!("guards   {armed}"));
        }
        lines.push("Nodes cost money while the cluster exists; X deletes it.".into());
        self.ask(Confirm::yes_no(
            "Create this GKE cluster? (y/N)",
            lines,
            Command::CreateCluster,
        ))
    }

    fn delete_cluster(&mut self, model: &World) -> Vec<Command> {
        if let Some(why) = self.unmanaged(model) {
            return self.unavailable(why);
        }
        match model.cluster.phase() {
            ClusterPhase::NotCreated | ClusterPhase::Checking => {
                return self.unavailable("there is no cluster to delete");
            }
            ClusterPhase::Deleting => {
                return self.unavailable("the cluster is already being deleted");
            }
            _ => {}
        }
        let name = model.cluster.name().to_string();
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

    fn launch(&mut self, model: &World, command: Command) -> Vec<Command> {
        // Connected is what counts: a RECONCILING cluster still serves its API.
        if !model.connected {
            return self.unavailable(match model.cluster.phase() {
                ClusterPhase::NotCreated => self.no_cluster_yet(),
                ClusterPhase::Running | ClusterPhase::Other => {
                    "connecting to the cluster…".to_string()
                }
                phase => format!("the cluster is not running yet ({phase:?})"),
            });
        }
        if command == Command::RetryJob && model.jobs.newest().is_none() {
            return self.unavailable(format!(
                "nothing to retry: press {} to launch",
                self.keymap.keys_for(Action::Launch)
            ));
        }
        if let Some(active) = model.jobs.active_attempt() {
            let name = active.name.clone();
            return self.unavailable(format!(
                "attempt {name} is still running: wait for it to end, or delete it ({})",
                self.keymap.keys_for(Action::Delete)
            ));
        }
        self.request(command)
    }

    fn delete_selected(&mut self, model: &World) -> Vec<Command> {
        match self.focus {
            Focus::Jobs => match self.selection.attempt(&model.jobs) {
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
            Focus::Pods => match self.selection.pod(&model.jobs) {
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

    /// Shows an attempt's logs, or one pod's: from the engine's store when that is the newest
    /// attempt's current container, else by a fetch of this viewer's own.
    fn follow(
        &mut self,
        model: &World,
        attempt: String,
        pod: Option<String>,
        previous: bool,
    ) -> Vec<Command> {
        let in_store = model.logs.source.as_ref().map(|s| &s.attempt) == Some(&attempt);
        if in_store && !previous {
            self.logs.live(pod);
            return Vec::new();
        }
        let generation = self.logs.fetch(Source {
            attempt: attempt.clone(),
            pod: pod.clone(),
            previous,
        });
        self.request(Command::FetchLogs {
            attempt,
            pod,
            previous,
            generation,
        })
    }

    fn follow_attempt(&mut self, model: &World) -> Vec<Command> {
        match self.selection.attempt(&model.jobs).map(|a| a.name.clone()) {
            Some(attempt) => self.follow(model, attempt, None, false),
            None => self.unavailable("no attempt yet"),
        }
    }

    fn follow_pod(&mut self, model: &World, previous: bool) -> Vec<Command> {
        let Some((attempt, pod)) = self
            .selection
            .pod(&model.jobs)
            .map(|p| (p.job.clone(), p.name.clone()))
        else {
            return self.unavailable("no pod selected");
        };
        self.follow(model, attempt, Some(pod), previous)
    }
}

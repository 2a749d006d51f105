//! `P` and the plan overlay: the plan as it was when the overlay opened — what the operator
//! reads is what `y` applies, or nothing — its generation, and how far it is scrolled. Opening
//! it changes nothing, so read-only viewers may; applying goes through the one gate. With
//! `[watcher] in-cluster = true` the watcher is part of the plan, and of what `y` does.

use crossterm::event::{KeyCode, KeyEvent};

use super::{App, Overlay};
use crate::engine::{Command, World};
use crate::gke::plan::{Action as PlanAction, Plan};
use crate::keys::Action;
use crate::vocabulary::Severity;
use crate::watcher::planned::Planned;

#[derive(Debug, Clone, PartialEq)]
pub struct PlanView {
    pub plan: Plan,
    /// The model's plan generation when opened: applying refuses once the plan has moved on.
    pub generation: u64,
    /// The cluster's name, for the create line.
    pub cluster: String,
    /// Lines scrolled past at the top.
    pub scroll: usize,
    /// With `[watcher] in-cluster = true`: the watcher, as it was when the overlay opened.
    pub watcher: Option<Box<Planned>>,
}

impl PlanView {
    pub fn new(plan: Plan, generation: u64, cluster: String) -> Self {
        Self {
            plan,
            generation,
            cluster,
            scroll: 0,
            watcher: None,
        }
    }

    /// The plan with the watcher's.
    pub fn with_watcher(mut self, watcher: Option<Planned>) -> Self {
        self.watcher = watcher.map(Box::new);
        self
    }

    /// Whether `y` would make or bring up to date the watcher.
    pub fn watcher_to_install(&self) -> bool {
        self.watcher.as_deref().is_some_and(Planned::needs_install)
    }

    /// The plan's lines, as `gantry plan` says them (without its header: the overlay's title
    /// names the cluster).
    pub fn lines(&self) -> Vec<String> {
        let mut lines = crate::gke::plan_text::body(&self.plan, &self.cluster);
        lines.extend(
            self.watcher
                .as_deref()
                .map(Planned::lines)
                .unwrap_or_default(),
        );
        lines
    }

    /// Scrolls by `delta` lines, staying within the plan (the overlay clamps to its height).
    pub fn scroll_by(&mut self, delta: isize) {
        let last = self.lines().len().saturating_sub(1);
        self.scroll = self.scroll.saturating_add_signed(delta).min(last);
    }
}

impl App {
    /// `P`: the overlay with the plan for the cluster as last reported.
    pub(super) fn show_plan(&mut self, model: &World) -> Vec<Command> {
        if let Some(why) = self.unmanaged(model) {
            return self.unavailable(why);
        }
        let drift = &model.cluster.drift;
        let Some(plan) = drift.plan() else {
            return self.unavailable("still asking GKE about the cluster: no plan yet");
        };
        let view = PlanView::new(
            plan.clone(),
            drift.generation(),
            model.cluster.name().to_string(),
        )
        .with_watcher(model.cluster.watcher.clone());
        self.overlay = Some(Overlay::Plan(view));
        Vec::new()
    }

    /// A key in the plan overlay: the scrolling keys scroll, `y` applies, any other closes.
    pub(super) fn plan_key(&mut self, key: KeyEvent, model: &World) -> Vec<Command> {
        let Some(Overlay::Plan(view)) = &mut self.overlay else {
            return Vec::new();
        };
        let page = self.log_rows.max(1) as isize;
        let delta = match self.keymap.action_for(&key) {
            _ if matches!(key.code, KeyCode::Char('y' | 'Y')) => None,
            Some(Action::Up) => Some(-1),
            Some(Action::Down) => Some(1),
            Some(Action::PageUp) => Some(-page),
            Some(Action::PageDown) => Some(page),
            Some(Action::Top) => Some(isize::MIN / 2),
            Some(Action::Bottom) => Some(isize::MAX / 2),
            _ => {
                self.overlay = None;
                return Vec::new();
            }
        };
        if let Some(delta) = delta {
            view.scroll_by(delta);
            return Vec::new();
        }
        let Some(Overlay::Plan(view)) = self.overlay.take() else {
            return Vec::new();
        };
        self.apply_plan(&view, model)
    }

    fn apply_plan(&mut self, view: &PlanView, model: &World) -> Vec<Command> {
        let command = Command::ApplyPlan {
            generation: view.generation,
        };
        if self.read_only() {
            return self.request(command);
        }
        match view.plan.action {
            PlanAction::None if view.watcher_to_install() => {}
            PlanAction::None => {
                self.notify(
                    Severity::Info,
                    "nothing to apply: the cluster matches the config",
                );
                return Vec::new();
            }
            PlanAction::Create => {
                let why = self.no_cluster_yet();
                return self.unavailable(why);
            }
            PlanAction::Update => {}
        }
        if model.cluster.drift.plan_at(view.generation).is_none() {
            let key = self.keymap.keys_for(Action::Plan);
            return self.unavailable(format!(
                "not applied: the cluster changed since this plan was shown; press {key} for the plan now"
            ));
        }
        if let Some(kind) = model.cluster.busy {
            return self.unavailable(format!(
                "not applied: wait for the {} to end",
                kind.as_str()
            ));
        }
        self.request(command)
    }
}

//! One viewer: its view state and its one update function. Keys become actions through the
//! keymap; actions change the view and may ask the engine for commands, through one read-only
//! gate; the engine's model is read, never written, here. Drawing reads the model and the view.

pub mod bells;
pub mod confirm;
mod log_cursor;
mod metrics_view;
mod plan_view;
mod selection;
mod update;

use crossterm::event::KeyEvent;

pub use log_cursor::{FETCH_CAPACITY, LogCursor, Shown};
pub use metrics_view::{MetricsView, metric_names};
pub use plan_view::PlanView;
pub use selection::Selection;

use crate::config::Config;
use crate::engine::told::Telling;
use crate::engine::{Approved, Command, Gate, Notice, Principal, Refused, World};
use crate::keys::Keymap;
use crate::vocabulary::Severity;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Jobs,
    Pods,
    Logs,
    Events,
}

impl Focus {
    const ORDER: [Focus; 4] = [Focus::Jobs, Focus::Pods, Focus::Logs, Focus::Events];

    fn step(self, delta: isize) -> Focus {
        let at = Self::ORDER.iter().position(|f| *f == self).unwrap_or(0) as isize;
        Self::ORDER[(at + delta).rem_euclid(Self::ORDER.len() as isize) as usize]
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Overlay {
    Help,
    Confirm(confirm::Confirm),
    /// The plan, scrollable; `y` applies it, any other key closes.
    Plan(PlanView),
}

/// One viewer's state; owned by the viewer's task alone.
#[derive(Debug)]
pub struct App {
    pub config: Config,
    pub keymap: Keymap,
    /// Who this viewer is and whether it may change the cloud (the flag, the config, or an SSH
    /// key that is not an operator's): the one gate every command passes.
    gate: Gate,
    pub focus: Focus,
    pub overlay: Option<Overlay>,
    pub selection: Selection,
    pub logs: LogCursor,
    pub metrics: MetricsView,
    pub notice: Option<Notice>,
    pub should_quit: bool,
    /// Something changed since the last frame.
    pub dirty: bool,
    /// Rows the logs pane showed last frame (for page up/down).
    pub log_rows: usize,
    /// The model's notices up to this one have been shown.
    notices_seen: u64,
    /// The `terminal` notification targets' bells; news from before the viewer's first look at
    /// the model (`hearing` false) rings nothing.
    pub bells: bells::Bells,
    hearing: bool,
}

impl App {
    /// A viewer of the person at this machine.
    pub fn new(config: Config, keymap: Keymap, read_only: bool) -> Self {
        Self::with_gate(config, keymap, Gate::new(Principal::local(), read_only))
    }

    pub fn with_gate(config: Config, keymap: Keymap, gate: Gate) -> Self {
        Self {
            config,
            keymap,
            gate,
            focus: Focus::Pods,
            overlay: None,
            selection: Selection::default(),
            logs: LogCursor::default(),
            metrics: MetricsView::default(),
            notice: None,
            should_quit: false,
            dirty: true,
            log_rows: 10,
            notices_seen: 0,
            bells: bells::Bells::default(),
            hearing: false,
        }
    }

    /// Tells this viewer's operator alone (a search that found nothing, a refused key).
    pub fn notify(&mut self, severity: Severity, text: impl Into<String>) {
        self.notice = Some(Notice::viewer(severity, text));
        self.dirty = true;
    }

    /// A key press: typed into an open dialog or search, else looked up in the keymap.
    /// A key bound to nothing (outside a dialog, the plan or a search) changes nothing and asks
    /// for no frame: a paste of text into the main view costs no redraws.
    pub fn on_key(&mut self, key: KeyEvent, model: &World) -> Vec<Command> {
        let typed_into = matches!(self.overlay, Some(Overlay::Confirm(_) | Overlay::Plan(_)))
            || self.logs.typing.is_some();
        if typed_into {
            self.dirty = true;
        }
        if let Some(Overlay::Confirm(dialog)) = &mut self.overlay {
            return match dialog.key(key.code) {
                confirm::Outcome::Open => Vec::new(),
                confirm::Outcome::Cancelled => {
                    self.overlay = None;
                    self.notify(Severity::Info, "cancelled");
                    Vec::new()
                }
                confirm::Outcome::Confirmed(command) => {
                    self.overlay = None;
                    self.request(command)
                }
            };
        }
        if matches!(self.overlay, Some(Overlay::Plan(_))) {
            return self.plan_key(key, model);
        }
        if self.logs.typing.is_some() {
            self.type_search(key, model);
            return Vec::new();
        }
        match self.keymap.action_for(&key) {
            Some(action) => self.update(action, model),
            None => Vec::new(),
        }
    }

    fn type_search(&mut self, key: KeyEvent, model: &World) {
        use crossterm::event::KeyCode;
        let Some(typed) = self.logs.typing.as_mut() else {
            return;
        };
        match key.code {
            KeyCode::Esc => self.logs.typing = None,
            KeyCode::Enter => {
                let query = std::mem::take(typed);
                self.logs.typing = None;
                self.logs.search = (!query.is_empty()).then_some(query.clone());
                if !query.is_empty() && !self.logs.jump_to_match(model, false) {
                    self.notify(Severity::Info, format!("no line contains \"{query}\""));
                }
            }
            KeyCode::Backspace => {
                typed.pop();
            }
            KeyCode::Char(c) if typed.chars().count() < 200 => typed.push(c),
            _ => {}
        }
    }

    /// Whether this viewer may change nothing.
    pub fn read_only(&self) -> bool {
        self.gate.read_only()
    }

    /// Who this viewer is.
    pub fn principal(&self) -> &Principal {
        self.gate.principal()
    }

    /// From now on this viewer changes nothing (its key was taken out of the operators).
    pub fn restrict(&mut self, why: &str) {
        if !self.gate.read_only() {
            // A dialog left open is refused by the gate when answered.
            self.gate.restrict();
            self.notify(Severity::Warning, why.to_string());
        }
    }

    /// A key or dialog asks for `command`: refused at once, with the gate's words, if the gate
    /// would refuse it (so no dialog opens for nothing).
    pub fn request(&mut self, command: Command) -> Vec<Command> {
        if self.gate.refuses(&command) {
            let refused = Refused { command };
            self.notify(Severity::Warning, refused.to_string());
            return Vec::new();
        }
        vec![command]
    }

    /// The one gate: what goes to the engine, approved with who asked, or refused (said on
    /// this viewer's status line).
    pub fn pass(&mut self, command: Command) -> Option<Approved> {
        match self.gate.pass(command) {
            Ok(approved) => Some(approved),
            Err(refused) => {
                self.notify(Severity::Warning, refused.to_string());
                None
            }
        }
    }

    /// The world changed: take its news (what the engine told, a new attempt in the store, a
    /// place in the logs that has left it) into this view.
    pub fn on_model(&mut self, model: &World, told: &Telling) {
        self.dirty = true;
        if self.hearing && self.config.notify.iter().any(|t| !t.kind.is_http()) {
            for told in told.after(self.notices_seen) {
                if let Some(message) = &told.message {
                    self.bells
                        .hear(&self.config.notify, message, std::time::Instant::now());
                }
            }
        }
        if let Some(told) = told
            .after(self.notices_seen)
            .filter(|t| t.notice.on_status_line())
            .last()
        {
            self.notice = Some(told.notice.clone());
        }
        self.notices_seen = told.last();
        self.hearing = true;
        // A new attempt (a launch, a retry) takes over the panes, as the operator expects.
        if self.logs.generation_seen() != model.logs.generation {
            self.selection = Selection::default();
        }
        if let Some(told) = self.logs.follow_model(model) {
            self.notify(Severity::Info, told);
        }
    }

    /// Lines of this viewer's own fetch (`Command::FetchLogs`).
    pub fn on_fetched(&mut self, generation: u64, event: crate::k8s::logs::TailEvent) {
        if self.logs.on_fetched(generation, event) {
            self.dirty = true;
        }
    }
}
